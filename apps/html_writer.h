// The HTML frame writer behind `weft run --format html` (apps/html_writer.cpp): one page that plays
// the run in any browser without a network (three.js and the player embedded).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "apps/frame_writer.h"

namespace weft {

/// Whether this build embeds the viewer (three.js was found when it was configured).
bool htmlViewerAvailable();
/// Throws weft::Error saying how to get the viewer when this build has none.
void requireHtmlViewer();

/// A writer of `cloth`, `rigid` or both into the page `path`, written by finish() (with the run's
/// report, FrameWriter::setRunReport). Throws weft::Error when the build has no viewer.
std::unique_ptr<FrameWriter> makeHtmlWriter(const std::filesystem::path& path,
                                            const std::string& scene, const ModelDesc* cloth,
                                            const RigidDesc* rigid, double framesPerSecond);

}  // namespace weft
