// SPDX-License-Identifier: GPL-2.0-only
#include "capture/progress.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>

namespace hmbtrace {
namespace {

// Reading the clock for every event would cost more than the event.
constexpr uint64_t kCheckEvery = 4096;
constexpr auto kFirstDraw = std::chrono::seconds(1);
constexpr auto kRedraw = std::chrono::milliseconds(100);

}  // namespace

bool Progress::Wanted(bool streams_stdout) {
  if (std::getenv("HMBTRACE_NO_PROGRESS"))
    return false;
  if (!isatty(STDERR_FILENO))
    return false;
  return !(streams_stdout && isatty(STDOUT_FILENO));
}

Progress::Progress(std::string what, bool streams_stdout)
    : Progress(std::move(what), Wanted(streams_stdout), stderr) {}

Progress::Progress(std::string what, bool enabled, FILE* out)
    : what_(std::move(what)), enabled_(enabled), out_(out) {}

Progress::~Progress() { Done(); }

std::string Progress::Line(const std::string& what, int pass, int passes, uint64_t done,
                           uint64_t total, double seconds) {
  char buf[160];
  if (total)
    std::snprintf(buf, sizeof(buf), ": pass %d/%d, %d%% (%llu of %llu events), %.1f s", pass,
                  passes, static_cast<int>(done >= total ? 100 : done * 100 / total),
                  static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                  seconds);
  else
    std::snprintf(buf, sizeof(buf), ": pass %d/%d, %llu events, %.1f s", pass, passes,
                  static_cast<unsigned long long>(done), seconds);
  return "reading " + what + buf;
}

void Progress::Tick(int pass, int passes, uint64_t total) {
  if (!enabled_)
    return;
  if (pass != pass_) {
    pass_ = pass;
    done_ = 0;
  }
  if (++done_ % kCheckEvery)
    return;
  Draw(pass, passes, total);
}

void Progress::Set(int pass, int passes, uint64_t done, uint64_t total) {
  if (!enabled_)
    return;
  pass_ = pass;
  done_ = done;
  Draw(pass, passes, total);
}

void Progress::Draw(int pass, int passes, uint64_t total) {
  const Clock::time_point now = Clock::now();
  if (now - start_ < kFirstDraw || now - last_draw_ < kRedraw)
    return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  // \r and "erase to end of line": the line is redrawn in place.
  std::fprintf(out_, "\r%s\x1b[K", Line(what_, pass, passes, done_, total, seconds).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void Progress::Done() {
  if (!drawn_)
    return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace hmbtrace
