// SPDX-License-Identifier: GPL-2.0-only
#include "fw_clock.h"

#include <time.h>

#include <cmath>
#include <limits>
#include <string>

namespace hmbtrace {

namespace {

constexpr uint64_t kNsPerSec = 1000000000;

std::string Num(double v) {
  nlohmann::json j = v;
  return j.dump();
}

int64_t PpmToPpb(double ppm) {
  return static_cast<int64_t>(std::llround(ppm * 1000));
}

// Ticks in |model_ns| at clock_hz * (1e9 + ppb) / 1e9; saturates.
uint64_t TicksIn(uint64_t model_ns, uint64_t clock_hz, int64_t ppb) {
  using u128 = unsigned __int128;
  const u128 rate = static_cast<u128>(static_cast<int64_t>(kNsPerSec) + ppb);
  u128 p;
  if (__builtin_mul_overflow(static_cast<u128>(model_ns), clock_hz, &p) ||
      __builtin_mul_overflow(p, rate, &p))
    return std::numeric_limits<uint64_t>::max();
  const u128 ticks = p / (static_cast<u128>(kNsPerSec) * kNsPerSec);
  return ticks > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                      : static_cast<uint64_t>(ticks);
}

uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

}  // namespace

uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

Status CheckClockModel(const ClockModelConfig& c) {
  if (c.clock_hz == 0 || c.clock_hz > kMaxClockHz)
    return Status::Error("--clock-hz " + std::to_string(c.clock_hz) + " is out of range: 1.." +
                         std::to_string(kMaxClockHz));
  for (double ppm : {c.drift_ppm, c.drift_ppm_after})
    if (!(std::fabs(ppm) <= kMaxDriftPpm))
      return Status::Error("drift " + Num(ppm) + " ppm is out of range: -" + Num(kMaxDriftPpm) +
                           ".." + Num(kMaxDriftPpm));
  if (c.drift_change_at_s && !(*c.drift_change_at_s >= 0 && *c.drift_change_at_s < 1e8))
    return Status::Error("--drift-change-at " + Num(*c.drift_change_at_s) +
                         " is not a time in seconds from the start");
  if (c.time_scale < 1 || c.time_scale > kMaxTimeScale)
    return Status::Error("--time-scale " + std::to_string(c.time_scale) + " is out of range: 1.." +
                         std::to_string(kMaxTimeScale));
  return {};
}

FirmwareClock::FirmwareClock(const ClockModelConfig& config, uint64_t start_mono_ns)
    : clock_hz_(config.clock_hz), start_mono_ns_(start_mono_ns), time_scale_(config.time_scale) {
  segments_.push_back({0, config.start_tick, PpmToPpb(config.drift_ppm)});
  if (config.drift_change_at_s) {
    const auto at = static_cast<uint64_t>(std::llround(*config.drift_change_at_s * 1e9));
    const Segment& first = segments_.front();
    segments_.push_back({at, SatAdd(first.tick, TicksIn(at, clock_hz_, first.ppb)),
                         PpmToPpb(config.drift_ppm_after)});
  }
}

uint64_t FirmwareClock::ModelNsAt(uint64_t mono_ns) const {
  const uint64_t real = mono_ns > start_mono_ns_ ? mono_ns - start_mono_ns_ : 0;
  return real > std::numeric_limits<uint64_t>::max() / time_scale_
             ? std::numeric_limits<uint64_t>::max()
             : real * time_scale_;
}

uint64_t FirmwareClock::MonotonicAtModel(uint64_t model_ns) const {
  const uint64_t real = model_ns / time_scale_ + (model_ns % time_scale_ != 0);
  return SatAdd(start_mono_ns_, real);
}

uint64_t FirmwareClock::TickAt(uint64_t mono_ns) const {
  return TickAtModel(ModelNsAt(mono_ns));
}

uint64_t FirmwareClock::TickAtModel(uint64_t m) const {
  const Segment* seg = &segments_.front();
  for (const Segment& s : segments_)
    if (s.from_model_ns <= m)
      seg = &s;
  return SatAdd(seg->tick, TicksIn(m - seg->from_model_ns, clock_hz_, seg->ppb));
}

uint64_t FirmwareClock::Now() const {
  return TickAt(MonotonicNowNs());
}

nlohmann::json FirmwareClock::TruthJson() const {
  nlohmann::json segs = nlohmann::json::array();
  for (const Segment& s : segments_)
    segs.push_back({{"from_model_ns", s.from_model_ns},
                    {"tick", s.tick},
                    {"ppb", s.ppb},
                    {"ppm", static_cast<double>(s.ppb) / 1000}});
  const uint64_t start_tick = segments_.front().tick;
  const auto start_tick_ns =
      static_cast<int64_t>(static_cast<unsigned __int128>(start_tick) * kNsPerSec / clock_hz_);
  return {
      {"hz", clock_hz_},
      {"epoch_monotonic_ns", static_cast<int64_t>(start_mono_ns_) - start_tick_ns},
      {"start_tick", start_tick},
      {"start_monotonic_ns", start_mono_ns_},
      {"time_scale", time_scale_},
      {"segments", segs},
  };
}

}  // namespace hmbtrace
