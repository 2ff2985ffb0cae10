// SPDX-License-Identifier: GPL-2.0-only
// stat's command causes, from the die model's records fed to StatCollector
// as a capture would give them (hmb_state, hmb_dict, records), checked
// against the model's truth; and nothing of it for a capture without
// command attribution.
#include "causes/cause_stat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <cstdint>
#include <map>
#include <tuple>

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

// The truth's commands by (qid, cid, fetch): a cid is reused.
std::map<std::tuple<uint64_t, uint64_t, uint64_t>, const TruthCommand*> TruthByCommand(
    const DieModelRun& run) {
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, const TruthCommand*> out;
  for (const TruthCommand& t : run.commands)
    out[{t.qid, t.cid, t.fetch}] = &t;
  return out;
}

TEST(CauseStat, TheSlowestListNamesEachTailCommandsTruthCause) {
  const DieModelRun run = RunDieModel(DieModelConfig{});
  Capture c;
  Feed(run, &c);
  const nlohmann::json doc = c.stat.Json("model.dat");
  const auto truth = TruthByCommand(run);
  size_t listed = 0, with_cause = 0;
  for (const nlohmann::json& op : doc["command_causes"]["opcodes"]) {
    const nlohmann::json& tail = op["tail"];
    ASSERT_TRUE(tail["slowest"].is_array());
    // Every command the tail table counts, none left out at this size.
    EXPECT_EQ(tail["slowest"].size(), tail["commands"].get<uint64_t>()) << op["opcode"];
    EXPECT_EQ(tail["slowest_truncated"], 0u);
    uint64_t previous = UINT64_MAX;
    for (const nlohmann::json& cmd : tail["slowest"]) {
      const uint64_t fetch = cmd["fetch"], latency = cmd["latency"];
      const auto t = truth.find({cmd["qid"].get<uint64_t>(), cmd["cid"].get<uint64_t>(), fetch});
      ASSERT_NE(t, truth.end()) << cmd.dump();
      EXPECT_EQ(latency, t->second->complete - t->second->fetch) << cmd.dump();
      EXPECT_EQ(cmd["main_cause"], t->second->cause) << cmd.dump();
      EXPECT_EQ(cmd["longest_delay"], t->second->longest_delay) << cmd.dump();
      // Slowest first, and above the p99 the tail table uses (in ticks here).
      EXPECT_LE(latency, previous);
      previous = latency;
      EXPECT_GT(static_cast<double>(latency), tail["p99"].get<double>() * (kHz / 1000000));
      ASSERT_FALSE(cmd["stages"].empty()) << cmd.dump();
      uint64_t begin = 0;
      for (const nlohmann::json& s : cmd["stages"]) {
        EXPECT_GE(s["begin"].get<uint64_t>(), begin) << cmd.dump();
        begin = s["begin"];
        EXPECT_GE(s["begin"].get<uint64_t>(), fetch);
        EXPECT_LE(s["begin"].get<uint64_t>(), s["end"].get<uint64_t>());
        EXPECT_LE(s["end"].get<uint64_t>(), fetch + latency);
      }
      listed++;
      with_cause += cmd["main_cause"] != kCauseNone;
    }
  }
  // As many as the truth has above each opcode's p99, most with a cause.
  uint64_t truth_tail = 0;
  for (const uint8_t opcode : {CZ_OPC_READ, CZ_OPC_WRITE}) {
    for (const auto& [cause, n] : TruthTail(run, opcode))
      truth_tail += n;
  }
  EXPECT_GT(truth_tail, 0u);
  EXPECT_EQ(listed, truth_tail);
  EXPECT_GE(with_cause, listed / 2);
}

TEST(CauseStat, TheSlowestListIsBoundedAndSaysHowManyItLeftOut) {
  const DieModelRun run = RunDieModel(DieModelConfig{});
  Capture c;
  Feed(run, &c);
  const nlohmann::json all = CauseStatJson(c.stat.command_paths(), [](uint16_t) { return kHz; });
  const nlohmann::json few =
      CauseStatJson(c.stat.command_paths(), [](uint16_t) { return kHz; }, 3);
  ASSERT_EQ(all["opcodes"].size(), few["opcodes"].size());
  size_t truncated = 0;
  for (size_t i = 0; i < all["opcodes"].size(); i++) {
    const nlohmann::json& a = all["opcodes"][i]["tail"];
    const nlohmann::json& f = few["opcodes"][i]["tail"];
    if (a["slowest"].size() <= 3) {  // the model's writes have no tail
      EXPECT_EQ(f["slowest"], a["slowest"]);
      EXPECT_EQ(f["slowest_truncated"], 0u);
      continue;
    }
    truncated++;
    ASSERT_EQ(f["slowest"].size(), 3u);
    EXPECT_EQ(f["slowest_truncated"], a["slowest"].size() - 3);
    // The ones kept are the slowest.
    for (size_t k = 0; k < 3; k++)
      EXPECT_EQ(f["slowest"][k], a["slowest"][k]);
    // The tail table still counts them all.
    EXPECT_EQ(f["commands"], a["commands"]);
  }
  EXPECT_GT(truncated, 0u);
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
