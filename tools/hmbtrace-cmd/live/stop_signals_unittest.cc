// SPDX-License-Identifier: GPL-2.0-only
// SignalScope, shared by record and stream: Ctrl-C (SIGINT) or SIGTERM
// stops the subcommand instead of killing it, reaches the recorder's
// process group, and the caller's dispositions are back afterwards.
#include "live/stop_signals.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace hmbtrace {
namespace {

void (*Disposition(int sig))(int) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

TEST(SignalScope, AStopSignalIsRecordedNotFatalAndTheOldDispositionsComeBack) {
  const auto old_int = Disposition(SIGINT), old_term = Disposition(SIGTERM),
             old_pipe = Disposition(SIGPIPE);
  {
    SignalScope signals({.ignore_sigpipe = true});
    EXPECT_EQ(SignalScope::stop_signal(), 0);
    raise(SIGTERM);
    EXPECT_EQ(SignalScope::stop_signal(), SIGTERM);
    raise(SIGPIPE);  // ignored: the process is still here
    raise(SIGINT);
    EXPECT_EQ(SignalScope::stop_signal(), SIGINT);
  }
  EXPECT_EQ(Disposition(SIGINT), old_int);
  EXPECT_EQ(Disposition(SIGTERM), old_term);
  EXPECT_EQ(Disposition(SIGPIPE), old_pipe);
  SignalScope again({});
  EXPECT_EQ(SignalScope::stop_signal(), 0) << "a new scope starts with no stop";
}

// record: a stop signal that comes while blocked (before the fork's group
// is known) is delivered once unblocked, and forwarded as SIGINT to the
// named process group, where a trace-cmd would end its recording.
TEST(SignalScope, AStopSignalIsForwardedToTheRecordersGroupOnceUnblocked) {
  SignalScope signals({.block_until_ready = true});
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setpgid(0, 0);
    signals.RestoreInChild();  // SIGINT: default (terminate)
    alarm(10);                 // not forwarded: dies of SIGALRM, not a hang
    pause();
    _exit(0);
  }
  setpgid(child, child);
  raise(SIGTERM);  // blocked: pending
  EXPECT_EQ(SignalScope::stop_signal(), 0);
  SignalScope::ForwardTo(child);
  signals.UnblockStop();
  EXPECT_EQ(SignalScope::stop_signal(), SIGTERM);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

}  // namespace
}  // namespace hmbtrace
