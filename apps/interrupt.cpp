#include "apps/interrupt.h"

#include <unistd.h>

#include <csignal>

namespace weft {
namespace {

volatile std::sig_atomic_t gSignal = 0;

extern "C" void onInterrupt(int signal) {
  gSignal = signal;
  std::signal(signal, SIG_DFL);  // a second Ctrl-C stops at once
  static const char kMessage[] =
      "\nweft: stopping after the current step; outputs will be complete (again to stop at "
      "once)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
}

struct sigaction gPreviousInt, gPreviousTerm;

}  // namespace

InterruptScope::InterruptScope() {
  gSignal = 0;
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  action.sa_flags = SA_RESTART;  // interrupted writes and reads resume instead of failing
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &gPreviousInt);
  sigaction(SIGTERM, &action, &gPreviousTerm);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &gPreviousInt, nullptr);
  sigaction(SIGTERM, &gPreviousTerm, nullptr);
}

int interruptSignal() {
  return gSignal;
}

std::string signalName(int signal) {
  return signal == SIGINT    ? "SIGINT"
         : signal == SIGTERM ? "SIGTERM"
                             : "signal " + std::to_string(signal);
}

int interruptExitCode(int signal) {
  return 128 + signal;
}

Interrupted::Interrupted(int s)
    : std::runtime_error("interrupted by " + signalName(s)), signal(s) {}

void throwIfInterrupted() {
  if (const int s = gSignal) throw Interrupted(s);
}

}  // namespace weft
