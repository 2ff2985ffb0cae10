// SPDX-License-Identifier: GPL-2.0-only
#include "report.h"

#include <cstdio>

#include "format.h"

namespace hmbtrace {
namespace {

std::string Prefix(const CaptureEvent& ev) {
  char cpu[16];
  std::snprintf(cpu, sizeof(cpu), "[%03d]", ev.cpu);
  return HostTime(ev.ts) + " " + cpu + " ";
}

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

bool Reporter::Wanted(const std::string& name) const {
  return options_.events.empty() || options_.events.count(name);
}

std::string Reporter::Line(const CaptureEvent& ev) {
  const std::string dev = "dev=" + std::to_string(ev.dev);
  switch (ev.kind) {
    case CaptureKind::kRecord: {
      hmb_events_++;
      if (!options_.cores.empty() && !options_.cores.count(ev.core))
        return {};
      const Dictionary* dict =
          lookahead_ ? lookahead_->For(ev.dev, ev.cpu) : dicts_.For(ev.dev, ev.cpu);
      const EventDesc* desc = dict ? dict->Find(ev.event_id) : nullptr;
      std::string line = Prefix(ev) + dev + " core=" + std::to_string(ev.core) +
                         " seq=" + std::to_string(ev.seq) + " fw_ts=" + std::to_string(ev.fw_ts);
      const bool truncated = ev.data.size() < ev.len;
      if (desc ? !Wanted(desc->name) : !options_.events.empty())
        return {};  // an event without a name matches no --event
      line += " " + RecordText(dict, ev.event_id, ev.data);
      if (!desc || options_.raw)
        line += " payload=" + Hex(ev.data);
      if (truncated)
        line += " (len " + std::to_string(ev.len) + ", " + std::to_string(ev.data.size()) +
                " bytes captured)";
      return line + "\n";
    }
    case CaptureKind::kLost:
      hmb_events_++;
      if (!Wanted("lost") || (!options_.cores.empty() && !options_.cores.count(ev.core)))
        return {};
      return Prefix(ev) + dev + " core=" + std::to_string(ev.core) + " LOST " +
             std::to_string(ev.count) + " records (" + std::string(LostReasonName(ev.reason)) +
             ") before seq=" + std::to_string(ev.at_seq) + "\n";
    case CaptureKind::kState: {
      hmb_events_++;
      dicts_.Add(ev);
      if (lookahead_)
        lookahead_->FollowState(ev);
      if (!Wanted("state"))
        return {};
      return Prefix(ev) + dev + " STATE " + std::string(StateName(ev.state)) +
             " name=" + Printable(ev.name) + " producer_gen=" + std::to_string(ev.producer_gen) +
             " nr_cores=" + std::to_string(ev.nr_cores) +
             " clock_hz=" + std::to_string(ev.clock_hz) + " build_id=" + Hex(ev.build_id) + "\n";
    }
    case CaptureKind::kDict: {
      hmb_events_++;
      const DictionaryStore::Update u = dicts_.Add(ev);
      if (!Wanted("dict"))
        return {};
      if (!u.problem.empty())
        return Prefix(ev) + "DICTIONARY " + u.problem + "\n";
      if (u.completed) {
        const Dictionary* d = dicts_.Find(ev.dev, ev.producer_gen);
        return Prefix(ev) + dev + " DICTIONARY producer_gen=" + std::to_string(ev.producer_gen) +
               " complete: " + std::to_string(d ? d->events().size() : 0) + " events, " +
               std::to_string(ev.total_len) + " bytes, build_id=" + Hex(ev.build_id) + "\n";
      }
      return {};
    }
    case CaptureKind::kMarker:
      if (!Wanted("marker"))
        return {};
      return Prefix(ev) + "MARKER " + Printable(AsText(ev.data)) + "\n";
    case CaptureKind::kMalformed:
      return Prefix(ev) + "MALFORMED " + Printable(ev.malformed_event) + ": " +
             std::string(ev.malformed_reason) + "\n";
  }
  return {};
}

int RunReport(const std::string& input, const ReportOptions& options) {
  DictionaryStore lookahead;
  std::string error;
  Reporter reporter(options, &lookahead);
  std::string buffer;
  const bool ok = ReadCaptureWithDictionaries(
      input, &lookahead,
      [&](const CaptureEvent& ev) {
        buffer += reporter.Line(ev);
        if (buffer.size() > (1u << 16)) {
          std::fwrite(buffer.data(), 1, buffer.size(), stdout);
          buffer.clear();
        }
        return !std::ferror(stdout);  // stop on EPIPE (e.g. `| head`)
      },
      &error);
  std::fwrite(buffer.data(), 1, buffer.size(), stdout);
  std::fflush(stdout);
  if (!ok) {
    std::fprintf(stderr, "hmbtrace-cmd report: %s\n", error.c_str());
    return 1;
  }
  if (reporter.hmb_events() == 0) {
    std::fprintf(stderr, "hmbtrace-cmd report: %s: no hmb events; %s\n", input.c_str(),
                 std::string(kRecordHint).c_str());
    return 1;
  }
  return 0;
}

}  // namespace hmbtrace
