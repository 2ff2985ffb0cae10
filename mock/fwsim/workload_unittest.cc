// SPDX-License-Identifier: GPL-2.0-only
#include "workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace hmbtrace {
namespace {

template <typename Payload>
Payload PayloadOf(const FwRecord& rec) {
  Payload p;
  EXPECT_EQ(rec.fixed_len, sizeof(Payload));
  std::memcpy(&p, rec.fixed.data(), sizeof(p));
  return p;
}

WorkloadConfig Config(uint64_t seed, uint16_t core) {
  WorkloadConfig c;
  c.seed = seed;
  c.core = core;
  c.nr_cores = 4;
  return c;
}

TEST(WorkloadTest, SameSeedAndCoreGiveIdenticalRecords) {
  CoreWorkload a(Config(42, 1));
  CoreWorkload b(Config(42, 1));
  for (int i = 0; i < 100000; i++)
    ASSERT_TRUE(a.Next().SameContent(b.Next())) << "record " << i;
}

TEST(WorkloadTest, OtherSeedOrOtherCoreGivesOtherRecords) {
  CoreWorkload base(Config(42, 1));
  CoreWorkload other_seed(Config(43, 1));
  CoreWorkload other_core(Config(42, 2));
  int same_seed_diff = 0, same_core_diff = 0;
  for (int i = 0; i < 1000; i++) {
    const FwRecord r = base.Next();
    same_seed_diff += !r.SameContent(other_seed.Next());
    same_core_diff += !r.SameContent(other_core.Next());
  }
  EXPECT_GT(same_seed_diff, 500);
  EXPECT_GT(same_core_diff, 500);
}

TEST(WorkloadTest, EveryCompletionMatchesAnEarlierFetchOnTheSameCore) {
  for (uint16_t core = 0; core < 4; core++) {
    CoreWorkload w(Config(7, core));
    std::set<std::pair<uint16_t, uint16_t>> in_flight;
    size_t completions = 0;
    for (int i = 0; i < 200000; i++) {
      const FwRecord& r = w.Next();
      if (r.event_id == FW_EV_CMD_FETCH) {
        const auto f = PayloadOf<fw_cmd_fetch>(r);
        EXPECT_TRUE(f.qid == 1 + core || f.qid == 1 + core + 4);
        EXPECT_TRUE(in_flight.insert({f.qid, f.cid}).second)
            << "cid " << f.cid << " reused while in flight";
      } else if (r.event_id == FW_EV_CMD_COMPLETE) {
        const auto c = PayloadOf<fw_cmd_complete>(r);
        EXPECT_EQ(in_flight.erase({c.qid, c.cid}), 1u)
            << "completion of qid " << c.qid << " cid " << c.cid
            << " never fetched";
        EXPECT_GT(static_cast<uint32_t>(c.latency), 0u);  // packed: copy, do not bind
        completions++;
      }
      ASSERT_EQ(in_flight.size(), w.commands_in_flight());
    }
    EXPECT_GT(completions, 10000u);
  }
}

TEST(WorkloadTest, GarbageCollectionEndsWhatItBegan) {
  CoreWorkload w(Config(3, 0));
  bool open = false;
  uint16_t victim = 0, valid = 0;
  int cycles = 0;
  for (int i = 0; i < 500000; i++) {
    const FwRecord& r = w.Next();
    if (r.event_id == FW_EV_GC_BEGIN) {
      EXPECT_FALSE(open);
      const auto begin = PayloadOf<fw_gc_begin>(r);
      open = true;
      victim = begin.victim_block;
      valid = begin.valid_pages;
    } else if (r.event_id == FW_EV_GC_END) {
      ASSERT_TRUE(open);
      const auto end = PayloadOf<fw_gc_end>(r);
      EXPECT_EQ(static_cast<uint16_t>(end.victim_block), victim);
      EXPECT_EQ(static_cast<uint16_t>(end.pages_moved), valid);
      open = false;
      cycles++;
    }
  }
  EXPECT_GT(cycles, 10);
}

TEST(WorkloadTest, MixContainsEveryEventWithHostCommandsDominant) {
  CoreWorkload w(Config(1, 0));
  std::map<uint16_t, int> counts;
  const int n = 500000;
  for (int i = 0; i < n; i++) {
    const FwRecord& r = w.Next();
    counts[r.event_id]++;
    ASSERT_GT(r.event_id, 0);
    ASSERT_LT(r.event_id, FW_EV_WORKLOAD_END);
    if (r.event_id == FW_EV_ERROR) {
      EXPECT_GE(r.var_len, 4);
      EXPECT_LE(r.var_len, FW_ERROR_CONTEXT_MAX);
    }
  }
  for (uint16_t id = 1; id < FW_EV_WORKLOAD_END; id++)
    EXPECT_GT(counts[id], 0) << "event " << id;
  EXPECT_GT(counts[FW_EV_CMD_FETCH] + counts[FW_EV_CMD_COMPLETE], n / 2);
  EXPECT_LT(counts[FW_EV_ERROR], n / 1000);
}

TEST(WorkloadTest, ResetForgetsCommandsInFlight) {
  CoreWorkload w(Config(5, 0));
  for (int i = 0; i < 1000; i++)
    w.Next();
  ASSERT_GT(w.commands_in_flight(), 0u);
  w.Reset();
  EXPECT_EQ(w.commands_in_flight(), 0u);
  std::set<std::pair<uint16_t, uint16_t>> fetched;
  for (int i = 0; i < 10000; i++) {
    const FwRecord& r = w.Next();
    if (r.event_id == FW_EV_CMD_FETCH) {
      const auto f = PayloadOf<fw_cmd_fetch>(r);
      fetched.insert({f.qid, f.cid});
    } else if (r.event_id == FW_EV_CMD_COMPLETE) {
      const auto c = PayloadOf<fw_cmd_complete>(r);
      EXPECT_TRUE(fetched.count({c.qid, c.cid}))
          << "completed a command fetched before the reset";
    }
  }
}

TEST(WorkloadTest, PayloadIsLittleEndianAtDeclaredOffsets) {
  CoreWorkload w(Config(9, 2));
  for (;;) {
    const FwRecord& r = w.Next();
    if (r.event_id != FW_EV_CMD_FETCH)
      continue;
    const auto f = PayloadOf<fw_cmd_fetch>(r);
    EXPECT_EQ(r.fixed[offsetof(fw_cmd_fetch, qid)], f.qid & 0xff);
    EXPECT_EQ(r.fixed[offsetof(fw_cmd_fetch, qid) + 1], f.qid >> 8);
    EXPECT_EQ(r.fixed[offsetof(fw_cmd_fetch, slba)], f.slba & 0xff);
    EXPECT_EQ(static_cast<uint32_t>(f.nsid), 1u);
    break;
  }
}

// Records come in model-time order, and the long-run rate is the pacing's:
// N records' worth of arrivals take N / rate seconds (times the scale).
TEST(WorkloadTest, RecordsComeInTimeOrderAtThePacedRate) {
  WorkloadConfig c = Config(4, 1);
  c.rate = 10000;
  c.time_scale = 3;
  c.start_ns = 777;
  CoreWorkload w(c);
  uint64_t last = 0;
  const int n = 100000;
  for (int i = 0; i < n; i++) {
    const TimedRecord& r = w.Peek();
    ASSERT_GE(r.at_ns, last) << "record " << i;
    ASSERT_GE(r.at_ns, c.start_ns);
    last = r.at_ns;
    w.Pop();
  }
  // 10 s of pacing, 30 s of model time; a command or a GC still running
  // at the end adds at most a few ms.
  EXPECT_NEAR(static_cast<double>(last - c.start_ns), 30e9, 0.05e9);
}

// After a pause (STOP, a stall), what fell due is not written, and work
// resumes at the pace from then, without catching up.
TEST(WorkloadTest, SkipToForgetsWhatFellDueAndResumesAtThePace) {
  WorkloadConfig c = Config(6, 0);
  c.rate = 1000;
  CoreWorkload w(c);
  for (int i = 0; i < 100; i++)
    w.Next();
  const uint64_t resume = w.Peek().at_ns + 5000000000ull;
  EXPECT_GT(w.SkipTo(resume), 0u);
  uint64_t first = UINT64_MAX;
  uint64_t last = 0;
  for (int i = 0; i < 1000; i++) {
    const TimedRecord& r = w.Peek();
    ASSERT_GE(r.at_ns, resume);
    first = std::min(first, r.at_ns);
    last = r.at_ns;
    w.Pop();
  }
  EXPECT_LT(first - resume, 10000000u) << "resumed at once, not after a gap";
  EXPECT_NEAR(static_cast<double>(last - resume), 1e9, 0.05e9)
      << "1000 records at 1000/s: a second, no catching up";
}

TEST(PacingTest, RateZeroNeverWaits) {
  EXPECT_EQ(PacingOffsetNs(0, 0, 1), 0u);
  EXPECT_EQ(PacingOffsetNs(123456789, 0, 16), 0u);
}

TEST(PacingTest, OneRecordPerPeriodWithoutBursts) {
  EXPECT_EQ(PacingOffsetNs(0, 1000, 1), 0u);
  EXPECT_EQ(PacingOffsetNs(1, 1000, 1), 1000000u);
  EXPECT_EQ(PacingOffsetNs(2500, 1000, 1), 2500000000u);
  EXPECT_EQ(PacingOffsetNs(1, 3, 1), 333333333u);
}

TEST(PacingTest, BurstsStartTogetherAndKeepTheAverageRate) {
  for (uint64_t i = 0; i < 10; i++)
    EXPECT_EQ(PacingOffsetNs(i, 1000, 10), 0u) << i;
  for (uint64_t i = 10; i < 20; i++)
    EXPECT_EQ(PacingOffsetNs(i, 1000, 10), 10000000u) << i;
  // N seconds' worth of records starts a burst exactly N seconds in.
  EXPECT_EQ(PacingOffsetNs(100000 * 60, 100000, 32), 60000000000u);
}

TEST(PacingTest, ZeroBurstActsAsOneAndHugeIndicesSaturate) {
  EXPECT_EQ(PacingOffsetNs(5, 1000, 0), PacingOffsetNs(5, 1000, 1));
  EXPECT_EQ(PacingOffsetNs(UINT64_MAX - 1, 1, 1), UINT64_MAX);
}

TEST(ClockTest, NanosecondsToTicks) {
  EXPECT_EQ(NsToTicks(1000, 1000000000), 1000u);
  EXPECT_EQ(NsToTicks(1000000000, 32768), 32768u);
  EXPECT_EQ(NsToTicks(1500, 1000000), 1u);
  EXPECT_EQ(NsToTicks(UINT64_MAX, 1000000000), UINT64_MAX);
}

TEST(PrngTest, BelowStaysInRange) {
  Prng p(1);
  for (int i = 0; i < 10000; i++) {
    EXPECT_LT(p.Below(7), 7u);
    const uint64_t v = p.Between(3, 5);
    EXPECT_GE(v, 3u);
    EXPECT_LE(v, 5u);
  }
}

}  // namespace
}  // namespace hmbtrace
