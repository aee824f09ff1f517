#include "apps/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace weft {
namespace {
std::atomic<bool> silenced{false};
}  // namespace

void ProgressBar::silence(bool silent) {
  silenced = silent;
}

ProgressBar::ProgressBar(std::string label, int total, std::string unit)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {
  if (const char* beat = std::getenv("WEFT_HEARTBEAT_SECONDS")) {
    const double seconds = std::atof(beat);
    if (seconds > 0.0 && seconds < 1e6)  // else the defaults (and no clock overflow)
      firstBeat_ = nextBeats_ = std::chrono::duration<double>(seconds);
  }
}

ProgressBar::~ProgressBar() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  finish();
}

void ProgressBar::starting(int step) {
  if (silenced) return;
  {
    std::lock_guard lock(mutex_);
    running_ = step;
    stepStart_ = std::chrono::steady_clock::now();
  }
  wake_.notify_all();
  if (!watcher_.joinable()) watcher_ = std::thread([this] { watch(); });
}

void ProgressBar::watch() {
  std::unique_lock lock(mutex_);
  int step = 0;  // the step the next beat is for
  std::chrono::steady_clock::time_point due;
  while (!stopping_) {
    if (running_ != step) {  // a new step (or none): its first beat
      step = running_;
      due =
          stepStart_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(firstBeat_);
    }
    if (step == 0) {
      wake_.wait(lock, [&] { return stopping_ || running_ != 0; });
      continue;
    }
    if (wake_.wait_until(lock, due, [&] { return stopping_ || running_ != step; })) continue;
    due += std::chrono::duration_cast<std::chrono::steady_clock::duration>(nextBeats_);
    if (silenced) continue;
    const double in =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - stepStart_).count();
    clearLocked();
    std::fprintf(stderr,
                 "%s: %s %d of %d still running, %.1f s in (Ctrl-C stops the run after it)\n",
                 label_.c_str(), unit_.c_str(), step, total_, in);
    std::fflush(stderr);
  }
}

void ProgressBar::clearLocked() {
  if (!enabled_ || !active_) return;
  std::fprintf(stderr, "\r\033[K");
  active_ = false;
}

void ProgressBar::update(int done, const std::string& note) {
  if (silenced) return;
  std::lock_guard lock(mutex_);
  running_ = 0;
  const auto now = std::chrono::steady_clock::now();
  if (!enabled_) {  // plain lines for logs and pipes
    if (printedAny_ && done < total_ && now - lastDraw_ < std::chrono::seconds(5)) return;
    printedAny_ = true;
    lastDraw_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double left = done > 0 ? elapsed * (total_ - done) / done : 0.0;
    std::fprintf(stderr, "%s: %d of %d, %.1f s elapsed, %.1f s left%s%s\n", label_.c_str(), done,
                 total_, elapsed, left, note.empty() ? "" : ", ", note.c_str());
    std::fflush(stderr);
    return;
  }
  // Redraw at most ~20 times a second, but always show the last step.
  if (active_ && done < total_ && now - lastDraw_ < std::chrono::milliseconds(50)) return;
  lastDraw_ = now;
  active_ = true;
  constexpr int kWidth = 30;
  const double fraction = total_ > 0 ? double(done) / total_ : 1.0;
  const int filled = int(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double left = done > 0 ? elapsed * (total_ - done) / done : 0.0;
  std::string bar(size_t(filled), '=');
  if (filled < kWidth) bar += '>';
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r\033[K%s [%s] %d/%d  %.1fs elapsed, %.1fs left  %s", label_.c_str(),
               bar.c_str(), done, total_, elapsed, left, note.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  std::lock_guard lock(mutex_);
  running_ = 0;
  if (!enabled_ || !active_) return;
  clearLocked();
  std::fflush(stderr);
}

}  // namespace weft
