// SPDX-License-Identifier: GPL-2.0-only
// Producer cost per record, by payload size. Target: <= 20 ns for 32 bytes.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "hmb_trace_producer.h"

static void BM_ProducerEmit(benchmark::State& state) {
  const uint32_t payload = static_cast<uint32_t>(state.range(0));
  hmb_trace_producer_config cfg{};
  cfg.page_size = 4096;
  cfg.pages_per_core = 64;  // 256 KiB ring: overwrites, as in flight recorder use
  cfg.nr_cores = 1;
  cfg.clock_hz = 1000000000;
  std::vector<uint8_t> area(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  if (hmb_trace_producer_init(&p, area.data(), area.size(), &cfg)) {
    state.SkipWithError("producer init failed");
    return;
  }
  uint8_t args[128];
  std::memset(args, 0x5a, sizeof(args));
  uint64_t ts = 0;
  for (auto _ : state) {
    hmb_trace_emit(&p, 0, 3, ts++, args, payload, nullptr, 0);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * payload);
}
BENCHMARK(BM_ProducerEmit)->Arg(8)->Arg(32)->Arg(128);

BENCHMARK_MAIN();
