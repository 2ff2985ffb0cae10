// SPDX-License-Identifier: GPL-2.0-only
// The model test of the consumer's accounting: the reference producer and the
// consumer core in one thread, driven by a seeded random schedule, against
// the invariant the whole trace rests on. Per core and producer generation:
//
//   no record is delivered twice, and none is skipped without a charge;
//   where the old generation's tail is countable, delivered + lost (by
//   reason) == produced, exactly; where it is not (prev_gen 0, a generation
//   missed between two polls, a core gone), the consumer says so and
//   delivered + lost <= produced.
//
// The schedule: the producer at random rates with bursts of up to several
// rings, firmware resets with and without prev_next_seq, geometry changes
// between generations (page size, ring length, number of cores), two resets
// between polls; a reader with random poll gaps (none to many ring laps),
// random budgets and random refusals, with the time bound on or off. The
// producer is honest: the fake clock advances by at least what its rate
// needs, so with the time bound no claim may be refused. Without it, a
// reset tail beyond a ring is refused (the documented fallback), and only
// then.
//
// HMB_MODEL_SEEDS sets the number of seeds (default 1000), HMB_MODEL_SEED
// runs one seed; a failure prints its seed.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hmb_consumer.h"
#include "hmb_trace_producer.h"
#include "test_area.h"

extern "C" {
void (*hmb_consumer_after_copy)(const hmb_consumer* c, uint16_t core) = nullptr;
void (*hmb_consumer_before_recheck)(const hmb_consumer* c, uint16_t core) = nullptr;
}

namespace hmbtrace::testing {
namespace {

constexpr uint64_t kMaxRate = 2000000;  // records/s per core the consumer is told

// What one core did in one producer generation: the producer's truth and
// what the consumer reported of it.
struct CoreLife {
  uint64_t produced = 0;
  uint64_t delivered = 0;
  std::array<uint64_t, HMB_LOST_NR> lost{};
  uint64_t next = 0;      // the sequence the reports must go on from
  uint64_t breaks = 0;    // a delivery or a charge not where the last one ended
  bool uncountable = false;
  bool refused = false;
  bool charged = false;   // a loss was reported (delivered or charged: confirmed)
  uint64_t Seen() const {
    uint64_t n = delivered;
    for (uint64_t l : lost) n += l;
    return n;
  }
};

struct Life {
  uint32_t gen = 0;
  uint16_t nr_cores = 0;
  uint64_t capacity = 0;      // hmb_consumer_capacity() of its geometry
  bool seen = false;          // the consumer attached to it or saw its reset
  bool first_seen = false;    // the first generation the consumer attached to
  bool ended_seen = false;    // its end was a reset the consumer saw
  bool prev_published = true; // the next generation's meta page says how far it got
  uint32_t next_gen = 0;      // the generation the consumer saw it reset to
  std::array<CoreLife, HMB_TRACE_MAX_CORES> core{};
};

// The consumer's callbacks, filed under the generation they belong to.
struct ModelSink {
  std::map<uint32_t, Life>* lives = nullptr;
  hmb_consumer* consumer = nullptr;
  uint32_t gen = 0;  // the generation the consumer reads
  uint32_t refuse_one_in = 0;
  std::mt19937_64* rng = nullptr;
  uint64_t refused_calls = 0;

  CoreLife& At(uint16_t core) { return (*lives)[gen].core[core]; }
  static uint64_t Now(void* ctx);
  static int Deliver(void* ctx, const hmb_record* r) {
    auto* s = static_cast<ModelSink*>(ctx);
    if (s->refuse_one_in && (*s->rng)() % s->refuse_one_in == 0) {
      s->refused_calls++;
      return HMB_DELIVER_REFUSED;
    }
    CoreLife& c = s->At(r->core);
    if (r->seq != c.next || !TestSink::PayloadOk(*r)) c.breaks++;
    c.next = r->seq + 1;
    c.delivered++;
    return HMB_DELIVER_OK;
  }
  static void Lost(void* ctx, uint16_t core, uint64_t n, hmb_lost_reason reason, uint64_t at) {
    auto* s = static_cast<ModelSink*>(ctx);
    CoreLife& c = s->At(core);
    // A gap may come in several reports (torn, invalid, overwritten) that
    // all name the record after it; together they end there.
    c.next += n;
    if (c.next > at) c.breaks++;
    c.lost[reason] += n;
    c.charged = true;
  }
  static void Event(void* ctx, hmb_trace_ev_state ev, uint32_t gen) {
    auto* s = static_cast<ModelSink*>(ctx);
    if (ev == HMB_TRACE_EV_RESET) {
      Life& old = (*s->lives)[s->gen];
      old.ended_seen = true;
      old.next_gen = gen;
      for (uint16_t k = 0; k < old.nr_cores; k++) {
        old.core[k].uncountable = s->consumer->reset_uncountable >> k & 1;
        old.core[k].refused = s->consumer->reset_refused >> k & 1;
      }
    }
    if (ev == HMB_TRACE_EV_RESET || ev == HMB_TRACE_EV_ATTACHED) {
      if (s->gen == 0) (*s->lives)[gen].first_seen = true;
      s->gen = gen;
      (*s->lives)[gen].seen = true;
    }
  }
};

struct Clock {
  uint64_t ns = 1000000000;
};
Clock* g_clock = nullptr;
uint64_t ModelSink::Now(void*) { return g_clock->ns; }

// Figures over every seed, printed once.
struct Totals {
  uint64_t records = 0, resets = 0, resets_without_prev = 0, missed = 0, geometry = 0;
  uint64_t lapped_tails = 0, refused_tails = 0, refusals = 0;
};

class Model {
 public:
  Model(uint64_t seed, Totals* totals) : rng_(seed), totals_(totals) {
    g_clock = &clock_;
    timed_ = rng_() % 4 != 0;  // the time bound on in 3 of 4 seeds
    cfg_ = RandomConfig();
    // Room for the largest geometry any generation picks.
    hmb_trace_producer_config big = TestConfig(4096, 8, 4);
    area_ = std::make_unique<TestArea>(hmb_trace_area_size(&big));
    EXPECT_EQ(hmb_trace_producer_init(&p_, area_->mem(), area_->len(), &cfg_), 0);
    NewLife();
    sink_.lives = &lives_;
    sink_.rng = &rng_;
    sink_.refuse_one_in = rng_() % 3 ? 0 : 2 + rng_() % 30;
    hmb_area a = area_->area();
    hmb_consumer_ops ops{ModelSink::Deliver, ModelSink::Lost, ModelSink::Event};
    hmb_consumer_init(&c_, &a, &ops, &sink_, scratch_.data());
    sink_.consumer = &c_;
    if (timed_) {
      c_.now_ns = ModelSink::Now;
      c_.max_rate = kMaxRate;
    }
  }

  void Run() {
    const int steps = 20 + static_cast<int>(rng_() % 60);
    for (int i = 0; i < steps; i++) {
      const uint64_t what = rng_() % 100;
      if (what < 55)
        Produce();
      else if (what < 90)
        Read();
      else
        Reset(rng_() % 4 == 0);  // sometimes twice before the reader looks
    }
    // The end: the reader catches up with the last generation.
    for (int i = 0; i < 100 && Read(true); i++) {
    }
    Close();
  }

  // Checks the invariant on every generation. Returns what went wrong.
  std::string Check() const {
    std::string err;
    for (const auto& [gen, life] : lives_) {
      for (uint16_t k = 0; k < life.nr_cores; k++) {
        const CoreLife& c = life.core[k];
        const std::string where =
            "gen " + std::to_string(gen) + " core " + std::to_string(k) + ": ";
        const uint64_t seen = c.Seen();
        if (c.breaks) err += where + std::to_string(c.breaks) + " reports out of sequence\n";
        if (seen > c.produced)
          err += where + "delivered + lost " + std::to_string(seen) + " > produced " +
                 std::to_string(c.produced) + "\n";
        if (!life.seen) {
          if (seen) err += where + "reports for a generation never seen\n";
          continue;
        }
        // Countable: the reader read to the end, or saw the reset and the
        // next meta page said how far the core got.
        const bool last = gen == p_.producer_gen;
        const bool countable = last || (life.ended_seen && !c.uncountable);
        if (c.refused) {
          // Only without the time bound, only beyond a ring.
          if (timed_)
            err += where + "an honest tail refused under the time bound\n";
          if (c.produced - seen <= life.capacity)
            err += where + "a tail within a ring refused\n";
          continue;
        }
        if (c.lost[HMB_LOST_RESET] > life.capacity)
          err += where + "more charged to reset (" + std::to_string(c.lost[HMB_LOST_RESET]) +
                 ") than the ring could hold (" + std::to_string(life.capacity) + ")\n";
        if (countable && seen != c.produced)
          err += where + "delivered + lost " + std::to_string(seen) + " != produced " +
                 std::to_string(c.produced) + "\n";
        // Whether the reset the consumer saw says how far the core got:
        // the very next generation, published, with the core in it.
        const bool published = life.next_gen == gen + 1 && life.prev_published &&
                               k < NextCores(gen);
        if (!last && life.ended_seen && c.uncountable == published)
          err += where + (published ? "tail called uncountable though the firmware published it\n"
                                    : "tail counted though the firmware did not publish it\n");
      }
    }
    return err;
  }

 private:
  hmb_trace_producer_config RandomConfig() {
    static constexpr uint32_t kPages[] = {512, 1024, 4096};
    const uint32_t page = kPages[rng_() % 3];
    const uint32_t ppc = 2 + static_cast<uint32_t>(rng_() % 7);
    const uint16_t cores = static_cast<uint16_t>(1 + rng_() % 4);
    return TestConfig(page, ppc, cores);
  }

  void NewLife() {
    Life& l = lives_[p_.producer_gen];
    l.gen = p_.producer_gen;
    l.nr_cores = p_.nr_cores;
    hmb_geometry g{};
    g.pages_per_core = p_.pages_per_core;
    g.data_size = p_.page_size - static_cast<uint32_t>(sizeof(hmb_trace_page_header));
    l.capacity = hmb_consumer_capacity(&g);
  }

  uint16_t NextCores(uint32_t gen) const {
    auto it = lives_.find(gen + 1);
    return it == lives_.end() ? 0 : it->second.nr_cores;
  }

  // One core writes: a few records, a page, or a burst of several rings, at
  // a random rate no higher than the one the consumer is told.
  void Produce() {
    const uint16_t k = static_cast<uint16_t>(rng_() % p_.nr_cores);
    const uint64_t ring = lives_[p_.producer_gen].capacity / 4;  // ~ records of 24-40 B
    uint64_t n;
    switch (rng_() % 4) {
      case 0: n = rng_() % 8; break;
      case 1: n = rng_() % (ring / p_.pages_per_core + 1); break;
      case 2: n = rng_() % (ring + 1); break;
      default: n = ring + rng_() % (6 * ring + 1); break;  // laps the ring
    }
    const uint64_t rate = kMaxRate / (1 + rng_() % 1000);
    CoreLife& c = lives_[p_.producer_gen].core[k];
    for (uint64_t i = 0; i < n; i++) {
      const uint16_t var = static_cast<uint16_t>(rng_() % 24);
      ASSERT_EQ(EmitTestRecord(&p_, k, c.produced, var, ts_++), 0);
      c.produced++;
    }
    totals_->records += n;
    clock_.ns += (n * 1000000000 + rate - 1) / rate + rng_() % 1000000;
  }

  // The reader: a poll, then drains with random budgets. Returns whether
  // anything was delivered or charged (for the final catch-up).
  bool Read(bool all = false) {
    clock_.ns += rng_() % 100000;
    const uint64_t before = Progress();
    if (hmb_consumer_poll(&c_) != HMB_CONSUMER_ATTACHED) return false;
    const int rounds = all ? 50 : 1 + static_cast<int>(rng_() % 3);
    for (int r = 0; r < rounds; r++)
      for (uint16_t k = 0; k < c_.geo.nr_cores; k++)
        hmb_consumer_drain_core(&c_, k, all ? 4096 : 1 + static_cast<uint32_t>(rng_() % 300));
    return Progress() != before;
  }

  uint64_t Progress() const {
    uint64_t n = 0;
    for (const auto& [gen, life] : lives_)
      for (uint16_t k = 0; k < life.nr_cores; k++) n += life.core[k].Seen();
    return n;
  }

  // A firmware reset, maybe with another geometry, maybe without the old
  // generation's counts; |twice|: another right after, unseen between.
  void Reset(bool twice) {
    for (int i = 0; i < (twice ? 2 : 1); i++) {
      const bool forget = rng_() % 4 == 0;
      hmb_trace_producer_config next = rng_() % 3 ? cfg_ : RandomConfig();
      if (next.page_size != cfg_.page_size || next.pages_per_core != cfg_.pages_per_core ||
          next.nr_cores != cfg_.nr_cores)
        totals_->geometry++;
      cfg_ = next;
      cfg_.prev_unknown = forget;
      lives_[p_.producer_gen].prev_published = !forget;
      ASSERT_EQ(hmb_trace_producer_init(&p_, area_->mem(), area_->len(), &cfg_), 0);
      NewLife();
      totals_->resets++;
      totals_->resets_without_prev += forget;
      clock_.ns += rng_() % 1000000;
    }
    totals_->missed += twice;
  }

  void Close() {
    totals_->refusals += sink_.refused_calls;
    for (const auto& [gen, life] : lives_)
      for (uint16_t k = 0; k < life.nr_cores; k++) {
        totals_->refused_tails += life.core[k].refused;
        totals_->lapped_tails += life.core[k].lost[HMB_LOST_RESET] && life.core[k].lost[HMB_LOST_OVERWRITTEN] &&
                                 life.ended_seen;
      }
  }

  std::mt19937_64 rng_;
  Totals* totals_;
  Clock clock_;
  bool timed_ = false;
  hmb_trace_producer_config cfg_{};
  std::unique_ptr<TestArea> area_;
  hmb_trace_producer p_{};
  std::map<uint32_t, Life> lives_;
  ModelSink sink_;
  std::array<uint8_t, HMB_CONSUMER_SCRATCH_LEN> scratch_{};
  hmb_consumer c_{};
  uint64_t ts_ = 1000;
};

uint64_t EnvNumber(const char* name, uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

TEST(ConsumerModel, EveryRecordOfAnHonestFirmwareIsDeliveredOrChargedAtAnyReaderLag) {
  Totals t;
  const char* one = std::getenv("HMB_MODEL_SEED");
  const uint64_t first = one ? EnvNumber("HMB_MODEL_SEED", 0) : 1;
  const uint64_t seeds = one ? 1 : EnvNumber("HMB_MODEL_SEEDS", 1000);
  uint64_t failed = 0;
  for (uint64_t seed = first; seed < first + seeds; seed++) {
    Model m(seed, &t);
    m.Run();
    const std::string err = m.Check();
    if (!err.empty()) {
      failed++;
      if (failed <= 5)
        ADD_FAILURE() << "seed " << seed << " (rerun: HMB_MODEL_SEED=" << seed << "):\n" << err;
    }
  }
  EXPECT_EQ(failed, 0u) << "of " << seeds << " seeds";
  std::printf(
      "model: %llu seeds, %llu records, %llu resets (%llu without prev_next_seq, %llu with "
      "another geometry, %llu twice between polls), %llu reset tails longer than a ring "
      "charged, %llu refused without the time bound, %llu deliveries refused\n",
      static_cast<unsigned long long>(seeds), static_cast<unsigned long long>(t.records),
      static_cast<unsigned long long>(t.resets),
      static_cast<unsigned long long>(t.resets_without_prev),
      static_cast<unsigned long long>(t.geometry), static_cast<unsigned long long>(t.missed),
      static_cast<unsigned long long>(t.lapped_tails),
      static_cast<unsigned long long>(t.refused_tails),
      static_cast<unsigned long long>(t.refusals));
  EXPECT_GT(t.lapped_tails, 0u) << "the schedule never produced a tail longer than a ring";
}

}  // namespace
}  // namespace hmbtrace::testing
