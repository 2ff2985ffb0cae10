// SPDX-License-Identifier: GPL-2.0-only
// The host's end of the mock control channel, for tests: what the module's
// mailbox backend does (include/hmb_trace_ctrl_abi.h), in user space. One
// request at a time: op and args, t0, seq (release); wait for rsp.seq ==
// seq (acquire) with a timeout; t1.
#ifndef HMBTRACE_MOCK_FWSIM_CTRL_HOST_TEST_UTIL_H_
#define HMBTRACE_MOCK_FWSIM_CTRL_HOST_TEST_UTIL_H_

#include <time.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <thread>

#include "fw_clock.h"
#include "hmb_trace_ctrl_abi.h"

namespace hmbtrace {

struct CtrlAnswer {
  bool answered = false;  // false: timed out
  uint16_t status = 0;
  std::array<uint64_t, 4> val{};
  uint64_t t0 = 0;  // CLOCK_MONOTONIC before seq was written
  uint64_t t1 = 0;  // CLOCK_MONOTONIC after the answer was seen
};

class CtrlHost {
 public:
  explicit CtrlHost(std::span<uint8_t> mailbox) : mb_(mailbox) {}

  // Waits up to |timeout_ns| for the device to serve (response magic).
  bool WaitForDevice(uint64_t timeout_ns) {
    const uint64_t end = MonotonicNowNs() + timeout_ns;
    while (MonotonicNowNs() < end) {
      if (Load<uint32_t>(kRsp + offsetof(hmb_ctrl_response, magic), __ATOMIC_ACQUIRE) ==
              HMB_CTRL_MAGIC &&
          Load<uint16_t>(kRsp + offsetof(hmb_ctrl_response, version)) == HMB_CTRL_VERSION)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  // The default wait is long (1 s) as the module's for a user's request:
  // hmb-fwsim's thread on a loaded 2-CPU machine may not run for tens of ms.
  CtrlAnswer Request(uint16_t op,
                     std::array<uint64_t, 4> arg = {},
                     uint64_t timeout_ns = 1000000000,
                     uint32_t magic = HMB_CTRL_MAGIC) {
    const uint64_t seq = ++seq_;
    Store<uint32_t>(offsetof(hmb_ctrl_request, magic), magic);
    Store<uint16_t>(offsetof(hmb_ctrl_request, version), HMB_CTRL_VERSION);
    Store<uint16_t>(offsetof(hmb_ctrl_request, op), op);
    for (size_t i = 0; i < arg.size(); i++)
      Store<uint64_t>(offsetof(hmb_ctrl_request, arg) + i * 8, arg[i]);
    CtrlAnswer a;
    a.t0 = MonotonicNowNs();
    // Paired with the acquire load of req.seq in MailboxServer::ServeOnce().
    Store<uint64_t>(offsetof(hmb_ctrl_request, seq), seq, __ATOMIC_RELEASE);
    const uint64_t end = a.t0 + timeout_ns;
    for (;;) {
      // Paired with the release store of rsp.seq in MailboxServer::Answer().
      if (Load<uint64_t>(kRsp + offsetof(hmb_ctrl_response, seq), __ATOMIC_ACQUIRE) == seq) {
        a.t1 = MonotonicNowNs();
        a.answered = true;
        a.status = Load<uint16_t>(kRsp + offsetof(hmb_ctrl_response, status));
        for (size_t i = 0; i < a.val.size(); i++)
          a.val[i] = Load<uint64_t>(kRsp + offsetof(hmb_ctrl_response, val) + i * 8);
        return a;
      }
      if (MonotonicNowNs() >= end) {
        timeouts_++;
        return a;
      }
      // Short sleeps, not a spin: on a machine with few CPUs a spinning
      // host delays the device's thread it waits for. (Set the thread's
      // timer slack to 1 ns, or every sleep lasts 50 us.)
      const timespec pause = {0, 3000};
      nanosleep(&pause, nullptr);
    }
  }

  uint64_t timeouts() const { return timeouts_; }
  uint64_t sent() const { return seq_; }

 private:
  static constexpr size_t kRsp = HMB_CTRL_RSP_OFFSET;

  template <typename T>
  T Load(size_t off, int order = __ATOMIC_RELAXED) const {
    return __atomic_load_n(reinterpret_cast<T*>(mb_.data() + off), order);
  }
  template <typename T>
  void Store(size_t off, T v, int order = __ATOMIC_RELAXED) {
    __atomic_store_n(reinterpret_cast<T*>(mb_.data() + off), v, order);
  }

  std::span<uint8_t> mb_;
  uint64_t seq_ = 0;
  uint64_t timeouts_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_CTRL_HOST_TEST_UTIL_H_
