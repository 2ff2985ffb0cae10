// SPDX-License-Identifier: GPL-2.0-only
// The clock-sync policy (hmb_clock_sync.c), rule by rule, on made-up
// bursts from an exact 1 GHz device clock (tick = host ns + offset): which
// sample of a burst is fitted, that a burst of slow round trips is kept out
// of the window, that a clock going back or a window no clock runs through
// restarts the window, when the
// last fit goes stale and is re-published, and what a new generation
// keeps. clock_sync_test (mock/fwsim/) drives the same code against
// hmb-fwsim.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "hmb_clock_sync.h"

namespace {

constexpr uint64_t kHz = 1000000000;
constexpr uint64_t kOffset = 7000000000000;
constexpr uint64_t kPeriodNs = 100000000;
constexpr uint32_t kTolerancePpm = 200;

// A sample at host time t with round trip rtt; the device latched in the
// middle.
hmb_clock_sample Sample(uint64_t t, uint64_t rtt) { return {t, t + rtt, t + rtt / 2 + kOffset}; }

class ClockSyncPolicy : public ::testing::Test {
 protected:
  void SetUp() override { hmb_clock_sync_init(&k_); }

  // One burst at period |i|, one answered sample per round trip in |rtts|.
  unsigned Burst(uint64_t i, const std::vector<uint64_t>& rtts) {
    std::vector<hmb_clock_sample> s;
    for (size_t j = 0; j < rtts.size(); j++)
      s.push_back(Sample(kPeriodNs * (i + 1) + j * 50000, rtts[j]));
    return hmb_clock_sync_step(&k_, s.data(), static_cast<unsigned>(s.size()),
                               hmb_clock_nominal_mult(kHz), kTolerancePpm);
  }
  unsigned Silent() {
    return hmb_clock_sync_step(&k_, nullptr, 0, hmb_clock_nominal_mult(kHz), kTolerancePpm);
  }
  const hmb_clock_sample& Newest() const {
    return k_.win.s[(k_.win.first + k_.win.n - 1) % HMB_CLOCK_WINDOW];
  }

  hmb_clock_sync k_;
};

TEST_F(ClockSyncPolicy, TheShortestRoundTripOfABurstIsFitted) {
  EXPECT_EQ(Burst(0, {30000, 12000, 50000, 20000}), 0u);  // one sample: no line yet
  EXPECT_EQ(Burst(1, {40000, 25000, 11000, 60000}), 0u);  // two cannot be checked
  EXPECT_EQ(Newest().t1 - Newest().t0, 11000u);
  EXPECT_EQ(k_.bad_fits, 0u) << "too few samples is not a bad fit";
  EXPECT_EQ(Burst(2, {40000, 25000, 14000, 60000}), unsigned{HMB_CLOCK_SYNC_NEW_FIT});
  EXPECT_EQ(k_.fit.rtt_min_ns, 11000u);
  EXPECT_EQ(k_.fit.samples, 3u);
  EXPECT_TRUE(k_.have_fit);
  EXPECT_EQ(k_.fits, 1u);
}

// What a preempted host looks like: every request of one burst took ms.
// Fitting it would make the stated bound (err_ns) ms wide; the floor keeps
// it out and the bound stays that of the fast samples.
TEST_F(ClockSyncPolicy, ABurstOfSlowRoundTripsDoesNotWidenTheBound) {
  for (uint64_t i = 0; i < 8; i++)
    Burst(i, {10000, 12000, 11000, 13000});
  const struct hmb_clock_fit before = k_.fit;
  ASSERT_TRUE(k_.have_fit);
  ASSERT_LT(before.err_ns, 20000u);
  // 4x 10 us + 20 us = 60 us is the most that joins.
  EXPECT_EQ(Burst(8, {3000000, 2500000, 4000000, 2800000}), 0u);
  EXPECT_EQ(k_.slow, 1u);
  EXPECT_EQ(k_.win.n, 8u) << "the slow sample joined the window";
  EXPECT_EQ(k_.fit.err_ns, before.err_ns);
  EXPECT_EQ(Burst(9, {61000}), 0u) << "just over the floor";
  EXPECT_EQ(Burst(10, {60000}), unsigned{HMB_CLOCK_SYNC_NEW_FIT}) << "at the floor";
  EXPECT_EQ(k_.slow, 2u);
  EXPECT_LT(k_.fit.err_ns, 60000u);
}

// The floor follows a link that got slower for good, within
// HMB_CLOCK_SYNC_FLOOR_BURSTS bursts: fits do not stop for ever.
TEST_F(ClockSyncPolicy, TheFloorFollowsALinkThatGotSlower) {
  for (uint64_t i = 0; i < HMB_CLOCK_SYNC_FLOOR_BURSTS; i++)
    Burst(i, {10000});
  uint64_t fits_after = 0;
  for (uint64_t i = HMB_CLOCK_SYNC_FLOOR_BURSTS; i < 3 * HMB_CLOCK_SYNC_FLOOR_BURSTS; i++)
    if (Burst(i, {500000}) & HMB_CLOCK_SYNC_NEW_FIT)
      fits_after++;
  EXPECT_GE(k_.slow, 1u);
  EXPECT_LE(k_.slow, uint64_t{HMB_CLOCK_SYNC_FLOOR_BURSTS});
  EXPECT_GE(fits_after, uint64_t{HMB_CLOCK_SYNC_FLOOR_BURSTS});
}

// A device clock that went back: the old samples are of another line; the
// window starts again from the new sample (no fit until a third one).
TEST_F(ClockSyncPolicy, AClockThatWentBackRestartsTheWindow) {
  for (uint64_t i = 0; i < 5; i++)
    Burst(i, {10000});
  ASSERT_EQ(k_.win.n, 5u);
  hmb_clock_sample back = Sample(kPeriodNs * 7, 10000);
  back.tick = Newest().tick - 1000;
  EXPECT_EQ(hmb_clock_sync_step(&k_, &back, 1, hmb_clock_nominal_mult(kHz), kTolerancePpm), 0u);
  EXPECT_EQ(k_.refused, 1u);
  EXPECT_EQ(k_.win.n, 1u);
  EXPECT_EQ(Newest().tick, back.tick);
  EXPECT_TRUE(k_.have_fit) << "the last fit is kept until a new one";
}

// A tick read 400 us after its request was answered (firmware that stamps
// late, an answer that is not the device's): no clock runs through it and
// the samples around it. No fit rests on it: the window restarts from its
// newest sample, here the bad one itself, then again from the next good
// one; every fit made is true to the device clock within its bound.
TEST_F(ClockSyncPolicy, AContradictedWindowRestartsFromItsNewestSample) {
  for (uint64_t i = 0; i < 6; i++)
    Burst(i, {30000});
  ASSERT_TRUE(k_.have_fit);
  const uint64_t fits = k_.fits;
  hmb_clock_sample late = Sample(kPeriodNs * 7, 10000);
  late.tick += 400000;
  EXPECT_EQ(hmb_clock_sync_step(&k_, &late, 1, hmb_clock_nominal_mult(kHz), kTolerancePpm),
            unsigned{HMB_CLOCK_SYNC_CONTRADICTED});
  EXPECT_EQ(k_.contradicted, 1u);
  EXPECT_EQ(k_.win.n, 1u);
  EXPECT_EQ(Newest().tick, late.tick);
  std::vector<struct hmb_clock_fit> made;
  for (uint64_t i = 7; i < 30; i++)
    if (Burst(i, {30000}) & HMB_CLOCK_SYNC_NEW_FIT)
      made.push_back(k_.fit);
  EXPECT_EQ(k_.contradicted, 2u) << "the late sample and the next two";
  EXPECT_EQ(k_.bad_fits, 0u);
  ASSERT_FALSE(made.empty());
  EXPECT_EQ(k_.fits, fits + made.size());
  const double nominal = static_cast<double>(hmb_clock_nominal_mult(kHz));
  for (const struct hmb_clock_fit& f : made) {
    EXPECT_GT(f.tick_first, late.tick) << "a fit with the late sample in it";
    EXPECT_LE(std::abs(static_cast<double>(f.mult) - nominal), static_cast<double>(f.slope_err));
  }
}

TEST_F(ClockSyncPolicy, TheFitGoesStaleAfterThreeSilentBurstsAndIsRepublished) {
  EXPECT_EQ(Silent(), 0u) << "no fit: nothing to mark";
  Burst(1, {10000});
  Burst(2, {10000});
  Burst(3, {10000});
  ASSERT_TRUE(k_.have_fit);
  std::vector<unsigned> acts;
  for (int i = 0; i < 2 * HMB_CLOCK_SYNC_STALE_EVERY + HMB_CLOCK_SYNC_STALE_BURSTS; i++)
    acts.push_back(Silent());
  for (size_t i = 0; i + 1 < HMB_CLOCK_SYNC_STALE_BURSTS; i++)
    EXPECT_EQ(acts[i], 0u) << "silent burst " << i + 1;
  EXPECT_EQ(acts[HMB_CLOCK_SYNC_STALE_BURSTS - 1],
            unsigned{HMB_CLOCK_SYNC_WENT_STALE | HMB_CLOCK_SYNC_PUBLISH_STALE});
  EXPECT_EQ(acts[HMB_CLOCK_SYNC_STALE_BURSTS - 1 + HMB_CLOCK_SYNC_STALE_EVERY],
            unsigned{HMB_CLOCK_SYNC_PUBLISH_STALE});
  unsigned published = 0;
  for (unsigned a : acts)
    published += (a & HMB_CLOCK_SYNC_PUBLISH_STALE) != 0;
  EXPECT_EQ(published, 3u);
  EXPECT_TRUE(k_.stale);
  EXPECT_TRUE(k_.have_fit);
  EXPECT_EQ(k_.failed_bursts, acts.size() + 1);
  // One answer: a new fit, no longer stale.
  EXPECT_EQ(Burst(40, {10000}), unsigned{HMB_CLOCK_SYNC_NEW_FIT});
  EXPECT_FALSE(k_.stale);
  EXPECT_EQ(k_.failing, 0u);
}

TEST_F(ClockSyncPolicy, ANewGenerationDropsTheFitAndKeepsTheCounters) {
  for (uint64_t i = 0; i < 4; i++)
    Burst(i, {10000});
  Burst(4, {3000000});
  hmb_clock_sync_restart(&k_);
  EXPECT_FALSE(k_.have_fit);
  EXPECT_EQ(k_.win.n, 0u);
  EXPECT_EQ(k_.bursts, 5u);
  EXPECT_EQ(k_.fits, 2u);
  EXPECT_EQ(k_.slow, 1u);
  // The floor restarted too: a slower link is not "slow" in the new one.
  EXPECT_EQ(Burst(10, {3000000}), 0u);
  EXPECT_EQ(k_.slow, 1u);
  EXPECT_EQ(k_.win.n, 1u);
}

}  // namespace
