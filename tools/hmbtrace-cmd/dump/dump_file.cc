// SPDX-License-Identifier: GPL-2.0-only
#include "dump/dump_file.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "format.h"
// The ABI header is freestanding: it needs the fixed-width types first.
#include "hmb_trace_dump_abi.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace {

static_assert(sizeof(hmb_dump_header) == kDumpHeaderLen);
static_assert(sizeof(hmb_dump_section) == kDumpSectionHeaderLen);
static_assert(sizeof(hmb_dump_clock) == kDumpClockLen);
static_assert(sizeof(hmb_dump_core) == kDumpCoreLen);
static_assert(sizeof(hmb_dump_lost) == kDumpLostLen);
static_assert(sizeof(hmb_dump_record) == kDumpRecordHeaderLen);
static_assert(sizeof(hmb_dump_cmd) == kDumpCmdLen);
static_assert(offsetof(hmb_dump_cmd, slba) == 16);
static_assert(HMB_DUMP_CLOCKS == kDumpClocks);
static_assert(HMB_LOST_NR <= kDumpLostReasons);
static_assert(HMB_TRACE_CLOCK_NR <= HMB_DUMP_CLOCKS);
static_assert(offsetof(hmb_dump_header, taken_ns) == 64);
static_assert(offsetof(hmb_dump_header, name) == 168);
static_assert(offsetof(hmb_dump_clock, tick_ref) == 16);
static_assert(offsetof(hmb_dump_core, lost) == 48);

namespace {

// Little-endian loads; the caller has bounded `off` by the bytes held.
uint16_t Le16(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint16_t>(b[off] | b[off + 1] << 8);
}
uint32_t Le32(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint32_t>(Le16(b, off)) | static_cast<uint32_t>(Le16(b, off + 2)) << 16;
}
uint64_t Le64(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint64_t>(Le32(b, off)) | static_cast<uint64_t>(Le32(b, off + 4)) << 32;
}

uint64_t Align8(uint64_t v) {
  return (v + (HMB_DUMP_ALIGN - 1)) & ~static_cast<uint64_t>(HMB_DUMP_ALIGN - 1);
}

std::string SectionName(uint32_t type) {
  switch (type) {
    case HMB_DUMP_SEC_META:
      return "META";
    case HMB_DUMP_SEC_CORES:
      return "CORES";
    case HMB_DUMP_SEC_DICT:
      return "DICT";
    case HMB_DUMP_SEC_CLOCK:
      return "CLOCK";
    case HMB_DUMP_SEC_CORE_STATE:
      return "CORE_STATE";
    case HMB_DUMP_SEC_LOST:
      return "LOST";
    case HMB_DUMP_SEC_RECORDS:
      return "RECORDS";
    case HMB_DUMP_SEC_INFLIGHT:
      return "INFLIGHT";
  }
  return "type " + std::to_string(type);
}

struct Section {
  uint64_t header_off = 0;  // of its section header
  uint32_t count = 0;
  std::span<const uint8_t> data;  // bounded by the bytes held
  uint64_t data_off = 0;
  bool cut = false;  // len ran past the end: data is what was held
  uint64_t len = 0;  // as the section header says
};

class Parser {
 public:
  explicit Parser(Dump* d) : d_(d), b_(d->bytes) {}
  Status Run();

 private:
  Status Error(uint64_t off, const std::string& what) const {
    return Status::Error(d_->path + ": offset " + std::to_string(off) + ": " + what);
  }
  void Problem(uint64_t off, const std::string& what) {
    if (d_->problems.size() >= kMaxProblems) {
      d_->problems_left_out++;
      return;
    }
    d_->problems.push_back("offset " + std::to_string(off) + ": " + what);
  }
  Status ParseHeader();
  void ParseSections();
  // The entries a fixed-size section can hold: its count, bounded by its
  // bytes; a difference is a problem and the excess is refused.
  uint64_t Entries(const Section& s, uint32_t type, size_t entry_len, uint64_t* refused);
  // The bytes a section had: its own, or, cut short, what it claims
  // within total_len.
  uint64_t Room(const Section& s) const;
  void ParseCoreState(const Section& s);
  void ParseClocks(const Section& s);
  void ParseLost(const Section& s);
  void ParseRecords(const Section& s);
  void ParseInflight(const Section& s);
  void CheckIdentity();

  Dump* d_;
  std::span<const uint8_t> b_;  // the bytes of the dump: min(held, total_len)
  std::map<uint32_t, Section> sections_;
  std::map<uint16_t, size_t> core_index_;  // core -> d_->cores index
};

Status Parser::Run() {
  if (Status s = ParseHeader(); !s.ok())
    return s;
  ParseSections();
  if (auto it = sections_.find(HMB_DUMP_SEC_CORE_STATE); it != sections_.end())
    ParseCoreState(it->second);
  else if (d_->header.nr_cores)
    Problem(d_->header.header_len, "no CORE_STATE section: no record can be placed");
  if (auto it = sections_.find(HMB_DUMP_SEC_CLOCK); it != sections_.end())
    ParseClocks(it->second);
  if (auto it = sections_.find(HMB_DUMP_SEC_LOST); it != sections_.end())
    ParseLost(it->second);
  if (auto it = sections_.find(HMB_DUMP_SEC_RECORDS); it != sections_.end())
    ParseRecords(it->second);
  if (auto it = sections_.find(HMB_DUMP_SEC_INFLIGHT); it != sections_.end())
    ParseInflight(it->second);
  if (auto it = sections_.find(HMB_DUMP_SEC_META); it != sections_.end())
    d_->meta = it->second.data;
  if (auto it = sections_.find(HMB_DUMP_SEC_CORES); it != sections_.end())
    d_->cores_desc = it->second.data;
  if (auto it = sections_.find(HMB_DUMP_SEC_DICT); it != sections_.end()) {
    // A DICT cut short is not the dictionary: every record would decode wrong.
    if (it->second.cut)
      Problem(it->second.header_off, "DICT cut short: not used");
    else
      d_->dict = it->second.data;
  }
  CheckIdentity();
  return {};
}

Status Parser::ParseHeader() {
  const size_t held = b_.size();
  if (!HasDumpMagic(b_))
    return Error(0, "not a crash dump of an HMB trace area (no \"" HMB_DUMP_MAGIC "\" magic)");
  if (held < offsetof(hmb_dump_header, total_len))
    return Error(held, "cut short: " + std::to_string(held) + " bytes, the header needs " +
                           std::to_string(kDumpHeaderLen));
  DumpHeader& h = d_->header;
  h.version = Le32(b_, offsetof(hmb_dump_header, version));
  h.header_len = Le32(b_, offsetof(hmb_dump_header, header_len));
  if (h.version > HMB_DUMP_VERSION)
    return Error(offsetof(hmb_dump_header, version),
                 "dump format version " + std::to_string(h.version) +
                     ", newer than this hmbtrace-cmd reads (" + std::to_string(HMB_DUMP_VERSION) +
                     "): read it with a newer hmbtrace-cmd");
  if (h.version == 0)
    return Error(offsetof(hmb_dump_header, version), "dump format version 0: not a dump");
  if (held < kDumpHeaderLen)
    return Error(held, "cut short: " + std::to_string(held) + " bytes, the header needs " +
                           std::to_string(kDumpHeaderLen));
  // A later version may grow the header; version 1's is exactly 200 bytes,
  // and sections start on the 8-byte grid.
  if (h.header_len < kDumpHeaderLen)
    return Error(offsetof(hmb_dump_header, header_len),
                 "header_len " + std::to_string(h.header_len) + " is smaller than the header (" +
                     std::to_string(kDumpHeaderLen) + ")");
  if (h.header_len % HMB_DUMP_ALIGN)
    return Error(offsetof(hmb_dump_header, header_len),
                 "header_len " + std::to_string(h.header_len) +
                     " is not a multiple of 8: sections would be off the 8-byte grid");
  if (h.header_len > held)
    return Error(held, "cut short: header_len is " + std::to_string(h.header_len) +
                           ", the file holds " + std::to_string(held) + " bytes");
  h.total_len = Le64(b_, offsetof(hmb_dump_header, total_len));
  h.nr_sections = Le32(b_, offsetof(hmb_dump_header, nr_sections));
  h.reason = Le32(b_, offsetof(hmb_dump_header, reason));
  h.flags = Le32(b_, offsetof(hmb_dump_header, flags));
  h.producer_gen = Le32(b_, offsetof(hmb_dump_header, producer_gen));
  h.nr_cores = Le16(b_, offsetof(hmb_dump_header, nr_cores));
  h.area_index = Le16(b_, offsetof(hmb_dump_header, area_index));
  h.clock_hz = Le64(b_, offsetof(hmb_dump_header, clock_hz));
  h.record_bound = Le64(b_, offsetof(hmb_dump_header, record_bound));
  for (size_t i = 0; i < kDumpClocks; i++)
    h.taken_ns[i] = Le64(b_, offsetof(hmb_dump_header, taken_ns) + 8 * i);
  h.taken_real_ns = Le64(b_, offsetof(hmb_dump_header, taken_real_ns));
  h.copy_ns = Le64(b_, offsetof(hmb_dump_header, copy_ns));
  std::memcpy(h.build_id.data(), b_.data() + offsetof(hmb_dump_header, build_id),
              h.build_id.size());
  const char* name = reinterpret_cast<const char*>(b_.data() + offsetof(hmb_dump_header, name));
  h.name.assign(name, strnlen(name, HMB_DUMP_NAME_LEN));
  if (h.total_len < h.header_len)
    return Error(offsetof(hmb_dump_header, total_len), "total_len " + std::to_string(h.total_len) +
                                                           " is smaller than header_len " +
                                                           std::to_string(h.header_len));
  if (h.total_len > held) {
    d_->truncated = true;
    Problem(held, "cut short: total_len is " + std::to_string(h.total_len) + ", the file holds " +
                      std::to_string(held) + " bytes");
  } else if (h.total_len < held) {
    Problem(h.total_len, std::to_string(held - h.total_len) +
                             " bytes past total_len: not part of the dump, ignored");
    b_ = b_.first(h.total_len);
  }
  return {};
}

void Parser::ParseSections() {
  const uint64_t end = b_.size();
  uint64_t off = d_->header.header_len;
  for (uint32_t i = 0; i < d_->header.nr_sections; i++) {
    if (off > end || end - off < kDumpSectionHeaderLen) {
      d_->refused.sections_missing = d_->header.nr_sections - i;
      Problem(off, "cut short: " + std::to_string(d_->header.nr_sections - i) + " of " +
                       std::to_string(d_->header.nr_sections) + " sections not held");
      return;
    }
    Section s;
    s.header_off = off;
    const uint32_t type = Le32(b_, off);
    s.count = Le32(b_, off + 4);
    const uint64_t len = Le64(b_, off + 8);
    s.data_off = off + kDumpSectionHeaderLen;
    s.len = len;
    const uint64_t room = end - s.data_off;
    const std::string name = SectionName(type);
    if (len > room) {
      d_->refused.sections_bad++;
      Problem(off, "section " + name + ": len " + std::to_string(len) + " runs past the end (" +
                       std::to_string(room) + " bytes held after its header)");
      // What it holds is still worth its records; nothing can follow it.
      s.cut = true;
      s.data = b_.subspan(s.data_off, room);
      if (type == HMB_DUMP_SEC_RECORDS || type == HMB_DUMP_SEC_DICT ||
          type == HMB_DUMP_SEC_INFLIGHT)
        sections_.try_emplace(type, s);
      if (i + 1 < d_->header.nr_sections)
        d_->refused.sections_missing = d_->header.nr_sections - i - 1;
      return;
    }
    s.data = b_.subspan(s.data_off, len);
    if (type < HMB_DUMP_SEC_META || type > HMB_DUMP_SEC_INFLIGHT) {
      d_->refused.sections_unknown++;  // a newer module's: skipped, as the ABI says
    } else if (!sections_.try_emplace(type, s).second) {
      d_->refused.sections_duplicate++;
      Problem(off, "a second " + name + " section: skipped");
    }
    off = Align8(s.data_off + len);
  }
}

uint64_t Parser::Room(const Section& s) const {
  if (!s.cut)
    return s.data.size();
  return std::min<uint64_t>(s.len, d_->header.total_len - s.data_off);
}

uint64_t Parser::Entries(const Section& s, uint32_t type, size_t entry_len, uint64_t* refused) {
  const uint64_t fit = s.data.size() / entry_len;
  if (!s.cut && static_cast<uint64_t>(s.count) * entry_len != s.data.size()) {
    Problem(s.header_off, "section " + SectionName(type) + ": count " + std::to_string(s.count) +
                              " x " + std::to_string(entry_len) + " bytes is not its len " +
                              std::to_string(s.data.size()));
    if (fit < s.count)
      d_->refused.sections_bad++;
  }
  // Entries a cut section had and the file lost are refused; a count
  // its own bytes could never hold is a lie, not entries.
  const uint64_t claimed = std::min<uint64_t>(s.count, Room(s) / entry_len);
  if (fit < claimed)
    *refused += claimed - fit;
  return std::min<uint64_t>(s.count, fit);
}

void Parser::ParseCoreState(const Section& s) {
  const uint64_t n = Entries(s, HMB_DUMP_SEC_CORE_STATE, kDumpCoreLen, &d_->refused.cores);
  for (uint64_t i = 0; i < n; i++) {
    const size_t at = i * kDumpCoreLen;
    const uint64_t off = s.data_off + at;
    DumpCore c;
    c.core = Le16(s.data, at + offsetof(hmb_dump_core, core));
    c.start_seq = Le64(s.data, at + offsetof(hmb_dump_core, start_seq));
    c.end_seq = Le64(s.data, at + offsetof(hmb_dump_core, end_seq));
    c.records = Le64(s.data, at + offsetof(hmb_dump_core, records));
    c.skipped = Le64(s.data, at + offsetof(hmb_dump_core, skipped));
    c.delivered = Le64(s.data, at + offsetof(hmb_dump_core, delivered));
    for (size_t r = 0; r < kDumpLostReasons; r++)
      c.lost[r] = Le64(s.data, at + offsetof(hmb_dump_core, lost) + 8 * r);
    if (c.core >= d_->header.nr_cores) {
      d_->refused.cores++;
      Problem(off, "core " + std::to_string(c.core) + " of a producer of " +
                       std::to_string(d_->header.nr_cores) + " cores: refused");
      continue;
    }
    if (!core_index_.try_emplace(c.core, d_->cores.size()).second) {
      d_->refused.cores++;
      Problem(off, "core " + std::to_string(c.core) + " described twice: refused");
      continue;
    }
    if (c.end_seq < c.start_seq)
      Problem(off, "core " + std::to_string(c.core) + ": end_seq " + std::to_string(c.end_seq) +
                       " before start_seq " + std::to_string(c.start_seq));
    d_->cores.push_back(c);
  }
}

void Parser::ParseClocks(const Section& s) {
  const uint64_t n = Entries(s, HMB_DUMP_SEC_CLOCK, kDumpClockLen, &d_->refused.clocks);
  for (uint64_t i = 0; i < n; i++) {
    const size_t at = i * kDumpClockLen;
    DumpClock c;
    c.clock_id = Le32(s.data, at + offsetof(hmb_dump_clock, clock_id));
    c.flags = Le32(s.data, at + offsetof(hmb_dump_clock, flags));
    c.gen = Le32(s.data, at + offsetof(hmb_dump_clock, gen));
    struct hmb_clock_fit& f = c.fit;
    f.tick_ref = Le64(s.data, at + offsetof(hmb_dump_clock, tick_ref));
    f.host_ref = Le64(s.data, at + offsetof(hmb_dump_clock, host_ref));
    f.mult = Le64(s.data, at + offsetof(hmb_dump_clock, mult));
    f.slope_err = Le64(s.data, at + offsetof(hmb_dump_clock, slope_err));
    f.tick_first = Le64(s.data, at + offsetof(hmb_dump_clock, tick_first));
    f.tick_last = Le64(s.data, at + offsetof(hmb_dump_clock, tick_last));
    f.half_gap = Le64(s.data, at + offsetof(hmb_dump_clock, half_gap));
    f.err_ns = Le32(s.data, at + offsetof(hmb_dump_clock, err_ns));
    f.rtt_min_ns = Le32(s.data, at + offsetof(hmb_dump_clock, rtt_min_ns));
    f.samples = Le32(s.data, at + offsetof(hmb_dump_clock, samples));
    if (c.clock_id >= HMB_TRACE_CLOCK_NR) {
      d_->refused.clocks++;
      Problem(s.data_off + at,
              "clock fit of unknown trace clock " + std::to_string(c.clock_id) + ": refused");
      continue;
    }
    d_->clocks.push_back(c);
  }
}

void Parser::ParseLost(const Section& s) {
  const uint64_t n = Entries(s, HMB_DUMP_SEC_LOST, kDumpLostLen, &d_->refused.lost);
  std::map<uint16_t, uint64_t> last_at;
  for (uint64_t i = 0; i < n; i++) {
    const size_t at = i * kDumpLostLen;
    const uint64_t off = s.data_off + at;
    DumpLost l;
    l.core = Le16(s.data, at + offsetof(hmb_dump_lost, core));
    l.reason = s.data[at + offsetof(hmb_dump_lost, reason)];
    l.count = Le64(s.data, at + offsetof(hmb_dump_lost, count));
    l.at_seq = Le64(s.data, at + offsetof(hmb_dump_lost, at_seq));
    std::string why;
    const DumpCore* c = d_->Core(l.core);
    if (!c)
      why = "core " + std::to_string(l.core) + " is not in CORE_STATE";
    else if (l.reason >= HMB_LOST_NR)
      why = "reason " + std::to_string(l.reason) + " unknown";
    else if (l.count == 0 || l.count > c->end_seq - c->start_seq)
      why = "count " + std::to_string(l.count) + " outside the core's " +
            std::to_string(c->end_seq - c->start_seq) + " sequence numbers";
    else if (l.at_seq <= c->start_seq || l.at_seq > c->end_seq)
      why = "at_seq " + std::to_string(l.at_seq) + " outside (" + std::to_string(c->start_seq) +
            ", " + std::to_string(c->end_seq) + "]";
    else if (auto it = last_at.find(l.core); it != last_at.end() && l.at_seq < it->second)
      why = "at_seq " + std::to_string(l.at_seq) + " before the core's previous loss";
    if (!why.empty()) {
      d_->refused.lost++;
      Problem(off, "loss of core " + std::to_string(l.core) + ": " + why + ": refused");
      continue;
    }
    last_at[l.core] = l.at_seq;
    d_->lost.push_back(l);
  }
}

void Parser::ParseRecords(const Section& s) {
  const size_t end = s.data.size();
  // A record takes 24 bytes at least: a count above that is not believed.
  const uint64_t possible = Room(s) / kDumpRecordHeaderLen;
  uint64_t count = s.count;
  if (count > possible) {
    Problem(s.header_off, "section RECORDS: count " + std::to_string(count) +
                              " cannot fit in its " + std::to_string(Room(s)) + " bytes");
    count = possible;
    if (!s.cut)
      d_->refused.sections_bad++;
  }
  // Only what the bytes held can make: the claim may be far larger.
  d_->records.reserve(std::min<uint64_t>(count, end / kDumpRecordHeaderLen));
  std::map<uint16_t, uint64_t> next_seq;  // per core: the lowest seq a record may have
  uint64_t refused_shown = 0;
  size_t at = 0;
  for (uint64_t i = 0; i < count; i++) {
    const uint64_t off = s.data_off + at;
    if (end - at < kDumpRecordHeaderLen) {
      d_->refused.records += count - i;
      Problem(off, "section RECORDS: cut short: " + std::to_string(count - i) + " of " +
                       std::to_string(s.count) + " records not held");
      return;
    }
    DumpRecord r;
    r.core = Le16(s.data, at + offsetof(hmb_dump_record, core));
    r.event_id = Le16(s.data, at + offsetof(hmb_dump_record, event_id));
    r.len = Le16(s.data, at + offsetof(hmb_dump_record, len));
    r.seq = Le64(s.data, at + offsetof(hmb_dump_record, seq));
    r.ts = Le64(s.data, at + offsetof(hmb_dump_record, ts));
    if (end - at - kDumpRecordHeaderLen < r.len) {
      d_->refused.records += count - i;
      Problem(off, "record " + std::to_string(i) + ": len " + std::to_string(r.len) +
                       " runs past the end of RECORDS: it and the " +
                       std::to_string(count - i - 1) + " after it refused");
      return;
    }
    r.payload_offset = s.data_off + at + kDumpRecordHeaderLen;
    // The next record starts on the 8-byte grid; the padding may be missing
    // after the last one only.
    const size_t next = at + kDumpRecordHeaderLen + r.len;
    at = std::min<size_t>(end, Align8(next));
    std::string why;
    const DumpCore* c = d_->Core(r.core);
    if (!c) {
      why = "core " + std::to_string(r.core) + " is not in CORE_STATE";
    } else if (r.seq < c->start_seq || r.seq >= c->end_seq) {
      why = "seq " + std::to_string(r.seq) + " outside [" + std::to_string(c->start_seq) + ", " +
            std::to_string(c->end_seq) + ")";
    } else if (auto it = next_seq.find(r.core); it != next_seq.end() && r.seq < it->second) {
      why = "seq " + std::to_string(r.seq) + " not after the core's previous record";
    }
    if (!why.empty()) {
      d_->refused.records++;
      if (refused_shown++ < 8)
        Problem(off, "record of core " + std::to_string(r.core) + ": " + why + ": refused");
      continue;
    }
    next_seq[r.core] = r.seq + 1;
    d_->records.push_back(r);
  }
}

constexpr uint64_t kSubmitSlackNs = 1000000000;

void Parser::ParseInflight(const Section& s) {
  const uint64_t n = Entries(s, HMB_DUMP_SEC_INFLIGHT, kDumpCmdLen, &d_->refused.inflight);
  const uint64_t taken_mono = d_->header.taken_ns[HMB_TRACE_CLOCK_MONO];
  std::map<uint32_t, uint64_t> seen;  // qid << 16 | cid -> offset
  for (uint64_t i = 0; i < n; i++) {
    const size_t at = i * kDumpCmdLen;
    const uint64_t off = s.data_off + at;
    DumpCmd c;
    c.qid = Le16(s.data, at + offsetof(hmb_dump_cmd, qid));
    c.cid = Le16(s.data, at + offsetof(hmb_dump_cmd, cid));
    c.opcode = s.data[at + offsetof(hmb_dump_cmd, opcode)];
    c.nsid = Le32(s.data, at + offsetof(hmb_dump_cmd, nsid));
    c.nlb = Le32(s.data, at + offsetof(hmb_dump_cmd, nlb));
    c.slba = Le64(s.data, at + offsetof(hmb_dump_cmd, slba));
    c.submit_ns = Le64(s.data, at + offsetof(hmb_dump_cmd, submit_ns));
    std::string why;
    // One command holds a (qid, cid) until it completes: a second is not
    // in flight at the same time.
    if (auto [it, fresh] = seen.try_emplace(uint32_t{c.qid} << 16 | c.cid, off); !fresh)
      why = "the same qid and cid as the command at offset " + std::to_string(it->second);
    // The module stamps the dump after listing them; the block layer's
    // clock (ktime_get_ns) and the stamp's (the fast mono accessor) may
    // disagree by a little, never by a second.
    else if (taken_mono && c.submit_ns > taken_mono + kSubmitSlackNs)
      why = "submit_ns " + std::to_string(c.submit_ns) + " more than 1 s after the dump (mono " +
            std::to_string(taken_mono) + ")";
    if (!why.empty()) {
      d_->refused.inflight++;
      Problem(off, "command in flight qid " + std::to_string(c.qid) + " cid " +
                       std::to_string(c.cid) + ": " + why + ": refused");
      continue;
    }
    d_->inflight.push_back(c);
  }
}

void Parser::CheckIdentity() {
  for (const DumpCore& c : d_->cores) {
    DumpIdentity id;
    id.core = c.core;
    d_->identity.push_back(id);
  }
  for (const DumpRecord& r : d_->records)
    d_->identity[core_index_.at(r.core)].records_held++;
  for (const DumpLost& l : d_->lost) {
    uint64_t& held = d_->identity[core_index_.at(l.core)].lost_held[l.reason];
    held = held + l.count < held ? UINT64_MAX : held + l.count;  // saturated
  }
  for (size_t i = 0; i < d_->cores.size(); i++) {
    const DumpCore& c = d_->cores[i];
    DumpIdentity& id = d_->identity[i];
    const std::string core = "core " + std::to_string(c.core) + ": ";
    unsigned __int128 sum = static_cast<unsigned __int128>(c.records) + c.skipped;
    for (uint64_t l : c.lost)
      sum += l;
    std::string lost_text;
    for (size_t r = 0; r < kDumpLostReasons; r++)
      lost_text += (r ? "+" : "") + std::to_string(c.lost[r]);
    if (c.end_seq < c.start_seq || sum != c.end_seq - c.start_seq) {
      id.holds = false;
      id.problem = core + "end_seq - start_seq = " + std::to_string(c.end_seq) + " - " +
                   std::to_string(c.start_seq) + " = " +
                   (c.end_seq < c.start_seq ? std::string("negative")
                                            : std::to_string(c.end_seq - c.start_seq)) +
                   ", but records + skipped + lost = " + std::to_string(c.records) + " + " +
                   std::to_string(c.skipped) + " + (" + lost_text + ")";
    } else if (id.records_held != c.records) {
      id.holds = false;
      id.problem = core + "RECORDS holds " + std::to_string(id.records_held) +
                   " of its records, CORE_STATE says " + std::to_string(c.records);
    } else if (id.lost_held != c.lost) {
      id.holds = false;
      std::string held_text;
      for (size_t r = 0; r < kDumpLostReasons; r++)
        held_text += (r ? "+" : "") + std::to_string(id.lost_held[r]);
      id.problem = core + "LOST holds (" + held_text + ") lost by reason, CORE_STATE says (" +
                   lost_text + ")";
    }
    if (!id.holds)
      Problem(0, "identity broken: " + id.problem);
  }
}

}  // namespace

bool HasDumpMagic(std::span<const uint8_t> bytes) {
  return bytes.size() >= HMB_DUMP_MAGIC_LEN &&
         std::memcmp(bytes.data(), HMB_DUMP_MAGIC, HMB_DUMP_MAGIC_LEN) == 0;
}

bool IsDumpFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  uint8_t magic[HMB_DUMP_MAGIC_LEN];
  const size_t n = std::fread(magic, 1, sizeof(magic), f);
  std::fclose(f);
  return HasDumpMagic(std::span<const uint8_t>(magic, n));
}

const DumpCore* Dump::Core(uint16_t core) const {
  for (const DumpCore& c : cores)
    if (c.core == core)
      return &c;
  return nullptr;
}

bool Dump::identity_holds() const {
  for (const DumpIdentity& id : identity)
    if (!id.holds)
      return false;
  return true;
}

std::string DumpReasonName(uint32_t reason) {
  switch (reason) {
    case HMB_DUMP_REASON_DISABLING:
      return "disabling";
    case HMB_DUMP_REASON_REMOVED:
      return "removed";
    case HMB_DUMP_REASON_FW_RESTART:
      return "fw_restart";
    case HMB_DUMP_REASON_FW_FREEZE:
      return "fw_freeze";
  }
  return "reason " + std::to_string(reason);
}

std::string DumpFlagsText(uint32_t flags) {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : ",") + s; };
  if (flags & HMB_DUMP_FL_DICT)
    add("dict");
  if (flags & HMB_DUMP_FL_TRUNCATED)
    add("truncated");
  if (flags & HMB_DUMP_FL_INFLIGHT)
    add("inflight");
  if (flags & HMB_DUMP_FL_INFLIGHT_PARTIAL)
    add("inflight_partial");
  const uint32_t rest = flags & ~(HMB_DUMP_FL_DICT | HMB_DUMP_FL_TRUNCATED |
                                  HMB_DUMP_FL_INFLIGHT |
                                  HMB_DUMP_FL_INFLIGHT_PARTIAL);
  if (rest) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%x", rest);
    add(buf);
  }
  return out.empty() ? "none" : out;
}

Result<Dump> ParseDump(std::vector<uint8_t> bytes, std::string path) {
  Dump d;
  d.path = std::move(path);
  d.bytes = std::move(bytes);
  Parser parser(&d);
  if (Status s = parser.Run(); !s.ok())
    return s;
  return d;
}

Result<Dump> ReadDumpFile(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f)
    return Status::Error(path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buf[1 << 16];
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof(buf), f.get());
    if (n == 0)
      break;
    if (bytes.size() + n > kMaxDumpBytes)
      return Status::Error(path + ": larger than " + std::to_string(kMaxDumpBytes) +
                           " bytes: not a crash dump hmbtrace-cmd reads");
    bytes.insert(bytes.end(), buf, buf + n);
  }
  if (std::ferror(f.get()))
    return Status::Error(path + ": read error: " + std::strerror(errno));
  return ParseDump(std::move(bytes), path);
}

}  // namespace hmbtrace
