// SPDX-License-Identifier: GPL-2.0-only
// stat's command causes, from the die model's records fed to StatCollector
// as a capture would give them (hmb_state, hmb_dict, records), checked
// against the model's truth; and nothing of it for a capture without
// command attribution.
#include "causes/cause_stat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "causes/causes_events.h"
#include "causes/die_model.h"
#include "decode_test_util.h"
#include "stat/stat.h"

namespace hmbtrace {
namespace {

constexpr uint64_t kHz = 100000000;

struct Capture {
  DictionaryStore dicts;
  StatCollector stat{&dicts};
};

// The model's run as the hmb instance would carry it: device 0, one core.
void Feed(const DieModelRun& run, Capture* c) {
  const std::vector<uint8_t> dict =
      test::ProduceDictionary({cz_events, cz_nr_events}, false, {cz_cmds, cz_nr_cmds});
  CaptureEvent state;
  state.kind = CaptureKind::kState;
  state.state = HMB_TRACE_EV_ATTACHED;
  state.producer_gen = 1;
  state.clock_hz = kHz;
  state.nr_cores = 1;
  state.name = "fwsim0";
  CaptureEvent chunk;
  chunk.kind = CaptureKind::kDict;
  chunk.producer_gen = 1;
  chunk.total_len = static_cast<uint32_t>(dict.size());
  chunk.data = dict;
  c->dicts.Add(state);
  c->dicts.Add(chunk);
  c->stat.Add(state);
  c->stat.Add(chunk);
  uint64_t seq = 0;
  for (const ModelRecord& r : run.records) {
    CaptureEvent ev;
    ev.kind = CaptureKind::kRecord;
    ev.ts = r.ts * (1000000000 / kHz);
    ev.seq = seq++;
    ev.fw_ts = r.ts;
    ev.event_id = r.event_id;
    ev.len = static_cast<uint16_t>(r.payload.size());
    ev.data = r.payload;
    c->stat.Add(ev);
  }
  c->stat.Finish();
}

// Of the truth's reads above their p99, how many had each main cause.
std::map<std::string, uint64_t> TruthTail(const DieModelRun& run, uint8_t opcode) {
  std::vector<uint64_t> lat;
  for (const TruthCommand& t : run.commands) {
    if (t.opcode == opcode)
      lat.push_back(t.complete - t.fetch);
  }
  std::sort(lat.begin(), lat.end());
  const uint64_t p99 = lat[(lat.size() * 99 + 99) / 100 - 1];
  std::map<std::string, uint64_t> out;
  for (const TruthCommand& t : run.commands) {
    if (t.opcode == opcode && t.complete - t.fetch > p99)
      out[t.cause]++;
  }
  return out;
}

TEST(CauseStat, TheTailTableCountsTheTruthsMainCauses) {
  const DieModelRun run = RunDieModel(DieModelConfig{});
  Capture c;
  Feed(run, &c);
  const nlohmann::json doc = c.stat.Json("model.dat");
  ASSERT_TRUE(doc.contains("command_causes"));
  const nlohmann::json& causes = doc["command_causes"];
  EXPECT_EQ(causes["commands"], run.commands.size());
  const std::map<std::string, uint64_t> truth = TruthTail(run, CZ_OPC_READ);
  bool found = false;
  for (const nlohmann::json& op : causes["opcodes"]) {
    if (op["opcode"] != "read")
      continue;
    found = true;
    uint64_t tail = 0;
    for (const auto& [cause, n] : truth) {
      tail += n;
      if (cause == kCauseNone)
        continue;
      ASSERT_TRUE(op["tail"]["causes"].contains(cause)) << cause;
      EXPECT_EQ(op["tail"]["causes"][cause]["main_cause_of"], n) << cause;
    }
    EXPECT_EQ(op["tail"]["commands"], tail);
    uint64_t all = 0;
    for (const auto& [cause, n] : op["main_causes"].items())
      all += n.get<uint64_t>();
    EXPECT_EQ(all, op["commands"]);
    // The shares are of the tail's whole time, work included.
    double shares = 0;
    for (const auto& [cause, v] : op["tail"]["causes"].items())
      shares += v["share"].get<double>();
    EXPECT_NEAR(shares, 1.0, 1e-9);
  }
  EXPECT_TRUE(found);
  const std::string text = c.stat.Text("model.dat");
  EXPECT_NE(text.find("Command causes (ABI 1.2 attribution): 20000 commands"), std::string::npos);
  std::cout << text.substr(text.find("\nCommand causes"));
}

TEST(CauseStat, WithTheCausesOffNoCommandIsBlamedOnMoreThanQueueing) {
  DieModelConfig config;
  config.DisableCauses();
  const DieModelRun run = RunDieModel(config);
  Capture c;
  Feed(run, &c);
  const nlohmann::json doc = c.stat.Json("model.dat");
  ASSERT_TRUE(doc.contains("command_causes"));
  uint64_t queued = 0;
  for (const nlohmann::json& op : doc["command_causes"]["opcodes"]) {
    for (const auto& [cause, n] : op["main_causes"].items()) {
      EXPECT_TRUE(cause == kCauseQueueing || cause == kCauseNone) << cause;
      if (cause == kCauseQueueing)
        queued += n.get<uint64_t>();
    }
  }
  // The commands still queue for their dies: the count is not vacuous.
  EXPECT_GT(queued, 0u);
}

TEST(CauseStat, ACaptureWithoutAttributionHasNoCauseSection) {
  CommandPaths none;
  none.Finish();
  EXPECT_EQ(CauseStatText(none, [](uint16_t) { return kHz; }), "");
}

TEST(CauseStat, DurationsReadAsPeopleWriteThem) {
  EXPECT_EQ(CauseDuration(158000, kHz), "1.580 ms");
  EXPECT_EQ(CauseDuration(7200, kHz), "72.0 us");
  EXPECT_EQ(CauseDuration(7200, 0), "7200 ticks");
}

}  // namespace
}  // namespace hmbtrace
