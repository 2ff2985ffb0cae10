// SPDX-License-Identifier: GPL-2.0-only
// The firmware's end of the mock control channel: a thread that polls the
// mailbox (include/hmb_trace_ctrl_abi.h; a file QEMU exposes to the guest
// as a second ivshmem-plain device) for requests and answers them, acting
// on the firmware through FirmwareControl.
//
// The mailbox is host-writable memory: every request is copied out, then
// checked; nothing in it is ever used to address memory.
#ifndef HMBTRACE_MOCK_FWSIM_MAILBOX_H_
#define HMBTRACE_MOCK_FWSIM_MAILBOX_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "hmb_trace_ctrl_abi.h"

namespace hmbtrace {

// What the operations do to the firmware; the simulator implements it.
// Called from the mailbox thread only.
class FirmwareControl {
 public:
  struct EchoResult {
    uint16_t status = HMB_CTRL_OK;
    uint64_t fw_ts = 0;
    uint64_t seq = 0;
    uint32_t producer_gen = 0;
  };

  virtual ~FirmwareControl() = default;
  // START (true) / STOP (false). Returns once no core will write another
  // record until the next START (a record being written when it came is
  // finished first).
  virtual void SetProducing(bool on) = 0;
  // Event ids first_id .. first_id + 63: bit i set = produce first_id + i.
  // Returns once every later record obeys the new mask.
  virtual void SetEventMask(uint16_t first_id, uint64_t bits) = 0;
  // HMB_CTRL_OK, HMB_CTRL_UNSUPPORTED or HMB_CTRL_INVALID.
  virtual uint16_t SetRingMode(uint64_t mode) = 0;
  // The trace clock now (the clock of fw_ts).
  virtual uint64_t LatchClock() = 0;
  // One hmb_echo record with |cookie| on |core|, written by that core.
  virtual EchoResult Echo(uint16_t core, uint64_t cookie) = 0;
  // The freeze (ABI 1.1): FREEZE_CONFIG, FREEZE_REARM, FREEZE_NOW, with
  // the answer's values in |val|. By default a firmware without it.
  virtual uint16_t FreezeConfig(uint64_t /*threshold_ns*/, uint64_t /*n_after*/,
                                std::array<uint64_t, 4>& /*val*/) {
    return HMB_CTRL_UNSUPPORTED;
  }
  virtual uint16_t FreezeRearm(std::array<uint64_t, 4>& /*val*/) { return HMB_CTRL_UNSUPPORTED; }
  virtual uint16_t FreezeNow(uint64_t /*detail*/) { return HMB_CTRL_UNSUPPORTED; }
};

struct MailboxOptions {
  // Sleep between looks at the request's seq: poll_us within kMailboxHotNs
  // of the last request (a burst of sync samples finds the firmware
  // awake), idle_poll_us otherwise (a 15 us poll costs about half a CPU
  // here in timer wake-ups).
  uint32_t poll_us = 15;
  uint32_t idle_poll_us = 500;
  double stop_after_s = 0;  // stop answering after this long; 0: never
};
constexpr uint64_t kMailboxHotNs = 20000000;

class MailboxServer {
 public:
  // |mailbox|: HMB_CTRL_MAILBOX_SIZE bytes, 8-byte aligned, outliving the
  // server. |fw| outlives it too.
  MailboxServer(std::span<uint8_t> mailbox, FirmwareControl& fw, const MailboxOptions& options);
  ~MailboxServer();
  MailboxServer(const MailboxServer&) = delete;
  MailboxServer& operator=(const MailboxServer&) = delete;

  // Zeroes the mailbox, writes the response's magic and version (the
  // device serves), and starts polling on a thread of its own.
  void Start();
  // Stops the thread (idempotent). After it, TruthJson() is final.
  void Stop();

  // Serves the request in the mailbox if it is new. True if it answered.
  // Start() runs this in a loop; a test may call it directly instead.
  bool ServeOnce();
  // Zeroes the mailbox and writes magic and version, without a thread.
  void Open();

  // Requests by op, answers by status, the state changes and the echoes.
  nlohmann::json TruthJson() const;

 private:
  void Loop();
  uint16_t Dispatch(uint16_t op,
                    const std::array<uint64_t, 4>& arg,
                    std::array<uint64_t, 4>& val,
                    uint64_t seq);
  void Answer(uint64_t seq, uint16_t status, const std::array<uint64_t, 4>& val);

  std::span<uint8_t> mailbox_;
  FirmwareControl& fw_;
  MailboxOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};

  // Only the serving thread writes these; read after Stop().
  uint64_t last_seq_ = 0;  // the last request answered; 0: none
  std::array<uint64_t, HMB_CTRL_OP_NR> by_op_{};
  uint64_t unknown_ops_ = 0;
  uint64_t bad_header_ = 0;              // wrong magic or version
  std::array<uint64_t, 3> by_status_{};  // OK, UNSUPPORTED, INVALID
  uint64_t start_mono_ns_ = 0;
  uint64_t stopped_answering_mono_ns_ = 0;  // 0: still answering
  nlohmann::json changes_ = nlohmann::json::array();
  nlohmann::json echoes_ = nlohmann::json::array();
};

// The name of an op in the truth file ("sync"), or "" if unknown.
const char* CtrlOpName(uint16_t op);

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_MAILBOX_H_
