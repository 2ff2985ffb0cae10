// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target: the consumer over arbitrary area bytes. The first bytes
// of the input pick a geometry the meta page will claim, whether to start
// from a valid producer-written area, and when the reader refuses a record
// (HMB_DELIVER_REFUSED, as the kernel module does when its trace buffer is
// off or full); the rest overwrites the area. Between polls the device
// changes under the reader as the input says: a new generation with any core
// descriptors, a generation that goes back, INIT then READY in the same
// generation, a state that is no state, and more records from the producer.
//
// Nothing may crash, read out of bounds (ASan) or hit undefined behaviour
// (UBSan), and the trace may not lie (abort on violation):
//  - no (generation, core, seq) is delivered twice, and within a generation
//    a core's sequence numbers strictly increase;
//  - a refused record is the next one offered on its core in its
//    generation, and is not charged as lost, unless the ring changed under
//    the reader since (then it may be gone: charged, never skipped
//    silently); with nothing changed, the next drain of the core offers it;
//  - no charge covers a record already delivered in its generation;
//  - no charge to torn, invalid or reset exceeds the ring's capacity
//    (hmb_consumer_capacity()); overwritten is bounded by the page numbers
//    the head hint confirms, not by the ring, so it is not checked here;
//  - no counter (delivered, lost[], errors[]) ever goes down, i.e. wraps;
//    resets only by the one taken back with a bad_generation; the
//    consumer's delivered equals what the callback saw.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>

#include "test_area.h"

using namespace hmbtrace::testing;

namespace {

// When the reader refuses, from one input byte: 0 never; 0xff always;
// otherwise in cycles of `take` records taken then `refuse` calls refused,
// so that a record may be refused several drains in a row.
struct RefusalPattern {
  uint8_t byte = 0;
  uint64_t calls = 0;

  bool Refuse() {
    const uint64_t n = calls++;
    if (byte == 0 || byte == 0xff) return byte == 0xff;
    const uint64_t take = 1 + (byte & 0x1f), refuse = 1 + (byte >> 5);
    return n % (take + refuse) >= take;
  }
};

// Checks every delivery and loss against the invariants above.
struct Checker {
  const hmb_consumer* c = nullptr;
  // Per core: generation -> highest sequence number delivered in it.
  std::map<uint32_t, uint64_t> high[HMB_TRACE_MAX_CORES];
  uint64_t delivered[HMB_TRACE_MAX_CORES] = {};
  uint64_t offered[HMB_TRACE_MAX_CORES] = {};  // deliver calls, refused too
  RefusalPattern refusals;
  // The last record refused on a core, until it is taken or charged.
  struct Refused {
    bool valid = false;
    bool ring_changed = false;  // the producer or the meta page moved since
    uint32_t gen = 0;
    uint64_t seq = 0;
  } refused[HMB_TRACE_MAX_CORES];

  // The device wrote the rings or the generation: a refused record may be
  // overwritten before it is offered again.
  void RingChanged() {
    for (Refused& f : refused) f.ring_changed = true;
  }

  static int Deliver(void* ctx, const hmb_record* r) {
    auto* k = static_cast<Checker*>(ctx);
    if (r->core >= HMB_TRACE_MAX_CORES) __builtin_trap();
    const uint32_t gen = k->c->geo.producer_gen;
    Refused& f = k->refused[r->core];
    k->offered[r->core]++;
    if (f.valid && f.gen == gen && r->seq != f.seq)
      __builtin_trap();  // a refused record skipped without a charge
    if (k->refusals.Refuse()) {
      f = {true, false, gen, r->seq};
      return HMB_DELIVER_REFUSED;
    }
    if (f.valid && f.gen == gen) f.valid = false;  // came again, taken
    auto& h = k->high[r->core];
    auto it = h.find(gen);
    if (it != h.end() && r->seq <= it->second)
      __builtin_trap();  // delivered twice, or out of order
    h[gen] = r->seq;
    k->delivered[r->core]++;
    return HMB_DELIVER_OK;
  }
  static void Lost(void* ctx, uint16_t core, uint64_t n, hmb_lost_reason reason,
                   uint64_t at) {
    auto* k = static_cast<Checker*>(ctx);
    if (core >= HMB_TRACE_MAX_CORES || n == 0) __builtin_trap();
    if (reason != HMB_LOST_OVERWRITTEN && n > hmb_consumer_capacity(&k->c->geo))
      __builtin_trap();  // a charge larger than the ring can hold
    // Lost callbacks name the generation being left (reset) or read.
    const uint32_t gen = k->c->geo.producer_gen;
    if (n > at) __builtin_trap();  // records before sequence 0
    auto it = k->high[core].find(gen);
    if (it != k->high[core].end() && at - n <= it->second)
      __builtin_trap();  // a delivered record charged as lost
    Refused& f = k->refused[core];
    if (f.valid && f.gen == gen && at > f.seq) {
      // A refused record stays where it is: charged only if it was
      // overwritten, which takes the producer moving on.
      if (!f.ring_changed) __builtin_trap();
      f.valid = false;
    }
  }
  static void Event(void*, hmb_consumer_event, uint32_t) {}
};

// The consumer's counters, to check that none goes down.
struct Counters {
  uint64_t delivered[HMB_TRACE_MAX_CORES];
  uint64_t lost[HMB_TRACE_MAX_CORES][HMB_LOST_NR];
  uint64_t errors[HMB_ERR_NR];
  uint64_t resets;

  explicit Counters(const hmb_consumer& c) {
    for (uint32_t k = 0; k < HMB_TRACE_MAX_CORES; k++) {
      delivered[k] = c.core[k].delivered;
      std::memcpy(lost[k], c.core[k].lost, sizeof(lost[k]));
    }
    std::memcpy(errors, c.errors, sizeof(errors));
    resets = c.resets;
  }
  void CheckNotBelow(const Counters& before) const {
    for (uint32_t k = 0; k < HMB_TRACE_MAX_CORES; k++) {
      if (delivered[k] < before.delivered[k]) __builtin_trap();
      for (int r = 0; r < HMB_LOST_NR; r++)
        if (lost[k][r] < before.lost[k][r]) __builtin_trap();
    }
    for (int e = 0; e < HMB_ERR_NR; e++)
      if (errors[e] < before.errors[e]) __builtin_trap();
    // resets goes down only when a newer generation is taken back (a
    // corrupted word, see take_meta()): by one, with bad_generation counted.
    if (resets < before.resets &&
        (before.resets - resets > 1 ||
         errors[HMB_ERR_BAD_GENERATION] == before.errors[HMB_ERR_BAD_GENERATION]))
      __builtin_trap();
  }
};

uint32_t Get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void Put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint64_t kAreaLen = 64 * 1024;
  static TestArea* area = new TestArea(kAreaLen);
  static uint8_t* scratch = new uint8_t[HMB_CONSUMER_SCRATCH_LEN];
  if (size < 5) return 0;
  const uint8_t mode = data[0];
  uint8_t* mem = area->mem();
  std::memset(mem, 0, kAreaLen);
  hmb_trace_producer p{};
  bool producing = false;
  if (mode & 1) {
    // A real area as a starting point, so the fuzzer reaches deep states.
    hmb_trace_producer_config cfg = TestConfig(512u << (data[1] % 4), 2 + data[2] % 6,
                                               1 + data[3] % 4);
    if (hmb_trace_area_size(&cfg) <= kAreaLen &&
        hmb_trace_producer_init(&p, mem, kAreaLen, &cfg) == 0) {
      producing = true;
      for (uint32_t i = 0; i < (uint32_t)data[1] * 4; i++)
        EmitTestRecord(&p, i % cfg.nr_cores, p.core[i % cfg.nr_cores].next_seq,
                       i % 50, i);
    }
  }
  // Overlay the input: (offset, bytes) chunks, so small inputs hit any spot.
  size_t pos = 5;
  while (pos + 4 <= size) {
    uint32_t off = (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16) % kAreaLen;
    uint32_t n = data[pos + 3] % 64;
    pos += 4;
    if (n > size - pos) n = static_cast<uint32_t>(size - pos);
    if (n > kAreaLen - off) n = static_cast<uint32_t>(kAreaLen - off);
    std::memcpy(mem + off, data + pos, n);
    pos += n;
  }
  Checker check;
  check.refusals.byte = data[4];
  hmb_area a = area->area();
  // Sometimes claim a mapping shorter than the area to test the bounds.
  if (mode & 2) a.nr_pages = (data[2] % a.nr_pages) + 1;
  hmb_consumer_ops ops{Checker::Deliver, Checker::Lost, Checker::Event};
  hmb_consumer c;
  hmb_consumer_init(&c, &a, &ops, &check, scratch);
  check.c = &c;
  const uint8_t* meta_gen = data + 1;  // reused as a small choice stream
  for (int round = 0; round < 6; round++) {
    Counters before(c);
    if (hmb_consumer_poll(&c) == HMB_CONSUMER_ATTACHED)
      for (uint16_t k = 0; k < c.geo.nr_cores; k++) {
        hmb_consumer_drain_core(&c, k, 1 + (mode >> 2) * 16);
        // Nothing changed since a refusal: the next drain offers the
        // refused record again (Deliver and Lost check the rest).
        for (int again = 0; again < 3; again++) {
          const Checker::Refused& f = check.refused[k];
          if (!f.valid || f.ring_changed || f.gen != c.geo.producer_gen) break;
          const uint64_t offered = check.offered[k];
          hmb_consumer_drain_core(&c, k, 1 + again);
          if (check.offered[k] == offered) __builtin_trap();
        }
      }
    Counters after(c);
    after.CheckNotBelow(before);
    for (uint32_t k = 0; k < HMB_TRACE_MAX_CORES; k++)
      if (c.core[k].delivered != check.delivered[k] && c.core[k].delivered != UINT64_MAX)
        __builtin_trap();
    uint8_t dict[256];
    hmb_area_read(&c, c.geo.dict_offset, dict, sizeof(dict));
    // The device changes under the reader, as the input says.
    const uint8_t op = (meta_gen[round % 3] >> (2 * (round / 3))) & 7;
    uint32_t gen = Get32(mem + offsetof(hmb_trace_meta, producer_gen));
    const uint8_t what = round == 0 && (mode & 4) ? 0 : op;
    // INIT then READY, or a bad state for one poll, leave the rings and
    // the generation as they were: a refused record must still come first.
    if (what != 2 && what != 3 && (what < 4 || producing)) check.RingChanged();
    switch (what) {
      case 0: {
        // A new generation (a reset) whose core descriptors claim anything
        // the input says.
        Put32(mem + offsetof(hmb_trace_meta, producer_gen), gen + 1 + data[3] % 3);
        const size_t n = std::min<size_t>(size - 4, 32 * sizeof(hmb_trace_core));
        std::memcpy(mem + sizeof(hmb_trace_meta), data + size - n, n);
        break;
      }
      case 1:  // the generation goes back
        Put32(mem + offsetof(hmb_trace_meta, producer_gen), gen - 1 - data[2] % 2);
        break;
      case 2:  // INIT, seen by the reader, then READY in the same generation
        Put32(mem + offsetof(hmb_trace_meta, state), HMB_TRACE_STATE_INIT);
        hmb_consumer_poll(&c);
        Put32(mem + offsetof(hmb_trace_meta, state), HMB_TRACE_STATE_READY);
        break;
      case 3:  // a state no producer writes, for one poll
        Put32(mem + offsetof(hmb_trace_meta, state), 0x5a5a5a5a);
        hmb_consumer_poll(&c);
        Put32(mem + offsetof(hmb_trace_meta, state), HMB_TRACE_STATE_READY);
        break;
      default:  // the producer carries on over whatever the input left
        if (producing)
          for (uint32_t i = 0; i < (uint32_t)(op + data[1] % 8) * 8; i++)
            EmitTestRecord(&p, i % p.nr_cores, p.core[i % p.nr_cores].next_seq,
                           i % 50, 100000 + i);
        break;
    }
  }
  return 0;
}
