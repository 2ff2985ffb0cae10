// SPDX-License-Identifier: GPL-2.0-only
// The firmware clock model: what a checker reading the truth file relies
// on. Without options it is CLOCK_MONOTONIC at clock_hz from start_tick;
// drift and its step are continuous; time scale multiplies model time.
#include "fw_clock.h"

#include <gtest/gtest.h>

namespace hmbtrace {
namespace {

constexpr uint64_t kStart = 1000000000000;  // CLOCK_MONOTONIC at the start

TEST(FwClockTest, WithoutDriftItIsTheHostClockAtClockHzFromTheOffset) {
  ClockModelConfig c;
  c.clock_hz = 250000000;
  FirmwareClock clock(c, kStart);
  EXPECT_EQ(clock.TickAt(kStart), kDefaultStartTick);
  EXPECT_EQ(clock.TickAt(kStart + 1000000000), kDefaultStartTick + 250000000);
  EXPECT_EQ(clock.TickAt(kStart + 7), kDefaultStartTick + 1);  // floor(1.75)
  EXPECT_EQ(clock.TickAt(kStart - 5), kDefaultStartTick) << "before the start";
  const nlohmann::json t = clock.TruthJson();
  EXPECT_EQ(t["hz"], 250000000);
  EXPECT_EQ(t["start_tick"], kDefaultStartTick);
  EXPECT_EQ(t["start_monotonic_ns"], kStart);
  // Firmware ns = CLOCK_MONOTONIC - epoch, as the e2e checkers use it.
  EXPECT_EQ(t["epoch_monotonic_ns"].get<int64_t>(),
            static_cast<int64_t>(kStart) - static_cast<int64_t>(kDefaultStartTick * 4));
}

TEST(FwClockTest, DriftStepsAtTheChangeWithoutAJump) {
  ClockModelConfig c;
  c.start_tick = 12345;
  c.drift_ppm = 80;
  c.drift_change_at_s = 30;
  c.drift_ppm_after = -90;
  FirmwareClock clock(c, kStart);
  const uint64_t s = 1000000000;
  EXPECT_EQ(clock.TickAt(kStart + 10 * s), 12345 + 10 * s + 800000);
  const uint64_t at_change = 12345 + 30 * s + 2400000;
  EXPECT_EQ(clock.TickAt(kStart + 30 * s), at_change);
  EXPECT_EQ(clock.TickAt(kStart + 40 * s), at_change + 10 * s - 900000);
  ASSERT_EQ(clock.segments().size(), 2u);
  EXPECT_EQ(clock.segments()[1].from_model_ns, 30 * s);
  EXPECT_EQ(clock.segments()[1].tick, at_change);
  EXPECT_EQ(clock.segments()[1].ppb, -90000);
  EXPECT_EQ(clock.TruthJson()["segments"][1]["ppm"], -90.0);
}

TEST(FwClockTest, TimeScaleRunsModelTimeFaster) {
  ClockModelConfig c;
  c.start_tick = 0;
  c.time_scale = 6;
  c.drift_change_at_s = 30;
  c.drift_ppm_after = 100;
  FirmwareClock clock(c, kStart);
  const uint64_t s = 1000000000;
  EXPECT_EQ(clock.TickAt(kStart + s), 6 * s);
  // The step comes after 30 model seconds: 5 real ones.
  EXPECT_EQ(clock.TickAt(kStart + 6 * s), 36 * s + 600000);
  EXPECT_EQ(clock.TruthJson()["time_scale"], 6);
}

TEST(FwClockTest, OutOfRangeModelsAreRefusedByName) {
  ClockModelConfig c;
  EXPECT_TRUE(CheckClockModel(c).ok());
  c.drift_ppm = 2e5;
  EXPECT_NE(CheckClockModel(c).message().find("drift"), std::string::npos);
  c = {};
  c.time_scale = 0;
  EXPECT_NE(CheckClockModel(c).message().find("--time-scale"), std::string::npos);
  c = {};
  c.clock_hz = 0;
  EXPECT_NE(CheckClockModel(c).message().find("--clock-hz"), std::string::npos);
}

}  // namespace
}  // namespace hmbtrace
