// SPDX-License-Identifier: GPL-2.0-only
#include "export_proto.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <zlib.h>

#include "proto_wire.h"

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

}  // namespace

uint64_t ProtoTraceWriter::Intern(InternTable* table, std::string_view s) {
  const size_t slot =
      ((reinterpret_cast<uintptr_t>(s.data()) >> 3) ^ s.size()) % table->recent.size();
  InternTable::Recent& r = table->recent[slot];
  if (r.key && r.data == s.data() && r.size == s.size() &&
      std::memcmp(r.key->data(), s.data(), s.size()) == 0)
    return r.iid;
  auto it = table->ids.find(s);
  if (it == table->ids.end()) {
    if (table->ids.size() >= kMaxInterned)
      return 0;
    it = table->ids.emplace(std::string(s), table->ids.size() + 1).first;
    // EventName / DebugAnnotationName / InternedString: iid 1, the string 2.
    const size_t body = pw::BeginNested(&interned_, table->field);
    pw::PutUint(&interned_, 1, it->second);
    pw::PutBytes(&interned_, 2, s);
    pw::EndNested(&interned_, body);
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
  std::string* out = compress_ ? &pending_ : &out_buf_;
  pw::PutBytes(out, 1, bytes);
  packets_++;
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
  buf_.clear();
  pw::PutBytes(&buf_, 50, std::string_view(compressed_.data(), len));
  pw::PutBytes(&out_buf_, 1, buf_);
  FlushOut();
}

void ProtoTraceWriter::Track(const ExportTrack& t) {
  Start();
  pp::TrackDescriptor* d = packet_.mutable_track_descriptor();
  d->set_uuid(t.uuid);
  if (t.parent_uuid)
    d->set_parent_uuid(t.parent_uuid);
  d->set_name(t.name);
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
  std::string& s = slab_;
  const size_t offset = s.size();
  pw::PutUint(&s, 9, TypeOf(e.type));
  pw::PutUint(&s, 11, e.track);
  if (!e.name.empty()) {
    if (const uint64_t iid = Intern(&names_, e.name))
      pw::PutUint(&s, 10, iid);
    else
      pw::PutBytes(&s, 23, e.name);
  }
  if (e.type == ExportEvent::Type::kCounter)
    pw::PutInt(&s, 30, e.counter);
  for (const ExportArg& a : e.args) {
    const size_t body = pw::BeginNested(&s, 4);  // debug_annotations
    if (const uint64_t iid = Intern(&arg_names_, a.name))
      pw::PutUint(&s, 1, iid);
    else
      pw::PutBytes(&s, 10, a.name);
    switch (a.type) {
      case ExportArg::Type::kUint:
        pw::PutUint(&s, 3, a.u);
        break;
      case ExportArg::Type::kInt:
        pw::PutInt(&s, 4, a.i);
        break;
      case ExportArg::Type::kBool:
        pw::PutUint(&s, 2, a.u != 0);
        break;
      case ExportArg::Type::kString: {
        const std::string_view text = a.text();
        if (const uint64_t iid = a.interned_string ? Intern(&arg_values_, text) : 0)
          pw::PutUint(&s, 17, iid);
        else
          pw::PutBytes(&s, 6, text);
        break;
      }
    }
    pw::EndNested(&s, body);
  }
  for (uint64_t id : e.flow_ids)
    pw::PutFixed64(&s, 47, id);
  for (uint64_t id : e.terminating_flow_ids)
    pw::PutFixed64(&s, 48, id);
  window_.push_back({e.ts, order_++, offset, s.size() - offset});
  live_ += s.size() - offset;
  std::push_heap(window_.begin(), window_.end(), Later{});
  newest_ = std::max(newest_, e.ts);
  Drain(false);
}

void ProtoTraceWriter::Drain(bool all) {
  while (!window_.empty() &&
         (all || window_.size() > kMaxPending || live_ > kMaxPendingBytes ||
          window_.front().ts + kReorderWindowNs <= newest_)) {
    std::pop_heap(window_.begin(), window_.end(), Later{});
    WritePending(window_.back());
    live_ -= window_.back().size;
    window_.pop_back();
  }
  if (window_.empty()) {
    slab_.clear();
  } else if (slab_.size() > kSlabCompactAt && live_ < slab_.size() / 2) {
    // Most of the slab is events already written: keep the rest only.
    std::string live;
    live.reserve(live_);
    for (Pending& p : window_) {
      live.append(slab_, p.offset, p.size);
      p.offset = live.size() - p.size;
    }
    slab_.swap(live);
  }
}

void ProtoTraceWriter::WritePending(const Pending& p) {
  std::string& b = buf_;
  b.clear();
  if (p.ts >= clock_) {
    pw::PutUint(&b, 8, p.ts - clock_);  // on the default (incremental) clock
    clock_ = p.ts;
  } else {
    // Older than an event already written: absolute, on the base clock.
    pw::PutUint(&b, 8, p.ts);
    pw::PutUint(&b, 58, kBaseClock);
    late_++;
  }
  pw::PutUint(&b, 10, kExportSequenceId);
  if (!interned_.empty()) {
    pw::PutBytes(&b, 12, interned_);
    interned_.clear();
  }
  pw::PutBytes(&b, 11, std::string_view(slab_.data() + p.offset, p.size));
  Put(b);
}

bool ProtoTraceWriter::Finish(std::string* error) {
  Start();
  Drain(true);
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
