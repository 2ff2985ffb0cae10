// SPDX-License-Identifier: GPL-2.0-only
#include "stat/html_report.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <queue>

#include "stat/html_assets.h"
#include "stat/histogram.h"
#include "stat/quantile_histogram.h"

namespace hmbtrace {
namespace {

using nlohmann::json;

uint64_t TicksToNs(uint64_t ticks, uint64_t hz) {
  const unsigned __int128 ns = static_cast<unsigned __int128>(ticks) * 1000000000u / hz;
  return ns > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ns);
}

uint64_t HostTotal(const JoinedCommand& c) {
  return *c.host.complete_ns > c.host.setup_ns ? *c.host.complete_ns - c.host.setup_ns : 0;
}

// Per device and latency metric, every core's values together: stat's
// per-core histograms merged (its buckets and its percentiles).
json EventLatencyJson(const StatCollector& stat, const json& stat_doc) {
  std::map<uint16_t, uint64_t> hz;
  for (const json& d : stat_doc["devices"])
    hz[d["dev"].get<uint16_t>()] = d.value("clock_hz", uint64_t{0});
  std::map<std::pair<uint16_t, std::string>, std::pair<Log2Histogram, QuantileHistogram>> merged;
  for (const auto& [key, cs] : stat.cores())
    for (const auto& [name, lat] : cs.latencies) {
      auto& [plot, ticks] = merged[{key.first, name}];
      plot.Merge(lat.plot);
      ticks.Merge(lat.ticks);
    }
  json out = json::array();
  for (const auto& [key, h] : merged) {
    const auto& [plot, ticks] = h;
    const uint64_t dev_hz = hz[key.first];
    // In ns when the clock rate is known, as the plot's buckets are.
    auto unit = [dev_hz](uint64_t t) { return dev_hz ? TicksToNs(t, dev_hz) : t; };
    const uint64_t n = ticks.count();
    out.push_back({{"dev", key.first},
                   {"name", key.second},
                   {"unit", dev_hz ? "ns" : "ticks"},
                   {"count", n},
                   {"min", unit(ticks.min())},
                   {"p50", unit(ticks.Median())},
                   {"p90", unit(ticks.ValueAtRank((n * 90 + 99) / 100))},
                   {"p99", unit(ticks.P99())},
                   {"max", unit(ticks.max())},
                   {"buckets", plot.Json()}});
  }
  return out;
}

// Per opcode, per phase of the split: the distribution of the joined
// commands (log2 buckets, ns) and the percentiles stat prints for it.
json OpcodeLatencyJson(const CommandCapture& cap, const json& command_doc) {
  std::map<std::string, std::array<Log2Histogram, 4>> hists;
  ForEachSplit(cap.join, [&hists](const std::string& op, const std::array<uint64_t, 4>& d) {
    for (size_t k = 0; k < 4; k++)
      hists[op][k].Add(d[k]);
  });
  std::map<std::pair<std::string, std::string>, const json*> rows;
  for (const json& row : command_doc["latency_split"])
    rows[{row["opcode"].get<std::string>(), row["phase"].get<std::string>()}] = &row;
  json out = json::array();
  for (const auto& [op, h] : hists) {
    json phases = json::array();
    for (size_t k = 0; k < 4; k++) {
      json p = {{"phase", kCommandPhases[k]}, {"buckets", h[k].Json()}};
      if (auto it = rows.find({op, kCommandPhases[k]}); it != rows.end())
        for (const char* q : {"p50", "p90", "p99", "max"})
          p[std::string(q) + "_ns"] = (*it->second)[std::string(q) + "_us"].get<double>() * 1000.0;
      phases.push_back(std::move(p));
    }
    out.push_back({{"opcode", op}, {"count", h[3].total()}, {"phases", std::move(phases)}});
  }
  return out;
}

json SlowestJson(const HtmlReportInput& in) {
  json out = json::array();
  if (!in.commands || !in.slowest)
    return out;
  const CommandJoin& j = in.commands->join;
  for (size_t i = 0; i < in.slowest->size(); i++) {
    const JoinedCommand& c = *(*in.slowest)[i];
    const StoryWindow* w = in.stories && i < in.stories->size() ? &(*in.stories)[i] : nullptr;
    json e = {{"ctrl", c.host.ctrl},
              {"qid", c.host.qid},
              {"cid", c.host.cid},
              {"opcode", NvmeCommandName(c.host.qid, c.host.opcode)},
              {"nsid", c.host.nsid},
              {"status", c.host.status},
              {"setup_ns", c.host.setup_ns},
              {"total_ns", HostTotal(c)},
              {"core", nullptr},
              {"split", nullptr}};
    if (c.fetch >= 0 || c.complete >= 0) {
      const FwCommandRecord& r =
          j.fw_records()[static_cast<size_t>(c.fetch >= 0 ? c.fetch : c.complete)];
      e["dev"] = r.dev;
      e["core"] = r.core;
    }
    if (HasSplit(c)) {
      const CommandSplit s = SplitOf(j, c);
      e["split"] = {s.submit_to_fetch, s.fetch_to_complete, s.complete_to_host};
    } else {
      std::string why;
      if (c.fetch < 0)
        why += "no firmware fetch: " + std::string(HostUnmatchedName(c.why_no_fetch));
      if (c.complete < 0)
        why += std::string(why.empty() ? "" : "; ") + "no firmware completion: " +
               std::string(HostUnmatchedName(c.why_no_complete));
      e["why"] = why;
    }
    if (w)
      e["story"] = CommandStoryText(j, c, *w);
    out.push_back(std::move(e));
  }
  return out;
}

// JSON inside <script>: no "</script>" or "<!--" can end or change it.
std::string ScriptSafe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (ch == '<')
      out += "\\u003c";
    else if (ch == '>')
      out += "\\u003e";
    else if (ch == '&')
      out += "\\u0026";
    else
      out += ch;
  }
  return out;
}

void ReplaceOnce(std::string* page, std::string_view slot, std::string_view with) {
  const size_t at = page->find(slot);
  if (at != std::string::npos)
    page->replace(at, slot.size(), with);
}

}  // namespace

void HtmlTimeline::Add(const CaptureEvent& ev) {
  switch (ev.kind) {
    case CaptureKind::kMarker:
      if (markers_total_++ < kMaxTimelineMarks) {
        std::string_view text(reinterpret_cast<const char*>(ev.data.data()), ev.data.size());
        std::string shown = Printable(text.substr(0, kMaxMarkerText));
        if (text.size() > kMaxMarkerText)
          shown += "...";
        markers_.push_back({ev.ts, std::move(shown)});
      }
      break;
    case CaptureKind::kLost:
      if (losses_total_++ < kMaxTimelineMarks)
        losses_.push_back({ev.ts, ev.dev, ev.core, ev.count, ev.reason});
      break;
    case CaptureKind::kState: {
      const std::pair<uint8_t, uint32_t> now{ev.state, ev.producer_gen};
      const auto [it, first] = last_state_.try_emplace(ev.dev, now);
      if (first || it->second == now)
        break;  // the state the capture starts with, or the same again
      it->second = now;
      if (states_total_++ < kMaxTimelineMarks)
        states_.push_back({ev.ts, ev.dev, ev.producer_gen, ev.state});
      break;
    }
    default:
      break;
  }
}

json HtmlTimeline::Json() const {
  json markers = json::array(), losses = json::array(), states = json::array();
  for (const Marker& m : markers_)
    markers.push_back({{"ts_ns", m.ts}, {"text", m.text}});
  for (const Loss& l : losses_)
    losses.push_back({{"ts_ns", l.ts},
                      {"dev", l.dev},
                      {"core", l.core},
                      {"count", l.count},
                      {"reason", l.reason < kLostReasonCount ? LostReasonName(l.reason)
                                                             : std::string_view("unknown")}});
  for (const State& s : states_)
    states.push_back({{"ts_ns", s.ts},
                      {"dev", s.dev},
                      {"producer_gen", s.producer_gen},
                      {"state", StateName(s.state)}});
  return {{"markers", markers},   {"markers_total", markers_total_}, {"losses", losses},
          {"losses_total", losses_total_}, {"states", states},        {"states_total", states_total_}};
}

std::vector<const JoinedCommand*> SlowestCommands(const CommandJoin& j, size_t n) {
  // The n longest so far, shortest on top: memory n, whatever the capture.
  auto longer = [](const JoinedCommand* a, const JoinedCommand* b) {
    const uint64_t ta = HostTotal(*a), tb = HostTotal(*b);
    return ta != tb ? ta > tb : a->host.setup_ns < b->host.setup_ns;
  };
  std::priority_queue<const JoinedCommand*, std::vector<const JoinedCommand*>, decltype(longer)>
      top(longer);
  for (const JoinedCommand& c : j.commands()) {
    if (!c.host.complete_ns || n == 0)
      continue;
    if (top.size() < n) {
      top.push(&c);
    } else if (longer(&c, top.top())) {
      top.pop();
      top.push(&c);
    }
  }
  std::vector<const JoinedCommand*> out;
  for (; !top.empty(); top.pop())
    out.push_back(top.top());
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<StoryWindow> StoryWindowsOf(const CommandJoin& j,
                                        const std::vector<const JoinedCommand*>& cmds) {
  std::vector<StoryWindow> windows;
  for (const JoinedCommand* c : cmds) {
    windows.push_back(CommandStoryWindow(j, *c));
    windows.back().max_records = kStoryRecords;
  }
  return windows;
}

json HtmlReportData(const HtmlReportInput& in) {
  json doc;
  doc["file"] = in.file;
  doc["stat"] = in.stat->Json(in.file);
  doc["event_latency"] = EventLatencyJson(*in.stat, doc["stat"]);
  doc["timeline"] = in.timeline ? in.timeline->Json() : json(nullptr);
  if (in.commands) {
    doc["commands"] = CommandStatJson(*in.commands);
    doc["opcode_latency"] = OpcodeLatencyJson(*in.commands, doc["commands"]);
  } else {
    doc["commands"] = nullptr;
    doc["opcode_latency"] = json::array();
  }
  doc["slowest"] = SlowestJson(in);
  doc["slowest_max"] = kSlowest;
  doc["story_records_max"] = kStoryRecords;
  doc["cause_bars_max"] = kCauseBars;
  return doc;
}

std::string HtmlReportPage(const json& data) {
  std::string page(kHtmlReportTemplate);
  // The data last: its text (a marker line) may look like a slot.
  ReplaceOnce(&page, "/*HMBTRACE_STYLE*/", kHtmlReportStyle);
  ReplaceOnce(&page, "/*HMBTRACE_SCRIPT*/", kHtmlReportScript);
  ReplaceOnce(&page, "/*HMBTRACE_DATA*/",
              ScriptSafe(data.dump(-1, ' ', false, json::error_handler_t::replace)));
  return page;
}

Status WriteHtmlReport(const HtmlReportInput& in, const std::string& path) {
  const std::string page = HtmlReportPage(HtmlReportData(in));
  FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr;
  if (f) {
    ok = std::fwrite(page.data(), 1, page.size(), f) == page.size();
    ok = std::fclose(f) == 0 && ok;
  }
  if (!ok)
    return Status::Error("--html " + path + ": cannot write: " + std::strerror(errno));
  return {};
}

Status WriteStatHtml(const std::string& input,
                     const std::string& path,
                     const StatCollector& stat,
                     const HtmlTimeline& timeline,
                     const CommandCapture* cap) {
  HtmlReportInput in;
  in.file = input;
  in.stat = &stat;
  in.timeline = &timeline;
  in.commands = cap;
  std::vector<const JoinedCommand*> slowest;
  std::vector<StoryWindow> stories;
  if (cap && !cap->join.commands().empty()) {
    slowest = SlowestCommands(cap->join, kSlowest);
    stories = StoryWindowsOf(cap->join, slowest);
    if (Status s = ReadCommandCapture(input, nullptr, &stories, cap->host_clock); !s.ok())
      return s;
    in.slowest = &slowest;
    in.stories = &stories;
  }
  return WriteHtmlReport(in, path);
}

}  // namespace hmbtrace
