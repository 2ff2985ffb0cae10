// SPDX-License-Identifier: GPL-2.0-only
//
// Terminal plots for hmbtrace-cmd stat: log2 latency histograms drawn as
// bpftrace's hist() draws them, and activity over time as a sparkline.
// Pure functions over counts: the numbers are also in stat --json.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_HISTOGRAM_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_HISTOGRAM_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hmbtrace {

// Power-of-two buckets: bucket 0 holds the value 0, bucket k >= 1 holds
// [2^(k-1), 2^k). 65 buckets cover every uint64_t.
class Log2Histogram {
 public:
  static constexpr size_t kBuckets = 65;

  void Add(uint64_t value, uint64_t n = 1);
  void Merge(const Log2Histogram& other);
  static size_t BucketOf(uint64_t value);
  static uint64_t BucketLow(size_t bucket);
  // Exclusive upper end; 0 for the last bucket, whose end is 2^64.
  static uint64_t BucketHigh(size_t bucket);

  uint64_t count(size_t bucket) const { return counts_[bucket]; }
  uint64_t total() const { return total_; }

  // bpftrace's layout: one line per bucket from the first to the last that
  // is not empty, "[low, high)" with K/M/G/T suffixes (powers of 1024),
  // the count, and a bar of '@' scaled to the fullest bucket. Each line
  // starts with `indent`. Empty string for an empty histogram.
  std::string Text(const std::string& indent, int bar_width = 40) const;
  // [{"low": L, "high": H, "count": N}, ...] for the buckets that are not
  // empty ("high" null for the last bucket).
  nlohmann::json Json() const;

 private:
  uint64_t counts_[kBuckets] = {};
  uint64_t total_ = 0;
};

// The width of one of `bins` equal slices of [begin, end]: the span over
// `bins`, plus one so that `end` falls in the last slice.
uint64_t TimeBinNs(uint64_t begin, uint64_t end, size_t bins);
// Counts of `times` in `bins` (>= 1) slices of TimeBinNs from `begin`; a
// time outside [begin, end] is counted in the first or last slice.
std::vector<uint64_t> BinByTime(const std::vector<uint64_t>& times, uint64_t begin, uint64_t end,
                                size_t bins);

// One character per bin, ' ' for 0 and "▁▂▃▄▅▆▇█" scaled to the largest
// bin (any bin that is not 0 gets at least "▁").
std::string Sparkline(const std::vector<uint64_t>& bins);

// stat's plots.
struct CoreStat;
using CoreStats = std::map<std::pair<uint16_t, uint16_t>, CoreStat>;  // by (dev, core)
inline constexpr size_t kActivityBins = 50;

// Latencies are bucketed in ns when the firmware clock rate is known
// (hz != 0), else in ticks (CoreStat::AddLatency, with the same hz).
// One log2 histogram per latency metric of device `dev`, all its cores
// together: "  latency histograms (all cores, ns):" and per metric its
// name and bpftrace-style lines. Empty when there are no latencies.
std::string LatencyHistogramsText(const CoreStats& cores, uint16_t dev, uint64_t hz);
// The core's records over [begin, end] in kActivityBins bins (what the
// collector counted, or its record times binned).
std::vector<uint64_t> ActivityBins(const CoreStat& cs, uint64_t begin, uint64_t end);
// "    activity |SPARKLINE| BIN per bin, peak N records": the core's records
// (host time) over [begin, end] of the capture, in kActivityBins bins.
std::string ActivityText(const CoreStat& cs, uint64_t begin, uint64_t end);
// For stat --json, per core: {"latency_histograms": {metric: {"unit",
// "buckets"}}, "activity": {"begin_ns", "bin_ns", "records"}}.
nlohmann::json CorePlotsJson(const CoreStat& cs, uint64_t hz, uint64_t begin, uint64_t end);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_HISTOGRAM_H_
