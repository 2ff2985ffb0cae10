// SPDX-License-Identifier: GPL-2.0-only
//
// Percentiles of any number of values in memory that does not grow with
// them: a log-linear histogram as HdrHistogram lays it out. Values below
// 256 each have their own bucket (exact); above, every power of two
// [2^e, 2^(e+1)) is cut into 128 equal buckets, so a bucket is never wider
// than 1/128 of its lowest value. A percentile is the middle of the bucket
// its rank falls in, hence within kRelativeError (1/256, 0.4 %) of the
// exact nearest-rank value; count, min and max are exact, and so is a
// percentile whose rank is the first or the last value.
//
// Memory: 128 counters are allocated for a power of two the first time a
// value falls in it (about 1 KiB each; latencies span a few), so a
// histogram is at most 57 KiB and usually a few KiB.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_QUANTILE_HISTOGRAM_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_QUANTILE_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace hmbtrace {

class QuantileHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;  // 128 buckets per power of two
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
  // The largest error of a percentile, relative to the exact value.
  static constexpr double kRelativeError = 1.0 / (2 * kSubBuckets);

  QuantileHistogram() = default;
  QuantileHistogram(const QuantileHistogram& other) { *this = other; }
  QuantileHistogram& operator=(const QuantileHistogram& other);
  QuantileHistogram(QuantileHistogram&&) = default;
  QuantileHistogram& operator=(QuantileHistogram&&) = default;

  void Add(uint64_t value);
  // Adds every value of `other`, as if each had been Add()ed here: the
  // percentiles of several histograms together (all cores of a device).
  void Merge(const QuantileHistogram& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  uint64_t min() const { return min_; }  // 0 when empty
  uint64_t max() const { return max_; }
  // The sum of the values, saturated at UINT64_MAX.
  uint64_t sum() const { return sum_; }

  // The value of nearest rank `rank` (1 = the smallest, count() = the
  // largest), within kRelativeError; 0 when empty. Ranks beyond the ends
  // are clamped.
  uint64_t ValueAtRank(uint64_t rank) const;
  // Nearest-rank percentiles, as stat has always defined them: the
  // median is rank ceil(n/2), p99 rank ceil(99n/100).
  uint64_t Median() const { return ValueAtRank((count_ + 1) / 2); }
  uint64_t P99() const { return ValueAtRank((count_ * 99 + 99) / 100); }

  // The bucket layout, for tests: bucket index of a value, and the lowest
  // and highest value of a bucket.
  static size_t BucketOf(uint64_t value);
  static uint64_t BucketLow(size_t bucket);
  static uint64_t BucketHigh(size_t bucket);

 private:
  // Groups of kSubBuckets counters: group 0 holds the values 0..255
  // (two groups' worth, 256 counters), group g >= 1 the values
  // [2^(g+7), 2^(g+8)) in kSubBuckets buckets. 64 - 7 groups cover uint64_t.
  static constexpr size_t kGroups = 64 - kSubBucketBits;
  using Group = std::array<uint64_t, kSubBuckets>;

  uint64_t& Counter(size_t bucket);
  uint64_t& NewGroupCounter(size_t bucket);  // of a group not made yet
  uint64_t CounterAt(size_t bucket) const;

  std::array<uint64_t, 2 * kSubBuckets> low_{};  // values 0..255, exact
  std::array<std::unique_ptr<Group>, kGroups> groups_;  // [1..kGroups-1] used
  uint64_t count_ = 0;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;
};

// Add() and what it calls are here, inline: stat adds a value or two per
// record.
inline size_t QuantileHistogram::BucketOf(uint64_t value) {
  if (value < 2 * kSubBuckets)
    return static_cast<size_t>(value);
  // value >> shift is in [128, 256): its bucket within the power of two.
  const unsigned shift = static_cast<unsigned>(std::bit_width(value)) - (kSubBucketBits + 1);
  return static_cast<size_t>(kSubBuckets * shift + (value >> shift));
}

inline uint64_t& QuantileHistogram::Counter(size_t bucket) {
  if (bucket < low_.size())
    return low_[bucket];
  Group* group = groups_[bucket / kSubBuckets - 1].get();
  return group ? (*group)[bucket % kSubBuckets] : NewGroupCounter(bucket);
}

inline void QuantileHistogram::Add(uint64_t value) {
  Counter(BucketOf(value))++;
  if (count_ == 0 || value < min_)
    min_ = value;
  max_ = std::max(max_, value);
  sum_ = value > UINT64_MAX - sum_ ? UINT64_MAX : sum_ + value;
  count_++;
}

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_QUANTILE_HISTOGRAM_H_
