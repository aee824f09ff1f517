// Pieces shared by the commands: opening the device and putting the launch table into effect.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/runtime/device.h"
#include "kernels/runtime/table_selection.h"

namespace weft {

/// Opens the backend named by `deviceName` (auto | cuda | cpu).
std::unique_ptr<Device> openDevice(const std::string& deviceName, bool debugLaunches);

/// Selects the launch table (flag, environment, kernels/runtime/tables), resolves it for `scene`
/// and installs it on the device. Prints a warning to `err` when a requested table is not applied.
TableSelection applyLaunchTable(Device& device, const std::string& tablePath,
                                const std::string& scene, std::ostream& err, int worlds = 1);

/// The comma-separated items of `text` (none for an empty text); an empty item ("1,,2", "a,") is
/// an error naming `option`.
std::vector<std::string> splitList(const std::string& text, const std::string& option);

/// Scene names from a --scenes value: names or aliases, and `cloth`, `cable`, `all` for the
/// benchmark scenes of that kind. Throws weft::Error for an unknown name (listing the valid ones)
/// or when nothing is left; `purpose` ("benchmark", "tune") words that error.
std::vector<std::string> resolveSceneList(const std::string& spec, const std::string& purpose);

/// Fails before any work is done when output file `path` (given by `option`, e.g. "--summary")
/// could not be written: it is a folder, or its nearest existing ancestor is not a writable
/// folder. Creates and writes nothing; "" passes.
void checkOutputFile(const std::string& path, const std::string& option);
/// The same for an output folder: a folder (or one that can be made there) that is writable.
void checkOutputFolder(const std::string& path, const std::string& option);

/// `value` with `digits` digits after the point ("%.*f").
std::string formatFixed(double value, int digits);

/// "built-in defaults" or the table's path, for summaries.
std::string describeTableInUse(const TableSelection& selection);

}  // namespace weft
