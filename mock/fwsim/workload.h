// SPDX-License-Identifier: GPL-2.0-only
// The workload of one simulated firmware core: which records it emits and
// at which model time. Pure and deterministic: the records and their times
// depend only on the seed, the core and the pacing (rate, burst, time
// scale), never on the host's clock.
#ifndef HMBTRACE_MOCK_FWSIM_WORKLOAD_H_
#define HMBTRACE_MOCK_FWSIM_WORKLOAD_H_

#include <array>
#include <cstdint>
#include <queue>
#include <vector>

#include "fwsim_events.h"

namespace hmbtrace {

// xoshiro256** seeded through splitmix64: fast, and specified here rather
// than by the standard library, so a seed means the same on every platform.
class Prng {
 public:
  explicit Prng(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, n); n > 0.
  uint64_t Below(uint64_t n);
  // Uniform in [lo, hi].
  uint64_t Between(uint64_t lo, uint64_t hi) { return lo + Below(hi - lo + 1); }
  // True with probability per_million / 1e6.
  bool Chance(uint32_t per_million) { return Below(1000000) < per_million; }

 private:
  std::array<uint64_t, 4> s_;
};

// The seed of core |core|'s generator for run seed |seed|.
uint64_t CoreSeed(uint64_t seed, uint16_t core);

// Record |index| (0-based, counted from when pacing started) may not be
// emitted before this many nanoseconds after that start: bursts of |burst|
// records begin every burst / rate seconds. 0 for every record when rate is
// 0 (as fast as possible). Deadlines are absolute, so a core that oversleeps
// catches up and the long-run rate is exact.
uint64_t PacingOffsetNs(uint64_t index, uint64_t rate, uint32_t burst);

// Firmware clock ticks in |ns| nanoseconds at |clock_hz|.
uint64_t NsToTicks(uint64_t ns, uint64_t clock_hz);

// One record, as handed to hmb_trace_emit().
struct FwRecord {
  uint16_t event_id = 0;
  uint16_t fixed_len = 0;
  uint16_t var_len = 0;
  std::array<uint8_t, 64> fixed{};
  std::array<uint8_t, FW_ERROR_CONTEXT_MAX> var{};

  // Same event and same payload bytes.
  bool SameContent(const FwRecord& other) const;
};

struct WorkloadConfig {
  uint64_t seed = 1;
  uint16_t core = 0;
  uint16_t nr_cores = 1;
  uint64_t clock_hz = 1000000000;
  uint32_t queue_depth = 32;  // host commands in flight per core, at most
  // Pacing: records per real second (0: as fast as the queue depth lets
  // commands complete), in bursts of |burst|; model time runs time_scale
  // times faster than real time (fw_clock.h), so one real second of pacing
  // is time_scale model seconds.
  uint64_t rate = 0;
  uint32_t burst = 1;
  uint32_t time_scale = 1;
  uint64_t start_ns = 0;  // model time of the first arrival
  // The firmware freeze's latency trigger, on request: this core's
  // slow_cmd-th host command (1-based; 0: none) takes slow_ns longer in
  // its back end (a firmware stall), so its cmd_complete latency shows it.
  uint64_t slow_cmd = 0;
  uint64_t slow_ns = 0;
};

// A record and the model time (ns, FirmwareClock's model time) at which
// the firmware writes it.
struct TimedRecord {
  uint64_t at_ns = 0;
  FwRecord rec;
};

// Generates one core's records in model-time order, as a discrete-event
// model of the firmware. Work arrives paced: arrival k comes at the pacing
// offset (PacingOffsetNs, times time_scale) of its first record's index,
// so the long-run rate is --rate records per real second. An arrival is
// a host command (while fewer than queue_depth are in flight; otherwise
// it waits for the first completion), or rarely a garbage collection, a
// thermal sample, a debug log line or an error. Every duration a record
// states is the span between timestamps of the same model:
//   cmd_fetch at t; the command's NAND reads back to back from
//   t + front end; cmd_complete at t + latency (front end, reads, back
//   end), with the same qid and cid, on the same core;
//   a NAND record is written when the operation ends: at its start +
//   latency (a write's program runs behind the write cache: it starts
//   inside the write and may end after the write completed);
//   gc_end at gc_begin + latency, its reads, programs and erase in between.
// Commands interleave on the core by their times.
class CoreWorkload {
 public:
  explicit CoreWorkload(const WorkloadConfig& config);

  // The next record of this core in model-time order (the same record
  // until Pop()). Valid until the next call of a non-const method.
  const TimedRecord& Peek();
  void Pop();
  // Peek(), Pop(): the next record's contents.
  const FwRecord& Next();

  // A firmware reset: commands in flight, a running GC and every record
  // not yet written are forgotten, so the new producer generation never
  // completes what it did not fetch. Arrivals keep their pace.
  void Reset();

  // The core did not write (production stopped, or it stalled) until
  // model time |now_ns|: the records due before it are forgotten (the work
  // happened, unrecorded), and arrivals resume at the configured pace from
  // |now_ns| without catching up. Returns the records forgotten.
  uint64_t SkipTo(uint64_t now_ns);

  // From now on, work arrives as fast as the queue depth allows.
  void Unpace();

  size_t commands_in_flight() const { return in_flight_.size(); }

 private:
  struct Command {
    uint16_t qid;
    uint16_t cid;
    uint64_t complete_ns;  // model time of its cmd_complete
  };
  enum class Arrival { kCommand, kGarbageCollection, kThermal, kLog, kError };
  struct Due {
    uint64_t at_ns;
    uint64_t order;  // ties: in the order generated
    FwRecord rec;
  };
  struct Later {
    bool operator()(const Due& a, const Due& b) const {
      return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.order > b.order;
    }
  };

  Arrival DrawArrival();
  uint64_t ArrivalTime() const;
  void Arrive(uint64_t at_ns);
  // A command leaves the queue when its completion is taken.
  void Retire(const FwRecord& rec);
  uint64_t StartCommand(uint64_t at_ns);
  uint64_t QueueGarbageCollection(uint64_t at_ns);
  uint64_t QueueThermal(uint64_t at_ns);
  uint64_t QueueLog(uint64_t at_ns);
  uint64_t QueueError(uint64_t at_ns, uint16_t code, uint8_t die,
                      uint16_t block);
  uint16_t AllocateCid();
  uint32_t Ticks(uint64_t ns) const;
  uint8_t RandomDie();
  fw_nand_op RandomNandOp(uint8_t die, uint16_t block);

  template <typename Payload>
  void Queue(uint64_t at_ns, uint16_t event_id, const Payload& payload);

  WorkloadConfig config_;
  Prng prng_;
  std::vector<Command> in_flight_;
  std::priority_queue<Due, std::vector<Due>, Later> due_;
  uint64_t next_order_ = 0;
  TimedRecord current_;
  bool current_valid_ = false;
  // Arrivals: the next one's kind, the pacing origin and the index of the
  // next arrival's first record counted from it, the last arrival's time.
  Arrival next_arrival_;
  uint64_t pacing_origin_ns_;
  uint64_t pacing_index_ = 0;
  uint64_t last_arrival_ns_;
  uint64_t commands_ = 0;  // host commands arrived on this core
  uint64_t taken_ns_ = 0;    // the time of the last record taken
  uint64_t gc_done_ns_ = 0;  // when the running collection ends
  uint16_t next_cid_ = 0;
  int16_t temperature_c_ = 40;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_WORKLOAD_H_
