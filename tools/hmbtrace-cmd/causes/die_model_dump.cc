// SPDX-License-Identifier: GPL-2.0-only
// die_model_dump: hmb-fwsim's die model (mock/fwsim/causes/die_model.h)
// written as a crash dump of its area (the format hmb_trace.ko writes), so
// that hmbtrace-cmd stat and report read the model's records without a
// guest; and the model's truth log beside it.
//
//   die_model_dump OUT.hmbdump TRUTH.txt [--no-gc] [--no-retry] [--no-throttle]
//                  [--commands N] [--seed S]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "causes/causes_events.h"
#include "causes/die_model.h"
#include "decode_test_util.h"
#include "hmb_trace_events_abi.h"
#include "dump/dump_writer_testutil.h"

int main(int argc, char** argv) {
  using namespace hmbtrace;
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: die_model_dump OUT.hmbdump TRUTH.txt [--no-gc] [--no-retry] "
                 "[--no-throttle] [--commands N] [--seed S]\n");
    return 2;
  }
  DieModelConfig config;
  for (int i = 3; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--no-gc") {
      config.gc = false;
    } else if (a == "--no-retry") {
      config.retry = false;
    } else if (a == "--no-throttle") {
      config.throttle = false;
    } else if (a == "--commands" && i + 1 < argc) {
      config.nr_commands = static_cast<uint32_t>(std::stoul(argv[++i]));
    } else if (a == "--seed" && i + 1 < argc) {
      config.seed = std::stoull(argv[++i]);
    } else {
      std::fprintf(stderr, "die_model_dump: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  const DieModelRun run = RunDieModel(config);

  test::TestDump d;
  d.dict = test::ProduceDictionary({cz_events, cz_nr_events}, false, {cz_cmds, cz_nr_cmds});
  d.nr_cores = 1;
  d.clock_hz = config.clock_hz;
  d.producer_gen = 1;
  d.name = "fwsim-die-model";
  // Tick 0 at 1 s on the local clock; taken after the last record.
  const uint64_t last = run.records.empty() ? 0 : run.records.back().ts;
  const uint64_t ns_per_tick = 1000000000 / config.clock_hz;
  d.taken_ns[HMB_TRACE_CLOCK_LOCAL] = 1000000000 + (last + 1) * ns_per_tick;
  d.clocks.push_back(test::TestFit(HMB_TRACE_CLOCK_LOCAL, d.producer_gen, d.clock_hz, 1000000000));
  uint64_t seq = 0;
  for (const ModelRecord& r : run.records)
    d.records.push_back({0, r.event_id, seq++, r.ts, r.payload});
  const std::vector<uint8_t> bytes = test::WriteDump(d);
  std::ofstream out(argv[1], std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  std::ofstream truth(argv[2]);
  truth << "# qid cid fetch_ticks latency_ticks longest_delay cause delay_ticks\n" << TruthLog(run);
  return out && truth ? 0 : 1;
}
