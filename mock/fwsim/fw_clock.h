// SPDX-License-Identifier: GPL-2.0-only
// The simulated firmware's trace clock: the clock of every record's fw_ts
// and of every clock-sync answer. A crystal of its own, not the host's:
//
//   its own rate   clock_hz, off by a drift (ppm) that may step once;
//   its own origin start_tick, the tick at the simulator's start;
//   its own pace   with time_scale N, model time runs N times faster than
//                  CLOCK_MONOTONIC (a 60 s run in 60/N s of real time).
//
// Model time m is (CLOCK_MONOTONIC - start_mono_ns) * N, in ns. The tick at
// m is exact integer arithmetic over drift segments, each starting at model
// time from_model_ns with tick `tick` and a rate of ppb parts per billion
// off clock_hz:
//
//   tick(m) = seg.tick + floor((m - seg.from_model_ns) * clock_hz
//                              * (1e9 + seg.ppb) / 1e18)
//
// with seg the last segment whose from_model_ns <= m. A checker that reads
// the segments from the truth file computes the same ticks, and inverts
// them to host time (see TruthJson()).
#ifndef HMBTRACE_MOCK_FWSIM_FW_CLOCK_H_
#define HMBTRACE_MOCK_FWSIM_FW_CLOCK_H_

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "status.h"

namespace hmbtrace {

// The tick at the simulator's start when none is given: far from 0 and from
// any round number, so that a converter that forgets the offset is caught.
constexpr uint64_t kDefaultStartTick = 51921730425917;

struct ClockModelConfig {
  uint64_t clock_hz = 1000000000;
  uint64_t start_tick = kDefaultStartTick;
  double drift_ppm = 0;
  // Model seconds after the start at which the rate steps to
  // drift_ppm_after; none: the rate never changes.
  std::optional<double> drift_change_at_s;
  double drift_ppm_after = 0;
  uint32_t time_scale = 1;
};

// Limits: |drift| <= kMaxDriftPpm, time_scale 1..kMaxTimeScale, clock_hz
// 1..kMaxClockHz (so that the arithmetic above cannot overflow in 128 bits
// for model times up to years).
constexpr double kMaxDriftPpm = 100000;
constexpr uint32_t kMaxTimeScale = 1000;
constexpr uint64_t kMaxClockHz = 100000000000;

// An error naming the option that is out of range, or OK.
Status CheckClockModel(const ClockModelConfig& config);

class FirmwareClock {
 public:
  struct Segment {
    uint64_t from_model_ns;
    uint64_t tick;  // the tick at from_model_ns
    int64_t ppb;    // rate: clock_hz * (1 + ppb / 1e9) ticks per model s
  };

  // The clock as configured, started at CLOCK_MONOTONIC |start_mono_ns|.
  // |config| must pass CheckClockModel().
  FirmwareClock(const ClockModelConfig& config, uint64_t start_mono_ns);

  // The tick at CLOCK_MONOTONIC |mono_ns|; start_tick before the start.
  // The one function every fw_ts and every sync answer comes from.
  uint64_t TickAt(uint64_t mono_ns) const;
  // TickAt(CLOCK_MONOTONIC now).
  uint64_t Now() const;
  // Model time at CLOCK_MONOTONIC |mono_ns| (0 before the start), and the
  // tick at model time |model_ns|: TickAt(m) == TickAtModel(ModelNsAt(m)).
  uint64_t ModelNsAt(uint64_t mono_ns) const;
  uint64_t TickAtModel(uint64_t model_ns) const;
  // The first CLOCK_MONOTONIC at which model time has reached |model_ns|.
  uint64_t MonotonicAtModel(uint64_t model_ns) const;

  uint64_t clock_hz() const { return clock_hz_; }
  uint64_t start_mono_ns() const { return start_mono_ns_; }
  const std::vector<Segment>& segments() const { return segments_; }

  // The model for the truth file: clock_hz, start_tick, start_monotonic_ns,
  // time_scale, segments (from_model_ns, tick, ppb, ppm), and
  // epoch_monotonic_ns: CLOCK_MONOTONIC when the tick would have been 0 at
  // the nominal rate (signed; exact only with no drift and time_scale 1).
  nlohmann::json TruthJson() const;

 private:
  uint64_t clock_hz_;
  uint64_t start_mono_ns_;
  uint32_t time_scale_;
  std::vector<Segment> segments_;  // from_model_ns ascending, first at 0
};

// CLOCK_MONOTONIC in ns.
uint64_t MonotonicNowNs();

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_FW_CLOCK_H_
