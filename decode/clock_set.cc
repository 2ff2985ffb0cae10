// SPDX-License-Identifier: GPL-2.0-only
#include "clock_set.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "dictionary_set.h"  // kMaxDevices
#include "hmb_events.h"       // HMB_RETIME_*

namespace hmbtrace {
namespace {

using u128 = unsigned __int128;

// Fits past these are refused: with host_ref <= 2^62 and a conversion's
// distance term <= 2^61 ns, clk_line()'s signed sum stays inside int64_t.
constexpr uint64_t kMaxHostRef = 1ull << 62;
constexpr uint64_t kMaxTerm = 1ull << 61;
// 65536 host ns per tick: a 15 kHz clock, slower than any firmware timer.
constexpr uint64_t kMaxMult = 1ull << 48;

uint64_t MulShr32(uint64_t a, uint64_t b) {
  const u128 q = (static_cast<u128>(a) * b) >> 32;
  return q > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(q);
}

// hmb_clock_to_host() for a fit that passed ClockFitProblem(), with the
// distance terms checked first (the library's arithmetic assumes they fit).
bool ToHost(const struct hmb_clock_fit& f, uint64_t tick, uint64_t* host, uint64_t* bound) {
  const uint64_t dist_ref = tick >= f.tick_ref ? tick - f.tick_ref : f.tick_ref - tick;
  const uint64_t term = MulShr32(dist_ref, f.mult);
  if (term > kMaxTerm || (tick < f.tick_ref && term > f.host_ref))
    return false;  // past 2^61 ns from the fit, or before host time 0
  uint64_t dist_win = f.half_gap;
  if (tick < f.tick_first)
    dist_win = f.tick_first - tick;
  else if (tick > f.tick_last)
    dist_win = tick - f.tick_last;
  // The library adds 1 to this term and would wrap at saturation.
  if (MulShr32(dist_win, f.slope_err) > kMaxTerm)
    return false;
  *host = hmb_clock_to_host(&f, tick, bound);
  return true;
}

// Decimal digits of `v`, appended (the hot path of report: no snprintf).
void AppendUnsigned(std::string* out, uint64_t v) {
  char buf[24];
  const char* end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  out->append(buf, static_cast<size_t>(end - buf));
}

// `v` < 10^digits, zero-padded to `digits` places (digits <= 20).
void AppendPadded(std::string* out, uint64_t v, int digits) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char buf[24];
  int i = digits;
  for (; i >= 2; i -= 2) {
    std::memcpy(buf + i - 2, kPairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (i)
    buf[0] = static_cast<char>('0' + v % 10);
  out->append(buf, static_cast<size_t>(digits));
}

// "%llu.%09llu" of ns / 10^9 and ns % 10^9.
void AppendSeconds(std::string* out, uint64_t ns) {
  AppendUnsigned(out, ns / 1000000000u);
  *out += '.';
  AppendPadded(out, ns % 1000000000u, 9);
}

std::string Seconds(uint64_t ns) {
  std::string out;
  AppendSeconds(&out, ns);
  return out;
}

}  // namespace

std::string_view ClockMissName(ClockMiss miss) {
  switch (miss) {
    case ClockMiss::kNone:
      return "converted";
    case ClockMiss::kNoGeneration:
      return "producer_gen unknown";
    case ClockMiss::kNoFit:
      return "no clock fit";
    case ClockMiss::kNoFitOfGeneration:
      return "no clock fit of its producer_gen";
    case ClockMiss::kOutOfRange:
      return "outside the clock fit's range";
    case ClockMiss::kOtherClock:
      return "no clock fit for the capture's trace clock";
    case ClockMiss::kCount:
      break;
  }
  return "?";
}

std::string TraceClockName(uint8_t clock) {
  static constexpr const char* kNames[] = {HMB_ABI_NAMES(HMB_TRACE_CLOCK_LIST)};
  if (clock < HMB_TRACE_CLOCK_NR)
    return kNames[clock];
  return "clock " + std::to_string(clock);
}

std::optional<uint8_t> TraceClockId(std::string_view name) {
  for (uint8_t id = 0; id < HMB_TRACE_CLOCK_NR; id++)
    if (name == TraceClockName(id))
      return id;
  return std::nullopt;
}

namespace {

// "local, global, ..., perf": the clocks the module fits.
std::string FittedClocks() {
  std::string out;
  for (uint8_t id = 0; id < HMB_TRACE_CLOCK_NR; id++)
    out += (id ? ", " : "") + TraceClockName(id);
  return out;
}

// Why a capture on `clock` has no converted time, and what to do.
std::string UnfittedClockText(const std::string& clock) {
  return "the capture's trace clock \"" + clock +
         "\" is not one hmb_trace fits firmware time to (" + FittedClocks() +
         "): firmware times are not converted; record again on one of them, e.g. "
         "trace-cmd record -C mono (for the top buffer and after -B hmb), or hmbtrace-cmd "
         "record --clock mono";
}

}  // namespace

std::string ClockSet::SetTraceClock(std::string_view name) {
  trace_clock_ = name.empty() ? "local" : std::string(name);
  clock_ = TraceClockId(trace_clock_);
  return clock_ ? std::string{} : UnfittedClockText(trace_clock_);
}

std::string ClockSet::ClockProblem() const {
  if (!clock_)
    return UnfittedClockText(trace_clock_);
  if (any_fit_ || other_clock_fits_ == 0)
    return {};
  std::string others, first;
  for (uint8_t id = 0; id < 32; id++)
    if (other_clocks_ & (1u << id)) {
      others += (others.empty() ? "" : ", ") + TraceClockName(id);
      if (first.empty())
        first = TraceClockName(id);
    }
  return "the capture's trace clock is \"" + trace_clock_ + "\" but its " +
         std::to_string(other_clock_fits_) + " clock fits (hmb_clock) are for " + others +
         (other_clocks_ == 1u << HMB_TRACE_CLOCK_LOCAL
              ? " only (an hmb_trace that fits no other clock)"
              : "") +
         ": firmware times are not converted, a fit for another clock would misplace them; "
         "record again with an hmb_trace that fits \"" + trace_clock_ +
         "\", or on trace clock " + first + " (trace-cmd record -C " + first +
         " for the top buffer and after -B hmb)";
}

std::string ClockFitProblem(const struct hmb_clock_fit& f) {
  if (f.samples < 2)
    return "fewer than 2 samples";
  if (f.mult == 0 || f.mult > kMaxMult)
    return "mult " + std::to_string(f.mult) + " out of range";
  if (f.host_ref > kMaxHostRef)
    return "host_ref " + std::to_string(f.host_ref) + " out of range";
  if (f.tick_first > f.tick_last || f.tick_ref < f.tick_first || f.tick_ref > f.tick_last)
    return "tick_ref outside the window [tick_first, tick_last]";
  return {};
}

ClockSet::Generation* ClockSet::Device::Get(uint32_t gen) {
  for (auto& [g, e] : gens)
    if (g == gen)
      return &e;
  return nullptr;
}

const ClockSet::Generation* ClockSet::Device::Get(uint32_t gen) const {
  for (const auto& [g, e] : gens)
    if (g == gen)
      return &e;
  return nullptr;
}

ClockSet::Generation* ClockSet::Slot(uint16_t dev, uint32_t gen) {
  auto it = devices_.find(dev);
  if (it == devices_.end()) {
    if (devices_.size() >= kMaxDevices)
      return nullptr;
    it = devices_.emplace(dev, Device{}).first;
  }
  Device& d = it->second;
  if (Generation* g = d.Get(gen))
    return g;
  if (d.gens.size() >= kMaxClockGenerations) {
    d.gens.erase(d.gens.begin());
    forgotten_++;
  }
  d.gens.emplace_back(gen, Generation{});
  return &d.gens.back().second;
}

std::string ClockSet::Add(const ClockFit& f) {
  if (!Wants(f)) {
    other_clock_fits_++;
    if (f.clock < 32)
      other_clocks_ |= 1u << f.clock;
    return {};
  }
  std::string problem = ClockFitProblem(f.fit);
  Generation* g = problem.empty() ? Slot(f.dev, f.producer_gen) : nullptr;
  if (problem.empty() && !g)
    problem = "more than " + std::to_string(kMaxDevices) + " devs";
  if (!problem.empty()) {
    refused_++;
    return "dev " + std::to_string(f.dev) + " producer_gen " + std::to_string(f.producer_gen) +
           ": clock fit refused: " + problem;
  }
  g->have_fit = true;
  g->fit = f;
  devices_[f.dev].any_fit = true;
  any_fit_ = true;
  return {};
}

void ClockSet::AddState(uint16_t dev, uint32_t producer_gen, uint64_t clock_hz) {
  if (producer_gen == 0 || clock_hz == 0)
    return;  // names no generation, or no rate to note
  if (Generation* g = Slot(dev, producer_gen))
    g->clock_hz = clock_hz;
}

const ClockFit* ClockSet::Find(uint16_t dev, uint32_t gen) const {
  auto it = devices_.find(dev);
  if (it == devices_.end())
    return nullptr;
  const Generation* g = it->second.Get(gen);
  return g && g->have_fit ? &g->fit : nullptr;
}

uint64_t ClockSet::ClockHz(uint16_t dev, uint32_t gen) const {
  auto it = devices_.find(dev);
  const Generation* g = it == devices_.end() ? nullptr : it->second.Get(gen);
  return g ? g->clock_hz : 0;
}

ClockSet::Conversion ClockSet::Prepare(uint16_t dev, uint32_t gen) const {
  Conversion c;
  c.producer_gen = gen;
  auto it = devices_.find(dev);
  if (!clock_ || (!any_fit_ && other_clock_fits_))
    c.miss = ClockMiss::kOtherClock;
  else if (it == devices_.end() || !it->second.any_fit)
    c.miss = ClockMiss::kNoFit;
  else if (gen == 0)
    c.miss = ClockMiss::kNoGeneration;
  else if (const Generation* g = it->second.Get(gen); !g || !g->have_fit)
    c.miss = ClockMiss::kNoFitOfGeneration;
  else {
    c.fit = &g->fit;
    c.miss = ClockMiss::kNone;
  }
  return c;
}

void ClockSet::Convert(const Conversion& c, uint64_t fw_ts, FwTime* t) {
  *t = FwTime{};
  t->producer_gen = c.producer_gen;
  t->miss = c.miss;
  if (c.miss != ClockMiss::kNone)
    return;
  if (!ToHost(c.fit->fit, fw_ts, &t->host_ns, &t->bound_ns)) {
    t->miss = ClockMiss::kOutOfRange;
    return;
  }
  t->stale = c.fit->stale();
}

FwTime ClockSet::Convert(uint16_t dev, uint32_t gen, uint64_t fw_ts) const {
  FwTime t;
  Convert(Prepare(dev, gen), fw_ts, &t);
  return t;
}

void AppendBoundText(std::string* out, uint64_t ns) {
  if (ns < 1000) {
    AppendUnsigned(out, ns);
    *out += "ns";
    return;
  }
  const uint64_t us = ns / 1000 + (ns % 1000 != 0);  // a bound rounds up
  if (us < 1000) {
    AppendUnsigned(out, us);
    *out += "us";
  } else if (us < 1000000) {
    AppendUnsigned(out, us / 1000);
    *out += '.';
    AppendPadded(out, us % 1000, 3);
    *out += "ms";
  } else {
    const uint64_t ms = ns / 1000000 + (ns % 1000000 != 0);
    AppendUnsigned(out, ms / 1000);
    *out += '.';
    AppendPadded(out, ms % 1000, 3);
    *out += 's';
  }
}

std::string BoundText(uint64_t ns) {
  std::string out;
  AppendBoundText(&out, ns);
  return out;
}

void AppendFwTimeText(std::string* out, const FwTime& t) {
  if (t.converted()) {
    *out += "fw_time=";
    AppendSeconds(out, t.host_ns);
    *out += " \u00b1";
    AppendBoundText(out, t.bound_ns);
    if (t.stale)
      *out += " (stale fit)";
    return;
  }
  if (t.miss == ClockMiss::kNoFitOfGeneration) {
    *out += "fw_time=? (no clock fit of producer_gen ";
    AppendUnsigned(out, t.producer_gen);
    *out += ')';
    return;
  }
  *out += "fw_time=? (";
  *out += ClockMissName(t.miss);
  *out += ')';
}

std::string FwTimeText(const FwTime& t) {
  std::string out;
  AppendFwTimeText(&out, t);
  return out;
}

FwTime RetimedFwTime(uint64_t ts, uint8_t retime_flags, uint8_t retime_miss, uint32_t bound_ns) {
  FwTime t;
  if (retime_flags & HMB_RETIME_CONVERTED) {
    t.miss = ClockMiss::kNone;
    t.host_ns = ts;
    t.bound_ns = bound_ns;
    t.stale = retime_flags & HMB_RETIME_STALE;
  } else {
    // A miss from the file: one this build does not know reads as "?".
    t.miss = retime_miss < static_cast<uint8_t>(ClockMiss::kCount) && retime_miss != 0
                 ? static_cast<ClockMiss>(retime_miss)
                 : ClockMiss::kCount;
  }
  return t;
}

void AppendRetimedTimeText(std::string* out, const FwTime& t, uint64_t ts, uint64_t drain_ts) {
  if (!t.converted()) {
    *out += "fw_time=? (";
    *out += ClockMissName(t.miss);
    *out += "), at its drain time";
    return;
  }
  *out += "retimed \u00b1";
  AppendBoundText(out, t.bound_ns);
  *out += " drain=";
  *out += drain_ts >= ts ? '+' : '-';
  AppendBoundText(out, drain_ts >= ts ? drain_ts - ts : ts - drain_ts);
  if (t.stale)
    *out += " (stale fit)";
}

std::string RetimedTimeText(const FwTime& t, uint64_t ts, uint64_t drain_ts) {
  std::string out;
  AppendRetimedTimeText(&out, t, ts, drain_ts);
  return out;
}

std::string ClockFitText(const ClockFit& f, uint64_t clock_hz) {
  const struct hmb_clock_fit& c = f.fit;
  std::string out =
      "dev=" + std::to_string(f.dev) + " producer_gen=" + std::to_string(f.producer_gen);
  if (f.clock != HMB_TRACE_CLOCK_LOCAL)  // as before per-clock fits, for "local"
    out += " clock=" + TraceClockName(f.clock);
  const std::string problem = ClockFitProblem(c);
  if (!problem.empty()) {
    // Not a fit to describe: the numbers as they came.
    return out + " tick_ref=" + std::to_string(c.tick_ref) +
           " host_ref=" + std::to_string(c.host_ref) + " mult=" + std::to_string(c.mult) +
           " samples=" + std::to_string(c.samples) + (f.stale() ? " stale" : "");
  }
  char buf[96];
  // offset: host time of tick 0 (signed; the firmware may predate the host clock).
  const u128 at_ref = (static_cast<u128>(c.tick_ref) * c.mult) >> 32;
  if (at_ref <= c.host_ref) {
    out += " offset=" + Seconds(c.host_ref - static_cast<uint64_t>(at_ref));
  } else if (at_ref - c.host_ref <= UINT64_MAX) {
    out += " offset=-" + Seconds(static_cast<uint64_t>(at_ref - c.host_ref));
  } else {
    out += " offset=?";
  }
  const long double ns_per_tick = static_cast<long double>(c.mult) / 4294967296.0L;
  std::snprintf(buf, sizeof(buf), " ns_per_tick=%.9Lf", ns_per_tick);
  out += buf;
  if (const uint64_t nominal = hmb_clock_nominal_mult(clock_hz)) {
    // How fast the firmware clock runs against its stated rate.
    const long double ppm =
        (static_cast<long double>(nominal) / static_cast<long double>(c.mult) - 1) * 1e6L;
    std::snprintf(buf, sizeof(buf), " rate=%+.3Lfppm", ppm);
    out += buf;
  }
  uint64_t host = 0, bound = 0;
  // Inside the window the bound is err_ns + slope_err x half_gap.
  if (ToHost(c, c.tick_first, &host, &bound))
    out += " bound=" + BoundText(bound);
  else
    out += " bound=?";
  std::snprintf(buf, sizeof(buf), " slope_err=%.3Lfppm",
                static_cast<long double>(c.slope_err) / static_cast<long double>(c.mult) * 1e6L);
  out += buf;
  out += " samples=" + std::to_string(c.samples);
  std::snprintf(buf, sizeof(buf), " window=%.3Lfs",
                static_cast<long double>(MulShr32(c.tick_last - c.tick_first, c.mult)) / 1e9L);
  out += buf;
  out += " rtt_min=" + BoundText(c.rtt_min_ns);
  if (f.stale())
    out += " stale";
  return out;
}

}  // namespace hmbtrace
