// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_proto.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "capture/capture.h"
#include "export/proto_wire.h"

namespace hmbtrace {
namespace {

namespace pp = perfetto::protos;
namespace pw = proto_wire;

// Interned tables stay small (names and enum values of the dictionaries);
// past this, hostile input could grow them: values are written inline.
constexpr size_t kMaxInterned = 1u << 16;
// Output is written in pieces of this size.
constexpr size_t kOutChunk = 1u << 18;
// The window's slab is compacted past this size.
constexpr size_t kSlabCompactAt = 1u << 22;
// Events in the window hold at most this many bytes (and kMaxPending
// events): memory stays flat whatever the capture.
constexpr size_t kMaxPendingBytes = 1u << 23;

pp::TrackEvent::Type TypeOf(ExportEvent::Type t) {
  switch (t) {
    case ExportEvent::Type::kBegin:
      return pp::TrackEvent::TYPE_SLICE_BEGIN;
    case ExportEvent::Type::kEnd:
      return pp::TrackEvent::TYPE_SLICE_END;
    case ExportEvent::Type::kCounter:
      return pp::TrackEvent::TYPE_COUNTER;
    case ExportEvent::Type::kInstant:
      break;
  }
  return pp::TrackEvent::TYPE_INSTANT;
}

// Names are a few bytes: a loop beats a call to memcmp.
bool SameBytes(const char* a, const char* b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

}  // namespace

uint64_t ProtoTraceWriter::Intern(InternTable* table, std::string_view s) {
  const size_t slot =
      ((reinterpret_cast<uintptr_t>(s.data()) >> 3) ^ s.size()) % table->recent.size();
  InternTable::Recent& r = table->recent[slot];
  if (r.key && r.data == s.data() && r.size == s.size() &&
      SameBytes(r.key->data(), s.data(), s.size()))
    return r.iid;
  auto it = table->ids.find(s);
  if (it == table->ids.end()) {
    if (table->ids.size() >= kMaxInterned)
      return 0;
    it = table->ids.emplace(std::string(s), table->ids.size() + 1).first;
    // EventName / DebugAnnotationName / InternedString: iid 1, the string 2.
    const size_t body = interned_.BeginNested(table->field);
    interned_.Uint(1, it->second);
    interned_.Bytes(2, s);
    interned_.EndNested(body);
  }
  r = {s.data(), s.size(), &it->first, it->second};
  return it->second;
}

void ProtoTraceWriter::Start() {
  if (started_)
    return;
  started_ = true;
  packet_.set_sequence_flags(pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  packet_.mutable_trace_packet_defaults()->set_timestamp_clock_id(kIncrementalClock);
  // Both clocks at 0: the incremental clock counts the base clock's ns.
  pp::ClockSnapshot* snapshot = packet_.mutable_clock_snapshot();
  pp::ClockSnapshot::Clock* base = snapshot->add_clocks();
  base->set_clock_id(kBaseClock);
  base->set_timestamp(0);
  pp::ClockSnapshot::Clock* incremental = snapshot->add_clocks();
  incremental->set_clock_id(kIncrementalClock);
  incremental->set_timestamp(0);
  incremental->set_is_incremental(true);
  clock_ = 0;
  WriteMessage();
}

void ProtoTraceWriter::WriteMessage() {
  packet_.set_trusted_packet_sequence_id(kExportSequenceId);
  buf_.clear();
  if (!packet_.AppendToString(&buf_))
    failed_ = true;
  else
    Put(buf_);
  packet_.Clear();
}

void ProtoTraceWriter::Put(std::string_view bytes) {
  // Trace.packet (field 1, length-delimited): tag, varint length, bytes.
  (compress_ ? pending_ : out_buf_).Bytes(1, bytes);
  packets_++;
  FlushIfFull();
}

void ProtoTraceWriter::FlushIfFull() {
  if (compress_) {
    if (pending_.size() >= kCompressPiece)
      FlushCompressed();
  } else if (out_buf_.size() >= kOutChunk) {
    FlushOut();
  }
}

void ProtoTraceWriter::FlushOut() {
  if (!out_buf_.empty() && std::fwrite(out_buf_.data(), 1, out_buf_.size(), out_) != out_buf_.size())
    failed_ = true;
  bytes_ += out_buf_.size();
  out_buf_.clear();
}

void ProtoTraceWriter::FlushCompressed() {
  if (pending_.empty())
    return;
  uLongf len = compressBound(pending_.size());
  compressed_.resize(len);
  if (compress2(reinterpret_cast<Bytef*>(compressed_.data()), &len,
                reinterpret_cast<const Bytef*>(pending_.data()), pending_.size(),
                Z_BEST_SPEED) != Z_OK) {
    failed_ = true;
    pending_.clear();
    return;
  }
  pending_.clear();
  // A packet whose compressed_packets (field 50) is the deflate stream.
  const std::string_view deflated(compressed_.data(), len);
  out_buf_.Tag(1, pw::kLengthDelimited);
  out_buf_.Varint(pw::VarintSize((50u << 3) | pw::kLengthDelimited) + pw::VarintSize(len) + len);
  out_buf_.Bytes(50, deflated);
  FlushOut();
}

void ProtoTraceWriter::Track(const ExportTrack& t) {
  Start();
  pp::TrackDescriptor* d = packet_.mutable_track_descriptor();
  d->set_uuid(t.uuid);
  if (t.parent_uuid)
    d->set_parent_uuid(t.parent_uuid);
  d->set_name(t.name);
  if (!t.description.empty())
    d->set_description(t.description);
  d->set_sibling_order_rank(t.rank);
  if (t.kind == ExportTrack::Kind::kGroup)
    d->set_child_ordering(pp::TrackDescriptor::EXPLICIT);
  if (t.kind == ExportTrack::Kind::kCounter) {
    pp::CounterDescriptor* c = d->mutable_counter();
    if (t.unit == "count")
      c->set_unit(pp::CounterDescriptor::UNIT_COUNT);
    else if (t.unit == "ns")
      c->set_unit(pp::CounterDescriptor::UNIT_TIME_NS);
    else if (t.unit == "bytes")
      c->set_unit(pp::CounterDescriptor::UNIT_SIZE_BYTES);
    else if (!t.unit.empty())
      c->set_unit_name(t.unit);
  }
  WriteMessage();
}

void ProtoTraceWriter::Event(const ExportEvent& e) {
  Start();
  // TrackEvent, field by field (field numbers: perfetto_trace.proto).
  pw::Buffer& s = slab_;
  const size_t offset = s.size();
  s.Uint(9, TypeOf(e.type));
  s.Uint(11, e.track);
  if (!e.name.empty()) {
    if (const uint64_t iid = Intern(&names_, e.name))
      s.Uint(10, iid);
    else
      s.Bytes(23, e.name);
  }
  if (e.type == ExportEvent::Type::kCounter)
    s.Int(30, e.counter);
  for (const ExportArg& a : e.args) {
    const size_t body = s.BeginNested(4);  // debug_annotations
    if (const uint64_t iid = Intern(&arg_names_, a.name))
      s.Uint(1, iid);
    else
      s.Bytes(10, a.name);
    switch (a.type) {
      case ExportArg::Type::kUint:
        s.Uint(3, a.u);
        break;
      case ExportArg::Type::kInt:
        s.Int(4, a.i);
        break;
      case ExportArg::Type::kBool:
        s.Uint(2, a.u != 0);
        break;
      case ExportArg::Type::kString: {
        const std::string_view text = a.text();
        if (const uint64_t iid = a.interned_string ? Intern(&arg_values_, text) : 0)
          s.Uint(17, iid);
        else
          s.Bytes(6, text);
        break;
      }
    }
    s.EndNested(body);
  }
  for (uint64_t id : e.flow_ids)
    s.Fixed64(47, id);
  for (uint64_t id : e.terminating_flow_ids)
    s.Fixed64(48, id);
  const Pending p{e.ts, order_++, offset, s.size() - offset};
  live_ += p.size;
  if (in_order_.empty() || in_order_.back().ts <= p.ts) {
    in_order_.push_back(p);
  } else {
    window_.push_back(p);
    std::push_heap(window_.begin(), window_.end(), Later{});
  }
  newest_ = std::max(newest_, e.ts);
  Drain(false);
}

void ProtoTraceWriter::Drain(bool all) {
  for (;;) {
    // The earliest event waiting: the front of the queue or of the heap.
    const bool from_heap =
        !window_.empty() && (in_order_.empty() || Later{}(in_order_.front(), window_.front()));
    if (!from_heap && in_order_.empty())
      break;
    const Pending& first = from_heap ? window_.front() : in_order_.front();
    if (!all && in_order_.size() + window_.size() <= kMaxPending && live_ <= kMaxPendingBytes &&
        first.ts + kReorderWindowNs > newest_)
      break;
    WritePending(first);
    live_ -= first.size;
    if (from_heap) {
      std::pop_heap(window_.begin(), window_.end(), Later{});
      window_.pop_back();
    } else {
      in_order_.pop_front();
    }
  }
  if (window_.empty() && in_order_.empty()) {
    slab_.clear();
  } else if (slab_.size() > kSlabCompactAt && live_ < slab_.size() / 2) {
    // Most of the slab is events already written: keep the rest only.
    pw::Buffer live;
    const auto keep = [&](Pending& p) {
      live.Append(slab_.view(p.offset, p.size));
      p.offset = live.size() - p.size;
    };
    std::for_each(in_order_.begin(), in_order_.end(), keep);
    std::for_each(window_.begin(), window_.end(), keep);
    slab_.swap(live);
  }
}

void ProtoTraceWriter::WritePending(const Pending& p) {
  // Written straight into the output: the packet's length first.
  const bool late = p.ts < clock_;
  const uint64_t ts = late ? p.ts : p.ts - clock_;
  size_t len = 1 + pw::VarintSize(ts) + 2;  // timestamp, trusted_packet_sequence_id
  if (late)
    len += 3;  // timestamp_clock_id (field 58: a two-byte tag)
  if (!interned_.empty())
    len += 1 + pw::VarintSize(interned_.size()) + interned_.size();
  len += 1 + pw::VarintSize(p.size) + p.size;
  pw::Buffer& out = compress_ ? pending_ : out_buf_;
  out.Tag(1, pw::kLengthDelimited);
  out.Varint(len);
  out.Uint(8, ts);
  if (late) {
    // Older than an event already written: absolute, on the base clock.
    out.Uint(58, kBaseClock);
    late_++;
  } else {
    clock_ = p.ts;  // a delta on the default (incremental) clock
  }
  out.Uint(10, kExportSequenceId);
  if (!interned_.empty()) {
    out.Bytes(12, interned_.view());
    interned_.clear();
  }
  out.Bytes(11, slab_.view(p.offset, p.size));
  packets_++;
  FlushIfFull();
}

// Ftrace event bundles are encoded by hand too (proto_wire.h): with the
// generated classes every field of a generic event (a name and a value)
// cost allocations, and a capture's nvme events made the export 3x slower.
// Field numbers: perfetto_trace.proto. They are not TrackEvents: their
// FtraceEvent timestamps are absolute (ftrace's clock, read as BOOTTIME),
// so the packets do not wait in the window.
namespace {

// Text from the file as valid UTF-8 (proto strings): as is when it is
// printable ASCII, else as Printable() shows it.
bool PlainText(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<uint8_t>(ch);
    return c >= 0x20 && c < 0x7f && c != '\\';
  });
}

void Text(pw::Buffer* out, uint32_t field, std::string_view text) {
  if (PlainText(text))
    out->Bytes(field, text);
  else
    out->Bytes(field, Printable(text));
}

// Decimal digits only (what strtoul/strtoll accept is wider: a subset).
bool Digits(std::string_view s, bool sign) {
  if (sign && !s.empty() && s.front() == '-')
    s.remove_prefix(1);
  return !s.empty() && s.size() <= 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool AtraceAccepts(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0'))
    text.remove_suffix(1);
  if (text.starts_with("trace_event_clock_sync:"))
    return true;
  if (text.find('\0') != std::string_view::npos)
    return false;
  std::vector<std::string_view> f;
  for (size_t at = 0;;) {
    const size_t bar = text.find('|', at);
    f.push_back(text.substr(at, bar == std::string_view::npos ? bar : bar - at));
    if (bar == std::string_view::npos)
      break;
    at = bar + 1;
  }
  if (f[0].size() != 1)
    return false;
  const char phase = f[0][0];
  if (phase == 'E')
    return f.size() == 1 || (Digits(f[1], false) && f[1].size() <= 10);
  if (f.size() < 2 || !Digits(f[1], false) || f[1].size() > 10)
    return false;
  auto named = [&](size_t i) { return f.size() > i && !f[i].empty(); };
  auto number = [&](size_t i) { return f.size() > i && Digits(f[i], true); };
  switch (phase) {
    case 'B':
    case 'I':
      return named(2);
    case 'N':
      return named(2) && named(3);
    case 'S':
    case 'F':
    case 'C':
      return named(2) && number(3);
    case 'G':
      return named(2) && named(3) && number(4);
    case 'H':
      return named(2) && (f.size() > 4 && !f[4].empty() ? number(4) : number(3));
    default:
      return false;
  }
}

void ProtoTraceWriter::FlushBundle(uint32_t cpu, Bundle* bundle) {
  if (bundle->events == 0)
    return;
  Start();
  // TracePacket{ftrace_events (1) = FtraceEventBundle{cpu (1), event (2)...},
  // trusted_packet_sequence_id (10)}, framed as Trace.packet.
  pw::Buffer& packet = bundle_packet_;
  packet.clear();
  const size_t body = packet.BeginNested(1);
  packet.Uint(1, cpu);
  packet.Append(bundle->events_bytes.view());
  packet.EndNested(body);
  packet.Uint(10, kExportSequenceId);
  Put(packet.view());
  bundle->events_bytes.clear();
  bundle->events = 0;
}

void ProtoTraceWriter::Ftrace(const ExportFtraceEvent& ev) {
  if (ev.cpu >= kMaxCpus) {
    ftrace_dropped_++;
    return;
  }
  std::string& buf = text_scratch_;
  if (ev.print) {
    // buf with its newline, as trace_marker has it.
    std::string_view text = ev.buf;
    if (!text.empty() && text.back() == '\n')
      text.remove_suffix(1);
    buf = PlainText(text) ? std::string(text) : Printable(text);
    buf.push_back('\n');
    if (!AtraceAccepts(buf)) {
      prints_not_atrace_++;  // only on the trace_marker track (ExportModel)
      return;
    }
  }
  Bundle& bundle = bundles_[ev.cpu];
  // FtraceEvent (2): timestamp (1), pid (2), then print (3) or generic (327).
  pw::Buffer& e = bundle.events_bytes;
  const size_t event = e.BeginNested(2);
  e.Uint(1, ev.ts);
  e.Uint(2, ev.pid);
  if (ev.print) {
    // PrintFtraceEvent: ip (1), buf (2).
    const size_t print = e.BeginNested(3);
    e.Uint(1, ev.ip);
    e.Bytes(2, buf);
    e.EndNested(print);
  } else {
    // GenericFtraceEvent: event_name (1), field (2) = {name (1), str (3) |
    // int (4) | uint (5)}.
    const size_t generic = e.BeginNested(327);
    Text(&e, 1, ev.name);
    for (const ExportFtraceField& field : ev.fields) {
      const size_t f = e.BeginNested(2);
      Text(&e, 1, field.name);
      switch (field.kind) {
        case ExportFtraceField::Kind::kUint:
          e.Uint(5, field.u);
          break;
        case ExportFtraceField::Kind::kInt:
          e.Int(4, field.i);
          break;
        case ExportFtraceField::Kind::kString:
          Text(&e, 3, field.s);
          break;
      }
      e.EndNested(f);
    }
    e.EndNested(generic);
  }
  e.EndNested(event);
  if (++bundle.events >= kBundleEvents)
    FlushBundle(ev.cpu, &bundle);
}

void ProtoTraceWriter::Clock(const ExportClock& clock) {
  if (!clock.boottime())
    return;  // no snapshot can say how another clock relates to BOOTTIME
  Start();
  pp::ClockSnapshot* s = packet_.mutable_clock_snapshot();
  pp::ClockSnapshot::Clock* c = s->add_clocks();
  c->set_clock_id(pp::BUILTIN_CLOCK_BOOTTIME);
  c->set_timestamp(clock.ts);
  s->set_primary_trace_clock(pp::BUILTIN_CLOCK_BOOTTIME);
  WriteMessage();
}

bool ProtoTraceWriter::Finish(std::string* error) {
  Start();
  Drain(true);
  for (auto& [cpu, bundle] : bundles_)
    FlushBundle(cpu, &bundle);
  if (compress_)
    FlushCompressed();
  FlushOut();
  if (failed_ || std::ferror(out_)) {
    *error = std::string("writing the trace failed: ") + std::strerror(errno ? errno : EIO);
    return false;
  }
  return true;
}

}  // namespace hmbtrace
