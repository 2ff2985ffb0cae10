// SPDX-License-Identifier: GPL-2.0-only
//
// Progress of a long read of a capture, on one terminal line of stderr, as
// git and trace-cmd show theirs: only when stderr is a terminal (never in
// a pipe or a log file), only once the work has taken a second (short runs
// print nothing), at most ten times a second, and erased when done, so
// that what the command prints afterwards starts on a clean line.
// HMBTRACE_NO_PROGRESS (any value) turns it off.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_PROGRESS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace hmbtrace {

class Progress {
 public:
  // `what` names the work ("trace.dat"). With `streams_stdout` (the command
  // prints its results to stdout as it reads) it stays off when stdout is
  // a terminal too: the line would be torn by the results.
  Progress(std::string what, bool streams_stdout);
  // Same, with the terminal test given: for tests, and `enabled` false for
  // a command told to be quiet.
  Progress(std::string what, bool enabled, FILE* out);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // One more event read in pass `pass` of `passes`; `total` is the number
  // of events of the pass when known (a percentage is shown), else 0.
  void Tick(int pass, int passes, uint64_t total);
  // `done` events read in pass `pass` so far (a pass that counts them
  // itself).
  void Set(int pass, int passes, uint64_t done, uint64_t total);
  // For the constructor with `enabled`: the terminal test.
  static bool Wanted(bool streams_stdout);
  // Erases the line if one was drawn.
  void Done();

  bool enabled() const { return enabled_; }
  bool drawn() const { return drawn_; }

  // The line for a state: "reading trace.dat: pass 2/2, 45% (1234 of
  // 2742 events), 3.2 s".
  static std::string Line(const std::string& what, int pass, int passes, uint64_t done,
                          uint64_t total, double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  void Draw(int pass, int passes, uint64_t total);

  std::string what_;
  bool enabled_;
  FILE* out_;
  bool drawn_ = false;
  int pass_ = 0;
  uint64_t done_ = 0;  // events of the current pass
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_draw_{};
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_PROGRESS_H_
