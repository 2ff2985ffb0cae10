// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the consumer core against the real producer: exact delivery
// when the consumer keeps up, exact loss accounting when it does not, firmware
// resets, and hostile areas.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "test_area.h"

// The consumer's test hooks (hmb_consumer_port.h): this binary links the
// consumer built with HMB_CONSUMER_TEST_HOOKS, which calls them between two
// reads where a producer that moves on changes what the consumer sees.
extern "C" {
void (*hmb_consumer_after_copy)(const hmb_consumer* c, uint16_t core) = nullptr;
void (*hmb_consumer_before_recheck)(const hmb_consumer* c, uint16_t core) = nullptr;
}

namespace hmbtrace::testing {
namespace {

constexpr uint32_t kFixed = sizeof(TestFixed);
constexpr uint32_t kHdr = sizeof(hmb_trace_page_header);

// Everything one single-threaded scenario needs.
struct Rig {
  Rig(uint32_t page_size, uint32_t ppc, uint16_t cores)
      : cfg(TestConfig(page_size, ppc, cores)),
        area(hmb_trace_area_size(&cfg)),
        consumer((Init(), area), &sink) {}
  void Init() { ASSERT_EQ(hmb_trace_producer_init(&p, area.mem(), area.len(), &cfg), 0); }
  // Records of var_len bytes that exactly fill one page's data area.
  uint32_t RecordsPerPage(uint16_t var_len) const {
    uint32_t size = 8 + ((kFixed + var_len + 7) & ~7u);
    return (cfg.page_size - kHdr) / size;
  }
  void Emit(uint16_t core, uint64_t n, uint16_t var_len = 0) {
    for (uint64_t i = 0; i < n; i++) {
      ASSERT_EQ(EmitTestRecord(&p, core, produced[core], var_len, ts++), 0);
      produced[core]++;
    }
  }
  // Gives the consumer the fake clock (at 1 s) and a rate bound.
  void Clock(uint64_t max_rate) {
    sink.clock_ns = 1000000000;
    consumer.get()->now_ns = TestSink::Now;
    consumer.get()->max_rate = max_rate;
  }
  void Tick(uint64_t ns) { sink.clock_ns += ns; }
  uint8_t* Page(uint16_t core, uint32_t slot) {
    return area.mem() + p.ring_offset +
           (static_cast<uint64_t>(core) * p.pages_per_core + slot) * cfg.page_size;
  }
  hmb_trace_producer_config cfg;
  TestArea area;
  hmb_trace_producer p{};
  TestSink sink;
  TestConsumer consumer;
  uint64_t produced[HMB_TRACE_MAX_CORES] = {};
  uint64_t ts = 1000;
};

void ExpectExact(const Rig& r, uint16_t core, uint64_t expect_lost) {
  const auto& c = r.sink.core[core];
  EXPECT_EQ(c.delivered + r.sink.LostTotal(core), r.produced[core]) << "core " << core;
  EXPECT_EQ(r.sink.LostTotal(core), expect_lost) << "core " << core;
  EXPECT_EQ(c.out_of_order, 0u);
  EXPECT_EQ(c.bad_payload, 0u);
}

// The boundary matrix: counts around page and ring sizes, drained at once.
class Boundary : public ::testing::TestWithParam<int> {};

TEST_P(Boundary, KeepingUpDeliversEveryRecordOnceInOrder) {
  Rig r(4096, 8, 1);
  const uint32_t per_page = r.RecordsPerPage(16);
  const uint64_t counts[] = {0, 1, per_page / 2, per_page, per_page + 1,
                             50ull * 8 * per_page};
  const uint64_t n = counts[GetParam()];
  r.sink.keep_seqs = true;
  // Drain after every page's worth so the consumer keeps up even for 50x.
  for (uint64_t done = 0; done < n;) {
    uint64_t step = std::min<uint64_t>(per_page, n - done);
    r.Emit(0, step, 16);
    done += step;
    r.consumer.DrainAll();
  }
  r.consumer.DrainAll();
  ExpectExact(r, 0, 0);
  ASSERT_EQ(r.sink.core[0].seqs.size(), n);
  for (uint64_t i = 0; i < n; i++) ASSERT_EQ(r.sink.core[0].seqs[i], i);
}

TEST_P(Boundary, NotDrainingCountsExactlyWhatWasOverwritten) {
  Rig r(4096, 8, 1);
  const uint32_t per_page = r.RecordsPerPage(16);
  const uint64_t counts[] = {0, 1, per_page / 2, per_page, per_page + 1,
                             50ull * 8 * per_page};
  const uint64_t n = counts[GetParam()];
  r.Emit(0, n, 16);
  r.consumer.DrainAll();
  // The ring keeps its last 8 pages; every record on older pages is gone.
  const uint64_t pages = (n + per_page - 1) / per_page;
  const uint64_t gone = pages > 8 ? (pages - 8) * per_page : 0;
  ExpectExact(r, 0, gone);
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_OVERWRITTEN], r.sink.LostTotal(0));
  if (n) {
    EXPECT_EQ(r.sink.core[0].last_seq, n - 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Counts, Boundary, ::testing::Range(0, 6));

TEST(Consumer, LateAttachCountsRecordsBeforeAttachAsOverwritten) {
  Rig r(1024, 4, 2);
  r.Emit(0, 10000, 24);
  r.Emit(1, 3, 0);
  r.consumer.DrainAll();
  ExpectExact(r, 0, r.sink.core[0].lost[HMB_LOST_OVERWRITTEN]);
  EXPECT_GT(r.sink.core[0].lost[HMB_LOST_OVERWRITTEN], 9000u);
  ASSERT_FALSE(r.sink.core[0].lost_at.empty());
  EXPECT_EQ(r.sink.core[0].lost_at[0], 10000 - r.sink.core[0].delivered);
  ExpectExact(r, 1, 0);
}

TEST(Consumer, BudgetResumesMidPage) {
  Rig r(4096, 4, 1);
  r.Emit(0, 50, 8);
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  for (int i = 0; i < 50; i++)
    ASSERT_EQ(hmb_consumer_drain_core(r.consumer.get(), 0, 1), 1u) << i;
  EXPECT_EQ(hmb_consumer_drain_core(r.consumer.get(), 0, 1), 0u);
  ExpectExact(r, 0, 0);
}

TEST(Consumer, RefusedRecordsComeAgainAndAreNeitherLostNorDuplicated) {
  Rig r(1024, 8, 2);
  r.sink.keep_seqs = true;
  r.sink.refuse_every = 3;
  const uint64_t n = 5 * r.RecordsPerPage(8);  // fits in the ring: no loss
  r.Emit(0, n, 8);
  r.Emit(1, n / 2, 0);
  for (int i = 0; i < 100 && r.sink.core[0].delivered + r.sink.core[1].delivered <
                                 n + n / 2;
       i++)
    r.consumer.DrainAll();
  EXPECT_GT(r.sink.refused, 0u);
  ExpectExact(r, 0, 0);
  ExpectExact(r, 1, 0);
  ASSERT_EQ(r.sink.core[0].seqs.size(), n);
  for (uint64_t i = 0; i < n; i++) ASSERT_EQ(r.sink.core[0].seqs[i], i);
}

TEST(Consumer, RefusedRecordAfterAGapChargesTheGapOnce) {
  Rig r(1024, 4, 1);
  r.sink.refuse_every = 2;
  r.Emit(0, 20 * r.RecordsPerPage(0));  // laps the 4-page ring many times
  for (int i = 0; i < 100; i++) r.consumer.DrainAll();
  ExpectExact(r, 0, r.sink.core[0].lost[HMB_LOST_OVERWRITTEN]);
  EXPECT_EQ(r.sink.core[0].lost_at.size(), 1u);
  EXPECT_GT(r.sink.refused, 0u);
}

TEST(Consumer, LargestBudgetDrainsEverything) {
  Rig r(4096, 16, 1);
  r.Emit(0, 10 * r.RecordsPerPage(0));
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  EXPECT_EQ(hmb_consumer_drain_core(r.consumer.get(), 0, UINT32_MAX), r.produced[0]);
}

TEST(Consumer, TimestampsSurviveDeltaOverflow) {
  Rig r(4096, 4, 1);
  std::vector<uint64_t> ts = {5, 6, 6 + (1ull << 32), 7 + (1ull << 33), 1ull << 40};
  struct Ctx { std::vector<uint64_t> got; } ctx;
  for (uint64_t i = 0; i < ts.size(); i++)
    ASSERT_EQ(EmitTestRecord(&r.p, 0, i, 0, ts[i]), 0);
  std::vector<uint8_t> scratch(HMB_CONSUMER_SCRATCH_LEN);
  hmb_consumer c;
  hmb_area a = r.area.area();
  hmb_consumer_ops ops{[](void* x, const hmb_record* rec) {
                         static_cast<Ctx*>(x)->got.push_back(rec->ts);
                         return 0;
                       },
                       nullptr, nullptr};
  hmb_consumer_init(&c, &a, &ops, &ctx, scratch.data());
  ASSERT_EQ(hmb_consumer_poll(&c), HMB_CONSUMER_ATTACHED);
  hmb_consumer_drain_core(&c, 0, 100);
  EXPECT_EQ(ctx.got, ts);
}

TEST(Consumer, GeometryAndBuildIdComeFromTheMetaPage) {
  Rig r(2048, 16, 3);
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  const hmb_geometry& g = r.consumer.get()->geo;
  EXPECT_EQ(g.page_size, 2048u);
  EXPECT_EQ(g.pages_per_core, 16u);
  EXPECT_EQ(g.nr_cores, 3u);
  EXPECT_EQ(g.clock_hz, 1000000000u);
  EXPECT_EQ(g.build_id[0], 0xb0);
  EXPECT_EQ(g.producer_gen, 1u);
  ASSERT_EQ(r.sink.events.size(), 1u);
  EXPECT_EQ(r.sink.events[0], HMB_TRACE_EV_ATTACHED);
}

TEST(Consumer, FirmwareResetIsDetectedAndBothSidesCarryOn) {
  Rig r(4096, 4, 2);
  r.Emit(0, 100, 8);
  r.Emit(1, 10, 8);
  r.consumer.DrainAll();
  ExpectExact(r, 0, 0);
  // Firmware reset: the producer re-initialises the live area.
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  EXPECT_EQ(r.p.producer_gen, 2u);
  const uint64_t before0 = r.sink.core[0].delivered;
  r.produced[0] = r.produced[1] = 0;
  r.Emit(0, 77, 8);
  r.Emit(1, 5, 8);
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->resets, 1u);
  EXPECT_EQ(r.sink.events.back(), HMB_TRACE_EV_RESET);
  EXPECT_EQ(r.sink.core[0].delivered - before0, 77u);
  EXPECT_EQ(r.sink.core[0].last_seq, 76u);
  EXPECT_EQ(r.sink.LostTotal(0), 0u);
  EXPECT_EQ(r.sink.core[0].bad_payload + r.sink.core[1].bad_payload, 0u);
}

TEST(Consumer, RecordsUnreadAtAResetAreCountedAsLostToReset) {
  Rig r(4096, 4, 2);
  r.Emit(0, 100, 8);
  r.Emit(1, 10, 8);
  r.consumer.DrainAll();
  r.Emit(0, 37, 8);  // never read: the firmware resets first
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->resets, 1u);
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_RESET], 37u);
  ASSERT_EQ(r.sink.core[0].lost_at.size(), 1u);
  EXPECT_EQ(r.sink.core[0].lost_at[0], 137u);  // the old life's end
  EXPECT_EQ(r.sink.core[1].lost[HMB_LOST_RESET], 0u);
  // The old life is exact: delivered + lost == produced.
  EXPECT_EQ(r.sink.core[0].delivered + r.sink.LostTotal(0), 137u);
}

TEST(Consumer, ResetLossIsOnlyReportedForTheConsumersOwnCores) {
  Rig r(4096, 4, 2);
  r.consumer.get()->core_mask = 1u << 1;  // this consumer drains core 1 only
  r.Emit(0, 50, 8);
  r.Emit(1, 20, 8);
  r.consumer.DrainAll();
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.consumer.DrainAll();
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_RESET], 0u);
  EXPECT_EQ(r.sink.core[1].lost[HMB_LOST_RESET], 0u);
}

TEST(Consumer, ProducerInitInProgressIsNotRead) {
  Rig r(4096, 4, 1);
  r.Emit(0, 10);
  auto* m = reinterpret_cast<hmb_trace_meta*>(r.area.mem());
  m->state = HMB_TRACE_STATE_INIT;
  EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_DETACHED);
  EXPECT_EQ(r.consumer.DrainAll(), 0u);
  m->state = HMB_TRACE_STATE_READY;
  EXPECT_EQ(r.consumer.DrainAll(), 10u);
}

// ---- The cheap look between drains (hmb_consumer_peek) ----

// Drains, then remembers where the consumer stands on @cores.
hmb_consumer_peek DrainAndTake(Rig& r, uint32_t cores) {
  r.consumer.DrainAll();
  hmb_consumer_peek pk{};
  hmb_consumer_peek_take(r.consumer.get(), cores, &pk);
  return pk;
}

TEST(ConsumerPeek, NothingNewAfterADrainMeansNoDrainIsNeeded) {
  Rig r(1024, 4, 2);
  r.Emit(0, 7);
  r.Emit(1, 3);
  hmb_consumer_peek pk = DrainAndTake(r, 0x3);
  EXPECT_TRUE(pk.valid);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 0);
}

TEST(ConsumerPeek, ARecordOnALookedAtCoreIsSeen) {
  Rig r(1024, 4, 2);
  r.Emit(0, 7);
  hmb_consumer_peek pk = DrainAndTake(r, 0x3);
  r.Emit(1, 1);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 1);
  // ... and a drain then finds it, after which the look is quiet again.
  pk = DrainAndTake(r, 0x3);
  EXPECT_EQ(r.sink.core[1].delivered, 1u);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 0);
}

TEST(ConsumerPeek, OnlyTheCoresAskedForAreLookedAt) {
  Rig r(1024, 4, 2);
  hmb_consumer_peek pk = DrainAndTake(r, 0x1);
  r.Emit(1, 5);  // another drainer's core
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 0);
  r.Emit(0, 1);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 1);
}

TEST(ConsumerPeek, AFirmwareResetIsSeen) {
  Rig r(1024, 4, 1);
  r.Emit(0, 4);
  hmb_consumer_peek pk = DrainAndTake(r, 0x1);
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 1);
}

TEST(ConsumerPeek, BeforeAttachingEverythingNeedsADrain) {
  Rig r(1024, 4, 1);
  hmb_consumer_peek pk{};
  hmb_consumer_peek_take(r.consumer.get(), 0x1, &pk);  // never polled
  EXPECT_FALSE(pk.valid);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 1);
}

TEST(ConsumerPeek, AHintThatDisagreesWithTheConsumerAsksForADrain) {
  Rig r(1024, 4, 1);
  r.Emit(0, 4);
  hmb_consumer_peek pk = DrainAndTake(r, 0x1);
  // A buggy producer: next_seq in the core descriptor is garbage.
  uint8_t* d = r.area.mem() + r.consumer.get()->geo.core_offset +
               offsetof(hmb_trace_core, next_seq);
  const uint64_t garbage = 0xdeadbeefcafef00dull;
  std::memcpy(d, &garbage, sizeof(garbage));
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 1);
}

TEST(ConsumerPeek, CoresBeyondTheGeometryAreNotLookedAt) {
  Rig r(1024, 4, 2);
  hmb_consumer_peek pk = DrainAndTake(r, 0xffffffffu);
  EXPECT_EQ(pk.cores, 0x3u);
  EXPECT_EQ(hmb_consumer_peek_changed(r.consumer.get(), &pk), 0);
}

// ---- Two threads over one shared mapping ----

struct ThreadedParams {
  uint32_t page_size;
  uint32_t ppc;
  uint16_t cores;
  uint64_t per_core;
  bool flow_control;  // producer waits so the consumer always keeps up
  uint32_t seed;
  uint64_t max_rate = 0;  // with a real clock: the time bound on
};

uint64_t MonotonicNs(void*) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void RunThreaded(const ThreadedParams& tp) {
  hmb_trace_producer_config cfg = TestConfig(tp.page_size, tp.ppc, tp.cores);
  TestArea area(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, area.mem(), area.len(), &cfg), 0);
  TestSink sink;
  TestConsumer consumer(area, &sink);
  if (tp.max_rate) {
    consumer.get()->now_ns = MonotonicNs;
    consumer.get()->max_rate = tp.max_rate;
  }
  const uint16_t max_var = static_cast<uint16_t>(
      std::min<uint32_t>(hmb_trace_max_payload(&p) - kFixed, 600));
  const uint32_t min_per_page = (tp.page_size - kHdr) / (8 + kFixed + max_var + 8);
  const uint64_t window = static_cast<uint64_t>(tp.ppc - 2) * std::max(min_per_page, 1u);

  std::atomic<int> producers_done{0};
  std::vector<std::thread> producers;
  for (uint16_t core = 0; core < tp.cores; core++) {
    producers.emplace_back([&, core] {
      std::mt19937_64 rng(tp.seed * 131 + core);
      std::uniform_int_distribution<int> size(0, max_var);
      std::uniform_int_distribution<int> pause(0, 3);
      uint64_t ts = 0;
      for (uint64_t seq = 0; seq < tp.per_core; seq++) {
        if (tp.flow_control) {
          while (seq - sink.core[core].delivered.load(std::memory_order_acquire) >= window)
            std::this_thread::yield();
        } else if (pause(rng) == 0) {
          for (int spin = size(rng); spin > 0; spin--) asm volatile("");
        }
        ts += 1 + (rng() & 0xff);
        EmitTestRecord(&p, core, seq, static_cast<uint16_t>(size(rng)), ts);
      }
      producers_done.fetch_add(1);
    });
  }
  std::thread reader([&] {
    std::mt19937 rng(tp.seed);
    for (;;) {
      const bool done = producers_done.load() == tp.cores;
      if (hmb_consumer_poll(consumer.get()) == HMB_CONSUMER_ATTACHED)
        for (uint16_t k = 0; k < tp.cores; k++)
          hmb_consumer_drain_core(consumer.get(), k, 1 + rng() % 512);
      if (done && consumer.DrainAll() == 0) break;
    }
  });
  for (auto& t : producers) t.join();
  reader.join();

  for (uint16_t k = 0; k < tp.cores; k++) {
    const auto& c = sink.core[k];
    EXPECT_EQ(c.delivered + sink.LostTotal(k), tp.per_core) << "core " << k;
    EXPECT_EQ(c.last_seq, tp.per_core - 1) << "core " << k;
    EXPECT_EQ(c.out_of_order, 0u) << "core " << k;
    EXPECT_EQ(c.bad_payload, 0u) << "core " << k;
    EXPECT_EQ(c.lost[HMB_LOST_INVALID], 0u) << "core " << k;
    if (tp.flow_control) {
      EXPECT_EQ(sink.LostTotal(k), 0u) << "core " << k;
    }
  }
  for (int e = 0; e < HMB_ERR_NR; e++) {
    EXPECT_EQ(consumer.get()->errors[e], 0u)
        << hmb_consumer_error_name(static_cast<hmb_consumer_error>(e));
  }
}

TEST(ConsumerThreaded, KeepingUpDeliversEverythingOnEveryCore) {
  RunThreaded({4096, 8, 4, 200000, true, 1});
}

TEST(ConsumerThreaded, KeepingUpWithSmallPagesAndTwoPageRing) {
  RunThreaded({512, 4, 2, 100000, true, 2});
}

TEST(ConsumerThreaded, OverrunAccountsExactlyUnderRandomGeometry) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 12; round++) {
    ThreadedParams tp;
    tp.page_size = 512u << (rng() % 7);  // 512 .. 32768
    tp.ppc = 2 + rng() % 30;
    tp.cores = 1 + rng() % 4;
    tp.per_core = 20000 + rng() % 60000;
    tp.flow_control = false;
    tp.seed = rng();
    SCOPED_TRACE(::testing::Message() << "page_size=" << tp.page_size << " ppc="
                                      << tp.ppc << " cores=" << tp.cores
                                      << " seed=" << tp.seed);
    RunThreaded(tp);
  }
}

TEST(ConsumerThreaded, HonestOverrunUnderTheTimeBoundIsNeverImplausible) {
  // A real clock and a rate no producer thread reaches (one record a
  // nanosecond): every charge as exact as without it, no error.
  std::mt19937 rng(4321);
  for (int round = 0; round < 6; round++) {
    ThreadedParams tp;
    tp.page_size = 512u << (rng() % 4);
    tp.ppc = 2 + rng() % 6;
    tp.cores = 1 + rng() % 3;
    tp.per_core = 20000 + rng() % 40000;
    tp.flow_control = false;
    tp.seed = rng();
    tp.max_rate = 1000000000;
    SCOPED_TRACE(::testing::Message() << "page_size=" << tp.page_size << " ppc=" << tp.ppc
                                      << " cores=" << tp.cores << " seed=" << tp.seed);
    RunThreaded(tp);
  }
}

TEST(ConsumerThreaded, ResetWhileReadingCarriesOn) {
  hmb_trace_producer_config cfg = TestConfig(4096, 8, 2);
  TestArea area(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, area.mem(), area.len(), &cfg), 0);
  TestSink sink;
  sink.check_payload = true;
  TestConsumer consumer(area, &sink);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) consumer.DrainAll(256);
  });
  uint64_t ts = 0;
  for (int life = 0; life < 3; life++) {
    if (life) {
      EXPECT_EQ(hmb_trace_producer_init(&p, area.mem(), area.len(), &cfg), 0);
    }
    for (uint64_t seq = 0; seq < 30000; seq++)
      for (uint16_t k = 0; k < 2; k++) EmitTestRecord(&p, k, seq, seq % 40, ++ts);
    // Let the reader see this life (resets count the changes observed)
    // and its last records before the next reset.
    while (sink.resets_seen.load(std::memory_order_acquire) != static_cast<uint32_t>(life) ||
           sink.core[0].last_seq != 29999 || sink.core[1].last_seq != 29999)
      std::this_thread::yield();
  }
  stop = true;
  reader.join();
  consumer.DrainAll();
  EXPECT_EQ(consumer.get()->resets, 2u);
  EXPECT_EQ(sink.core[0].last_seq, 29999u);
  EXPECT_EQ(sink.core[1].last_seq, 29999u);
  EXPECT_EQ(sink.core[0].bad_payload + sink.core[1].bad_payload, 0u);
  EXPECT_EQ(consumer.get()->errors[HMB_ERR_BAD_RECORD], 0u);
}

// ---- The producer moving on between two reads of the consumer ----

using HookFn = void (*)(const hmb_consumer*, uint16_t);

// Runs `fn` once, the next time the consumer passes test hook `Hook`.
template <HookFn& Hook>
class HookOnce {
 public:
  using Fn = std::function<void(const hmb_consumer*, uint16_t)>;
  explicit HookOnce(Fn fn) {
    fn_ = std::move(fn);
    Hook = Call;
  }
  ~HookOnce() {
    Hook = nullptr;
    fn_ = nullptr;
  }
  HookOnce(const HookOnce&) = delete;
  HookOnce& operator=(const HookOnce&) = delete;

 private:
  static void Call(const hmb_consumer* c, uint16_t core) {
    Hook = nullptr;
    fn_(c, core);
  }
  static inline Fn fn_;
};

// The consumer has copied a page's records and not yet re-checked the page
// header: the moment a producer that laps the ring makes the copy torn.
using AfterCopyOnce = HookOnce<hmb_consumer_after_copy>;
// The consumer found its page stalled, has read the producer's head hint and
// seen the next page, and is about to read the stalled page's header again:
// the moment a producer that laps the ring starts reusing the page's slot.
using BeforeRecheckOnce = HookOnce<hmb_consumer_before_recheck>;

TEST(ConsumerTorn, PageOverwrittenWhileCopiedIsLostAsTornNotDelivered) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(16);
  r.Emit(0, 10, 16);  // page 0 open with records 0..9
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  int fired = 0;
  AfterCopyOnce hook([&](const hmb_consumer* c, uint16_t core) {
    fired++;
    EXPECT_EQ(core, 0u);
    EXPECT_EQ(c->core[0].next_page, 0u);  // the copy is of page 0's 10 records
    // The producer fills page 0 and laps the ring: page 4 takes slot 0.
    r.Emit(0, 4 * pp - 10 + 1, 16);
  });
  r.sink.keep_seqs = true;
  r.consumer.DrainAll();
  EXPECT_EQ(fired, 1);
  const auto& k = r.sink.core[0];
  // The 10 records of the torn copy are lost as torn, not delivered; the
  // rest of page 0, written after the copy, was never seen: overwritten.
  EXPECT_EQ(k.lost[HMB_LOST_TORN], 10u);
  EXPECT_EQ(k.lost[HMB_LOST_OVERWRITTEN], pp - 10u);
  EXPECT_EQ(k.lost[HMB_LOST_INVALID] + k.lost[HMB_LOST_RESET], 0u);
  EXPECT_EQ(k.delivered, 3u * pp + 1u);  // pages 1..4
  ASSERT_FALSE(k.seqs.empty());
  EXPECT_EQ(k.seqs.front(), pp);
  EXPECT_EQ(k.lost_at, std::vector<uint64_t>({pp, pp}));
  ExpectExact(r, 0, pp);
  for (int e = 0; e < HMB_ERR_NR; e++)
    EXPECT_EQ(r.consumer.get()->errors[e], 0u)
        << hmb_consumer_error_name(static_cast<hmb_consumer_error>(e));
}

TEST(ConsumerTorn, TornCopyOfAHalfReadPageChargesOnlyItsUnreadRecords) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(16);
  r.Emit(0, 10, 16);
  r.consumer.DrainAll();  // records 0..9 delivered from the open page 0
  ASSERT_EQ(r.sink.core[0].delivered, 10u);
  r.Emit(0, 5, 16);  // records 10..14 on page 0
  int fired = 0;
  AfterCopyOnce hook([&](const hmb_consumer* c, uint16_t) {
    fired++;
    EXPECT_EQ(c->core[0].page_recs, 10u);  // resuming mid-page
    r.Emit(0, 4 * pp - 15 + 1, 16);
  });
  r.consumer.DrainAll();
  EXPECT_EQ(fired, 1);
  const auto& k = r.sink.core[0];
  EXPECT_EQ(k.lost[HMB_LOST_TORN], 5u);  // 10..14; 0..9 were delivered
  EXPECT_EQ(k.lost[HMB_LOST_OVERWRITTEN], pp - 15u);
  EXPECT_EQ(k.delivered, 10u + 3u * pp + 1u);
  ExpectExact(r, 0, pp - 10u);
}

TEST(ConsumerTorn, ProducerLappingWhileAPageIsCheckedIsOverwrittenNotBadPageHeader) {
  // A reader preempted inside the stalled-page check: the head hint it read
  // says page 1, but by the time it reads page 0's header again the
  // producer has reached page 2 and is reopening page 0's slot for page 3.
  Rig r(512, 3, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp + 1);  // page 0 closed (full), page 1 open with 1 record
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  // The producer's first store of a reopen; page 0's records are going.
  auto* h0 = reinterpret_cast<hmb_trace_page_header*>(r.Page(0, 0));
  h0->commit = HMB_TRACE_COMMIT_BUSY;
  int fired = 0;
  BeforeRecheckOnce hook([&](const hmb_consumer* c, uint16_t core) {
    fired++;
    EXPECT_EQ(core, 0u);
    EXPECT_EQ(c->core[0].next_page, 0u);
    r.Emit(0, pp);  // page 1 closed, page 2 open: head hint 2
  });
  r.sink.keep_seqs = true;
  r.consumer.DrainAll();
  EXPECT_EQ(fired, 1);
  r.Emit(0, pp);  // the reopen completes: page 3 in slot 0
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  EXPECT_EQ(k.lost[HMB_LOST_OVERWRITTEN], pp);  // page 0
  EXPECT_EQ(k.lost[HMB_LOST_INVALID] + k.lost[HMB_LOST_TORN], 0u);
  ASSERT_FALSE(k.seqs.empty());
  EXPECT_EQ(k.seqs.front(), pp);
  ExpectExact(r, 0, pp);
  for (int e = 0; e < HMB_ERR_NR; e++)
    EXPECT_EQ(r.consumer.get()->errors[e], 0u)
        << hmb_consumer_error_name(static_cast<hmb_consumer_error>(e));
}

// ---- Hostile areas: errors counted, never a crash ----

TEST(ConsumerHostile, CommitBytesPastThePageIsInvalidNotACrash) {
  Rig r(4096, 4, 1);
  r.Emit(0, r.RecordsPerPage(0) + 5);  // page 0 closed, page 1 open
  auto* h = reinterpret_cast<hmb_trace_page_header*>(r.Page(0, 0));
  h->commit = HMB_TRACE_COMMIT_CLOSED | HMB_TRACE_COMMIT(3, 0xfff8);
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_BAD_PAGE_HEADER], 1u);
  EXPECT_EQ(r.sink.core[0].delivered, 5u);
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_INVALID], r.RecordsPerPage(0));
  ExpectExact(r, 0, r.RecordsPerPage(0));
}

TEST(ConsumerHostile, RecordLengthPastThePageIsInvalid) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp);  // page 0 full
  auto* rec = reinterpret_cast<hmb_trace_record_header*>(r.Page(0, 0) + kHdr + 3 * 24);
  rec->len = 0xfff0;
  r.Emit(0, 5);  // closes page 0
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_BAD_RECORD], 1u);
  // Records 0..2 were fine, the rest of page 0 is invalid, page 1 arrives.
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_INVALID], pp - 3);
  EXPECT_EQ(r.sink.core[0].delivered, 3u + 5u);
  ExpectExact(r, 0, pp - 3);
}

TEST(ConsumerHostile, EventIdZeroIsInvalid) {
  Rig r(4096, 4, 1);
  r.Emit(0, 4);
  reinterpret_cast<hmb_trace_record_header*>(r.Page(0, 0) + kHdr)->event_id = 0;
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_BAD_RECORD], 1u);
  EXPECT_EQ(r.sink.core[0].delivered, 0u);
}

TEST(ConsumerHostile, PageSeqRunningBackwardsIsCountedAndSurvived) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp * 6 + 1);  // pages 0..6; slot 2 holds page 6
  r.consumer.DrainAll();
  r.Emit(0, pp * 2);  // page 7 in slot 3, page 8 in slot 0
  // The device rewrites page 7's header with an ancient page_seq.
  reinterpret_cast<hmb_trace_page_header*>(r.Page(0, 3))->page_seq = 0;
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_PAGE_BACKWARDS], 1u);
  // Page 7 is lost as invalid; page 8 still arrives.
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_INVALID], pp);
  EXPECT_EQ(r.sink.core[0].last_seq, r.produced[0] - 1);
  EXPECT_EQ(r.sink.core[0].out_of_order, 0u);
  EXPECT_EQ(r.sink.core[0].bad_payload, 0u);
  EXPECT_EQ(r.sink.core[0].delivered + r.sink.LostTotal(0), r.produced[0]);
}

TEST(ConsumerHostile, FirstSeqRunningBackwardsIsNotDeliveredTwice) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp + 2);
  r.consumer.DrainAll();
  auto* h = reinterpret_cast<hmb_trace_page_header*>(r.Page(0, 2));
  r.Emit(0, pp);  // page 2 opens
  h->first_seq = 0;
  r.Emit(0, pp);
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_SEQ_BACKWARDS], 1u);
  EXPECT_EQ(r.sink.core[0].out_of_order, 0u);
  EXPECT_EQ(r.sink.core[0].bad_payload, 0u);
}

TEST(ConsumerHostile, HugeFirstSeqIsInvalidAndDoesNotStallTheCore) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp + 1);  // page 0 closed, page 1 open
  r.consumer.DrainAll();
  r.Emit(0, pp);      // page 1 closed, page 2 open
  reinterpret_cast<hmb_trace_page_header*>(r.Page(0, 2))->first_seq = 1ull << 62;
  r.Emit(0, pp);      // page 2 closed, page 3 open
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_BAD_PAGE_HEADER], 1u);
  // Only page 2's records are lost, not 2^62 of them; page 3 arrives.
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_INVALID], pp);
  ExpectExact(r, 0, pp);
}

TEST(ConsumerHostile, FirstSeqChangingMidPageIsInvalid) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp + 1);  // page 0 closed, page 1 open with one record read
  r.consumer.DrainAll();
  r.Emit(0, pp);
  reinterpret_cast<hmb_trace_page_header*>(r.Page(0, 1))->first_seq = 5;
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_BAD_PAGE_HEADER], 1u);
  EXPECT_EQ(r.sink.core[0].bad_payload, 0u);
  EXPECT_EQ(r.sink.core[0].out_of_order, 0u);
  EXPECT_EQ(r.sink.core[0].last_seq, r.produced[0] - 1);
}

TEST(ConsumerHostile, WildGeometryIsRejected) {
  struct Case {
    const char* what;
    void (*poke)(hmb_trace_meta*);
  } cases[] = {
      {"magic", [](hmb_trace_meta* m) { m->magic = 0x12345678; }},
      {"abi major", [](hmb_trace_meta* m) { m->abi_major = 9; }},
      {"page size", [](hmb_trace_meta* m) { m->page_size = 4097; }},
      {"page size huge", [](hmb_trace_meta* m) { m->page_size = 1u << 30; }},
      {"zero cores", [](hmb_trace_meta* m) { m->nr_cores = 0; }},
      {"many cores", [](hmb_trace_meta* m) { m->nr_cores = 60000; }},
      {"ring past area", [](hmb_trace_meta* m) { m->ring_offset = 1ull << 40; }},
      {"pages per core", [](hmb_trace_meta* m) { m->pages_per_core = 0xffffffff; }},
      {"area larger than mapping", [](hmb_trace_meta* m) { m->area_len *= 2; }},
      {"dictionary past area", [](hmb_trace_meta* m) { m->dict_len = 0xffffffff; }},
      {"core table stride", [](hmb_trace_meta* m) { m->core_len = 8; }},
      {"core table offset", [](hmb_trace_meta* m) { m->core_offset = 4090; }},
      {"ring overflow", [](hmb_trace_meta* m) { m->ring_offset = ~0ull - 4095; }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    Rig r(4096, 4, 2);
    r.Emit(0, 100);
    k.poke(reinterpret_cast<hmb_trace_meta*>(r.area.mem()));
    EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_BROKEN);
    EXPECT_EQ(r.consumer.DrainAll(), 0u);
    EXPECT_EQ(r.consumer.get()->errors[HMB_ERR_BAD_MAGIC] +
                  r.consumer.get()->errors[HMB_ERR_BAD_GEOMETRY],
              1u);
  }
}

TEST(ConsumerHostile, GarbageInEveryPageHeaderNeverCrashes) {
  Rig r(1024, 8, 2);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; round++) {
    r.Emit(round % 2, 1 + rng() % 40, rng() % 64);
    // Scribble random words over a random page header or record area.
    uint8_t* pg = r.Page(rng() % 2, rng() % 8);
    for (int i = 0; i < 4; i++) {
      uint64_t v = rng();
      std::memcpy(pg + (rng() % (1024 / 8)) * 8, &v, 8);
    }
    r.consumer.DrainAll(1 + rng() % 100);
  }
  for (uint16_t k = 0; k < 2; k++) {
    EXPECT_EQ(r.sink.core[k].out_of_order, 0u);
    EXPECT_LE(r.sink.core[k].delivered, r.produced[k]);
  }
}

TEST(ConsumerHostile, NonContiguousHostPagesReadCorrectly) {
  // The consumer reads through a page table: scatter the area's host pages.
  hmb_trace_producer_config cfg = TestConfig(16384, 4, 2);
  TestArea area(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, area.mem(), area.len(), &cfg), 0);
  for (uint64_t s = 0; s < 500; s++)
    for (uint16_t k = 0; k < 2; k++) EmitTestRecord(&p, k, s, s % 300, s);
  const uint64_t n = area.len() / kHostPage;
  std::vector<uint64_t> perm(n);
  for (uint64_t i = 0; i < n; i++) perm[i] = (i * 7919) % n;
  TestArea scattered(area.len());
  std::vector<const uint8_t*> table(n);
  for (uint64_t i = 0; i < n; i++) {
    std::memcpy(scattered.mem() + perm[i] * kHostPage, area.mem() + i * kHostPage, kHostPage);
    table[i] = scattered.mem() + perm[i] * kHostPage;
  }
  TestSink sink;
  std::vector<uint8_t> scratch(HMB_CONSUMER_SCRATCH_LEN);
  hmb_consumer c;
  hmb_area a{table.data(), n, kHostPageShift};
  hmb_consumer_ops ops = sink.Ops();
  hmb_consumer_init(&c, &a, &ops, &sink, scratch.data());
  ASSERT_EQ(hmb_consumer_poll(&c), HMB_CONSUMER_ATTACHED);
  for (uint16_t k = 0; k < 2; k++) hmb_consumer_drain_core(&c, k, 100000);
  for (uint16_t k = 0; k < 2; k++) {
    EXPECT_EQ(sink.core[k].delivered + sink.LostTotal(k), 500u);
    EXPECT_EQ(sink.core[k].bad_payload, 0u);
    EXPECT_EQ(sink.core[k].last_seq, 499u);
  }
}


// ---- A buggy SSD must not make the trace lie (issue 8) ----
// Each test is one row of the table: the damage is applied to an
// area the real producer writes, the consumer's answer is bounded or
// flagged, nothing is delivered twice, and honest records keep coming.

hmb_trace_meta* Meta(Rig& r) { return reinterpret_cast<hmb_trace_meta*>(r.area.mem()); }
hmb_trace_core* CoreDesc(Rig& r, uint16_t k) {
  return reinterpret_cast<hmb_trace_core*>(r.area.mem() + sizeof(hmb_trace_meta)) + k;
}
hmb_trace_page_header* Header(Rig& r, uint16_t core, uint32_t slot) {
  return reinterpret_cast<hmb_trace_page_header*>(r.Page(core, slot));
}
uint64_t Errors(Rig& r, hmb_consumer_error e) { return r.consumer.get()->errors[e]; }
uint64_t Count(const std::vector<hmb_trace_ev_state>& v, hmb_trace_ev_state e) {
  return static_cast<uint64_t>(std::count(v.begin(), v.end(), e));
}
// Every delivered sequence number once, in increasing order.
void ExpectNoRepeats(const std::vector<uint64_t>& seqs) {
  for (size_t i = 1; i < seqs.size(); i++)
    ASSERT_LT(seqs[i - 1], seqs[i]) << "record delivered twice or out of order at " << i;
}

// The backlog the module's first-fit hold looks at: pages written and not
// drained, by the head hint, bounded by the ring whatever the hint says.
TEST(ConsumerBacklog, CountsUndrainedPagesAndIsBoundedByTheRing) {
  Rig r(4096, 8, 2);
  const uint32_t pp = r.RecordsPerPage(0);
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 0u);  // not attached
  r.Emit(0, pp * 2 + 1);  // pages 0 and 1 full, page 2 open
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 3u);
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 1), 0u);  // nothing written
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 2), 0u);  // no such core
  r.consumer.DrainAll();
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 1u);  // the open page
  r.Emit(0, pp * 20);
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 8u);  // lapped: a ring
  // Hostile hints: far ahead is a ring, behind the consumer is nothing.
  CoreDesc(r, 0)->head_page += 1ull << 40;
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 8u);
  CoreDesc(r, 0)->head_page = 0;
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 0u);
  CoreDesc(r, 0)->head_page = ~0ull;
  EXPECT_EQ(hmb_consumer_backlog_pages(r.consumer.get(), 0), 0u);
}

TEST(ConsumerImplausible, TornPrevNextSeqAtResetIsCountedNotCharged) {
  Rig r(4096, 4, 2);
  r.Emit(0, 100, 8);
  r.consumer.DrainAll();
  const uint64_t cap = hmb_consumer_capacity(&r.consumer.get()->geo);
  ASSERT_EQ(cap, 4u * (4096 - 48) / 8);
  r.Emit(0, 37, 8);  // never read: the firmware resets first
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  CoreDesc(r, 0)->prev_next_seq += 1ull << 32;  // a torn 64-bit store
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  EXPECT_EQ(r.consumer.get()->resets, 1u);
  EXPECT_EQ(k.lost[HMB_LOST_RESET], 0u);  // was 4294967333
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(Count(r.sink.events, HMB_TRACE_EV_IMPLAUSIBLE), 1u);
  // The next generation, then another reset with 2^63 in the tail.
  r.produced[0] = 0;
  r.Emit(0, 60, 8);
  r.consumer.DrainAll();
  EXPECT_EQ(k.delivered, 160u);
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  CoreDesc(r, 0)->prev_next_seq = 60 + (1ull << 63);
  r.produced[0] = 0;
  r.Emit(0, 5, 8);
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->resets, 2u);
  EXPECT_EQ(k.lost[HMB_LOST_RESET], 0u);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 2u);
  EXPECT_EQ(k.delivered, 165u);
  // An honest tail within the ring is still charged exactly.
  r.Emit(0, 20, 8);
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.consumer.DrainAll();
  EXPECT_EQ(k.lost[HMB_LOST_RESET], 20u);
  EXPECT_LE(k.lost[HMB_LOST_RESET], cap);
}

TEST(ConsumerImplausible, LossCountersSaturateInsteadOfWrapping) {
  Rig r(4096, 4, 1);
  r.Emit(0, 10, 8);
  r.consumer.DrainAll();
  r.Emit(0, 37, 8);
  hmb_consumer* c = r.consumer.get();
  c->core[0].lost[HMB_LOST_RESET] = UINT64_MAX - 5;
  c->errors[HMB_ERR_BAD_GENERATION] = UINT64_MAX;
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.consumer.DrainAll();
  EXPECT_EQ(c->core[0].lost[HMB_LOST_RESET], UINT64_MAX);
  EXPECT_EQ(hmb_consumer_lost_total(&c->core[0]), UINT64_MAX);
  Meta(r)->producer_gen = 1;  // backwards: an implausible error
  r.consumer.DrainAll();
  EXPECT_EQ(c->errors[HMB_ERR_BAD_GENERATION], UINT64_MAX);
}

TEST(ConsumerImplausible, PageFarAheadIsSkippedNotChargedAndTheCoreGoesOn) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.sink.keep_seqs = true;
  r.Emit(0, pp + 1);  // page 0 closed, page 1 open
  r.consumer.DrainAll();
  const uint64_t cap = hmb_consumer_capacity(&r.consumer.get()->geo);
  r.Emit(0, pp);      // page 1 closed, page 2 open
  // Page 2's header claims to be 2^40 laps later, with a matching first_seq.
  auto* h = Header(r, 0, 2);
  h->page_seq += 4ull << 40;
  h->first_seq += (4ull << 40) * pp;
  r.Emit(0, 2 * pp);  // page 2 closed, page 3 closed, page 4 open
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(Errors(r, HMB_ERR_SEQ_BACKWARDS), 0u);  // was 1, and silence
  // Only page 2's records are lost, as invalid: the consumer neither jumps
  // 2^40 laps ahead (charging 2^50 records) nor calls honest pages
  // "backwards" afterwards.
  EXPECT_EQ(k.lost[HMB_LOST_INVALID], pp);
  EXPECT_EQ(k.lost[HMB_LOST_OVERWRITTEN], 0u);
  for (uint64_t l : k.lost) EXPECT_LE(l, cap);
  ExpectExact(r, 0, pp);
  // Honest pages keep coming.
  r.Emit(0, 3 * pp);
  r.consumer.DrainAll();
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);
  ExpectExact(r, 0, pp);
  ExpectNoRepeats(k.seqs);
}

TEST(ConsumerImplausible, GenerationFlappingIsOneResetAndNothingTwice) {
  Rig r(4096, 4, 1);
  r.Emit(0, 10, 8);
  r.consumer.DrainAll();
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.produced[0] = 0;
  r.consumer.DrainAll();
  r.sink.keep_seqs = true;  // generation 2 only
  for (int i = 0; i < 100; i++) {
    r.Emit(0, 7, 8);
    Meta(r)->producer_gen = 1;  // G, G+1, G, ...
    r.consumer.DrainAll();
    Meta(r)->producer_gen = 2;
    r.consumer.DrainAll();
  }
  const auto& k = r.sink.core[0];
  EXPECT_EQ(r.consumer.get()->resets, 1u);  // was 429496729601
  EXPECT_EQ(Errors(r, HMB_ERR_BAD_GENERATION), 100u);
  EXPECT_EQ(Count(r.sink.events, HMB_TRACE_EV_IMPLAUSIBLE), 100u);
  EXPECT_EQ(k.delivered, 10u + 700u);       // was 30572
  ExpectNoRepeats(k.seqs);
  EXPECT_EQ(k.seqs.size(), 700u);
  EXPECT_EQ(r.sink.LostTotal(0), 0u);
  // While the area claims the old generation it is broken, and says why.
  Meta(r)->producer_gen = 1;
  EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_BROKEN);
  EXPECT_EQ(r.consumer.get()->broken_reason, HMB_BROKEN_GEN_BACKWARDS);
}

TEST(ConsumerImplausible, PhantomNewerGenerationIsTakenBackAndReadingResumes) {
  // The firmware stays in generation 1; a corrupted generation word makes
  // the meta page say 2, then 1 again, over and over (a buggy device).
  Rig r(4096, 4, 1);
  r.sink.keep_seqs = true;
  r.Emit(0, 10, 8);
  r.consumer.DrainAll();
  for (int i = 0; i < 50; i++) {
    r.Emit(0, 7, 8);
    Meta(r)->producer_gen = 2;
    r.consumer.DrainAll();
    Meta(r)->producer_gen = 1;
    r.consumer.DrainAll();
  }
  const auto& k = r.sink.core[0];
  // Every record once, none lost, and the consumer is still reading:
  // before, the first "2" was adopted and the return to 1 left the area
  // broken (generation_backwards) for the rest of generation 1.
  EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  EXPECT_EQ(k.delivered, 10u + 350u);
  ExpectNoRepeats(k.seqs);
  EXPECT_EQ(r.sink.LostTotal(0), 0u);
  EXPECT_EQ(r.consumer.get()->resets, 0u);
  EXPECT_EQ(Errors(r, HMB_ERR_BAD_GENERATION), 50u);
  ExpectExact(r, 0, 0);
}

TEST(ConsumerImplausible, SameGenerationReinitResumesInsteadOfRedelivering) {
  Rig r(4096, 4, 1);
  r.sink.keep_seqs = true;
  r.Emit(0, 50, 8);
  r.consumer.DrainAll();
  for (int i = 0; i < 50; i++) {
    Meta(r)->state = HMB_TRACE_STATE_INIT;  // INIT, READY, same generation
    EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_PRODUCER_INIT);
    Meta(r)->state = HMB_TRACE_STATE_READY;
    r.Emit(0, 3, 8);
    r.consumer.DrainAll();
  }
  const auto& k = r.sink.core[0];
  EXPECT_EQ(k.delivered, 200u);  // was 6375: the ring again at every READY
  ExpectNoRepeats(k.seqs);
  EXPECT_EQ(r.consumer.get()->resets, 0u);
  EXPECT_EQ(Errors(r, HMB_ERR_BAD_GENERATION), 50u);
  ExpectExact(r, 0, 0);
}

TEST(ConsumerImplausible, FlippedProducerGenBitCostsOnlyThatPage) {
  Rig r(4096, 8, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.sink.keep_seqs = true;
  r.Emit(0, pp + 1);  // page 0 closed, page 1 open
  r.consumer.DrainAll();
  r.Emit(0, pp);      // page 1 closed, page 2 open
  Header(r, 0, 2)->producer_gen ^= 1u << 3;
  r.Emit(0, 2 * pp);  // page 2 closed, 3 closed, 4 open
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  // Was: nothing after page 1 until the producer rewrote slot 2 a lap later.
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);
  EXPECT_EQ(k.lost[HMB_LOST_INVALID], pp);
  EXPECT_EQ(Errors(r, HMB_ERR_BAD_PAGE_HEADER), 1u);
  ExpectExact(r, 0, pp);
  ExpectNoRepeats(k.seqs);
}

TEST(ConsumerImplausible, ClearedClosedBitCostsNothing) {
  Rig r(4096, 8, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Emit(0, pp + 1);  // page 0 closed, page 1 open, all read
  r.consumer.DrainAll();
  r.Emit(0, pp);      // page 1 closed (full), page 2 open
  Header(r, 0, 1)->commit &= ~HMB_TRACE_COMMIT_CLOSED;
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);  // was pp * 2 - 1
  EXPECT_EQ(Errors(r, HMB_ERR_BAD_PAGE_HEADER), 1u);
  ExpectExact(r, 0, 0);
}

TEST(ConsumerImplausible, OpenPageOfAnHonestProducerIsWaitedFor) {
  // The damaged-page pass must not fire on a page in progress.
  Rig r(4096, 8, 1);
  for (int i = 0; i < 2000; i++) {
    r.Emit(0, 1 + i % 5, i % 40);
    r.consumer.DrainAll(1 + i % 7);
  }
  r.consumer.DrainAll();
  for (int e = 0; e < HMB_ERR_NR; e++)
    EXPECT_EQ(r.consumer.get()->errors[e], 0u)
        << hmb_consumer_error_name(static_cast<hmb_consumer_error>(e));
  ExpectExact(r, 0, 0);
}

TEST(ConsumerImplausible, GarbageAreaIsBrokenWithAReasonNotNotStarted) {
  struct Case {
    const char* what;
    int fill;  // -1: random bytes
    hmb_consumer_state state;
    hmb_consumer_broken_reason reason;
  } cases[] = {
      {"all zero: not started", 0x00, HMB_CONSUMER_DETACHED, HMB_BROKEN_NONE},
      {"all 0xff", 0xff, HMB_CONSUMER_BROKEN, HMB_BROKEN_BAD_MAGIC},
      {"random bytes", -1, HMB_CONSUMER_BROKEN, HMB_BROKEN_BAD_MAGIC},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    TestArea area(64 * 1024);
    std::mt19937 rng(3);
    for (uint64_t i = 0; i < area.len(); i++)
      area.mem()[i] = k.fill < 0 ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(k.fill);
    if (k.fill < 0) reinterpret_cast<hmb_trace_meta*>(area.mem())->state |= 2;  // not INIT
    TestSink sink;
    TestConsumer consumer(area, &sink);
    EXPECT_EQ(hmb_consumer_poll(consumer.get()), k.state);
    EXPECT_EQ(hmb_consumer_poll(consumer.get()), k.state);
    EXPECT_EQ(consumer.get()->broken_reason, k.reason);
    EXPECT_EQ(consumer.get()->errors[HMB_ERR_BAD_MAGIC],
              k.state == HMB_CONSUMER_BROKEN ? 1u : 0u);  // once, not per poll
    EXPECT_EQ(Count(sink.events, HMB_TRACE_EV_BROKEN), k.state == HMB_CONSUMER_BROKEN ? 1u : 0u);
  }
  // An area that was read, then wiped to zeros: not "not started" any more
  // (a re-initialisation keeps the magic); resumed when it comes back.
  {
    SCOPED_TRACE("attached, then all zero, then back");
    Rig r(4096, 4, 1);
    r.Emit(0, 5);
    EXPECT_EQ(r.consumer.DrainAll(), 5u);
    std::vector<uint8_t> saved(r.area.mem(), r.area.mem() + r.area.len());
    std::memset(r.area.mem(), 0, r.area.len());
    EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_BROKEN);
    EXPECT_EQ(r.consumer.get()->broken_reason, HMB_BROKEN_BAD_MAGIC);
    std::memcpy(r.area.mem(), saved.data(), saved.size());
    r.Emit(0, 4);
    EXPECT_EQ(r.consumer.DrainAll(), 4u);  // resumed, nothing again
    EXPECT_EQ(r.consumer.get()->state, HMB_CONSUMER_ATTACHED);
    ExpectExact(r, 0, 0);
  }
  // A trace area of another ABI major, READY.
  Rig r(4096, 4, 1);
  Meta(r)->abi_major = 2;
  EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_BROKEN);
  EXPECT_EQ(r.consumer.get()->broken_reason, HMB_BROKEN_BAD_ABI);
  EXPECT_STREQ(hmb_consumer_broken_reason_name(r.consumer.get()->broken_reason),
               "bad_abi_version");
  // The firmware then writes a good area: attached, reason cleared.
  Meta(r)->abi_major = HMB_TRACE_ABI_MAJOR;
  r.Emit(0, 3);
  EXPECT_EQ(r.consumer.DrainAll(), 3u);
  EXPECT_EQ(r.consumer.get()->broken_reason, HMB_BROKEN_NONE);
}

// ---- The time bound: no charge beyond what the producer can have written ----
// With a clock and max_rate, a gap larger than a ring plus max_rate x the
// time since the core's last confirmed position is implausible: counted,
// never charged, and honest pages keep coming.

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kRate = 1000000;  // records per second per core

// Emits `n` records on core 0 a page at a time, 1 ms apart, draining after
// each: the consumer keeps up and has just confirmed its position.
void KeepUp(Rig& r, uint64_t n) {
  const uint32_t pp = r.RecordsPerPage(0);
  for (uint64_t done = 0; done < n;) {
    const uint64_t step = std::min<uint64_t>(pp, n - done);
    r.Tick(kMs);
    r.Emit(0, step);
    r.consumer.DrainAll();
    done += step;
  }
}

// Page 6 (ring slot 2) and the head hint both claim 2^40 pages and records
// more; the consumer's position was confirmed 1 ms before.
void LieTwoToTheFortyAhead(Rig& r) {
  auto* h = Header(r, 0, 2);
  ASSERT_EQ(h->page_seq, 6u);
  h->page_seq += 1ull << 40;
  h->first_seq += 1ull << 40;
  CoreDesc(r, 0)->head_page += 1ull << 40;
}

TEST(ConsumerTimeBound, ConsistentLieBeyondTheClockIsCountedNotChargedAndHonestPagesGoOn) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Clock(kRate);
  r.sink.keep_seqs = true;
  KeepUp(r, 5 * pp + 1);  // the ring lapped once; page 5 open, all read
  r.Tick(kMs);
  r.Emit(0, pp);  // page 5 closed, page 6 open in slot 2
  LieTwoToTheFortyAhead(r);
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  const uint64_t cap = hmb_consumer_capacity(&r.consumer.get()->geo);
  // Without the bound: 1518 invalid + 1099511626258 overwritten.
  for (uint64_t l : k.lost) EXPECT_EQ(l, 0u);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(Count(r.sink.events, HMB_TRACE_EV_IMPLAUSIBLE), 1u);
  EXPECT_EQ(k.last_seq, 6u * pp - 1);
  // The producer goes on with its own numbers: page 6's records are lost
  // (the page was skipped), every later one is delivered.
  r.Tick(kMs);
  r.Emit(0, 3 * pp);
  r.consumer.DrainAll();
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);
  EXPECT_EQ(k.lost[HMB_LOST_INVALID], pp);
  for (uint64_t l : k.lost) EXPECT_LE(l, cap);
  ExpectExact(r, 0, pp);
  ExpectNoRepeats(k.seqs);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
}

TEST(ConsumerTimeBound, FirstSeqBeyondTheClockAfterAPlausibleLapIsNotCharged) {
  // The page numbers move two laps (within the clock's bound), first_seq
  // more than the clock allows (and no more than those pages could hold).
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Clock(kRate);
  r.sink.keep_seqs = true;
  KeepUp(r, 5 * pp + 1);
  r.Tick(kMs);
  r.Emit(0, pp);
  auto* h = Header(r, 0, 2);
  const uint64_t cap = hmb_consumer_capacity(&r.consumer.get()->geo);
  h->page_seq += 8;
  h->first_seq += cap + kRate / 1000 + 1000;  // beyond 1 ms at kRate
  CoreDesc(r, 0)->head_page += 8;
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  for (uint64_t l : k.lost) EXPECT_EQ(l, 0u);  // was 1518 + 2546
  EXPECT_GE(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  for (int i = 0; i < 3; i++) {
    r.Tick(kMs);
    r.Emit(0, pp);
    r.consumer.DrainAll();
  }
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);
  ExpectExact(r, 0, pp);  // page 6, skipped
  EXPECT_EQ(k.lost[HMB_LOST_INVALID], pp);
  ExpectNoRepeats(k.seqs);
}

TEST(ConsumerTimeBound, FirmwareCounterJumpIsFollowedAfterARingAndNeverCharged) {
  // The firmware's own page and record counters jump by 2^40 (a torn
  // store) and it carries on from there: every later page claims as much.
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Clock(kRate);
  r.sink.keep_seqs = true;
  KeepUp(r, 6 * pp);  // page 5 full, all read
  r.p.core[0].page_seq += 1ull << 40;
  r.p.core[0].next_seq += 1ull << 40;
  r.produced[0] += 1ull << 40;
  const uint64_t before = r.sink.core[0].delivered;
  KeepUp(r, 6 * pp);  // a ring and a half in the new numbering
  const auto& k = r.sink.core[0];
  for (uint64_t l : k.lost) EXPECT_EQ(l, 0u);  // was 2^40 overwritten
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(Count(r.sink.events, HMB_TRACE_EV_IMPLAUSIBLE), 1u);
  // Followed once its pages spanned the ring: nothing of it is lost.
  EXPECT_EQ(k.delivered - before, 6u * pp);
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);
  EXPECT_EQ(k.bad_payload, 0u);
  ExpectNoRepeats(k.seqs);
}

TEST(ConsumerTimeBound, ProducerFasterThanMaxRateIsFollowedAndWhatWasSeenIsCharged) {
  // A max_rate set too low looks like a jump: flagged, followed after a
  // ring; of the old position, the records the consumer saw and had not
  // delivered yet are charged, not the whole gap (found by consumer_fuzz).
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Clock(kRate);
  r.sink.keep_seqs = true;
  r.Emit(0, 10);
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  ASSERT_EQ(hmb_consumer_drain_core(r.consumer.get(), 0, 1), 1u);  // 9 seen, unread
  r.Tick(1000);                 // 1 us: one record at kRate
  r.Emit(0, 20 * 4 * pp);       // 20 laps
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(k.lost[HMB_LOST_OVERWRITTEN], 9u);  // without the bound: 12935
  EXPECT_EQ(r.sink.LostTotal(0), 9u);
  EXPECT_EQ(k.last_seq, r.produced[0] - 1);
  EXPECT_EQ(k.delivered, 1u + 3 * pp + 10);  // record 0, then the whole ring
  ExpectNoRepeats(k.seqs);
  EXPECT_EQ(k.bad_payload, 0u);
}

TEST(ConsumerTimeBound, HonestProducerLappingAtTheRateIsChargedExactlyAsWithoutAClock) {
  // Many laps between drains, each exactly as many records as max_rate
  // allows in the time that passed: the same charges as with no clock.
  std::vector<uint64_t> lost[2], lost_at[2];
  for (int timed = 0; timed < 2; timed++) {
    Rig r(4096, 4, 1);
    const uint32_t pp = r.RecordsPerPage(0);
    if (timed) r.Clock(kRate);
    r.Emit(0, 3);
    r.consumer.DrainAll();
    for (uint64_t laps = 1; laps <= 40; laps++) {
      const uint64_t ms = laps * 4 * pp / (kRate / 1000) + 1;
      r.Tick(ms * kMs);
      r.Emit(0, ms * (kRate / 1000));  // exactly kRate
      // Half-way through a ring, with a budget of one record: a position
      // confirmed while the producer is far ahead.
      hmb_consumer_poll(r.consumer.get());
      hmb_consumer_drain_core(r.consumer.get(), 0, 1);
      r.Tick(ms * kMs);
      r.Emit(0, ms * (kRate / 1000));
      r.consumer.DrainAll();
    }
    ExpectExact(r, 0, r.sink.core[0].lost[HMB_LOST_OVERWRITTEN]);
    EXPECT_GT(r.sink.core[0].lost[HMB_LOST_OVERWRITTEN], 0u);
    for (int e = 0; e < HMB_ERR_NR; e++)
      EXPECT_EQ(r.consumer.get()->errors[e], 0u)
          << hmb_consumer_error_name(static_cast<hmb_consumer_error>(e));
    lost[timed].assign(std::begin(r.sink.core[0].lost), std::end(r.sink.core[0].lost));
    lost_at[timed] = r.sink.core[0].lost_at;
  }
  EXPECT_EQ(lost[1], lost[0]);
  EXPECT_EQ(lost_at[1], lost_at[0]);
}

TEST(ConsumerTimeBound, ResetSeenLateIsBoundedFromTheLastPollOfTheOldGeneration) {
  Rig r(4096, 4, 1);
  const uint32_t pp = r.RecordsPerPage(0);
  r.Clock(kRate);
  r.Emit(0, 10);
  r.consumer.DrainAll();
  r.Tick(100 * kMs);
  EXPECT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);  // old gen
  // The firmware resets just after that poll and writes for 50 ms at
  // kRate before the next poll: many laps, all honest.
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.produced[0] = 0;
  r.Tick(50 * kMs);
  r.Emit(0, 50 * (kRate / 1000));
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->resets, 1u);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 0u);
  EXPECT_EQ(r.sink.core[0].last_seq, r.produced[0] - 1);
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_OVERWRITTEN],
            r.produced[0] - r.sink.core[0].delivered + 10);
  // Another reset; 1 ms later page 2 of the new generation and the head
  // hint claim 2^40 pages and records more.
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.produced[0] = 0;
  r.Tick(kMs);
  r.Emit(0, 4 * pp + 1);  // pages 1..4 in the ring, page 0 overwritten
  Header(r, 0, 2)->page_seq += 1ull << 40;
  Header(r, 0, 2)->first_seq += 1ull << 40;
  CoreDesc(r, 0)->head_page += 1ull << 40;
  const uint64_t invalid_before = r.sink.core[0].lost[HMB_LOST_INVALID];
  const uint64_t overwritten_before = r.sink.core[0].lost[HMB_LOST_OVERWRITTEN];
  r.consumer.DrainAll();
  EXPECT_EQ(r.consumer.get()->resets, 2u);
  // Page 0 was overwritten, page 2 skipped: was 2^40 - 1518 overwritten.
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_OVERWRITTEN], overwritten_before + pp);
  EXPECT_EQ(r.sink.core[0].lost[HMB_LOST_INVALID], invalid_before + pp);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(r.sink.core[0].last_seq, r.produced[0] - 1);
}

TEST(ConsumerTimeBound, AResetTailOfSeveralRingsIsChargedResetAndOverwritten) {
  Rig r(4096, 4, 1);
  r.Clock(kRate);
  r.Emit(0, 100, 8);
  r.consumer.DrainAll();
  const uint64_t cap = hmb_consumer_capacity(&r.consumer.get()->geo);
  ASSERT_EQ(cap, 4u * (4096 - 48) / 8);
  // The reader looks away for a second; the firmware writes 5 rings' worth
  // of the smallest records, then resets.
  r.Tick(1000 * kMs);
  r.Emit(0, 5 * cap);
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.consumer.DrainAll();
  const auto& k = r.sink.core[0];
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 0u);
  EXPECT_EQ(r.consumer.get()->reset_refused, 0u);
  EXPECT_EQ(r.consumer.get()->reset_uncountable, 0u);
  // The last ring's worth to reset, the older rest to overwritten, in order.
  EXPECT_EQ(k.lost[HMB_LOST_RESET], cap);
  EXPECT_EQ(k.lost[HMB_LOST_OVERWRITTEN], 4 * cap);
  ASSERT_EQ(k.lost_at.size(), 2u);
  EXPECT_EQ(k.lost_at[0], 100 + 4 * cap);
  EXPECT_EQ(k.lost_at[1], 100 + 5 * cap);
  EXPECT_EQ(k.delivered + r.sink.LostTotal(0), 100 + 5 * cap);
}

TEST(ConsumerTimeBound, AFlightRecorderThatNeverDrainedCountsTheResetTail) {
  Rig r(4096, 4, 2);
  r.Clock(kRate);
  r.Emit(0, 30, 8);  // before the attach: a backlog the hint tells
  // Events off: the owner polls the meta page and drains nothing.
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  const uint64_t cap = hmb_consumer_capacity(&r.consumer.get()->geo);
  r.Tick(500 * kMs);
  r.Emit(0, 6 * cap);
  r.Emit(1, 3 * cap);
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.Tick(kMs);
  r.consumer.DrainAll();
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 0u);
  for (uint16_t k = 0; k < 2; k++) {
    EXPECT_EQ(r.sink.core[k].delivered, 0u);
    EXPECT_EQ(r.sink.core[k].lost[HMB_LOST_RESET], cap) << "core " << k;
    EXPECT_EQ(r.sink.LostTotal(k), r.produced[k]) << "core " << k;
  }
}

TEST(ConsumerTimeBound, AResetTailBeyondTheClockIsImplausibleNotCharged) {
  Rig r(4096, 4, 1);
  r.Clock(kRate);
  r.Emit(0, 100, 8);
  r.consumer.DrainAll();
  r.Emit(0, 37, 8);  // never read: the firmware resets first
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  // 1 ms after the last look, prev_next_seq 2^32 ahead: no producer at
  // kRate gets there.
  CoreDesc(r, 0)->prev_next_seq += 1ull << 32;
  r.Tick(kMs);
  r.consumer.DrainAll();
  EXPECT_EQ(r.sink.LostTotal(0), 0u);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 1u);
  EXPECT_EQ(r.consumer.get()->reset_refused, 1u);
  EXPECT_EQ(r.sink.core[0].delivered, 100u);
}

TEST(ConsumerTimeBound, AResetThatForgotTheCountsIsUncountableNotCharged) {
  Rig r(4096, 4, 2);
  r.Clock(kRate);
  r.Emit(0, 50, 8);
  r.Emit(1, 50, 8);
  r.consumer.DrainAll();
  r.Emit(0, 20, 8);
  r.cfg.prev_unknown = 1;  // a cold boot: prev_gen 0
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  r.consumer.DrainAll();
  EXPECT_EQ(r.sink.LostTotal(0), 0u);
  EXPECT_EQ(r.consumer.get()->reset_uncountable, 3u);
  EXPECT_EQ(r.consumer.get()->reset_refused, 0u);
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 0u);
}

TEST(ConsumerTimeBound, ABacklogFromBeforeTheFirstAttachIsNotBoundedByTheClock) {
  // The producer ran before the consumer first looked: how long is
  // unknown, so its backlog is charged as overwritten, not implausible.
  Rig r(4096, 4, 1);
  r.Clock(kRate);
  r.Emit(0, 200000);
  r.consumer.DrainAll();
  EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 0u);
  ExpectExact(r, 0, r.sink.core[0].lost[HMB_LOST_OVERWRITTEN]);
  EXPECT_GT(r.sink.core[0].lost[HMB_LOST_OVERWRITTEN], 190000u);
  // Had a poll seen the area not started yet, the clock bounds it.
  Rig s(4096, 4, 1);
  s.Clock(kRate);
  Meta(s)->state = HMB_TRACE_STATE_INIT;
  EXPECT_EQ(hmb_consumer_poll(s.consumer.get()), HMB_CONSUMER_DETACHED);
  Meta(s)->state = HMB_TRACE_STATE_READY;
  s.Tick(kMs);
  s.Emit(0, 3 * s.RecordsPerPage(0));
  Header(s, 0, 2)->page_seq += 1ull << 40;
  Header(s, 0, 2)->first_seq += 1ull << 40;
  CoreDesc(s, 0)->head_page += 1ull << 40;
  s.consumer.DrainAll();
  EXPECT_EQ(s.sink.LostTotal(0), 0u);
  EXPECT_EQ(Errors(s, HMB_ERR_IMPLAUSIBLE), 1u);
}

TEST(ConsumerTimeBound, WithoutAClockOrARateThereIsNoTimeBound) {
  // The bound is the owner's choice: no now_ns, or max_rate 0, and the
  // consumer charges what the ring and sequence checks allow, as before.
  for (int which = 0; which < 2; which++) {
    SCOPED_TRACE(which ? "max_rate 0" : "now_ns NULL");
    Rig r(4096, 4, 1);
    const uint32_t pp = r.RecordsPerPage(0);
    if (which) {
      r.Clock(0);
    } else {
      r.consumer.get()->max_rate = 1;
    }
    KeepUp(r, 5 * pp + 1);
    r.Tick(kMs);
    r.Emit(0, pp);
    LieTwoToTheFortyAhead(r);
    r.consumer.DrainAll();
    EXPECT_EQ(Errors(r, HMB_ERR_IMPLAUSIBLE), 0u);
    EXPECT_EQ(r.sink.LostTotal(0), 1ull << 40);
    EXPECT_EQ(r.sink.clock_reads, 0u);
  }
}


// ---- A generation that ended (hmb_consumer_read_ended: a crash dump of a
// firmware's own restart) ----

// The firmware re-initialises its area (meta page INIT of the same
// generation) with records nobody read: a copy of the consumer reads them
// to the ring's end; the consumer it copied stays where it was.
TEST(ConsumerReadEnded, ARestartUnderWayIsReadToTheRingsEnd) {
  Rig r(4096, 4, 1);
  r.sink.keep_seqs = true;
  r.Emit(0, 50, 8);
  ASSERT_EQ(r.consumer.DrainAll(), 50u);
  r.Emit(0, 30, 8);  // not read: the firmware asserts and restarts
  reinterpret_cast<hmb_trace_meta*>(r.area.mem())->state = HMB_TRACE_STATE_INIT;
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_PRODUCER_INIT);
  hmb_consumer copy = *r.consumer.get();
  ASSERT_EQ(hmb_consumer_read_ended(&copy, 1), 0);
  EXPECT_EQ(hmb_consumer_drain_core(&copy, 0, 4096), 30u);
  EXPECT_EQ(r.sink.core[0].delivered, 80u);
  EXPECT_EQ(r.sink.core[0].last_seq, 79u);
  ExpectNoRepeats(r.sink.core[0].seqs);
  EXPECT_EQ(r.sink.LostTotal(0), 0u);
  // The live consumer did not move: it still waits for the new generation.
  EXPECT_EQ(r.consumer.get()->state, HMB_CONSUMER_PRODUCER_INIT);
  EXPECT_EQ(r.consumer.get()->ended, 0u);
}

// The new generation is up and the consumer took the reset: the copy goes
// back to where each core stood in the ended generation. The new
// generation invalidated those pages, so nothing of the old life comes
// twice and nothing of the new life is delivered as the old.
TEST(ConsumerReadEnded, AfterTheNewGenerationNothingComesTwice) {
  Rig r(4096, 4, 1);
  r.sink.keep_seqs = true;
  r.Emit(0, 50, 8);
  ASSERT_EQ(r.consumer.DrainAll(), 50u);
  r.Emit(0, 30, 8);
  ASSERT_EQ(hmb_trace_producer_init(&r.p, r.area.mem(), r.area.len(), &r.cfg), 0);
  ASSERT_EQ(hmb_consumer_poll(r.consumer.get()), HMB_CONSUMER_ATTACHED);
  ASSERT_EQ(r.consumer.get()->geo.producer_gen, 2u);
  hmb_consumer copy = *r.consumer.get();
  ASSERT_EQ(hmb_consumer_read_ended(&copy, 1), 0);
  EXPECT_EQ(copy.geo.producer_gen, 1u);
  const uint64_t before = r.sink.core[0].delivered;
  hmb_consumer_drain_core(&copy, 0, 4096);
  EXPECT_LE(r.sink.core[0].delivered - before, 30u);
  ExpectNoRepeats(r.sink.core[0].seqs);
  EXPECT_LT(r.sink.core[0].seqs.back(), 80u);
  EXPECT_EQ(r.consumer.get()->geo.producer_gen, 2u);
}

TEST(ConsumerReadEnded, AGenerationWithNoPositionIsRefused) {
  Rig r(4096, 4, 1);
  hmb_consumer never = *r.consumer.get();
  EXPECT_EQ(hmb_consumer_read_ended(&never, 1), -1);  // never attached
  r.Emit(0, 10, 8);
  ASSERT_EQ(r.consumer.DrainAll(), 10u);
  hmb_consumer copy = *r.consumer.get();
  EXPECT_EQ(hmb_consumer_read_ended(&copy, 7), -1);  // not a generation it read
  EXPECT_EQ(hmb_consumer_read_ended(&copy, 0), -1);
}

}  // namespace
}  // namespace hmbtrace::testing
