// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "capture/fixture_testutil.h"
#include "export/export.h"
#include "export/json_text.h"
#include "hmbtrace/status_testutil.h"

namespace hmbtrace {
namespace {

// Every pass, as `hmbtrace-cmd export --format json` runs them
// (ExportCapture()), through text and a JSON parser, as a viewer would
// read it.
nlohmann::json ExportAll(const std::string& path) {
  DictionaryStore dicts;  // ExportCapture() collects the dictionaries into it
  std::string error;
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  JsonTraceWriter writer(f);
  ExportSummary summary;
  EXPECT_TRUE(StatusOk(ExportCapture(path, &dicts, &writer, &summary), &error)) << error;
  EXPECT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  std::fclose(f);
  const std::string text(data, size);
  std::free(data);
  return nlohmann::json::parse(text);
}


// pid -> tid -> thread name
std::map<int, std::map<int, std::string>> Threads(const nlohmann::json& doc) {
  std::map<int, std::map<int, std::string>> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      out[e["pid"]][e["tid"]] = e["args"]["name"];
  return out;
}

TEST(ExportJson, OneEventPerRecordOnItsCoresThreads) {
  const nlohmann::json doc = ExportAll(FixturePath());
  auto threads = Threads(doc);
  std::map<int, uint64_t> per_core;
  for (const auto& e : doc["traceEvents"]) {
    // "args" is left out when an event has none.
    if (e["ph"] == "M" || !e.contains("args") || !e["args"].contains("seq"))
      continue;
    const std::string& name = threads[e["pid"]][e["tid"]];
    ASSERT_EQ(name.rfind("core ", 0), 0u) << name;
    per_core[std::atoi(name.c_str() + 5)]++;
  }
  ASSERT_EQ(per_core.size(), 4u);
  for (int k = 0; k < 4; k++)
    EXPECT_EQ(per_core[k], kFixtureRecordsPerCore[k]) << "core " << k;
}

TEST(ExportJson, BeginsAndEndsAreBalancedAndNestOnEveryThread) {
  const nlohmann::json doc = ExportAll(FixturePath());
  std::map<std::pair<int, int>, int> depth;
  std::map<std::pair<int, int>, double> last_ts;
  uint64_t begins = 0, completes = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph != "B" && ph != "E" && ph != "X")
      continue;
    const auto track = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    const double ts = e["ts"];
    EXPECT_GE(ts, last_ts[track]);
    last_ts[track] = ts;
    int& d = depth[track];
    if (ph == "X") {
      // A complete slice: on a free thread, and the next event after its end.
      EXPECT_EQ(d, 0) << "X overlapping a slice on tid " << track.second;
      ASSERT_TRUE(e.contains("dur"));
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      last_ts[track] = ts + e["dur"].get<double>();
      completes++;
      continue;
    }
    d += ph == "B" ? 1 : -1;
    begins += ph == "B";
    EXPECT_GE(d, 0) << "E without B on tid " << track.second;
    EXPECT_LE(d, 1) << "overlapping slices on tid " << track.second;
  }
  // Pairs stay B/E; latency slices are X.
  EXPECT_GT(begins, 100u);
  EXPECT_GT(completes, 100u);
  for (const auto& [track, d] : depth)
    EXPECT_EQ(d, 0) << "tid " << track.second;
}

TEST(ExportJson, NamesTheDeviceProcessAndMarkersThread) {
  const nlohmann::json doc = ExportAll(MarkersFixturePath());
  bool process = false, marker = false;
  int markers_pid = -1;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" &&
        e["args"]["name"] == "hmb dev 0 (0000:00:02.0)")
      process = true;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "markers")
      markers_pid = e["pid"];
    if (e["ph"] == "i" && e["name"] == "HMBMARK n=39") {
      marker = e["pid"] == markers_pid;
      EXPECT_NEAR(e["ts"].get<double>(), 11786078.0, 1.0);
    }
  }
  EXPECT_TRUE(process);
  EXPECT_TRUE(marker);
}

TEST(ExportJson, RecordsAreAtTheirConvertedTimeWithTheirBound) {
  const nlohmann::json doc = ExportAll(ClockFixturePath());
  std::map<uint64_t, nlohmann::json> by_fw_ts;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] != "M" && e.contains("args") && e["args"].contains("fw_ts"))
      by_fw_ts[e["args"]["fw_ts"].get<uint64_t>()] = e;
  ASSERT_EQ(by_fw_ts.size(), 11u);
  // A record's time: an instant's or an end's "ts"; a latency slice (X)
  // ends at it.
  const auto at = [](const nlohmann::json& e) {
    return e["ts"].get<double>() + (e["ph"] == "X" ? e["dur"].get<double>() : 0.0);
  };
  const nlohmann::json& r = by_fw_ts.at(9001700086u);
  EXPECT_DOUBLE_EQ(at(r), 1001700.0);
  EXPECT_EQ(r["args"]["fw_time_bound_ns"], 2102u);
  const nlohmann::json& early = by_fw_ts.at(8998999950u);
  EXPECT_DOUBLE_EQ(at(early), 1000100.0);
  EXPECT_EQ(early["args"]["fw_time"], "not converted: no clock fit");
  EXPECT_EQ(by_fw_ts.at(9100105006u)["args"]["fw_time_stale_fit"], true);
}

TEST(ExportJson, HostCommandsAreSlicesOnTheirQueuesThreadsWithFlowsToTheFetch) {
  const nlohmann::json doc = ExportAll(CmdJoinFixturePath());
  auto threads = Threads(doc);
  int nvme_pid = -1;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "nvme0")
      nvme_pid = e["pid"];
  ASSERT_GE(nvme_pid, 0);
  std::map<std::string, int> out, in;  // bind_id -> count
  std::map<std::string, std::string> out_cid, in_cid;
  int host_begins = 0, host_instants = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M")
      continue;
    const bool host = e["pid"] == nvme_pid;
    if (host) {
      EXPECT_EQ(threads[e["pid"]][e["tid"]].rfind("qid ", 0), 0u);
      host_begins += e["ph"] == "B";
      host_instants += e["ph"] == "X" && e["dur"] == 0.0;
    }
    if (!e.contains("bind_id"))
      continue;
    const std::string id = e["bind_id"];
    const std::string cid = e["args"]["cid"].dump();
    if (e.value("flow_out", false)) {
      EXPECT_TRUE(host);
      out[id]++;
      out_cid[id] = cid;
    }
    if (e.value("flow_in", false)) {
      EXPECT_FALSE(host);
      EXPECT_EQ(e["name"], "cmd_fetch");
      in[id]++;
      in_cid[id] = cid;
    }
  }
  EXPECT_EQ(host_begins, 23);   // completed commands
  EXPECT_EQ(host_instants, 1);  // the one without nvme_complete_rq (with its flow)
  EXPECT_EQ(out.size(), 22u);
  EXPECT_EQ(in.size(), 22u);
  for (const auto& [id, n] : out) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(in[id], 1) << id;
    EXPECT_EQ(in_cid[id], out_cid[id]) << id;
  }
}

const std::vector<std::string> kAllFixtures = {FixturePath(), MarkersFixturePath(),
                                               CmdJoinFixturePath(), CmdJoinBootFixturePath(),
                                               ClockFixturePath()};

// Issue 25: Perfetto's JSON importer (json_trace_parser.cc) reads "bind_id"
// only on "B", "X" and "b"/"e"/"n"; a flow anywhere else is lost
// (flow_end_without_start).
TEST(ExportJson, EveryFlowIsOnAnEventPerfettosJsonImporterReadsFlowsOn) {
  for (const std::string& path : kAllFixtures) {
    std::map<std::string, int> out, in;
    const nlohmann::json doc = ExportAll(path);
    for (const auto& e : doc["traceEvents"]) {
      if (!e.contains("bind_id"))
        continue;
      const std::string ph = e["ph"];
      EXPECT_TRUE(ph == "B" || ph == "X" || ph == "b" || ph == "e" || ph == "n")
          << path << ": a flow on \"" << ph << "\"";
      (e.value("flow_out", false) ? out : in)[e["bind_id"]]++;
    }
    // Both ends of every flow.
    EXPECT_EQ(out.size(), in.size()) << path;
    for (const auto& [id, n] : out)
      EXPECT_EQ(in[id], n) << path << " " << id;
  }
  // As many as the protobuf export's (export_proto_unittest).
  std::set<std::string> flows;
  const nlohmann::json doc = ExportAll(CmdJoinFixturePath());
  for (const auto& e : doc["traceEvents"])
    if (e.contains("bind_id") && e["ph"] != "i")
      flows.insert(e["bind_id"]);
  EXPECT_EQ(flows.size(), 22u);
}

// Issue 25: once a file has an "X", Perfetto's sorter (trace_sorter.h)
// puts every "E" first among the events of its timestamp: an "E" at its
// own "B"'s time closes nothing and the slice never ends (dur -1).
TEST(ExportJson, NoEndIsAtItsOwnBeginsTimestamp) {
  for (const std::string& path : kAllFixtures) {
    std::map<std::pair<int, int>, std::vector<double>> open;  // thread -> begins' ts
    const nlohmann::json doc = ExportAll(path);
    for (const auto& e : doc["traceEvents"]) {
      const std::string ph = e["ph"];
      const auto thread = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
      if (ph == "B") {
        open[thread].push_back(e["ts"]);
      } else if (ph == "E") {
        ASSERT_FALSE(open[thread].empty()) << path;
        EXPECT_NE(open[thread].back(), e["ts"].get<double>()) << path << ": E at " << e["ts"];
        open[thread].pop_back();
      }
    }
  }
}

TEST(ExportJson, ASliceOfNoLengthIsOneCompleteEventWithBothEndsArguments) {
  // markers-small: the last cmd_fetch of core 1 begins at the capture's
  // last timestamp and is ended there, unfinished, 60 events later.
  int found = 0;
  const nlohmann::json markers = ExportAll(MarkersFixturePath());
  for (const auto& e : markers["traceEvents"]) {
    if (e["ph"] != "X" || e["name"] != "cmd_fetch" || !e["args"].contains("unfinished"))
      continue;
    found++;
    EXPECT_EQ(e["dur"], 0.0);
    EXPECT_EQ(e["args"]["unfinished"], "capture ended");
    EXPECT_EQ(e["args"]["seq"], 7162);  // the begin's
  }
  EXPECT_EQ(found, 1);
  // In a stream: other threads' events between the two ends, and an end
  // with a name the begin also has (the begin's value stays).
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  JsonTraceWriter writer(f);
  ExportTrack group{ExportTrack::Kind::kGroup, 1, 0, "dev", 0, "", 1};
  writer.Track(group);
  for (uint64_t uuid : {2, 3})
    writer.Track({ExportTrack::Kind::kSlices, uuid, 1, "core 0", 0, "", 1});
  ExportEvent e;
  auto emit = [&](ExportEvent::Type type, uint64_t track, uint64_t ts,
                  std::vector<std::pair<std::string_view, uint64_t>> args) {
    e.type = type;
    e.track = track;
    e.ts = ts;
    e.name = type == ExportEvent::Type::kEnd ? "" : "fetch";
    e.args.clear();
    for (auto [name, v] : args) {
      ExportArg& a = e.args.emplace_back();
      a.name = name;
      a.u = v;
    }
    writer.Event(e);
  };
  emit(ExportEvent::Type::kBegin, 2, 5000, {{"seq", 1}});
  emit(ExportEvent::Type::kBegin, 3, 5000, {{"seq", 2}});
  emit(ExportEvent::Type::kEnd, 3, 6000, {{"seq", 3}});
  emit(ExportEvent::Type::kEnd, 2, 5000, {{"seq", 4}, {"cid", 9}});
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  std::fclose(f);
  const nlohmann::json doc = nlohmann::json::parse(std::string(data, size));
  std::free(data);
  std::vector<std::string> phases;
  for (const auto& ev : doc["traceEvents"])
    if (ev["ph"] != "M")
      phases.push_back(ev["ph"]);
  EXPECT_EQ(phases, (std::vector<std::string>{"X", "B", "E"}));
  const auto& events = doc["traceEvents"];
  const auto it = std::find_if(events.begin(), events.end(),
                               [](const nlohmann::json& ev) { return ev["ph"] == "X"; });
  ASSERT_NE(it, events.end());
  const nlohmann::json& x = *it;
  EXPECT_EQ(x["tid"], 1);
  EXPECT_EQ(x["ts"], 5.0);
  EXPECT_EQ(x["dur"], 0.0);
  EXPECT_EQ(x["args"], nlohmann::json::parse(R"({"seq":1,"cid":9})"));
  EXPECT_EQ(writer.begins_moved(), 0u);
}

TEST(ExportJson, ABeginWaitingLongForItsEndIsMovedNotKeptInTheOutput) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  JsonTraceWriter writer(f);
  writer.Track({ExportTrack::Kind::kGroup, 1, 0, "dev", 0, "", 1});
  for (uint64_t uuid : {2, 3, 4})
    writer.Track({ExportTrack::Kind::kSlices, uuid, 1, "core 0", 0, "", 1});
  ExportEvent e;
  ExportArg& a = e.args.emplace_back();
  a.name = "text";
  a.type = ExportArg::Type::kString;
  const std::string long_text(1000, 'x');
  a.s = long_text;
  e.name = "open";
  e.type = ExportEvent::Type::kBegin;
  for (uint64_t track : {2, 4}) {
    e.track = track;
    e.ts = 1000 * track;
    writer.Event(e);
  }
  // More than kHoldBytes of other events before their ends: the begins
  // are cut out of the output, which is written (flat memory)...
  e.type = ExportEvent::Type::kInstant;
  e.track = 3;
  e.ts = 5000;
  e.name = "filler";
  size_t fillers = 0;
  for (; fillers * 1000 < JsonTraceWriter::kHoldBytes + (1u << 20); fillers++)
    writer.Event(e);
  EXPECT_EQ(writer.begins_moved(), 2u);
  std::fflush(f);
  EXPECT_GT(size, JsonTraceWriter::kHoldBytes);
  // ... and each comes back where its end is: one ends at its own time
  // (an "X" of no length), the other later (a "B" and its "E").
  e.type = ExportEvent::Type::kEnd;
  e.name = {};
  e.args.clear();
  e.track = 2;
  e.ts = 2000;
  writer.Event(e);
  e.track = 4;
  e.ts = 6000;
  writer.Event(e);
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  std::fclose(f);
  const nlohmann::json doc = nlohmann::json::parse(std::string(data, size));
  std::free(data);
  std::vector<std::string> tail;
  size_t instants = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "i") {
      instants++;
    } else if (ev["ph"] != "M") {
      EXPECT_EQ(instants, fillers) << "a begin before the events it was cut out of";
      tail.push_back(std::string(ev["ph"]) + " " + std::to_string(ev["tid"].get<int>()) + " " +
                     std::to_string(ev["ts"].get<double>()));
    }
  }
  EXPECT_EQ(tail, (std::vector<std::string>{"X 1 2.000000", "B 3 4.000000", "E 3 6.000000"}));
}

TEST(ExportJson, NamesTheCapturesTraceClock) {
  EXPECT_NE(ExportAll(CmdJoinFixturePath())["otherData"]["clock"].get<std::string>().find(
                "\"local\""),
            std::string::npos);
  EXPECT_NE(ExportAll(CmdJoinBootFixturePath())["otherData"]["clock"].get<std::string>().find(
                "\"boot\""),
            std::string::npos);
}

}  // namespace
TEST(ExportJson, StringsNumbersAndTimesSurviveAJsonParser) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  JsonTraceWriter writer(f);
  const std::string odd = std::string("a\"b\\c\x01\x1f\td\n", 11) + "\xc2\xb0" "C end";
  writer.Track({ExportTrack::Kind::kGroup, 1, 0, odd, 0, "", 7});
  writer.Track({ExportTrack::Kind::kSlices, 2, 1, "core 0", 0, "", 7});
  ExportEvent e;
  e.track = 2;
  e.ts = 18446744073709551615u;  // the largest time: µs and its ns
  e.name = odd;
  ExportArg big;
  big.name = "u";
  big.u = 18446744073709551615u;
  ExportArg negative;
  negative.name = "i";
  negative.type = ExportArg::Type::kInt;
  negative.i = -9223372036854775807 - 1;
  ExportArg text;
  text.name = odd;
  text.type = ExportArg::Type::kString;
  text.s = odd;
  e.args = {big, negative, text};
  writer.Event(e);
  e.ts = 1005;
  e.args.clear();
  writer.Event(e);
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  std::fclose(f);
  const std::string raw(data, size);
  std::free(data);
  const nlohmann::json doc = nlohmann::json::parse(raw);
  std::vector<nlohmann::json> events;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "process_name") {
      EXPECT_EQ(ev["args"]["name"], odd);
    }
    if (ev["ph"] == "i")
      events.push_back(ev);
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["name"], odd);
  EXPECT_EQ(events[0]["args"]["u"].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(events[0]["args"]["i"].get<int64_t>(), -9223372036854775807 - 1);
  EXPECT_EQ(events[0]["args"][odd], odd);
  EXPECT_EQ(events[0]["pid"], 7);
  EXPECT_EQ(events[1]["ts"].get<double>(), 1.005);
  // Times are written as µs with the ns as three decimals (a double
  // would round the largest).
  EXPECT_NE(raw.find("\"ts\":18446744073709551.615"), std::string::npos);
  EXPECT_NE(raw.find("\"ts\":1.005"), std::string::npos);
}

TEST(ExportJson, CountersAndTextsKeptByIdAreWrittenTheSameEachTime) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  JsonTraceWriter writer(f);
  writer.Track({ExportTrack::Kind::kGroup, 1, 0, "dev", 0, "", 3});
  writer.Track({ExportTrack::Kind::kSlices, 2, 1, "core 0", 0, "", 3});
  writer.Track({ExportTrack::Kind::kCounter, 3, 1, "queue depth", 0, "cmds", 3});
  // A short text (copied as a block once kept) and one too long for that.
  const std::string long_text(60, 'x');
  const std::string long_value = long_text + "\"";
  ExportEvent e;
  e.track = 2;
  e.name = "op";
  e.name_id = 5;
  ExportArg a;
  a.name = "state";
  a.name_id = 6;
  a.type = ExportArg::Type::kString;
  a.s = "READY";
  a.value_id = 7;
  ExportArg b;
  b.name = long_text;
  b.name_id = 8;
  b.type = ExportArg::Type::kString;
  b.s = long_value;
  b.value_id = 9;
  e.args = {a, b};
  for (uint64_t ts : {1000, 2000}) {
    e.ts = ts;
    writer.Event(e);
  }
  ExportEvent c;
  c.type = ExportEvent::Type::kCounter;
  c.track = 3;
  c.ts = 2500;
  c.counter = -3;
  writer.Event(c);
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  std::fclose(f);
  const std::string raw(data, size);
  std::free(data);
  const std::string args = "\"args\":{\"state\":\"READY\",\"" + long_text + "\":\"" + long_text +
                           "\\\"\"}}";
  EXPECT_NE(raw.find("{\"ph\":\"i\",\"name\":\"op\",\"pid\":3,\"tid\":1,\"ts\":1.000," + args),
            std::string::npos)
      << raw;
  EXPECT_NE(raw.find("{\"ph\":\"i\",\"name\":\"op\",\"pid\":3,\"tid\":1,\"ts\":2.000," + args),
            std::string::npos)
      << raw;
  EXPECT_NE(raw.find("{\"ph\":\"C\",\"name\":\"queue depth\",\"pid\":3,\"tid\":0,\"ts\":2.500,"
                     "\"args\":{\"cmds\":-3}}"),
            std::string::npos)
      << raw;
}

// The numbers are std::to_chars's, at every number of digits.
TEST(JsonText, NumbersAreWhatToCharsWrites) {
  std::vector<uint64_t> values = {0, std::numeric_limits<uint64_t>::max()};
  for (uint64_t p = 1; p <= 1000000000000000000u; p *= 10)
    for (uint64_t v : {p - 1, p, p + 1, 2 * p, 9 * p, 9 * p + p - 1})
      values.push_back(v);
  values.push_back(10000000000000000000u);
  values.push_back(10000000000000000000u - 1);
  for (uint64_t v = 1; v; v <<= 1)
    values.push_back(v);
  // And some of every size, zeros inside included.
  uint64_t x = 88172645463325252u;
  for (int i = 0; i < 20000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    values.push_back(x >> (i % 64));
    values.push_back((x >> (i % 64)) / 1000 * 1000);
  }
  for (uint64_t v : values) {
    char want[32];
    const std::string_view expected(want, std::to_chars(want, want + sizeof(want), v).ptr - want);
    char got[32 + json_text::kSlack];
    EXPECT_EQ(std::string_view(got, json_text::Uint(got, v) - got), expected) << v;
    const auto i = static_cast<int64_t>(v);
    const std::string_view expected_i(want,
                                      std::to_chars(want, want + sizeof(want), i).ptr - want);
    EXPECT_EQ(std::string_view(got, json_text::Int(got, i) - got), expected_i) << i;
  }
}

TEST(JsonText, MicrosHaveTheNanosecondsAsThreeDecimals) {
  const std::pair<uint64_t, const char*> cases[] = {
      {0, "0.000"},       {5, "0.005"},           {40, "0.040"},
      {999, "0.999"},     {1000, "1.000"},        {1005, "1.005"},
      {99999, "99.999"},  {123456789, "123456.789"},
      {18446744073709551615u, "18446744073709551.615"},
  };
  for (const auto& [ns, text] : cases) {
    char got[32 + json_text::kSlack];
    EXPECT_EQ(std::string_view(got, json_text::Micros(got, ns) - got), text) << ns;
  }
}

TEST(JsonText, AShortTextIsCopiedAsABlockUpToItsEnd) {
  json_text::ShortText t;
  EXPECT_FALSE(t.Keep(""));
  EXPECT_FALSE(t.Keep(std::string(json_text::ShortText::kText + 1, 'a')));
  const std::string longest(json_text::ShortText::kText, 'b');
  ASSERT_TRUE(t.Keep(longest));
  char out[json_text::kSlack + 8];
  EXPECT_EQ(std::string_view(out, t.Put(out) - out), longest);
  ASSERT_TRUE(t.Keep("\"seq\""));
  std::memset(out, 'z', sizeof(out));
  char* end = t.Put(out);
  EXPECT_EQ(std::string_view(out, end - out), "\"seq\"");
  *end++ = ':';
  EXPECT_EQ(std::string_view(out, end - out), "\"seq\":");
}

}  // namespace hmbtrace
