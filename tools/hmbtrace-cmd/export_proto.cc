// SPDX-License-Identifier: GPL-2.0-only
#include "export_proto.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <zlib.h>

#include "capture.h"

namespace hmbtrace {
namespace {

namespace pp = perfetto::protos;

// Interned tables stay small (names and enum values of the dictionaries);
// past this, hostile input could grow them: values are written inline.
constexpr size_t kMaxInterned = 1u << 16;

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

// A length-delimited field's tag and length, as varints; returns their size.
size_t Frame(uint32_t field, uint64_t len, uint8_t out[16]) {
  size_t n = 0;
  for (uint64_t tag = (uint64_t{field} << 3) | 2;; tag >>= 7) {
    out[n++] = static_cast<uint8_t>((tag & 0x7f) | (tag >= 0x80 ? 0x80 : 0));
    if (tag < 0x80)
      break;
  }
  for (;; len >>= 7) {
    out[n++] = static_cast<uint8_t>((len & 0x7f) | (len >= 0x80 ? 0x80 : 0));
    if (len < 0x80)
      break;
  }
  return n;
}

}  // namespace

uint64_t ProtoTraceWriter::Intern(InternTable* table, std::string_view s, bool* added) {
  auto it = table->find(s);
  if (it != table->end()) {
    *added = false;
    return it->second;
  }
  if (table->size() >= kMaxInterned) {
    *added = false;
    return 0;
  }
  const uint64_t iid = table->size() + 1;
  table->emplace(std::string(s), iid);
  *added = true;
  return iid;
}

void ProtoTraceWriter::Write() {
  packet_.set_trusted_packet_sequence_id(kExportSequenceId);
  if (first_) {
    packet_.set_sequence_flags(pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    first_ = false;
  }
  buf_.clear();
  if (!packet_.AppendToString(&buf_)) {
    failed_ = true;
    return;
  }
  packets_++;
  packet_.Clear();
  if (!compress_) {
    Put(buf_);
    return;
  }
  uint8_t head[16];
  const size_t n = Frame(1, buf_.size(), head);
  pending_.append(reinterpret_cast<const char*>(head), n);
  pending_.append(buf_);
  if (pending_.size() >= kCompressPiece)
    FlushCompressed();
}

void ProtoTraceWriter::Put(std::string_view bytes) {
  // Trace.packet (field 1, length-delimited): tag, varint length, bytes.
  uint8_t head[16];
  const size_t n = Frame(1, bytes.size(), head);
  if (std::fwrite(head, 1, n, out_) != n ||
      std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size())
    failed_ = true;
  bytes_ += n + bytes.size();
}

void ProtoTraceWriter::FlushCompressed() {
  if (pending_.empty())
    return;
  uLongf len = compressBound(pending_.size());
  compressed_.resize(len + 16);
  // TracePacket.compressed_packets (field 50), then the deflate stream.
  uint8_t head[16];
  char* out = compressed_.data() + 16;
  if (compress2(reinterpret_cast<Bytef*>(out), &len,
                reinterpret_cast<const Bytef*>(pending_.data()), pending_.size(),
                Z_BEST_SPEED) != Z_OK) {
    failed_ = true;
    pending_.clear();
    return;
  }
  const size_t n = Frame(50, len, head);
  std::memcpy(out - n, head, n);
  Put(std::string_view(out - n, n + len));
  pending_.clear();
}

void ProtoTraceWriter::Track(const ExportTrack& t) {
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
  Write();
}

void ProtoTraceWriter::Event(const ExportEvent& e) {
  packet_.set_timestamp(e.ts);
  pp::TrackEvent* te = packet_.mutable_track_event();
  te->set_type(TypeOf(e.type));
  te->set_track_uuid(e.track);
  bool added = false;
  if (!e.name.empty()) {
    const uint64_t iid = Intern(&names_, e.name, &added);
    if (!iid) {
      te->set_name(std::string(e.name));
    } else {
      te->set_name_iid(iid);
      if (added) {
        pp::EventName* n = packet_.mutable_interned_data()->add_event_names();
        n->set_iid(iid);
        n->set_name(std::string(e.name));
      }
    }
  }
  if (e.type == ExportEvent::Type::kCounter)
    te->set_counter_value(e.counter);
  for (const ExportArg& a : e.args) {
    pp::DebugAnnotation* d = te->add_debug_annotations();
    const uint64_t name_iid = Intern(&arg_names_, a.name, &added);
    if (!name_iid) {
      d->set_name(std::string(a.name));
    } else {
      d->set_name_iid(name_iid);
      if (added) {
        pp::DebugAnnotationName* n = packet_.mutable_interned_data()->add_debug_annotation_names();
        n->set_iid(name_iid);
        n->set_name(std::string(a.name));
      }
    }
    switch (a.type) {
      case ExportArg::Type::kUint:
        d->set_uint_value(a.u);
        break;
      case ExportArg::Type::kInt:
        d->set_int_value(a.i);
        break;
      case ExportArg::Type::kBool:
        d->set_bool_value(a.u != 0);
        break;
      case ExportArg::Type::kString: {
        const std::string_view text = a.text();
        const uint64_t iid = a.interned_string ? Intern(&arg_values_, text, &added) : 0;
        if (!iid) {
          d->set_string_value(std::string(text));
        } else {
          d->set_string_value_iid(iid);
          if (added) {
            pp::InternedString* s =
                packet_.mutable_interned_data()->add_debug_annotation_string_values();
            s->set_iid(iid);
            s->set_str(std::string(text));
          }
        }
        break;
      }
    }
  }
  for (uint64_t id : e.flow_ids)
    te->add_flow_ids(id);
  for (uint64_t id : e.terminating_flow_ids)
    te->add_terminating_flow_ids(id);
  Write();
}

// Ftrace event bundles are encoded by hand: with the generated classes,
// every field of a generic event (a name and a value) cost allocations,
// and a capture's nvme events made the export 3x slower. Field numbers:
// perfetto_trace.proto.
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTag(std::string* out, uint32_t field, uint32_t wire_type) {
  PutVarint(out, uint64_t{field} << 3 | wire_type);
}

void PutVarintField(std::string* out, uint32_t field, uint64_t v) {
  PutTag(out, field, 0);
  PutVarint(out, v);
}

void PutBytesField(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, 2);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

// Text from the file as valid UTF-8 (proto strings): as is when it is
// printable ASCII, else as Printable() shows it.
bool PlainText(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<uint8_t>(ch);
    return c >= 0x20 && c < 0x7f && c != '\\';
  });
}

void PutTextField(std::string* out, uint32_t field, std::string_view text) {
  if (PlainText(text))
    PutBytesField(out, field, text);
  else
    PutBytesField(out, field, Printable(text));
}

}  // namespace

void ProtoTraceWriter::WriteSerialized(const std::string& packet) {
  // As Write() does for a generated packet: sequence id, the first
  // packet's flag, then framed into the file or the compressed piece.
  buf_ = packet;
  PutVarintField(&buf_, 10, kExportSequenceId);  // trusted_packet_sequence_id
  if (first_) {
    PutVarintField(&buf_, 13, pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    first_ = false;
  }
  packets_++;
  if (!compress_) {
    Put(buf_);
    return;
  }
  uint8_t head[16];
  const size_t n = Frame(1, buf_.size(), head);
  pending_.append(reinterpret_cast<const char*>(head), n);
  pending_.append(buf_);
  if (pending_.size() >= kCompressPiece)
    FlushCompressed();
}

void ProtoTraceWriter::FlushBundle(uint32_t cpu, Bundle* bundle) {
  if (bundle->events == 0)
    return;
  // TracePacket.ftrace_events (1) = FtraceEventBundle{cpu (1), event (2)...}
  bundle_packet_.clear();
  std::string& b = bundle_body_;
  b.clear();
  PutVarintField(&b, 1, cpu);
  b.append(bundle->events_bytes);
  PutBytesField(&bundle_packet_, 1, b);
  WriteSerialized(bundle_packet_);
  bundle->events_bytes.clear();
  bundle->events = 0;
}

void ProtoTraceWriter::Ftrace(const ExportFtraceEvent& ev) {
  if (ev.cpu >= kMaxCpus) {
    ftrace_dropped_++;
    return;
  }
  Bundle& bundle = bundles_[ev.cpu];
  // FtraceEvent: timestamp (1), pid (2), then print (3) or generic (327).
  std::string& e = event_scratch_;
  e.clear();
  PutVarintField(&e, 1, ev.ts);
  PutVarintField(&e, 2, ev.pid);
  std::string& body = body_scratch_;
  body.clear();
  if (ev.print) {
    // PrintFtraceEvent: ip (1), buf (2) with its newline, as trace_marker has it.
    PutVarintField(&body, 1, ev.ip);
    std::string_view text = ev.buf;
    if (!text.empty() && text.back() == '\n')
      text.remove_suffix(1);
    std::string buf = PlainText(text) ? std::string(text) : Printable(text);
    buf.push_back('\n');
    PutBytesField(&body, 2, buf);
    PutBytesField(&e, 3, body);
  } else {
    // GenericFtraceEvent: event_name (1), field (2) = {name (1), str (3) |
    // int (4) | uint (5)}.
    PutTextField(&body, 1, ev.name);
    std::string& f = field_scratch_;
    for (const ExportFtraceField& field : ev.fields) {
      f.clear();
      PutTextField(&f, 1, field.name);
      switch (field.kind) {
        case ExportFtraceField::Kind::kUint:
          PutVarintField(&f, 5, field.u);
          break;
        case ExportFtraceField::Kind::kInt:
          PutVarintField(&f, 4, static_cast<uint64_t>(field.i));
          break;
        case ExportFtraceField::Kind::kString:
          PutTextField(&f, 3, field.s);
          break;
      }
      PutBytesField(&body, 2, f);
    }
    PutBytesField(&e, 327, body);
  }
  PutBytesField(&bundle.events_bytes, 2, e);
  if (++bundle.events >= kBundleEvents)
    FlushBundle(ev.cpu, &bundle);
}

void ProtoTraceWriter::Clock(const ExportClock& clock) {
  if (!clock.boottime())
    return;  // no snapshot can say how another clock relates to BOOTTIME
  pp::ClockSnapshot* s = packet_.mutable_clock_snapshot();
  pp::ClockSnapshot::Clock* c = s->add_clocks();
  c->set_clock_id(pp::BUILTIN_CLOCK_BOOTTIME);
  c->set_timestamp(clock.ts);
  s->set_primary_trace_clock(pp::BUILTIN_CLOCK_BOOTTIME);
  Write();
}

bool ProtoTraceWriter::Finish(std::string* error) {
  for (auto& [cpu, bundle] : bundles_)
    FlushBundle(cpu, &bundle);
  if (compress_)
    FlushCompressed();
  if (failed_ || std::ferror(out_)) {
    *error = std::string("writing the trace failed: ") + std::strerror(errno ? errno : EIO);
    return false;
  }
  return true;
}

}  // namespace hmbtrace
