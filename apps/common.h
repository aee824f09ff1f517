// Pieces shared by the commands: opening the device and putting the launch table into effect.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "kernels/runtime/device.h"
#include "tuning/table_selection.h"

namespace weft {

/// Opens the backend named by `deviceName` (auto | cuda | cpu).
std::unique_ptr<Device> openDevice(const std::string& deviceName, bool debugLaunches);

/// Selects the launch table (flag, environment, tuning/tables), resolves it for `scene` and
/// installs it on the device. Prints a warning to `err` when a requested table is not applied.
TableSelection applyLaunchTable(Device& device, const std::string& tablePath,
                                const std::string& scene, std::ostream& err);

/// "built-in defaults" or the table's path, for summaries.
std::string describeTableInUse(const TableSelection& selection);

}  // namespace weft
