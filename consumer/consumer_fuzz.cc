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
//    (hmb_consumer_capacity());
//  - with the time bound on (a fake clock that the input moves between
//    polls and drains, by steps of 0 to days, sometimes backwards, and a
//    max_rate the input picks), no gap charged on a core (the torn,
//    invalid and overwritten charges of one gap together) exceeds the
//    capacity plus max_rate x the time since the core's position was last
//    confirmed: a record delivered, a gap charged, or for a new generation
//    the last poll that found no newer one READY (the model below keeps
//    these itself, from the callbacks and the area, not from the
//    consumer's state);
//  - no counter (delivered, lost[], errors[]) ever goes down, i.e. wraps;
//    resets only by the one taken back with a bad_generation; the
//    consumer's delivered equals what the callback saw.
#include <algorithm>
#include <array>
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

// When a core's position was last confirmed, as far as the checker knows.
struct Anchor {
  bool known = false;
  uint64_t ns = 0;
};

// Checks every delivery and loss against the invariants above.
struct Checker {
  const hmb_consumer* c = nullptr;
  // The fake clock and the time bound's model.
  uint64_t now = 1000000000;
  uint64_t max_rate = 0;
  Anchor quiet;  // the last poll that saw no newer generation READY
  std::map<uint32_t, std::array<Anchor, HMB_TRACE_MAX_CORES>> anchor;  // by gen
  // The gap being charged on each core: its sequence, what it charged so
  // far and the anchor it is bounded from.
  struct Gap {
    bool open = false;
    uint32_t gen = 0;
    uint64_t at = 0;
    uint64_t sum = 0;
    Anchor from;
  } gap[HMB_TRACE_MAX_CORES];

  static uint64_t Now(void* ctx) { return static_cast<Checker*>(ctx)->now; }

  // No single gap may exceed what the producer can have written.
  void CheckGap(uint16_t core, uint32_t gen, uint64_t n, uint64_t at) {
    Gap& g = gap[core];
    if (!g.open || g.gen != gen || g.at != at) {
      g = {true, gen, at, 0, anchor[gen][core]};
    }
    g.sum = g.sum + n < g.sum ? UINT64_MAX : g.sum + n;
    anchor[gen][core] = {true, now};
    if (!max_rate || !g.from.known) return;
    const unsigned __int128 elapsed = now > g.from.ns ? now - g.from.ns : 0;
    const unsigned __int128 bound =
        hmb_consumer_capacity(&c->geo) +
        (static_cast<unsigned __int128>(max_rate) * elapsed + 999999999) / 1000000000;
    if (g.sum > bound) __builtin_trap();  // more than time allows
  }
  void OnDelivered(uint16_t core, uint32_t gen) {
    anchor[gen][core] = {true, now};
    gap[core].open = false;
  }
  void OnEvent(hmb_trace_ev_state ev, uint32_t gen) {
    // A new generation's records all come after `quiet`; a return to a
    // known one (same generation, or a phantom taken back) keeps its own.
    if (ev == HMB_TRACE_EV_RESET || (ev == HMB_TRACE_EV_ATTACHED && !anchor.count(gen)))
      anchor[gen].fill(quiet);
  }
  // hmb_consumer_poll(), keeping `quiet` as the spec says: a poll that
  // found INIT, or READY in the generation attached to when it returns.
  hmb_consumer_state Poll(hmb_consumer* cons, const uint8_t* mem) {
    const uint64_t t = now;
    const uint32_t gen = Get(mem + offsetof(hmb_trace_meta, producer_gen));
    const uint32_t state = Get(mem + offsetof(hmb_trace_meta, state));
    const hmb_consumer_state ret = hmb_consumer_poll(cons);
    if (state == HMB_TRACE_STATE_INIT ||
        (state == HMB_TRACE_STATE_READY && ret == HMB_CONSUMER_ATTACHED &&
         gen == cons->geo.producer_gen))
      quiet = {true, t};
    return ret;
  }
  static uint32_t Get(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

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
    k->OnDelivered(r->core, gen);
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
    if (reason != HMB_LOST_RESET) k->CheckGap(core, gen, n, at);
    if (f.valid && f.gen == gen && at > f.seq) {
      // A refused record stays where it is: charged only if it was
      // overwritten, which takes the producer moving on.
      if (!f.ring_changed) __builtin_trap();
      f.valid = false;
    }
  }
  static void Event(void* ctx, hmb_trace_ev_state ev, uint32_t gen) {
    static_cast<Checker*>(ctx)->OnEvent(ev, gen);
  }
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
  // The time bound: a rate from 1000 records/s to 32 M/s, or none; the
  // clock moves between polls and drains by steps the input's last bytes
  // give (0 to days, or a little back, as clocks of two CPUs may).
  const uint8_t rate = data[size - 1];
  check.max_rate = rate & 0x80 ? 0 : 1000ull << (rate & 15);
  c.now_ns = Checker::Now;
  c.max_rate = check.max_rate;
  auto tick = [&](size_t i) {
    const uint8_t b = data[(size - 2 - i % (size - 1)) % size];
    if (b == 0xff)
      check.now -= std::min<uint64_t>(check.now, 1000);
    else
      check.now += static_cast<uint64_t>(b & 15) << (3 * (b >> 4));
  };
  const uint8_t* meta_gen = data + 1;  // reused as a small choice stream
  for (int round = 0; round < 6; round++) {
    Counters before(c);
    tick(2 * round);
    if (check.Poll(&c, mem) == HMB_CONSUMER_ATTACHED)
      for (uint16_t k = 0; k < c.geo.nr_cores; k++) {
        tick(2 * round + 1 + k);
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
    // The look between drains, on whatever the area holds (and below, on
    // what it holds after the device changed it): it stays in bounds and
    // never calls an area that is not attached unchanged.
    hmb_consumer_peek peek;
    hmb_consumer_peek_take(&c, 0xffffffffu >> (mode & 31), &peek);
    if (peek.valid != (c.state == HMB_CONSUMER_ATTACHED)) __builtin_trap();
    if (!peek.valid && !hmb_consumer_peek_changed(&c, &peek)) __builtin_trap();
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
        check.Poll(&c, mem);
        Put32(mem + offsetof(hmb_trace_meta, state), HMB_TRACE_STATE_READY);
        break;
      case 3:  // a state no producer writes, for one poll
        Put32(mem + offsetof(hmb_trace_meta, state), 0x5a5a5a5a);
        check.Poll(&c, mem);
        Put32(mem + offsetof(hmb_trace_meta, state), HMB_TRACE_STATE_READY);
        break;
      default:  // the producer carries on over whatever the input left
        if (producing)
          for (uint32_t i = 0; i < (uint32_t)(op + data[1] % 8) * 8; i++)
            EmitTestRecord(&p, i % p.nr_cores, p.core[i % p.nr_cores].next_seq,
                           i % 50, 100000 + i);
        break;
    }
    hmb_consumer_peek_changed(&c, &peek);
  }
  return 0;
}
