// SPDX-License-Identifier: GPL-2.0-only
// The control channel against the running simulator, in one process: the
// test is the host, writing requests into an in-memory mailbox, and reads
// the area with the consumer core afterwards. What a host would notice:
// STOP means no record until START, a masked event is neither written nor
// lost, an echo is one record with the cookie where the answer says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "ctrl_host_test_util.h"
#include "fwsim.h"
#include "hmb_consumer.h"

namespace hmbtrace {
namespace {

constexpr size_t kAreaLen = 1u << 20;

struct Record {
  uint16_t core;
  uint16_t event_id;
  uint64_t seq;
  uint64_t ts;
  std::vector<uint8_t> payload;
};

struct Drained {
  std::vector<Record> records;
  uint64_t lost = 0;
};

// The simulator on its own thread, an in-memory area and mailbox, and the
// host's end of the mailbox.
class ControlledSim {
 public:
  explicit ControlledSim(SimConfig config)
      : area_(kAreaLen / 8), mailbox_(HMB_CTRL_MAILBOX_SIZE / 8) {
    thread_ = std::thread([this, config] {
      result_.emplace(RunSimulation(config, Bytes(area_, kAreaLen), stop_, {},
                                    Bytes(mailbox_, HMB_CTRL_MAILBOX_SIZE)));
    });
  }
  ~ControlledSim() { Finish(); }

  CtrlHost& host() { return host_; }

  const SimResult& Finish() {
    stop_.store(true);
    if (thread_.joinable())
      thread_.join();
    EXPECT_TRUE(result_->ok()) << result_->message();
    return result_->value();
  }

  // A word of the area as the device left it.
  template <typename T>
  T At(size_t off) {
    T v;
    __atomic_load(reinterpret_cast<const T*>(Bytes(area_, kAreaLen).data() + off), &v,
                  __ATOMIC_ACQUIRE);
    return v;
  }

  // The sequence number core |k| gives its next record.
  uint64_t NextSeq(uint16_t k) {
    return At<uint64_t>(sizeof(hmb_trace_meta) + k * sizeof(hmb_trace_core) +
                        offsetof(hmb_trace_core, next_seq));
  }

  // Every record in the area (call after Finish; nothing was overwritten).
  Drained Drain(uint16_t cores) {
    std::vector<const uint8_t*> pages;
    for (size_t off = 0; off < kAreaLen; off += 4096)
      pages.push_back(Bytes(area_, kAreaLen).data() + off);
    const hmb_area map = {pages.data(), pages.size(), 12};
    std::vector<uint8_t> scratch(HMB_CONSUMER_SCRATCH_LEN);
    Drained out;
    hmb_consumer_ops ops{};
    ops.deliver = [](void* ctx, const hmb_record* r) {
      static_cast<Drained*>(ctx)->records.push_back(
          {r->core, r->event_id, r->seq, r->ts,
           std::vector<uint8_t>(r->payload, r->payload + r->len)});
      return 0;
    };
    ops.lost = [](void* ctx, uint16_t, uint64_t count, hmb_lost_reason, uint64_t) {
      static_cast<Drained*>(ctx)->lost += count;
    };
    auto consumer = std::make_unique<hmb_consumer>();
    hmb_consumer_init(consumer.get(), &map, &ops, &out, scratch.data());
    EXPECT_EQ(hmb_consumer_poll(consumer.get()), HMB_CONSUMER_ATTACHED);
    for (uint16_t k = 0; k < cores; k++)
      while (hmb_consumer_drain_core(consumer.get(), k, 4096) > 0) {
      }
    return out;
  }

 private:
  static std::span<uint8_t> Bytes(std::vector<uint64_t>& v, size_t len) {
    return {reinterpret_cast<uint8_t*>(v.data()), len};
  }

  std::vector<uint64_t> area_;
  std::vector<uint64_t> mailbox_;
  std::atomic<bool> stop_{false};
  std::optional<Result<SimResult>> result_;
  std::thread thread_;
  CtrlHost host_{Bytes(mailbox_, HMB_CTRL_MAILBOX_SIZE)};
};

SimConfig SlowConfig() {
  SimConfig c;
  c.cores = 2;
  c.rate = 2000;  // a few thousand records: the 1 MiB area never wraps
  c.seed = 5;
  return c;
}

void Sleep(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Waits |min_s|, then until each core k has written records up to
// seq[k] (its next_seq), for 20 s at most: on a loaded machine the
// simulator's thread runs late, so a test that needs N records waits for
// them, not for the time they take on an idle one.
void WaitForRecords(ControlledSim& sim, const std::vector<uint64_t>& seq, double min_s) {
  Sleep(min_s);
  for (int i = 0; i < 2000; i++) {
    bool all = true;
    for (uint16_t k = 0; k < seq.size(); k++)
      all = all && sim.NextSeq(k) >= seq[k];
    if (all)
      return;
    Sleep(0.01);
  }
  ADD_FAILURE() << "the simulator wrote too few records in 20 s";
}

uint64_t Sync(CtrlHost& host) {
  const CtrlAnswer a = host.Request(HMB_CTRL_OP_SYNC);
  EXPECT_TRUE(a.answered);
  EXPECT_EQ(a.status, HMB_CTRL_OK);
  return a.val[0];
}

TEST(MailboxTest, EveryOpIsAnsweredWithItsStatusAndCounted) {
  ControlledSim sim(SlowConfig());
  CtrlHost& host = sim.host();
  ASSERT_TRUE(host.WaitForDevice(5000000000));
  struct Case {
    uint16_t op;
    std::array<uint64_t, 4> arg;
    uint16_t status;
  };
  const Case cases[] = {
      {HMB_CTRL_OP_NOP, {}, HMB_CTRL_OK},
      {HMB_CTRL_OP_STOP, {}, HMB_CTRL_OK},
      {HMB_CTRL_OP_START, {}, HMB_CTRL_OK},
      {HMB_CTRL_OP_RING_MODE, {HMB_CTRL_RING_OVERWRITE}, HMB_CTRL_OK},
      // STOP is the freeze with reason RING_FULL (ABI 1.1); OVERWRITE ends it.
      {HMB_CTRL_OP_RING_MODE, {HMB_CTRL_RING_STOP}, HMB_CTRL_OK},
      {HMB_CTRL_OP_RING_MODE, {HMB_CTRL_RING_OVERWRITE}, HMB_CTRL_OK},
      {HMB_CTRL_OP_FREEZE_CONFIG, {0, 1ull << 32}, HMB_CTRL_INVALID},
      {HMB_CTRL_OP_FREEZE_CONFIG, {0, 0}, HMB_CTRL_OK},
      {HMB_CTRL_OP_FREEZE_REARM, {}, HMB_CTRL_OK},
      {HMB_CTRL_OP_RING_MODE, {7}, HMB_CTRL_INVALID},
      {HMB_CTRL_OP_EVENT_MASK, {64, ~0ull}, HMB_CTRL_OK},
      {HMB_CTRL_OP_EVENT_MASK, {3, 0}, HMB_CTRL_INVALID},
      {HMB_CTRL_OP_EVENT_MASK, {65536, 0}, HMB_CTRL_INVALID},
      {HMB_CTRL_OP_ECHO, {1, 2}, HMB_CTRL_INVALID},  // core 2 of 2
      {HMB_CTRL_OP_ECHO, {1, 1}, HMB_CTRL_OK},
      {HMB_CTRL_OP_SYNC, {}, HMB_CTRL_OK},
      {HMB_CTRL_OP_FREEZE_NOW, {9}, HMB_CTRL_OK},
      {HMB_CTRL_OP_FREEZE_NOW, {9}, HMB_CTRL_INVALID},  // one under way
      {HMB_CTRL_OP_FREEZE_REARM, {}, HMB_CTRL_OK},
      {HMB_CTRL_OP_NR, {}, HMB_CTRL_UNSUPPORTED},
      {0xffff, {}, HMB_CTRL_UNSUPPORTED},
  };
  for (const Case& c : cases) {
    const CtrlAnswer a = host.Request(c.op, c.arg);
    ASSERT_TRUE(a.answered) << "op " << c.op;
    EXPECT_EQ(a.status, c.status) << "op " << c.op << " arg " << c.arg[0];
  }
  const CtrlAnswer bad = host.Request(HMB_CTRL_OP_NOP, {}, 50000000, HMB_CTRL_MAGIC ^ 1);
  ASSERT_TRUE(bad.answered);
  EXPECT_EQ(bad.status, HMB_CTRL_INVALID) << "a request without the magic";

  const nlohmann::json truth = TruthJson(sim.Finish());
  const nlohmann::json& req = truth["control"]["requests"];
  EXPECT_EQ(req["nop"], 1);
  EXPECT_EQ(req["start"], 1);
  EXPECT_EQ(req["stop"], 1);
  EXPECT_EQ(req["ring_mode"], 4);
  EXPECT_EQ(req["event_mask"], 3);
  EXPECT_EQ(req["echo"], 2);
  EXPECT_EQ(req["sync"], 1);
  EXPECT_EQ(req["freeze_config"], 2);
  EXPECT_EQ(req["freeze_rearm"], 2);
  EXPECT_EQ(req["freeze_now"], 2);
  EXPECT_EQ(req["unknown"], 2);
  EXPECT_EQ(req["bad_header"], 1);
  EXPECT_EQ(truth["control"]["answers"]["unsupported"], 2);  // RING_MODE stop is now the freeze
  EXPECT_EQ(truth["control"]["last_seq"], host.sent());
  EXPECT_EQ(truth["control"]["echoes"].size(), 2u);
  EXPECT_EQ(truth["control"]["changes"].size(), 15u) << truth["control"]["changes"].dump();
}

TEST(MailboxTest, StopWritesNoRecordUntilStartAndLosesNone) {
  ControlledSim sim(SlowConfig());
  CtrlHost& host = sim.host();
  ASSERT_TRUE(host.WaitForDevice(5000000000));
  WaitForRecords(sim, {100, 100}, 0.1);
  ASSERT_EQ(host.Request(HMB_CTRL_OP_STOP).status, HMB_CTRL_OK);
  const uint64_t stopped = Sync(host);
  Sleep(0.3);
  // An echo is the host's own request: written while stopped too.
  const CtrlAnswer echo = host.Request(HMB_CTRL_OP_ECHO, {42, 0});
  ASSERT_EQ(echo.status, HMB_CTRL_OK);
  const uint64_t started = Sync(host);
  ASSERT_EQ(host.Request(HMB_CTRL_OP_START).status, HMB_CTRL_OK);
  WaitForRecords(sim, {sim.NextSeq(0) + 100, sim.NextSeq(1) + 100}, 0.1);
  const SimResult& r = sim.Finish();
  const Drained d = sim.Drain(2);

  EXPECT_EQ(d.lost, 0u);
  std::map<uint16_t, uint64_t> before, inside, after;
  for (const Record& rec : d.records) {
    if (rec.ts <= stopped)
      before[rec.core]++;
    else if (rec.ts < started)
      inside[rec.core] += rec.event_id != FW_EV_HMB_ECHO;
    else
      after[rec.core]++;
  }
  for (uint16_t k = 0; k < 2; k++) {
    EXPECT_GT(before[k], 50u) << "core " << k;
    EXPECT_EQ(inside[k], 0u) << "core " << k << " wrote while stopped";
    EXPECT_GT(after[k], 50u) << "core " << k << " did not resume";
    EXPECT_EQ(r.lives[0].cores[k].produced, before[k] + inside[k] + after[k] + (k == 0))
        << "every record produced is in the area (the echo on core 0)";
  }
}

// The seq of an echo on |core|: every record of the core after it was
// written after the echo was asked for, every one before it before the
// answer came.
uint64_t EchoSeq(CtrlHost& host, uint64_t core) {
  const CtrlAnswer a = host.Request(HMB_CTRL_OP_ECHO, {0xec40, core});
  EXPECT_TRUE(a.answered);
  EXPECT_EQ(a.status, HMB_CTRL_OK) << "core " << core;
  return a.val[1];
}

TEST(MailboxTest, MaskedEventsAreNotWrittenNotLostAndSeqsStayConsecutive) {
  ControlledSim sim(SlowConfig());
  CtrlHost& host = sim.host();
  ASSERT_TRUE(host.WaitForDevice(5000000000));
  WaitForRecords(sim, {200, 200}, 0.1);
  // Only cmd_fetch and cmd_complete (ids 1 and 2).
  ASSERT_EQ(host.Request(HMB_CTRL_OP_EVENT_MASK, {0, 0b110}).status, HMB_CTRL_OK);
  // "Every later record obeys the mask" is about the order of writing,
  // which a core's seqs give, not fw_ts: a record is stamped when its
  // model time came, and a core the machine did not run for a while
  // writes it later, perhaps after the mask is lifted. So the window is
  // read between two echoes on each core: one asked for after the mask's
  // answer, one answered before the mask is lifted.
  const uint64_t masked[2] = {EchoSeq(host, 0), EchoSeq(host, 1)};
  WaitForRecords(sim, {masked[0] + 100, masked[1] + 100}, 0.3);
  const uint64_t unmasked[2] = {EchoSeq(host, 0), EchoSeq(host, 1)};
  ASSERT_EQ(host.Request(HMB_CTRL_OP_EVENT_MASK, {0, ~0ull}).status, HMB_CTRL_OK);
  WaitForRecords(sim, {unmasked[0] + 200, unmasked[1] + 200}, 0.2);
  const SimResult& r = sim.Finish();
  const Drained d = sim.Drain(2);

  EXPECT_EQ(d.lost, 0u) << "masked records are not lost";
  std::map<uint16_t, uint64_t> next_seq;
  uint64_t in_mask = 0, others_before = 0, others_after = 0;
  for (const Record& rec : d.records) {
    ASSERT_LT(rec.core, 2u);
    EXPECT_EQ(rec.seq, next_seq[rec.core]++) << "core " << rec.core;
    if (rec.event_id == FW_EV_HMB_ECHO)
      continue;
    const bool fetch_or_complete =
        rec.event_id == FW_EV_CMD_FETCH || rec.event_id == FW_EV_CMD_COMPLETE;
    if (rec.seq > masked[rec.core] && rec.seq < unmasked[rec.core]) {
      in_mask++;
      EXPECT_TRUE(fetch_or_complete)
          << "core " << rec.core << " seq " << rec.seq << " event " << rec.event_id;
    } else if (!fetch_or_complete) {
      (rec.seq < masked[rec.core] ? others_before : others_after)++;
    }
  }
  EXPECT_GT(in_mask, 100u);
  EXPECT_GT(others_before, 20u);
  EXPECT_GT(others_after, 20u);
  const nlohmann::json truth = TruthJson(r);
  EXPECT_GT(truth["control"]["masked"][0].get<uint64_t>(), 50u);
  EXPECT_GT(truth["control"]["masked"][1].get<uint64_t>(), 50u);
}

TEST(MailboxTest, AFirmwareResetForgetsTheMask) {
  SimConfig config = SlowConfig();
  config.rate = 5000;
  config.reset_at = {2000};
  config.start_delay_s = 0.3;  // the mailbox is served meanwhile
  ControlledSim sim(config);
  CtrlHost& host = sim.host();
  ASSERT_TRUE(host.WaitForDevice(5000000000));
  ASSERT_EQ(host.Request(HMB_CTRL_OP_EVENT_MASK, {0, 0b110}).status, HMB_CTRL_OK);
  Sleep(1.5);
  const SimResult& r = sim.Finish();
  ASSERT_EQ(r.lives.size(), 2u) << "no reset";
  // The area holds the life after the reset: every event again.
  const Drained d = sim.Drain(2);
  std::map<uint16_t, uint64_t> counts;
  for (const Record& rec : d.records)
    counts[rec.event_id]++;
  EXPECT_GT(counts[FW_EV_NAND_READ] + counts[FW_EV_NAND_PROGRAM], 100u);
  EXPECT_EQ(r.lives[0].cores[0].event_counts[FW_EV_NAND_READ], 0u)
      << "masked before the reset";
}

TEST(MailboxTest, EchoIsOneRecordWithTheCookieWhereTheAnswerSays) {
  ControlledSim sim(SlowConfig());
  CtrlHost& host = sim.host();
  ASSERT_TRUE(host.WaitForDevice(5000000000));
  struct Probe {
    uint64_t cookie, core, before, after;
    CtrlAnswer answer;
  };
  std::vector<Probe> probes;
  for (uint64_t i = 0; i < 20; i++) {
    Probe p{0xc0ffee0000 + i, i % 2, 0, 0, {}};
    p.before = Sync(host);
    p.answer = host.Request(HMB_CTRL_OP_ECHO, {p.cookie, p.core});
    p.after = Sync(host);
    ASSERT_EQ(p.answer.status, HMB_CTRL_OK);
    probes.push_back(p);
    Sleep(0.01);
  }
  const SimResult& r = sim.Finish();
  const Drained d = sim.Drain(2);
  std::map<std::pair<uint16_t, uint64_t>, const Record*> by_seq;
  for (const Record& rec : d.records)
    by_seq[{rec.core, rec.seq}] = &rec;
  for (const Probe& p : probes) {
    SCOPED_TRACE("cookie " + std::to_string(p.cookie));
    auto it = by_seq.find({static_cast<uint16_t>(p.core), p.answer.val[1]});
    ASSERT_NE(it, by_seq.end());
    const Record& rec = *it->second;
    EXPECT_EQ(rec.event_id, FW_EV_HMB_ECHO);
    EXPECT_EQ(rec.ts, p.answer.val[0]);
    ASSERT_EQ(rec.payload.size(), sizeof(fw_hmb_echo));
    uint64_t cookie;
    std::memcpy(&cookie, rec.payload.data(), sizeof(cookie));
    EXPECT_EQ(cookie, p.cookie);
    // Stamped by the clock the sync answers come from, in between.
    EXPECT_GE(rec.ts, p.before);
    EXPECT_LE(rec.ts, p.after);
  }
  const nlohmann::json truth = TruthJson(r);
  uint64_t echoes = 0;
  for (const nlohmann::json& c : truth["lives"][0]["cores"])
    echoes += c["event_counts"]["hmb_echo"].get<uint64_t>();
  EXPECT_EQ(echoes, probes.size());
  ASSERT_EQ(truth["control"]["echoes"].size(), probes.size());
  EXPECT_EQ(truth["control"]["echoes"][3]["seq"], probes[3].answer.val[1]);
  EXPECT_EQ(truth["control"]["echoes"][3]["cookie"], probes[3].cookie);
}

TEST(MailboxTest, ALatencyOutlierFreezesWithItsRecordsAndNMorePerCoreAndRearmResumes) {
  SimConfig c = SlowConfig();
  c.slow_cmd = 150;  // core 0's 150th command (well after FREEZE_CONFIG) ...
  c.slow_us = 50000;  // ... takes 50 ms more; the others take < 3 ms
  constexpr uint64_t kN = 16;
  constexpr uint64_t kThresholdNs = 10000000;
  ControlledSim sim(c);
  CtrlHost& host = sim.host();
  ASSERT_TRUE(host.WaitForDevice(5000000000));
  const CtrlAnswer cfg = host.Request(HMB_CTRL_OP_FREEZE_CONFIG, {kThresholdNs, kN});
  ASSERT_TRUE(cfg.answered);
  ASSERT_EQ(cfg.status, HMB_CTRL_OK);
  EXPECT_EQ(cfg.val[1], kN);

  const size_t word_off = offsetof(hmb_trace_meta, freeze);
  const auto core_off = [](uint16_t k, size_t field) {
    return sizeof(hmb_trace_meta) + k * sizeof(hmb_trace_core) + field;
  };
  uint32_t word = 0;
  for (int i = 0; i < 1000 && HMB_TRACE_FREEZE_STATE(word) != HMB_TRACE_FREEZE_FROZEN; i++) {
    Sleep(0.01);
    word = sim.At<uint32_t>(word_off);
  }
  ASSERT_EQ(word, HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN, HMB_TRACE_FREEZE_LATENCY, 1));
  EXPECT_EQ(sim.At<uint16_t>(offsetof(hmb_trace_meta, freeze_core)), 0u);
  const uint64_t detail = sim.At<uint64_t>(offsetof(hmb_trace_meta, freeze_detail));
  uint64_t freeze_seq[2], end_seq[2];
  for (uint16_t k = 0; k < 2; k++) {
    freeze_seq[k] = sim.At<uint64_t>(core_off(k, offsetof(hmb_trace_core, freeze_seq)));
    end_seq[k] = sim.At<uint64_t>(core_off(k, offsetof(hmb_trace_core, next_seq)));
    // Every core wrote exactly N after the trigger, and nothing since.
    EXPECT_EQ(end_seq[k], freeze_seq[k] + kN) << "core " << k;
  }
  Sleep(0.1);
  EXPECT_EQ(sim.At<uint64_t>(core_off(0, offsetof(hmb_trace_core, next_seq))), end_seq[0]);

  const CtrlAnswer rearm = host.Request(HMB_CTRL_OP_FREEZE_REARM);
  ASSERT_EQ(rearm.status, HMB_CTRL_OK);
  EXPECT_EQ(rearm.val[0], word);
  Sleep(0.2);
  EXPECT_EQ(HMB_TRACE_FREEZE_STATE(sim.At<uint32_t>(word_off)), HMB_TRACE_FREEZE_RUNNING);
  EXPECT_GT(sim.At<uint64_t>(core_off(0, offsetof(hmb_trace_core, next_seq))), end_seq[0]);

  sim.Finish();
  const Drained d = sim.Drain(2);
  EXPECT_EQ(d.lost, 0u);
  // The outlier: fetch and completion on core 0, the completion right
  // before the trigger; its qid/cid are the freeze's detail.
  const uint16_t qid = static_cast<uint16_t>(detail >> 16);
  const uint16_t cid = static_cast<uint16_t>(detail);
  bool fetch = false, complete = false;
  for (const Record& r : d.records) {
    if (r.core != 0 || r.seq >= freeze_seq[0])
      continue;
    if (r.event_id == FW_EV_CMD_FETCH) {
      fw_cmd_fetch f;
      std::memcpy(&f, r.payload.data(), sizeof(f));
      fetch |= f.qid == qid && f.cid == cid;
    }
    if (r.event_id == FW_EV_CMD_COMPLETE && r.seq + 1 == freeze_seq[0]) {
      fw_cmd_complete done;
      std::memcpy(&done, r.payload.data(), sizeof(done));
      complete = done.qid == qid && done.cid == cid && done.latency >= cfg.val[0];
    }
  }
  EXPECT_TRUE(fetch);
  EXPECT_TRUE(complete);
}

}  // namespace
}  // namespace hmbtrace
