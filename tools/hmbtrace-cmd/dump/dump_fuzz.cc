// SPDX-License-Identifier: GPL-2.0-only
//
// libFuzzer target: the input is a crash dump. Whatever parses is read as
// a capture would be (every event made, both passes) and described as
// `dump info` does, so the event maker and the text meet every shape of
// damage the parser lets through. The parser's promises are checked:
// every failure says why, with an offset; every payload lies inside the
// bytes; the counts stay within what the bytes can hold.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dump/dump_events.h"
#include "dump/dump_file.h"
#include "dump/dump_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hmbtrace::Result<hmbtrace::Dump> r =
      hmbtrace::ParseDump(std::vector<uint8_t>(data, data + size), "fuzz");
  if (!r.ok()) {
    if (r.message().rfind("fuzz: offset ", 0) != 0)
      __builtin_trap();  // every failure names the file and the offset
    return 0;
  }
  const hmbtrace::Dump& d = r.value();
  for (const hmbtrace::DumpRecord& rec : d.records)
    if (rec.payload_offset > d.bytes.size() || rec.len > d.bytes.size() - rec.payload_offset)
      __builtin_trap();
  // Records made only from bytes held; refused ones only as many as the
  // bytes the dump claims could hold (a dump cut short lost the rest).
  const uint64_t claimed = std::max<uint64_t>(size, d.header.total_len);
  if (d.records.size() > size / hmbtrace::kDumpRecordHeaderLen ||
      d.refused.records > claimed / hmbtrace::kDumpRecordHeaderLen ||
      d.identity.size() != d.cores.size())
    __builtin_trap();
  (void)hmbtrace::DumpInfoText(d);
  hmbtrace::DumpCapture capture(std::move(r.value()));
  for (bool metadata : {true, false}) {
    hmbtrace::CaptureScan scan;
    uint64_t seen = 0, bytes = 0;
    const hmbtrace::Status s = capture.Read(
        [&](const hmbtrace::CaptureEvent& ev) {
          seen++;
          for (uint8_t b : ev.data)
            bytes += b;
          bytes += ev.malformed_reason.size() + ev.name.size();
          return true;
        },
        metadata, nullptr, 0, &scan);
    if (!s.ok() || seen > scan.events || scan.first_ts > scan.last_ts)
      __builtin_trap();
  }
  return 0;
}
