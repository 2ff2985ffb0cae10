// SPDX-License-Identifier: GPL-2.0-only
#include "export_json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "export.h"
#include "fixture_testutil.h"

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
  EXPECT_TRUE(ExportCapture(path, &dicts, &writer, &summary, &error)) << error;
  EXPECT_TRUE(writer.Finish(&error)) << error;
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
      host_instants += e["ph"] == "i";
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
  EXPECT_EQ(host_instants, 1);  // the one without nvme_complete_rq
  EXPECT_EQ(out.size(), 22u);
  EXPECT_EQ(in.size(), 22u);
  for (const auto& [id, n] : out) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(in[id], 1) << id;
    EXPECT_EQ(in_cid[id], out_cid[id]) << id;
  }
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
  ASSERT_TRUE(writer.Finish(&error)) << error;
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

}  // namespace hmbtrace
