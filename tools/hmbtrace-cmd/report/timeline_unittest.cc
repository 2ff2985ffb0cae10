// SPDX-License-Identifier: GPL-2.0-only
//
// The order of hmbtrace-cmd report's lines: firmware records at their
// converted time among host lines, within a reorder margin.

#include "report/timeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hmbtrace {
namespace {

constexpr uint64_t kMs = 1000000;
using Kind = TimelineLine::Kind;

TimelineLine Host(uint64_t ts, const std::string& body, int cpu = 1) {
  TimelineLine l;
  l.kind = Kind::kHost;
  l.ts = ts;
  l.cpu = cpu;
  l.body = body;
  return l;
}

TimelineLine Record(uint64_t drained,
                    uint64_t happened,
                    uint16_t core,
                    const std::string& body,
                    int cpu = 0) {
  TimelineLine l = Host(drained, body, cpu);
  l.kind = Kind::kRecord;
  l.at = happened;
  l.core = core;
  return l;
}

TimelineLine Pinned(Kind kind,
                    uint64_t ts,
                    const std::string& body,
                    int cpu = 0,
                    uint16_t core = 0) {
  TimelineLine l = Host(ts, body, cpu);
  l.kind = kind;
  l.core = core;
  return l;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl - start));
  return out;
}

TEST(Timeline, ARecordDrainedAfterAMarkerThatHappenedBeforeItComesFirst) {
  Timeline t(100 * kMs);
  t.Add(Host(1002 * kMs, "MARKER host write"));
  t.Add(Record(1003 * kMs, 1001 * kMs + 700000, 0, "seq=3"));
  t.Add(Record(1003 * kMs, 1002 * kMs + 300000, 0, "seq=4"));
  std::string out;
  t.Finish(&out);
  EXPECT_EQ(Lines(out),
            (std::vector<std::string>{"1.001700 [000] seq=3", "1.002000 [001] MARKER host write",
                                      "1.002300 [000] seq=4"}));
  EXPECT_EQ(t.late(), 0u);
}

TEST(Timeline, LinesWaitUntilTheCaptureIsAMarginPastThem) {
  Timeline t(100 * kMs);
  std::string out;
  t.Add(Host(1000 * kMs, "MARKER a"));
  t.Release(&out);
  EXPECT_EQ(out, "");  // a record drained up to 100 ms later may still go before it
  t.Add(Host(1099 * kMs, "MARKER b"));
  t.Release(&out);
  EXPECT_EQ(out, "");
  t.Add(Host(1100 * kMs, "MARKER c"));
  t.Release(&out);
  EXPECT_EQ(Lines(out), std::vector<std::string>{"1.000000 [001] MARKER a"});
}

TEST(Timeline, ARecordDrainedPastTheMarginIsPlacedLateMarkedAndCounted) {
  Timeline t(100 * kMs);
  std::string out;
  t.Add(Host(1400 * kMs, "MARKER checkpoint"));
  t.Add(Host(1510 * kMs, "MARKER after"));
  t.Release(&out);  // "checkpoint" is final
  t.Add(Record(1520 * kMs, 1300 * kMs, 1, "seq=0"));
  t.Finish(&out);
  EXPECT_EQ(Lines(out),
            (std::vector<std::string>{
                "1.400000 [001] MARKER checkpoint",
                "1.400000 [000] seq=0 [placed late by 100.000ms: drained past the 100ms "
                "reorder margin]",
                "1.510000 [001] MARKER after"}));
  EXPECT_EQ(t.late(), 1u);
  EXPECT_EQ(t.late_max_ns(), 100 * kMs);
  // With a wider margin the same stream places it.
  Timeline wide(250 * kMs);
  out.clear();
  wide.Add(Host(1400 * kMs, "MARKER checkpoint"));
  wide.Add(Host(1510 * kMs, "MARKER after"));
  wide.Release(&out);
  wide.Add(Record(1520 * kMs, 1300 * kMs, 1, "seq=0"));
  wide.Finish(&out);
  EXPECT_EQ(Lines(out).front(), "1.300000 [000] seq=0");
  EXPECT_EQ(wide.late(), 0u);
}

TEST(Timeline, ACoreStaysInSequenceOrderWhenARefitMovesItsTimeBack) {
  Timeline t(100 * kMs);
  t.Add(Record(1010 * kMs, 1005 * kMs, 0, "seq=7"));
  // The next fit puts seq 8 2 us before seq 7 (within the fits' bounds).
  t.Add(Record(1011 * kMs, 1005 * kMs - 2000, 0, "seq=8"));
  // Another core's record is not held back by core 0's.
  t.Add(Record(1011 * kMs, 1004 * kMs, 1, "core 1 seq=3", 1));
  std::string out;
  t.Finish(&out);
  EXPECT_EQ(Lines(out), (std::vector<std::string>{"1.004000 [001] core 1 seq=3",
                                                  "1.005000 [000] seq=7", "1.005000 [000] seq=8"}));
}

TEST(Timeline, ARecordIsNeverPlacedAfterItWasDrained) {
  Timeline t(100 * kMs);
  t.Add(Record(1000 * kMs, 1002 * kMs, 0, "seq=1"));  // a wrong fit
  t.Add(Host(1001 * kMs, "MARKER m"));
  std::string out;
  t.Finish(&out);
  EXPECT_EQ(Lines(out),
            (std::vector<std::string>{"1.000000 [000] seq=1", "1.001000 [001] MARKER m"}));
}

TEST(Timeline, MetadataAndLossesStayBeforeTheRecordsTheyDescribe) {
  Timeline t(100 * kMs);
  t.Add(Host(1199 * kMs, "MARKER m"));
  // The module found the reset at 1.2005, after the firmware had written
  // generation 2's first record (1.1980, before the marker).
  t.Add(Pinned(Kind::kBeforeDevCpu, 1200 * kMs + 500000, "STATE reset", 0));
  t.Add(Pinned(Kind::kBeforeCore, 1200 * kMs + 500000, "LOST 3 records", 0, 0));
  t.Add(Pinned(Kind::kBeforeDevCpu, 1200 * kMs + 500000, "STATE reset", 1));
  t.Add(Record(1200 * kMs + 600000, 1198 * kMs, 0, "seq=0"));
  std::string out;
  t.Finish(&out);
  EXPECT_EQ(Lines(out),
            (std::vector<std::string>{"1.198000 [000] STATE reset", "1.198000 [000] LOST 3 records",
                                      "1.198000 [000] seq=0", "1.199000 [001] MARKER m",
                                      "1.200500 [001] STATE reset"}));
}

TEST(Timeline, RecordsOfManyCoresComeOutInTimeOrderAndNoneIsLost) {
  Timeline t(100 * kMs);
  std::string out;
  constexpr int kCores = 64;
  constexpr int kRecords = 20000;
  for (int i = 0; i < kRecords; i++) {
    const auto core = static_cast<uint16_t>(i * 7 % kCores);
    const uint64_t drained = 1000 * kMs + static_cast<uint64_t>(i) * 10000;
    // Each core drained a few ms after it happened, by how much per core.
    const uint64_t happened = drained - (1 + static_cast<uint64_t>(core) % 13) * kMs;
    t.Add(Record(drained, happened, core, "seq=" + std::to_string(i), core % 4));
    t.Release(&out);
  }
  t.Finish(&out);
  const std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kRecords));
  for (size_t i = 1; i < lines.size(); i++)
    ASSERT_LE(std::stod(lines[i - 1]), std::stod(lines[i])) << lines[i - 1] << " / " << lines[i];
  EXPECT_EQ(t.late(), 0u);
  EXPECT_EQ(t.held(), 0u);
}

}  // namespace
}  // namespace hmbtrace
