// SPDX-License-Identifier: GPL-2.0-only
// A crash dump read as a capture: CaptureFile, report, stat, export.
#include "dump/dump_events.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "capture/dictionaries.h"
#include "capture/fixture_testutil.h"
#include "decode_test_util.h"
#include "dump/dump_writer_testutil.h"
#include "export/export.h"
#include "hmb_trace_events_abi.h"
#include "hmbtrace/status_testutil.h"
#include "join/nvme_capture.h"
#include "report/report.h"
#include "report/report_testutil.h"
#include "retime/retime.h"
#include "stat/stat.h"

namespace hmbtrace {
namespace {

using test::SmallDump;
using test::TestDump;

// A dump written to a file of the test's own, removed at the end.
class DumpPath {
 public:
  explicit DumpPath(const TestDump& d) : DumpPath(test::WriteDump(d)) {}
  explicit DumpPath(const std::vector<uint8_t>& bytes) {
    char tmpl[] = "/tmp/dump_events_unittest.XXXXXX";
    const int fd = mkstemp(tmpl);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    path_ = tmpl;
  }
  ~DumpPath() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TestDump Small() {
  return SmallDump(test::ProduceDictionary(test::RealisticEvents()));
}

std::vector<CaptureEvent> Events(const std::string& path,
                                 CaptureFilter filter = CaptureFilter::kAll) {
  std::vector<CaptureEvent> out;
  CaptureFile file;
  std::string error;
  EXPECT_TRUE(StatusOk(file.Open(path), &error)) << error;
  EXPECT_TRUE(file.is_dump());
  EXPECT_TRUE(StatusOk(file.Read(
                           [&out](const CaptureEvent& ev) {
                             out.push_back(ev);
                             out.back().data = {};  // not valid past the callback
                             out.back().name = {};
                             out.back().malformed_reason = {};
                             out.back().malformed_event = {};
                             return true;
                           },
                           filter),
                       &error))
      << error;
  return out;
}

std::vector<std::string> ReportLines(const std::string& path, ReportSummary* summary = nullptr) {
  return ReportLinesOf(path, {}, summary);
}

TEST(DumpEvents, ADumpReadsInTheOrderOfACapture) {
  DumpPath f(Small());
  const std::vector<CaptureEvent> evs = Events(f.path());
  ASSERT_EQ(evs.size(), 1u + 1 + 2 + 6 + 1);
  EXPECT_EQ(evs[0].kind, CaptureKind::kState);
  EXPECT_EQ(evs[0].state, HMB_TRACE_EV_ATTACHED);
  EXPECT_EQ(evs[0].producer_gen, 3u);
  EXPECT_EQ(evs[0].nr_cores, 2u);
  EXPECT_EQ(evs[1].kind, CaptureKind::kDict);
  EXPECT_EQ(evs[2].kind, CaptureKind::kClock);
  EXPECT_EQ(evs[3].kind, CaptureKind::kClock);
  // Records and the loss in firmware time order, each core's order kept.
  const std::vector<std::pair<uint16_t, uint64_t>> want = {{0, 10}, {1, 20}, {0, 11},
                                                           {1, 21}, {0, 14}, {1, 22}};
  size_t r = 0;
  uint64_t last_ts = 0;
  for (size_t i = 4; i < evs.size(); i++) {
    EXPECT_TRUE(evs[i].clock_format);
    EXPECT_FALSE(evs[i].retimed);
    EXPECT_GE(evs[i].ts, last_ts);
    last_ts = evs[i].ts;
    if (evs[i].kind == CaptureKind::kLost) {
      EXPECT_EQ(evs[i].core, 0u);
      EXPECT_EQ(evs[i].at_seq, 14u);
      EXPECT_EQ(evs[i].count, 2u);
      EXPECT_EQ(evs[i + 1].seq, 14u);  // just before the record after it
      continue;
    }
    ASSERT_EQ(evs[i].kind, CaptureKind::kRecord);
    ASSERT_LT(r, want.size());
    EXPECT_EQ(evs[i].core, want[r].first);
    EXPECT_EQ(evs[i].seq, want[r].second);
    // 1 GHz, tick 0 at 1 s on "local".
    EXPECT_EQ(evs[i].ts, 1000000000u + evs[i].fw_ts);
    r++;
  }
  EXPECT_EQ(r, want.size());
}

TEST(DumpEvents, TheMetadataPassDeliversStateAndDictionaryAndCountsTheRest) {
  DumpPath f(Small());
  CaptureFile file;
  ASSERT_TRUE(file.Open(f.path()).ok());
  std::vector<CaptureKind> kinds;
  ASSERT_TRUE(file.Read(
                      [&](const CaptureEvent& ev) {
                        kinds.push_back(ev.kind);
                        return true;
                      },
                      CaptureFilter::kMetadata)
                  .ok());
  EXPECT_EQ(kinds, (std::vector<CaptureKind>{CaptureKind::kState, CaptureKind::kDict}));
  EXPECT_EQ(file.scan().events, 11u);
  EXPECT_EQ(file.scan().last_ts, 1000003500u);
}

TEST(DumpEvents, WhatACaptureHasAndADumpHasNotIsAClearError) {
  DumpPath f(Small());
  CaptureFile file;
  ASSERT_TRUE(file.Open(f.path()).ok());
  EXPECT_TRUE(file.buffers().empty());
  EXPECT_EQ(file.events(), nullptr);
  const Status raw = file.ReadRaw([](const RawRecord&, const CaptureEvent*) { return true; });
  EXPECT_FALSE(raw.ok());
  EXPECT_NE(raw.message().find("a crash dump, not a trace-cmd capture"), std::string::npos);
  RetimeOptions options;
  options.input = f.path();
  options.output = f.path() + ".retimed";
  RetimeSummary summary;
  const Status retime = Retime(options, &summary);
  EXPECT_FALSE(retime.ok());
  EXPECT_NE(retime.message().find("retime works on captures only"), std::string::npos)
      << retime.message();
}

TEST(DumpEvents, ADumpThatCannotBeReadIsAnErrorAtOpen) {
  TestDump d = Small();
  d.version = 9;
  DumpPath f(d);
  CaptureFile file;
  const Status s = file.Open(f.path());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(f.path() + ": offset 8: dump format version 9"), std::string::npos)
      << s.message();
}

TEST(DumpEvents, ReportDecodesTheRecordsAtTheirConvertedTime) {
  DumpPath f(Small());
  ReportSummary summary;
  const std::vector<std::string> lines = ReportLines(f.path(), &summary);
  const std::vector<std::string> want = {
      "1.000001 [000] dev=0 core=0 seq=10 fw_ts=1000 gc_free_blocks: free=1",
      "1.000002 [000] dev=0 core=1 seq=20 fw_ts=1500 gc_free_blocks: free=2",
      "1.000002 [000] dev=0 core=0 seq=11 fw_ts=2000 gc_free_blocks: free=3",
      "1.000003 [000] dev=0 core=1 seq=21 fw_ts=2500 gc_free_blocks: free=4",
      "1.000003 [000] dev=0 core=0 LOST 2 records (overwritten) before seq=14",
      "1.000004 [000] dev=0 core=1 seq=22 fw_ts=3500 gc_free_blocks: free=9",
  };
  size_t w = 0;
  for (const std::string& line : lines)
    if (w < want.size() && line.rfind(want[w], 0) == 0)
      w++;
  EXPECT_EQ(w, want.size()) << "missing: " << (w < want.size() ? want[w] : "") << "\n"
                            << testing::PrintToString(lines);
  EXPECT_EQ(summary.not_converted, 0u);
  bool state = false;
  for (const std::string& line : lines)
    state |= line.find("STATE attached name=nvme0 producer_gen=3 nr_cores=2") != std::string::npos;
  EXPECT_TRUE(state);
}

// The records of the real capture fixture (record-small.dat), put in a
// dump with its dictionary: report decodes each the same from the dump.
TEST(DumpEvents, TheFixturesRecordsDecodeTheSameFromADump) {
  CaptureFile file;
  ASSERT_TRUE(file.Open(FixturePath()).ok());
  TestDump d;
  bool have_state = false;
  std::vector<uint8_t> dict;
  std::vector<bool> have;
  size_t have_count = 0;
  std::map<std::pair<uint16_t, uint64_t>, test::TestRecord> records;
  ASSERT_TRUE(file.Read([&](const CaptureEvent& ev) {
                    if (ev.kind == CaptureKind::kState && !have_state) {
                      have_state = true;
                      d.producer_gen = ev.producer_gen;
                      d.nr_cores = ev.nr_cores;
                      d.clock_hz = ev.clock_hz;
                      d.build_id = ev.build_id;
                      d.name = std::string(ev.name);
                    } else if (ev.kind == CaptureKind::kDict && have_state &&
                               ev.producer_gen == d.producer_gen && have_count < ev.total_len) {
                      if (dict.empty()) {
                        dict.assign(ev.total_len, 0);
                        have.assign(ev.total_len, false);
                      }
                      for (size_t i = 0; i < ev.data.size() && ev.offset + i < dict.size(); i++) {
                        dict[ev.offset + i] = ev.data[i];
                        have_count += have[ev.offset + i] ? 0 : 1;
                        have[ev.offset + i] = true;
                      }
                    } else if (ev.kind == CaptureKind::kRecord && ev.dev == 0 &&
                               records.size() < 200) {
                      records[{ev.core, ev.seq}] =
                          test::TestRecord{ev.core, ev.event_id, ev.seq, ev.fw_ts,
                                           std::vector<uint8_t>(ev.data.begin(), ev.data.end())};
                    }
                    return true;
                  })
                  .ok());
  ASSERT_TRUE(have_state);
  ASSERT_EQ(have_count, dict.size());
  ASSERT_GT(records.size(), 100u);
  d.dict = dict;
  for (const auto& [key, rec] : records)  // per core in seq order
    d.records.push_back(rec);
  DumpPath f(d);
  std::map<std::pair<uint64_t, uint64_t>, std::string> from_capture;
  for (const std::string& line : ReportLines(FixturePath())) {
    const size_t at = line.find(" dev=0 core=");
    unsigned core = 0;
    unsigned long long seq = 0;
    if (at != std::string::npos &&
        std::sscanf(line.c_str() + at, " dev=0 core=%u seq=%llu", &core, &seq) == 2)
      from_capture[{core, seq}] = line.substr(at);
  }
  size_t compared = 0, decoded = 0;
  for (const std::string& line : ReportLines(f.path())) {
    const size_t at = line.find(" dev=0 core=");
    unsigned core = 0;
    unsigned long long seq = 0;
    if (at == std::string::npos ||
        std::sscanf(line.c_str() + at, " dev=0 core=%u seq=%llu", &core, &seq) != 2)
      continue;
    const auto it = from_capture.find({core, seq});
    ASSERT_NE(it, from_capture.end()) << line;
    // The dump's line adds why its time is not converted (no fit in it).
    EXPECT_EQ(line.substr(at).rfind(it->second, 0), 0u) << line << "\n" << it->second;
    compared++;
    decoded += line.find("payload=") == std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(compared, records.size());
  EXPECT_EQ(decoded, records.size());
}

TEST(DumpEvents, ADumpWithOnlyABootFitIsOnTheBootClock) {
  TestDump d = Small();
  d.clocks.erase(d.clocks.begin());  // the "local" fit
  DumpPath f(d);
  CaptureClocks clocks;
  ASSERT_TRUE(ReadCaptureClocks(f.path(), &clocks).ok());
  EXPECT_EQ(clocks.hmb, "boot");
  EXPECT_EQ(clocks.top, "boot");
  const std::vector<std::string> lines = ReportLines(f.path());
  bool found = false;
  for (const std::string& line : lines)
    found |= line.rfind("3.000001 [000] dev=0 core=0 seq=10", 0) == 0;
  EXPECT_TRUE(found);
}

TEST(DumpEvents, WithoutAFitRecordsSayWhyAndKeepTheirOrder) {
  TestDump d = Small();
  d.clocks.clear();
  DumpPath f(d);
  ReportSummary summary;
  const std::vector<std::string> lines = ReportLines(f.path(), &summary);
  EXPECT_EQ(summary.not_converted, 6u);
  const std::vector<CaptureEvent> evs = Events(f.path());
  ASSERT_GE(evs.size(), 3u);
  EXPECT_EQ(evs.back().ts, 5000000000u);  // the dump's time on "local"
}

TEST(DumpEvents, AProblemOfTheDumpIsAMalformedLine) {
  TestDump d = Small();
  d.cores = test::CoresFor(d);
  d.cores[1].end_seq += 1;
  DumpPath f(d);
  const std::vector<std::string> lines = ReportLines(f.path());
  bool found = false;
  for (const std::string& line : lines)
    found |= line.find(
                 "MALFORMED dump: offset 0: identity broken: core 1: end_seq - start_seq "
                 "= 24 - 20 = 4") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(DumpEvents, StatCountsTheRecordsAndLossesOfADump) {
  DumpPath f(Small());
  testing::internal::CaptureStdout();
  const int rc = RunStat(f.path(), /*json=*/true, /*commands=*/true);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  const nlohmann::json doc = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out;
  EXPECT_EQ(doc["records"], 6);
  EXPECT_EQ(doc["hmb_lost_events"], 1);
  EXPECT_TRUE(doc["malformed"].empty()) << doc["malformed"];
  const nlohmann::json& dev = doc["devices"][0];
  EXPECT_EQ(dev["clock"]["records_converted"], 6);
  ASSERT_EQ(dev["cores"].size(), 2u);
  EXPECT_EQ(dev["cores"][0]["records"], 3);
  EXPECT_EQ(dev["cores"][0]["first_seq"], 10);
  EXPECT_EQ(dev["cores"][0]["last_seq"], 14);
  EXPECT_EQ(dev["cores"][0]["lost"]["overwritten"], 2);
  EXPECT_EQ(dev["cores"][0]["seq_check"], "agrees");
  EXPECT_EQ(dev["cores"][1]["records"], 3);
  EXPECT_NE(out.find("gc_free_blocks"), std::string::npos);
  EXPECT_FALSE(doc.contains("commands"));  // no host events to join
}

// A record of nvme_cmd_begin (fetch) of RealisticEvents(): qid and cid
// first.
test::TestRecord FetchRecord(uint16_t core, uint64_t seq, uint64_t ts, uint16_t qid, uint16_t cid) {
  std::vector<uint8_t> p(28, 0);
  test::Put16(p, 0, qid);
  test::Put16(p, 2, cid);
  return {core, test::kCmdBegin, seq, ts, p};
}

// SmallDump() (local: tick 0 at 1 s, the dump at 5 s; mono: the dump at
// 9 s) with a read in flight submitted at local 1.0000022 s (between core
// 0's seq 11 and core 1's seq 21) and an identify with no submit time.
TestDump WithInflight() {
  TestDump d = test::InflightDump(test::ProduceDictionary(test::RealisticEvents()),
                                  {{1, 0x1004, 0x02, 1, 8, 0x1000, 9000000000 - 3999997800},
                                   {0, 0x0007, 0x06, 0, 0, 0, 0}});
  return d;
}

TEST(DumpEvents, ReportShowsTheCommandsInFlightAtTheirSubmitTime) {
  DumpPath f(WithInflight());
  const std::vector<std::string> lines = ReportLines(f.path());
  const std::vector<std::string> want = {
      "1.000002 [000] dev=0 core=0 seq=11 fw_ts=2000 gc_free_blocks: free=3",
      "1.000002 [000] dev=0 INFLIGHT qid=1 cid=4100 read nsid=1 slba=4096 nlb=8 host submit, "
      "not completed at the dump",
      "1.000003 [000] dev=0 core=1 seq=21 fw_ts=2500",
      "5.000000 [000] dev=0 INFLIGHT qid=0 cid=7 identify submit time unknown (placed at the "
      "dump), not completed at the dump",
  };
  size_t w = 0;
  for (const std::string& line : lines)
    if (w < want.size() && line.rfind(want[w], 0) == 0)
      w++;
  EXPECT_EQ(w, want.size()) << "missing: " << (w < want.size() ? want[w] : "") << "\n"
                            << testing::PrintToString(lines);
  EXPECT_EQ(lines.back().rfind(want.back(), 0), 0u) << lines.back();
  // --event filters them like the other kinds of line.
  ReportOptions only_lost;
  only_lost.events = {"lost"};
  for (const std::string& line : ReportLinesOf(f.path(), only_lost))
    EXPECT_EQ(line.find("INFLIGHT"), std::string::npos) << line;
  ReportOptions only_inflight;
  only_inflight.events = {"inflight"};
  EXPECT_EQ(ReportLinesOf(f.path(), only_inflight).size(), 2u);
}

TEST(DumpEvents, ADumpWithoutTheInflightListHasNoInflightLine) {
  DumpPath f(Small());
  for (const std::string& line : ReportLines(f.path()))
    EXPECT_EQ(line.find("INFLIGHT"), std::string::npos) << line;
}

// report --cmd on a command in flight: its fetch, what its core did after,
// where the core stopped.
TEST(DumpEvents, ReportCmdTellsTheStoryOfACommandInFlight) {
  TestDump d = WithInflight();
  // Core 1 fetched the read at 1.000004 s, then did two more things.
  d.records.push_back(FetchRecord(1, 23, 4000, 1, 0x1004));
  d.records.push_back({1, 3, 24, 4500, {5, 0, 0, 0}});
  d.records.push_back({1, 3, 25, 4700, {6, 0, 0, 0}});
  DumpPath f(d);
  testing::internal::CaptureStdout();
  const int rc = RunCommandStory(f.path(), "1:4100");
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;
  for (const char* want :
       {"nvme0 qid=1 cid=4100 read nsid=1 (in flight at the dump)\n",
        "1.000002 +0.0us  host  nvme_submit (in flight)\n",
        "1.000004 +1.8us  fw  * dev=0 core=1 seq=23 nvme_cmd_begin: ",
        "1.000005 +2.3us  fw    dev=0 core=1 seq=24 gc_free_blocks: free=5 ",
        "1.000005 +2.5us  fw    dev=0 core=1 seq=25 gc_free_blocks: free=6 ",
        "5.000000 +3999997.8us  host  dump taken: still in flight\n",
        "  no firmware completion: none in the dump: the firmware had not completed it\n",
        "  stopped: core 1's last record in the dump is seq=25 gc_free_blocks: free=6, 0.7us "
        "after the fetch\n"})
    EXPECT_NE(out.find(want), std::string::npos) << "missing: " << want << "\n" << out;
  // What the core did before the fetch is not its story.
  EXPECT_EQ(out.find("seq=22"), std::string::npos) << out;

  // The identify has no submit time: no window places its records.
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCommandStory(f.path(), "0:7"), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no command in flight with qid:cid 0:7 and a submit time"),
            std::string::npos)
      << err;
}

TEST(DumpEvents, ReportCmdOnADumpWithoutTheInflightListSaysSo) {
  DumpPath f(Small());
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCommandStory(f.path(), "1:4100"), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the dump does not list the commands in flight"), std::string::npos) << err;
}

TEST(DumpEvents, ExportWritesTheRecordsOfADump) {
  DumpPath f(Small());
  ExportOptions options;
  options.input = f.path();
  options.output = f.path() + ".json";
  options.quiet = true;
  EXPECT_EQ(RunExport(options), 0);
  std::ifstream in(options.output);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(options.output.c_str());
  EXPECT_NE(json.find("gc_free_blocks"), std::string::npos) << json.substr(0, 2000);
}

}  // namespace
}  // namespace hmbtrace
