// Progress on stderr: what runs, how far, how fast, time left. On a terminal a one-line bar redrawn
// in place; otherwise (a log, a pipe, CI) a plain line for the first step, then at most one every
// 5 seconds, and the last, each flushed, so a log shows how far a run got even if it is killed.
// A step announced by starting() that runs long (a frame of a huge model can take minutes) gets a
// line of its own after 10 s and every 30 s after that, from a watcher thread, so a long step is
// not silence; WEFT_HEARTBEAT_SECONDS sets both intervals (the tests use a fraction of a second).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace weft {

class ProgressBar {
 public:
  /// `unit` names a step in the long-step lines ("frame").
  ProgressBar(std::string label, int total, std::string unit = "step");
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  /// Step `step` (1-based) begins; update() ends it.
  void starting(int step);
  /// `done` of `total` finished; `note` is shown after the counts (e.g. "412 µs/substep").
  void update(int done, const std::string& note = "");
  /// Clears the bar so that the next output starts on a clean line.
  void finish();
  /// Silences every bar of the process while true (the Python module's quiet commands).
  static void silence(bool silent);

 private:
  void watch();        // the watcher thread: long-step lines
  void clearLocked();  // the bar off its line (terminal), mutex_ held

  std::string label_, unit_;
  int total_;
  bool enabled_;
  bool active_ = false;
  bool printedAny_ = false;  // plain lines: whether the first one is out
  std::chrono::steady_clock::time_point start_, lastDraw_;

  std::mutex mutex_;  // stderr and the fields below, between update() and the watcher
  std::condition_variable wake_;
  std::thread watcher_;
  bool stopping_ = false;
  int running_ = 0;  // the step under way, 0 between steps
  std::chrono::steady_clock::time_point stepStart_;
  std::chrono::duration<double> firstBeat_{10.0}, nextBeats_{30.0};
};

}  // namespace weft
