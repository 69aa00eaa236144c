// An interrupted run's end (see interrupt.h).
#include "orchestrator/run/interrupt.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace fabricmap::orchestrator {
namespace {

// The handler may call only async-signal-safe functions: its words are made before, here. The one
// mutable static of the run, because a signal handler reaches nothing else.
std::array<char, 4096> gMessage{};
std::size_t gMessageBytes = 0;

extern "C" void onInterrupt(int signal) {
  if (gMessageBytes > 0) {
    const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "SIGHUP";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, "fabricmap run: stopped by ", 26);
    n = ::write(STDERR_FILENO, name, std::strlen(name));
    n = ::write(STDERR_FILENO, gMessage.data(), gMessageBytes);
  }
  ::_exit(128 + signal);
}

}  // namespace

EndOnInterrupt::EndOnInterrupt(const std::string& output) {
  if (!output.empty()) {
    const std::string message =
        fmt::format(": {} keeps every step completed; `fabricmap run --resume {}` finishes it\n", output, output);
    gMessageBytes = std::min(message.size(), gMessage.size());
    std::memcpy(gMessage.data(), message.data(), gMessageBytes);
  }
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
}

EndOnInterrupt::~EndOnInterrupt() {
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, SIG_DFL);
}

}  // namespace fabricmap::orchestrator
