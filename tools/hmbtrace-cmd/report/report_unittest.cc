// SPDX-License-Identifier: GPL-2.0-only
#include "report/report.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "capture/fixture_testutil.h"
#include "hmbtrace/status_testutil.h"
#include "report/report_testutil.h"

namespace hmbtrace {
namespace {

bool Has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The index of the first line that contains `text`, or -1.
long Find(const std::vector<std::string>& lines, const std::string& text) {
  for (size_t i = 0; i < lines.size(); i++)
    if (lines[i].find(text) != std::string::npos)
      return static_cast<long>(i);
  return -1;
}

// What `hmbtrace-cmd report` prints: both passes, in timeline order.
std::vector<std::string> Ordered(const std::string& path,
                                 const ReportOptions& options = {},
                                 ReportSummary* summary = nullptr) {
  return ReportLinesOf(path, options, summary);
}

// Expected lines were checked against `trace-cmd report -N -R` of the
// fixture. E.g. core 1 seq 2993 is event_id=4 payload
// [05, 01, bd, 00, e3, 01, 3a, 64, 0c, 00]: nand_program die 5, plane 1,
// block 0xbd, page 0x1e3, latency 0x0c643a.
TEST(Report, PrintsDecodedEventNamesAndFieldValuesOfKnownRecords) {
  Reporter reporter({});
  const std::vector<std::string> lines = ReportLines(FixturePath(), reporter);
  EXPECT_TRUE(Has(lines,
                  "7.559639 [001] dev=0 core=1 seq=2993 fw_ts=9655187966 nand_program: die=5 "
                  "plane=1 block=189 page=483 latency=812090"));
  // payload [06, 00, fa, 03, 00, 00, c2, 85, 01, 00]
  EXPECT_TRUE(Has(lines,
                  "7.559697 [001] dev=0 core=1 seq=3017 fw_ts=9659380765 cmd_complete: qid=6 "
                  "cid=1018 status=SUCCESS latency=99778"));
  // payload [01, 02, c9, 00, 55, 01, d9, c8, 00, 00]
  EXPECT_TRUE(Has(lines,
                  "7.567739 [000] dev=0 core=0 seq=3017 fw_ts=9659381526 nand_read: die=1 "
                  "plane=2 block=201 page=341 latency=51417"));
  EXPECT_EQ(lines.size(), 1035u + 2u + 1u);  // records, hmb_state, one dictionary completed
}

TEST(Report, RecordsBeforeTheDictionaryPrintIdAndHex) {
  Reporter reporter({});
  const std::vector<std::string> lines = ReportLines(FixturePath(), reporter);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(),
            "7.535706 [001] dev=0 core=3 seq=2865 fw_ts=9628963750 event_id=2 (no dictionary "
            "yet) payload=0800ee03000025420000");
  EXPECT_TRUE(Has(lines,
                  "7.556441 [000] dev=0 DICTIONARY producer_gen=1 complete: 10 events, 3888 "
                  "bytes, build_id=5b9b38b82b841265842dfd3b20dfd149a59ed6ea"));
  EXPECT_TRUE(
      Has(lines,
          "7.556322 [000] dev=0 STATE attached name=0000:00:02.0 producer_gen=1 "
          "nr_cores=4 clock_hz=1000000000 build_id=5b9b38b82b841265842dfd3b20dfd149a59ed6ea"));
}

TEST(Report, WithTheFirstPassRecordsBeforeTheDictionaryAreDecodedToo) {
  DictionaryStore lookahead;
  std::string error;
  ASSERT_TRUE(StatusOk(CollectDictionaries(FixturePath(), &lookahead), &error)) << error;
  Reporter reporter({}, &lookahead);
  const std::vector<std::string> lines = ReportLines(FixturePath(), reporter);
  ASSERT_FALSE(lines.empty());
  // payload [08, 00, ee, 03, 00, 00, 25, 42, 00, 00]: qid 8, cid 0x3ee,
  // status 0, latency 0x4225.
  EXPECT_EQ(lines.front(),
            "7.535706 [001] dev=0 core=3 seq=2865 fw_ts=9628963750 cmd_complete: qid=8 "
            "cid=1006 status=SUCCESS latency=16933");
  for (const std::string& line : lines)
    EXPECT_EQ(line.find("(no dictionary yet)"), std::string::npos) << line;
  // The dictionary line stays where its hmb_dict events are.
  EXPECT_TRUE(Has(lines,
                  "7.556441 [000] dev=0 DICTIONARY producer_gen=1 complete: 10 events, 3888 "
                  "bytes, build_id=5b9b38b82b841265842dfd3b20dfd149a59ed6ea"));
  EXPECT_EQ(lines.size(), 1035u + 2u + 1u);
}

TEST(Report, CoreAndEventFiltersAndRawPayload) {
  ReportOptions options;
  options.cores = {1};
  options.events = {"cmd_complete"};
  options.raw = true;
  Reporter reporter(options);
  const std::vector<std::string> lines = ReportLines(FixturePath(), reporter);
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) {
    EXPECT_NE(line.find(" core=1 "), std::string::npos) << line;
    EXPECT_NE(line.find(" cmd_complete: "), std::string::npos) << line;
  }
  EXPECT_TRUE(Has(lines,
                  "7.559697 [001] dev=0 core=1 seq=3017 fw_ts=9659380765 cmd_complete: qid=6 "
                  "cid=1018 status=SUCCESS latency=99778 payload=0600fa030000c2850100"));
}

TEST(Report, ADictionaryChunkThatLiesIsReportedAndTheNextCopyIsUsed) {
  TempFile lying("lying-dict.dat", FixtureWithLyingDictChunk());
  Reporter reporter({});
  const std::vector<std::string> lines = ReportLines(lying.path(), reporter);
  EXPECT_TRUE(Has(lines,
                  "7.556432 [000] DICTIONARY dev 0 producer_gen 1: dictionary chunk at "
                  "offset 70000 (1024 bytes, total_len 3888): runs past total_len, dropped"));
  // The other CPU's copy of that chunk completes it.
  EXPECT_TRUE(Has(lines,
                  "7.559833 [001] dev=0 DICTIONARY producer_gen=1 complete: 10 events, 3888 "
                  "bytes, build_id=5b9b38b82b841265842dfd3b20dfd149a59ed6ea"));
}

TEST(Report, TraceMarkerLinesAppearInTheFirmwareTimeline) {
  Reporter reporter({});
  const std::vector<std::string> lines = ReportLines(MarkersFixturePath(), reporter);
  const auto marker = std::find(lines.begin(), lines.end(), "11.786078 [000] MARKER HMBMARK n=39");
  ASSERT_NE(marker, lines.end());
  // Between the records around it in host time (trace-cmd report shows the same order).
  ASSERT_NE(marker, lines.begin());
  EXPECT_EQ(*(marker - 1),
            "11.784148 [000] dev=0 core=2 seq=7002 fw_ts=13222252201 nand_read: die=8 plane=2 "
            "block=168 page=736 latency=48122");
  ReportOptions only_markers;
  only_markers.events = {"marker"};
  Reporter filtered(only_markers);
  EXPECT_EQ(ReportLines(MarkersFixturePath(), filtered),
            std::vector<std::string>{"11.786078 [000] MARKER HMBMARK n=39"});
}

TEST(Report, LossesStateAndMarkersAreLinesOfTheTimeline) {
  Reporter reporter({});
  CaptureEvent lost;
  lost.kind = CaptureKind::kLost;
  lost.ts = 8127951000;
  lost.cpu = 1;
  lost.core = 1;
  lost.count = 296;
  lost.reason = 0;
  lost.at_seq = 4510;
  EXPECT_EQ(reporter.Line(lost),
            "8.127951 [001] dev=0 core=1 LOST 296 records (overwritten) before seq=4510\n");
  CaptureEvent marker;
  marker.kind = CaptureKind::kMarker;
  marker.ts = 9000000000;
  const std::string text = "start fio\n";
  marker.data = std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  EXPECT_EQ(reporter.Line(marker), "9.000000 [000] MARKER start fio\n");
  CaptureEvent state;
  state.kind = CaptureKind::kState;
  state.ts = 9242032000;
  state.state = kStateReset;
  state.producer_gen = 2;
  state.nr_cores = 4;
  state.clock_hz = 1000000000;
  state.name = "0000:00:02.0";
  EXPECT_EQ(reporter.Line(state),
            "9.242032 [000] dev=0 STATE reset name=0000:00:02.0 producer_gen=2 nr_cores=4 "
            "clock_hz=1000000000 build_id=0000000000000000000000000000000000000000\n");
}

// A capture without hmb_clock (a module before clock fits): records stay
// where the drain put them, with nothing about converted time.
TEST(Report, WithoutClockFitsTheOrderIsTheCapturesOwn) {
  DictionaryStore lookahead;
  std::string error;
  ASSERT_TRUE(StatusOk(CollectDictionaries(MarkersFixturePath(), &lookahead), &error)) << error;
  Reporter reporter({}, &lookahead);
  const std::vector<std::string> in_ftrace_order = ReportLines(MarkersFixturePath(), reporter);
  ReportSummary summary;
  EXPECT_EQ(Ordered(MarkersFixturePath(), {}, &summary), in_ftrace_order);
  EXPECT_EQ(summary.not_converted, 0u);
  EXPECT_EQ(summary.late, 0u);
  for (const std::string& line : in_ftrace_order)
    EXPECT_EQ(line.find("fw_time="), std::string::npos) << line;
}

TEST(ReportClock, ARecordDrainedAfterAMarkerButDoneBeforeItPrintsBeforeIt) {
  // In the capture (ftrace order) the record comes after the marker ...
  Reporter stream_order({});
  const std::vector<std::string> raw = ReportLines(ClockFixturePath(), stream_order);
  ASSERT_LT(Find(raw, "MARKER host write"), Find(raw, "core=0 seq=3 "));
  // ... the report puts it where its converted time says, with its bound.
  const std::vector<std::string> lines = Ordered(ClockFixturePath());
  const long marker = Find(lines, "MARKER host write");
  ASSERT_GE(marker, 1);
  EXPECT_EQ(lines[marker - 1],
            "1.001700 [000] dev=0 core=0 seq=3 fw_ts=9001700086 nand_read: die=1 plane=2 "
            "block=1205 page=317 latency=83640 fw_time=1.001700000 \u00b13us");
  EXPECT_EQ(lines[marker], "1.002000 [001] MARKER host write");
  EXPECT_EQ(lines[marker + 1],
            "1.002300 [000] dev=0 core=0 seq=4 fw_ts=9002300116 nand_read: die=2 plane=0 "
            "block=1620 page=427 latency=80694 fw_time=1.002300000 \u00b13us");
}

TEST(ReportClock, ARecordBeforeAnyFitIsFlaggedAndPlacedAtItsFtraceTime) {
  ReportSummary summary;
  const std::vector<std::string> lines = Ordered(ClockFixturePath(), {}, &summary);
  EXPECT_TRUE(Has(lines,
                  "1.000100 [000] dev=0 core=0 seq=0 fw_ts=8998999950 cmd_complete: qid=1 "
                  "cid=966 status=SUCCESS latency=28987 fw_time=? (no clock fit)"));
  // Three before gen 1's fit, one before gen 2's.
  EXPECT_EQ(summary.not_converted, 4u);
  EXPECT_LT(Find(lines, "core=0 seq=2 "), Find(lines, "CLOCK producer_gen=1"));
}

TEST(ReportClock, AStaleFitIsUsedAndMarked) {
  const std::vector<std::string> lines = Ordered(ClockFixturePath());
  EXPECT_TRUE(Has(lines,
                  "1.100000 [000] dev=0 CLOCK producer_gen=1 offset=-7.999550021 "
                  "ns_per_tick=0.999950002 rate=+50.000ppm bound=3us slope_err=1.000ppm "
                  "samples=16 window=0.900s rtt_min=3us stale"));
  EXPECT_TRUE(Has(lines,
                  "1.100100 [000] dev=0 core=0 seq=5 fw_ts=9100105006 nand_read: die=1 plane=0 "
                  "block=1009 page=487 latency=54807 fw_time=1.100100000 \u00b13us (stale fit)"));
}

TEST(ReportClock, AResetSwitchesToTheNewGenerationsFit) {
  const std::vector<std::string> lines = Ordered(ClockFixturePath());
  // Generation 2's first record came before its fit: gen 1's must not convert it.
  EXPECT_TRUE(Has(lines,
                  "1.200500 [000] dev=0 core=0 seq=0 fw_ts=200011 cmd_complete: qid=1 cid=971 "
                  "status=SUCCESS latency=23848 fw_time=? (no clock fit of producer_gen 2)"));
  EXPECT_TRUE(Has(lines,
                  "1.201200 [000] dev=0 core=0 seq=1 fw_ts=1200061 cmd_complete: qid=1 cid=1002 "
                  "status=SUCCESS latency=39481 fw_time=1.201199999 \u00b13us"));
  EXPECT_LT(Find(lines, "STATE reset"), Find(lines, "fw_ts=200011 "));
}

TEST(ReportClock, ARecordDrainedPastTheReorderMarginIsMarkedAndCounted) {
  ReportSummary summary;
  std::vector<std::string> lines = Ordered(ClockFixturePath(), {}, &summary);
  EXPECT_EQ(summary.late, 1u);
  EXPECT_EQ(summary.late_max_ns, 100000001u);
  const long late = Find(lines, "fw_ts=100005001 ");
  ASSERT_GE(late, 1);
  EXPECT_EQ(lines[late - 1], "1.400000 [000] MARKER checkpoint");
  EXPECT_EQ(lines[late],
            "1.400000 [001] dev=0 core=1 seq=0 fw_ts=100005001 cmd_fetch: qid=1 cid=1018 "
            "opc=read nsid=1 slba=284535352 nlb=31 fw_time=1.299999999 \u00b17us [placed late by "
            "100.001ms: drained past the 100ms reorder margin]");
  // A margin longer than its 220 ms drain delay places it.
  ReportOptions wide;
  wide.reorder_margin_ms = 300;
  lines = Ordered(ClockFixturePath(), wide, &summary);
  EXPECT_EQ(summary.late, 0u);
  EXPECT_EQ(lines[Find(lines, "MARKER checkpoint") - 1],
            "1.300000 [001] dev=0 core=1 seq=0 fw_ts=100005001 cmd_fetch: qid=1 cid=1018 "
            "opc=read nsid=1 slba=284535352 nlb=31 fw_time=1.299999999 \u00b17us");
}

TEST(ReportClock, TheClockEventFilterShowsTheFits) {
  ReportOptions only;
  only.events = {"clock"};
  const std::vector<std::string> lines = Ordered(ClockFixturePath(), only);
  ASSERT_EQ(lines.size(), 6u);
  for (const std::string& line : lines)
    EXPECT_NE(line.find(" CLOCK producer_gen="), std::string::npos) << line;
}

}  // namespace
}  // namespace hmbtrace
