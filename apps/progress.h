// Progress on stderr: what runs, how far, how fast, time left. On a terminal a one-line bar redrawn
// in place; otherwise (a log, a pipe, CI) a plain line for the first step, then at most one every
// 5 seconds, and the last, each flushed, so a log shows how far a run got even if it is killed.
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
  /// Silences every bar of the process while true (the Python module's quiet commands).
  static void silence(bool silent);

 private:
  std::string label_;
  int total_;
  bool enabled_;
  bool active_ = false;
  bool printedAny_ = false;  // plain lines: whether the first one is out
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

}  // namespace weft
