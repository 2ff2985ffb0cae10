// SPDX-License-Identifier: GPL-2.0-only
#include "fwsim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "qemu_nvme_follow.h"
#include "workload.h"

namespace hmbtrace {

namespace {

constexpr uint64_t kNsPerSec = 1000000000;
// Longest a core or the run loop sleeps before looking at the stop flag.
constexpr uint64_t kPollNs = 50000000;

uint64_t NowNs() {
  return MonotonicNowNs();
}

void SleepUntilNs(uint64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(deadline_ns / kNsPerSec);
  ts.tv_nsec = static_cast<long>(deadline_ns % kNsPerSec);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) ==
         EINTR) {
  }
}

uint64_t SecondsToNs(double s) {
  return s <= 0 ? 0 : static_cast<uint64_t>(s * 1e9);
}

// Sleeps |ns|, waking every kPollNs to check |stop|. False if stopped.
bool SleepUnlessStopped(uint64_t ns, const std::atomic<bool>& stop) {
  const uint64_t end = NowNs() + ns;
  for (;;) {
    if (stop.load(std::memory_order_relaxed))
      return false;
    const uint64_t now = NowNs();
    if (now >= end)
      return true;
    SleepUntilNs(std::min(end, now + kPollNs));
  }
}

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out;
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

uint64_t Fnv1a(uint64_t hash, const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; i++) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t Fnv1aString(uint64_t hash, const char* s) {
  return Fnv1a(hash, s ? s : "", s ? std::strlen(s) + 1 : 1);
}

uint64_t Get64(std::span<const uint8_t> area, size_t off) {
  uint64_t v;
  std::memcpy(&v, area.data() + off, sizeof(v));
  return v;
}

uint32_t Get32(std::span<const uint8_t> area, size_t off) {
  uint32_t v;
  std::memcpy(&v, area.data() + off, sizeof(v));
  return v;
}

// Hashes |events| (and, for a build derived from another, |parent|'s build
// id and the build |number|) into a build id.
std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> EventTableBuildId(
    std::span<const hmb_trace_event_desc> events,
    const std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN>* parent,
    uint32_t number) {
  std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> id{};
  for (size_t lane = 0; lane * 8 < id.size(); lane++) {
    uint64_t h = 0xcbf29ce484222325ull ^ (lane * 0x9e3779b97f4a7c15ull);
    h = Fnv1aString(h, "hmb-fwsim");
    if (parent) {
      h = Fnv1a(h, parent->data(), parent->size());
      h = Fnv1a(h, &number, sizeof(number));
    }
    for (const hmb_trace_event_desc& ev : events) {
      const uint8_t roles[] = {ev.role,      ev.key_field, ev.latency_field,
                               ev.qid_field, ev.cid_field, ev.value_field};
      h = Fnv1a(h, &ev.id, sizeof(ev.id));
      h = Fnv1a(h, &ev.pair_id, sizeof(ev.pair_id));
      h = Fnv1a(h, roles, sizeof(roles));
      h = Fnv1aString(h, ev.name);
      h = Fnv1aString(h, ev.format);
      for (uint16_t f = 0; f < ev.nr_fields; f++) {
        const hmb_trace_field_desc& fd = ev.fields[f];
        const uint16_t shape[] = {fd.offset, fd.size, fd.type, fd.display,
                                  fd.nr_values};
        h = Fnv1aString(h, fd.name);
        h = Fnv1a(h, shape, sizeof(shape));
        for (uint16_t v = 0; v < fd.nr_values; v++) {
          h = Fnv1a(h, &fd.values[v].value, sizeof(fd.values[v].value));
          h = Fnv1aString(h, fd.values[v].name);
        }
      }
    }
    for (size_t b = 0; b < 8 && lane * 8 + b < id.size(); b++)
      id[lane * 8 + b] = static_cast<uint8_t>(h >> (8 * b));
  }
  return id;
}

// A word that leads the format of a frequent event in builds after the
// first, or nullptr.
const char* NewBuildFormatWord(uint16_t event_id) {
  switch (event_id) {
    case FW_EV_CMD_FETCH:
      return "fetched";
    case FW_EV_CMD_COMPLETE:
      return "completed";
    default:
      return nullptr;
  }
}

nlohmann::json EventsJson(std::span<const hmb_trace_event_desc> events) {
  nlohmann::json out = nlohmann::json::array();
  for (const hmb_trace_event_desc& ev : events)
    out.push_back({{"id", ev.id}, {"name", ev.name}});
  return out;
}

// The garbage written over a page_seq: never a page_seq this ring slot can
// legitimately hold (it is not page_seq modulo pages_per_core), so a
// consumer recognises the page as invalid rather than as overwritten.
uint64_t GarbagePageSeq(uint64_t page_seq, uint32_t pages_per_core) {
  return page_seq + 1 + pages_per_core * 0x5a5a5a5aull;
}

// Echo hand-over between the mailbox thread and a core (CoreState::echo_state).
constexpr uint32_t kEchoIdle = 0;   // nothing asked
constexpr uint32_t kEchoAsked = 1;  // cookie written by the mailbox thread
constexpr uint32_t kEchoTaken = 2;  // the core is writing the record
constexpr uint32_t kEchoDone = 3;   // result written by the core
// How long the mailbox thread waits for a core to take an echo (a core
// that is stalled, finished or being reset does not).
constexpr uint64_t kEchoTakeNs = 100000000;
// Event ids the mask covers: all of them (16 bits), 64 per word.
constexpr size_t kMaskWords = 65536 / 64;

class Simulator : public FirmwareControl {
 public:
  Simulator(const SimConfig& config,
            std::span<uint8_t> area,
            const hmb_trace_producer_config& producer_config,
            const std::atomic<bool>& external_stop)
      : config_(config),
        area_(area),
        producer_config_(producer_config),
        external_stop_(external_stop),
        first_build_(FirmwareBuild::First()),
        build_(first_build_),
        cores_(config.cores),
        clock_(config.clock, epoch_ns_) {
    for (std::atomic<uint64_t>& word : produce_mask_)
      word.store(~uint64_t{0}, std::memory_order_relaxed);
    for (size_t k = 0; k < cores_.size(); k++) {
      for (const StallSpec& s : config.stalls)
        if (s.core == k)
          cores_[k].stalls.push_back(s);
      std::sort(cores_[k].stalls.begin(), cores_[k].stalls.end(),
                [](const StallSpec& a, const StallSpec& b) {
                  return a.after < b.after;
                });
      for (const CorruptSpec& c : config.corruptions)
        if (c.core == k)
          cores_[k].corruptions.push_back(c.seq);
    }
    reset_at_ = config.reset_at;
    std::sort(reset_at_.begin(), reset_at_.end());
  }

  Status Init() {
    const int err = hmb_trace_producer_init(&producer_, area_.data(),
                                            area_.size(), &producer_config_);
    if (err)
      return Status::Error("hmb_trace_producer_init failed: error " +
                           std::to_string(err));
    return {};
  }

  Result<SimResult> Run(const ProgressFn& progress,
                        std::span<uint8_t> mailbox);

  // FirmwareControl, called from the mailbox thread.
  void SetProducing(bool on) override;
  void SetEventMask(uint16_t first_id, uint64_t bits) override;
  uint16_t SetRingMode(uint64_t mode) override;
  uint64_t LatchClock() override { return clock_.Now(); }
  EchoResult Echo(uint16_t core, uint64_t cookie) override;
  uint16_t FreezeConfig(uint64_t threshold_ns, uint64_t n_after,
                        std::array<uint64_t, 4>& val) override;
  uint16_t FreezeRearm(std::array<uint64_t, 4>& val) override;
  uint16_t FreezeNow(uint64_t detail) override;

 private:
  // Core-private state. Only the core's thread touches it, except while
  // the core is parked or inactive (see the pause gate), when the thread
  // doing a reset may read and clear it under mu_.
  struct alignas(64) CoreState {
    std::atomic<uint64_t> total{0};  // produced over the run; progress
    std::array<uint64_t, FW_EV_NR_IDS> counts{};
    std::vector<StallSpec> stalls;             // sorted by after
    std::vector<uint64_t> corruptions;         // seqs still to corrupt
    std::optional<uint64_t> corrupt_page_seq;  // corrupted page still open
    size_t corrupt_fault = 0;                  // its index in faults_
    uint64_t life_seen = 1;
    bool finished = false;
    uint64_t masked = 0;  // records the event mask kept from being produced

    // The control channel. emit_gate is odd while the core decides whether
    // to produce a record and writes it (see Gate()); the mailbox thread
    // waits for it to move on (Quiesce()) after changing what may be
    // produced, so its answer holds for every later record.
    std::atomic<uint64_t> emit_gate{0};
    std::atomic<uint32_t> echo_state{kEchoIdle};
    uint64_t echo_cookie = 0;               // valid in kEchoAsked, kEchoTaken
    FirmwareControl::EchoResult echo_done;  // valid in kEchoDone
    std::atomic<bool> exited{false};
    // Naps end early when the mailbox thread has something for the core.
    std::mutex wake_mu;
    std::condition_variable wake_cv;
    bool wake = false;  // guarded by wake_mu
    // --follow-qemu-nvme: records the follower thread hands this core.
    std::mutex follow_mu;
    std::deque<FollowedRecord> follow_q;  // guarded by follow_mu
    uint64_t follow_not_produced = 0;     // while production was stopped
  };

  void CoreLoop(uint16_t core);
  // CoreLoop with --follow-qemu-nvme: the records of QEMU's commands.
  void FollowLoop(uint16_t core);
  void HandOut(std::vector<FollowedRecord>& records);
  // The workload's next record, unless production is stopped (false, the
  // workload untouched) or its event is masked (true, not produced).
  bool ProduceNext(uint16_t core,
                   CoreState& cs,
                   CoreWorkload& workload,
                   uint64_t& last_ts);
  int Emit(uint16_t core,
           CoreState& cs,
           uint16_t event_id,
           const void* fixed,
           uint16_t fixed_len,
           const void* var,
           uint16_t var_len,
           uint64_t& last_ts,
           std::optional<uint64_t> tick = std::nullopt);
  void ServeEcho(uint16_t core, CoreState& cs, uint64_t& last_ts);
  bool Produces(uint16_t event_id) const {
    return produce_mask_[event_id / 64].load(std::memory_order_seq_cst) >>
               (event_id % 64) &
           1;
  }
  // Sleeps until |deadline_ns| or a wake from the mailbox thread.
  void Nap(CoreState& cs, uint64_t deadline_ns);
  void Wake(CoreState& cs);
  // The core's thread is done: Run() stops waiting for it.
  void Exit(CoreState& cs);
  void Quiesce();
  void CorruptCurrentPage(uint16_t core, CoreState& cs, uint64_t seq);
  void ClosePendingCorruption(uint16_t core, CoreState& cs, uint64_t last_seq);
  bool StallCore(uint16_t core, CoreState& cs, const StallSpec& stall);
  void FirmwareReset(uint64_t after);
  LifeTruth SnapshotLife();

  // Pause gate: the hot path only loads pause_flag_; everything else is
  // under mu_. "Active" cores run emits; a reset waits until every other
  // active core is parked, so no emit overlaps hmb_trace_producer_init.
  void Park(CoreState& cs, CoreWorkload& workload);
  void Leave();
  void Enter(CoreState& cs, CoreWorkload& workload);
  void SyncLife(CoreState& cs, CoreWorkload& workload);

  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  const SimConfig& config_;
  std::span<uint8_t> area_;
  hmb_trace_producer_config producer_config_;
  const std::atomic<bool>& external_stop_;
  hmb_trace_producer producer_{};
  const std::shared_ptr<const FirmwareBuild> first_build_;
  // The build whose dictionary the area holds; changed only by a reset,
  // under mu_, when --new-build-at-reset.
  std::shared_ptr<const FirmwareBuild> build_;
  std::vector<CoreState> cores_;
  std::vector<uint64_t> reset_at_;  // core 0 only
  size_t next_reset_ = 0;           // core 0 only
  uint64_t epoch_ns_ = NowNs();
  // Every fw_ts and every sync answer; shared by all cores.
  const FirmwareClock clock_;
  uint64_t start_ns_ = 0;
  // START/STOP and the event mask; read inside the emit gate (seq_cst:
  // see Gate()).
  std::atomic<bool> producing_{true};
  std::array<std::atomic<uint64_t>, kMaskWords> produce_mask_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> pause_flag_{false};

  std::mutex mu_;
  // Serialises the freeze's triggers and the control channel's freeze
  // requests (the producer's freeze state is written by one at a time).
  std::mutex freeze_mu_;
  std::condition_variable cv_;
  bool pause_ = false;                  // guarded by mu_
  int active_ = 0;                      // guarded by mu_
  int parked_ = 0;                      // guarded by mu_
  int finished_ = 0;                    // guarded by mu_
  uint64_t life_ = 1;                   // guarded by mu_; bumped by every reset
  std::vector<LifeTruth> lives_;        // guarded by mu_
  std::vector<nlohmann::json> faults_;  // guarded by mu_
};

void Simulator::SyncLife(CoreState& cs, CoreWorkload& workload) {
  if (cs.life_seen != life_) {
    cs.life_seen = life_;
    workload.Reset();
  }
}

void Simulator::Park(CoreState& cs, CoreWorkload& workload) {
  std::unique_lock lock(mu_);
  parked_++;
  cv_.notify_all();
  cv_.wait(lock, [this] { return !pause_; });
  parked_--;
  SyncLife(cs, workload);
}

void Simulator::Leave() {
  std::lock_guard lock(mu_);
  active_--;
  cv_.notify_all();
}

void Simulator::Enter(CoreState& cs, CoreWorkload& workload) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !pause_; });
  active_++;
  SyncLife(cs, workload);
}

LifeTruth Simulator::SnapshotLife() {
  LifeTruth life;
  life.producer_gen = producer_.producer_gen;
  life.build = build_;
  for (uint16_t k = 0; k < config_.cores; k++) {
    CoreState& cs = cores_[k];
    const hmb_trace_producer_core& pc = producer_.core[k];
    if (cs.corrupt_page_seq)
      ClosePendingCorruption(k, cs, pc.next_seq - 1);
    CoreTruth ct;
    ct.core = k;
    ct.produced = pc.next_seq;
    ct.dropped = pc.dropped;
    ct.event_counts = cs.counts;
    cs.counts.fill(0);
    life.cores.push_back(ct);
  }
  return life;
}

// Runs on core 0's thread, which is active; called without mu_.
void Simulator::FirmwareReset(uint64_t after) {
  std::unique_lock lock(mu_);
  pause_ = true;
  pause_flag_.store(true, std::memory_order_release);
  cv_.wait(lock, [this] { return parked_ == active_ - 1; });

  const uint32_t old_gen = producer_.producer_gen;
  const uint64_t produced = producer_.core[0].next_seq;
  lives_.push_back(SnapshotLife());
  // The firmware that comes back: the same build, or with
  // --new-build-at-reset the next one (same records, other dictionary).
  std::shared_ptr<const FirmwareBuild> next_build = build_;
  if (config_.new_build_at_reset) {
    next_build = build_->Next();
    producer_config_.nr_events =
        static_cast<uint16_t>(next_build->events().size());
    producer_config_.events = next_build->events().data();
    std::copy(next_build->build_id().begin(), next_build->build_id().end(),
              producer_config_.build_id);
  }
  producer_config_.prev_unknown = config_.reset_forgets;
  const int err = hmb_trace_producer_init(&producer_, area_.data(),
                                          area_.size(), &producer_config_);
  nlohmann::json fault = {
      {"type", "reset"},
      {"core", 0},
      {"seq", produced ? nlohmann::json(produced - 1) : nlohmann::json()},
      {"producer_gen", old_gen},
      {"after_records", after},
      {"new_producer_gen", producer_.producer_gen},
  };
  if (config_.new_build_at_reset)
    fault["new_build_id"] = Hex(next_build->build_id());
  // Whether the new meta page says how far each core got (prev_next_seq).
  fault["prev_published"] = !config_.reset_forgets;
  // The firmware that comes back forgot what the control channel set: it
  // produces, every event is on (Documentation/hmb-trace-abi.rst, "Control
  // channel"). Every other core is parked, so no record is in its gate.
  producing_.store(true, std::memory_order_seq_cst);
  for (std::atomic<uint64_t>& word : produce_mask_)
    word.store(~uint64_t{0}, std::memory_order_seq_cst);
  if (err) {
    // Cannot happen: the same geometry passed before, and a new build's
    // table differs only in strings that fit. Stop cleanly.
    fault["error"] = err;
    stop_.store(true);
  } else {
    build_ = std::move(next_build);
  }
  faults_.push_back(std::move(fault));
  life_++;
  cores_[0].life_seen = life_;
  pause_ = false;
  pause_flag_.store(false, std::memory_order_release);
  cv_.notify_all();
}

void Simulator::ClosePendingCorruption(uint16_t core,
                                       CoreState& cs,
                                       uint64_t last_seq) {
  (void)core;
  // faults_ is only appended to under mu_; the element itself is only
  // touched by this core (or by a reset while this core is parked).
  faults_[cs.corrupt_fault]["page_last_seq"] = last_seq;
  cs.corrupt_page_seq.reset();
}

void Simulator::CorruptCurrentPage(uint16_t core, CoreState& cs, uint64_t seq) {
  const hmb_trace_producer_core& pc = producer_.core[core];
  if (!pc.page)
    return;
  const uint64_t garbage =
      GarbagePageSeq(pc.page_seq, producer_.pages_per_core);
  // The device scribbles over the header's page_seq (offset 0, aligned).
  __atomic_store_n(reinterpret_cast<uint64_t*>(pc.page), garbage,
                   __ATOMIC_RELAXED);
  std::lock_guard lock(mu_);
  if (cs.corrupt_page_seq)
    ClosePendingCorruption(core, cs, seq);
  faults_.push_back({
      {"type", "corrupt_page"},
      {"core", core},
      {"seq", seq},
      {"producer_gen", producer_.producer_gen},
      {"page_seq", pc.page_seq},
      {"page_first_seq", pc.next_seq - pc.records},
      {"page_last_seq", nullptr},
      {"written_page_seq", garbage},
      {"may_be_lost_as", "invalid"},
  });
  cs.corrupt_fault = faults_.size() - 1;
  cs.corrupt_page_seq = pc.page_seq;
}

// False if the core stalled for good.
bool Simulator::StallCore(uint16_t core,
                          CoreState& cs,
                          const StallSpec& stall) {
  const uint64_t produced = producer_.core[core].next_seq;
  size_t index;
  {
    std::lock_guard lock(mu_);
    faults_.push_back({
        {"type", "stall"},
        {"core", core},
        {"seq", produced ? nlohmann::json(produced - 1) : nlohmann::json()},
        {"producer_gen", producer_.producer_gen},
        {"after_records", cs.total.load(std::memory_order_relaxed)},
        {"seconds",
         stall.seconds ? nlohmann::json(*stall.seconds) : nlohmann::json()},
        {"resumed", false},
    });
    index = faults_.size() - 1;
  }
  if (!stall.seconds)
    return false;
  Leave();
  const bool completed = SleepUnlessStopped(SecondsToNs(*stall.seconds), stop_);
  if (completed) {
    std::lock_guard lock(mu_);
    faults_[index]["resumed"] = true;
  }
  return true;
}

// The emit gate: a core's decision to produce a record and the write are
// one step as seen by the mailbox thread. Dekker-style, with seq_cst on
// both sides: the core stores an odd emit_gate, then reads producing_ and
// the mask; the mailbox thread stores producing_ or the mask, then reads
// each emit_gate (Quiesce()). Either the core reads the new setting, or
// the mailbox thread sees the gate odd and waits until that record is
// written. So once the answer is written, every later record obeys it.
class Gate {
 public:
  explicit Gate(std::atomic<uint64_t>& gate)
      : gate_(gate), value_(gate.load(std::memory_order_relaxed) + 1) {
    // Paired with the load of emit_gate in Simulator::Quiesce().
    gate_.store(value_, std::memory_order_seq_cst);
  }
  ~Gate() { gate_.store(value_ + 1, std::memory_order_release); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

 private:
  std::atomic<uint64_t>& gate_;
  uint64_t value_;
};

int Simulator::Emit(uint16_t core,
                    CoreState& cs,
                    uint16_t event_id,
                    const void* fixed,
                    uint16_t fixed_len,
                    const void* var,
                    uint16_t var_len,
                    uint64_t& last_ts,
                    std::optional<uint64_t> tick) {
  // Stamped from the one clock, at the model time the workload gave the
  // record or when QEMU logged it (`tick`), which has come (never in the
  // future: never later than a sync answer that comes after it); an echo
  // is stamped when written. Never before the core's previous record: a
  // record due before an echo that a late core wrote after it takes the
  // echo's stamp.
  last_ts = std::max(last_ts, tick ? *tick : clock_.Now());
  const int err = hmb_trace_emit(&producer_, core, event_id, last_ts, fixed,
                                 fixed_len, var, var_len);
  if (err == 0)
    cs.counts[event_id]++;
  // The latency trigger, after the completion is written: the frozen
  // window holds it (hmb_trace_freeze_latency()).
  if (err == 0 && event_id == FW_EV_CMD_COMPLETE && fixed_len >= sizeof(fw_cmd_complete)) {
    fw_cmd_complete done;
    std::memcpy(&done, fixed, sizeof(done));
    std::lock_guard lock(freeze_mu_);
    hmb_trace_freeze_latency(&producer_, core, done.latency,
                             static_cast<uint64_t>(done.qid) << 16 | done.cid, last_ts);
  }
  if (HMB_TRACE_FREEZE_STATE(producer_.freeze_word) == HMB_TRACE_FREEZE_TRIGGERED) {
    std::lock_guard lock(freeze_mu_);
    hmb_trace_freeze_tick(&producer_, clock_.Now());
  }
  cs.total.store(cs.total.load(std::memory_order_relaxed) + 1,
                 std::memory_order_relaxed);

  const hmb_trace_producer_core& pc = producer_.core[core];
  if (cs.corrupt_page_seq && pc.page_seq != *cs.corrupt_page_seq) {
    std::lock_guard lock(mu_);
    ClosePendingCorruption(core, cs, pc.next_seq - pc.records - 1);
  }
  if (err == 0 && !cs.corruptions.empty()) {
    const uint64_t seq = pc.next_seq - 1;
    auto it = std::find(cs.corruptions.begin(), cs.corruptions.end(), seq);
    if (it != cs.corruptions.end()) {
      cs.corruptions.erase(it);
      CorruptCurrentPage(core, cs, seq);
    }
  }
  return err;
}

bool Simulator::ProduceNext(uint16_t core,
                            CoreState& cs,
                            CoreWorkload& workload,
                            uint64_t& last_ts) {
  Gate gate(cs.emit_gate);
  if (!producing_.load(std::memory_order_seq_cst))
    return false;
  const TimedRecord& next = workload.Peek();
  const FwRecord& rec = next.rec;
  if (!Produces(rec.event_id)) {
    // Filtered at the source: the firmware did the work, the record is
    // not written and takes no sequence number.
    cs.masked++;
  } else {
    Emit(core, cs, rec.event_id, rec.fixed.data(), rec.fixed_len,
         rec.var.data(), rec.var_len, last_ts, clock_.TickAtModel(next.at_ns));
  }
  workload.Pop();
  return true;
}

void Simulator::ServeEcho(uint16_t core, CoreState& cs, uint64_t& last_ts) {
  uint32_t asked = kEchoAsked;
  // Paired with the release store of kEchoAsked in Simulator::Echo(): the
  // cookie is there. Fails if the mailbox thread withdrew the request.
  if (!cs.echo_state.compare_exchange_strong(asked, kEchoTaken,
                                             std::memory_order_acquire))
    return;
  const fw_hmb_echo payload = {cs.echo_cookie};
  // The host asked for this record: it is written even while production
  // is stopped or its event masked.
  const int err = Emit(core, cs, FW_EV_HMB_ECHO, &payload, sizeof(payload),
                       nullptr, 0, last_ts);
  EchoResult& r = cs.echo_done;
  r = {};
  r.status = err == 0 ? HMB_CTRL_OK : HMB_CTRL_INVALID;
  if (err == 0) {
    r.fw_ts = last_ts;
    r.seq = producer_.core[core].next_seq - 1;
    r.producer_gen = producer_.producer_gen;
  }
  // Paired with the acquire load of echo_state in Simulator::Echo().
  cs.echo_state.store(kEchoDone, std::memory_order_release);
}

void Simulator::Nap(CoreState& cs, uint64_t deadline_ns) {
  const std::chrono::steady_clock::time_point until{
      std::chrono::nanoseconds(deadline_ns)};
  std::unique_lock lock(cs.wake_mu);
  cs.wake_cv.wait_until(lock, until, [&cs] { return cs.wake; });
  cs.wake = false;
}

void Simulator::Wake(CoreState& cs) {
  {
    std::lock_guard lock(cs.wake_mu);
    cs.wake = true;
  }
  cs.wake_cv.notify_one();
}

void Simulator::Exit(CoreState& cs) {
  cs.exited.store(true, std::memory_order_release);
  std::lock_guard lock(mu_);
  cs.finished = true;
  finished_++;
  active_--;
  cv_.notify_all();
}

void Simulator::Quiesce() {
  for (CoreState& cs : cores_) {
    // Paired with the seq_cst store in Gate's constructor.
    const uint64_t g = cs.emit_gate.load(std::memory_order_seq_cst);
    if (g % 2 == 0)
      continue;
    // One record is being written: a few microseconds at most, unless the
    // core is preempted.
    while (cs.emit_gate.load(std::memory_order_acquire) == g)
      std::this_thread::yield();
  }
}

void Simulator::SetProducing(bool on) {
  producing_.store(on, std::memory_order_seq_cst);
  Quiesce();
  for (CoreState& cs : cores_)
    Wake(cs);
}

void Simulator::SetEventMask(uint16_t first_id, uint64_t bits) {
  produce_mask_[first_id / 64].store(bits, std::memory_order_seq_cst);
  Quiesce();
}

uint16_t Simulator::SetRingMode(uint64_t mode) {
  // STOP is the freeze with reason RING_FULL (hmb_trace_ring_mode()).
  std::lock_guard lock(freeze_mu_);
  return hmb_trace_ring_mode(&producer_, static_cast<uint32_t>(mode)) ? HMB_CTRL_INVALID
                                                                       : HMB_CTRL_OK;
}

uint16_t Simulator::FreezeConfig(uint64_t threshold_ns, uint64_t n_after,
                                 std::array<uint64_t, 4>& val) {
  if (n_after > UINT32_MAX)
    return HMB_CTRL_INVALID;
  const uint64_t ticks = static_cast<uint64_t>(
      static_cast<unsigned __int128>(threshold_ns) * config_.clock.clock_hz / 1000000000u);
  std::lock_guard lock(freeze_mu_);
  hmb_trace_freeze_config(&producer_, ticks, static_cast<uint32_t>(n_after));
  val[0] = ticks;
  val[1] = n_after;
  return HMB_CTRL_OK;
}

uint16_t Simulator::FreezeRearm(std::array<uint64_t, 4>& val) {
  std::lock_guard lock(freeze_mu_);
  val[0] = hmb_trace_freeze_rearm(&producer_);
  return HMB_CTRL_OK;
}

uint16_t Simulator::FreezeNow(uint64_t detail) {
  std::lock_guard lock(freeze_mu_);
  return hmb_trace_freeze(&producer_, 0xffff, HMB_TRACE_FREEZE_HOST, detail, clock_.Now())
             ? HMB_CTRL_INVALID
             : HMB_CTRL_OK;
}

FirmwareControl::EchoResult Simulator::Echo(uint16_t core, uint64_t cookie) {
  EchoResult invalid;
  invalid.status = HMB_CTRL_INVALID;
  if (core >= cores_.size())
    return invalid;
  CoreState& cs = cores_[core];
  if (cs.exited.load(std::memory_order_acquire))
    return invalid;
  cs.echo_cookie = cookie;
  // Paired with the acquire compare-exchange in Simulator::ServeEcho().
  cs.echo_state.store(kEchoAsked, std::memory_order_release);
  Wake(cs);
  const uint64_t deadline = NowNs() + kEchoTakeNs;
  for (;;) {
    // Paired with the release store of kEchoDone in ServeEcho().
    const uint32_t st = cs.echo_state.load(std::memory_order_acquire);
    if (st == kEchoDone) {
      const EchoResult r = cs.echo_done;
      cs.echo_state.store(kEchoIdle, std::memory_order_relaxed);
      return r;
    }
    if (st == kEchoAsked && (NowNs() >= deadline ||
                             cs.exited.load(std::memory_order_acquire))) {
      uint32_t asked = kEchoAsked;
      if (cs.echo_state.compare_exchange_strong(asked, kEchoIdle,
                                                std::memory_order_relaxed))
        return invalid;  // withdrawn: the core will not write it
      continue;          // taken just now: the answer follows
    }
    const timespec pause = {0, 2000};
    nanosleep(&pause, nullptr);
  }
}

void Simulator::HandOut(std::vector<FollowedRecord>& records) {
  for (const FollowedRecord& r : records) {
    if (r.core >= cores_.size())
      continue;  // cannot happen: the follower knows the core count
    CoreState& cs = cores_[r.core];
    std::lock_guard lock(cs.follow_mu);
    cs.follow_q.push_back(r);
  }
  for (CoreState& cs : cores_)
    Wake(cs);
}

void Simulator::FollowLoop(uint16_t core) {
  CoreState& cs = cores_[core];
  CoreWorkload unused(WorkloadConfig{});
  uint64_t last_ts = 0;
  std::deque<FollowedRecord> batch;
  for (;;) {
    if (cs.echo_state.load(std::memory_order_relaxed) == kEchoAsked)
      ServeEcho(core, cs, last_ts);
    if (config_.count && cs.total.load(std::memory_order_relaxed) >= config_.count)
      break;
    if (pause_flag_.load(std::memory_order_acquire))
      Park(cs, unused);
    if (batch.empty()) {
      {
        std::lock_guard lock(cs.follow_mu);
        batch.swap(cs.follow_q);
      }
      if (batch.empty()) {
        if (stopping())
          break;
        Nap(cs, NowNs() + kPollNs);
      }
      continue;
    }
    const FollowedRecord r = batch.front();
    batch.pop_front();
    Gate gate(cs.emit_gate);
    if (!producing_.load(std::memory_order_seq_cst)) {
      cs.follow_not_produced++;
      continue;
    }
    if (!Produces(r.rec.event_id)) {
      cs.masked++;
      continue;
    }
    Emit(core, cs, r.rec.event_id, r.rec.fixed.data(), r.rec.fixed_len, r.rec.var.data(),
         r.rec.var_len, last_ts, clock_.TickAt(r.mono_ns));
  }
  Exit(cs);
}

void Simulator::CoreLoop(uint16_t core) {
  if (!config_.follow_qemu_nvme.empty()) {
    FollowLoop(core);
    return;
  }
  CoreState& cs = cores_[core];
  WorkloadConfig wc;
  wc.seed = config_.seed;
  wc.core = core;
  wc.nr_cores = config_.cores;
  wc.clock_hz = config_.clock.clock_hz;
  wc.rate = config_.rate;
  wc.burst = config_.burst;
  wc.time_scale = config_.clock.time_scale;
  wc.start_ns = clock_.ModelNsAt(start_ns_);
  if (core == 0) {
    wc.slow_cmd = config_.slow_cmd;
    wc.slow_ns = config_.slow_us * 1000;
  }
  CoreWorkload workload(wc);
  uint64_t last_ts = 0;
  size_t next_stall = 0;
  bool held = false;  // production was stopped (STOP) when last looked at
  bool unpaced = false;

  while (!stopping()) {
    if (cs.echo_state.load(std::memory_order_relaxed) == kEchoAsked)
      ServeEcho(core, cs, last_ts);
    const uint64_t total = cs.total.load(std::memory_order_relaxed);
    if (config_.count && total >= config_.count)
      break;
    if (pause_flag_.load(std::memory_order_acquire))
      Park(cs, workload);
    if (!producing_.load(std::memory_order_relaxed)) {
      held = true;
      Nap(cs, NowNs() + kPollNs);
      continue;
    }
    if (held) {
      // START: what fell due while stopped was not written; resume at the
      // configured rate rather than catching up.
      held = false;
      workload.SkipTo(clock_.ModelNsAt(NowNs()));
    }
    if (next_stall < cs.stalls.size() && total >= cs.stalls[next_stall].after) {
      const StallSpec stall = cs.stalls[next_stall++];
      if (!StallCore(core, cs, stall))
        break;
      Enter(cs, workload);
      if (stopping())
        break;
      // As after START.
      workload.SkipTo(clock_.ModelNsAt(NowNs()));
      continue;
    }
    if (!unpaced && config_.full_speed_after && total >= config_.full_speed_after) {
      unpaced = true;
      workload.Unpace();
    }
    // Each record is written once its model time has come.
    const uint64_t due = clock_.MonotonicAtModel(workload.Peek().at_ns);
    const uint64_t now = NowNs();
    if (now < due) {
      Nap(cs, std::min(due, now + kPollNs));
      continue;
    }
    if (!ProduceNext(core, cs, workload, last_ts))
      continue;  // stopped meanwhile
    if (core == 0 && next_reset_ < reset_at_.size() &&
        cs.total.load(std::memory_order_relaxed) >= reset_at_[next_reset_]) {
      FirmwareReset(reset_at_[next_reset_]);
      workload.Reset();
      while (next_reset_ < reset_at_.size() &&
             reset_at_[next_reset_] <= cs.total.load(std::memory_order_relaxed))
        next_reset_++;
    }
  }
  Exit(cs);
}

Result<SimResult> Simulator::Run(const ProgressFn& progress,
                                 std::span<uint8_t> mailbox) {
  SimResult result;
  result.config = config_;
  // The control channel is answered from the start: a host may sync its
  // clock or set the mask before it lets the firmware produce.
  std::optional<MailboxServer> server;
  if (!mailbox.empty()) {
    server.emplace(mailbox, *this, config_.mailbox);
    server->Start();
  }

  // Start control: the area is READY (dictionary published) while we wait.
  auto stopped = [this] {
    if (external_stop_.load(std::memory_order_relaxed))
      stop_.store(true);
    return stopping();
  };
  if (!config_.wait_for.empty()) {
    struct stat st;
    while (!stopped() && stat(config_.wait_for.c_str(), &st) != 0)
      SleepUntilNs(NowNs() + kPollNs);
  }
  if (config_.start_delay_s > 0) {
    const uint64_t end = NowNs() + SecondsToNs(config_.start_delay_s);
    while (!stopped() && NowNs() < end)
      SleepUntilNs(std::min(end, NowNs() + kPollNs));
  }

  start_ns_ = NowNs();
  const uint64_t end_ns =
      config_.duration_s > 0 ? start_ns_ + SecondsToNs(config_.duration_s) : 0;
  active_ = config_.cores;
  std::vector<std::thread> threads;
  threads.reserve(config_.cores);
  for (uint16_t k = 0; k < config_.cores; k++)
    threads.emplace_back([this, k] { CoreLoop(k); });
  // The follower stops first (it reads to the end of the log), then the
  // cores, which emit what it handed them.
  std::atomic<bool> follow_stop{false};
  std::optional<QemuNvmeFollower> follower;
  std::thread follow_thread;
  Status follow_status;
  if (!config_.follow_qemu_nvme.empty()) {
    follower.emplace(config_.follow_qemu_nvme, config_.cores, config_.clock.clock_hz,
                     config_.clock.time_scale);
    follow_thread = std::thread([&] {
      follow_status = follower->Run(
          follow_stop, [this](std::vector<FollowedRecord>& r) { HandOut(r); });
    });
  }

  std::string reason;
  uint64_t next_progress = start_ns_ + kNsPerSec;
  std::vector<uint64_t> produced(config_.cores);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::nanoseconds(kPollNs),
                   [this] { return finished_ == config_.cores; });
      if (finished_ == config_.cores) {
        // Besides a signal (which may come while we wait for --wait-for),
        // stop_ is only set early when a reset failed.
        reason = external_stop_.load(std::memory_order_relaxed) ? "signal"
                 : stopping()                                   ? "error"
                 : config_.count                                ? "count"
                                                                : "stalled";
        break;
      }
    }
    const uint64_t now = NowNs();
    if (external_stop_.load(std::memory_order_relaxed)) {
      reason = "signal";
      break;
    }
    if (end_ns && now >= end_ns) {
      reason = "duration";
      break;
    }
    if (progress && now >= next_progress) {
      for (uint16_t k = 0; k < config_.cores; k++)
        produced[k] = cores_[k].total.load(std::memory_order_relaxed);
      progress(static_cast<double>(now - start_ns_) / 1e9, produced);
      next_progress += kNsPerSec;
    }
  }
  if (follower) {
    follow_stop.store(true);
    follow_thread.join();
    result.qemu_nvme = follower->TruthJson();
    uint64_t not_produced = 0;
    for (const CoreState& cs : cores_)
      not_produced += cs.follow_not_produced;
    result.qemu_nvme["not_produced_while_stopped"] = not_produced;
    if (!follow_status.ok()) {
      result.qemu_nvme["error"] = follow_status.message();
      if (reason != "signal")
        reason = "error";
    }
  }
  stop_.store(true);
  for (std::thread& t : threads)
    t.join();
  if (server) {
    server->Stop();
    nlohmann::json masked = nlohmann::json::array();
    for (const CoreState& cs : cores_)
      masked.push_back(cs.masked);
    result.control = server->TruthJson();
    result.control["masked"] = std::move(masked);
  }
  std::lock_guard lock(mu_);
  lives_.push_back(SnapshotLife());
  result.elapsed_s = static_cast<double>(NowNs() - start_ns_) / 1e9;
  result.stop_reason = reason;
  result.area_len = area_.size();
  result.pages_per_core = producer_.pages_per_core;
  result.ring_offset = producer_.ring_offset;
  result.dict_offset = Get64(area_, offsetof(hmb_trace_meta, dict_offset));
  result.dict_len = Get32(area_, offsetof(hmb_trace_meta, dict_len));
  result.build_id = first_build_->build_id();
  result.clock = clock_.TruthJson();
  result.lives = std::move(lives_);
  result.faults = std::move(faults_);
  return result;
}

uint64_t NextPowerOfTwo(uint64_t v) {
  return std::bit_ceil(v);
}

}  // namespace

Status CheckAreaSizePowerOfTwo(uint64_t size) {
  if (size != 0 && std::has_single_bit(size))
    return {};
  const uint64_t up = NextPowerOfTwo(std::max<uint64_t>(size, 1));
  const std::string human = up >= (1u << 20)
                                ? std::to_string(up >> 20) + " MiB"
                                : std::to_string(up >> 10) + " KiB";
  return Status::Error("area size " + std::to_string(size) +
                       " is not a power of two (QEMU's ivshmem needs one); "
                       "use --size " +
                       std::to_string(up) + " (" + human + ")");
}

std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> FwEventsBuildId() {
  return EventTableBuildId({fw_events, fw_nr_events}, nullptr, 1);
}

std::shared_ptr<const FirmwareBuild> FirmwareBuild::First() {
  std::shared_ptr<FirmwareBuild> b(new FirmwareBuild());
  b->number_ = 1;
  b->events_.assign(fw_events, fw_events + fw_nr_events);
  b->build_id_ = FwEventsBuildId();
  return b;
}

std::shared_ptr<const FirmwareBuild> FirmwareBuild::Next() const {
  std::shared_ptr<FirmwareBuild> b(new FirmwareBuild());
  b->number_ = number_ + 1;
  const std::string suffix = "_b" + std::to_string(b->number_);
  // Every string first, then the pointers to them: names_ and formats_
  // do not change size afterwards.
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    const hmb_trace_event_desc& ev = fw_events[i];
    b->names_.push_back(std::string(ev.name) + suffix);
    const char* word = NewBuildFormatWord(ev.id);
    b->formats_.push_back(word ? std::string(word) + " " + ev.format
                               : std::string(ev.format));
  }
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    hmb_trace_event_desc ev = fw_events[i];
    ev.name = b->names_[i].c_str();
    ev.format = b->formats_[i].c_str();
    b->events_.push_back(ev);
  }
  b->build_id_ = EventTableBuildId(b->events_, &build_id_, b->number_);
  return b;
}

Result<hmb_trace_producer_config> MakeProducerConfig(const SimConfig& config,
                                                     uint64_t area_len) {
  const uint32_t ps = config.page_size;
  if (config.cores < 1 || config.cores > HMB_TRACE_MAX_CORES)
    return Status::Error("--cores " + std::to_string(config.cores) +
                         " is out of range: 1.." +
                         std::to_string(HMB_TRACE_MAX_CORES));
  if (ps < HMB_TRACE_PAGE_SIZE_MIN || ps > HMB_TRACE_PAGE_SIZE_MAX ||
      !std::has_single_bit(ps))
    return Status::Error("--page-size " + std::to_string(ps) +
                         " must be a power of two from " +
                         std::to_string(HMB_TRACE_PAGE_SIZE_MIN) + " to " +
                         std::to_string(HMB_TRACE_PAGE_SIZE_MAX));
  const uint64_t meta_need =
      sizeof(hmb_trace_meta) + uint64_t{config.cores} * sizeof(hmb_trace_core);
  if (meta_need > ps)
    return Status::Error("--page-size " + std::to_string(ps) +
                         " is too small for " + std::to_string(config.cores) +
                         " cores: the meta page needs " +
                         std::to_string(meta_need) + " bytes");
  if (config.pages_per_core != 0 &&
      (config.pages_per_core < HMB_TRACE_PAGES_PER_CORE_MIN ||
       config.pages_per_core > HMB_TRACE_PAGES_PER_CORE_MAX))
    return Status::Error(
        "--pages-per-core " + std::to_string(config.pages_per_core) +
        " is out of range: " + std::to_string(HMB_TRACE_PAGES_PER_CORE_MIN) +
        ".." + std::to_string(HMB_TRACE_PAGES_PER_CORE_MAX) +
        " (or 0: as many as fit)");
  if (Status st = CheckClockModel(config.clock); !st.ok())
    return st;

  hmb_trace_producer_config cfg{};
  cfg.page_size = ps;
  cfg.pages_per_core = config.pages_per_core;
  cfg.nr_cores = config.cores;
  cfg.dict_len = 0;
  cfg.clock_hz = config.clock.clock_hz;
  const auto build_id = FwEventsBuildId();
  std::copy(build_id.begin(), build_id.end(), cfg.build_id);
  cfg.nr_events = fw_nr_events;
  cfg.events = fw_events;

  hmb_trace_producer_config sized = cfg;
  if (!sized.pages_per_core)
    sized.pages_per_core = HMB_TRACE_PAGES_PER_CORE_MIN;
  const uint64_t need = hmb_trace_area_size(&sized);
  if (need == 0)
    return Status::Error("invalid geometry (hmb_trace_area_size rejected it)");
  if (area_len < need) {
    const uint64_t up = NextPowerOfTwo(need);
    return Status::Error(
        "area of " + std::to_string(area_len) + " bytes is too small for " +
        std::to_string(config.cores) + " cores x " +
        std::to_string(sized.pages_per_core) + " pages of " +
        std::to_string(ps) + " bytes: it needs " + std::to_string(need) +
        " bytes; use --size " + std::to_string(up) +
        (config.pages_per_core ? "" : " or a smaller --page-size"));
  }
  return cfg;
}

Status CheckConfig(const SimConfig& config, uint64_t area_len) {
  Result<hmb_trace_producer_config> cfg = MakeProducerConfig(config, area_len);
  if (!cfg.ok())
    return cfg.status();
  for (const StallSpec& s : config.stalls)
    if (s.core >= config.cores)
      return Status::Error("--stall-core " + std::to_string(s.core) +
                           ": there are only " + std::to_string(config.cores) +
                           " cores");
  if (!config.follow_qemu_nvme.empty() &&
      (!config.reset_at.empty() || !config.stalls.empty()))
    return Status::Error(
        "--follow-qemu-nvme serves QEMU's commands as they come: it cannot be combined "
        "with --reset-at or --stall-core");
  for (const CorruptSpec& c : config.corruptions)
    if (c.core >= config.cores)
      return Status::Error("--corrupt-page " + std::to_string(c.core) +
                           ": there are only " + std::to_string(config.cores) +
                           " cores");
  return {};
}

Result<SimResult> RunSimulation(const SimConfig& config,
                                std::span<uint8_t> area,
                                const std::atomic<bool>& stop,
                                const ProgressFn& progress,
                                std::span<uint8_t> mailbox) {
  if (Status st = CheckConfig(config, area.size()); !st.ok())
    return st;
  if (reinterpret_cast<uintptr_t>(area.data()) % 8 != 0)
    return Status::Error("the area must be 8-byte aligned");
  if (!mailbox.empty() &&
      (mailbox.size() < HMB_CTRL_MAILBOX_SIZE ||
       reinterpret_cast<uintptr_t>(mailbox.data()) % 8 != 0))
    return Status::Error("the mailbox must be " +
                         std::to_string(HMB_CTRL_MAILBOX_SIZE) +
                         " bytes, 8-byte aligned");
  Result<hmb_trace_producer_config> cfg =
      MakeProducerConfig(config, area.size());
  auto sim = std::make_unique<Simulator>(config, area, cfg.value(), stop);
  if (Status st = sim->Init(); !st.ok())
    return st;
  return sim->Run(progress, mailbox);
}

nlohmann::json TruthJson(const SimResult& r) {
  using nlohmann::json;
  json lives = json::array();
  for (const LifeTruth& life : r.lives) {
    json cores = json::array();
    for (const CoreTruth& c : life.cores) {
      json counts = json::object();
      for (uint16_t i = 0; i < fw_nr_events; i++)
        counts[fw_events[i].name] = c.event_counts[fw_events[i].id];
      cores.push_back({
          {"core", c.core},
          {"produced", c.produced},
          {"last_seq", c.produced ? json(c.produced - 1) : json()},
          {"dropped", c.dropped},
          {"event_counts", counts},
      });
    }
    json entry = {{"producer_gen", life.producer_gen}, {"cores", cores}};
    // Only with the option, so that the truth is otherwise unchanged.
    if (r.config.new_build_at_reset && life.build) {
      entry["build_id"] = Hex(life.build->build_id());
      entry["events"] = EventsJson(life.build->events());
    }
    lives.push_back(std::move(entry));
  }
  const SimConfig& c = r.config;
  const json events = EventsJson({fw_events, fw_nr_events});
  json truth = {
      {"tool", "hmb-fwsim"},
      {"seed", c.seed},
      {"geometry",
       {
           {"area_len", r.area_len},
           {"page_size", c.page_size},
           {"nr_cores", c.cores},
           {"pages_per_core", r.pages_per_core},
           {"dict_offset", r.dict_offset},
           {"dict_len", r.dict_len},
           {"ring_offset", r.ring_offset},
       }},
      {"clock", r.clock},
      {"build_id", Hex(r.build_id)},
      {"events", events},
      {"workload",
       {
           {"rate", c.rate},
           {"burst", c.burst},
           {"duration_s", c.duration_s},
           {"count", c.count},
       }},
      {"stop_reason", r.stop_reason},
      {"elapsed_s", r.elapsed_s},
      {"lives", lives},
      {"faults", r.faults},
  };
  // Only with a mailbox, so that the truth is otherwise unchanged.
  if (!r.control.is_null())
    truth["control"] = r.control;
  if (!r.qemu_nvme.is_null())
    truth["qemu_nvme"] = r.qemu_nvme;
  return truth;
}

Status WriteFileAtomically(const std::string& path,
                           const std::string& contents) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::Error("cannot create " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      Status err =
          Status::Error("cannot write " + tmp + ": " + std::strerror(errno));
      close(fd);
      unlink(tmp.c_str());
      return err;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    Status err =
        Status::Error("cannot write " + tmp + ": " + std::strerror(errno));
    unlink(tmp.c_str());
    return err;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    Status err = Status::Error("cannot rename " + tmp + " to " + path + ": " +
                               std::strerror(errno));
    unlink(tmp.c_str());
    return err;
  }
  return {};
}

}  // namespace hmbtrace
