// SPDX-License-Identifier: GPL-2.0-only
#include "mailbox.h"

#include <sys/prctl.h>
#include <time.h>

#include <cstddef>
#include <cstring>

#include "fw_clock.h"

namespace hmbtrace {

namespace {

constexpr size_t kReq = 0;
constexpr size_t kRsp = HMB_CTRL_RSP_OFFSET;
constexpr size_t kReqSeq = kReq + offsetof(hmb_ctrl_request, seq);
constexpr size_t kRspSeq = kRsp + offsetof(hmb_ctrl_response, seq);

static_assert(sizeof(hmb_ctrl_request) <= HMB_CTRL_RSP_OFFSET);
static_assert(HMB_CTRL_RSP_OFFSET + sizeof(hmb_ctrl_response) <= HMB_CTRL_MAILBOX_SIZE);
static_assert(offsetof(hmb_ctrl_request, seq) % 8 == 0 &&
              offsetof(hmb_ctrl_response, seq) % 8 == 0 && kRsp % 8 == 0);

// The mailbox is shared with another agent (the guest, through QEMU): every
// access is one aligned atomic load or store of the field's width, at an
// offset taken from the ABI structs. Nothing read is used as an address.
template <typename T>
T Load(std::span<uint8_t> mb, size_t off, int order = __ATOMIC_RELAXED) {
  return __atomic_load_n(reinterpret_cast<T*>(mb.data() + off), order);
}

template <typename T>
void Store(std::span<uint8_t> mb, size_t off, T value, int order = __ATOMIC_RELAXED) {
  __atomic_store_n(reinterpret_cast<T*>(mb.data() + off), value, order);
}

constexpr const char* kOpNames[HMB_CTRL_OP_NR] = {
    "nop", "start", "stop", "event_mask", "ring_mode", "sync", "echo",
    "freeze_config", "freeze_rearm", "freeze_now"};
constexpr const char* kStatusNames[] = {"ok", "unsupported", "invalid"};

void SleepUs(uint32_t us) {
  const timespec ts = {0, static_cast<long>(us) * 1000};
  nanosleep(&ts, nullptr);
}

}  // namespace

const char* CtrlOpName(uint16_t op) {
  return op < HMB_CTRL_OP_NR ? kOpNames[op] : "";
}

MailboxServer::MailboxServer(std::span<uint8_t> mailbox,
                             FirmwareControl& fw,
                             const MailboxOptions& options)
    : mailbox_(mailbox), fw_(fw), options_(options) {}

MailboxServer::~MailboxServer() {
  Stop();
}

void MailboxServer::Open() {
  std::memset(mailbox_.data(), 0, HMB_CTRL_MAILBOX_SIZE);
  Store<uint32_t>(mailbox_, kRsp + offsetof(hmb_ctrl_response, magic), HMB_CTRL_MAGIC);
  Store<uint16_t>(mailbox_, kRsp + offsetof(hmb_ctrl_response, version), HMB_CTRL_VERSION);
  // Paired with the host's acquire load of rsp.seq (or magic): the zeroed
  // mailbox and the magic are seen together.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  start_mono_ns_ = MonotonicNowNs();
}

void MailboxServer::Start() {
  Open();
  thread_ = std::thread([this] { Loop(); });
}

void MailboxServer::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable())
    thread_.join();
}

void MailboxServer::Loop() {
  // nanosleep of a few us, not a spin: the default 50 us timer slack would
  // make every look at the mailbox 50 us late.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const uint64_t stop_after_ns =
      options_.stop_after_s > 0 ? static_cast<uint64_t>(options_.stop_after_s * 1e9) : 0;
  uint64_t last_request_ns = start_mono_ns_;
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint64_t now = MonotonicNowNs();
    if (stop_after_ns && now - start_mono_ns_ >= stop_after_ns) {
      // --mailbox-stop-after: the firmware stops answering (the host's
      // timeout path); requests stay in the mailbox unanswered.
      stopped_answering_mono_ns_ = now;
      return;
    }
    if (ServeOnce())
      last_request_ns = now;
    else
      SleepUs(now - last_request_ns < kMailboxHotNs ? options_.poll_us : options_.idle_poll_us);
  }
}

bool MailboxServer::ServeOnce() {
  // Paired with the host's release store of req.seq, written after op and
  // args: those are complete when we see the new seq.
  const uint64_t seq = Load<uint64_t>(mailbox_, kReqSeq, __ATOMIC_ACQUIRE);
  if (seq == last_seq_ || seq == 0)
    return false;
  const uint16_t op = Load<uint16_t>(mailbox_, kReq + offsetof(hmb_ctrl_request, op));
  // A sync sample latches the clock as soon as the request is read: every
  // instant spent before it widens the host's uncertainty for nothing.
  const uint64_t tick = op == HMB_CTRL_OP_SYNC ? fw_.LatchClock() : 0;
  const uint32_t magic = Load<uint32_t>(mailbox_, kReq + offsetof(hmb_ctrl_request, magic));
  const uint16_t version = Load<uint16_t>(mailbox_, kReq + offsetof(hmb_ctrl_request, version));
  std::array<uint64_t, 4> arg;
  for (size_t i = 0; i < arg.size(); i++)
    arg[i] =
        Load<uint64_t>(mailbox_, kReq + offsetof(hmb_ctrl_request, arg) + i * sizeof(uint64_t));
  // A host that gave up on a request may be writing the next one: if seq
  // moved while we copied, the copy may be torn. Drop it; the new request
  // is served next. (Paired with the host's writes of seq before and after
  // it rewrites op and args; see Documentation/hmb-trace-abi.rst.)
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (Load<uint64_t>(mailbox_, kReqSeq) != seq)
    return false;

  std::array<uint64_t, 4> val{};
  uint16_t status;
  if (magic != HMB_CTRL_MAGIC) {
    bad_header_++;
    status = HMB_CTRL_INVALID;
  } else if (version != HMB_CTRL_VERSION) {
    bad_header_++;
    status = HMB_CTRL_UNSUPPORTED;
  } else if (op == HMB_CTRL_OP_SYNC) {
    by_op_[op]++;
    val[0] = tick;
    status = HMB_CTRL_OK;
  } else {
    status = Dispatch(op, arg, val, seq);
  }
  Answer(seq, status, val);
  return true;
}

uint16_t MailboxServer::Dispatch(uint16_t op,
                                 const std::array<uint64_t, 4>& arg,
                                 std::array<uint64_t, 4>& val,
                                 uint64_t seq) {
  if (op >= HMB_CTRL_OP_NR) {
    unknown_ops_++;
    return HMB_CTRL_UNSUPPORTED;
  }
  by_op_[op]++;
  uint16_t status = HMB_CTRL_OK;
  nlohmann::json change = {{"op", kOpNames[op]}, {"request_seq", seq}};
  switch (op) {
    case HMB_CTRL_OP_NOP:
      return HMB_CTRL_OK;
    case HMB_CTRL_OP_START:
    case HMB_CTRL_OP_STOP:
      fw_.SetProducing(op == HMB_CTRL_OP_START);
      break;
    case HMB_CTRL_OP_EVENT_MASK:
      change["first_id"] = arg[0];
      change["bits"] = arg[1];
      // Event ids are 16 bits: the 64 ids must exist and start aligned.
      if (arg[0] % 64 != 0 || arg[0] > 0xffff - 63)
        status = HMB_CTRL_INVALID;
      else
        fw_.SetEventMask(static_cast<uint16_t>(arg[0]), arg[1]);
      break;
    case HMB_CTRL_OP_RING_MODE:
      change["mode"] = arg[0];
      status = fw_.SetRingMode(arg[0]);
      break;
    case HMB_CTRL_OP_FREEZE_CONFIG:
      change["threshold_ns"] = arg[0];
      change["n_after"] = arg[1];
      status = fw_.FreezeConfig(arg[0], arg[1], val);
      break;
    case HMB_CTRL_OP_FREEZE_REARM:
      status = fw_.FreezeRearm(val);
      change["word_before"] = val[0];
      break;
    case HMB_CTRL_OP_FREEZE_NOW:
      change["detail"] = arg[0];
      status = fw_.FreezeNow(arg[0]);
      break;
    case HMB_CTRL_OP_ECHO: {
      FirmwareControl::EchoResult r;
      if (arg[1] > 0xffff)
        r.status = HMB_CTRL_INVALID;
      else
        r = fw_.Echo(static_cast<uint16_t>(arg[1]), arg[0]);
      nlohmann::json echo = {{"request_seq", seq},
                             {"core", arg[1]},
                             {"cookie", arg[0]},
                             {"status", kStatusNames[r.status]}};
      if (r.status == HMB_CTRL_OK) {
        val[0] = r.fw_ts;
        val[1] = r.seq;
        echo["producer_gen"] = r.producer_gen;
        echo["seq"] = r.seq;
        echo["fw_ts"] = r.fw_ts;
      }
      echoes_.push_back(std::move(echo));
      return r.status;
    }
    default:
      break;
  }
  change["status"] = kStatusNames[status];
  change["monotonic_ns"] = MonotonicNowNs();
  changes_.push_back(std::move(change));
  return status;
}

void MailboxServer::Answer(uint64_t seq, uint16_t status, const std::array<uint64_t, 4>& val) {
  Store<uint16_t>(mailbox_, kRsp + offsetof(hmb_ctrl_response, status), status);
  for (size_t i = 0; i < val.size(); i++)
    Store<uint64_t>(mailbox_, kRsp + offsetof(hmb_ctrl_response, val) + i * sizeof(uint64_t),
                    val[i]);
  // Paired with the host's acquire load of rsp.seq in its wait for the
  // answer: status and vals are complete when it sees seq.
  Store<uint64_t>(mailbox_, kRspSeq, seq, __ATOMIC_RELEASE);
  last_seq_ = seq;
  if (status < by_status_.size())
    by_status_[status]++;
}

nlohmann::json MailboxServer::TruthJson() const {
  nlohmann::json requests = nlohmann::json::object();
  for (uint16_t op = 0; op < HMB_CTRL_OP_NR; op++)
    requests[kOpNames[op]] = by_op_[op];
  requests["unknown"] = unknown_ops_;
  requests["bad_header"] = bad_header_;
  nlohmann::json answers = nlohmann::json::object();
  for (size_t s = 0; s < by_status_.size(); s++)
    answers[kStatusNames[s]] = by_status_[s];
  return {
      {"poll_us", options_.poll_us},
      {"idle_poll_us", options_.idle_poll_us},
      {"stop_after_s",
       options_.stop_after_s > 0 ? nlohmann::json(options_.stop_after_s) : nlohmann::json()},
      {"started_monotonic_ns", start_mono_ns_},
      {"stopped_answering_monotonic_ns",
       stopped_answering_mono_ns_ ? nlohmann::json(stopped_answering_mono_ns_) : nlohmann::json()},
      {"last_seq", last_seq_},
      {"requests", requests},
      {"answers", answers},
      {"changes", changes_},
      {"echoes", echoes_},
  };
}

}  // namespace hmbtrace
