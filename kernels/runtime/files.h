// Output files that are whole or absent: every file Weft writes (frames, summaries, launch tables,
// reports) goes to "<path>.tmp" first and is renamed into place only when complete, so a failure
// or a kill never leaves a truncated file under the final name. This lives in the lowest library
// because the launch tables are written here too.
#pragma once

#include <string>

namespace weft {

/// The temporary name a file is written under until it is complete: "<path>.tmp".
std::string temporaryPathFor(const std::string& path);

/// Writes `text` to `path` atomically (creating missing folders); `what` names the file in errors
/// ("launch table"). On failure the temporary file is removed and weft::Error says why.
void writeFileAtomically(const std::string& path, const std::string& text,
                         const std::string& what = "file");

/// Renames a completed temporary file into place (the last step of writeFileAtomically, for
/// writers that stream into temporaryPathFor(path) themselves). Removes it on failure and throws.
void moveIntoPlace(const std::string& temporary, const std::string& path);

}  // namespace weft
