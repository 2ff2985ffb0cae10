// SPDX-License-Identifier: GPL-2.0-only
#include "export_json.h"

#include <cerrno>
#include <charconv>
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
  // Runs of characters that need no escape go in one append.
  size_t run = 0;
  for (size_t i = 0; i < s.size(); i++) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c != '"' && c != '\\' && c >= 0x20)
      continue;
    out_buf_.append(s.data() + run, i - run);
    run = i + 1;
    if (c >= 0x20) {
      out_buf_ += '\\';
      out_buf_ += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out_buf_.append(esc, sizeof(esc));
    }
  }
  out_buf_.append(s.data() + run, s.size() - run);
  out_buf_ += '"';
}

template <typename T>
void JsonTraceWriter::PutNumber(T v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out_buf_.append(buf, r.ptr);
}

void JsonTraceWriter::PutTs(uint64_t ts) {
  // µs with three decimals: the ns.
  PutNumber(ts / 1000);
  const unsigned ns = static_cast<unsigned>(ts % 1000);
  const char frac[4] = {'.', static_cast<char>('0' + ns / 100), static_cast<char>('0' + ns / 10 % 10),
                        static_cast<char>('0' + ns % 10)};
  out_buf_.append(frac, sizeof(frac));
}

void JsonTraceWriter::Begin(const char* ph, std::string_view name, int pid, int tid) {
  Put(first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
  first_ = false;
  Put(ph);
  Put("\",\"name\":");
  PutString(name);
  Put(",\"pid\":");
  PutNumber(pid);
  Put(",\"tid\":");
  PutNumber(tid);
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
