// SPDX-License-Identifier: GPL-2.0-only
//
// SIGINT/SIGTERM as "stop" for the subcommands that run until interrupted
// (record while trace-cmd runs, stream): for the scope's life a handler
// records the signal (no SA_RESTART: a wait or sleep returns EINTR and the
// caller looks at stop_signal()) and, once a process group is named,
// forwards it there as SIGINT, as a terminal's Ctrl-C would.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STOP_SIGNALS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STOP_SIGNALS_H_

#include <signal.h>
#include <sys/types.h>

namespace hmbtrace {

class SignalScope {
 public:
  struct Options {
    // SIGPIPE ignored: a closed stdout (`| head`) is an error the caller
    // sees, not a death before it restores what it changed.
    bool ignore_sigpipe = false;
    // SIGINT, SIGTERM and SIGTTOU blocked from construction (e.g. before a
    // fork) until UnblockStop(); SIGTTOU stays blocked so that the
    // terminal can be taken back from a background group.
    bool block_until_ready = false;
  };

  // One at a time: the handler and its state are the process's.
  explicit SignalScope(Options options);
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  // The last SIGINT/SIGTERM since the scope began; 0 if none.
  static int stop_signal();
  // From now on a stop signal is also sent to process group |group| as
  // SIGINT (0: to none). The scope's end forwards to none again.
  static void ForwardTo(pid_t group);

  // In a forked child, before exec: the caller's mask and dispositions.
  void RestoreInChild() const;
  // Lets the handler run (block_until_ready; SIGTTOU stays blocked).
  void UnblockStop() const;

 private:
  Options options_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_pipe_ {};
  sigset_t old_mask_{};
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STOP_SIGNALS_H_
