// SPDX-License-Identifier: GPL-2.0-only
//
// Which clock fit converts a record, and what its converted time reads as:
// the text a user sees after each record in trace-cmd report (the plugin,
// through the C interface) and hmbtrace-cmd, which must agree.

#include "clock_set.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "decode_c.h"
#include "dictionary_set.h"  // kMaxDevices

namespace hmbtrace {
namespace {

constexpr uint64_t kOneNsPerTick = 1ull << 32;

// 1 ns per tick; fw tick 1 s is host 5 s; samples over fw [0.5 s, 1.5 s],
// 100 ms apart; 2 us at the samples, 1 ppm of slope doubt.
ClockFit Fit(uint16_t dev, uint32_t gen, uint64_t host_ref = 5000000000u, uint8_t flags = 0) {
  ClockFit f;
  f.dev = dev;
  f.producer_gen = gen;
  f.flags = flags;
  f.fit.tick_ref = 1000000000u;
  f.fit.host_ref = host_ref;
  f.fit.mult = kOneNsPerTick;
  f.fit.slope_err = 4295;  // 1 ppm of 2^32
  f.fit.tick_first = 500000000u;
  f.fit.tick_last = 1500000000u;
  f.fit.half_gap = 50000000u;
  f.fit.err_ns = 2000;
  f.fit.rtt_min_ns = 3000;
  f.fit.samples = 11;
  return f;
}

std::string Text(const ClockSet& set, uint16_t dev, uint32_t gen, uint64_t fw_ts) {
  return FwTimeText(set.Convert(dev, gen, fw_ts));
}

TEST(ClockSet, ARecordBeforeAnyFitIsNotConvertedAndSaysWhy) {
  ClockSet set;
  EXPECT_EQ(Text(set, 0, 1, 1200000000u), "fw_time=? (no clock fit)");
  EXPECT_FALSE(set.Convert(0, 1, 1200000000u).converted());
}

TEST(ClockSet, ARecordInsideTheWindowConvertsWithTheSamplesBound) {
  ClockSet set;
  ASSERT_EQ(set.Add(Fit(0, 1)), "");
  const FwTime t = set.Convert(0, 1, 1200000000u);
  ASSERT_TRUE(t.converted());
  EXPECT_EQ(t.host_ns, 5200000000u);
  // err_ns + 1 ppm x half_gap (50 ms) = 2000 + 50 ns, and the library's 1.
  EXPECT_EQ(t.bound_ns, 2051u);
  EXPECT_EQ(FwTimeText(t), "fw_time=5.200000000 \u00b13us");
}

TEST(ClockSet, TheBoundGrowsWithTheDistanceFromTheWindow) {
  ClockSet set;
  set.Add(Fit(0, 1));
  // 1 s after the window: 1 ppm of it is 1 us more.
  const FwTime t = set.Convert(0, 1, 2500000000u);
  ASSERT_TRUE(t.converted());
  EXPECT_EQ(t.host_ns, 6500000000u);
  EXPECT_EQ(t.bound_ns, 3001u);
  EXPECT_GT(t.bound_ns, set.Convert(0, 1, 1200000000u).bound_ns);
}

TEST(ClockSet, AStaleFitIsStillUsedAndSaysSo) {
  ClockSet set;
  set.Add(Fit(0, 1, 5000000000u, kClockStale));
  EXPECT_EQ(Text(set, 0, 1, 1200000000u), "fw_time=5.200000000 \u00b13us (stale fit)");
}

TEST(ClockSet, TheLatestFitOfTheGenerationConverts) {
  ClockSet set;
  set.Add(Fit(0, 1, 5000000000u));
  set.Add(Fit(0, 1, 5000001000u));
  EXPECT_EQ(set.Convert(0, 1, 1000000000u).host_ns, 5000001000u);
}

TEST(ClockSet, AGenerationChangeSwitchesFits) {
  ClockSet set;
  set.Add(Fit(0, 1, 5000000000u));
  // A reset: generation 2's records wait for their own fit ...
  EXPECT_EQ(Text(set, 0, 2, 1000000000u), "fw_time=? (no clock fit of producer_gen 2)");
  // ... which has another offset (the firmware clock restarted).
  set.Add(Fit(0, 2, 9000000000u));
  EXPECT_EQ(set.Convert(0, 2, 1000000000u).host_ns, 9000000000u);
  // Generation 1's records keep theirs; another dev has none.
  EXPECT_EQ(set.Convert(0, 1, 1000000000u).host_ns, 5000000000u);
  EXPECT_EQ(Text(set, 1, 1, 1000000000u), "fw_time=? (no clock fit)");
  EXPECT_EQ(Text(set, 0, 0, 1000000000u), "fw_time=? (producer_gen unknown)");
}

TEST(ClockSet, HostileFitsAreRefusedAndThePreviousOneStays) {
  ClockSet set;
  set.Add(Fit(0, 1));
  ClockFit bad = Fit(0, 1, 1);
  bad.fit.mult = 0;
  EXPECT_EQ(set.Add(bad), "dev 0 producer_gen 1: clock fit refused: mult 0 out of range");
  bad = Fit(0, 1, UINT64_MAX);
  EXPECT_NE(set.Add(bad).find("host_ref 18446744073709551615 out of range"), std::string::npos);
  bad = Fit(0, 1);
  bad.fit.tick_ref = bad.fit.tick_last + 1;
  EXPECT_NE(set.Add(bad).find("tick_ref outside the window"), std::string::npos);
  bad = Fit(0, 1);
  bad.fit.samples = 1;
  EXPECT_NE(set.Add(bad).find("fewer than 2 samples"), std::string::npos);
  EXPECT_EQ(set.refused(), 4u);
  EXPECT_EQ(set.Convert(0, 1, 1200000000u).host_ns, 5200000000u);
}

TEST(ClockSet, ConversionsThatWouldOverflowAreOutOfRange) {
  ClockSet set;
  ClockFit f = Fit(0, 1);
  f.fit.mult = 1ull << 48;  // 65536 ns per tick, allowed
  set.Add(f);
  EXPECT_EQ(Text(set, 0, 1, UINT64_MAX), "fw_time=? (outside the clock fit's range)");
  // Before host time 0.
  EXPECT_EQ(Text(set, 0, 1, 0), "fw_time=? (outside the clock fit's range)");
  // A huge slope doubt makes the bound, not the time, overflow.
  f = Fit(0, 2);
  f.fit.slope_err = UINT64_MAX;
  set.Add(f);
  EXPECT_EQ(Text(set, 0, 2, 1ull << 62), "fw_time=? (outside the clock fit's range)");
  EXPECT_TRUE(set.Convert(0, 2, 1000000000u).converted());
}

TEST(ClockSet, MemoryIsBoundedByDevsAndGenerations) {
  ClockSet set;
  for (uint32_t gen = 1; gen <= kMaxClockGenerations + 4; gen++)
    EXPECT_EQ(set.Add(Fit(0, gen)), "");
  EXPECT_EQ(set.forgotten(), 4u);
  EXPECT_EQ(set.Find(0, 1), nullptr);  // the oldest went first
  EXPECT_NE(set.Find(0, kMaxClockGenerations + 4), nullptr);
  EXPECT_EQ(Text(set, 0, 1, 1000000000u), "fw_time=? (no clock fit of producer_gen 1)");
  for (uint16_t dev = 1; dev < kMaxDevices; dev++)
    EXPECT_EQ(set.Add(Fit(dev, 1)), "");
  EXPECT_EQ(set.Add(Fit(kMaxDevices, 1)),
            "dev 256 producer_gen 1: clock fit refused: more than 256 devs");
}

TEST(ClockSet, BoundsReadInTheRightUnitRoundedUp) {
  EXPECT_EQ(BoundText(850), "850ns");
  EXPECT_EQ(BoundText(1000), "1us");
  EXPECT_EQ(BoundText(44001), "45us");
  EXPECT_EQ(BoundText(999999), "1.000ms");
  EXPECT_EQ(BoundText(1250000), "1.250ms");
  EXPECT_EQ(BoundText(2000000001), "2.001s");
}

TEST(ClockSet, AFitReadsAsOffsetRateBoundAndSamples) {
  ClockFit f = Fit(0, 1);
  // The firmware clock runs 20 ppm fast: fewer host ns per tick.
  f.fit.mult = 4294881399u;
  EXPECT_EQ(ClockFitText(f, 1000000000u),
            "dev=0 producer_gen=1 offset=4.000020000 ns_per_tick=0.999980001 rate=+20.000ppm "
            "bound=3us slope_err=1.000ppm samples=11 window=1.000s rtt_min=3us");
  // Without a stated rate there is no ppm; a stale fit says so.
  f.flags = kClockStale;
  const std::string text = ClockFitText(f, 0);
  EXPECT_EQ(text.find("rate="), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 6), " stale");
}

TEST(ClockSet, TheCInterfaceGivesThePluginTheSameText) {
  hmb_clock_set* c = hmb_clock_set_alloc();
  ASSERT_NE(c, nullptr);
  ClockSet set;
  char out[128];
  EXPECT_EQ(hmb_clock_set_record_time(c, 0, 1, 1200000000u, out, sizeof(out)), 0);
  EXPECT_STREQ(out, "fw_time=? (no clock fit)");
  const ClockFit f = Fit(0, 1, 5000000000u, kClockStale);
  set.Add(f);
  set.AddState(0, 1, 1000000000u);
  hmb_clock_set_add_state(c, 0, 1, 1000000000u);
  char line[512];
  EXPECT_EQ(hmb_clock_set_add_fit(c, 0, 1, &f.fit, f.flags, f.clock, line, sizeof(line)),
            HMB_CLOCK_SET_USED);
  EXPECT_EQ(line, ClockFitText(f, 1000000000u));
  EXPECT_NE(std::string(line).find("rate=+0.000ppm"), std::string::npos) << line;
  for (uint64_t fw_ts : {0ull, 1200000000ull, 2500000000ull, ~0ull}) {
    const int converted = hmb_clock_set_record_time(c, 0, 1, fw_ts, out, sizeof(out));
    EXPECT_EQ(out, FwTimeText(set.Convert(0, 1, fw_ts))) << fw_ts;
    EXPECT_EQ(converted, set.Convert(0, 1, fw_ts).converted() ? 1 : 0);
  }
  ClockFit bad = f;
  bad.fit.mult = 0;
  EXPECT_EQ(hmb_clock_set_add_fit(c, 0, 1, &bad.fit, 0, bad.clock, line, sizeof(line)), HMB_CLOCK_SET_REFUSED);
  EXPECT_NE(
      std::string(line).find(" [dev 0 producer_gen 1: clock fit refused: mult 0 out of range]"),
      std::string::npos)
      << line;
  // Truncated like snprintf.
  EXPECT_EQ(hmb_clock_set_record_time(c, 0, 1, 1200000000u, out, 8), 1);
  EXPECT_STREQ(out, "fw_time");
  hmb_clock_set_free(c);
  EXPECT_EQ(hmb_clock_set_record_time(nullptr, 0, 1, 0, out, sizeof(out)), -1);
}

// The module publishes a fit per host trace clock (hmb_clock.clock): a set
// converts with the fits of the capture's clock only.
ClockFit FitOn(uint8_t clock, uint64_t host_ref) {
  ClockFit f = Fit(0, 1, host_ref);
  f.clock = clock;
  return f;
}

TEST(ClockSetTraceClock, ACaptureOnMonoConvertsWithTheMonoFitNotTheLocalOne) {
  ClockSet set;
  ASSERT_EQ(set.SetTraceClock("mono"), "");
  ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_LOCAL, 5000000000u)), "");
  ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_MONO, 7000000000u)), "");
  ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_BOOT, 9000000000u)), "");
  const FwTime t = set.Convert(0, 1, 1200000000u);
  ASSERT_TRUE(t.converted());
  EXPECT_EQ(t.host_ns, 7200000000u);
  EXPECT_EQ(set.other_clock_fits(), 2u);
  EXPECT_EQ(set.ClockProblem(), "");
  EXPECT_EQ(set.Find(0, 1)->clock, HMB_TRACE_CLOCK_MONO);
}

TEST(ClockSetTraceClock, WithoutATraceClockTheSetConvertsToLocalAsBefore) {
  // An old capture: no clock field, every fit is "local"; a file that names
  // no clock is on ftrace's default.
  ClockSet set;
  ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_MONO, 7000000000u)), "");
  ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_LOCAL, 5000000000u)), "");
  EXPECT_EQ(set.Convert(0, 1, 1200000000u).host_ns, 5200000000u);
  ClockSet unnamed;
  ASSERT_EQ(unnamed.SetTraceClock(""), "");
  EXPECT_EQ(unnamed.trace_clock(), "local");
}

TEST(ClockSetTraceClock, OnlyFitsOfAnotherClockAreRefusedWithTheReasonAndTheFix) {
  // trace-cmd record -C mono with a module that fits "local" only.
  ClockSet set;
  ASSERT_EQ(set.SetTraceClock("mono"), "");
  ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_LOCAL, 5000000000u)), "");
  const FwTime t = set.Convert(0, 1, 1200000000u);
  EXPECT_FALSE(t.converted());
  EXPECT_EQ(t.miss, ClockMiss::kOtherClock);
  EXPECT_EQ(FwTimeText(t), "fw_time=? (no clock fit for the capture's trace clock)");
  const std::string why = set.ClockProblem();
  EXPECT_NE(why.find("trace clock is \"mono\""), std::string::npos) << why;
  EXPECT_NE(why.find("are for local only"), std::string::npos) << why;
  EXPECT_NE(why.find("-C local"), std::string::npos) << why;
}

TEST(ClockSetTraceClock, AClockTheModuleDoesNotFitIsRefusedWithTheReasonAndTheFix) {
  for (const char* clock : {"counter", "x86-tsc", "uptime"}) {
    ClockSet set;
    const std::string why = set.SetTraceClock(clock);
    EXPECT_NE(why.find(std::string("\"") + clock + "\" is not one hmb_trace fits"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("-C mono"), std::string::npos) << why;
    ASSERT_EQ(set.Add(FitOn(HMB_TRACE_CLOCK_LOCAL, 5000000000u)), "");
    EXPECT_EQ(set.Convert(0, 1, 1200000000u).miss, ClockMiss::kOtherClock);
    EXPECT_EQ(set.ClockProblem(), why);
  }
}

TEST(ClockSetTraceClock, EveryClockOfTheAbiHasItsFtraceName) {
  for (const char* name : {"local", "global", "mono", "mono_raw", "boot", "tai", "perf"}) {
    const std::optional<uint8_t> id = TraceClockId(name);
    ASSERT_TRUE(id) << name;
    EXPECT_EQ(TraceClockName(*id), name);
  }
  EXPECT_FALSE(TraceClockId("counter"));
  EXPECT_EQ(TraceClockName(200), "clock 200");
}

TEST(ClockSetTraceClock, TheCInterfaceSkipsAFitOfAnotherClock) {
  hmb_clock_set* c = hmb_clock_set_alloc();
  ASSERT_NE(c, nullptr);
  char text[512];
  ASSERT_EQ(hmb_clock_set_trace_clock(c, "global", text, sizeof(text)), 0);
  EXPECT_STREQ(text, "");
  const ClockFit local = FitOn(HMB_TRACE_CLOCK_LOCAL, 5000000000u);
  const ClockFit global = FitOn(HMB_TRACE_CLOCK_GLOBAL, 6000000000u);
  EXPECT_EQ(hmb_clock_set_add_fit(c, 0, 1, &local.fit, 0, local.clock, text, sizeof(text)),
            HMB_CLOCK_SET_OTHER_CLOCK);
  EXPECT_EQ(hmb_clock_set_add_fit(c, 0, 1, &global.fit, 0, global.clock, text, sizeof(text)),
            HMB_CLOCK_SET_USED);
  EXPECT_NE(std::string(text).find(" clock=global "), std::string::npos) << text;
  ASSERT_EQ(hmb_clock_set_record_time(c, 0, 1, 1200000000u, text, sizeof(text)), 1);
  EXPECT_EQ(std::string(text).rfind("fw_time=6.200000000 ", 0), 0u) << text;
  EXPECT_EQ(hmb_clock_set_trace_clock(c, "counter", text, sizeof(text)), -1);
  EXPECT_NE(std::string(text).find("counter"), std::string::npos);
  hmb_clock_set_free(c);
}

}  // namespace
}  // namespace hmbtrace
