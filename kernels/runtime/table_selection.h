// Which launch table is in effect, and why. Used by `weft run`, `weft bench`, `weft info` and,
// through applyLaunchTable, by programs that use the library.
//
// Order: --launch-table FILE, else $WEFT_LAUNCH_TABLE, else the newest table under
// kernels/runtime/tables/ measured on this GPU model, else none (built-in defaults). A table that
// was asked for but measured on another GPU is not applied; the selection says so (warning), and
// the built-in defaults are used. A table that cannot be read or parsed is an error, never skipped.
#pragma once

#include <optional>
#include <string>

#include "kernels/runtime/launch_table.h"

namespace weft {

class Device;

struct TableSelection {
  std::optional<LaunchTable> table;  // the table to apply (already checked against the GPU)
  std::string origin;    // "--launch-table", "WEFT_LAUNCH_TABLE", "kernels/runtime/tables", ""
  std::string path;      // the file considered, if any
  std::string reason;    // a sentence: why this table, or why none
  bool warning = false;  // a requested table is not applied
};

/// `gpu` is null on the CPU backend (tables do not apply there). `tablesDir` is searched when
/// neither the flag nor the environment names a table ("" disables the search).
TableSelection selectLaunchTable(const std::string& cliPath, const GpuIdentity* gpu,
                                 const std::string& tablesDir);

/// What `weft run` does before it builds a scene, in one call: selects the table (`path`, else the
/// rules above) and, on CUDA, sets the device's launch sizes from it for `scene` ("" : the table's
/// overall entries) and a batch of `worlds` (its batch entries; docs/TUNING.md). On the CPU it
/// only reports. The caller shows `reason` when `warning` is set (a requested table not applied).
TableSelection applyLaunchTable(Device& device, const std::string& path = "",
                                const std::string& scene = "", int worlds = 1);

/// kernels/runtime/tables/ of the source tree this binary was built from while that tree exists,
/// else the installed copy (<prefix>/share/weft/tables), else the folder given to
/// setPackagedTablesDir; "" when none is there.
std::string defaultTablesDir();
/// The tables a package ships beside the library (the Python module's weft/tables, set when it is
/// imported): defaultTablesDir's last choice.
void setPackagedTablesDir(const std::string& path);

}  // namespace weft
