// SPDX-License-Identifier: GPL-2.0-only
// Runs the simulator core loop as a library into an in-memory area and
// checks the ground truth against the area and against the consumer core.
#include "fwsim.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <vector>

#include "dictionary.h"
#include "format.h"
#include "hmb_consumer.h"

namespace hmbtrace {
namespace {

constexpr size_t kAreaLen = 1u << 20;

class InMemoryArea {
 public:
  InMemoryArea() : words_(kAreaLen / 8) {}
  std::span<uint8_t> bytes() {
    return {reinterpret_cast<uint8_t*>(words_.data()), kAreaLen};
  }
  uint64_t Get64(size_t off) {
    uint64_t v;
    std::memcpy(&v, bytes().data() + off, sizeof(v));
    return v;
  }
  uint32_t Get32(size_t off) {
    uint32_t v;
    std::memcpy(&v, bytes().data() + off, sizeof(v));
    return v;
  }
  // The area's per-core descriptor, struct hmb_trace_core, in the meta page.
  hmb_trace_core Core(uint16_t k) {
    hmb_trace_core c;
    const size_t off = Get32(offsetof(hmb_trace_meta, core_offset)) +
                       k * sizeof(hmb_trace_core);
    std::memcpy(&c, bytes().data() + off, sizeof(c));
    return c;
  }

 private:
  std::vector<uint64_t> words_;
};

SimConfig CountConfig(uint16_t cores, uint64_t count) {
  SimConfig c;
  c.cores = cores;
  c.count = count;
  c.rate = 0;
  c.seed = 11;
  return c;
}

uint64_t Sum(const std::array<uint64_t, FW_EV_NR_IDS>& counts) {
  return std::accumulate(counts.begin(), counts.end(), uint64_t{0});
}

Result<SimResult> RunInMemory(const SimConfig& config, InMemoryArea& area) {
  std::atomic<bool> stop{false};
  return RunSimulation(config, area.bytes(), stop);
}

// Drains the whole area once with the consumer core.
struct KeptRecord {
  uint16_t core;
  uint16_t event_id;
  uint64_t ts;
  std::vector<uint8_t> payload;
};

struct Drained {
  std::vector<std::pair<uint16_t, std::vector<uint8_t>>> records;  // if kept
  std::vector<KeptRecord> kept;                                      // if kept
  bool keep = false;
  std::map<uint16_t, std::array<uint64_t, FW_EV_NR_IDS>> counts;
  std::map<uint16_t, std::array<uint64_t, HMB_LOST_NR>> lost;
  std::map<uint16_t, uint64_t> delivered;
};

Drained DrainWithConsumer(InMemoryArea& area,
                          uint16_t cores,
                          bool keep = false) {
  std::vector<const uint8_t*> pages;
  for (size_t off = 0; off < kAreaLen; off += 4096)
    pages.push_back(area.bytes().data() + off);
  const hmb_area map = {pages.data(), pages.size(), 12};
  std::vector<uint8_t> scratch(HMB_CONSUMER_SCRATCH_LEN);
  Drained out;
  out.keep = keep;
  hmb_consumer_ops ops{};
  ops.deliver = [](void* ctx, const hmb_record* rec) {
    auto* d = static_cast<Drained*>(ctx);
    if (rec->event_id < FW_EV_NR_IDS)
      d->counts[rec->core][rec->event_id]++;
    if (d->keep) {
      d->records.emplace_back(
          rec->event_id,
          std::vector<uint8_t>(rec->payload, rec->payload + rec->len));
      d->kept.push_back({rec->core, rec->event_id, rec->ts,
                         d->records.back().second});
    }
    return 0;
  };
  ops.lost = [](void* ctx, uint16_t core, uint64_t count,
                hmb_lost_reason reason, uint64_t) {
    static_cast<Drained*>(ctx)->lost[core][reason] += count;
  };
  auto consumer = std::make_unique<hmb_consumer>();
  hmb_consumer_init(consumer.get(), &map, &ops, &out, scratch.data());
  EXPECT_EQ(hmb_consumer_poll(consumer.get()), HMB_CONSUMER_ATTACHED);
  for (uint16_t k = 0; k < cores; k++) {
    while (hmb_consumer_drain_core(consumer.get(), k, 4096) > 0) {
    }
    out.delivered[k] = consumer->core[k].delivered;
  }
  return out;
}

TEST(FwsimTest, TruthMatchesNextSeqOfEveryCoreInTheArea) {
  InMemoryArea area;
  Result<SimResult> r = RunInMemory(CountConfig(2, 1000), area);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->stop_reason, "count");
  ASSERT_EQ(r->lives.size(), 1u);
  const LifeTruth& life = r->lives[0];
  EXPECT_EQ(life.producer_gen,
            area.Get32(offsetof(hmb_trace_meta, producer_gen)));
  ASSERT_EQ(life.cores.size(), 2u);
  for (const CoreTruth& c : life.cores) {
    EXPECT_EQ(c.produced, 1000u);
    EXPECT_EQ(c.produced, area.Core(c.core).next_seq);
    EXPECT_EQ(c.dropped, area.Core(c.core).dropped);
    EXPECT_EQ(Sum(c.event_counts), c.produced);
  }

  const nlohmann::json truth = TruthJson(r.value());
  EXPECT_EQ(truth["lives"][0]["cores"][1]["last_seq"], 999);
  EXPECT_EQ(truth["geometry"]["area_len"], kAreaLen);
  EXPECT_EQ(truth["geometry"]["pages_per_core"],
            area.Get32(offsetof(hmb_trace_meta, pages_per_core)));
  EXPECT_EQ(truth["seed"], 11);
  EXPECT_TRUE(truth["faults"].empty());
}

TEST(FwsimTest, SameSeedGivesSameEventCounts) {
  InMemoryArea a, b;
  Result<SimResult> ra = RunInMemory(CountConfig(2, 2000), a);
  Result<SimResult> rb = RunInMemory(CountConfig(2, 2000), b);
  ASSERT_TRUE(ra.ok() && rb.ok());
  for (int k = 0; k < 2; k++)
    EXPECT_EQ(ra->lives[0].cores[k].event_counts,
              rb->lives[0].cores[k].event_counts);
}

TEST(FwsimTest, ConsumerReadsExactlyWhatTheTruthSays) {
  InMemoryArea area;
  Result<SimResult> r = RunInMemory(CountConfig(2, 1000), area);
  ASSERT_TRUE(r.ok()) << r.message();
  Drained d = DrainWithConsumer(area, 2);
  for (const CoreTruth& c : r->lives[0].cores) {
    EXPECT_EQ(d.delivered[c.core], c.produced);
    EXPECT_EQ(d.counts[c.core], c.event_counts);
  }
}

TEST(FwsimTest, DecoderRendersEveryRecordFromThePublishedDictionary) {
  InMemoryArea area;
  Result<SimResult> r = RunInMemory(CountConfig(1, 20000), area);
  ASSERT_TRUE(r.ok()) << r.message();
  std::string error;
  auto dict = Dictionary::Parse(
      area.bytes().subspan(r->dict_offset, r->dict_len), &error);
  ASSERT_TRUE(dict.has_value()) << error;
  EXPECT_EQ(dict->events().size(), fw_nr_events);

  Drained d = DrainWithConsumer(area, 1, /*keep=*/true);
  ASSERT_EQ(d.records.size(), 20000u);
  std::map<uint16_t, std::string> example;
  for (const auto& [id, payload] : d.records) {
    const std::string text = FormatRecord(dict.value(), id, payload);
    EXPECT_EQ(text.find("<truncated>"), std::string::npos) << text;
    EXPECT_EQ(text.find("<?>"), std::string::npos) << text;
    EXPECT_EQ(text.find("unknown event"), std::string::npos) << text;
    example.emplace(id, text);
  }
  for (uint16_t id = 1; id < FW_EV_WORKLOAD_END; id++)
    EXPECT_TRUE(example.count(id)) << "no record of event " << id;
  EXPECT_TRUE(example[FW_EV_CMD_FETCH].starts_with("qid=1 cid="))
      << example[FW_EV_CMD_FETCH];
  EXPECT_NE(example[FW_EV_CMD_FETCH].find(" opc="), std::string::npos);
  EXPECT_EQ(example[FW_EV_CMD_FETCH].find("opc=0x"), std::string::npos)
      << example[FW_EV_CMD_FETCH];
  for (const auto& [id, text] : example)
    std::printf("  %-14s %s\n", fw_event_by_id(id)->name, text.c_str());
}

template <typename Payload>
Payload PayloadOf(const KeptRecord& r) {
  Payload p{};
  EXPECT_EQ(r.payload.size(), sizeof(Payload));
  std::memcpy(&p, r.payload.data(), std::min(sizeof(p), r.payload.size()));
  return p;
}

// What a firmware engineer checks first: on each core, a command's
// cmd_complete comes latency ticks after its cmd_fetch, a NAND read starts
// and ends inside a command or a garbage collection of its core, a GC ends
// latency ticks after it began, and time never goes backwards.
void ExpectTimestampsAgreeWithLatencies(const SimConfig& config) {
  SCOPED_TRACE("rate " + std::to_string(config.rate) + " burst " +
               std::to_string(config.burst) + " time scale " +
               std::to_string(config.clock.time_scale) + " full speed after " +
               std::to_string(config.full_speed_after));
  InMemoryArea area;
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  Drained d = DrainWithConsumer(area, config.cores, /*keep=*/true);
  ASSERT_EQ(d.kept.size(), uint64_t{config.cores} * config.count);
  for (uint16_t core = 0; core < config.cores; core++) {
    std::map<std::pair<uint16_t, uint16_t>, uint64_t> fetched;  // -> ts
    std::map<std::pair<uint8_t, uint16_t>, uint64_t> collecting;
    uint64_t last_ts = 0;
    size_t completions = 0, reads = 0, gcs = 0;
    for (const KeptRecord& rec : d.kept) {
      if (rec.core != core)
        continue;
      ASSERT_GE(rec.ts, last_ts) << "time went backwards on core " << core;
      last_ts = rec.ts;
      switch (rec.event_id) {
        case FW_EV_CMD_FETCH: {
          const auto f = PayloadOf<fw_cmd_fetch>(rec);
          fetched[{uint16_t{f.qid}, uint16_t{f.cid}}] = rec.ts;
          break;
        }
        case FW_EV_CMD_COMPLETE: {
          const auto c = PayloadOf<fw_cmd_complete>(rec);
          auto it = fetched.find({uint16_t{c.qid}, uint16_t{c.cid}});
          if (it == fetched.end())
            break;  // fetched before the ring's oldest record
          // Fields are copied out (T{x}): the payload structs are packed,
          // and gtest and std::pair bind their arguments to references.
          const uint64_t latency = c.latency;
          ASSERT_EQ(rec.ts - it->second, latency)
              << "core " << core << " qid " << c.qid << " cid " << c.cid
              << ": completed " << rec.ts - it->second
              << " ticks after its fetch, latency field " << latency;
          fetched.erase(it);
          completions++;
          break;
        }
        case FW_EV_NAND_READ: {
          const auto op = PayloadOf<fw_nand_op>(rec);
          const uint64_t began = rec.ts - op.latency;
          bool inside = false;
          for (const auto& [key, at] : fetched)
            inside |= at <= began;
          for (const auto& [key, at] : collecting)
            inside |= at <= began;
          EXPECT_TRUE(inside) << "core " << core << ": NAND read at " << rec.ts
                              << " began outside every command and GC";
          reads++;
          break;
        }
        case FW_EV_GC_BEGIN: {
          const auto g = PayloadOf<fw_gc_begin>(rec);
          collecting[{uint8_t{g.die}, uint16_t{g.victim_block}}] = rec.ts;
          break;
        }
        case FW_EV_GC_END: {
          const auto g = PayloadOf<fw_gc_end>(rec);
          auto it = collecting.find({uint8_t{g.die}, uint16_t{g.victim_block}});
          if (it == collecting.end())
            break;
          const uint64_t latency = g.latency;
          EXPECT_EQ(rec.ts - it->second, latency);
          collecting.erase(it);
          gcs++;
          break;
        }
        default:
          break;
      }
    }
    EXPECT_GT(completions, config.count / 5) << "core " << core;
    EXPECT_GT(reads, config.count / 10) << "core " << core;
    (void)gcs;
  }
}

TEST(FwsimTest, TimestampsAgreeWithLatencyFieldsAtEveryPace) {
  SimConfig paced = CountConfig(2, 1500);
  paced.rate = 20000;
  ExpectTimestampsAgreeWithLatencies(paced);

  SimConfig bursts = paced;
  bursts.burst = 16;
  ExpectTimestampsAgreeWithLatencies(bursts);

  SimConfig scaled = CountConfig(2, 1500);
  scaled.rate = 5000;
  scaled.clock.time_scale = 40;
  ExpectTimestampsAgreeWithLatencies(scaled);

  ExpectTimestampsAgreeWithLatencies(CountConfig(2, 5000));  // rate 0

  SimConfig then_unpaced = paced;
  then_unpaced.full_speed_after = 500;
  ExpectTimestampsAgreeWithLatencies(then_unpaced);
}

TEST(FwsimTest, ResetStartsANewLifeAndTheAreaShowsTheLastOne) {
  InMemoryArea area;
  SimConfig config = CountConfig(2, 1000);
  config.reset_at = {300};
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->lives.size(), 2u);
  EXPECT_EQ(r->lives[0].producer_gen + 1, r->lives[1].producer_gen);
  EXPECT_EQ(r->lives[1].producer_gen,
            area.Get32(offsetof(hmb_trace_meta, producer_gen)));
  EXPECT_EQ(r->lives[0].cores[0].produced, 300u);
  EXPECT_EQ(r->lives[1].cores[0].produced, 700u);
  for (uint16_t k = 0; k < 2; k++) {
    EXPECT_EQ(r->lives[0].cores[k].produced + r->lives[1].cores[k].produced,
              1000u);
    EXPECT_EQ(r->lives[1].cores[k].produced, area.Core(k).next_seq);
    EXPECT_EQ(Sum(r->lives[1].cores[k].event_counts),
              r->lives[1].cores[k].produced);
  }
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0]["type"], "reset");
  EXPECT_EQ(r->faults[0]["seq"], 299);
  EXPECT_EQ(r->faults[0]["producer_gen"], r->lives[0].producer_gen);
}

std::string HexId(std::span<const uint8_t> id) {
  std::string out;
  char buf[3];
  for (uint8_t b : id) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

TEST(FwsimTest, NewBuildAtResetPublishesAnotherDictionaryAndBuildId) {
  InMemoryArea area;
  SimConfig config = CountConfig(2, 1000);
  config.reset_at = {300};
  config.new_build_at_reset = true;
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->lives.size(), 2u);

  // The area holds the second build: its build id and its dictionary.
  const auto first = FirmwareBuild::First();
  const auto second = first->Next();
  EXPECT_EQ(second->number(), 2u);
  EXPECT_NE(second->build_id(), first->build_id());
  EXPECT_EQ(first->build_id(), FwEventsBuildId());
  std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> area_id;
  std::memcpy(area_id.data(),
              area.bytes().data() + offsetof(hmb_trace_meta, build_id),
              area_id.size());
  EXPECT_EQ(area_id, second->build_id());

  std::string error;
  auto dict = Dictionary::Parse(
      area.bytes().subspan(r->dict_offset, r->dict_len), &error);
  ASSERT_TRUE(dict.has_value()) << error;
  ASSERT_EQ(dict->events().size(), fw_nr_events);
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    const EventDesc& ev = dict->events()[i];
    EXPECT_EQ(ev.id, fw_events[i].id);
    EXPECT_EQ(ev.name, std::string(fw_events[i].name) + "_b2");
    ASSERT_EQ(ev.fields.size(), fw_events[i].nr_fields);
    for (size_t f = 0; f < ev.fields.size(); f++) {
      EXPECT_EQ(ev.fields[f].offset, fw_events[i].fields[f].offset);
      EXPECT_EQ(ev.fields[f].size, fw_events[i].fields[f].size);
    }
  }
  EXPECT_EQ(dict->Find(FW_EV_CMD_FETCH)->format,
            std::string("fetched ") + fw_events[0].format);

  // The records did not change: the new dictionary renders them, with the
  // new word.
  Drained d = DrainWithConsumer(area, 2, /*keep=*/true);
  bool saw_fetch = false;
  for (const auto& [id, payload] : d.records) {
    const std::string text = FormatRecord(dict.value(), id, payload);
    EXPECT_EQ(text.find("<truncated>"), std::string::npos) << text;
    EXPECT_EQ(text.find("<?>"), std::string::npos) << text;
    if (id == FW_EV_CMD_FETCH) {
      EXPECT_TRUE(text.starts_with("fetched qid=")) << text;
      saw_fetch = true;
    }
  }
  EXPECT_TRUE(saw_fetch);

  // The truth records both builds; the existing keys keep the first's.
  const nlohmann::json truth = TruthJson(r.value());
  const std::string id1 = HexId(first->build_id());
  const std::string id2 = HexId(second->build_id());
  EXPECT_EQ(truth["build_id"], id1);
  EXPECT_EQ(truth["events"][0]["name"], "cmd_fetch");
  EXPECT_EQ(truth["lives"][0]["build_id"], id1);
  EXPECT_EQ(truth["lives"][1]["build_id"], id2);
  ASSERT_EQ(truth["lives"][1]["events"].size(), fw_nr_events);
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    EXPECT_EQ(truth["lives"][0]["events"][i]["name"], fw_events[i].name);
    EXPECT_EQ(truth["lives"][1]["events"][i]["id"], fw_events[i].id);
    EXPECT_EQ(truth["lives"][1]["events"][i]["name"],
              std::string(fw_events[i].name) + "_b2");
  }
  EXPECT_TRUE(
      truth["lives"][1]["cores"][0]["event_counts"].contains("cmd_fetch"));
  ASSERT_EQ(truth["faults"].size(), 1u);
  EXPECT_EQ(truth["faults"][0]["new_build_id"], id2);
}

TEST(FwsimTest, EveryResetBringsANewBuildDerivedFromTheLast) {
  InMemoryArea area;
  SimConfig config = CountConfig(1, 1000);
  config.reset_at = {200, 500};
  config.new_build_at_reset = true;
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->lives.size(), 3u);
  for (uint32_t n = 1; n <= 3; n++)
    EXPECT_EQ(r->lives[n - 1].build->number(), n);
  const auto third = FirmwareBuild::First()->Next()->Next();
  EXPECT_EQ(r->lives[2].build->build_id(), third->build_id());
  EXPECT_NE(third->build_id(), r->lives[1].build->build_id());
  EXPECT_EQ(third->events()[1].name, std::string("cmd_complete_b3"));
  EXPECT_EQ(third->events()[1].format,
            std::string("completed ") + fw_events[1].format);
  const nlohmann::json truth = TruthJson(r.value());
  EXPECT_EQ(truth["faults"][1]["new_build_id"], truth["lives"][2]["build_id"]);
  EXPECT_EQ(truth["lives"][2]["events"][0]["name"], "cmd_fetch_b3");
}

TEST(FwsimTest, WithoutNewBuildAtResetTheTruthHasNoBuildPerLife) {
  InMemoryArea area;
  SimConfig config = CountConfig(1, 500);
  config.reset_at = {200};
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  const nlohmann::json truth = TruthJson(r.value());
  for (const nlohmann::json& life : truth["lives"]) {
    EXPECT_FALSE(life.contains("build_id"));
    EXPECT_FALSE(life.contains("events"));
  }
  EXPECT_FALSE(truth["faults"][0].contains("new_build_id"));
  std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> area_id;
  std::memcpy(area_id.data(),
              area.bytes().data() + offsetof(hmb_trace_meta, build_id),
              area_id.size());
  EXPECT_EQ(area_id, FwEventsBuildId());
}

TEST(FwsimTest, CorruptedPageIsRecordedAndLostAsInvalid) {
  InMemoryArea area;
  SimConfig config = CountConfig(2, 1000);
  config.corruptions = {{1, 100}};
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->faults.size(), 1u);
  const nlohmann::json& f = r->faults[0];
  EXPECT_EQ(f["type"], "corrupt_page");
  EXPECT_EQ(f["core"], 1);
  EXPECT_EQ(f["seq"], 100);
  const uint64_t first = f["page_first_seq"];
  const uint64_t last = f["page_last_seq"];
  EXPECT_LE(first, 100u);
  EXPECT_GE(last, 100u);

  // The header in the area really holds the garbage.
  const uint64_t page_seq = f["page_seq"];
  const uint64_t off = r->ring_offset + (1ull * r->pages_per_core +
                                         page_seq % r->pages_per_core) *
                                            config.page_size;
  EXPECT_EQ(area.Get64(off), f["written_page_seq"].get<uint64_t>());

  Drained d = DrainWithConsumer(area, 2);
  EXPECT_EQ(d.lost[1][HMB_LOST_INVALID], last - first + 1);
  EXPECT_EQ(d.delivered[1] + d.lost[1][HMB_LOST_INVALID], 1000u);
  EXPECT_EQ(d.delivered[0], 1000u);
}

TEST(FwsimTest, CoreStalledForGoodStopsWhereTold) {
  InMemoryArea area;
  SimConfig config = CountConfig(2, 1000);
  config.stalls = {{1, std::nullopt, 200}};
  Result<SimResult> r = RunInMemory(config, area);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->lives[0].cores[0].produced, 1000u);
  EXPECT_EQ(r->lives[0].cores[1].produced, 200u);
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0]["type"], "stall");
  EXPECT_EQ(r->faults[0]["seq"], 199);
  EXPECT_TRUE(r->faults[0]["seconds"].is_null());
}

TEST(FwsimTest, ExternalStopEndsTheRunWithATruth) {
  InMemoryArea area;
  SimConfig config = CountConfig(2, 0);
  std::atomic<bool> stop{true};
  Result<SimResult> r = RunSimulation(config, area.bytes(), stop);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->stop_reason, "signal");
  for (const CoreTruth& c : r->lives[0].cores)
    EXPECT_EQ(c.produced, area.Core(c.core).next_seq);
}

TEST(FwsimTest, ASignalWhileWaitingForTheGuestIsReportedAsASignal) {
  InMemoryArea area;
  SimConfig config = CountConfig(2, 1000);
  config.wait_for = "/nonexistent/hmbtrace-ready";
  std::atomic<bool> stop{true};
  Result<SimResult> r = RunSimulation(config, area.bytes(), stop);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->stop_reason, "signal");
  for (const CoreTruth& c : r->lives[0].cores)
    EXPECT_EQ(c.produced, 0u);
}

TEST(FwsimTest, GeometryErrorsSayWhatWouldFit) {
  EXPECT_TRUE(CheckAreaSizePowerOfTwo(4u << 20).ok());
  Status st = CheckAreaSizePowerOfTwo(3u << 20);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--size 4194304"), std::string::npos)
      << st.message();

  SimConfig config;
  config.cores = 4;
  config.page_size = 4096;
  auto cfg = MakeProducerConfig(config, 16384);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.message().find("needs"), std::string::npos) << cfg.message();
  EXPECT_NE(cfg.message().find("--size 65536"), std::string::npos)
      << cfg.message();

  config.page_size = 3000;
  EXPECT_FALSE(MakeProducerConfig(config, 1u << 20).ok());
  config.page_size = 512;
  config.cores = 32;
  cfg = MakeProducerConfig(config, 1u << 20);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.message().find("meta page"), std::string::npos);
}

TEST(FwsimTest, TruthFileIsReplacedAtomically) {
  char dir[] = "/tmp/fwsim_unittest_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/truth.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "{\"new\": 1}\n").ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "{\"new\": 1}\n");
  std::remove(path.c_str());
  rmdir(dir);
  EXPECT_FALSE(WriteFileAtomically("/nonexistent-dir/x.json", "x").ok());
}

}  // namespace
}  // namespace hmbtrace
