// SPDX-License-Identifier: GPL-2.0-only
#include "live/stop_signals.h"

namespace hmbtrace {
namespace {

volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_forward_group = 0;

void OnStopSignal(int sig) {
  g_stop_signal = sig;
  const pid_t group = g_forward_group;
  if (group > 0)
    kill(-group, SIGINT);
}

}  // namespace

SignalScope::SignalScope(Options options) : options_(options) {
  g_stop_signal = 0;
  g_forward_group = 0;
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  if (options_.ignore_sigpipe) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe_);
  }
  sigset_t block;
  sigemptyset(&block);
  if (options_.block_until_ready) {
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGTTOU);
  }
  sigprocmask(SIG_BLOCK, &block, &old_mask_);
}

SignalScope::~SignalScope() {
  g_forward_group = 0;
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  if (options_.ignore_sigpipe)
    sigaction(SIGPIPE, &old_pipe_, nullptr);
}

int SignalScope::stop_signal() {
  return g_stop_signal;
}

void SignalScope::ForwardTo(pid_t group) {
  g_forward_group = group;
}

void SignalScope::RestoreInChild() const {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  if (options_.ignore_sigpipe)
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

void SignalScope::UnblockStop() const {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &s, nullptr);
}

}  // namespace hmbtrace
