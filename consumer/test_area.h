// SPDX-License-Identifier: GPL-2.0-only
// Test fixtures shared by the consumer's unit tests, benchmark and fuzzer:
// an in-memory trace area written by the real producer, and a record sink
// that checks every delivered payload against what the producer wrote.
#ifndef HMBTRACE_CONSUMER_TEST_AREA_H_
#define HMBTRACE_CONSUMER_TEST_AREA_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "hmb_consumer.h"
#include "hmb_trace_producer.h"

namespace hmbtrace::testing {

inline constexpr uint32_t kHostPageShift = 12;
inline constexpr uint32_t kHostPage = 1u << kHostPageShift;

// A page-aligned, zeroed buffer standing in for the HMB trace area, and the
// host page table the consumer reads it through.
class TestArea {
 public:
  // The area need not be a whole number of host pages (small ABI pages);
  // the mapping is, as a device BAR or an HMB chunk would be.
  explicit TestArea(uint64_t len) : len_(len) {
    const uint64_t mapped = (len + kHostPage - 1) & ~uint64_t{kHostPage - 1};
    mem_ = static_cast<uint8_t*>(std::aligned_alloc(kHostPage, mapped));
    std::memset(mem_, 0, mapped);
    for (uint64_t off = 0; off < mapped; off += kHostPage)
      pages_.push_back(mem_ + off);
  }
  ~TestArea() { std::free(mem_); }
  TestArea(const TestArea&) = delete;
  TestArea& operator=(const TestArea&) = delete;

  uint8_t* mem() { return mem_; }
  uint64_t len() const { return len_; }
  hmb_area area() const {
    return hmb_area{pages_.data(), pages_.size(), kHostPageShift};
  }

 private:
  uint64_t len_;
  uint8_t* mem_;
  std::vector<const uint8_t*> pages_;
};

// The payload of test record (core, seq): a fixed part naming the record and
// a variable tail whose length and bytes follow from (core, seq), so a torn
// or misplaced payload is always noticed.
struct TestFixed {
  uint16_t core;
  uint16_t var_len;
  uint32_t pad;
  uint64_t seq;
};
static_assert(sizeof(TestFixed) == 16);

inline uint8_t PatternByte(uint16_t core, uint64_t seq, uint32_t i) {
  return static_cast<uint8_t>(seq * 31 + i * 7 + core);
}

inline uint16_t TestEventId(uint64_t seq) { return 1 + seq % 7; }

// Emits record (core, seq) with a variable tail of var_len bytes.
inline int EmitTestRecord(hmb_trace_producer* p, uint16_t core, uint64_t seq,
                          uint16_t var_len, uint64_t ts) {
  TestFixed f{core, var_len, 0, seq};
  uint8_t var[HMB_TRACE_PAGE_SIZE_MAX];
  for (uint32_t i = 0; i < var_len; i++) var[i] = PatternByte(core, seq, i);
  return hmb_trace_emit(p, core, TestEventId(seq), ts, &f, sizeof(f), var,
                        var_len);
}

// Collects what a consumer delivers and checks it on the fly.
struct TestSink {
  struct Core {
    std::atomic<uint64_t> delivered{0};
    std::atomic<uint64_t> last_seq{UINT64_MAX};
    uint64_t lost[HMB_LOST_NR] = {};
    uint64_t out_of_order = 0;
    uint64_t bad_payload = 0;
    std::vector<uint64_t> seqs;  // only when keep_seqs
    std::vector<uint64_t> lost_at;
  };
  std::array<Core, HMB_TRACE_MAX_CORES> core;
  std::vector<hmb_trace_ev_state> events;
  std::atomic<uint32_t> resets_seen{0};  // HMB_TRACE_EV_RESET, for other threads
  bool keep_seqs = false;
  bool check_payload = true;
  // Refuse every refuse_every-th call (0: never), as a reader whose buffer
  // is off or full does; refused records must come again, not be lost.
  uint32_t refuse_every = 0;
  uint64_t calls = 0;
  uint64_t refused = 0;
  // The fake clock of the consumer's time bound (hmb_consumer.now_ns).
  uint64_t clock_ns = 0;
  uint64_t clock_reads = 0;

  static uint64_t Now(void* ctx) {
    auto* s = static_cast<TestSink*>(ctx);
    s->clock_reads++;
    return s->clock_ns;
  }

  static int Deliver(void* ctx, const hmb_record* r) {
    auto* s = static_cast<TestSink*>(ctx);
    Core& c = s->core[r->core];
    if (s->refuse_every && ++s->calls % s->refuse_every == 0) {
      s->refused++;
      return HMB_DELIVER_REFUSED;
    }
    if (c.last_seq != UINT64_MAX && r->seq <= c.last_seq) c.out_of_order++;
    c.last_seq = r->seq;
    if (s->check_payload && !PayloadOk(*r)) c.bad_payload++;
    if (s->keep_seqs) c.seqs.push_back(r->seq);
    c.delivered.fetch_add(1, std::memory_order_release);
    return HMB_DELIVER_OK;
  }
  static void Lost(void* ctx, uint16_t core, uint64_t n,
                   hmb_lost_reason reason, uint64_t at) {
    auto* s = static_cast<TestSink*>(ctx);
    s->core[core].lost[reason] += n;
    s->core[core].lost_at.push_back(at);
  }
  static void Event(void* ctx, hmb_trace_ev_state ev, uint32_t) {
    auto* s = static_cast<TestSink*>(ctx);
    s->events.push_back(ev);
    if (ev == HMB_TRACE_EV_RESET) {  // sequence numbers restart in a new life
      for (Core& c : s->core) c.last_seq = UINT64_MAX;
      s->resets_seen.fetch_add(1, std::memory_order_release);
    }
  }
  static bool PayloadOk(const hmb_record& r) {
    TestFixed f;
    if (r.len < sizeof(f)) return false;
    std::memcpy(&f, r.payload, sizeof(f));
    if (f.core != r.core || f.seq != r.seq || r.event_id != TestEventId(r.seq) ||
        r.len != sizeof(f) + f.var_len)
      return false;
    for (uint32_t i = 0; i < f.var_len; i++)
      if (r.payload[sizeof(f) + i] != PatternByte(f.core, f.seq, i))
        return false;
    return true;
  }
  uint64_t LostTotal(uint16_t c) const {
    uint64_t n = 0;
    for (uint64_t l : core[c].lost) n += l;
    return n;
  }
  hmb_consumer_ops Ops() const { return {Deliver, Lost, Event}; }
};

// A consumer with its scratch buffer, reading a TestArea into a TestSink.
class TestConsumer {
 public:
  TestConsumer(const TestArea& area, TestSink* sink)
      : scratch_(new uint8_t[HMB_CONSUMER_SCRATCH_LEN]) {
    hmb_area a = area.area();
    hmb_consumer_ops ops = sink->Ops();
    hmb_consumer_init(&c_, &a, &ops, sink, scratch_.get());
  }
  hmb_consumer* get() { return &c_; }
  // Polls and drains every core until nothing more arrives.
  uint64_t DrainAll(uint32_t budget = 4096) {
    uint64_t total = 0;
    for (;;) {
      if (hmb_consumer_poll(&c_) != HMB_CONSUMER_ATTACHED) return total;
      uint64_t round = 0;
      for (uint16_t k = 0; k < c_.geo.nr_cores; k++)
        round += hmb_consumer_drain_core(&c_, k, budget);
      total += round;
      if (!round) return total;
    }
  }

 private:
  std::unique_ptr<uint8_t[]> scratch_;
  hmb_consumer c_;
};

inline hmb_trace_producer_config TestConfig(uint32_t page_size, uint32_t ppc,
                                            uint16_t cores) {
  hmb_trace_producer_config cfg{};
  cfg.page_size = page_size;
  cfg.pages_per_core = ppc;
  cfg.nr_cores = cores;
  cfg.clock_hz = 1000000000;
  for (uint32_t i = 0; i < HMB_TRACE_BUILD_ID_LEN; i++)
    cfg.build_id[i] = static_cast<uint8_t>(0xb0 + i);
  return cfg;
}

}  // namespace hmbtrace::testing

#endif  // HMBTRACE_CONSUMER_TEST_AREA_H_
