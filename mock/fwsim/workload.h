// SPDX-License-Identifier: GPL-2.0-only
// The workload of one simulated firmware core: which records it emits, in
// which order, and when (pacing). Pure and deterministic: the record
// contents depend only on the seed and the core, never on time.
#ifndef HMBTRACE_MOCK_FWSIM_WORKLOAD_H_
#define HMBTRACE_MOCK_FWSIM_WORKLOAD_H_

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "fw_events.h"

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
};

// Generates one core's record stream. A host command's fetch is followed,
// on the same core, by its NAND operations and its completion (same qid and
// cid, with a latency); other commands interleave. Garbage collection,
// thermal samples, debug logs and (rarely) errors are mixed in.
class CoreWorkload {
 public:
  explicit CoreWorkload(const WorkloadConfig& config);

  // The next record of this core. Valid until the next call.
  const FwRecord& Next();

  // A firmware reset: commands in flight and a running GC are forgotten,
  // so the new producer generation never completes what it did not fetch.
  void Reset();

  size_t commands_in_flight() const { return in_flight_.size(); }

 private:
  struct Command {
    uint16_t qid;
    uint16_t cid;
    uint8_t opcode;
    uint8_t nand_ops_left;
    uint16_t status;
    uint64_t slba;
    uint32_t latency_ns;
  };

  void StartCommand();
  void StepCommand(size_t index);
  void QueueGarbageCollection();
  void QueueThermal();
  void QueueLog();
  void QueueError(uint16_t code, uint8_t die, uint16_t block);
  uint16_t AllocateCid();
  uint32_t Ticks(uint64_t ns) const;
  uint8_t RandomDie();

  template <typename Payload>
  void Queue(uint16_t event_id, const Payload& payload);

  WorkloadConfig config_;
  Prng prng_;
  std::vector<Command> in_flight_;
  std::deque<FwRecord> queued_;  // records of an episode still to emit
  FwRecord current_;
  uint16_t next_cid_ = 0;
  int16_t temperature_c_ = 40;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_WORKLOAD_H_
