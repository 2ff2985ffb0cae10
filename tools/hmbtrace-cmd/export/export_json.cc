// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_json.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <vector>

namespace hmbtrace {

namespace {
// Output is written in pieces of about this size.
constexpr size_t kFlushAt = 1u << 18;

std::string Hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Writers into room already reserved (Buffer::Room()): the hot path of
// every event, with no bounds check per piece. Each returns the new end.

// A literal, its length known at compile time (no call to memcpy).
template <size_t N>
char* Lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

// The most a JSON string of n characters takes (String()).
constexpr size_t StringRoom(size_t n) {
  return 6 * n + 2;  // an escaped control character: 6 bytes; the quotes
}

char* String(char* p, std::string_view s) {
  *p++ = '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c != '"' && c != '\\' && c >= 0x20) [[likely]] {
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
  return p;
}

constexpr size_t kNumberRoom = 24;

template <typename T>
char* Number(char* p, T v) {
  return std::to_chars(p, p + kNumberRoom, v).ptr;
}

// µs with three decimals: the ns.
char* Ts(char* p, uint64_t ts) {
  p = Number(p, ts / 1000);
  const unsigned ns = static_cast<unsigned>(ts % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + ns / 100);
  p[2] = static_cast<char>('0' + ns / 10 % 10);
  p[3] = static_cast<char>('0' + ns % 10);
  return p + 4;
}
}  // namespace

JsonTraceWriter::JsonTraceWriter(std::FILE* out) : out_(out) {
  Put("{\"traceEvents\":[");
}

void JsonTraceWriter::Release(Where& w) {
  if (w.b_at == kNotHeld)
    return;
  w.b_at = kNotHeld;
  std::erase(open_b_, &w);
}

void JsonTraceWriter::CutOutBegins() {
  std::sort(open_b_.begin(), open_b_.end(),
            [](const Where* a, const Where* b) { return a->b_at < b->b_at; });
  // What is between them is written out as it is (no copy of the buffer).
  auto write = [this](std::string_view text) {
    if (!text.empty() && std::fwrite(text.data(), 1, text.size(), out_) != text.size())
      failed_ = true;
  };
  size_t from = 0;
  for (Where* w : open_b_) {
    write(out_buf_.view(from, w->b_at - from));
    std::string_view b = out_buf_.view(w->b_at, w->b_end - w->b_at);
    // Every event but the file's first begins with ",\n" (Begin()), and
    // the first is a track's "M".
    const size_t sep = b.starts_with(",") ? 2 : 1;
    w->b_text.assign(b.substr(sep));
    w->b_text_ts_end = w->b_ts_end - w->b_at - sep;
    w->b_at = kNotHeld;
    from = w->b_end;
    begins_moved_++;
  }
  write(out_buf_.view(from, out_buf_.size() - from));
  open_b_.clear();
  out_buf_.clear();
}

void JsonTraceWriter::PutCutBegin(Where& w) {
  if (w.b_text.empty())
    return;
  Put(first_ ? "\n" : ",\n");
  first_ = false;
  Put(w.b_text);
  w.b_text.clear();
}

void JsonTraceWriter::Flush(bool all) {
  size_t keep = out_buf_.size();
  for (const Where* w : open_b_)
    keep = std::min(keep, w->b_at);
  if (all) {
    while (!open_b_.empty())
      Release(*open_b_.back());
    keep = out_buf_.size();
  } else if (out_buf_.size() - keep > kHoldBytes) {
    CutOutBegins();
    keep = out_buf_.size();
  } else if (keep < kFlushAt) {
    flush_at_ = out_buf_.size() + kFlushAt;  // little to write: not yet
    return;
  }
  if (keep && std::fwrite(out_buf_.data(), 1, keep, out_) != keep)
    failed_ = true;
  out_buf_.EraseFront(keep);
  for (Where* w : open_b_) {
    w->b_at -= keep;
    w->b_ts_end -= keep;
    w->b_end -= keep;
  }
  flush_at_ = 0;
}

void JsonTraceWriter::PutString(std::string_view s) {
  char* const start = out_buf_.Room(StringRoom(s.size()));
  out_buf_.Advance(static_cast<size_t>(String(start, s) - start));
}

template <typename T>
void JsonTraceWriter::PutNumber(T v) {
  char* const p = out_buf_.Room(kNumberRoom);
  out_buf_.Advance(static_cast<size_t>(Number(p, v) - p));
}

void JsonTraceWriter::PutTs(uint64_t ts) {
  char* const p = out_buf_.Room(kNumberRoom + 4);
  out_buf_.Advance(static_cast<size_t>(Ts(p, ts) - p));
}

void JsonTraceWriter::Begin(const char* ph, std::string_view name, int pid, int tid,
                            uint32_t name_id) {
  char* const start = out_buf_.Room(32 + StringRoom(name.size()) + 2 * kNumberRoom);
  char* p = start;
  p = first_ ? Lit(p, "\n{\"ph\":\"") : Lit(p, ",\n{\"ph\":\"");
  first_ = false;
  while (*ph)
    *p++ = *ph++;
  *p++ = '"';
  if (!name.empty()) {
    p = Lit(p, ",\"name\":");
    p = Quoted(p, name_id, name);
  }
  p = Lit(p, ",\"pid\":");
  p = Number(p, pid);
  p = Lit(p, ",\"tid\":");
  p = Number(p, tid);
  out_buf_.Advance(static_cast<size_t>(p - start));
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
  Where& w = *held_where_;
  Release(w);
  PutCutBegin(w);
  w.b_at = out_buf_.size();
  Begin("B", held_name_, w.pid, w.tid, held_name_id_);
  Put(",\"ts\":");
  PutTs(held_ts_);
  w.b_ts_end = out_buf_.size();
  Put("}");
  w.b_end = out_buf_.size();
  w.b_ts = held_ts_;
  w.b_args = false;
  w.b_open = true;
  open_b_.push_back(&w);
}

void JsonTraceWriter::WriteBegin(const ExportEvent& e, Where& w) {
  Release(w);
  PutCutBegin(w);
  w.b_at = out_buf_.size();
  Begin("B", e.name, w.pid, w.tid, e.name_id);
  Put(",\"ts\":");
  PutTs(e.ts);
  w.b_ts_end = out_buf_.size();
  Rest(e, w);
  w.b_end = out_buf_.size();
  w.b_ts = e.ts;
  w.b_args = !e.args.empty();
  w.b_open = true;
  open_b_.push_back(&w);
}

std::string JsonTraceWriter::ZeroLengthX(std::string_view b,
                                         size_t ts_end,
                                         bool b_args,
                                         const ExportEvent& end) {
  std::string x(b);
  x[x.find("\"ph\":\"") + 6] = 'X';
  x.insert(ts_end, ",\"dur\":0.000");
  // The end's arguments, rendered on their own, but for those the begin
  // has (a JSON object's names are unique).
  std::string_view begin_args;
  if (b_args)
    begin_args = b.substr(b.find(",\"args\":{"));
  proto_wire::Buffer main;
  main.swap(out_buf_);
  PutArgs(end.args, true, begin_args);
  const std::string end_args(out_buf_.view());
  out_buf_.swap(main);
  if (!end_args.empty()) {
    if (b_args) {
      x.resize(x.size() - 2);  // "}}"
      x += "," + end_args + "}}";
    } else {
      x.resize(x.size() - 1);  // "}"
      x += ",\"args\":{" + end_args + "}}";
    }
  }
  return x;
}

bool JsonTraceWriter::MergeZeroLength(const ExportEvent& end, Where& w) {
  if (w.b_at == kNotHeld)
    return false;
  const std::string b(out_buf_.view(w.b_at, w.b_end - w.b_at));
  const std::string tail(out_buf_.view(w.b_end, out_buf_.size() - w.b_end));
  const std::string x = ZeroLengthX(b, w.b_ts_end - w.b_at, w.b_args, end);
  const size_t at = w.b_at;
  out_buf_.Truncate(at);
  out_buf_.Append(x);
  out_buf_.Append(tail);
  Release(w);
  for (Where* o : open_b_) {
    if (o->b_at > at) {
      o->b_at += x.size() - b.size();
      o->b_ts_end += x.size() - b.size();
      o->b_end += x.size() - b.size();
    }
  }
  return true;
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
  Where& w = *last_where_;
  if (held_ && e.type == ExportEvent::Type::kEnd && e.track == held_track_ && e.ts >= held_ts_) {
    // The held begin and this end: one complete event.
    held_ = false;
    Begin("X", held_name_, w.pid, w.tid, held_name_id_);
    Put(",\"ts\":");
    PutTs(held_ts_);
    Put(",\"dur\":");
    PutTs(e.ts - held_ts_);
    Rest(e, w);
  } else {
    WriteHeld();
    switch (e.type) {
      case ExportEvent::Type::kBegin:
        if (e.args.empty() && e.flow_ids.empty() && e.terminating_flow_ids.empty()) {
          held_ = true;
          held_ts_ = e.ts;
          held_track_ = e.track;
          held_where_ = &w;
          held_name_.assign(e.name);
          held_name_id_ = e.name_id;
          return;
        }
        WriteBegin(e, w);
        break;
      case ExportEvent::Type::kEnd:
        if (w.b_open && !w.b_text.empty()) {
          // Its "B" was cut out: it goes here, before its "E" or as the "X".
          if (e.ts == w.b_ts) {
            w.b_text = ZeroLengthX(w.b_text, w.b_text_ts_end, w.b_args, e);
            PutCutBegin(w);
          } else {
            PutCutBegin(w);
            Write("E", e, w);
          }
        } else if (!w.b_open || e.ts != w.b_ts || !MergeZeroLength(e, w)) {
          Write("E", e, w);
        }
        w.b_open = false;
        Release(w);
        break;
      case ExportEvent::Type::kInstant:
        if (e.flow_ids.empty() && e.terminating_flow_ids.empty()) {
          Write("i", e, w);
          break;
        }
        // Perfetto reads no flow on an "i": the same zero-length slice
        // as an "X", which carries it.
        Begin("X", e.name, w.pid, w.tid, e.name_id);
        Put(",\"ts\":");
        PutTs(e.ts);
        Put(",\"dur\":0.000");
        Rest(e, w);
        break;
      case ExportEvent::Type::kCounter:
        Write("C", e, w);
        break;
    }
  }
  if (out_buf_.size() >= (flush_at_ ? flush_at_ : kFlushAt))
    Flush();
}

void JsonTraceWriter::Write(const char* ph, const ExportEvent& e, const Where& w) {
  const bool counter = e.type == ExportEvent::Type::kCounter;
  Begin(ph, counter ? std::string_view(w.name) : e.name, w.pid, w.tid, counter ? 0 : e.name_id);
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
    PutArgs(e.args, first);
    Put("}}");
  }
}

void JsonTraceWriter::PutArgs(const std::vector<ExportArg>& args,
                              bool first,
                              std::string_view skip_in) {
  // One reservation for them all.
  size_t room = 0;
  for (const ExportArg& a : args)
    room += 2 + StringRoom(a.name.size()) +
            (a.type == ExportArg::Type::kString ? StringRoom(a.text().size()) : kNumberRoom);
  char* const start = out_buf_.Room(room);
  char* p = start;
  std::string key;
  for (const ExportArg& a : args) {
    if (!skip_in.empty()) {
      key.assign("\"").append(a.name).append("\":");
      if (skip_in.find(key) != std::string_view::npos)
        continue;
    }
    if (!first)
      *p++ = ',';
    first = false;
    p = Quoted(p, a.name_id, a.name);
    *p++ = ':';
    switch (a.type) {
      case ExportArg::Type::kUint:
        p = Number(p, a.u);
        break;
      case ExportArg::Type::kInt:
        p = Number(p, a.i);
        break;
      case ExportArg::Type::kBool:
        p = a.u ? Lit(p, "true") : Lit(p, "false");
        break;
      case ExportArg::Type::kString:
        p = Quoted(p, a.value_id, a.text());
        break;
    }
  }
  out_buf_.Advance(static_cast<size_t>(p - start));
}

char* JsonTraceWriter::Quoted(char* p, uint32_t id, std::string_view text) {
  if (const std::string* quoted = quoted_.Find(id)) {
    std::memcpy(p, quoted->data(), quoted->size());
    return p + quoted->size();
  }
  char* const end = String(p, text);
  if (id != 0)
    quoted_.Keep(id, std::string(p, static_cast<size_t>(end - p)));
  return end;
}

Status JsonTraceWriter::Finish() {
  WriteHeld();
  for (auto& [uuid, w] : tracks_)
    PutCutBegin(w);  // a "B" whose "E" never came (ExportModel ends every span)
  Put("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hmbtrace-cmd export\",");
  Put("\"clock\":");
  PutString("host trace clock" + (trace_clock_.empty() ? "" : " \"" + trace_clock_ + "\"") +
            ", us; firmware records at their converted time");
  Put("}}\n");
  Flush(true);
  if (failed_ || std::ferror(out_))
    return Status::Error(std::string("writing the trace failed: ") +
                         std::strerror(errno ? errno : EIO));
  return {};
}

}  // namespace hmbtrace
