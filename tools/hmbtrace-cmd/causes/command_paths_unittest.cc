// SPDX-License-Identifier: GPL-2.0-only
// CommandPaths against hmb-fwsim's die model: the records it writes go
// through the producer's dictionary (ABI 1.2 trailer) and the decoder,
// and the cause named for each slow command's longest wait is checked
// against the model's own account (its truth).
#include "causes/command_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

#include "causes/causes_events.h"
#include "causes/command_path_text.h"
#include "causes/die_model.h"
#include "decode_test_util.h"

namespace hmbtrace {
namespace {

Dictionary ModelDictionary() {
  const std::vector<uint8_t> bytes =
      test::ProduceDictionary({cz_events, cz_nr_events}, false, {cz_cmds, cz_nr_cmds});
  std::string error;
  std::optional<Dictionary> dict = Dictionary::Parse(bytes, &error);
  EXPECT_TRUE(dict) << error;
  return *dict;
}

CommandPaths Attribute(const DieModelRun& run, const Dictionary& dict) {
  CommandPaths paths;
  for (const ModelRecord& r : run.records) {
    const EventDesc* ev = dict.Find(r.event_id);
    EXPECT_NE(ev, nullptr);
    paths.Add(0, r.ts, *ev, r.payload);
  }
  paths.Finish();
  return paths;
}

// The truth's commands by (qid, cid, fetch).
class Truth {
 public:
  explicit Truth(const DieModelRun& run) {
    for (const TruthCommand& t : run.commands)
      index_[{t.qid, t.cid, t.fetch}] = &t;
  }
  const TruthCommand* Of(const CommandPath& c) const {
    auto it = index_.find({c.qid, c.cid, c.fetch});
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::tuple<uint16_t, uint16_t, uint64_t>, const TruthCommand*> index_;
};

uint64_t P99(const std::vector<CommandPath>& cmds) {
  std::vector<uint64_t> lat;
  for (const CommandPath& c : cmds)
    lat.push_back(c.latency());
  std::sort(lat.begin(), lat.end());
  return lat[(lat.size() * 99 + 99) / 100 - 1];
}

TEST(CommandPathsTest, DictionaryCarriesTheAttribution) {
  const Dictionary dict = ModelDictionary();
  const EventDesc* wait = dict.Find(CZ_EV_DIE_WAIT);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->cmd_kind, HMB_TRACE_CMD_WAIT);
  EXPECT_EQ(wait->fields[wait->tag_field].name, "tag");
  EXPECT_EQ(wait->fields[wait->resource_field].name, "die");
  EXPECT_EQ(dict.Find(CZ_EV_CMD_FETCH)->cmd_kind, HMB_TRACE_CMD_BIND);
  EXPECT_EQ(dict.Find(CZ_EV_CMD_COMPLETE)->cmd_kind, HMB_TRACE_CMD_NONE);
  EXPECT_EQ(dict.Find(CZ_EV_GC_ERASE)->cmd_kind, HMB_TRACE_CMD_ACTIVITY);
  EXPECT_EQ(dict.Find(CZ_EV_READ_RETRY)->cmd_kind, HMB_TRACE_CMD_REWORK);
}

TEST(CommandPathsTest, SlowCommandsBlameWhatTheModelSays) {
  const DieModelRun run = RunDieModel(DieModelConfig{});
  const CommandPaths paths = Attribute(run, ModelDictionary());
  const Truth truth(run);
  ASSERT_EQ(paths.commands().size(), run.commands.size());
  EXPECT_EQ(paths.counts().total_unattributed(), 0u);
  const uint64_t p99 = P99(paths.commands());
  size_t tail = 0, agree = 0;
  std::map<std::string, size_t> causes;
  for (const CommandPath& c : paths.commands()) {
    if (c.latency() <= p99)
      continue;
    const TruthCommand* t = truth.Of(c);
    ASSERT_NE(t, nullptr);
    tail++;
    causes[t->cause]++;
    if (c.MainCause() == t->cause)
      agree++;
    else
      ADD_FAILURE() << "qid " << c.qid << " cid " << c.cid << ": " << c.MainCause() << ", truth "
                    << t->cause;
  }
  ASSERT_GE(tail, run.commands.size() / 200);
  EXPECT_GE(agree * 100, tail * 99) << agree << " of " << tail;
  for (const auto& [cause, n] : causes)
    std::cout << "tail cause " << cause << ": " << n << " of " << tail << "\n";
  // The tail has every kind of cause, so the check above means something.
  EXPECT_GT(causes["gc_erase"], 0u);
  EXPECT_GT(causes["read_retry"], 0u);
  EXPECT_GT(causes["thermal_throttle"], 0u);
}

TEST(CommandPathsTest, EveryCommandAgreesWithTheTruth) {
  const DieModelRun run = RunDieModel(DieModelConfig{});
  const CommandPaths paths = Attribute(run, ModelDictionary());
  const Truth truth(run);
  size_t agree = 0;
  for (const CommandPath& c : paths.commands()) {
    const TruthCommand* t = truth.Of(c);
    ASSERT_NE(t, nullptr);
    agree += c.MainCause() == t->cause;
  }
  EXPECT_GE(agree * 100, paths.commands().size() * 99);
}

TEST(CommandPathsTest, CausesDisabledBlameNothingAboveQueueing) {
  DieModelConfig config;
  config.DisableCauses();
  const DieModelRun run = RunDieModel(config);
  const CommandPaths paths = Attribute(run, ModelDictionary());
  size_t blamed = 0, queued = 0;
  for (const CommandPath& c : paths.commands()) {
    const std::string cause = c.MainCause();
    blamed += cause != kCauseQueueing && cause != kCauseNone;
    queued += cause == kCauseQueueing;
  }
  EXPECT_LE(blamed * 100, paths.commands().size());
  EXPECT_GT(queued, 0u);  // the dies are busy enough to queue
}

TEST(CommandPathsTest, StagesAddUpToTheFirmwarePart) {
  const DieModelRun run = RunDieModel(DieModelConfig{});
  const CommandPaths paths = Attribute(run, ModelDictionary());
  // The model's clock: 100 MHz, so a tick is 10 ns and a stage boundary
  // rounds down by less than one tick; the stages tile the command.
  for (const CommandPath& c : paths.commands()) {
    ASSERT_TRUE(c.completed);
    uint64_t sum = 0;
    for (const CommandStage& s : c.stages)
      sum += s.length();
    ASSERT_LE(sum > c.latency() ? sum - c.latency() : c.latency() - sum, c.stages.size())
        << "qid " << c.qid << " cid " << c.cid;
  }
}

// Bad input, hand-made: the model's dictionary with records it would never
// write.
class BadInputTest : public ::testing::Test {
 protected:
  template <typename Payload>
  void Add(uint64_t ts, uint16_t id, const Payload& pl) {
    const EventDesc* ev = dict_.Find(id);
    ASSERT_NE(ev, nullptr);
    paths_.Add(0, ts, *ev, {reinterpret_cast<const uint8_t*>(&pl), sizeof(pl)});
  }
  Dictionary dict_ = ModelDictionary();
  CommandPaths paths_;
};

TEST_F(BadInputTest, TagOfNoCommandIsUnattributed) {
  Add(100, CZ_EV_CMD_FETCH, cz_cmd_fetch{1, 7, 3, CZ_OPC_READ, 0});
  Add(200, CZ_EV_DIE_WAIT, cz_die_wait{4, 0, 90});  // tag 4 was never bound
  Add(300, CZ_EV_CMD_COMPLETE, cz_cmd_complete{1, 7, 0, 200});
  Add(400, CZ_EV_DIE_WAIT, cz_die_wait{3, 0, 50});  // tag 3 ended with its command
  paths_.Finish();
  ASSERT_EQ(paths_.commands().size(), 1u);
  EXPECT_TRUE(paths_.commands()[0].stages.empty());
  EXPECT_EQ(paths_.counts().unknown_command, 2u);
  EXPECT_EQ(paths_.commands()[0].MainCause(), kCauseNone);
}

TEST_F(BadInputTest, ActivityOnAnotherResourceIsNotBlamed) {
  Add(100, CZ_EV_CMD_FETCH, cz_cmd_fetch{1, 7, 3, CZ_OPC_READ, 2});
  Add(900, CZ_EV_GC_ERASE, cz_gc_erase{5, 11, 900});  // die 5, not die 2
  Add(1000, CZ_EV_DIE_WAIT, cz_die_wait{3, 2, 800});
  Add(1100, CZ_EV_CMD_COMPLETE, cz_cmd_complete{1, 7, 0, 1000});
  paths_.Finish();
  EXPECT_EQ(paths_.commands()[0].MainCause(), kCauseQueueing);
}

TEST_F(BadInputTest, ShortPayloadAndHugeLatencyDoNotCrash) {
  Add(100, CZ_EV_CMD_FETCH, cz_cmd_fetch{1, 7, 3, CZ_OPC_READ, 2});
  const uint8_t short_wait[3] = {3, 0, 2};  // no latency field
  paths_.Add(0, 150, *dict_.Find(CZ_EV_DIE_WAIT), short_wait);
  Add(200, CZ_EV_DIE_WAIT, cz_die_wait{3, 2, 0xffffffffu});  // begins before time 0
  Add(300, CZ_EV_CMD_COMPLETE, cz_cmd_complete{1, 7, 0, 200});
  paths_.Finish();
  EXPECT_EQ(paths_.counts().bad_field, 1u);
  ASSERT_EQ(paths_.commands()[0].stages.size(), 1u);
  EXPECT_EQ(paths_.commands()[0].stages[0].begin, 0u);
  EXPECT_EQ(paths_.commands()[0].MainCause(), kCauseQueueing);
}

// A stage span that never ends and a wait naming no resource: a
// dictionary written by hand (no declaration macro allows the second).
TEST(CommandPathsBadDictTest, NeverEndedStageAndResourcelessWait) {
  EventDesc fetch;
  fetch.id = 1;
  fetch.name = "fetch";
  fetch.role = HMB_TRACE_ROLE_BEGIN;
  fetch.key_field = fetch.cid_field = 1;
  fetch.qid_field = 0;
  fetch.fields = {{"qid", 0, 2, HMB_TRACE_TYPE_U16, 0, {}},
                  {"cid", 2, 2, HMB_TRACE_TYPE_U16, 0, {}}};
  EventDesc stage_begin = fetch;
  stage_begin.id = 2;
  stage_begin.name = "die_busy";
  stage_begin.cmd_kind = HMB_TRACE_CMD_STAGE;
  EventDesc wait = fetch;
  wait.id = 3;
  wait.name = "wait";
  wait.role = HMB_TRACE_ROLE_INSTANT;
  wait.cmd_kind = HMB_TRACE_CMD_WAIT;
  EventDesc activity = wait;
  activity.id = 4;
  activity.cmd_kind = HMB_TRACE_CMD_ACTIVITY;
  const uint8_t cmd[4] = {1, 0, 9, 0};
  CommandPaths paths;
  paths.Add(0, 10, fetch, cmd);
  paths.Add(0, 20, stage_begin, cmd);
  paths.Add(0, 30, wait, cmd);
  paths.Add(0, 40, activity, cmd);
  paths.Finish();
  EXPECT_EQ(paths.counts().stage_never_ended, 1u);
  EXPECT_EQ(paths.counts().no_resource, 2u);
  ASSERT_EQ(paths.commands().size(), 1u);
  ASSERT_EQ(paths.commands()[0].stages.size(), 1u);
  EXPECT_EQ(paths.commands()[0].stages[0].cause, kCauseUnattributed);
}

TEST_F(BadInputTest, ThePathNamesTheWaitsCause) {
  Add(1000, CZ_EV_CMD_FETCH, cz_cmd_fetch{1, 7, 3, CZ_OPC_READ, 4});
  Add(1400, CZ_EV_FTL_LOOKUP, cz_work{3, 400});
  Add(160000, CZ_EV_GC_ERASE, cz_gc_erase{4, 1187, 250000});  // began before the fetch
  Add(159400, CZ_EV_DIE_WAIT, cz_die_wait{3, 4, 158000});
  Add(165400, CZ_EV_NAND_READ, cz_nand_read{3, 4, 6000});
  Add(166200, CZ_EV_XFER, cz_work{3, 800});
  Add(166200, CZ_EV_CMD_COMPLETE, cz_cmd_complete{1, 7, 0, 165200});
  paths_.Finish();
  ASSERT_EQ(paths_.commands().size(), 1u);
  EXPECT_EQ(CommandPathText(paths_.commands()[0], 100000000),
            "  firmware stages, fetch to completion 1.652 ms:\n"
            "    +0.0 us  ftl_lookup 4.0 us\n"
            "    +4.0 us  die_wait 1.580 ms: waited for die 4: gc_erase die=4 block=1187 "
            "latency=250000  <- longest wait\n"
            "    +1.584 ms  nand_read 60.0 us\n"
            "    +1.644 ms  xfer 8.0 us\n"
            "  main cause: gc_erase (die_wait 1.580 ms)\n");
}

}  // namespace
}  // namespace hmbtrace
