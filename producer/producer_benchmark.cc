// SPDX-License-Identifier: GPL-2.0-only
// Producer cost per record, by payload size. Target: <= 20 ns for 32 bytes.
// And an 8-byte event emitted as firmware writes it: a hand-packed struct
// passed to hmb_trace_emit(), against the emitter that hmb_trace_declare.h
// makes from its declaration (hmb_trace_declare_example.def, read_start).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "hmb_trace_declare_example.h"
#include "hmb_trace_producer.h"

namespace {

// One core, 256 KiB ring: overwrites, as in flight recorder use.
struct Ring {
  Ring() {
    cfg.page_size = 4096;
    cfg.pages_per_core = 64;
    cfg.nr_cores = 1;
    cfg.clock_hz = 1000000000;
    area.resize(hmb_trace_area_size(&cfg));
    ok = hmb_trace_producer_init(&p, area.data(), area.size(), &cfg) == 0;
  }
  hmb_trace_producer_config cfg{};
  std::vector<uint8_t> area;
  hmb_trace_producer p{};
  bool ok = false;
};

// Times emit(producer, ts) for ts = 0, 1, ...
template <typename Emit>
void TimeEmits(benchmark::State& state, Emit emit) {
  Ring ring;
  if (!ring.ok) {
    state.SkipWithError("producer init failed");
    return;
  }
  uint64_t ts = 0;
  for (auto _ : state) {
    emit(&ring.p, ts++);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ProducerEmit(benchmark::State& state) {
  const uint32_t payload = static_cast<uint32_t>(state.range(0));
  uint8_t args[128];
  std::memset(args, 0x5a, sizeof(args));
  TimeEmits(state, [&](hmb_trace_producer* p, uint64_t ts) {
    hmb_trace_emit(p, 0, 3, ts, args, payload, nullptr, 0);
  });
  state.SetBytesProcessed(state.iterations() * payload);
}
BENCHMARK(BM_ProducerEmit)->Arg(8)->Arg(32)->Arg(128);

struct __attribute__((packed)) HandPackedReadStart {
  uint16_t qid;
  uint16_t cid;
  uint32_t lba;
};

void BM_HandPackedEmit8(benchmark::State& state) {
  TimeEmits(state, [](hmb_trace_producer* p, uint64_t ts) {
    const HandPackedReadStart pl = {static_cast<uint16_t>(ts & 7),
                                    static_cast<uint16_t>(ts),
                                    static_cast<uint32_t>(ts << 3)};
    hmb_trace_emit(p, 0, EX_EV_READ_START, ts, &pl, sizeof(pl), nullptr, 0);
  });
}
BENCHMARK(BM_HandPackedEmit8);

void BM_DeclaredEmit8(benchmark::State& state) {
  TimeEmits(state, [](hmb_trace_producer* p, uint64_t ts) {
    ex_trace_read_start(p, 0, ts, static_cast<uint16_t>(ts & 7),
                        static_cast<uint16_t>(ts), static_cast<uint32_t>(ts << 3));
  });
}
BENCHMARK(BM_DeclaredEmit8);

}  // namespace

BENCHMARK_MAIN();
