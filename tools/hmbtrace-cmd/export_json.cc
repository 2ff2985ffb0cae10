// SPDX-License-Identifier: GPL-2.0-only
#include "export_json.h"

#include <cerrno>
#include <cstring>

namespace hmbtrace {

namespace {
constexpr size_t kFlushAt = 1u << 16;

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
  if (!out_buf_.empty() && std::fwrite(out_buf_.data(), 1, out_buf_.size(), out_) != out_buf_.size())
    failed_ = true;
  out_buf_.clear();
}

void JsonTraceWriter::PutString(std::string_view s) {
  out_buf_ += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out_buf_ += '\\';
      out_buf_ += ch;
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", c);
      out_buf_ += esc;
    } else {
      out_buf_ += ch;
    }
  }
  out_buf_ += '"';
}

void JsonTraceWriter::PutTs(uint64_t ts) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llu.%03llu", static_cast<unsigned long long>(ts / 1000),
                static_cast<unsigned long long>(ts % 1000));
  Put(buf);
}

void JsonTraceWriter::Begin(const char* ph, std::string_view name, int pid, int tid) {
  Put(first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
  first_ = false;
  Put(ph);
  Put("\",\"name\":");
  PutString(name);
  Put(",\"pid\":");
  Put(std::to_string(pid));
  Put(",\"tid\":");
  Put(std::to_string(tid));
}

void JsonTraceWriter::Track(const ExportTrack& t) {
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

void JsonTraceWriter::Event(const ExportEvent& e) {
  auto it = tracks_.find(e.track);
  if (it == tracks_.end()) {
    failed_ = true;  // a bug: ExportModel announces tracks first
    return;
  }
  const Where& w = it->second;
  switch (e.type) {
    case ExportEvent::Type::kBegin:
      Begin("B", e.name, w.pid, w.tid);
      break;
    case ExportEvent::Type::kEnd:
      Begin("E", e.name, w.pid, w.tid);
      break;
    case ExportEvent::Type::kInstant:
      Begin("i", e.name, w.pid, w.tid);
      Put(",\"s\":\"t\"");
      break;
    case ExportEvent::Type::kCounter:
      Begin("C", w.name, w.pid, w.tid);
      break;
  }
  Put(",\"ts\":");
  PutTs(e.ts);
  for (uint64_t id : e.flow_ids)
    Put(",\"bind_id\":\"0x" + Hex64(id) + "\",\"flow_out\":true");
  for (uint64_t id : e.terminating_flow_ids)
    Put(",\"bind_id\":\"0x" + Hex64(id) + "\",\"flow_in\":true");
  Put(",\"args\":{");
  bool first = true;
  if (e.type == ExportEvent::Type::kCounter) {
    PutString(w.unit.empty() ? std::string_view("value") : std::string_view(w.unit));
    Put(":" + std::to_string(e.counter));
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
        Put(std::to_string(a.u));
        break;
      case ExportArg::Type::kInt:
        Put(std::to_string(a.i));
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
  if (out_buf_.size() >= kFlushAt)
    Flush();
}

bool JsonTraceWriter::Finish(std::string* error) {
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
