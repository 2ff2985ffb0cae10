// SPDX-License-Identifier: GPL-2.0-only
#include "retime/retime.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "hmb_events.h"
#include "hmbtrace/status_testutil.h"
#include "report/report.h"
#include "retime/temp_dir_testutil.h"
#include "stat/stat.h"

namespace hmbtrace {
namespace {

// tests/data/make_clock_capture.py has its timeline: 11
// records of dev 0, cores 0 and 1 on CPUs 0 and 1 of instance "hmb"; 3
// before any fit, one with no fit of producer_gen 2 yet, one drained
// 220 ms late (past the 100 ms reorder margin); a stale fit; 3 markers.
constexpr char kClockFixture[] = HMBTRACE_CLOCK_FIXTURE;
constexpr uint64_t kClockFixtureRecords = 11;
constexpr uint64_t kClockFixtureNotConverted = 4;

using RecordKey = std::tuple<uint16_t, uint16_t, uint64_t, uint64_t>;  // dev, core, seq, fw_ts

RetimeSummary MustRetime(const std::string& in, const std::string& out, int version = 0) {
  RetimeOptions o;
  o.input = in;
  o.output = out;
  o.file_version = version;
  RetimeSummary s;
  std::string error;
  EXPECT_TRUE(StatusOk(Retime(o, &s), &error)) << error;
  return s;
}

// What hmbtrace-cmd report prints for a record: its line's time, its
// converted time (fw_time=, in ns; 0 if none) and whether it was placed late.
struct Printed {
  std::string time;
  uint64_t fw_ns = 0;
  bool late = false;
  bool operator==(const Printed&) const = default;
};

std::map<RecordKey, Printed> ReportLines(const std::string& path, ReportSummary* summary);

// The time hmbtrace-cmd report prints for each record of `path`.
std::map<RecordKey, std::string> ReportTimes(const std::string& path, ReportSummary* summary) {
  std::map<RecordKey, std::string> times;
  for (const auto& [key, p] : ReportLines(path, summary))
    times[key] = p.time;
  return times;
}

std::map<RecordKey, Printed> ReportLines(const std::string& path, ReportSummary* summary) {
  std::string text, error;
  EXPECT_TRUE(StatusOk(WriteReport(
                           path, ReportOptions{},
                           [&text](const std::string& s) {
                             text += s;
                             return true;
                           },
                           summary),
                       &error))
      << error;
  std::map<RecordKey, Printed> times;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    char time[32];
    int cpu;
    unsigned dev, core;
    unsigned long long seq, fw_ts;
    if (std::sscanf(line.c_str(), "%31s [%d] dev=%u core=%u seq=%llu fw_ts=%llu", time, &cpu, &dev,
                    &core, &seq, &fw_ts) != 6)
      continue;
    Printed& p = times[{static_cast<uint16_t>(dev), static_cast<uint16_t>(core), seq, fw_ts}];
    p.time = time;
    p.late = line.find("[placed late") != std::string::npos;
    unsigned long long s, ns;
    const size_t at = line.find(" fw_time=");
    if (at != std::string::npos &&
        std::sscanf(line.c_str() + at, " fw_time=%llu.%9llu", &s, &ns) == 2)
      p.fw_ns = s * 1000000000ull + ns;
  }
  return times;
}

struct Walked {
  // hmb and marker events, in the merged order; their spans and names
  // point into `owned` (the walk's own are valid during its callback only).
  std::vector<CaptureEvent> events;
  std::deque<std::string> owned;
  std::vector<std::string> problems;
};

// Every event of `path` in libtracecmd's order, checking each CPU's order.
Walked Walk(const std::string& path) {
  Walked w;
  CaptureFile file;
  std::string error;
  EXPECT_TRUE(StatusOk(file.Open(path), &error)) << error;
  std::map<std::pair<int, int>, uint64_t> last;  // (buffer, cpu) -> ts
  EXPECT_TRUE(StatusOk(file.ReadRaw([&](const RawRecord& rec, const CaptureEvent* ev) {
    uint64_t& l = last[{rec.buffer, rec.cpu}];
    if (rec.ts < l)
      w.problems.push_back("buffer " + std::to_string(rec.buffer) + " cpu " +
                           std::to_string(rec.cpu) + " goes back in time");
    l = rec.ts;
    if (ev) {
      CaptureEvent copy = *ev;
      const std::string& data =
          w.owned.emplace_back(reinterpret_cast<const char*>(ev->data.data()), ev->data.size());
      copy.data = {reinterpret_cast<const uint8_t*>(data.data()), data.size()};
      copy.name = w.owned.emplace_back(ev->name);
      w.events.push_back(copy);
    }
    return true;
  }),
                       &error))
      << error;
  return w;
}

class RetimeClock : public ::testing::TestWithParam<int> {};

TEST_P(RetimeClock, EveryRecordIsAtTheTimeReportPrintsForIt) {
  TempDir dir;
  const std::string out = dir.File("retimed.dat");
  const RetimeSummary s = MustRetime(kClockFixture, out, GetParam());
  EXPECT_EQ(s.file_version, GetParam());
  EXPECT_EQ(s.records, kClockFixtureRecords);

  ReportSummary report_summary;
  const std::map<RecordKey, Printed> want = ReportLines(kClockFixture, &report_summary);
  ASSERT_EQ(want.size(), kClockFixtureRecords);
  const Walked w = Walk(out);
  EXPECT_TRUE(w.problems.empty()) << w.problems.front();
  uint64_t records = 0, late = 0;
  for (const CaptureEvent& ev : w.events) {
    if (ev.kind != CaptureKind::kRecord)
      continue;
    records++;
    EXPECT_TRUE(ev.retimed);
    const auto it = want.find({ev.dev, ev.core, ev.seq, ev.fw_ts});
    ASSERT_NE(it, want.end()) << "seq " << ev.seq;
    // Where report prints its line, and to the ns its fw_time=, except
    // the record report could only place late in its one stream: its own
    // CPU had nothing after it yet, so it is at its converted time here.
    if (it->second.late) {
      late++;
      EXPECT_EQ(ev.ts, it->second.fw_ns) << "core " << ev.core << " seq " << ev.seq;
      continue;
    }
    EXPECT_EQ(HostTime(ev.ts), it->second.time) << "core " << ev.core << " seq " << ev.seq;
    if (it->second.fw_ns) {
      EXPECT_EQ(ev.ts, it->second.fw_ns) << "core " << ev.core << " seq " << ev.seq;
    }
  }
  EXPECT_EQ(records, kClockFixtureRecords);
  EXPECT_EQ(report_summary.late, 1u);
  EXPECT_EQ(late, 1u);
  EXPECT_EQ(s.late, 0u);
}

TEST_P(RetimeClock, RecordsWithoutAFitKeepTheirDrainTimeAndAreCounted) {
  TempDir dir;
  const std::string out = dir.File("retimed.dat");
  const RetimeSummary s = MustRetime(kClockFixture, out, GetParam());
  ReportSummary report_summary;
  ReportTimes(kClockFixture, &report_summary);
  EXPECT_EQ(s.not_converted, kClockFixtureNotConverted);
  EXPECT_EQ(s.not_converted, report_summary.not_converted);
  EXPECT_EQ(s.converted + s.not_converted, s.records);
  EXPECT_EQ(s.unconverted.size(), kClockFixtureNotConverted);
  EXPECT_EQ(s.by_miss[static_cast<size_t>(ClockMiss::kNoFit)], 3u);
  EXPECT_EQ(s.by_miss[static_cast<size_t>(ClockMiss::kNoFitOfGeneration)], 1u);
  const std::string text = RetimeSummaryText(RetimeOptions{kClockFixture, out}, s);
  EXPECT_NE(text.find("4 at their drain time"), std::string::npos) << text;
  EXPECT_NE(text.find("dev=0 core=0 seq=0: no clock fit of its producer_gen"), std::string::npos)
      << text;
  uint64_t unconverted = 0;
  for (const CaptureEvent& ev : Walk(out).events) {
    if (ev.kind != CaptureKind::kRecord || (ev.retime_flags & HMB_RETIME_CONVERTED))
      continue;
    unconverted++;
    EXPECT_EQ(ev.ts, ev.drain_ts);
  }
  EXPECT_EQ(unconverted, kClockFixtureNotConverted);
}

TEST_P(RetimeClock, EveryRecordMeetsItsStateDictionaryAndFitFirst) {
  TempDir dir;
  const std::string out = dir.File("retimed.dat");
  MustRetime(kClockFixture, out, GetParam());
  // A reader that sees the file once, in order, as plugin_hmb.so does:
  // every record has its dictionary, and each converted one its fit.
  DictionaryStore dicts;
  ClockSet clocks;
  uint64_t records = 0;
  for (const CaptureEvent& ev : Walk(out).events) {
    switch (ev.kind) {
      case CaptureKind::kState:
        dicts.Add(ev);
        clocks.AddState(ev.dev, ev.producer_gen, ev.clock_hz);
        break;
      case CaptureKind::kDict:
        dicts.Add(ev);
        break;
      case CaptureKind::kClock:
        clocks.Add(ClockFit{ev.dev, ev.producer_gen, ev.clock_flags, ev.clock, ev.clock_id});
        break;
      case CaptureKind::kRecord: {
        records++;
        EXPECT_NE(dicts.For(ev.dev, ev.cpu), nullptr) << "core " << ev.core << " seq " << ev.seq;
        if (ev.retime_flags & HMB_RETIME_CONVERTED) {
          const FwTime t = clocks.Convert(ev.dev, dicts.GenerationFor(ev.dev, ev.cpu), ev.fw_ts);
          EXPECT_TRUE(t.converted()) << "core " << ev.core << " seq " << ev.seq;
        }
        break;
      }
      default:
        break;
    }
  }
  EXPECT_EQ(records, kClockFixtureRecords);
}

TEST_P(RetimeClock, MarkersAndOtherEventsKeepTheirTimeAndCount) {
  TempDir dir;
  const std::string out = dir.File("retimed.dat");
  MustRetime(kClockFixture, out, GetParam());
  std::map<std::string, uint64_t> markers_in, markers_out;
  std::map<CaptureKind, uint64_t> kinds_in, kinds_out;
  for (const CaptureEvent& ev : Walk(kClockFixture).events) {
    kinds_in[ev.kind]++;
    if (ev.kind == CaptureKind::kMarker)
      markers_in[Printable({reinterpret_cast<const char*>(ev.data.data()), ev.data.size()})] =
          ev.ts;
  }
  for (const CaptureEvent& ev : Walk(out).events) {
    kinds_out[ev.kind]++;
    if (ev.kind == CaptureKind::kMarker)
      markers_out[Printable({reinterpret_cast<const char*>(ev.data.data()), ev.data.size()})] =
          ev.ts;
  }
  EXPECT_EQ(kinds_out, kinds_in);
  EXPECT_EQ(markers_out, markers_in);
  EXPECT_EQ(markers_out.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(FileVersion, RetimeClock, ::testing::Values(6, 7));

TEST(Retime, ReportOfARetimedCaptureDoesNotConvertAgain) {
  TempDir dir;
  const std::string out = dir.File("retimed.dat");
  MustRetime(kClockFixture, out);
  ReportSummary before, after;
  const auto want = ReportLines(kClockFixture, &before);
  const auto got = ReportLines(out, &after);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [key, w] : want) {
    const Printed& g = got.at(key);
    // At the converted time report printed (placed late or not), or at
    // the same drain time; no fw_time= printed again.
    EXPECT_EQ(g.time, w.fw_ns ? HostTime(w.fw_ns) : w.time) << "seq " << std::get<2>(key);
    EXPECT_EQ(g.fw_ns, 0u);
    EXPECT_FALSE(g.late);
  }
  EXPECT_EQ(after.not_converted, before.not_converted);
  EXPECT_EQ(after.late, 0u);
  std::string text, error;
  ASSERT_TRUE(StatusOk(WriteReport(
                           out, ReportOptions{},
                           [&text](const std::string& s) {
                             text += s;
                             return true;
                           },
                           &after),
                       &error));
  EXPECT_NE(text.find("retimed \u00b1"), std::string::npos) << text;
  EXPECT_NE(text.find(" drain=+"), std::string::npos) << text;
  EXPECT_EQ(text.find("fw_time=1."), std::string::npos) << text;
}

// hmbtrace-cmd stat's clock section of `path`: bounds and drain delays.
std::string StatClockLines(const std::string& path) {
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  std::string error;
  EXPECT_TRUE(StatusOk(ReadCaptureWithDictionaries(path, &dicts,
                                                   [&stat](const CaptureEvent& ev) {
                                                     stat.Add(ev);
                                                     return true;
                                                   }),
                       &error))
      << error;
  stat.Finish();
  const std::string text = stat.Text(path);
  const size_t at = text.find("records converted");
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

TEST(Retime, StatOfARetimedCaptureSaysTheSameDrainDelays) {
  TempDir dir;
  const std::string out = dir.File("retimed.dat");
  MustRetime(kClockFixture, out);
  const std::string before = StatClockLines(kClockFixture);
  EXPECT_NE(before.find("drain delay median"), std::string::npos) << before;
  EXPECT_EQ(StatClockLines(out), before);
}

TEST(Retime, ACaptureRetimedAlreadyIsRefused) {
  TempDir dir;
  const std::string once = dir.File("once.dat"), twice = dir.File("twice.dat");
  MustRetime(kClockFixture, once);
  RetimeOptions o;
  o.input = once;
  o.output = twice;
  RetimeSummary s;
  std::string error;
  EXPECT_FALSE(StatusOk(Retime(o, &s), &error));
  EXPECT_NE(error.find("retimed capture already"), std::string::npos) << error;
  EXPECT_NE(access(twice.c_str(), F_OK), 0);
}

TEST(Retime, ACaptureWithoutClockFitsIsRefusedWithTheReason) {
  TempDir dir;
  RetimeOptions o;
  o.input = HMBTRACE_FIXTURE;
  o.output = dir.File("out.dat");
  RetimeSummary s;
  std::string error;
  EXPECT_FALSE(StatusOk(Retime(o, &s), &error));
  EXPECT_NE(error.find("no hmb_clock"), std::string::npos) << error;
  EXPECT_NE(access(o.output.c_str(), F_OK), 0);
}

TEST(Retime, NoTemporaryFilesAreLeftBehind) {
  TempDir dir;
  MustRetime(kClockFixture, dir.File("retimed.dat"));
  const std::string ls = dir.File("");
  FILE* p = popen(("ls -A '" + ls + "'").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256];
  std::string names;
  while (std::fgets(buf, sizeof(buf), p))
    names += buf;
  pclose(p);
  EXPECT_EQ(names, "retimed.dat\n");
}

// trace-cmd itself (not our reader) reads the output, in both versions.
TEST(Retime, TraceCmdReportReadsTheOutputInTheRetimedOrder) {
  const std::string trace_cmd = HMBTRACE_TRACE_CMD;
  if (trace_cmd.empty())
    GTEST_SKIP() << "trace-cmd is not installed";
  for (int version : {6, 7}) {
    TempDir dir;
    const std::string out = dir.File("retimed.dat");
    MustRetime(kClockFixture, out, version);
    // -N: no plugins (the output of trace-cmd alone); --cpu: the hmb instance's CPUs.
    FILE* p = popen((trace_cmd + " report -N -i '" + out + "' 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string text;
    char buf[1024];
    while (std::fgets(buf, sizeof(buf), p))
      text += buf;
    const int rc = pclose(p);
    EXPECT_EQ(WEXITSTATUS(rc), 0) << text;
    // Its own order: the times it prints never go back.
    double last = 0;
    uint64_t records = 0;
    size_t pos = 0;
    while ((pos = text.find("hmb_record:", pos)) != std::string::npos) {
      const size_t colon = text.rfind(':', pos - 2);
      const size_t space = text.rfind(' ', colon);
      const double t = std::strtod(text.substr(space + 1, colon - space - 1).c_str(), nullptr);
      EXPECT_GE(t, last) << "version " << version;
      last = t;
      records++;
      pos++;
    }
    EXPECT_EQ(records, kClockFixtureRecords) << text;
    EXPECT_EQ(text.find("error"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace hmbtrace
