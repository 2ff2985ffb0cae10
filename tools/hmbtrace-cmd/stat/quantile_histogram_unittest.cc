// SPDX-License-Identifier: GPL-2.0-only
#include "stat/quantile_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace hmbtrace {
namespace {

// The exact nearest-rank value, as stat computed it from every value.
uint64_t ExactAtRank(std::vector<uint64_t> v, uint64_t rank) {
  std::sort(v.begin(), v.end());
  return v[std::clamp<uint64_t>(rank, 1, v.size()) - 1];
}

void ExpectWithinPrecision(uint64_t got, uint64_t exact, const char* what) {
  const double error = std::fabs(static_cast<double>(got) - static_cast<double>(exact));
  EXPECT_LE(error, static_cast<double>(exact) * QuantileHistogram::kRelativeError)
      << what << ": got " << got << ", exact " << exact;
}

TEST(QuantileHistogram, BucketsTileEveryValueWithoutGapsOrOverlaps) {
  EXPECT_EQ(QuantileHistogram::BucketLow(0), 0u);
  size_t last = QuantileHistogram::BucketOf(UINT64_MAX);
  for (size_t b = 0; b < last; b++) {
    ASSERT_EQ(QuantileHistogram::BucketHigh(b) + 1, QuantileHistogram::BucketLow(b + 1)) << b;
    ASSERT_EQ(QuantileHistogram::BucketOf(QuantileHistogram::BucketLow(b)), b);
    ASSERT_EQ(QuantileHistogram::BucketOf(QuantileHistogram::BucketHigh(b)), b);
  }
  EXPECT_EQ(QuantileHistogram::BucketHigh(last), UINT64_MAX);
}

TEST(QuantileHistogram, BucketsAreAtMostA128thOfTheirValueWide) {
  for (size_t b = 256; b <= QuantileHistogram::BucketOf(UINT64_MAX); b++) {
    const uint64_t low = QuantileHistogram::BucketLow(b), high = QuantileHistogram::BucketHigh(b);
    ASSERT_LE(high - low + 1, low / 128) << b;
  }
  for (uint64_t v = 0; v < 256; v++)
    EXPECT_EQ(QuantileHistogram::BucketLow(QuantileHistogram::BucketOf(v)), v);  // exact
}

TEST(QuantileHistogram, CountMinMaxAndEndRanksAreExact) {
  QuantileHistogram h;
  EXPECT_EQ(h.Median(), 0u);
  for (uint64_t v : {123456789u, 1000u, 987654321u, 5u})
    h.Add(v);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.min(), 5u);
  EXPECT_EQ(h.max(), 987654321u);
  EXPECT_EQ(h.sum(), 123456789u + 1000u + 987654321u + 5u);
  EXPECT_EQ(h.ValueAtRank(1), 5u);
  EXPECT_EQ(h.ValueAtRank(4), 987654321u);
  EXPECT_EQ(h.P99(), 987654321u);  // rank 4 of 4
  QuantileHistogram one;
  one.Add(UINT64_MAX);
  EXPECT_EQ(one.Median(), UINT64_MAX);
  EXPECT_EQ(one.P99(), UINT64_MAX);
}

TEST(QuantileHistogram, SmallValuesGiveExactPercentiles) {
  QuantileHistogram h;
  std::vector<uint64_t> v;
  for (uint64_t i = 100; i >= 1; i--) {
    h.Add(i);
    v.push_back(i);
  }
  EXPECT_EQ(h.Median(), 50u);
  EXPECT_EQ(h.P99(), 99u);
  EXPECT_EQ(h.Median(), ExactAtRank(v, 50));
}

TEST(QuantileHistogram, PercentilesOfRandomDistributionsAreWithinThePrecision) {
  std::mt19937_64 rng(12);
  std::lognormal_distribution<double> lognormal(10.0, 2.0);
  std::exponential_distribution<double> exponential(1e-6);
  std::uniform_int_distribution<uint64_t> uniform(0, UINT64_MAX);
  for (int dist = 0; dist < 3; dist++) {
    QuantileHistogram h;
    std::vector<uint64_t> values;
    for (int i = 0; i < 20000; i++) {
      const uint64_t v = dist == 0   ? static_cast<uint64_t>(lognormal(rng))
                         : dist == 1 ? static_cast<uint64_t>(exponential(rng))
                                     : uniform(rng);
      h.Add(v);
      values.push_back(v);
    }
    const uint64_t n = values.size();
    for (uint64_t rank : {uint64_t{1}, n / 10, (n + 1) / 2, (n * 99 + 99) / 100, n * 999 / 1000, n})
      ExpectWithinPrecision(h.ValueAtRank(rank), ExactAtRank(values, rank), "rank");
    ExpectWithinPrecision(h.Median(), ExactAtRank(values, (n + 1) / 2), "median");
    ExpectWithinPrecision(h.P99(), ExactAtRank(values, (n * 99 + 99) / 100), "p99");
  }
}

TEST(QuantileHistogram, ACopyCountsIndependently) {
  QuantileHistogram a;
  a.Add(1u << 20);
  QuantileHistogram b = a;
  b.Add(1u << 30);
  EXPECT_EQ(a.count(), 1u);
  EXPECT_EQ(a.P99(), 1u << 20);
  EXPECT_EQ(b.count(), 2u);
  EXPECT_EQ(b.P99(), 1u << 30);
}

TEST(QuantileHistogram, MergedHistogramsGiveThePercentilesOfAllTheirValues) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10.0, 1.5);
  std::vector<uint64_t> all;
  QuantileHistogram parts[3], together;
  for (int i = 0; i < 30000; i++) {
    const uint64_t v = static_cast<uint64_t>(dist(rng)) + (i % 3 == 2 ? 1000000 : 0);
    parts[i % 3].Add(v);
    together.Add(v);
    all.push_back(v);
  }
  QuantileHistogram merged;
  for (const QuantileHistogram& p : parts)
    merged.Merge(p);
  merged.Merge(QuantileHistogram());  // an empty one changes nothing
  EXPECT_EQ(merged.count(), together.count());
  EXPECT_EQ(merged.min(), together.min());
  EXPECT_EQ(merged.max(), together.max());
  EXPECT_EQ(merged.sum(), together.sum());
  for (uint64_t rank : {uint64_t{1}, uint64_t{2}, uint64_t{15000}, uint64_t{20001},
                        uint64_t{29700}, uint64_t{30000}}) {
    EXPECT_EQ(merged.ValueAtRank(rank), together.ValueAtRank(rank)) << "rank " << rank;
    ExpectWithinPrecision(merged.ValueAtRank(rank), ExactAtRank(all, rank), "rank");
  }
}

}  // namespace
}  // namespace hmbtrace
