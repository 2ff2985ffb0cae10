// SPDX-License-Identifier: GPL-2.0-only
#include "stat/quantile_histogram.h"

#include <algorithm>
#include <bit>

namespace hmbtrace {

QuantileHistogram& QuantileHistogram::operator=(const QuantileHistogram& other) {
  if (this == &other)
    return *this;
  low_ = other.low_;
  for (size_t g = 0; g < kGroups; g++)
    groups_[g] = other.groups_[g] ? std::make_unique<Group>(*other.groups_[g]) : nullptr;
  count_ = other.count_;
  min_ = other.min_;
  max_ = other.max_;
  sum_ = other.sum_;
  return *this;
}

uint64_t QuantileHistogram::BucketLow(size_t bucket) {
  if (bucket < 2 * kSubBuckets)
    return bucket;
  const size_t shift = bucket / kSubBuckets - 1;
  return (bucket - kSubBuckets * shift) << shift;
}

uint64_t QuantileHistogram::BucketHigh(size_t bucket) {
  if (bucket < 2 * kSubBuckets)
    return bucket;
  const size_t shift = bucket / kSubBuckets - 1;
  // For the last bucket, (256 << 56) wraps to 0: its high end is UINT64_MAX.
  return ((bucket - kSubBuckets * shift + 1) << shift) - 1;
}

uint64_t& QuantileHistogram::NewGroupCounter(size_t bucket) {
  std::unique_ptr<Group>& group = groups_[bucket / kSubBuckets - 1];
  group = std::make_unique<Group>();  // zeroed
  return (*group)[bucket % kSubBuckets];
}

uint64_t QuantileHistogram::CounterAt(size_t bucket) const {
  if (bucket < low_.size())
    return low_[bucket];
  const std::unique_ptr<Group>& group = groups_[bucket / kSubBuckets - 1];
  return group ? (*group)[bucket % kSubBuckets] : 0;
}

void QuantileHistogram::Merge(const QuantileHistogram& other) {
  if (other.count_ == 0)
    return;
  for (size_t b = 0; b < low_.size(); b++)
    low_[b] += other.low_[b];
  for (size_t g = 0; g < kGroups; g++) {
    if (!other.groups_[g])
      continue;
    if (!groups_[g])
      groups_[g] = std::make_unique<Group>();  // zeroed
    for (size_t i = 0; i < kSubBuckets; i++)
      (*groups_[g])[i] += (*other.groups_[g])[i];
  }
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ = other.sum_ > UINT64_MAX - sum_ ? UINT64_MAX : sum_ + other.sum_;
  count_ += other.count_;
}

uint64_t QuantileHistogram::ValueAtRank(uint64_t rank) const {
  if (count_ == 0)
    return 0;
  if (rank <= 1)
    return min_;
  if (rank >= count_)
    return max_;
  uint64_t seen = 0;
  const size_t last = BucketOf(max_);
  for (size_t b = BucketOf(min_); b <= last; b++) {
    if (b >= low_.size() && b % kSubBuckets == 0 && !groups_[b / kSubBuckets - 1]) {
      b += kSubBuckets - 1;  // a power of two with no value
      continue;
    }
    seen += CounterAt(b);
    if (seen >= rank) {
      const uint64_t low = BucketLow(b), high = BucketHigh(b);
      return std::clamp(low + (high - low) / 2, min_, max_);
    }
  }
  return max_;  // not reached: the counters add up to count_
}

}  // namespace hmbtrace
