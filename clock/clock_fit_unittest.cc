// SPDX-License-Identifier: GPL-2.0-only
// The clock fit against a known firmware clock: offset, rate, drift and a
// drift change; random round trips and latch points. The converted time of
// every tick must lie within the stated bound of the truth, inside the
// window and up to one sync period past it (what a live reader converts).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <random>

#include "hmb_clock_fit.h"

namespace {

// Firmware ticks at clock_hz * (1 + ppm(t) / 1e6) from host time t (ns),
// starting at tick0; the rate steps from ppm_a to ppm_b at step_ns.
struct TrueClock {
  double clock_hz = 1e9;
  double tick0 = 5e12;
  double ppm_a = 80, ppm_b = -90;
  double step_ns = 30e9;
  double TickAt(double t) const {
    double r_a = clock_hz * (1 + ppm_a / 1e6) / 1e9;
    double r_b = clock_hz * (1 + ppm_b / 1e6) / 1e9;
    if (t <= step_ns) return tick0 + t * r_a;
    return tick0 + step_ns * r_a + (t - step_ns) * r_b;
  }
  double HostAt(double tick) const {  // inverse, by bisection
    double lo = 0, hi = 1e12;
    for (int i = 0; i < 100; i++) {
      double mid = (lo + hi) / 2;
      (TickAt(mid) < tick ? lo : hi) = mid;
    }
    return lo;
  }
};

struct SimResult {
  double worst_ratio = 0;  // error / bound, over every check
  uint64_t checks = 0, violations = 0, fits = 0;
  uint64_t bound_max = 0;
};

SimResult Simulate(const TrueClock& clk, double seconds, uint32_t tolerance_ppm, double rtt_max_ns,
             unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> rtt(10e3, rtt_max_ns), u(0, 1);
  hmb_clock_window w;
  hmb_clock_window_reset(&w);
  const uint64_t nominal = hmb_clock_nominal_mult(static_cast<uint64_t>(clk.clock_hz));
  SimResult run;
  const double period = 100e6;  // a burst every 100 ms
  for (double t = 1e6; t < seconds * 1e9; t += period) {
    // A burst of 4; keep the shortest round trip.
    hmb_clock_sample best{};
    for (int b = 0; b < 4; b++) {
      double t0 = t + b * 300e3, r = rtt(rng), latch = t0 + u(rng) * r;
      hmb_clock_sample s{static_cast<uint64_t>(t0), static_cast<uint64_t>(t0 + r),
                         static_cast<uint64_t>(clk.TickAt(latch))};
      if (b == 0 || s.t1 - s.t0 < best.t1 - best.t0) best = s;
    }
    hmb_clock_window_add(&w, &best);
    struct hmb_clock_fit f;
    if (hmb_clock_fit(&w, nominal, tolerance_ppm, &f)) continue;
    run.fits++;
    // Ticks from the window's start to one period past its end.
    double a = static_cast<double>(f.tick_first);
    double b = clk.TickAt(clk.HostAt(static_cast<double>(f.tick_last)) + period);
    for (int i = 0; i <= 50; i++) {
      uint64_t tick = static_cast<uint64_t>(a + (b - a) * i / 50);
      uint64_t bound = 0;
      double host = static_cast<double>(hmb_clock_to_host(&f, tick, &bound));
      double err = std::fabs(host - clk.HostAt(static_cast<double>(tick)));
      run.checks++;
      run.bound_max = std::max(run.bound_max, bound);
      run.worst_ratio = std::max(run.worst_ratio, err / static_cast<double>(bound));
      if (err > static_cast<double>(bound)) run.violations++;
    }
  }
  return run;
}

TEST(ClockFit, ConvertedTimeStaysWithinTheBoundAcrossADriftChange) {
  TrueClock clk;  // +80 ppm, then -90 ppm after 30 s: a 170 ppm step
  SimResult r = Simulate(clk, 60, 200, 200e3, 1);
  EXPECT_GT(r.fits, 500u);
  EXPECT_EQ(r.violations, 0u) << "worst error/bound " << r.worst_ratio;
  RecordProperty("bound_max_ns", std::to_string(r.bound_max));
  RecordProperty("worst_error_over_bound", std::to_string(r.worst_ratio));
  std::printf("bound max %llu ns, worst error/bound %.3f over %llu checks\n",
              static_cast<unsigned long long>(r.bound_max), r.worst_ratio,
              static_cast<unsigned long long>(r.checks));
  // The bound is useful, not just safe: a round trip plus tens of us.
  EXPECT_LT(r.bound_max, 400000u);
}

TEST(ClockFit, SlowerClockAndShortRoundTripsGiveATighterBound) {
  TrueClock clk;
  clk.clock_hz = 250e6;
  clk.tick0 = 1e9;
  SimResult r = Simulate(clk, 20, 200, 40e3, 2);
  EXPECT_EQ(r.violations, 0u) << "worst error/bound " << r.worst_ratio;
  EXPECT_LT(r.bound_max, 120000u);
}

TEST(ClockFit, AToleranceBelowTheRealDriftChangeIsCaughtByTheCheck) {
  // The bound is only as honest as its assumption: with 0 ppm tolerance and
  // a 170 ppm step, some conversions past the window must fall outside.
  TrueClock clk;
  SimResult r = Simulate(clk, 60, 0, 15e3, 3);
  EXPECT_GT(r.violations, 0u) << "worst error/bound " << r.worst_ratio;
}

TEST(ClockFit, TheWrongClockIsRefused) {
  hmb_clock_window w;
  hmb_clock_window_reset(&w);
  // A 1 GHz device that answers with a 2 GHz clock.
  for (uint64_t i = 1; i <= 4; i++) {
    hmb_clock_sample s{i * 100000000, i * 100000000 + 20000, i * 200000000};
    ASSERT_EQ(hmb_clock_window_add(&w, &s), 0);
  }
  struct hmb_clock_fit f;
  EXPECT_EQ(hmb_clock_fit(&w, hmb_clock_nominal_mult(1000000000), 200, &f), -1);
}

TEST(ClockFit, SamplesThatGoBackAreRefused) {
  hmb_clock_window w;
  hmb_clock_window_reset(&w);
  hmb_clock_sample a{1000, 2000, 500}, back{3000, 4000, 400}, same_t{1000, 5000, 900};
  EXPECT_EQ(hmb_clock_window_add(&w, &a), 0);
  EXPECT_EQ(hmb_clock_window_add(&w, &back), -1);
  EXPECT_EQ(hmb_clock_window_add(&w, &same_t), -1);
  struct hmb_clock_fit f;
  EXPECT_EQ(hmb_clock_fit(&w, hmb_clock_nominal_mult(1000000000), 200, &f), -1)
      << "one sample is not a fit";
}

TEST(ClockFit, ExactSamplesGiveTheExactLine) {
  hmb_clock_window w;
  hmb_clock_window_reset(&w);
  // 500 MHz, offset 7 s: host = 7e9 + tick * 2.
  for (uint64_t i = 0; i < 8; i++) {
    uint64_t tick = 1000000 + i * 50000000;
    hmb_clock_sample s{7000000000 + tick * 2, 7000000000 + tick * 2, tick};
    ASSERT_EQ(hmb_clock_window_add(&w, &s), 0);
  }
  struct hmb_clock_fit f;
  ASSERT_EQ(hmb_clock_fit(&w, hmb_clock_nominal_mult(500000000), 0, &f), 0);
  uint64_t bound;
  EXPECT_EQ(hmb_clock_to_host(&f, 123456789, &bound), 7000000000 + 123456789ull * 2);
  EXPECT_LE(bound, 2u);
}

// A 1 GHz firmware clock at +150 ppm, a sample every 100 ms with a 30 us
// round trip, except sample @late_i: a round trip of @late_rtt and a tick
// read @late_ns after its answer (firmware that stamps a sync request when
// it answers it, late; an answer that is not the device's).
struct LateSample {
  struct hmb_clock_fit fit {};
  int ret = 0;
  double true_mult = 0;    // host ns per tick, times 2^32
  double worst_ratio = 0;  // conversion error / bound at the samples
};

LateSample FitWithALateSample(int late_i, double late_ns, double late_rtt) {
  const double ppm = 150, t_start = 1e9;
  hmb_clock_window w;
  hmb_clock_window_reset(&w);
  for (int i = 0; i < HMB_CLOCK_WINDOW; i++) {
    double t0 = t_start + i * 100e6, rtt = i == late_i ? late_rtt : 30e3;
    double latch = t0 + rtt / 2 + (i == late_i ? rtt / 2 + late_ns : 0);
    hmb_clock_sample s{static_cast<uint64_t>(t0), static_cast<uint64_t>(t0 + rtt),
                       static_cast<uint64_t>(latch * (1 + ppm / 1e6))};
    EXPECT_EQ(hmb_clock_window_add(&w, &s), 0);
  }
  LateSample r;
  r.true_mult = 4294967296.0 / (1 + ppm / 1e6);
  r.ret = hmb_clock_fit(&w, hmb_clock_nominal_mult(1000000000), 200, &r.fit);
  for (int i = 0; r.ret == 0 && i < HMB_CLOCK_WINDOW; i++) {
    double t = t_start + i * 100e6 + 15e3;
    uint64_t bound = 0;
    double host = static_cast<double>(
        hmb_clock_to_host(&r.fit, static_cast<uint64_t>(t * (1 + ppm / 1e6)), &bound));
    r.worst_ratio = std::max(r.worst_ratio, std::fabs(host - t) / static_cast<double>(bound));
  }
  return r;
}

TEST(ClockFit, ASampleReadOutsideItsRequestIsNoFit) {
  // At the chord's end (the newer half's shortest round trip): the chord
  // would be 400 ppm off while stating 220 ppm. In the middle: the chord
  // is right, the window still has no clock through every sample.
  EXPECT_EQ(FitWithALateSample(10, 400e3, 10e3).ret, HMB_CLOCK_FIT_CONTRADICTED);
  EXPECT_EQ(FitWithALateSample(5, 400e3, 30e3).ret, HMB_CLOCK_FIT_CONTRADICTED);
  EXPECT_EQ(FitWithALateSample(15, 600e3, 30e3).ret, HMB_CLOCK_FIT_CONTRADICTED);
  // 100 us late, 0.7 s from the nearer end of the chord (samples 0 and 8):
  // a clock within 200 ppm of its average could do that. A fit, resting on
  // good samples, and true within its bound.
  LateSample r = FitWithALateSample(15, 100e3, 30e3);
  ASSERT_EQ(r.ret, 0);
  EXPECT_LE(std::fabs(static_cast<double>(r.fit.mult) - r.true_mult),
            static_cast<double>(r.fit.slope_err));
  EXPECT_LE(r.worst_ratio, 1.0);
}

TEST(ClockFit, SamplesThatAgreeOnALineKeepTheChordBound) {
  // No late sample: a fit, whose slope bound is the tolerance plus the
  // chord's ends' half round trips over its length (samples 0 and 10).
  LateSample r = FitWithALateSample(10, 0, 10e3);
  ASSERT_EQ(r.ret, 0);
  double chord = (30e3 + 10e3) / 2 / 1e9 * (1 + 150 / 1e6);  // ns per ns, over 1 s
  EXPECT_NEAR(static_cast<double>(r.fit.slope_err) / 4294967296.0, 200e-6 + chord, 1e-8);
  EXPECT_LE(std::fabs(static_cast<double>(r.fit.mult) - r.true_mult),
            static_cast<double>(r.fit.slope_err));
  EXPECT_LE(r.worst_ratio, 1.0);
}

TEST(ClockFit, TwoSamplesAreNoFit) {
  // Two samples cannot contradict each other: nothing checks them.
  hmb_clock_window w;
  hmb_clock_window_reset(&w);
  for (uint64_t i = 1; i <= 2; i++) {
    hmb_clock_sample s{i * 100000000, i * 100000000 + 20000, i * 100000000 + 10000};
    ASSERT_EQ(hmb_clock_window_add(&w, &s), 0);
  }
  struct hmb_clock_fit f;
  EXPECT_EQ(hmb_clock_fit(&w, hmb_clock_nominal_mult(1000000000), 200, &f), -1);
}

}  // namespace

namespace {

TEST(ClockFit, HostileFitsSaturateInsteadOfWrapping) {
  struct hmb_clock_fit f {};
  f.tick_ref = 0;
  f.host_ref = UINT64_MAX / 2;
  f.mult = UINT64_MAX;
  f.slope_err = UINT64_MAX;
  f.tick_first = 0;
  f.tick_last = 0;
  f.err_ns = 5;
  uint64_t bound = 0;
  uint64_t host = hmb_clock_to_host(&f, UINT64_MAX, &bound);
  EXPECT_EQ(bound, UINT64_MAX) << "a huge doubt must not wrap to a tiny bound";
  EXPECT_EQ(host, static_cast<uint64_t>(INT64_MAX));
  f.tick_ref = UINT64_MAX;
  f.host_ref = 10;
  EXPECT_EQ(hmb_clock_to_host(&f, 0, nullptr), 0u) << "before 0 is 0, not a wrapped huge time";
}

}  // namespace
