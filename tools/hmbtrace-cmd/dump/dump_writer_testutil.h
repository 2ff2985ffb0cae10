// SPDX-License-Identifier: GPL-2.0-only
//
// For tests and the fuzz seeds: a writer of crash dumps in the format
// hmb_trace.ko writes (include/hmb_trace_dump_abi.h), from records, so
// that tests can make good dumps and damage them at known offsets.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_WRITER_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_WRITER_TESTUTIL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "decode_test_util.h"
#include "dump/dump_file.h"

namespace hmbtrace::test {

struct TestRecord {
  uint16_t core = 0;
  uint16_t event_id = 0;
  uint64_t seq = 0;
  uint64_t ts = 0;  // firmware ticks
  std::vector<uint8_t> payload;
};

struct TestDump {
  uint32_t version = 1;
  uint32_t reason = 0;
  uint32_t flags = 1;  // HMB_DUMP_FL_DICT
  uint32_t producer_gen = 3;
  uint16_t nr_cores = 2;
  uint16_t area_index = 0;
  uint64_t clock_hz = 1000000000;
  uint64_t record_bound = 1u << 20;
  std::array<uint64_t, kDumpClocks> taken_ns{};
  uint64_t taken_real_ns = 1764860022123456789ull;  // 2025-12-04 14:53:42.123456789 UTC
  uint64_t copy_ns = 12345;
  std::array<uint8_t, 20> build_id{};
  std::string name = "nvme0";
  std::vector<uint8_t> meta = std::vector<uint8_t>(64, 0xa5);
  std::vector<uint8_t> cores_desc = std::vector<uint8_t>(32, 0x5a);
  std::vector<uint8_t> dict;  // no DICT section if empty
  std::vector<DumpClock> clocks;
  // Empty: made by CoresFor() from the records and losses.
  std::vector<DumpCore> cores;
  std::vector<DumpLost> lost;
  std::vector<TestRecord> records;
  // INFLIGHT, written after CLOCK as the module does, when `flags` has
  // HMB_DUMP_FL_INFLIGHT (1 << 3) or `inflight` is not empty; its count is
  // inflight.size() unless `inflight_count` is set.
  std::vector<DumpCmd> inflight;
  std::optional<uint32_t> inflight_count;
  // Sections of types a reader does not know, written after the others.
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> extra_sections;
};

// Where WriteDump put things.
struct DumpLayout {
  std::map<uint32_t, size_t> section;  // type -> offset of its section header
  std::vector<size_t> records;         // offset of each record's header
};

// Per core of `d` (0 .. nr_cores-1): start_seq the first record's or loss's
// seq (start_seq[core] if given), end_seq one past the last, records,
// skipped none, lost summed by reason: the identity holds.
std::vector<DumpCore> CoresFor(const TestDump& d);

// A fit of the firmware clock to host clock `clock_id` of generation
// `gen`: tick 0 at host_ref ns, at clock_hz exactly.
DumpClock TestFit(uint32_t clock_id, uint32_t gen, uint64_t clock_hz, uint64_t host_ref);

std::vector<uint8_t> WriteDump(const TestDump& d, DumpLayout* layout = nullptr);

// A small dump with every section: 2 cores, a few records each, a loss,
// fits for "local" and "boot", the dictionary `dict`; records are event 3
// of decode_test_util.h's RealisticEvents() (gc_free_blocks, free=u32).
TestDump SmallDump(const std::vector<uint8_t>& dict);

// SmallDump() with HMB_DUMP_FL_INFLIGHT and `cmds` in flight; taken_ns of
// mono 9 s.
TestDump InflightDump(const std::vector<uint8_t>& dict, std::vector<DumpCmd> cmds);

// Put16() and Put32(): decode_test_util.h.
void Put64(std::vector<uint8_t>& b, size_t off, uint64_t v);

}  // namespace hmbtrace::test

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_WRITER_TESTUTIL_H_
