// SPDX-License-Identifier: GPL-2.0-only
#include "dump/dump_info.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>

#include "capture/capture.h"
#include "clock_set.h"
#include "dictionary.h"
#include "dump/dump_events.h"
#include "format.h"
#include "hmb_trace_dump_abi.h"
#include "join/nvme_capture.h"

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

// "fetched by core K at seq S", or that the dump has no such record.
std::string CmdRecordText(const char* verb, const DumpRecord* r) {
  if (!r)
    return std::string("no ") + (verb[0] == 'f' ? "fetch" : "complete") + " record in the dump";
  return std::string(verb) + " by core " + std::to_string(r->core) + " at seq " +
         std::to_string(r->seq);
}

// The commands in flight, one line each, and the firmware records of the
// dump that name the same (qid, cid): the last fetch (BEGIN) and complete
// (END) of each in firmware time (a cid is reused: the latest is the
// command's).
void InflightText(const Dump& d, std::string* out) {
  const DumpHeader& h = d.header;
  *out += '\n';
  if (!(h.flags & HMB_DUMP_FL_INFLIGHT)) {
    *out += "commands in flight: not listed (the nvme-pci series cannot list them)\n";
    return;
  }
  *out += "commands in flight: " + std::to_string(d.inflight.size()) +
          ((h.flags & HMB_DUMP_FL_INFLIGHT_PARTIAL) ? " listed, the host had more" : "") + "\n";
  if (d.inflight.empty())
    return;
  std::string dict_error;
  std::optional<Dictionary> dict;
  if (!d.dict.empty() && (h.flags & HMB_DUMP_FL_DICT))
    dict = Dictionary::Parse(d.dict, &dict_error);
  // (qid << 16 | cid) -> the latest fetch and complete record.
  std::map<uint32_t, std::pair<const DumpRecord*, const DumpRecord*>> named;
  if (dict) {
    for (const DumpRecord& r : d.records) {
      const EventDesc* desc = dict->Find(r.event_id);
      if (!desc || (desc->role != HMB_TRACE_ROLE_BEGIN && desc->role != HMB_TRACE_ROLE_END))
        continue;
      const std::optional<uint64_t> qid = RoleFieldValue(*desc, desc->qid_field, d.Payload(r));
      const std::optional<uint64_t> cid = RoleFieldValue(*desc, desc->cid_field, d.Payload(r));
      if (!qid || !cid || *qid > 0xffff || *cid > 0xffff)
        continue;
      auto& pair = named[static_cast<uint32_t>(*qid << 16 | *cid)];
      const DumpRecord*& slot = desc->role == HMB_TRACE_ROLE_BEGIN ? pair.first : pair.second;
      if (!slot || r.ts >= slot->ts)
        slot = &r;
    }
  }
  const uint64_t taken_mono = h.taken_ns[HMB_TRACE_CLOCK_MONO];
  for (const DumpCmd& c : d.inflight) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "  qid %u cid 0x%04x %s", c.qid, c.cid,
                  NvmeCommandName(c.qid, c.opcode).c_str());
    std::string line = buf;
    if (c.nsid)
      line += " nsid " + std::to_string(c.nsid);
    if (c.nlb) {
      std::snprintf(buf, sizeof(buf), " slba 0x%" PRIx64 " nlb %u", c.slba, c.nlb);
      line += buf;
    }
    if (!c.submit_ns) {
      line += ", submit time unknown";
    } else if (!taken_mono) {
      line += ", submitted at mono " + std::to_string(c.submit_ns) + " ns (no mono time of the dump)";
    } else {
      std::snprintf(buf, sizeof(buf), ", submitted %.1f us before the dump",
                    static_cast<double>(taken_mono - c.submit_ns) / 1000.0);
      line += buf;
    }
    *out += line + "\n      ";
    if (!dict) {
      *out += d.dict.empty() || !(h.flags & HMB_DUMP_FL_DICT)
                  ? "records not matched: the dump has no dictionary\n"
                  : "records not matched: dictionary not read (" + dict_error + ")\n";
      continue;
    }
    auto it = named.find(uint32_t{c.qid} << 16 | c.cid);
    const DumpRecord* fetch = it == named.end() ? nullptr : it->second.first;
    const DumpRecord* done = it == named.end() ? nullptr : it->second.second;
    *out += CmdRecordText("fetched", fetch) + "; ";
    // A complete after the fetch: the firmware finished it and the host
    // had not seen it yet.
    if (done && (!fetch || done->ts >= fetch->ts))
      *out += CmdRecordText("completed", done) + "\n";
    else
      *out += "no complete record after it\n";
  }
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
  // A reset's dump is taken on nvme-pci's reset path; a firmware restart's
  // or freeze's from a work item, holding nothing of the host's.
  if (h.reason == HMB_DUMP_REASON_DISABLING || h.reason == HMB_DUMP_REASON_REMOVED)
    Row(&out, "reset path:", std::to_string(h.copy_ns) + " ns held to take the dump");
  else
    Row(&out, "copy:", std::to_string(h.copy_ns) + " ns to take the dump (from a work item)");
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
  InflightText(d, &out);
  const DumpRefused& r = d.refused;
  if (r.sections_unknown)
    out += "\n" + std::to_string(r.sections_unknown) +
           " sections of a type this hmbtrace-cmd does not know: skipped\n";
  if (r.total() || r.sections_duplicate) {
    out += "\nrefused: " + std::to_string(r.records) + " records, " + std::to_string(r.lost) +
           " losses, " + std::to_string(r.cores) + " core states, " + std::to_string(r.clocks) +
           " clock fits, " + std::to_string(r.inflight) + " commands in flight, " +
           std::to_string(r.sections_bad + r.sections_duplicate) + " sections, " +
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
