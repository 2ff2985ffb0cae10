// SPDX-License-Identifier: GPL-2.0-only
//
// For the printf tests: a firmware's trace area, as producer/printf's
// sample firmware writes it into a file, made a crash dump in the format
// hmb_trace.ko writes (dump/dump_writer_testutil.h), so that report, stat
// and export read it as they read a dump taken from a device: its meta
// page, build id and dictionary as the area has them, its records as the
// producer wrote them, one clock fit ("local", tick 0 at 1 s).
//
//   printf_area_dump AREA OUT.hmbdump
//
// The area is the sample's: complete, not being written; pages are taken
// in page_seq order per core, every committed record of each.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "dump/dump_writer_testutil.h"
#include "hmb_trace_abi.h"
#include "hmb_trace_events_abi.h"

namespace {

template <typename T>
T Get(const std::vector<uint8_t>& b, uint64_t off) {
  T v{};
  if (off <= b.size() && sizeof(T) <= b.size() - off) std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

int Run(const char* in_path, const char* out_path) {
  std::ifstream in(in_path, std::ios::binary);
  const std::vector<uint8_t> a{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (a.size() < sizeof(hmb_trace_meta) ||
      Get<uint32_t>(a, offsetof(hmb_trace_meta, magic)) != HMB_TRACE_MAGIC) {
    std::fprintf(stderr, "%s: not a trace area\n", in_path);
    return 1;
  }
  using hmbtrace::test::TestDump;
  TestDump d;
  d.producer_gen = Get<uint32_t>(a, offsetof(hmb_trace_meta, producer_gen));
  d.nr_cores = Get<uint16_t>(a, offsetof(hmb_trace_meta, nr_cores));
  d.clock_hz = Get<uint64_t>(a, offsetof(hmb_trace_meta, clock_hz));
  std::memcpy(d.build_id.data(), a.data() + offsetof(hmb_trace_meta, build_id), d.build_id.size());
  const uint32_t page_size = Get<uint32_t>(a, offsetof(hmb_trace_meta, page_size));
  const uint32_t ppc = Get<uint32_t>(a, offsetof(hmb_trace_meta, pages_per_core));
  const uint64_t ring = Get<uint64_t>(a, offsetof(hmb_trace_meta, ring_offset));
  const uint64_t dict = Get<uint64_t>(a, offsetof(hmb_trace_meta, dict_offset));
  const uint32_t meta_len = Get<uint32_t>(a, offsetof(hmb_trace_meta, meta_len));
  const uint32_t core_off = Get<uint32_t>(a, offsetof(hmb_trace_meta, core_offset));
  const uint32_t dict_total = Get<uint32_t>(a, dict + offsetof(hmb_trace_dict_header, total_len));
  if (!page_size || d.nr_cores > HMB_TRACE_MAX_CORES || dict_total > a.size() - dict ||
      ring + uint64_t{d.nr_cores} * ppc * page_size > a.size()) {
    std::fprintf(stderr, "%s: bad geometry\n", in_path);
    return 1;
  }
  d.meta.assign(a.begin(), a.begin() + meta_len);
  d.cores_desc.assign(a.begin() + core_off,
                      a.begin() + core_off + d.nr_cores * sizeof(hmb_trace_core));
  d.dict.assign(a.begin() + dict, a.begin() + dict + dict_total);
  d.clocks.push_back(hmbtrace::test::TestFit(HMB_TRACE_CLOCK_LOCAL, d.producer_gen, d.clock_hz,
                                             1000000000));
  for (uint16_t core = 0; core < d.nr_cores; core++) {
    std::map<uint64_t, uint64_t> pages;  // page_seq -> offset
    for (uint32_t slot = 0; slot < ppc; slot++) {
      const uint64_t pg = ring + (uint64_t{core} * ppc + slot) * page_size;
      if (Get<uint32_t>(a, pg + offsetof(hmb_trace_page_header, producer_gen)) == d.producer_gen)
        pages[Get<uint64_t>(a, pg + offsetof(hmb_trace_page_header, page_seq))] = pg;
    }
    for (const auto& [page_seq, pg] : pages) {
      const uint32_t commit = Get<uint32_t>(a, pg + offsetof(hmb_trace_page_header, commit));
      const uint64_t base_ts = Get<uint64_t>(a, pg + offsetof(hmb_trace_page_header, base_ts));
      uint64_t seq = Get<uint64_t>(a, pg + offsetof(hmb_trace_page_header, first_seq));
      const uint64_t end = pg + sizeof(hmb_trace_page_header) + HMB_TRACE_COMMIT_BYTES(commit);
      for (uint64_t r = pg + sizeof(hmb_trace_page_header); r + sizeof(hmb_trace_record_header) <= end;) {
        hmbtrace::test::TestRecord rec;
        rec.core = core;
        rec.seq = seq++;
        rec.event_id = Get<uint16_t>(a, r + offsetof(hmb_trace_record_header, event_id));
        const uint16_t len = Get<uint16_t>(a, r + offsetof(hmb_trace_record_header, len));
        rec.ts = base_ts + Get<uint32_t>(a, r + offsetof(hmb_trace_record_header, ts_delta));
        const uint64_t p = r + sizeof(hmb_trace_record_header);
        if (p + len > end) break;
        rec.payload.assign(a.begin() + p, a.begin() + p + len);
        d.records.push_back(std::move(rec));
        r = p + ((len + HMB_TRACE_RECORD_ALIGN - 1) & ~uint64_t{HMB_TRACE_RECORD_ALIGN - 1});
      }
    }
  }
  const std::vector<uint8_t> out = hmbtrace::test::WriteDump(d);
  std::ofstream os(out_path, std::ios::binary);
  os.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  return os ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s AREA OUT.hmbdump\n", argv[0]);
    return 2;
  }
  return Run(argv[1], argv[2]);
}
