// SPDX-License-Identifier: GPL-2.0-only
#include "stat/html_report.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace hmbtrace {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The data a page carries, parsed back.
nlohmann::json PageData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"hmbtrace-data\">";
  const size_t from = page.find(open);
  EXPECT_NE(from, std::string::npos);
  const size_t to = page.find("</script>", from);
  return nlohmann::json::parse(page.substr(from + open.size(), to - from - open.size()));
}

CaptureEvent Marker(uint64_t ts, const std::string& text) {
  CaptureEvent ev;
  ev.kind = CaptureKind::kMarker;
  ev.ts = ts;
  ev.data = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  return ev;
}

TEST(HtmlTimeline, KeepsTheFirstMarkersAndCountsTheRest) {
  HtmlTimeline t;
  const std::string text = "step";
  for (uint64_t i = 0; i < HtmlTimeline::kMaxTimelineMarks + 5; i++)
    t.Add(Marker(1000 + i, text));
  const nlohmann::json j = t.Json();
  EXPECT_EQ(j["markers"].size(), HtmlTimeline::kMaxTimelineMarks);
  EXPECT_EQ(j["markers_total"], HtmlTimeline::kMaxTimelineMarks + 5);
  EXPECT_EQ(j["markers"][0]["ts_ns"], 1000u);
}

TEST(HtmlTimeline, AMarkerIsShownPrintableAndCut) {
  HtmlTimeline t;
  const std::string text = std::string("bad\x01") + std::string(500, 'x') + "\n";
  t.Add(Marker(1, text));
  const std::string shown = t.Json()["markers"][0]["text"];
  EXPECT_EQ(shown.rfind("bad\\x01xx", 0), 0u) << shown;
  EXPECT_LE(shown.size(), HtmlTimeline::kMaxMarkerText + 8);
  EXPECT_EQ(shown.substr(shown.size() - 3), "...");
}

TEST(HtmlTimeline, LossesAndStateChangesKeepWhereAndWhy) {
  HtmlTimeline t;
  CaptureEvent lost;
  lost.kind = CaptureKind::kLost;
  lost.ts = 50;
  lost.dev = 1;
  lost.core = 3;
  lost.count = 7;
  lost.reason = 0;
  t.Add(lost);
  CaptureEvent state;
  state.kind = CaptureKind::kState;
  state.ts = 55;
  state.producer_gen = 1;
  state.state = 0;  // attached
  t.Add(state);  // the state the capture starts with
  state.ts = 56;
  t.Add(state);  // the same again
  state.ts = 60;
  state.producer_gen = 2;
  state.state = kStateReset;
  t.Add(state);
  const nlohmann::json j = t.Json();
  ASSERT_EQ(j["states"].size(), 1u);
  EXPECT_EQ(j["states"][0]["ts_ns"], 60u);
  EXPECT_EQ(j["losses"][0]["core"], 3u);
  EXPECT_EQ(j["losses"][0]["count"], 7u);
  EXPECT_EQ(j["losses"][0]["reason"], LostReasonName(0));
  EXPECT_EQ(j["states"][0]["producer_gen"], 2u);
  EXPECT_EQ(j["states"][0]["state"], StateName(kStateReset));
}

TEST(HtmlReport, SlowestCommandsAreTheLongestCompletedOnesLongestFirst) {
  CommandJoin j;
  // (cid, setup, complete): totals 500, 100, 900, none, 300.
  j.HostSetup(0, 1, 1, 2, 1, 1000);
  j.HostComplete(0, 1, 1, 0, 1500);
  j.HostSetup(0, 1, 2, 2, 1, 1100);
  j.HostComplete(0, 1, 2, 0, 1200);
  j.HostSetup(0, 1, 3, 1, 1, 1200);
  j.HostComplete(0, 1, 3, 0, 2100);
  j.HostSetup(0, 1, 4, 1, 1, 1300);
  j.HostSetup(0, 1, 5, 1, 1, 1400);
  j.HostComplete(0, 1, 5, 0, 1700);
  j.Finish();
  std::vector<uint16_t> cids;
  for (const JoinedCommand* c : SlowestCommands(j, 3))
    cids.push_back(c->host.cid);
  EXPECT_EQ(cids, (std::vector<uint16_t>{3, 1, 5}));
  EXPECT_EQ(SlowestCommands(j, 10).size(), 4u);  // the one not completed has no total
  EXPECT_TRUE(SlowestCommands(j, 0).empty());
}

TEST(HtmlReport, DataCannotEndItsScript) {
  HtmlTimeline t;
  const std::string text = "</script ><script>alert(1)</SCRIPT/><!-- /*HMBTRACE_SCRIPT*/";
  t.Add(Marker(1, text));
  const std::string page = HtmlReportPage({{"timeline", t.Json()}});
  // Only the page's own two scripts end ("</script" and a space, a slash
  // or a '>' ends one, in any case); nothing opens a comment in them.
  std::string lower = page;
  for (char& ch : lower)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  size_t ends = 0;
  for (size_t at = lower.find("</script"); at != std::string::npos;
       at = lower.find("</script", at + 1))
    ends++;
  EXPECT_EQ(ends, 2u);
  EXPECT_EQ(page.find("<!-- /*HMBTRACE_SCRIPT"), std::string::npos);
  EXPECT_EQ(PageData(page)["timeline"]["markers"][0]["text"], text);
}

// The report of the command-join fixture: what stat computes, bounded.
class HtmlReportOfFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(::testing::TempDir() + "html_report_unittest.html");
    ASSERT_EQ(RunStat(HMBTRACE_CMD_JOIN_FIXTURE, false, true, *path_), 0);
    page_ = new std::string(Slurp(*path_));
    data_ = new nlohmann::json(PageData(*page_));
    std::remove(path_->c_str());
  }
  static std::string* path_;
  static std::string* page_;
  static nlohmann::json* data_;
};
std::string* HtmlReportOfFixture::path_;
std::string* HtmlReportOfFixture::page_;
nlohmann::json* HtmlReportOfFixture::data_;

TEST_F(HtmlReportOfFixture, FetchesNothingWhenItOpens) {
  const std::string& p = *page_;
  for (const char* fetch : {" src=", "<link", "@import", "url(", "https:", "fetch(", "XMLHttpRequest"})
    EXPECT_EQ(p.find(fetch), std::string::npos) << fetch;
  // http: only as the SVG namespace, which names and does not fetch.
  for (size_t at = p.find("http:"); at != std::string::npos; at = p.find("http:", at + 1))
    EXPECT_EQ(p.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << p.substr(at, 40);
  EXPECT_NE(p.find("default-src 'none'"), std::string::npos);
}

TEST_F(HtmlReportOfFixture, EventLatenciesAreStatsMergedOverCores) {
  const nlohmann::json& d = *data_;
  uint64_t want = 0;
  for (const auto& core : d["stat"]["devices"][0]["cores"])
    for (const auto& lat : core["latency"])
      if (lat["name"] == "cmd_complete.latency")
        want += lat["count"].get<uint64_t>();
  bool found = false;
  for (const auto& l : d["event_latency"]) {
    if (l["name"] != "cmd_complete.latency")
      continue;
    found = true;
    uint64_t bars = 0;
    for (const auto& b : l["buckets"])
      bars += b["count"].get<uint64_t>();
    EXPECT_EQ(l["count"], want);
    EXPECT_EQ(bars, want);
    EXPECT_EQ(l["unit"], "ns");
    EXPECT_LE(l["p50"], l["p90"]);
    EXPECT_LE(l["p90"], l["p99"]);
    EXPECT_LE(l["p99"], l["max"]);
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(want, 22u);
}

TEST_F(HtmlReportOfFixture, OpcodeSplitIsTheJoinsWithItsPercentiles) {
  const nlohmann::json& d = *data_;
  std::map<std::string, uint64_t> counts;
  for (const auto& row : d["commands"]["latency_split"])
    counts[row["opcode"].get<std::string>()] = row["count"].get<uint64_t>();
  ASSERT_EQ(d["opcode_latency"].size(), counts.size());
  for (const auto& op : d["opcode_latency"]) {
    EXPECT_EQ(op["count"], counts[op["opcode"].get<std::string>()]);
    ASSERT_EQ(op["phases"].size(), 4u);
    for (const auto& p : op["phases"]) {
      uint64_t bars = 0;
      for (const auto& b : p["buckets"])
        bars += b["count"].get<uint64_t>();
      EXPECT_EQ(bars, op["count"].get<uint64_t>()) << p.dump();
      EXPECT_TRUE(p.contains("p50_ns") && p.contains("p99_ns")) << p.dump();
    }
  }
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"read", 5}, {"write", 16}}));
}

TEST_F(HtmlReportOfFixture, SlowestCommandsCarryTheirSplitAndStory) {
  const nlohmann::json& s = (*data_)["slowest"];
  ASSERT_EQ(s.size(), 23u);  // every completed command of the fixture
  for (size_t i = 1; i < s.size(); i++)
    EXPECT_GE(s[i - 1]["total_ns"], s[i]["total_ns"]);
  size_t with_split = 0;
  for (const auto& c : s) {
    const std::string story = c["story"];
    EXPECT_EQ(story.rfind("nvme0 qid=" + std::to_string(c["qid"].get<int>()) +
                              " cid=" + std::to_string(c["cid"].get<int>()),
                          0),
              0u)
        << story;
    if (c["split"].is_null()) {
      EXPECT_TRUE(c.contains("why")) << c.dump();
      continue;
    }
    with_split++;
    EXPECT_NE(story.find("split: submit->fetch"), std::string::npos) << story;
    EXPECT_NE(story.find("fw  * "), std::string::npos) << story;  // its own records marked
  }
  EXPECT_EQ(with_split, 21u);
}

TEST_F(HtmlReportOfFixture, MarkersAreOnTheTimeline) {
  const nlohmann::json& t = (*data_)["timeline"];
  ASSERT_EQ(t["markers"].size(), 2u);
  EXPECT_EQ(t["markers"][0]["text"], "fixture start");
  EXPECT_EQ(t["markers_total"], 2u);
}

}  // namespace
}  // namespace hmbtrace
