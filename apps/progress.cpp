#include "apps/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace weft {
namespace {
std::atomic<bool> silenced{false};
}  // namespace

void ProgressBar::silence(bool silent) {
  silenced = silent;
}

ProgressBar::ProgressBar(std::string label, int total)
    : label_(std::move(label)),
      total_(total),
      enabled_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(int done, const std::string& note) {
  if (silenced) return;
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
  if (!enabled_ || !active_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  active_ = false;
}

}  // namespace weft
