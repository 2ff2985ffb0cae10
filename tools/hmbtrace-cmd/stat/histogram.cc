// SPDX-License-Identifier: GPL-2.0-only

#include "stat/histogram.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <iterator>

#include "stat/stat.h"

namespace hmbtrace {

size_t Log2Histogram::BucketOf(uint64_t value) {
  return value == 0 ? 0 : static_cast<size_t>(std::bit_width(value));
}

uint64_t Log2Histogram::BucketLow(size_t bucket) {
  return bucket == 0 ? 0 : uint64_t{1} << (bucket - 1);
}

uint64_t Log2Histogram::BucketHigh(size_t bucket) {
  return bucket == 0 ? 1 : bucket >= 64 ? 0 : uint64_t{1} << bucket;
}

void Log2Histogram::Add(uint64_t value, uint64_t n) {
  counts_[BucketOf(value)] += n;
  total_ += n;
}

void Log2Histogram::Merge(const Log2Histogram& other) {
  for (size_t b = 0; b < kBuckets; b++)
    counts_[b] += other.counts_[b];
  total_ += other.total_;
}

namespace {

// bpftrace's labels: 1024 -> "1K", 3 << 20 -> "3M"; exact powers only
// (bucket ends are powers of two, so every label is exact).
std::string Suffixed(uint64_t v) {
  static const char* const kSuffix[] = {"", "K", "M", "G", "T", "P", "E"};
  size_t i = 0;
  while (v >= 1024 && v % 1024 == 0 && i + 1 < std::size(kSuffix)) {
    v /= 1024;
    i++;
  }
  return std::to_string(v) + kSuffix[i];
}

std::string Label(size_t bucket) {
  if (bucket == 0)
    return "[0]";
  if (bucket == 1)
    return "[1]";
  const uint64_t high = Log2Histogram::BucketHigh(bucket);
  return "[" + Suffixed(Log2Histogram::BucketLow(bucket)) + ", " +
         (high ? Suffixed(high) : std::string("16E")) + ")";
}

}  // namespace

std::string Log2Histogram::Text(const std::string& indent, int bar_width) const {
  size_t first = kBuckets, last = 0;
  uint64_t peak = 0;
  for (size_t b = 0; b < kBuckets; b++) {
    if (!counts_[b])
      continue;
    first = std::min(first, b);
    last = b;
    peak = std::max(peak, counts_[b]);
  }
  if (first == kBuckets)
    return "";
  std::string out;
  for (size_t b = first; b <= last; b++) {
    std::string label = Label(b);
    label.resize(std::max<size_t>(label.size(), 14), ' ');
    std::string count = std::to_string(counts_[b]);
    count.insert(0, count.size() < 10 ? 10 - count.size() : 0, ' ');
    // Rounded down, as bpftrace does: a bar is full only at the peak.
    const auto bar = static_cast<size_t>(counts_[b] * static_cast<uint64_t>(bar_width) / peak);
    out += indent + label + count + " |" + std::string(bar, '@') +
           std::string(static_cast<size_t>(bar_width) - bar, ' ') + "|\n";
  }
  return out;
}

nlohmann::json Log2Histogram::Json() const {
  nlohmann::json out = nlohmann::json::array();
  for (size_t b = 0; b < kBuckets; b++) {
    if (!counts_[b])
      continue;
    const uint64_t high = BucketHigh(b);
    out.push_back({{"low", BucketLow(b)},
                   {"high", high ? nlohmann::json(high) : nlohmann::json(nullptr)},
                   {"count", counts_[b]}});
  }
  return out;
}

uint64_t TimeBinNs(uint64_t begin, uint64_t end, size_t bins) {
  const uint64_t span = end > begin ? end - begin : 0;
  const uint64_t per = span / std::max<size_t>(bins, 1);
  return per == UINT64_MAX ? per : per + 1;
}

std::vector<uint64_t> BinByTime(const std::vector<uint64_t>& times, uint64_t begin, uint64_t end,
                                size_t bins) {
  std::vector<uint64_t> out(std::max<size_t>(bins, 1), 0);
  const uint64_t bin_ns = TimeBinNs(begin, end, bins);
  for (uint64_t t : times) {
    const uint64_t offset = std::min(std::max(t, begin), std::max(end, begin)) - begin;
    out[std::min<uint64_t>(offset / bin_ns, out.size() - 1)]++;
  }
  return out;
}

std::string Sparkline(const std::vector<uint64_t>& bins) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const uint64_t peak = bins.empty() ? 0 : *std::max_element(bins.begin(), bins.end());
  std::string out;
  for (uint64_t n : bins) {
    if (!n) {
      out += ' ';
      continue;
    }
    // 1..peak onto 0..7: the peak on the full block, any other on at least the lowest.
    const auto level = static_cast<size_t>(n * 7 / peak);
    out += kBlocks[std::min<size_t>(level, 7)];
  }
  return out;
}

namespace {

std::string Duration(uint64_t ns) {
  char buf[32];
  if (ns >= 1000000000u)
    std::snprintf(buf, sizeof(buf), "%.3g s", static_cast<double>(ns) / 1e9);
  else if (ns >= 1000000u)
    std::snprintf(buf, sizeof(buf), "%.3g ms", static_cast<double>(ns) / 1e6);
  else if (ns >= 1000u)
    std::snprintf(buf, sizeof(buf), "%.3g us", static_cast<double>(ns) / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%llu ns", static_cast<unsigned long long>(ns));
  return buf;
}

}  // namespace

std::string LatencyHistogramsText(const CoreStats& cores, uint16_t dev, uint64_t hz) {
  std::map<std::string, Log2Histogram> merged;
  for (const auto& [key, cs] : cores) {
    if (key.first != dev)
      continue;
    for (const auto& [name, lat] : cs.latencies)
      merged[name].Merge(lat.plot);
  }
  if (merged.empty())
    return "";
  std::string out = std::string("  latency histograms (all cores, ") + (hz ? "ns" : "ticks") + "):\n";
  for (const auto& [name, h] : merged)
    out += "    " + name + ":\n" + h.Text("      ");
  return out;
}

std::vector<uint64_t> ActivityBins(const CoreStat& cs, uint64_t begin, uint64_t end) {
  if (!cs.activity.empty())
    return cs.activity;
  return BinByTime(cs.record_times, begin, end, kActivityBins);
}

std::string ActivityText(const CoreStat& cs, uint64_t begin, uint64_t end) {
  const std::vector<uint64_t> bins = ActivityBins(cs, begin, end);
  const uint64_t peak = *std::max_element(bins.begin(), bins.end());
  return "    activity |" + Sparkline(bins) + "| " + Duration(TimeBinNs(begin, end, kActivityBins)) +
         " per bin, peak " + std::to_string(peak) + " records\n";
}

nlohmann::json CorePlotsJson(const CoreStat& cs, uint64_t hz, uint64_t begin, uint64_t end) {
  nlohmann::json hist = nlohmann::json::object();
  for (const auto& [name, lat] : cs.latencies)
    hist[name] = {{"unit", hz ? "ns" : "ticks"}, {"buckets", lat.plot.Json()}};
  return {{"latency_histograms", hist},
          {"activity",
           {{"begin_ns", begin},
            {"bin_ns", TimeBinNs(begin, end, kActivityBins)},
            {"records", ActivityBins(cs, begin, end)}}}};
}

}  // namespace hmbtrace
