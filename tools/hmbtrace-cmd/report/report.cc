// SPDX-License-Identifier: GPL-2.0-only
#include "report/report.h"

#include <cstdio>

#include "dump/dump_events.h"
#include "dump/dump_file.h"
#include "format.h"

namespace hmbtrace {
namespace {

std::string Prefix(uint64_t at, int cpu) {
  std::string out;
  AppendHostTime(&out, at);
  AppendCpu(&out, cpu);
  return out;
}

void AppendHex(std::string* out, std::span<const uint8_t> bytes) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  const size_t at = out->size();
  out->resize(at + 2 * bytes.size());
  char* p = out->data() + at;
  for (const uint8_t b : bytes) {
    *p++ = kHexDigits[b >> 4];
    *p++ = kHexDigits[b & 0xf];
  }
}

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

bool Reporter::Wanted(const std::string& name) const {
  return options_.events.empty() || options_.events.count(name);
}

const FormatPlan& Reporter::PlanFor(const EventDesc& desc) {
  if (plans_epoch_ != epoch_) {
    plans_.clear();
    plans_epoch_ = epoch_;
  }
  auto it = plans_.find(&desc);
  if (it == plans_.end())
    it = plans_.emplace(&desc, FormatPlan(desc)).first;
  return it->second;
}

bool Reporter::FormatRecord(const CaptureEvent& ev, TimelineLine* line) {
  hmb_events_++;
  const DictionaryStore& gens = lookahead_ ? *lookahead_ : dicts_;
  Place fresh;
  Place* place = &fresh;
  if (ev.cpu >= 0 && ev.cpu < kPlaceCpus) {
    if (places_.size() <= static_cast<size_t>(ev.cpu))
      places_.resize(static_cast<size_t>(ev.cpu) + 1);
    place = &places_[static_cast<size_t>(ev.cpu)];
  }
  if (place->epoch != epoch_ || place->dev != ev.dev) {
    place->epoch = epoch_;
    place->dev = ev.dev;
    place->gen = gens.GenerationFor(ev.dev, ev.cpu);
    place->dict = gens.For(ev.dev, ev.cpu);
  }
  FwTime fw_time;
  if (ev.clock_format || ev.retimed) {
    fw_time = RecordFwTime(clocks_, place->gen, ev);
    if (!fw_time.converted())
      not_converted_++;
  }
  if (!options_.cores.empty() && !options_.cores.count(ev.core))
    return false;
  const Dictionary* dict = place->dict;
  const EventDesc* desc = dict ? dict->Find(ev.event_id) : nullptr;
  if (desc ? !Wanted(desc->name) : !options_.events.empty())
    return false;  // an event without a name matches no --event
  std::string& text = line->body;
  text.clear();
  text += "dev=";
  AppendDecimal(&text, ev.dev);
  text += " core=";
  AppendDecimal(&text, ev.core);
  text += " seq=";
  AppendDecimal(&text, ev.seq);
  text += " fw_ts=";
  AppendDecimal(&text, ev.fw_ts);
  text += ' ';
  if (desc) {
    text += desc->name;
    text += ": ";
    PlanFor(*desc).Append(&text, ev.data);
  } else {
    AppendRecordText(&text, dict, ev.event_id, ev.data);
  }
  if (ev.retimed) {
    text += ' ';
    AppendRetimedTimeText(&text, fw_time, ev.ts, ev.drain_ts);
  } else if (ev.clock_format) {
    text += ' ';
    AppendFwTimeText(&text, fw_time);
  }
  if (!desc || options_.raw) {
    text += " payload=";
    AppendHex(&text, ev.data);
  }
  if (ev.data.size() < ev.len) {
    text += " (len ";
    AppendDecimal(&text, ev.len);
    text += ", ";
    AppendDecimal(&text, ev.data.size());
    text += " bytes captured)";
  }
  line->kind = TimelineLine::Kind::kRecord;
  line->at = fw_time.converted() ? fw_time.host_ns : ev.ts;
  line->core = ev.core;
  return true;
}

bool Reporter::Format(const CaptureEvent& ev, TimelineLine* line) {
  // Field by field, not `*line = {}`: the body keeps its capacity.
  line->kind = TimelineLine::Kind::kHost;
  line->core = 0;
  line->body.clear();
  line->ts = ev.ts;
  line->at = ev.ts;
  line->cpu = ev.cpu;
  line->dev = ev.dev;
  if (ev.kind == CaptureKind::kRecord)
    return FormatRecord(ev, line);
  if (ev.kind == CaptureKind::kState || ev.kind == CaptureKind::kDict)
    epoch_++;  // it may change a dictionary store (Place)
  const std::string dev = "dev=" + std::to_string(ev.dev);
  std::string& text = line->body;
  switch (ev.kind) {
    case CaptureKind::kRecord:
      return FormatRecord(ev, line);
    case CaptureKind::kLost:
      hmb_events_++;
      if (!Wanted("lost") || (!options_.cores.empty() && !options_.cores.count(ev.core)))
        return false;
      line->kind = TimelineLine::Kind::kBeforeCore;
      line->core = ev.core;
      text = dev + " core=" + std::to_string(ev.core) + " LOST " + std::to_string(ev.count) +
             " records (" + std::string(LostReasonName(ev.reason)) +
             ") before seq=" + std::to_string(ev.at_seq);
      return true;
    case CaptureKind::kState: {
      hmb_events_++;
      dicts_.Add(ev);
      if (lookahead_)
        lookahead_->FollowState(ev);
      clocks_.AddState(ev.dev, ev.producer_gen, ev.clock_hz);
      if (!Wanted("state"))
        return false;
      line->kind = TimelineLine::Kind::kBeforeDevCpu;
      text = dev + " STATE " + std::string(StateName(ev.state)) + " name=" + Printable(ev.name) +
             " producer_gen=" + std::to_string(ev.producer_gen) +
             " nr_cores=" + std::to_string(ev.nr_cores) +
             " clock_hz=" + std::to_string(ev.clock_hz) + " build_id=" + Hex(ev.build_id);
      return true;
    }
    case CaptureKind::kDict: {
      hmb_events_++;
      const DictionaryStore::Update u = dicts_.Add(ev);
      if (!Wanted("dict"))
        return false;
      line->kind = TimelineLine::Kind::kBeforeDevCpu;
      if (!u.problem.empty()) {
        text = "DICTIONARY " + u.problem;
        return true;
      }
      if (!u.completed)
        return false;
      const Dictionary* d = dicts_.Find(ev.dev, ev.producer_gen);
      text = dev + " DICTIONARY producer_gen=" + std::to_string(ev.producer_gen) +
             " complete: " + std::to_string(d ? d->events().size() : 0) + " events, " +
             std::to_string(ev.total_len) + " bytes, build_id=" + Hex(ev.build_id);
      return true;
    }
    case CaptureKind::kClock: {
      hmb_events_++;
      const ClockFit fit{ev.dev, ev.producer_gen, ev.clock_flags, ev.clock, ev.clock_id};
      const std::string problem = clocks_.Add(fit);
      // The fits of the other trace clocks (one per clock) convert nothing here.
      if (!Wanted("clock") || !clocks_.Wants(fit))
        return false;
      line->kind = TimelineLine::Kind::kBeforeDevCpu;
      // ClockFitText() starts with "dev=N ", as this line does.
      const std::string fields = ClockFitText(fit, clocks_.ClockHz(ev.dev, ev.producer_gen));
      text = dev + " CLOCK " + fields.substr(fields.find(' ') + 1);
      if (!problem.empty())
        text += " [" + problem + "]";
      return true;
    }
    case CaptureKind::kMarker:
      if (!Wanted("marker"))
        return false;
      text = "MARKER " + Printable(AsText(ev.data));
      return true;
    case CaptureKind::kMalformed:
      text = "MALFORMED " + Printable(ev.malformed_event) + ": " + std::string(ev.malformed_reason);
      return true;
  }
  return false;
}

std::string Reporter::Line(const CaptureEvent& ev) {
  TimelineLine line;
  if (!Format(ev, &line))
    return {};
  const uint64_t at = line.kind == TimelineLine::Kind::kRecord ? line.at : line.ts;
  return Prefix(at, line.cpu) + line.body + "\n";
}

Status WriteReport(const std::string& input,
                   const ReportOptions& options,
                   const std::function<bool(const std::string&)>& sink,
                   ReportSummary* summary) {
  DictionaryStore lookahead;
  Reporter reporter(options, &lookahead);
  CaptureClocks trace_clocks;
  if (Status s = ReadCaptureClocks(input, &trace_clocks); !s.ok())
    return s;
  SetCaptureClock(&reporter.clocks(), trace_clocks.hmb, "report", input);
  Timeline timeline(options.reorder_margin_ms * 1000000u);
  // A crash dump's commands in flight, merged at their submit time before
  // the firmware lines (a dump's events come in converted time order).
  std::vector<DumpInflightLine> inflight;
  size_t next_inflight = 0;
  if (IsDumpFile(input) && (options.events.empty() || options.events.count("inflight"))) {
    if (Result<Dump> dump = ReadDumpFile(input); dump.ok())
      inflight = DumpInflightLines(dump.value());
  }
  auto add_inflight = [&](uint64_t until) {
    for (; next_inflight < inflight.size() && inflight[next_inflight].at <= until; next_inflight++) {
      TimelineLine host;
      host.kind = TimelineLine::Kind::kHost;
      host.ts = host.at = inflight[next_inflight].at;
      host.body = std::move(inflight[next_inflight].text);
      timeline.Add(host);
    }
  };
  std::string buffer;
  TimelineLine line;  // reused: its body keeps its capacity
  bool sink_ok = true;
  Status read = ReadCaptureWithDictionaries(
      input, &lookahead,
      [&](const CaptureEvent& ev) {
        if (ev.kind == CaptureKind::kRecord || ev.kind == CaptureKind::kLost)
          add_inflight(ev.ts);
        if (reporter.Format(ev, &line))
          timeline.Add(line);
        timeline.Release(&buffer);
        if (buffer.size() > (1u << 16)) {
          sink_ok = sink(buffer);
          buffer.clear();
        }
        return sink_ok;
      },
      /*streams_stdout=*/true);
  if (sink_ok) {
    add_inflight(UINT64_MAX);
    timeline.Finish(&buffer);
    sink(buffer);
  }
  ReportClockProblem(reporter.clocks(), "report", input);
  summary->hmb_events = reporter.hmb_events();
  summary->not_converted = reporter.not_converted();
  summary->late = timeline.late();
  summary->late_max_ns = timeline.late_max_ns();
  return read;
}

int RunReport(const std::string& input, const ReportOptions& options) {
  ReportSummary summary;
  const Status written = WriteReport(
      input, options,
      [](const std::string& text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return !std::ferror(stdout);  // stop on EPIPE (e.g. `| head`)
      },
      &summary);
  std::fflush(stdout);
  if (!written.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd report: %s\n", written.message().c_str());
    return 1;
  }
  if (summary.hmb_events == 0) {
    std::fprintf(stderr, "hmbtrace-cmd report: %s: no hmb events; %s\n", input.c_str(),
                 std::string(kRecordHint).c_str());
    return 1;
  }
  if (summary.not_converted)
    std::fprintf(stderr,
                 "hmbtrace-cmd report: %llu records had no clock fit (fw_time=?): placed at "
                 "their ftrace time\n",
                 static_cast<unsigned long long>(summary.not_converted));
  if (summary.late)
    std::fprintf(stderr,
                 "hmbtrace-cmd report: %llu records were drained more than the %llu ms reorder "
                 "margin after their converted time and could not be placed (marked \"placed "
                 "late\", by up to %s); raise --reorder-margin\n",
                 static_cast<unsigned long long>(summary.late),
                 static_cast<unsigned long long>(options.reorder_margin_ms),
                 BoundText(summary.late_max_ns).c_str());
  return 0;
}

}  // namespace hmbtrace
