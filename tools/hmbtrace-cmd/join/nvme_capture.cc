// SPDX-License-Identifier: GPL-2.0-only
#include "join/nvme_capture.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include <sys/stat.h>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "capture/nvme_host_c.h"
#include "causes/command_path_text.h"
#include "causes/command_paths.h"
#include "dump/dump_events.h"
#include "dump/dump_file.h"
#include "hmb_trace_dump_abi.h"
#include "clock_set.h"
#include "format.h"
#include "stat/stat.h"

namespace hmbtrace {
namespace {

int OnHostEvent(const hmb_nvme_host_event* ev, void* data) {
  CommandJoin* join = static_cast<CommandJoin*>(data);
  if (ev->kind == HMB_NVME_SETUP)
    join->HostSetup(ev->ctrl, ev->qid, ev->cid, ev->opcode, ev->nsid, ev->ts);
  else
    join->HostComplete(ev->ctrl, ev->qid, ev->cid, ev->status, ev->ts);
  return 0;
}

// The commands in flight of the dump at `path` as host commands of the
// join (setup at their submit time on `clock`, never completed), on the
// controller its name says ("nvme0"), joined with its device. Those without
// a submit time are left out: no window could place their records. False
// if the dump does not list its commands in flight.
bool FeedDumpInflight(const std::string& path, const std::string& clock, CommandJoin* join) {
  Result<Dump> read = ReadDumpFile(path);
  if (!read.ok() || !(read.value().header.flags & HMB_DUMP_FL_INFLIGHT))
    return false;
  const Dump& d = read.value();
  const std::optional<uint8_t> id = TraceClockId(clock);
  uint32_t ctrl = d.header.area_index;
  const std::string& name = d.header.name;
  if (name.size() > 4 && name.compare(0, 4, "nvme") == 0) {
    uint32_t n = 0;
    const auto [p, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), n);
    if (ec == std::errc() && p == name.data() + name.size())
      ctrl = n;
  }
  join->MapController(ctrl, d.header.area_index);
  for (const DumpCmd& c : d.inflight) {
    const std::optional<uint64_t> at = id ? DumpSubmitTime(d, c, *id) : std::nullopt;
    if (at)
      join->HostSetup(ctrl, c.qid, c.cid, c.opcode, c.nsid, *at);
  }
  return true;
}

std::string Us(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(ns) / 1000.0);
  return buf;
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? " " + s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

CommandSplit SplitOf(const CommandJoin& j, const JoinedCommand& c) {
  const FwCommandRecord& f = j.fw_records()[static_cast<size_t>(c.fetch)];
  const FwCommandRecord& d = j.fw_records()[static_cast<size_t>(c.complete)];
  const uint64_t setup = c.host.setup_ns, done = *c.host.complete_ns;
  auto diff = [](uint64_t a, uint64_t b) { return b > a ? b - a : 0; };
  return {diff(setup, f.host_ns), diff(f.host_ns, d.host_ns), diff(d.host_ns, done),
          diff(setup, done)};
}

std::string NvmeOpcodeName(uint8_t opcode) {
  switch (opcode) {
    case 0x00:
      return "flush";
    case 0x01:
      return "write";
    case 0x02:
      return "read";
    case 0x08:
      return "write_zeroes";
    case 0x09:
      return "dsm";
    default:
      break;
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "opc 0x%02x", opcode);
  return buf;
}

// Admin commands (queue 0) have their own opcodes (NVMe base spec, Figure
// "Opcodes for Admin Commands").
std::string NvmeAdminOpcodeName(uint8_t opcode) {
  switch (opcode) {
    case 0x00:
      return "delete_io_sq";
    case 0x01:
      return "create_io_sq";
    case 0x02:
      return "get_log_page";
    case 0x04:
      return "delete_io_cq";
    case 0x05:
      return "create_io_cq";
    case 0x06:
      return "identify";
    case 0x08:
      return "abort";
    case 0x09:
      return "set_features";
    case 0x0a:
      return "get_features";
    case 0x0c:
      return "async_event_request";
    case 0x18:
      return "keep_alive";
    default:
      break;
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), "admin opc 0x%02x", opcode);
  return buf;
}

std::string NvmeCommandName(uint16_t qid, uint8_t opcode) {
  return qid == 0 ? NvmeAdminOpcodeName(opcode) : NvmeOpcodeName(opcode);
}

std::vector<std::string> NvmeHostEventArgs() {
  // The top instance on the "local" clock, the one the module's clock fits
  // and the hmb instance use: on a machine whose sched_clock is unstable
  // (a TCG guest) the kernel makes the top instance's default "global",
  // which is CLOCK_MONOTONIC-based and can be far from sched_clock (717 ms
  // in the cmd-join scenario).
  return {"-C", "local", "-e", "nvme:nvme_setup_cmd", "-e", "nvme:nvme_complete_rq"};
}

bool NvmeHostEventsPresent(const std::string& tracefs_dir) {
  struct stat st;
  return stat((tracefs_dir + "/events/nvme/nvme_setup_cmd").c_str(), &st) == 0 &&
         stat((tracefs_dir + "/events/nvme/nvme_complete_rq").c_str(), &st) == 0;
}

namespace {

// ReadCommandCapture() once `reader` has begun: the capture's own
// dictionaries, followed as they change, and every event to the join;
// read from `file` if it is not null, else from `path`.
Status ReadBegun(CommandCaptureReader& reader, CaptureFile* file, const std::string& path) {
  DictionaryStore dicts;
  const CaptureCallback fn = [&](const CaptureEvent& ev) {
    if (ev.kind == CaptureKind::kState)
      dicts.FollowState(ev);
    reader.Add(ev, dicts);
    return true;
  };
  Status read = file ? ReadCaptureWithDictionaries(*file, &dicts, fn, ReadOptions())
                     : ReadCaptureWithDictionaries(path, &dicts, fn);
  if (!read.ok())
    return read;
  reader.Finish(dicts);
  return {};
}

}  // namespace

Status ReadCommandCapture(const std::string& path,
                          CommandCapture* out,
                          std::vector<StoryWindow>* story,
                          const std::string& story_clock) {
  CommandCaptureReader reader(path, out, story, story_clock);
  if (Status s = reader.Begin(); !s.ok())
    return s;
  return ReadBegun(reader, nullptr, path);
}

Status ReadCommandCapture(CaptureFile& file, CommandCapture* out) {
  CommandCaptureReader reader(file.path(), out);
  if (Status s = reader.Begin(&file); !s.ok())
    return s;
  return ReadBegun(reader, &file, file.path());
}

Status CommandCaptureReader::Begin(CaptureFile* file) {
  CaptureClocks trace_clocks;
  if (Status s = file ? ReadCaptureClocks(*file, &trace_clocks)
                      : ReadCaptureClocks(path_, &trace_clocks);
      !s.ok())
    return s;
  // Without `out`, only the stories: no join to build again.
  join_ = out_ ? &out_->join : nullptr;
  // Firmware times on the clock of the host's nvme events, their buffer's
  // (the top one's unless they are in an instance): the module fits every
  // trace clock, so the join holds even when the hmb instance is on
  // another clock.
  std::string host_clock = !join_ && !story_clock_.empty() ? story_clock_ : trace_clocks.top;
  if (join_) {
    // The host's commands first: with none, the firmware's command records
    // are only counted (nothing to join them to; memory stays flat).
    char err[256] = "";
    hmb_nvme_host_source src{};
    int rc = 1;
    if (IsDumpFile(path_)) {
      // A crash dump holds no host events but its commands in flight:
      // each a host command submitted and not completed.
      rc = FeedDumpInflight(path_, trace_clocks.top, join_) ? 0 : 1;
    } else if (file) {
      Result<hmb_tracecmd_file*> f = file->TracecmdFile();
      if (!f.ok())
        return f.status();
      rc = hmb_nvme_host_read_file(f.value(), OnHostEvent, join_, &out_->host_malformed, &src,
                                   err, sizeof(err));
    } else {
      rc = hmb_nvme_host_read(path_.c_str(), OnHostEvent, join_, &out_->host_malformed, &src,
                              err, sizeof(err));
    }
    if (rc < 0)
      return Status::Error(path_ + ": " + err);
    out_->host_events = rc == 0;
    out_->host_instance = Printable(src.instance);
    if (out_->host_events && src.clock[0])
      host_clock = src.clock;
    out_->host_clock = host_clock;
    if (join_->commands().empty() && !story_)
      join_->CountFwRecordsOnly();
  }
  // report and stat say a problem with the hmb instance's clock; the join
  // says its own when it converts to another.
  own_clock_ = host_clock != trace_clocks.hmb;
  if (clocks_.SetTraceClock(host_clock) != "" && own_clock_ && out_)
    SetCaptureClock(&clocks_, host_clock, "join", path_);
  return {};
}

const EventDesc* CommandCaptureReader::Route::Find(uint16_t id) {
  EventCache& c = events[id & (kEventCache - 1)];
  if (!c.set || c.id != id) {
    c.set = true;
    c.id = id;
    c.desc = dict ? dict->Find(id) : nullptr;
  }
  return c.desc;
}

void CommandCaptureReader::Add(const CaptureEvent& ev,
                               const DictionaryStore& dicts,
                               const FwTime* fw_time) {
  if (ev.kind != CaptureKind::kRecord)
    epoch_++;
  switch (ev.kind) {
    case CaptureKind::kState:
      clocks_.AddState(ev.dev, ev.producer_gen, ev.clock_hz);
      break;
    case CaptureKind::kClock:
      clocks_.Add(ClockFit{ev.dev, ev.producer_gen, ev.clock_flags, ev.clock, ev.clock_id});
      break;
    case CaptureKind::kLost:
      if (join_)
        join_->FwLost(ev.dev, ev.core, ev.ts);
      break;
    case CaptureKind::kRecord: {
      Route& route = routes_[(static_cast<size_t>(ev.cpu) * 7u + ev.dev) & (kRoutes - 1)];
      if (route.epoch != epoch_ || route.dev != ev.dev || route.cpu != ev.cpu)
        route = Route{epoch_, ev.dev, ev.cpu, dicts.GenerationFor(ev.dev, ev.cpu),
                      dicts.For(ev.dev, ev.cpu)};
      const uint32_t gen = route.gen;
      const FwTime t = fw_time ? *fw_time : RecordFwTime(clocks_, gen, ev);
      const Dictionary* dict = route.dict;
      const EventDesc* desc = route.Find(ev.event_id);
      if (story_ && t.converted())
        for (StoryWindow& w : *story_) {
          // (Saturating: an in-flight command's window ends at UINT64_MAX.)
          if (ev.dev != w.dev || ev.core != w.core || t.host_ns + t.bound_ns < w.from ||
              t.host_ns - std::min(t.host_ns, t.bound_ns) > w.to)
            continue;
          if (w.records.size() >= w.max_records) {
            w.records_left_out++;
            continue;
          }
          w.records.push_back(StoryRecord{ev.dev, ev.core, ev.seq, ev.fw_ts, t.host_ns,
                                          t.bound_ns, RecordText(dict, ev.event_id, ev.data)});
        }
      if (!join_)
        break;
      std::optional<uint64_t> qid, cid;
      if (desc && (desc->role == HMB_TRACE_ROLE_BEGIN || desc->role == HMB_TRACE_ROLE_END)) {
        qid = RoleFieldValue(*desc, desc->qid_field, ev.data);
        cid = RoleFieldValue(*desc, desc->cid_field, ev.data);
      }
      if (!qid || !cid || *qid > 0xffff || *cid > 0xffff) {
        join_->FwSeen(ev.dev, ev.core, gen, t.converted() ? t.host_ns : ev.ts);
        break;
      }
      FwCommandRecord r;
      r.kind = desc->role == HMB_TRACE_ROLE_BEGIN ? FwCommandRecord::Kind::kFetch
                                                  : FwCommandRecord::Kind::kComplete;
      r.dev = ev.dev;
      r.core = ev.core;
      r.producer_gen = gen;
      r.seq = ev.seq;
      r.qid = static_cast<uint16_t>(*qid);
      r.cid = static_cast<uint16_t>(*cid);
      r.fw_ts = ev.fw_ts;
      r.ftrace_ns = ev.ts;
      r.converted = t.converted();
      r.host_ns = t.host_ns;
      r.bound_ns = t.bound_ns;
      if (!r.converted)
        out_->fw_not_converted++;
      join_->FwRecord(r);
      break;
    }
    default:
      break;
  }
}

void CommandCaptureReader::Finish(const DictionaryStore& dicts) {
  if (own_clock_ && out_)
    ReportClockProblem(clocks_, "join", path_);
  if (join_)
    join_->Finish();
  if (out_)
    for (const auto& [dev, info] : dicts.devices())
      for (const uint32_t gen : dicts.Generations(dev))
        if (const Dictionary* dict = dicts.Find(dev, gen); dict && HasCommandAttribution(*dict))
          out_->command_attribution = true;
}

nlohmann::json CommandStatJson(const CommandCapture& cap) {
  using nlohmann::json;
  const CommandJoin& j = cap.join;
  const JoinCounts& c = j.counts();
  json doc = {{"host_events_recorded", cap.host_events},
              {"host_commands", c.host_commands},
              {"joined", c.joined},
              {"partial", c.partial},
              {"unjoined", c.unjoined},
              {"matched_by_order", c.by_order},
              {"fw_command_records", c.fw_records},
              {"fw_not_converted", cap.fw_not_converted},
              {"host_malformed", cap.host_malformed},
              {"host_setup_reopened", c.setup_reopened},
              {"host_complete_without_setup", c.complete_without_setup}};
  if (!cap.host_instance.empty())
    doc["host_events_instance"] = cap.host_instance;
  json host_un = json::object();
  for (size_t i = 1; i < c.host_unmatched.size(); i++)
    if (c.host_unmatched[i])
      host_un[std::string(HostUnmatchedName(static_cast<HostUnmatched>(i)))] = c.host_unmatched[i];
  doc["host_unmatched"] = host_un;
  json fw_un = json::object();
  for (size_t i = 1; i < c.fw_unmatched.size(); i++)
    if (c.fw_unmatched[i])
      fw_un[std::string(FwUnmatchedName(static_cast<FwUnmatched>(i)))] = c.fw_unmatched[i];
  doc["fw_unmatched"] = fw_un;

  // Per opcode, per phase: the durations of the joined commands.
  std::map<std::string, std::array<std::vector<uint64_t>, 4>> phases;
  ForEachSplit(j, [&phases](const std::string& op, const std::array<uint64_t, 4>& d) {
    for (size_t k = 0; k < 4; k++)
      phases[op][k].push_back(d[k]);
  });
  json split = json::array();
  for (auto& [op, p] : phases) {
    for (size_t k = 0; k < 4; k++) {
      std::sort(p[k].begin(), p[k].end());
      split.push_back({{"opcode", op},
                       {"phase", kCommandPhases[k]},
                       {"count", p[k].size()},
                       {"p50_us", static_cast<double>(Percentile(p[k], 50)) / 1000.0},
                       {"p90_us", static_cast<double>(Percentile(p[k], 90)) / 1000.0},
                       {"p99_us", static_cast<double>(Percentile(p[k], 99)) / 1000.0},
                       {"max_us", static_cast<double>(p[k].empty() ? 0 : p[k].back()) / 1000.0}});
    }
  }
  doc["latency_split"] = split;
  return doc;
}

std::string CommandStatText(const CommandCapture& cap) {
  const nlohmann::json doc = CommandStatJson(cap);
  std::string out =
      "\nNVMe commands (host nvme_setup_cmd/nvme_complete_rq joined to firmware "
      "records by (qid, cid) and converted time):\n";
  if (!cap.host_events) {
    out +=
        "  no nvme events in any buffer of the capture: record them with `hmbtrace-cmd record` "
        "(default) or `trace-cmd record -e nvme:nvme_setup_cmd -e nvme:nvme_complete_rq`\n";
    return out;
  }
  const auto n = [&doc](const char* k) { return std::to_string(doc[k].get<uint64_t>()); };
  out += "  host commands " + n("host_commands") + ", joined " + n("joined") + ", partial " +
         n("partial") + ", not joined " + n("unjoined") +
         " (matched by order: " + n("matched_by_order") + " records)\n";
  if (!cap.host_instance.empty())
    out += "  host commands read from instance \"" + cap.host_instance +
           "\" (the top buffer has no nvme events)\n";
  for (const auto& [why, count] : doc["host_unmatched"].items())
    out += "  host commands not fully joined: " + why + ": " +
           std::to_string(count.get<uint64_t>()) + "\n";
  out += "  firmware command records " + n("fw_command_records") + ", not converted " +
         n("fw_not_converted") + "\n";
  for (const auto& [why, count] : doc["fw_unmatched"].items())
    out += "  firmware records not joined: " + why + ": " + std::to_string(count.get<uint64_t>()) +
           "\n";
  if (doc["latency_split"].empty())
    return out;
  out += "  latency split of joined commands, us:\n";
  out +=
      "    opcode        phase                            count      p50      p90      p99"
      "      max\n";
  for (const auto& row : doc["latency_split"]) {
    const std::string op = row["opcode"].get<std::string>();
    const std::string phase = row["phase"].get<std::string>();
    auto num = [&row](const char* k) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.1f", row[k].get<double>());
      return std::string(buf);
    };
    out += "    " + op + std::string(op.size() < 14 ? 14 - op.size() : 1, ' ') + phase +
           std::string(phase.size() < 31 ? 31 - phase.size() : 1, ' ') +
           Pad(std::to_string(row["count"].get<uint64_t>()), 8) + Pad(num("p50_us"), 9) +
           Pad(num("p90_us"), 9) + Pad(num("p99_us"), 9) + Pad(num("max_us"), 9) + "\n";
  }
  return out;
}

nlohmann::json CommandListJson(const CommandCapture& cap) {
  using nlohmann::json;
  const CommandJoin& j = cap.join;
  json cmds = json::array();
  auto rec_json = [&j](int64_t idx, JoinedBy by) -> json {
    if (idx < 0)
      return nullptr;
    const FwCommandRecord& r = j.fw_records()[static_cast<size_t>(idx)];
    return {{"dev", r.dev},
            {"core", r.core},
            {"seq", r.seq},
            {"fw_ts", r.fw_ts},
            {"host_ns", r.host_ns},
            {"bound_ns", r.bound_ns},
            {"by", by == JoinedBy::kOrder ? "order" : "window"}};
  };
  for (const JoinedCommand& c : j.commands()) {
    json e = {{"ctrl", c.host.ctrl},
              {"qid", c.host.qid},
              {"cid", c.host.cid},
              {"opcode", c.host.opcode},
              {"setup_ns", c.host.setup_ns},
              {"complete_ns", c.host.complete_ns ? json(*c.host.complete_ns) : json(nullptr)},
              {"status", c.host.status},
              {"fetch", rec_json(c.fetch, c.fetch_by)},
              {"complete", rec_json(c.complete, c.complete_by)}};
    if (c.fetch < 0)
      e["why_no_fetch"] = HostUnmatchedName(c.why_no_fetch);
    if (c.complete < 0)
      e["why_no_complete"] = HostUnmatchedName(c.why_no_complete);
    cmds.push_back(std::move(e));
  }
  json fw = json::array();
  for (size_t i = 0; i < j.fw_records().size(); i++) {
    if (j.fw_unmatched()[i] == FwUnmatched::kNone)
      continue;
    const FwCommandRecord& r = j.fw_records()[i];
    fw.push_back({{"kind", r.kind == FwCommandRecord::Kind::kFetch ? "fetch" : "complete"},
                  {"dev", r.dev},
                  {"core", r.core},
                  {"seq", r.seq},
                  {"qid", r.qid},
                  {"cid", r.cid},
                  {"host_ns", r.converted ? json(r.host_ns) : json(nullptr)},
                  {"why", FwUnmatchedName(j.fw_unmatched()[i])}});
  }
  return {{"summary", CommandStatJson(cap)}, {"commands", cmds}, {"fw_unmatched", fw}};
}

int WriteCommandListJson(const std::string& input, const std::string& path) {
  CommandCapture cap;
  if (Status s = ReadCommandCapture(input, &cap); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd stat: %s\n", s.message().c_str());
    return 1;
  }
  const std::string doc = CommandListJson(cap).dump() + "\n";
  FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr;
  if (f) {
    ok = std::fwrite(doc.data(), 1, doc.size(), f) == doc.size();
    ok = std::fclose(f) == 0 && ok;
  }
  if (!ok) {
    std::fprintf(stderr, "hmbtrace-cmd stat: --commands-json %s: cannot write: %s\n", path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  return 0;
}

StoryWindow CommandStoryWindow(const CommandJoin& j, const JoinedCommand& c) {
  StoryWindow w;
  if (c.fetch < 0 && c.complete < 0) {
    w.dev = 0xffff;  // nothing to show
    return w;
  }
  const FwCommandRecord& any =
      j.fw_records()[static_cast<size_t>(c.fetch >= 0 ? c.fetch : c.complete)];
  w.dev = any.dev;
  w.core = any.core;
  w.from = c.fetch >= 0 ? j.fw_records()[static_cast<size_t>(c.fetch)].host_ns : c.host.setup_ns;
  w.to = c.complete >= 0 ? j.fw_records()[static_cast<size_t>(c.complete)].host_ns
                         : c.host.complete_ns.value_or(w.from);
  return w;
}

std::string CommandStoryText(const CommandJoin& j, const JoinedCommand& c, const StoryWindow& w) {
  std::string out = "nvme" + std::to_string(c.host.ctrl) + " qid=" + std::to_string(c.host.qid) +
                    " cid=" + std::to_string(c.host.cid) + " " +
                    NvmeCommandName(c.host.qid, c.host.opcode) +
                    " nsid=" + std::to_string(c.host.nsid) +
                    (w.dump_taken_ns ? " (in flight at the dump)" : "") + "\n";
  struct Line {
    uint64_t at;
    std::string text;
  };
  std::vector<Line> lines;
  lines.push_back({c.host.setup_ns, w.dump_taken_ns ? "host  nvme_submit (in flight)"
                                                     : "host  nvme_setup_cmd"});
  if (w.dump_taken_ns)
    lines.push_back({*w.dump_taken_ns, "host  dump taken: still in flight"});
  if (c.host.complete_ns) {
    char b[48];
    std::snprintf(b, sizeof(b), "host  nvme_complete_rq status=0x%x", c.host.status);
    lines.push_back({*c.host.complete_ns, b});
  }
  auto seq_of = [&j](int64_t idx) {
    return idx < 0 ? UINT64_MAX : j.fw_records()[static_cast<size_t>(idx)].seq;
  };
  for (size_t i = 0; i < w.records.size(); i++) {
    const StoryRecord& r = w.records[i];
    if (i == w.left_out_at && w.records_left_out)
      lines.push_back({*r.host_ns, "... " + std::to_string(w.records_left_out) +
                                       " more firmware records of core " +
                                       std::to_string(w.core) + " ..."});
    // The records joined to this command are marked; the others are what
    // the same core did meanwhile (NAND work names no command).
    const bool mine = r.seq == seq_of(c.fetch) || r.seq == seq_of(c.complete);
    lines.push_back(
        {*r.host_ns, std::string(mine ? "fw  * " : "fw    ") + "dev=" + std::to_string(r.dev) +
                         " core=" + std::to_string(r.core) + " seq=" + std::to_string(r.seq) +
                         " " + r.text + " ±" + BoundText(r.bound_ns)});
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.at < b.at; });
  for (const Line& l : lines) {
    const bool before = l.at < c.host.setup_ns;
    out += "  " + HostTime(l.at) + (before ? " -" : " +") +
           Us(before ? c.host.setup_ns - l.at : l.at - c.host.setup_ns) + "us  " + l.text + "\n";
  }
  if (w.records_left_out && w.left_out_at >= w.records.size())
    out += "  ... and " + std::to_string(w.records_left_out) + " more firmware records\n";
  if (w.dump_taken_ns && c.fetch >= 0 && !w.records.empty()) {
    const StoryRecord& last = w.records.back();
    const uint64_t fetch_ns = j.fw_records()[static_cast<size_t>(c.fetch)].host_ns;
    out += "  stopped: core " + std::to_string(last.core) + "'s last record in the dump is seq=" +
           std::to_string(last.seq) + " " + last.text + ", " +
           Us(*last.host_ns > fetch_ns ? *last.host_ns - fetch_ns : 0) + "us after the fetch\n";
  }
  if (HasSplit(c)) {
    const CommandSplit s = SplitOf(j, c);
    out += "  split: submit->fetch " + Us(s.submit_to_fetch) + "us, fetch->complete " +
           Us(s.fetch_to_complete) + "us, complete->host " + Us(s.complete_to_host) +
           "us, total " + Us(s.total) + "us\n";
  } else if (!c.joined()) {
    if (c.fetch < 0)
      out += "  no firmware fetch: " + std::string(HostUnmatchedName(c.why_no_fetch)) + "\n";
    if (c.complete < 0)
      out += "  no firmware completion: " +
             std::string(w.dump_taken_ns ? "none in the dump: the firmware had not completed it"
                                         : HostUnmatchedName(c.why_no_complete)) +
             "\n";
  }
  return out;
}

namespace {

// A command's QID:CID as report --cmd takes it: two numbers up to 65535.
bool ParseQidCid(const std::string& qid_cid, uint64_t* qid, uint64_t* cid) {
  const size_t colon = qid_cid.find(':');
  auto num = [](std::string_view s, uint64_t* v) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && *v <= 0xffff;
  };
  return colon != std::string::npos && num(std::string_view(qid_cid).substr(0, colon), qid) &&
         num(std::string_view(qid_cid).substr(colon + 1), cid);
}

}  // namespace

namespace {

// The firmware's account of each command (ABI 1.2 command attribution),
// from one more pass over the capture; empty when it has none.
class CommandPathFinder {
 public:
  explicit CommandPathFinder(const std::string& input) : stat_(&dicts_) {
    if (!CollectStat(input, &dicts_, &stat_).ok())
      return;
    for (const CommandPath& c : stat_.command_paths().commands())
      by_fetch_[{c.dev, c.qid, c.cid, c.fetch}] = &c;
  }
  const CommandPath* Find(uint16_t dev, uint16_t qid, uint16_t cid, uint64_t fw_ts) const {
    auto it = by_fetch_.find({dev, qid, cid, fw_ts});
    return it == by_fetch_.end() ? nullptr : it->second;
  }
  uint64_t ClockHz(uint16_t dev) const {
    auto it = dicts_.devices().find(dev);
    return it == dicts_.devices().end() ? 0 : it->second.clock_hz;
  }

 private:
  DictionaryStore dicts_;
  StatCollector stat_;
  std::map<std::tuple<uint16_t, uint16_t, uint16_t, uint64_t>, const CommandPath*> by_fetch_;
};

}  // namespace

int RunCommandStory(const std::string& input, const std::string& qid_cid) {
  uint64_t qid = 0, cid = 0;
  if (!ParseQidCid(qid_cid, &qid, &cid)) {
    std::fprintf(stderr,
                 "hmbtrace-cmd report: --cmd %s: expected QID:CID, two numbers up to 65535 "
                 "(the qid and cid of nvme_setup_cmd)\n",
                 qid_cid.c_str());
    return 2;
  }
  CommandCapture cap;
  if (Status s = ReadCommandCapture(input, &cap); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd report: %s\n", s.message().c_str());
    return 1;
  }
  const bool dump = IsDumpFile(input);
  if (!cap.host_events) {
    std::fprintf(stderr,
                 dump ? "hmbtrace-cmd report: %s: the dump does not list the commands in flight "
                        "(the nvme-pci series cannot list them)\n"
                      : "hmbtrace-cmd report: %s: no nvme events in any buffer of the capture; "
                        "record them with `hmbtrace-cmd record` (default)\n",
                 input.c_str());
    return 1;
  }
  const CommandJoin& j = cap.join;
  std::vector<const JoinedCommand*> found;
  std::vector<StoryWindow> windows;
  for (const JoinedCommand& c : j.commands()) {
    if (c.host.qid != qid || c.host.cid != cid)
      continue;
    found.push_back(&c);
    windows.push_back(CommandStoryWindow(j, c));
  }
  if (found.empty()) {
    std::fprintf(stderr,
                 dump ? "hmbtrace-cmd report: %s: no command in flight with qid:cid %s and a "
                        "submit time in the dump (hmbtrace-cmd dump info lists them)\n"
                      : "hmbtrace-cmd report: %s: no host command with qid:cid %s\n",
                 input.c_str(), qid_cid.c_str());
    return 1;
  }
  // A crash dump's commands in flight: their window runs to the dump's end.
  std::optional<uint64_t> taken;
  if (dump) {
    if (Result<Dump> dump = ReadDumpFile(input); dump.ok()) {
      const std::optional<uint8_t> id = TraceClockId(DumpTraceClock(dump.value()));
      if (id && *id < dump.value().header.taken_ns.size())
        taken = dump.value().header.taken_ns[*id];
    }
  }
  for (size_t i = 0; i < found.size(); i++) {
    if (!taken || found[i]->host.complete_ns)
      continue;
    windows[i].dump_taken_ns = taken;
    if (windows[i].dev != 0xffff)
      windows[i].to = UINT64_MAX;
  }
  // One more pass for the records of every window.
  if (Status s = ReadCommandCapture(input, nullptr, &windows, cap.host_clock); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd report: %s\n", s.message().c_str());
    return 1;
  }
  // Of an in-flight command's core: the first records after its fetch and
  // the last ones (where it stopped), not all between.
  constexpr size_t kHead = 20, kTail = 10;
  for (size_t i = 0; i < windows.size(); i++) {
    StoryWindow& w = windows[i];
    if (!w.dump_taken_ns)
      continue;
    // The window is widened by the records' bound: what came before the
    // fetch on its core is not the command's story and would push the
    // fetch out of the first records shown.
    if (found[i]->fetch >= 0) {
      const FwCommandRecord& f = j.fw_records()[static_cast<size_t>(found[i]->fetch)];
      const auto at = std::find_if(w.records.begin(), w.records.end(), [&](const StoryRecord& r) {
        return r.dev == f.dev && r.core == f.core && r.seq == f.seq;
      });
      if (at != w.records.end())
        w.records.erase(w.records.begin(), at);
    }
    if (w.records.size() <= kHead + kTail)
      continue;
    const size_t drop = w.records.size() - kHead - kTail;
    w.records.erase(w.records.begin() + kHead, w.records.begin() + kHead + drop);
    w.records_left_out += drop;
    w.left_out_at = kHead;
  }
  std::string out;
  // The firmware's stages: one more pass, only when a dictionary has the
  // attribution to find them by.
  std::optional<CommandPathFinder> paths;
  if (cap.command_attribution)
    paths.emplace(input);
  for (size_t i = 0; i < found.size(); i++) {
    out += CommandStoryText(j, *found[i], windows[i]);
    if (!paths || found[i]->fetch < 0)
      continue;
    const FwCommandRecord& f = j.fw_records()[static_cast<size_t>(found[i]->fetch)];
    if (const CommandPath* p = paths->Find(f.dev, f.qid, f.cid, f.fw_ts))
      out += CommandPathText(*p, paths->ClockHz(f.dev));
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace hmbtrace
