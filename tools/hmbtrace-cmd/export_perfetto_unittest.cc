// SPDX-License-Identifier: GPL-2.0-only
#include "export_perfetto.h"

#include <gtest/gtest.h>

#include <map>

#include "fixture_testutil.h"

namespace hmbtrace {
namespace {

nlohmann::json ExportFixture(const std::string& path = FixturePath()) {
  DictionaryStore dicts;
  std::string error;
  EXPECT_TRUE(CollectDictionaries(path, &dicts, &error)) << error;
  PerfettoExporter exporter(&dicts);
  EXPECT_TRUE(ReadCapture(
      path,
      [&exporter](const CaptureEvent& ev) {
        exporter.Add(ev);
        return true;
      },
      &error))
      << error;
  // Through text and a JSON parser, as a viewer would read it.
  const std::string text = exporter.Finish().dump();
  return nlohmann::json::parse(text);
}

TEST(ExportPerfetto, WritesValidJsonWithOneEventPerRecordOnItsCoresTracks) {
  const nlohmann::json doc = ExportFixture();
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<int, uint64_t> per_core;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" || e["pid"] != 1)
      continue;
    const int core = (e["tid"].get<int>() - 1) / kLaneStride;
    // An end closes a span opened by an earlier record: one event per
    // record, except for the E of a span still open when the capture ends.
    if (ph == "E" && e["args"].contains("unfinished"))
      continue;
    if (ph == "i" && e["name"] == "lost")
      continue;
    per_core[core]++;
  }
  ASSERT_EQ(per_core.size(), 4u);
  for (int k = 0; k < 4; k++)
    EXPECT_EQ(per_core[k], kFixtureRecordsPerCore[k]) << "core " << k;
}

TEST(ExportPerfetto, BeginsAndEndsAreBalancedAndNestOnEveryTrack) {
  const nlohmann::json doc = ExportFixture();
  std::map<std::pair<int, int>, int> depth;
  std::map<std::pair<int, int>, double> last_ts;
  uint64_t begins = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph != "B" && ph != "E")
      continue;
    const auto track = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    const double ts = e["ts"];
    EXPECT_GE(ts, last_ts[track]);
    last_ts[track] = ts;
    int& d = depth[track];
    d += ph == "B" ? 1 : -1;
    begins += ph == "B";
    EXPECT_GE(d, 0) << "E without B on tid " << track.second;
    EXPECT_LE(d, 1) << "overlapping slices on tid " << track.second;
  }
  EXPECT_GT(begins, 100u);
  for (const auto& [track, d] : depth)
    EXPECT_EQ(d, 0) << "tid " << track.second;
}

TEST(ExportPerfetto, NamesTheDeviceProcessAndCoreThreads) {
  const nlohmann::json doc = ExportFixture();
  bool process = false, core0 = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M")
      continue;
    if (e["name"] == "process_name" && e["args"]["name"] == "hmb dev 0 (0000:00:02.0)")
      process = true;
    if (e["name"] == "thread_name" && e["args"]["name"] == "core 0" && e["tid"] == 1)
      core0 = true;
  }
  EXPECT_TRUE(process);
  EXPECT_TRUE(core0);
}

TEST(ExportPerfetto, TraceMarkerLinesAreInstantsOnTheMarkersTrack) {
  const nlohmann::json doc = ExportFixture(MarkersFixturePath());
  std::vector<nlohmann::json> markers;
  bool named = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["pid"] != kMarkersPid)
      continue;
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "markers")
      named = true;
    if (e["ph"] == "i")
      markers.push_back(e);
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0]["name"], "HMBMARK n=39");
  EXPECT_NEAR(markers[0]["ts"].get<double>(), 11786078.0, 1.0);
}

TEST(ExportPerfetto, LossesAndMarkersAreInstants) {
  DictionaryStore dicts;
  PerfettoExporter exporter(&dicts);
  CaptureEvent lost;
  lost.kind = CaptureKind::kLost;
  lost.ts = 2000;
  lost.core = 3;
  lost.count = 7;
  lost.at_seq = 99;
  lost.reason = 1;
  exporter.Add(lost);
  CaptureEvent marker;
  marker.kind = CaptureKind::kMarker;
  marker.ts = 3500;
  const std::string text = "phase 2\n";
  marker.data = std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  exporter.Add(marker);
  const nlohmann::json doc = nlohmann::json::parse(exporter.Finish().dump());
  bool saw_lost = false, saw_marker = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "i" && e["name"] == "lost") {
      saw_lost = true;
      EXPECT_EQ(e["args"]["count"], 7);
      EXPECT_EQ(e["args"]["reason"], "torn");
      EXPECT_EQ(e["ts"], 2.0);
      EXPECT_EQ(e["tid"], 3 * kLaneStride + 1);
    }
    if (e["ph"] == "i" && e["name"] == "phase 2") {
      saw_marker = true;
      EXPECT_EQ(e["pid"], kMarkersPid);
      EXPECT_EQ(e["ts"], 3.5);
    }
  }
  EXPECT_TRUE(saw_lost);
  EXPECT_TRUE(saw_marker);
}

TEST(ExportPerfetto, RecordsAreAtTheirConvertedTimeWithTheirBound) {
  const nlohmann::json doc = ExportFixture(ClockFixturePath());
  std::map<uint64_t, nlohmann::json> by_fw_ts;
  double marker_ts = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M" && e.contains("args") && e["args"].contains("fw_ts"))
      by_fw_ts[e["args"]["fw_ts"].get<uint64_t>()] = e;
    if (e["pid"] == kMarkersPid && e["ph"] == "i" && e["name"] == "host write")
      marker_ts = e["ts"].get<double>();
  }
  ASSERT_EQ(by_fw_ts.size(), 11u);
  // Happened at 1.0017 s, drained at 1.0025 s, after the marker at 1.002 s.
  const nlohmann::json& r = by_fw_ts.at(9001700086u);
  EXPECT_DOUBLE_EQ(r["ts"].get<double>(), 1001700.0);
  EXPECT_LT(r["ts"].get<double>(), marker_ts);
  EXPECT_EQ(r["args"]["fw_time_bound_ns"], 2102u);  // 0.1 s past the window: 2 us + 1 ppm of it
  // Before any fit: at its ftrace time, and says why.
  const nlohmann::json& early = by_fw_ts.at(8998999950u);
  EXPECT_DOUBLE_EQ(early["ts"].get<double>(), 1000100.0);
  EXPECT_EQ(early["args"]["fw_time"], "not converted: no clock fit");
  EXPECT_EQ(by_fw_ts.at(9100105006u)["args"]["fw_time_stale_fit"], true);
}

}  // namespace
}  // namespace hmbtrace
