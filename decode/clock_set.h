// SPDX-License-Identifier: GPL-2.0-only
//
// Firmware time on the host clock: which clock fit converts a record, and
// how a converted time reads. The one policy of hmbtrace for it
// (Documentation/design.rst, decisions 7 and 9), used by hmbtrace-cmd
// (report, stat, export, stream) and, through decode_c.h, by plugin_hmb.so,
// so that trace-cmd report and the tool print the same fw_time for the
// same record.
//
// The module publishes every fit of a firmware clock in-band, as hmb_clock
// events: per (dev, producer_gen), on every CPU that carries the area's
// records, about 10 times a second and before the first record after a
// quiet spell, one per host trace clock it fits to (hmb_clock.clock:
// HMB_TRACE_CLOCK_LIST of hmb_trace_events_abi.h; "local" when the event
// has no such field, a module before it); the arithmetic is
// clock/hmb_clock_fit.h, the module's own.
//
// The clock. A set converts to one trace clock, the capture's
// (SetTraceClock(): trace.dat names it; "local", ftrace's default, when
// not told): fits of other clocks are counted and skipped. A capture on a
// clock the module does not fit ("counter", "uptime", "x86-tsc") or whose
// fits are all for another clock (a module before per-clock fits, on a
// capture made with trace-cmd record -C mono) has no converted time, and
// ClockProblem() says why and what to do: converting with another clock's
// fit would place every firmware record wrongly (e.g. seconds away from
// the host events it belongs with).
//
// The rule. A record of `dev` whose generation is `gen` (the dictionary
// set's rule, dictionary_set.h: the last hmb_state of the dev on the
// record's CPU) converts with the latest fit of (dev, gen) seen so far in
// stream order. A stale fit (the device stopped answering sync requests:
// its last good fit, re-published) is still used, and the result says so;
// its bound grows with the distance from its window like any fit's. A
// record with no fit of its (dev, gen) yet is not converted, and the result
// says why. Nothing looks ahead: the plugin and hmbtrace-cmd, which reads a
// capture twice, convert a record the same way.
//
// Fits are untrusted (a file, or the kernel's copy of device data): one
// whose numbers could overflow the conversion is refused, with a message,
// and the previous fit of its (dev, gen) stays in use; a conversion that
// would leave the range [0, 2^62] ns is "out of range". At most
// kMaxDevices devs and kMaxClockGenerations generations per dev are kept
// (the oldest generation of a dev is forgotten first, counted).

#ifndef HMBTRACE_DECODE_CLOCK_SET_H_
#define HMBTRACE_DECODE_CLOCK_SET_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hmb_clock_fit.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace {

inline constexpr size_t kMaxClockGenerations = 16;  // per dev
inline constexpr uint8_t kClockStale = HMB_CLOCK_FL_STALE;

// One hmb_clock event.
struct ClockFit {
  uint16_t dev = 0;
  uint32_t producer_gen = 0;
  uint8_t flags = 0;
  struct hmb_clock_fit fit {};
  uint8_t clock = HMB_TRACE_CLOCK_LOCAL;  // hmb_clock.clock
  bool stale() const { return flags & kClockStale; }
};

// The name of a trace clock id ("local", ...), "clock N" if unknown.
std::string TraceClockName(uint8_t clock);
// The id of a trace clock name; nullopt for one the module does not fit.
std::optional<uint8_t> TraceClockId(std::string_view name);

// Why a record has no converted time.
enum class ClockMiss : uint8_t {
  kNone,               // converted
  kNoGeneration,       // the record's producer generation is not known
  kNoFit,              // no fit of its dev yet
  kNoFitOfGeneration,  // fits of its dev, none of its generation yet
  kOutOfRange,         // too far from the fit to convert
  kOtherClock,         // fits, none for the capture's trace clock
  kCount,
};
// "producer_gen unknown", "no clock fit", ...: what fw_time=? says.
std::string_view ClockMissName(ClockMiss miss);

// A record's firmware time on the host clock.
struct FwTime {
  ClockMiss miss = ClockMiss::kNoFit;
  uint32_t producer_gen = 0;  // of the record, when known
  uint64_t host_ns = 0;       // converted: host trace-clock ns
  uint64_t bound_ns = 0;      // converted: |error| <= bound_ns
  bool stale = false;         // converted with a stale fit
  bool converted() const { return miss == ClockMiss::kNone; }
};

class ClockSet {
 public:
  // The trace clock of the capture's timestamps ("" is ftrace's default,
  // "local"), before any Add(). Returns "" if the module fits firmware
  // time to it, else why not and what to do.
  std::string SetTraceClock(std::string_view name);
  const std::string& trace_clock() const { return trace_clock_; }
  // Fits are used only if their clock is this one.
  bool Wants(const ClockFit& f) const { return clock_ && f.clock == *clock_; }
  // "" if the set converts (or has seen no fit at all); else why records
  // are not converted and what to do: the capture's clock is not one the
  // module fits, or every fit seen is for another clock.
  std::string ClockProblem() const;
  // Fits skipped for being of another trace clock.
  uint64_t other_clock_fits() const { return other_clock_fits_; }

  // Feeds one hmb_clock event. Returns "" if the fit is now the one of its
  // (dev, producer_gen) or is skipped for being of another clock (Wants()),
  // else why it was refused.
  std::string Add(const ClockFit& f);
  // Feeds the clock rate an hmb_state states for (dev, producer_gen): the
  // nominal rate the fit's ppm is printed against.
  void AddState(uint16_t dev, uint32_t producer_gen, uint64_t clock_hz);

  // The record of `dev`, generation `gen` (0: unknown), stamped fw_ts.
  FwTime Convert(uint16_t dev, uint32_t gen, uint64_t fw_ts) const;
  // What Convert() looks up for (dev, gen), found once for the many records
  // of a stream: valid until the set changes (SetTraceClock(), Add(),
  // AddState()).
  struct Conversion {
    ClockMiss miss = ClockMiss::kNoFit;  // kNone: fit converts
    uint32_t producer_gen = 0;
    const ClockFit* fit = nullptr;
  };
  Conversion Prepare(uint16_t dev, uint32_t gen) const;
  // Convert() of a prepared (dev, gen), written to *t: in place, for a
  // caller that keeps the result (no copy of it on the hot path).
  static void Convert(const Conversion& c, uint64_t fw_ts, FwTime* t);
  // The latest fit of (dev, gen), or nullptr.
  const ClockFit* Find(uint16_t dev, uint32_t gen) const;
  // The clock_hz of (dev, gen)'s hmb_state, or 0.
  uint64_t ClockHz(uint16_t dev, uint32_t gen) const;

  uint64_t refused() const { return refused_; }
  // Generations forgotten to stay within kMaxClockGenerations per dev.
  uint64_t forgotten() const { return forgotten_; }

 private:
  struct Generation {
    bool have_fit = false;
    ClockFit fit;
    uint64_t clock_hz = 0;
  };
  struct Device {
    // In order of first appearance; at most kMaxClockGenerations.
    std::vector<std::pair<uint32_t, Generation>> gens;
    bool any_fit = false;
    Generation* Get(uint32_t gen);
    const Generation* Get(uint32_t gen) const;
  };
  // The entry of (dev, gen), made if needed; nullptr over kMaxDevices.
  Generation* Slot(uint16_t dev, uint32_t gen);

  std::map<uint16_t, Device> devices_;
  std::string trace_clock_ = "local";
  std::optional<uint8_t> clock_ = HMB_TRACE_CLOCK_LOCAL;
  uint64_t other_clock_fits_ = 0;
  uint32_t other_clocks_ = 0;  // bit per clock id (< 32) of skipped fits
  bool any_fit_ = false;       // of the wanted clock
  uint64_t refused_ = 0;
  uint64_t forgotten_ = 0;
};

// Why a fit cannot be used, or "" (its numbers keep the conversion inside
// 64 bits for ticks within 2^62 ns of it).
std::string ClockFitProblem(const struct hmb_clock_fit& fit);

// A bound, rounded up: "850ns", "45us", "1.250ms", "2.000s".
std::string BoundText(uint64_t ns);
void AppendBoundText(std::string* out, uint64_t ns);

// What follows a record's decoded text: "fw_time=1234.567890123 ±45us",
// "... ±45us (stale fit)", "fw_time=? (no clock fit)". Seconds on the
// capture's trace clock, like trace-cmd's own timestamps.
std::string FwTimeText(const FwTime& t);
// The same, appended (no string per record: a reader's hot path).
void AppendFwTimeText(std::string* out, const FwTime& t);

// A record of a retimed capture (hmbtrace-cmd retime; the mark of
// hmb_events.h): its ftrace timestamp `ts` is already its converted time,
// or still its drain time when it was not converted. Not converted again.
FwTime RetimedFwTime(uint64_t ts, uint8_t retime_flags, uint8_t retime_miss, uint32_t bound_ns);

// What follows a retimed record's text instead of FwTimeText(): "retimed
// ±45us drain=+234us" (" (stale fit)" at the end when converted with a
// stale fit), or "fw_time=? (no clock fit), at its drain time". The drain
// delay is how long after its converted time the module drained it.
std::string RetimedTimeText(const FwTime& t, uint64_t ts, uint64_t drain_ts);
void AppendRetimedTimeText(std::string* out, const FwTime& t, uint64_t ts, uint64_t drain_ts);

// An hmb_clock event, readable: "dev=0 producer_gen=1 offset=-12.345678901
// ns_per_tick=1.000012000 rate=-12.000ppm bound=1.2us slope_err=0.500ppm
// samples=16 window=1.500s rtt_min=3.4us" (rate: how far the firmware clock
// runs from the clock_hz its hmb_state states, when known; offset: the host
// time of tick 0; bound: inside the window; " stale" at the end).
std::string ClockFitText(const ClockFit& f, uint64_t clock_hz);

}  // namespace hmbtrace

#endif  // HMBTRACE_DECODE_CLOCK_SET_H_
