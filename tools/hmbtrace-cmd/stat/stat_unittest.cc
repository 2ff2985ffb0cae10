// SPDX-License-Identifier: GPL-2.0-only
#include "stat/stat.h"

#include <gtest/gtest.h>

#include "capture/count_records_testutil.h"
#include "capture/fixture_testutil.h"
#include "hmbtrace/status_testutil.h"
#include "join/nvme_capture.h"

namespace hmbtrace {
namespace {

struct StatRun {
  DictionaryStore dicts;
  std::unique_ptr<StatCollector> stat;
};

// As RunStat reads: the first pass's span given, so that the activity is
// counted as records come; `with_span` false keeps every record's time.
std::unique_ptr<StatRun> RunOn(const std::string& path, bool with_span = true) {
  auto run = std::make_unique<StatRun>();
  std::string error;
  CaptureScan scan;
  EXPECT_TRUE(StatusOk(CollectDictionaries(path, &run->dicts, &scan), &error)) << error;
  run->stat = std::make_unique<StatCollector>(&run->dicts);
  if (with_span)
    run->stat->SetSpan(scan.first_ts, scan.last_ts);
  EXPECT_TRUE(StatusOk(ReadCapture(path,
                                   [&run](const CaptureEvent& ev) {
                                     run->stat->Add(ev);
                                     return true;
                                   }),
                       &error))
      << error;
  run->stat->Finish();
  return run;
}

TEST(Stat, PerCoreRecordCountsEqualAnIndependentCountOfTheFixture) {
  uint64_t independent[8] = {};
  ASSERT_EQ(count_hmb_records_per_core(FixturePath().c_str(), independent, 8), 1035);
  auto run = RunOn(FixturePath());
  const nlohmann::json doc = run->stat->Json("f");
  ASSERT_EQ(doc["devices"].size(), 1u);
  const nlohmann::json& cores = doc["devices"][0]["cores"];
  ASSERT_EQ(cores.size(), 4u);
  for (size_t k = 0; k < 4; k++) {
    EXPECT_EQ(cores[k]["core"], k);
    EXPECT_EQ(cores[k]["records"], independent[k]) << "core " << k;
    EXPECT_EQ(cores[k]["records"], kFixtureRecordsPerCore[k]) << "core " << k;
    EXPECT_EQ(cores[k]["lost"]["total"], 0u);
    EXPECT_EQ(cores[k]["seq_check"], "agrees");
    uint64_t per_event = 0;
    for (const auto& [name, n] : cores[k]["events"].items())
      per_event += n.get<uint64_t>();
    EXPECT_EQ(per_event, independent[k]);
  }
  // core 3 runs from seq 2865 to 3133 (trace-cmd report), no gap.
  EXPECT_EQ(cores[3]["first_seq"], 2865u);
  EXPECT_EQ(cores[3]["last_seq"], 3133u);
  EXPECT_EQ(doc["devices"][0]["clock_hz"], 1000000000u);
  EXPECT_EQ(doc["devices"][0]["name"], "0000:00:02.0");
}

TEST(Stat, CountsMarkersAndRecordsOfTheMarkersCapture) {
  uint64_t independent[8] = {};
  ASSERT_EQ(count_hmb_records_per_core(MarkersFixturePath().c_str(), independent, 8), 1183);
  auto run = RunOn(MarkersFixturePath());
  const nlohmann::json doc = run->stat->Json("f");
  EXPECT_EQ(doc["markers"], 1u);
  for (size_t k = 0; k < 4; k++) {
    EXPECT_EQ(doc["devices"][0]["cores"][k]["records"], independent[k]) << "core " << k;
    EXPECT_EQ(doc["devices"][0]["cores"][k]["records"], kMarkersFixtureRecordsPerCore[k]);
  }
}

TEST(Stat, TextNamesEventsAndLatenciesInTicksAndMicroseconds) {
  auto run = RunOn(FixturePath());
  const std::string text = run->stat->Text("record-small.dat");
  EXPECT_NE(text.find("record-small.dat: 1035 records, 0 lost (0 hmb_lost), 2 hmb_state, 8 "
                      "hmb_dict, 0 markers"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  core 3: 269 records, seq 2865..3133, lost 0\n"), std::string::npos);
  EXPECT_NE(text.find("cmd_complete.latency"), std::string::npos);
  EXPECT_NE(text.find("cmd_fetch->cmd_complete"), std::string::npos);
}

TEST(Stat, ADictionaryChunkThatLiesIsCountedAndReported) {
  TempFile lying("lying-dict.dat", FixtureWithLyingDictChunk());
  auto run = RunOn(lying.path());
  const nlohmann::json doc = run->stat->Json("f");
  EXPECT_EQ(doc["dictionary_problems"]["offset past total_len"], 1u);
  const std::string text = run->stat->Text("f");
  EXPECT_NE(text.find("dictionary chunks rejected: offset past total_len 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("warning: dev 0 producer_gen 1: dictionary chunk at offset 70000"),
            std::string::npos)
      << text;
  // The other copy still decodes every core.
  EXPECT_EQ(doc["devices"][0]["dictionary_events"], 10u);
}

CaptureEvent Record(uint16_t core, uint64_t seq) {
  CaptureEvent ev;
  ev.kind = CaptureKind::kRecord;
  ev.core = core;
  ev.seq = seq;
  ev.event_id = 1;
  return ev;
}

CaptureEvent Lost(uint16_t core, uint64_t count, uint64_t at_seq) {
  CaptureEvent ev;
  ev.kind = CaptureKind::kLost;
  ev.core = core;
  ev.count = count;
  ev.at_seq = at_seq;
  return ev;
}

TEST(Stat, LossesThatMatchTheSequenceGapsAgree) {
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  for (const CaptureEvent& ev :
       {Lost(0, 10, 10), Record(0, 10), Record(0, 11), Lost(0, 3, 15), Record(0, 15)})
    stat.Add(ev);
  stat.Finish();
  const CoreStat& cs = stat.cores().at({0, 0});
  EXPECT_EQ(cs.lost_total(), 13u);
  EXPECT_EQ(cs.lost_before_first, 10u);
  EXPECT_TRUE(cs.seq_agrees());
  EXPECT_EQ(stat.Text("f").find("DISAGREEMENT"), std::string::npos);
}

TEST(Stat, AGapChargedToSeveralReasonsAgrees) {
  // The module splits one gap by reason: torn, then overwritten, both
  // placed before the same record (seen in the overrun scenario: 151 torn
  // and 218 overwritten before seq 12464 were called a disagreement).
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  CaptureEvent torn = Lost(1, 151, 12464);
  torn.reason = HMB_LOST_TORN;
  CaptureEvent over = Lost(1, 218, 12464);
  over.reason = HMB_LOST_OVERWRITTEN;
  for (const CaptureEvent& ev : {Record(1, 12094), torn, over, Record(1, 12464)})
    stat.Add(ev);
  stat.Finish();
  const CoreStat& cs = stat.cores().at({0, 1});
  EXPECT_EQ(cs.lost_total(), 369u);
  EXPECT_EQ(cs.gap_unexplained, 0u);
  EXPECT_EQ(cs.lost_unmatched, 0u);
  EXPECT_TRUE(cs.seq_agrees());
}

TEST(Stat, AGapWithoutHmbLostOrALossWithoutAGapIsADisagreement) {
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  for (const CaptureEvent& ev : {Record(2, 0), Record(2, 1), Record(2, 5),  // 3 missing silently
                                 Lost(2, 4, 6), Record(2, 6)})              // 4 claimed, 0 missing
    stat.Add(ev);
  stat.Finish();
  const CoreStat& cs = stat.cores().at({0, 2});
  EXPECT_EQ(cs.gap_unexplained, 3u);
  EXPECT_EQ(cs.lost_unmatched, 4u);
  EXPECT_FALSE(cs.seq_agrees());
  EXPECT_NE(stat.Text("f").find("    DISAGREEMENT: 3 records missing from the sequence without "
                                "hmb_lost, 4 counted by hmb_lost that the sequence does not "
                                "miss\n"),
            std::string::npos)
      << stat.Text("f");
}

TEST(Stat, ActivityCountedAsRecordsComeEqualsActivityFromEveryRecordTime) {
  for (const std::string& path : {FixturePath(), MarkersFixturePath(), ClockFixturePath()}) {
    auto streamed = RunOn(path, /*with_span=*/true);
    auto kept = RunOn(path, /*with_span=*/false);
    EXPECT_EQ(streamed->stat->Text("f"), kept->stat->Text("f")) << path;
    EXPECT_EQ(streamed->stat->Json("f"), kept->stat->Json("f")) << path;
    for (const auto& [key, cs] : streamed->stat->cores()) {
      EXPECT_TRUE(cs.record_times.empty());
      EXPECT_EQ(cs.activity.size(), cs.records ? kActivityBins : 0u);
    }
  }
}

TEST(Stat, PercentilesAreNearestRank) {
  QuantileHistogram h;
  for (uint64_t i = 100; i >= 1; i--)
    h.Add(i);
  const LatencySummary s = Summarize(h);
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.min, 1u);
  EXPECT_EQ(s.median, 50u);  // values below 256 are exact
  EXPECT_EQ(s.p99, 99u);
  EXPECT_EQ(s.max, 100u);
  QuantileHistogram one;
  one.Add(7);
  EXPECT_EQ(Summarize(one).p99, 7u);
}

TEST(Stat, ClockSectionCountsFitsBoundsAndRecordsNotConverted) {
  auto run = RunOn(ClockFixturePath());
  const nlohmann::json doc = run->stat->Json("f");
  EXPECT_EQ(doc["hmb_clock_events"], 6u);
  ASSERT_EQ(doc["devices"].size(), 1u);
  const nlohmann::json& c = doc["devices"][0]["clock"];
  EXPECT_EQ(c["fits"], 3u);  // each emitted on both CPUs
  EXPECT_EQ(c["stale_fits"], 1u);
  EXPECT_EQ(c["refused_fits"], 0u);
  EXPECT_EQ(c["producer_gens"], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(c["records_converted"], 7u);
  EXPECT_EQ(c["records_converted_with_stale_fit"], 1u);
  EXPECT_EQ(c["records_not_converted"]["no clock fit"], 3u);
  EXPECT_EQ(c["records_not_converted"]["no clock fit of its producer_gen"], 1u);
  EXPECT_EQ(c["records_not_converted"]["total"], 4u);
  // Exact nearest-rank median 2104 ns; from the histogram within its precision.
  EXPECT_EQ(doc["percentile_relative_error"], QuantileHistogram::kRelativeError);
  EXPECT_NEAR(c["bound_ns"]["median"].get<double>(), 2104.0,
              2104.0 * QuantileHistogram::kRelativeError);
  EXPECT_EQ(c["bound_ns"]["max"], 6956u);
  EXPECT_EQ(c["drain_delay_ns"]["max"], 220000001u);  // the record drained late

  const std::string text = run->stat->Text("clock-small.dat");
  EXPECT_NE(text.find("clock-small.dat: 11 records, 0 lost (0 hmb_lost), 4 hmb_state, 16 "
                      "hmb_dict, 6 hmb_clock, 3 markers"),
            std::string::npos)
      << text;
  // The drain delays' exact median is 400 us; the histogram's, within
  // 0.4 %, is 400.383 us, which BoundText rounds up to 401us.
  EXPECT_NEAR(c["drain_delay_ns"]["median"].get<double>(), 400000.0,
              400000.0 * QuantileHistogram::kRelativeError);
  EXPECT_NE(text.find("  clock: 3 fits (6 hmb_clock), 1 stale, producer_gens 1 2\n"
                      "    records converted 7, bound median 3us max 7us, 1 with a stale fit; "
                      "drain delay median 401us max 220.001ms\n"
                      "    records not converted 4: no clock fit (3), no clock fit of its "
                      "producer_gen (1)\n"),
            std::string::npos)
      << text;
}

TEST(Stat, ACaptureWithoutClockFitsHasNoClockSection) {
  auto run = RunOn(FixturePath());
  EXPECT_EQ(run->stat->Text("f").find("clock:"), std::string::npos);
  EXPECT_FALSE(run->stat->Json("f")["devices"][0].contains("clock"));
}

// The fixture's fits are a module's before per-clock fits: all "local".
TEST(StatTraceClock, TheLocalFitsOfACaptureOnAnotherClockConvertNothing) {
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  ASSERT_EQ(stat.clocks().SetTraceClock("mono"), "");
  std::string error;
  ASSERT_TRUE(StatusOk(ReadCapture(ClockFixturePath(),
                                   [&](const CaptureEvent& ev) {
                                     dicts.FollowState(ev);
                                     stat.Add(ev);
                                     return true;
                                   }),
                       &error))
      << error;
  stat.Finish();
  const nlohmann::json doc = stat.Json("f");
  EXPECT_EQ(doc["hmb_clock_events"], 6u);
  const nlohmann::json& c = doc["devices"][0]["clock"];
  EXPECT_EQ(c["records_converted"], 0u);
  // The three before the first fit of any clock have none, as on "local".
  EXPECT_EQ(c["records_not_converted"]["no clock fit"], 3u);
  EXPECT_EQ(c["records_not_converted"]["no clock fit for the capture's trace clock"], 8u);
  EXPECT_NE(stat.clocks().ClockProblem().find("are for local only"), std::string::npos);
}

// cmd-join-boot.dat: recorded on "boot" by a module that fitted "local"
// only: stat reads the clock from the file and refuses the local fits.
TEST(StatTraceClock, TheCommittedBootCaptureIsNotConvertedWithItsLocalFits) {
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  std::string error;
  ASSERT_TRUE(StatusOk(CollectStat(CmdJoinBootFixturePath(), &dicts, &stat), &error)) << error;
  EXPECT_EQ(stat.clocks().trace_clock(), "boot");
  const nlohmann::json doc = stat.Json("f");
  const nlohmann::json& c = doc["devices"][0]["clock"];
  EXPECT_EQ(c["records_converted"], 0u);
  EXPECT_GT(c["records_not_converted"]["no clock fit for the capture's trace clock"], 0u);
  const std::string why = stat.clocks().ClockProblem();
  EXPECT_NE(why.find("trace clock is \"boot\""), std::string::npos) << why;
  EXPECT_NE(why.find("-C local"), std::string::npos) << why;
}

// `trace-cmd record -B hmb -e hmb -e nvme:...` puts the host's commands in
// the hmb instance: the join reads them there, on that buffer's clock (the
// top buffer's, "boot", has no fit), and says where it found them.
TEST(StatCommands, TheHostCommandsOfAnInstanceAreJoinedOnItsClock) {
  CommandCapture cap;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadCommandCapture(CmdJoinInstanceFixturePath(), &cap), &error)) << error;
  EXPECT_TRUE(cap.host_events);
  EXPECT_EQ(cap.host_instance, "hmb");
  EXPECT_EQ(cap.host_clock, "local");
  EXPECT_EQ(cap.join.counts().host_commands, 24u);
  EXPECT_EQ(cap.join.counts().joined, 24u);
  EXPECT_EQ(cap.fw_not_converted, 0u);
  const std::string text = CommandStatText(cap);
  EXPECT_NE(text.find("host commands read from instance \"hmb\""), std::string::npos) << text;
  EXPECT_EQ(CommandStatJson(cap)["host_events_instance"], "hmb");
}

// Where the top buffer has them (`hmbtrace-cmd record`), nothing changes:
// no word of an instance.
TEST(StatCommands, TheTopBuffersHostCommandsNeedNoWord) {
  CommandCapture cap;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadCommandCapture(CmdJoinFixturePath(), &cap), &error)) << error;
  EXPECT_EQ(cap.host_instance, "");
  EXPECT_EQ(cap.join.counts().host_commands, 24u);
  EXPECT_EQ(cap.join.counts().joined, 22u);
  EXPECT_EQ(CommandStatText(cap).find("instance"), std::string::npos);
  EXPECT_FALSE(CommandStatJson(cap).contains("host_events_instance"));
}

// The plot's value of a latency is floor(ticks * 10^9 / hz) ns, whichever
// way it is computed: 1 GHz, a product in 64 bits, one past them.
TEST(LatencyStat, PlotsTicksAsNanosecondsRoundedDown) {
  struct Case {
    uint64_t ticks, hz;
  } cases[] = {
      {1023, 1000000000u},      {1024, 1000000000u},           {1, 1024000000u},
      {1024, 1000000u},         {999, 999000000u},             {1000, 999000000u},
      {2047, 2000000000u},      {UINT64_MAX / 1000000000u, 3}, {UINT64_MAX / 1000000000u + 1, 3},
      {UINT64_MAX, 1000000001u}, {UINT64_MAX, 7},              {5, 0},
  };
  for (const Case& c : cases) {
    LatencyStat l;
    l.Add(c.ticks, c.hz);
    unsigned __int128 ns = c.hz ? static_cast<unsigned __int128>(c.ticks) * 1000000000u / c.hz
                                : c.ticks;
    if (ns > UINT64_MAX)
      ns = UINT64_MAX;
    const size_t bucket = Log2Histogram::BucketOf(static_cast<uint64_t>(ns));
    EXPECT_EQ(l.plot.count(bucket), 1u) << c.ticks << " ticks at " << c.hz << " Hz";
    EXPECT_EQ(l.plot.total(), 1u);
  }
}

}  // namespace
}  // namespace hmbtrace
