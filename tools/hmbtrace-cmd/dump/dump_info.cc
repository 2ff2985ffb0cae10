// SPDX-License-Identifier: GPL-2.0-only
#include "dump/dump_info.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "capture/capture.h"
#include "clock_set.h"
#include "dump/dump_events.h"
#include "format.h"

namespace hmbtrace {
namespace {

bool UtcParts(uint64_t real_ns, struct tm* tm) {
  const time_t secs = static_cast<time_t>(real_ns / 1000000000u);
  return gmtime_r(&secs, tm) != nullptr;
}

void Row(std::string* out, const char* key, const std::string& value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%-14s", key);
  *out += buf;
  *out += value;
  *out += '\n';
}

}  // namespace

std::string UtcTime(uint64_t real_ns) {
  struct tm tm {};
  if (!UtcParts(real_ns, &tm))
    return "?";
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%09" PRIu64 " UTC",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                real_ns % 1000000000u);
  return buf;
}

std::string UtcFileTime(uint64_t real_ns) {
  struct tm tm {};
  if (!UtcParts(real_ns, &tm))
    return "unknown-time";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::string DumpInfoText(const Dump& d) {
  const DumpHeader& h = d.header;
  std::string out;
  out += d.path + ": crash dump of HMB trace area \"" + Printable(h.name) + "\" (dev " +
         std::to_string(h.area_index) + "), format version " + std::to_string(h.version) + "\n";
  Row(&out, "reason:", DumpReasonName(h.reason));
  Row(&out, "generation:", std::to_string(h.producer_gen));
  Row(&out, "taken:", UtcTime(h.taken_real_ns));
  Row(&out, "reset path:", std::to_string(h.copy_ns) + " ns held to take the dump");
  Row(&out, "record bound:", std::to_string(h.record_bound) + " bytes");
  Row(&out, "flags:", DumpFlagsText(h.flags));
  Row(&out, "size:",
      std::to_string(d.bytes.size()) + " bytes held, total_len " + std::to_string(h.total_len) +
          (d.truncated ? " (cut short)" : ""));
  Row(&out, "nr_cores:", std::to_string(h.nr_cores));
  Row(&out, "clock_hz:", std::to_string(h.clock_hz));
  Row(&out, "build_id:", Hex(h.build_id));
  Row(&out, "dictionary:",
      d.dict.empty() ? std::string("none") : std::to_string(d.dict.size()) + " bytes");
  std::string clocks;
  for (const DumpClock& c : d.clocks) {
    if (!clocks.empty())
      clocks += ", ";
    clocks += TraceClockName(static_cast<uint8_t>(c.clock_id));
    if (c.gen != h.producer_gen)
      clocks += " (generation " + std::to_string(c.gen) + ": not used)";
    else if (const std::string p = ClockFitProblem(c.fit); !p.empty())
      clocks += " (" + p + ": not used)";
    else if (c.flags & HMB_CLOCK_FL_STALE)
      clocks += " (stale)";
  }
  Row(&out, "clock fits:",
      clocks.empty() ? std::string("none: times are not converted")
                     : clocks + "; times on \"" + DumpTraceClock(d) + "\"");
  Row(&out, "records:",
      std::to_string(d.records.size()) + " held, " + std::to_string(d.lost.size()) + " loss runs");
  // The per-core account: end_seq - start_seq == records + skipped + lost.
  char cell[64];
  out += '\n';
  for (const char* head : {"core", "start_seq", "end_seq", "records", "skipped"}) {
    std::snprintf(cell, sizeof(cell), "%*s", head[1] == 'o' ? 5 : 12, head);
    out += cell;
  }
  for (uint8_t r = 0; r < kLostReasonCount; r++) {
    std::snprintf(cell, sizeof(cell), " %12s", ("lost:" + std::string(LostReasonName(r))).c_str());
    out += cell;
  }
  out += "  identity\n";
  for (size_t i = 0; i < d.cores.size(); i++) {
    const DumpCore& c = d.cores[i];
    std::snprintf(cell, sizeof(cell), "%5u", c.core);
    out += cell;
    for (uint64_t v : {c.start_seq, c.end_seq, c.records, c.skipped}) {
      std::snprintf(cell, sizeof(cell), "%12" PRIu64, v);
      out += cell;
    }
    for (uint8_t r = 0; r < kLostReasonCount; r++) {
      std::snprintf(cell, sizeof(cell), " %12" PRIu64, c.lost[r]);
      out += cell;
    }
    out += d.identity[i].holds ? "  holds\n" : "  BROKEN: " + d.identity[i].problem + "\n";
  }
  const DumpRefused& r = d.refused;
  if (r.sections_unknown)
    out += "\n" + std::to_string(r.sections_unknown) +
           " sections of a type this hmbtrace-cmd does not know: skipped\n";
  if (r.total() || r.sections_duplicate) {
    out += "\nrefused: " + std::to_string(r.records) + " records, " + std::to_string(r.lost) +
           " losses, " + std::to_string(r.cores) + " core states, " + std::to_string(r.clocks) +
           " clock fits, " + std::to_string(r.sections_bad + r.sections_duplicate) + " sections, " +
           std::to_string(r.sections_missing) + " sections not held\n";
  }
  if (!d.problems.empty()) {
    out += "\nproblems:\n";
    for (const std::string& p : d.problems)
      out += "  " + p + "\n";
    if (d.problems_left_out)
      out += "  ... and " + std::to_string(d.problems_left_out) + " more\n";
  }
  return out;
}

int RunDumpInfo(const std::string& path) {
  Result<Dump> dump = ReadDumpFile(path);
  if (!dump.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd dump info: %s\n", dump.message().c_str());
    return 1;
  }
  const std::string text = DumpInfoText(dump.value());
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!dump->problems.empty()) {
    std::fprintf(stderr, "hmbtrace-cmd dump info: %s: %zu problems (listed above)%s\n",
                 path.c_str(), dump->problems.size() + dump->problems_left_out,
                 dump->identity_holds() ? "" : "; the identity of a core is broken");
    return 1;
  }
  return 0;
}

}  // namespace hmbtrace
