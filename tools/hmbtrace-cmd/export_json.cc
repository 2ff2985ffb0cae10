// SPDX-License-Identifier: GPL-2.0-only
#include "export_json.h"

#include <cerrno>
#include <charconv>
#include <cstring>

namespace hmbtrace {

namespace {
// Output is written in pieces of about this size.
constexpr size_t kFlushAt = 1u << 18;

std::string Hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

JsonTraceWriter::JsonTraceWriter(std::FILE* out) : out_(out) {
  Put("{\"traceEvents\":[");
}

void JsonTraceWriter::Flush() {
  if (!out_buf_.empty() &&
      std::fwrite(out_buf_.data(), 1, out_buf_.size(), out_) != out_buf_.size())
    failed_ = true;
  out_buf_.clear();
}

void JsonTraceWriter::PutString(std::string_view s) {
  // At most 6 bytes per character (\u00XX) and the quotes.
  char* const start = out_buf_.Room(6 * s.size() + 2);
  char* p = start;
  *p++ = '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c != '"' && c != '\\' && c >= 0x20) {
      *p++ = ch;
    } else if (c >= 0x20) {
      *p++ = '\\';
      *p++ = ch;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      std::memcpy(p, esc, sizeof(esc));
      p += sizeof(esc);
    }
  }
  *p++ = '"';
  out_buf_.Advance(static_cast<size_t>(p - start));
}

template <typename T>
void JsonTraceWriter::PutNumber(T v) {
  char* const p = out_buf_.Room(24);
  out_buf_.Advance(static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p));
}

void JsonTraceWriter::PutTs(uint64_t ts) {
  // µs with three decimals: the ns.
  PutNumber(ts / 1000);
  const unsigned ns = static_cast<unsigned>(ts % 1000);
  const char frac[4] = {'.', static_cast<char>('0' + ns / 100), static_cast<char>('0' + ns / 10 % 10),
                        static_cast<char>('0' + ns % 10)};
  Put(std::string_view(frac, sizeof(frac)));
}

void JsonTraceWriter::Begin(const char* ph, std::string_view name, int pid, int tid) {
  Put(first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
  first_ = false;
  Put(ph);
  Put("\"");
  if (!name.empty()) {
    Put(",\"name\":");
    PutString(name);
  }
  Put(",\"pid\":");
  PutNumber(pid);
  Put(",\"tid\":");
  PutNumber(tid);
}

void JsonTraceWriter::Track(const ExportTrack& t) {
  WriteHeld();
  Where w;
  w.pid = t.pid;
  w.name = t.name;
  w.unit = t.unit;
  if (t.kind == ExportTrack::Kind::kGroup) {
    tracks_[t.uuid] = w;
    Begin("M", "process_name", t.pid, 0);
    Put(",\"args\":{\"name\":");
    PutString(t.name);
    Put("}}");
    Begin("M", "process_sort_index", t.pid, 0);
    Put(",\"args\":{\"sort_index\":" + std::to_string(t.rank) + "}}");
    return;
  }
  if (t.kind == ExportTrack::Kind::kCounter) {
    w.counter = true;
    tracks_[t.uuid] = w;
    return;
  }
  if (!t.parent_uuid) {
    // A root slice track (trace_marker): a process of its own.
    Begin("M", "process_name", t.pid, 0);
    Put(",\"args\":{\"name\":");
    PutString(t.name);
    Put("}}");
    w.name = "markers";
  }
  w.tid = ++next_tid_[t.pid];
  tracks_[t.uuid] = w;
  Begin("M", "thread_name", w.pid, w.tid);
  Put(",\"args\":{\"name\":");
  PutString(w.name);
  Put("}}");
  Begin("M", "thread_sort_index", w.pid, w.tid);
  Put(",\"args\":{\"sort_index\":" + std::to_string(t.rank) + "}}");
}

void JsonTraceWriter::WriteHeld() {
  if (!held_)
    return;
  held_ = false;
  Begin("B", held_name_, held_where_->pid, held_where_->tid);
  Put(",\"ts\":");
  PutTs(held_ts_);
  Put("}");
}

void JsonTraceWriter::Event(const ExportEvent& e) {
  if (e.track != last_track_) {
    auto it = tracks_.find(e.track);
    if (it == tracks_.end()) {
      failed_ = true;  // a bug: ExportModel announces tracks first
      return;
    }
    last_track_ = e.track;
    last_where_ = &it->second;  // nodes of an unordered_map stay put
  }
  const Where& w = *last_where_;
  if (held_ && e.type == ExportEvent::Type::kEnd && e.track == held_track_ && e.ts >= held_ts_) {
    // The held begin and this end: one complete event.
    held_ = false;
    Begin("X", held_name_, w.pid, w.tid);
    Put(",\"ts\":");
    PutTs(held_ts_);
    Put(",\"dur\":");
    PutTs(e.ts - held_ts_);
    Rest(e, w);
    return;
  }
  WriteHeld();
  switch (e.type) {
    case ExportEvent::Type::kBegin:
      if (e.args.empty() && e.flow_ids.empty() && e.terminating_flow_ids.empty()) {
        held_ = true;
        held_ts_ = e.ts;
        held_track_ = e.track;
        held_where_ = &w;
        held_name_.assign(e.name);
        return;
      }
      Write("B", e, w);
      break;
    case ExportEvent::Type::kEnd:
      Write("E", e, w);
      break;
    case ExportEvent::Type::kInstant:
      Write("i", e, w);
      break;
    case ExportEvent::Type::kCounter:
      Write("C", e, w);
      break;
  }
}

void JsonTraceWriter::Write(const char* ph, const ExportEvent& e, const Where& w) {
  Begin(ph, e.type == ExportEvent::Type::kCounter ? std::string_view(w.name) : e.name, w.pid,
        w.tid);
  Put(",\"ts\":");
  PutTs(e.ts);
  Rest(e, w);
}

void JsonTraceWriter::Rest(const ExportEvent& e, const Where& w) {
  for (uint64_t id : e.flow_ids)
    Put(",\"bind_id\":\"0x" + Hex64(id) + "\",\"flow_out\":true");
  for (uint64_t id : e.terminating_flow_ids)
    Put(",\"bind_id\":\"0x" + Hex64(id) + "\",\"flow_in\":true");
  if (e.type != ExportEvent::Type::kCounter && e.args.empty()) {
    Put("}");
  } else {
    Put(",\"args\":{");
    bool first = true;
    if (e.type == ExportEvent::Type::kCounter) {
      PutString(w.unit.empty() ? std::string_view("value") : std::string_view(w.unit));
      Put(":");
      PutNumber(e.counter);
      first = false;
    }
    for (const ExportArg& a : e.args) {
      if (!first)
        Put(",");
      first = false;
      PutString(a.name);
      Put(":");
      switch (a.type) {
        case ExportArg::Type::kUint:
          PutNumber(a.u);
          break;
        case ExportArg::Type::kInt:
          PutNumber(a.i);
          break;
        case ExportArg::Type::kBool:
          Put(a.u ? "true" : "false");
          break;
        case ExportArg::Type::kString:
          PutString(a.text());
          break;
      }
    }
    Put("}}");
  }
  if (out_buf_.size() >= kFlushAt)
    Flush();
}

bool JsonTraceWriter::Finish(std::string* error) {
  WriteHeld();
  Put("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hmbtrace-cmd export\",");
  Put("\"clock\":");
  PutString("host trace clock" + (trace_clock_.empty() ? "" : " \"" + trace_clock_ + "\"") +
            ", us; firmware records at their converted time");
  Put("}}\n");
  Flush();
  if (failed_ || std::ferror(out_)) {
    *error = std::string("writing the trace failed: ") + std::strerror(errno ? errno : EIO);
    return false;
  }
  return true;
}

}  // namespace hmbtrace
