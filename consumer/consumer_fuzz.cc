// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target: the consumer over arbitrary area bytes. The first bytes
// of the input pick a geometry the meta page will claim and whether to start
// from a valid producer-written area; the rest overwrites the area. Nothing
// may crash, read out of bounds (ASan) or hit undefined behaviour (UBSan).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "test_area.h"

using namespace hmbtrace::testing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint64_t kAreaLen = 64 * 1024;
  static TestArea* area = new TestArea(kAreaLen);
  static uint8_t* scratch = new uint8_t[HMB_CONSUMER_SCRATCH_LEN];
  if (size < 4) return 0;
  const uint8_t mode = data[0];
  std::memset(area->mem(), 0, kAreaLen);
  if (mode & 1) {
    // A real area as a starting point, so the fuzzer reaches deep states.
    hmb_trace_producer_config cfg = TestConfig(512u << (data[1] % 4), 2 + data[2] % 6,
                                               1 + data[3] % 4);
    hmb_trace_producer p{};
    if (hmb_trace_area_size(&cfg) <= kAreaLen &&
        hmb_trace_producer_init(&p, area->mem(), kAreaLen, &cfg) == 0) {
      for (uint32_t i = 0; i < (uint32_t)data[1] * 4; i++)
        EmitTestRecord(&p, i % cfg.nr_cores, p.core[i % cfg.nr_cores].next_seq,
                       i % 50, i);
    }
  }
  // Overlay the input: (offset, bytes) chunks, so small inputs hit any spot.
  size_t pos = 4;
  while (pos + 4 <= size) {
    uint32_t off = (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16) % kAreaLen;
    uint32_t n = data[pos + 3] % 64;
    pos += 4;
    if (n > size - pos) n = static_cast<uint32_t>(size - pos);
    if (n > kAreaLen - off) n = static_cast<uint32_t>(kAreaLen - off);
    std::memcpy(area->mem() + off, data + pos, n);
    pos += n;
  }
  TestSink sink;
  sink.check_payload = false;
  hmb_area a = area->area();
  // Sometimes claim a mapping shorter than the area to test the bounds.
  if (mode & 2) a.nr_pages = (data[2] % a.nr_pages) + 1;
  hmb_consumer_ops ops = sink.Ops();
  hmb_consumer c;
  hmb_consumer_init(&c, &a, &ops, &sink, scratch);
  for (int round = 0; round < 3; round++) {
    if (hmb_consumer_poll(&c) != HMB_CONSUMER_ATTACHED) break;
    for (uint16_t k = 0; k < c.geo.nr_cores; k++)
      hmb_consumer_drain_core(&c, k, 1 + (mode >> 2) * 16);
    uint8_t dict[256];
    hmb_area_read(&c, c.geo.dict_offset, dict, sizeof(dict));
    if (round == 0 && (mode & 4)) {
      // The device changes under the reader: a new generation (a reset)
      // whose core descriptors claim anything the input says.
      uint32_t gen;
      std::memcpy(&gen, area->mem() + 16, 4);
      gen += 1 + data[3] % 3;
      std::memcpy(area->mem() + 16, &gen, 4);
      const size_t n = std::min<size_t>(size - 4, 32 * sizeof(hmb_trace_core));
      std::memcpy(area->mem() + sizeof(hmb_trace_meta), data + size - n, n);
    }
  }
  for (uint16_t k = 0; k < HMB_TRACE_MAX_CORES; k++)
    if (sink.core[k].out_of_order) __builtin_trap();  // never repeat or reorder
  return 0;
}
