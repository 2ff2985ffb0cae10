// SPDX-License-Identifier: GPL-2.0-only
#include "stat/histogram.h"

#include <gtest/gtest.h>

#include "stat/stat.h"

namespace hmbtrace {
namespace {

TEST(Log2Histogram, BucketsArePowersOfTwoLikeBpftrace) {
  EXPECT_EQ(Log2Histogram::BucketOf(0), 0u);
  EXPECT_EQ(Log2Histogram::BucketOf(1), 1u);
  EXPECT_EQ(Log2Histogram::BucketOf(2), 2u);
  EXPECT_EQ(Log2Histogram::BucketOf(3), 2u);
  EXPECT_EQ(Log2Histogram::BucketOf(1023), 10u);
  EXPECT_EQ(Log2Histogram::BucketOf(1024), 11u);
  EXPECT_EQ(Log2Histogram::BucketOf(UINT64_MAX), 64u);
  for (size_t b = 2; b < 64; b++) {
    EXPECT_EQ(Log2Histogram::BucketOf(Log2Histogram::BucketLow(b)), b);
    EXPECT_EQ(Log2Histogram::BucketOf(Log2Histogram::BucketHigh(b) - 1), b);
  }
  EXPECT_EQ(Log2Histogram::BucketHigh(64), 0u);  // 2^64: open end
}

TEST(Log2Histogram, TextShowsTheNonEmptyRangeWithBarsScaledToThePeak) {
  Log2Histogram h;
  h.Add(5, 2);       // [4, 8)
  h.Add(3000, 8);    // [2K, 4K)
  h.Add(1u << 20);   // [1M, 2M)
  const std::string text = h.Text("  ", 8);
  EXPECT_EQ(text,
            "  [4, 8)                 2 |@@      |\n"
            "  [8, 16)                0 |        |\n"
            "  [16, 32)               0 |        |\n"
            "  [32, 64)               0 |        |\n"
            "  [64, 128)              0 |        |\n"
            "  [128, 256)             0 |        |\n"
            "  [256, 512)             0 |        |\n"
            "  [512, 1K)              0 |        |\n"
            "  [1K, 2K)               0 |        |\n"
            "  [2K, 4K)               8 |@@@@@@@@|\n"
            "  [4K, 8K)               0 |        |\n"
            "  [8K, 16K)              0 |        |\n"
            "  [16K, 32K)             0 |        |\n"
            "  [32K, 64K)             0 |        |\n"
            "  [64K, 128K)            0 |        |\n"
            "  [128K, 256K)           0 |        |\n"
            "  [256K, 512K)           0 |        |\n"
            "  [512K, 1M)             0 |        |\n"
            "  [1M, 2M)               1 |@       |\n");
  EXPECT_EQ(Log2Histogram().Text("  "), "");
}

TEST(Log2Histogram, JsonKeepsTheCountsOfNonEmptyBuckets) {
  Log2Histogram h;
  h.Add(0);
  h.Add(6, 3);
  h.Add(UINT64_MAX);
  const nlohmann::json j = h.Json();
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0], (nlohmann::json{{"low", 0}, {"high", 1}, {"count", 1}}));
  EXPECT_EQ(j[1], (nlohmann::json{{"low", 4}, {"high", 8}, {"count", 3}}));
  EXPECT_EQ(j[2]["low"], uint64_t{1} << 63);
  EXPECT_TRUE(j[2]["high"].is_null());
  EXPECT_EQ(h.total(), 5u);
}

TEST(BinByTime, EveryTimeLandsInOneBinAndTheEndsInTheEndBins) {
  const std::vector<uint64_t> times = {100, 100, 149, 150, 199, 200, 50, 900};
  const std::vector<uint64_t> bins = BinByTime(times, 100, 200, 4);
  // Bin width 26 ns: [100,126) [126,152) [152,178) [178,204); 50 and 900
  // are clamped to the first and the last.
  EXPECT_EQ(TimeBinNs(100, 200, 4), 26u);
  EXPECT_EQ(bins, (std::vector<uint64_t>{3, 2, 0, 3}));
  EXPECT_EQ(BinByTime(times, 7, 7, 3), (std::vector<uint64_t>{8, 0, 0}));
  EXPECT_EQ(BinByTime({0, UINT64_MAX}, 0, UINT64_MAX, 2), (std::vector<uint64_t>{1, 1}));
}

TEST(Sparkline, PeakIsTheFullBlockZeroIsBlankAnythingElseVisible) {
  EXPECT_EQ(Sparkline({0, 1, 50, 100}), " ▁▄█");
  EXPECT_EQ(Sparkline({}), "");
}

TEST(StatPlots, HistogramsInNanosecondsWhenTheClockRateIsKnown) {
  CoreStats cores;
  cores[{0, 0}].AddLatency("nand_read.latency", 1000, 1000000);  // 1 MHz: 1 ms each
  cores[{0, 0}].AddLatency("nand_read.latency", 1000, 1000000);
  cores[{0, 1}].AddLatency("nand_read.latency", 3, 1000000);  // 3 us
  cores[{1, 0}].AddLatency("other", 1, 0);
  const std::string text = LatencyHistogramsText(cores, 0, 1000000);
  EXPECT_NE(text.find("  latency histograms (all cores, ns):\n    nand_read.latency:\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      [2K, 4K)               1 |"), std::string::npos) << text;
  EXPECT_NE(text.find("      [512K, 1M)             2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("other"), std::string::npos);
  EXPECT_NE(LatencyHistogramsText(cores, 1, 0).find("(all cores, ticks)"), std::string::npos);
  EXPECT_EQ(LatencyHistogramsText(cores, 2, 0), "");

  const nlohmann::json j = CorePlotsJson(cores[{0, 0}], 1000000, 0, 0);
  EXPECT_EQ(j["latency_histograms"]["nand_read.latency"]["unit"], "ns");
  EXPECT_EQ(j["latency_histograms"]["nand_read.latency"]["buckets"][0]["count"], 2u);
}

TEST(StatPlots, ActivityDrawsTheCoresRecordsOverTheCapture) {
  CoreStat cs;
  for (uint64_t t = 0; t < 1000; t++)
    cs.record_times.push_back(t < 500 ? t * 1000 : 999000);  // then a burst at the end
  const std::string text = ActivityText(cs, 0, 999000);
  EXPECT_EQ(text.rfind("    activity |", 0), 0u) << text;
  EXPECT_NE(text.find("█| 20 us per bin, peak 500 records\n"), std::string::npos) << text;
  const nlohmann::json j = CorePlotsJson(cs, 0, 0, 999000);
  uint64_t sum = 0;
  for (uint64_t n : j["activity"]["records"].get<std::vector<uint64_t>>())
    sum += n;
  EXPECT_EQ(sum, 1000u);
  EXPECT_EQ(j["activity"]["records"].size(), kActivityBins);
}

}  // namespace
}  // namespace hmbtrace
