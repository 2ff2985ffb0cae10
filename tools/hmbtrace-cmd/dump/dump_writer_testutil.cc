// SPDX-License-Identifier: GPL-2.0-only
#include "dump/dump_writer_testutil.h"

#include <algorithm>
#include <cstring>

#include "hmb_clock_fit.h"
#include "hmb_trace_dump_abi.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace::test {
namespace {

void Append16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void Append32(std::vector<uint8_t>& b, uint32_t v) {
  Append16(b, static_cast<uint16_t>(v));
  Append16(b, static_cast<uint16_t>(v >> 16));
}
void Append64(std::vector<uint8_t>& b, uint64_t v) {
  Append32(b, static_cast<uint32_t>(v));
  Append32(b, static_cast<uint32_t>(v >> 32));
}
void Pad8(std::vector<uint8_t>& b) {
  while (b.size() % 8)
    b.push_back(0);
}

struct SectionWriter {
  std::vector<uint8_t>& out;
  DumpLayout* layout;
  uint32_t nr = 0;
  void Add(uint32_t type, uint32_t count, const std::vector<uint8_t>& data) {
    if (layout)
      layout->section[type] = out.size();
    Append32(out, type);
    Append32(out, count);
    Append64(out, data.size());
    out.insert(out.end(), data.begin(), data.end());
    Pad8(out);
    nr++;
  }
};

}  // namespace

void Put64(std::vector<uint8_t>& b, size_t off, uint64_t v) {
  Put32(b, off, static_cast<uint32_t>(v));
  Put32(b, off + 4, static_cast<uint32_t>(v >> 32));
}

std::vector<DumpCore> CoresFor(const TestDump& d) {
  std::vector<DumpCore> cores(d.nr_cores);
  std::vector<bool> seen(d.nr_cores);
  for (uint16_t c = 0; c < d.nr_cores; c++)
    cores[c].core = c;
  auto cover = [&](uint16_t core, uint64_t first, uint64_t end) {
    DumpCore& c = cores.at(core);
    if (!seen[core]) {
      c.start_seq = first;
      c.end_seq = end;
      seen[core] = true;
    }
    c.start_seq = std::min(c.start_seq, first);
    c.end_seq = std::max(c.end_seq, end);
  };
  for (const TestRecord& r : d.records) {
    cover(r.core, r.seq, r.seq + 1);
    cores.at(r.core).records++;
  }
  for (const DumpLost& l : d.lost) {
    cover(l.core, l.at_seq - l.count, l.at_seq);
    cores.at(l.core).lost.at(l.reason) += l.count;
  }
  return cores;
}

DumpClock TestFit(uint32_t clock_id, uint32_t gen, uint64_t clock_hz, uint64_t host_ref) {
  DumpClock c;
  c.clock_id = clock_id;
  c.gen = gen;
  c.fit.tick_ref = 0;
  c.fit.host_ref = host_ref;
  c.fit.mult = hmb_clock_nominal_mult(clock_hz);
  c.fit.slope_err = c.fit.mult / 1000000 + 1;
  c.fit.tick_first = 0;
  c.fit.tick_last = 1000000000;
  c.fit.half_gap = 1000;
  c.fit.err_ns = 200;
  c.fit.rtt_min_ns = 2000;
  c.fit.samples = 16;
  return c;
}

std::vector<uint8_t> WriteDump(const TestDump& d, DumpLayout* layout) {
  std::vector<uint8_t> out(HMB_DUMP_MAGIC_LEN);
  std::memcpy(out.data(), HMB_DUMP_MAGIC, HMB_DUMP_MAGIC_LEN);
  Append32(out, d.version);
  Append32(out, sizeof(hmb_dump_header));
  Append64(out, 0);  // total_len, below
  Append32(out, 0);  // nr_sections, below
  Append32(out, d.reason);
  Append32(out, d.flags);
  Append32(out, d.producer_gen);
  Append16(out, d.nr_cores);
  Append16(out, d.area_index);
  Append32(out, 0);
  Append64(out, d.clock_hz);
  Append64(out, d.record_bound);
  for (uint64_t t : d.taken_ns)
    Append64(out, t);
  Append64(out, d.taken_real_ns);
  Append64(out, d.copy_ns);
  out.insert(out.end(), d.build_id.begin(), d.build_id.end());
  Append32(out, 0);
  std::vector<uint8_t> name(HMB_DUMP_NAME_LEN, 0);
  std::memcpy(name.data(), d.name.data(), std::min<size_t>(d.name.size(), name.size()));
  out.insert(out.end(), name.begin(), name.end());

  SectionWriter w{out, layout};
  w.Add(HMB_DUMP_SEC_META, 0, d.meta);
  w.Add(HMB_DUMP_SEC_CORES, 0, d.cores_desc);
  if (!d.dict.empty())
    w.Add(HMB_DUMP_SEC_DICT, 0, d.dict);
  std::vector<uint8_t> s;
  for (const DumpClock& c : d.clocks) {
    Append32(s, c.clock_id);
    Append32(s, c.flags);
    Append32(s, c.gen);
    Append32(s, 0);
    for (uint64_t v : {c.fit.tick_ref, c.fit.host_ref, c.fit.mult, c.fit.slope_err,
                       c.fit.tick_first, c.fit.tick_last, c.fit.half_gap})
      Append64(s, v);
    Append32(s, c.fit.err_ns);
    Append32(s, c.fit.rtt_min_ns);
    Append32(s, c.fit.samples);
    Append32(s, 0);
  }
  w.Add(HMB_DUMP_SEC_CLOCK, static_cast<uint32_t>(d.clocks.size()), s);
  if ((d.flags & HMB_DUMP_FL_INFLIGHT) || !d.inflight.empty()) {
    s.clear();
    for (const DumpCmd& c : d.inflight) {
      Append16(s, c.qid);
      Append16(s, c.cid);
      s.push_back(c.opcode);
      s.insert(s.end(), 3, 0);
      Append32(s, c.nsid);
      Append32(s, c.nlb);
      Append64(s, c.slba);
      Append64(s, c.submit_ns);
    }
    w.Add(HMB_DUMP_SEC_INFLIGHT,
          d.inflight_count.value_or(static_cast<uint32_t>(d.inflight.size())), s);
  }
  s.clear();
  const std::vector<DumpCore> cores = d.cores.empty() ? CoresFor(d) : d.cores;
  for (const DumpCore& c : cores) {
    Append16(s, c.core);
    Append16(s, 0);
    Append32(s, 0);
    for (uint64_t v : {c.start_seq, c.end_seq, c.records, c.skipped, c.delivered})
      Append64(s, v);
    for (uint64_t v : c.lost)
      Append64(s, v);
  }
  w.Add(HMB_DUMP_SEC_CORE_STATE, static_cast<uint32_t>(cores.size()), s);
  // RECORDS before LOST, as the module writes them.
  s.clear();
  std::vector<size_t> rec_offsets;
  for (const TestRecord& r : d.records) {
    rec_offsets.push_back(s.size());
    Append16(s, r.core);
    Append16(s, r.event_id);
    Append16(s, static_cast<uint16_t>(r.payload.size()));
    Append16(s, 0);
    Append64(s, r.seq);
    Append64(s, r.ts);
    s.insert(s.end(), r.payload.begin(), r.payload.end());
    Pad8(s);
  }
  const size_t records_at = out.size() + kDumpSectionHeaderLen;
  w.Add(HMB_DUMP_SEC_RECORDS, static_cast<uint32_t>(d.records.size()), s);
  if (layout)
    for (size_t o : rec_offsets)
      layout->records.push_back(records_at + o);
  s.clear();
  for (const DumpLost& l : d.lost) {
    Append16(s, l.core);
    s.push_back(l.reason);
    s.push_back(0);
    Append32(s, 0);
    Append64(s, l.count);
    Append64(s, l.at_seq);
  }
  w.Add(HMB_DUMP_SEC_LOST, static_cast<uint32_t>(d.lost.size()), s);
  for (const auto& [type, data] : d.extra_sections)
    w.Add(type, 0, data);
  Put64(out, offsetof(hmb_dump_header, total_len), out.size());
  Put32(out, offsetof(hmb_dump_header, nr_sections), w.nr);
  return out;
}

TestDump SmallDump(const std::vector<uint8_t>& dict) {
  TestDump d;
  d.dict = dict;
  for (size_t i = 0; i < d.build_id.size(); i++)
    d.build_id[i] = static_cast<uint8_t>(0xb0 + i);
  d.taken_ns[HMB_TRACE_CLOCK_LOCAL] = 5000000000;
  d.taken_ns[HMB_TRACE_CLOCK_BOOT] = 7000000000;
  // Tick 0 at 1 s local, 3 s boot; 1 GHz: a tick is a ns.
  d.clocks.push_back(TestFit(HMB_TRACE_CLOCK_LOCAL, d.producer_gen, d.clock_hz, 1000000000));
  d.clocks.push_back(TestFit(HMB_TRACE_CLOCK_BOOT, d.producer_gen, d.clock_hz, 3000000000));
  // Core 0: seqs 10, 11, (12, 13 lost), 14; core 1: 20, 21, 22.
  d.records = {
      {0, 3, 10, 1000, {1, 0, 0, 0}}, {1, 3, 20, 1500, {2, 0, 0, 0}},
      {0, 3, 11, 2000, {3, 0, 0, 0}}, {1, 3, 21, 2500, {4, 0, 0, 0, 5, 6, 7}},
      {0, 3, 14, 3000, {}},           {1, 3, 22, 3500, {9, 0, 0, 0}},
  };
  // Per core in seq order, cores one after the other, as the module writes.
  std::stable_sort(d.records.begin(), d.records.end(),
                   [](const TestRecord& a, const TestRecord& b) { return a.core < b.core; });
  d.lost = {{0, 0, 2, 14}};
  return d;
}

TestDump InflightDump(const std::vector<uint8_t>& dict, std::vector<DumpCmd> cmds) {
  TestDump d = SmallDump(dict);
  d.flags |= HMB_DUMP_FL_INFLIGHT;
  d.taken_ns[HMB_TRACE_CLOCK_MONO] = 9000000000;
  d.inflight = std::move(cmds);
  return d;
}

}  // namespace hmbtrace::test
