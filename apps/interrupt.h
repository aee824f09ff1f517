// Ctrl-C (SIGINT) and `kill` (SIGTERM) during a long command: the command stops at its next safe
// point (after the current frame; between tuning or benchmark measurements), leaves only complete
// files, says what it wrote and exits with 128 + the signal's number (130, 143), as shells expect.
// A second signal stops the process at once (the default action is restored after the first).
#pragma once

#include <stdexcept>
#include <string>

namespace weft {

/// Installs the SIGINT/SIGTERM handlers for its lifetime and restores the previous ones after.
/// Clears any earlier signal, so each command starts uninterrupted.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

/// The signal received inside the current InterruptScope (SIGINT or SIGTERM), or 0.
int interruptSignal();
/// "SIGINT" / "SIGTERM".
std::string signalName(int signal);
/// 128 + signal: 130 for SIGINT, 143 for SIGTERM.
int interruptExitCode(int signal);

/// Thrown at a safe point when a signal has arrived: the command unwinds without writing its
/// outputs (tune-launch, bench), says so and exits with interruptExitCode(signal).
struct Interrupted : std::runtime_error {
  explicit Interrupted(int signal);
  int signal;
};
/// Throws Interrupted if a signal has arrived.
void throwIfInterrupted();

}  // namespace weft
