// A one-line progress bar on stderr when it is a terminal: what runs, how far, how fast, time left.
// Silent when stderr is not a terminal (logs, CI), where the final summary says everything.
#pragma once

#include <chrono>
#include <string>

namespace weft {

class ProgressBar {
 public:
  ProgressBar(std::string label, int total);
  ~ProgressBar();
  /// `done` of `total` finished; `note` is shown after the counts (e.g. "412 µs/substep").
  void update(int done, const std::string& note = "");
  /// Clears the bar so that the next output starts on a clean line.
  void finish();

 private:
  std::string label_;
  int total_;
  bool enabled_;
  bool active_ = false;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

}  // namespace weft
