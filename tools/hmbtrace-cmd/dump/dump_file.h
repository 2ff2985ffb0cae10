// SPDX-License-Identifier: GPL-2.0-only
//
// A crash dump of an HMB trace area (include/hmb_trace_dump_abi.h), read as
// hostile input: what hmb_trace.ko hands to devcoredump is a copy of what
// a device wrote, and a file may be cut short or damaged on its way.
//
// The parser is a pure function over the bytes. Every length, count and
// offset is bounded by the bytes held before anything is read or
// allocated. A dump whose header cannot be trusted (too short, not the
// magic, a newer version, a header_len or section start off the 8-byte
// grid) is an error naming the file, the offset and what was wrong. Past
// the header, a damaged section costs what it holds, not the dump: the
// entries that validate are kept, the rest counted as refused by kind, and
// each problem is kept as a line naming its offset (Dump::problems).
//
// Invariants of a parsed Dump: every record's payload lies inside `bytes`;
// records are those of a core the CORE_STATE section describes, in that
// core's sequence order, with seq in [start_seq, end_seq); losses likewise
// with at_seq in (start_seq, end_seq]; clocks have a known clock id;
// commands in flight have a unique (qid, cid) and, when the dump has its
// mono time, were not submitted after it.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_FILE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_FILE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hmb_clock_fit.h"
#include "hmbtrace/status.h"

namespace hmbtrace {

// The ABI's sizes, for readers that do not include it.
inline constexpr size_t kDumpHeaderLen = 200;
inline constexpr size_t kDumpSectionHeaderLen = 16;
inline constexpr size_t kDumpClockLen = 88;
inline constexpr size_t kDumpCoreLen = 80;
inline constexpr size_t kDumpLostLen = 24;
inline constexpr size_t kDumpRecordHeaderLen = 24;
inline constexpr size_t kDumpCmdLen = 32;
inline constexpr size_t kDumpLostReasons = 4;
inline constexpr size_t kDumpClocks = 8;
// The largest dump read: far above any record bound the module sets.
inline constexpr uint64_t kMaxDumpBytes = 1ull << 32;

// True if `bytes` start with HMB_DUMP_MAGIC.
bool HasDumpMagic(std::span<const uint8_t> bytes);
// True if the file at `path` starts with HMB_DUMP_MAGIC (false if it
// cannot be read).
bool IsDumpFile(const std::string& path);

struct DumpHeader {
  uint32_t version = 0;
  uint32_t header_len = 0;
  uint64_t total_len = 0;
  uint32_t nr_sections = 0;
  uint32_t reason = 0;
  uint32_t flags = 0;
  uint32_t producer_gen = 0;
  uint16_t nr_cores = 0;
  uint16_t area_index = 0;
  uint64_t clock_hz = 0;
  uint64_t record_bound = 0;
  std::array<uint64_t, kDumpClocks> taken_ns{};
  uint64_t taken_real_ns = 0;
  uint64_t copy_ns = 0;
  std::array<uint8_t, 20> build_id{};
  std::string name;  // up to the first NUL, as held (may hold any byte)
};

struct DumpClock {
  uint32_t clock_id = 0;  // enum hmb_trace_clock_id
  uint32_t flags = 0;     // HMB_CLOCK_FL_*
  uint32_t gen = 0;
  struct hmb_clock_fit fit {};
};

struct DumpCore {
  uint16_t core = 0;
  uint64_t start_seq = 0;
  uint64_t end_seq = 0;
  uint64_t records = 0;
  uint64_t skipped = 0;
  uint64_t delivered = 0;
  std::array<uint64_t, kDumpLostReasons> lost{};
};

struct DumpLost {
  uint16_t core = 0;
  uint8_t reason = 0;
  uint64_t count = 0;
  uint64_t at_seq = 0;
};

// A host command in flight when the dump was taken (INFLIGHT).
struct DumpCmd {
  uint16_t qid = 0;  // 0: admin
  uint16_t cid = 0;
  uint8_t opcode = 0;
  uint32_t nsid = 0;
  uint32_t nlb = 0;
  uint64_t slba = 0;
  uint64_t submit_ns = 0;  // CLOCK_MONOTONIC (HMB_TRACE_CLOCK_MONO); 0: unknown
};

struct DumpRecord {
  uint16_t core = 0;
  uint16_t event_id = 0;
  uint16_t len = 0;
  uint64_t seq = 0;
  uint64_t ts = 0;            // firmware ticks
  size_t payload_offset = 0;  // into Dump::bytes; len bytes
};

// Per core: end_seq - start_seq == records + skipped + sum(lost), and the
// RECORDS and LOST sections hold what CORE_STATE says they hold.
struct DumpIdentity {
  uint16_t core = 0;
  bool holds = true;
  // What the sections hold of the core (after refusals).
  uint64_t records_held = 0;
  std::array<uint64_t, kDumpLostReasons> lost_held{};
  std::string problem;  // when !holds: the figures
};

// What was refused, by kind (each also has a line in Dump::problems,
// except records and losses past the first few of a kind).
struct DumpRefused {
  uint64_t sections_unknown = 0;    // skipped: a type this reader does not know
  uint64_t sections_duplicate = 0;  // a second section of a type: skipped
  uint64_t sections_bad = 0;        // length past the end, or entries that do not fit
  uint64_t sections_missing = 0;    // nr_sections said more than the bytes held
  uint64_t clocks = 0;
  uint64_t cores = 0;
  uint64_t lost = 0;
  uint64_t records = 0;
  uint64_t inflight = 0;
  uint64_t total() const {
    return sections_bad + sections_missing + clocks + cores + lost + records + inflight;
  }
};

// Move-only: the spans point into `bytes`.
struct Dump {
  Dump() = default;
  Dump(Dump&&) = default;
  Dump& operator=(Dump&&) = default;
  Dump(const Dump&) = delete;
  Dump& operator=(const Dump&) = delete;

  std::string path;  // for messages
  std::vector<uint8_t> bytes;
  DumpHeader header;
  std::span<const uint8_t> meta;  // into bytes; empty if absent
  std::span<const uint8_t> cores_desc;
  std::span<const uint8_t> dict;  // empty if absent
  bool truncated = false;         // fewer bytes than total_len
  std::vector<DumpClock> clocks;
  std::vector<DumpCore> cores;         // in CORE_STATE order, each core once
  std::vector<DumpLost> lost;          // in section order: per core, by at_seq
  std::vector<DumpRecord> records;     // per core in seq order, cores one after another
  std::vector<DumpIdentity> identity;  // one per cores[i]
  // INFLIGHT in section order: (qid, cid) unique. Meaningful only with
  // HMB_DUMP_FL_INFLIGHT in the header's flags (INFLIGHT_PARTIAL: the
  // host had more in flight than the section holds).
  std::vector<DumpCmd> inflight;
  DumpRefused refused;
  // What was wrong, one line each: "offset N: ..." (kMaxProblems at most).
  std::vector<std::string> problems;
  uint64_t problems_left_out = 0;

  std::span<const uint8_t> Payload(const DumpRecord& r) const {
    return std::span<const uint8_t>(bytes).subspan(r.payload_offset, r.len);
  }
  const DumpCore* Core(uint16_t core) const;
  bool identity_holds() const;
};

inline constexpr size_t kMaxProblems = 64;

// "disabling", "removed", "fw_restart" or "fw_freeze" (or "reason N").
std::string DumpReasonName(uint32_t reason);
// "dict,truncated" ... of HMB_DUMP_FL_* ("none" if 0; unknown bits as hex).
std::string DumpFlagsText(uint32_t flags);

// Parses `bytes` (a dump read from `path`). An error names the path, the
// offset and what was wrong.
Result<Dump> ParseDump(std::vector<uint8_t> bytes, std::string path);
// Reads the file and parses it.
Result<Dump> ReadDumpFile(const std::string& path);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_FILE_H_
