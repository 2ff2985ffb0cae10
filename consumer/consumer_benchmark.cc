// SPDX-License-Identifier: GPL-2.0-only
// Consumer throughput against two baselines measured in the same run over the
// same committed bytes:
//  - memcpy: a plain copy of each page (the "vs_memcpy" counter; the target
//    of issue 2 is >= 0.5x);
//  - walk: the least any reader of the format must do, following each
//    record's length to the next record with no checks and no copy (the
//    "vs_walk" counter). Records are variable length, so this is a chain of
//    dependent loads; it bounds every consumer, whatever its design.
// callback:0 drains with no deliver callback (copy, validate and parse only);
// callback:1 with a trivial one. payload:0 is a firmware-like mix of payload
// sizes (those of hmb-fwsim's events: 5 to 21 bytes) in random order.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "test_area.h"

namespace hmbtrace::testing {
namespace {

constexpr uint32_t kPageSize = 4096;
constexpr uint32_t kPageHeader = 48;

// Payload sizes of hmb-fwsim's events (fetch, complete, NAND, GC, thermal).
constexpr std::array<uint32_t, 8> kFirmwareMix = {21, 10, 10, 10, 8, 5, 9, 6};

struct FullRing {
  FullRing(uint32_t payload, uint32_t pages)
      : kPages(pages), cfg(TestConfig(kPageSize, pages, 1)), area(hmb_trace_area_size(&cfg)) {
    hmb_trace_producer p{};
    hmb_trace_producer_init(&p, area.mem(), area.len(), &cfg);
    std::vector<uint8_t> args(128, 0x5a);
    std::mt19937 rng(1);
    // Fill every page once; the last page stays open.
    for (uint64_t i = 0;; i++) {
      const uint32_t len = payload ? payload : kFirmwareMix[rng() % kFirmwareMix.size()];
      if (p.core[0].page_seq + 1 >= kPages && p.core[0].bytes + 8 + len > kPageSize - kPageHeader)
        break;
      hmb_trace_emit(&p, 0, 3, i, args.data(), len, nullptr, 0);
      records++;
    }
    ring = area.mem() + p.ring_offset;
    for (uint32_t pg = 0; pg < kPages; pg++) {
      uint32_t commit;
      std::memcpy(&commit, ring + pg * kPageSize + 24, 4);
      bytes += HMB_TRACE_COMMIT_BYTES(commit);
    }
  }
  const uint32_t kPages;
  hmb_trace_producer_config cfg;
  TestArea area;
  const uint8_t* ring = nullptr;
  uint64_t records = 0;
  uint64_t bytes = 0;
};

int CountRecord(void* ctx, const hmb_record* r) {
  *static_cast<uint64_t*>(ctx) += r->len;
  return 0;
}

// Seconds per pass of the bare record walk over the committed bytes.
double WalkSeconds(const FullRing& ring) {
  uint64_t sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 8; rep++) {
    for (uint32_t pg = 0; pg < ring.kPages; pg++) {
      const uint8_t* page = ring.ring + pg * kPageSize;
      uint32_t commit;
      std::memcpy(&commit, page + 24, 4);
      const uint8_t* p = page + kPageHeader;
      const uint8_t* end = p + HMB_TRACE_COMMIT_BYTES(commit);
      while (p < end) {
        uint16_t len;
        uint32_t delta;
        std::memcpy(&len, p + 2, 2);
        std::memcpy(&delta, p + 4, 4);
        sum += delta;
        p += (len + 15u) & ~7u;
      }
    }
  }
  benchmark::DoNotOptimize(sum);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 8;
}

// Seconds per pass of memcpy over the committed bytes of every page.
double MemcpySeconds(const FullRing& ring, std::vector<uint8_t>& dst) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 8; rep++) {
    for (uint32_t pg = 0; pg < ring.kPages; pg++) {
      std::memcpy(dst.data(), ring.ring + pg * kPageSize + kPageHeader, kPageSize - kPageHeader);
      benchmark::DoNotOptimize(dst.data());
      benchmark::ClobberMemory();
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 8;
}

void BM_ConsumerDrain(benchmark::State& state) {
  // range(2): ring size in MiB; 4 stays in this machine's L3, 64 does not.
  FullRing ring(static_cast<uint32_t>(state.range(0)),
                static_cast<uint32_t>(state.range(2)) * (1024 * 1024 / kPageSize));
  std::vector<uint8_t> scratch(HMB_CONSUMER_SCRATCH_LEN);
  uint64_t sum = 0;
  hmb_area a = ring.area.area();
  hmb_consumer_ops ops{state.range(1) ? CountRecord : nullptr, nullptr, nullptr};
  hmb_consumer c;
  double consumer_s = 0, memcpy_s = 0, walk_s = 0;
  for (auto _ : state) {
    hmb_consumer_init(&c, &a, &ops, &sum, scratch.data());
    hmb_consumer_poll(&c);
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t n = hmb_consumer_drain_core(&c, 0, UINT32_MAX);
    consumer_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (n != ring.records) state.SkipWithError("consumer did not deliver every record");
    memcpy_s += MemcpySeconds(ring, scratch);
    walk_s += WalkSeconds(ring);
  }
  state.SetBytesProcessed(state.iterations() * ring.bytes);
  state.SetItemsProcessed(state.iterations() * ring.records);
  const double gb = static_cast<double>(ring.bytes) * state.iterations() / 1e9;
  state.counters["consumer_GBps"] = gb / consumer_s;
  state.counters["memcpy_GBps"] = gb / memcpy_s;
  state.counters["vs_memcpy"] = memcpy_s / consumer_s;
  state.counters["walk_GBps"] = gb / walk_s;
  state.counters["vs_walk"] = walk_s / consumer_s;
  state.counters["ns_per_record"] = consumer_s * 1e9 / (static_cast<double>(ring.records) * state.iterations());
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_ConsumerDrain)
    ->ArgsProduct({{0, 8, 32, 128}, {0, 1}, {4, 64}})
    ->ArgNames({"payload", "callback", "ring_mb"})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hmbtrace::testing

BENCHMARK_MAIN();
