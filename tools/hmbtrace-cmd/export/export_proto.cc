// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_proto.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include <zlib.h>
#ifdef HMBTRACE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
// HMBTRACE_HAVE_*: the optional libraries meson found (export/meson.build).
#ifdef HMBTRACE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "capture/capture.h"
#include "export/perfetto_fields.h"
#include "export/proto_wire.h"

namespace hmbtrace {
namespace {

namespace pf = perfetto_fields;
namespace pw = proto_wire;

// Interned tables stay small (names and enum values of the dictionaries);
// past this, hostile input could grow them: values are written inline.
constexpr size_t kMaxInterned = 1u << 16;
static_assert(kMaxInterned <= UINT32_MAX, "InternTable::Recent keeps an iid in 32 bits");
// Output is written in pieces of this size.
constexpr size_t kOutChunk = 1u << 18;
// The window's slab is compacted past this size.
constexpr size_t kSlabCompactAt = 1u << 22;
// Events in the window hold at most this many bytes (and kMaxPending
// events): memory stays flat whatever the capture.
constexpr size_t kMaxPendingBytes = 1u << 23;

uint32_t TypeOf(ExportEvent::Type t) {
  switch (t) {
    case ExportEvent::Type::kBegin:
      return pf::TrackEvent::TYPE_SLICE_BEGIN;
    case ExportEvent::Type::kEnd:
      return pf::TrackEvent::TYPE_SLICE_END;
    case ExportEvent::Type::kCounter:
      return pf::TrackEvent::TYPE_COUNTER;
    case ExportEvent::Type::kInstant:
      break;
  }
  return pf::TrackEvent::TYPE_INSTANT;
}

// Names are a few bytes: two word loads (overlapping) beat a call to
// memcmp and a byte loop, whose exit the branch predictor misses as the
// lengths change from one argument to the next.
template <typename W>
W Word(const char* p) {
  W w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}
template <typename W>
bool SameWords(const char* a, const char* b, size_t n) {
  return Word<W>(a) == Word<W>(b) && Word<W>(a + n - sizeof(W)) == Word<W>(b + n - sizeof(W));
}
bool SameBytes(const char* a, const char* b, size_t n) {
  if (n > 16)
    return std::memcmp(a, b, n) == 0;
  if (n >= 8)
    return SameWords<uint64_t>(a, b, n);
  if (n >= 4)
    return SameWords<uint32_t>(a, b, n);
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

}  // namespace

bool ProtoTraceWriter::HasZstd() {
#ifdef HMBTRACE_HAVE_ZSTD
  return true;
#else
  return false;
#endif
}

ProtoTraceWriter::ProtoTraceWriter(std::FILE* out, bool compress, Codec codec)
    : out_(out), compress_(compress) {
#ifdef HMBTRACE_HAVE_ZSTD
  if (compress_ && codec == Codec::kZstd) {
    zstd_.reset(ZSTD_createCCtx());
    if (!zstd_)
      failed_ = true;  // reported by Finish()
    return;
  }
#else
  if (compress_ && codec == Codec::kZstd)
    failed_ = true;  // RunExport() refuses --zstd first (HasZstd())
#endif
#ifdef HMBTRACE_HAVE_LIBDEFLATE
  if (compress_)
    deflater_.reset(libdeflate_alloc_compressor(kDeflateLevel));  // NULL: zlib below
#endif
}

void ProtoTraceWriter::FreeZstd::operator()(ZSTD_CCtx_s* c) const {
#ifdef HMBTRACE_HAVE_ZSTD
  ZSTD_freeCCtx(c);
#else
  (void)c;
#endif
}

ProtoTraceWriter::~ProtoTraceWriter() = default;

#ifdef HMBTRACE_HAVE_LIBDEFLATE
void ProtoTraceWriter::FreeCompressor::operator()(libdeflate_compressor* c) const {
  libdeflate_free_compressor(c);
}
#endif

uint64_t ProtoTraceWriter::Intern(InternTable* table, std::string_view s) {
  const size_t slot =
      ((reinterpret_cast<uintptr_t>(s.data()) >> 3) ^ s.size()) % table->recent.size();
  InternTable::Recent& r = table->recent[slot];
  if (r.iid && r.data == s.data() && r.size == s.size() && SameBytes(r.text, s.data(), s.size()))
    return r.iid;
  auto it = table->ids.find(s);
  if (it == table->ids.end()) {
    if (table->ids.size() >= kMaxInterned)
      return 0;
    it = table->ids.emplace(std::string(s), table->ids.size() + 1).first;
    const size_t body = interned_.BeginNested(table->field);
    interned_.Uint(pf::InternedEntry::kIidFieldNumber, it->second);
    interned_.Bytes(pf::InternedEntry::kNameFieldNumber, s);
    interned_.EndNested(body);
  }
  if (s.size() <= InternTable::kRecentText) {
    r.data = s.data();
    r.size = static_cast<uint32_t>(s.size());
    r.iid = static_cast<uint32_t>(it->second);
    std::memcpy(r.text, s.data(), s.size());
  }
  return it->second;
}

uint64_t ProtoTraceWriter::Intern(InternTable* table, uint32_t id, std::string_view s) {
  if (const uint32_t* iid = table->by_id.Find(id))
    return *iid;
  const uint64_t iid = Intern(table, s);
  table->by_id.Keep(id, static_cast<uint32_t>(iid));
  return iid;
}

// The packets below are written with their fields in field-number order,
// as libprotobuf writes a message (export_proto_unittest compares).

void ProtoTraceWriter::Start() {
  if (started_)
    return;
  started_ = true;
  pw::Buffer& p = packet_;
  p.clear();
  // Both clocks at 0: the incremental clock counts the base clock's ns.
  const size_t snapshot = p.BeginNested(pf::TracePacket::kClockSnapshotFieldNumber);
  size_t clock = p.BeginNested(pf::ClockSnapshot::kClocksFieldNumber);
  p.Uint(pf::ClockSnapshot::Clock::kClockIdFieldNumber, kBaseClock);
  p.Uint(pf::ClockSnapshot::Clock::kTimestampFieldNumber, 0);
  p.EndNested(clock);
  clock = p.BeginNested(pf::ClockSnapshot::kClocksFieldNumber);
  p.Uint(pf::ClockSnapshot::Clock::kClockIdFieldNumber, kIncrementalClock);
  p.Uint(pf::ClockSnapshot::Clock::kTimestampFieldNumber, 0);
  p.Uint(pf::ClockSnapshot::Clock::kIsIncrementalFieldNumber, 1);
  p.EndNested(clock);
  p.EndNested(snapshot);
  p.Uint(pf::TracePacket::kTrustedPacketSequenceIdFieldNumber, kExportSequenceId);
  p.Uint(pf::TracePacket::kSequenceFlagsFieldNumber,
         pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  const size_t defaults = p.BeginNested(pf::TracePacket::kTracePacketDefaultsFieldNumber);
  p.Uint(pf::TracePacketDefaults::kTimestampClockIdFieldNumber, kIncrementalClock);
  p.EndNested(defaults);
  clock_ = 0;
  Put(p.view());
}

void ProtoTraceWriter::Put(std::string_view bytes) {
  (compress_ ? pending_ : out_buf_).Bytes(pf::Trace::kPacketFieldNumber, bytes);
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

size_t ProtoTraceWriter::Deflate(std::string_view in) {
#ifdef HMBTRACE_HAVE_LIBDEFLATE
  if (deflater_) {
    const size_t bound = libdeflate_zlib_compress_bound(deflater_.get(), in.size());
    if (compressed_.size() < bound)
      compressed_.resize(bound);
    // 0 only if it did not fit in the bound, which cannot happen.
    return libdeflate_zlib_compress(deflater_.get(), in.data(), in.size(), compressed_.data(),
                                    compressed_.size());
  }
#endif
  uLongf len = compressBound(in.size());
  if (compressed_.size() < len)
    compressed_.resize(len);
  if (compress2(reinterpret_cast<Bytef*>(compressed_.data()), &len,
                reinterpret_cast<const Bytef*>(in.data()), in.size(), Z_BEST_SPEED) != Z_OK)
    return 0;
  return len;
}

size_t ProtoTraceWriter::ZstdCompress(std::string_view in) {
#ifdef HMBTRACE_HAVE_ZSTD
  const size_t bound = ZSTD_compressBound(in.size());
  if (compressed_.size() < bound)
    compressed_.resize(bound);
  const size_t len = ZSTD_compressCCtx(zstd_.get(), compressed_.data(), compressed_.size(),
                                       in.data(), in.size(), kZstdLevel);
  return ZSTD_isError(len) ? 0 : len;
#else
  (void)in;
  return 0;
#endif
}

void ProtoTraceWriter::FlushCompressed() {
  if (pending_.empty())
    return;
  const size_t len = zstd_ ? ZstdCompress(pending_.view()) : Deflate(pending_.view());
  if (len == 0) {
    failed_ = true;
    pending_.clear();
    return;
  }
  pending_.clear();
  // A packet whose compressed_packets (zstd_compressed_packets) is the stream.
  const std::string_view deflated(compressed_.data(), len);
  out_buf_.Tag(pf::Trace::kPacketFieldNumber, pw::kLengthDelimited);
  const uint32_t field = zstd_ ? pf::TracePacket::kZstdCompressedPacketsFieldNumber
                               : pf::TracePacket::kCompressedPacketsFieldNumber;
  out_buf_.Varint(pw::BytesFieldSize(field, len));
  out_buf_.Bytes(field, deflated);
  FlushOut();
}

void ProtoTraceWriter::Track(const ExportTrack& t) {
  Start();
  using D = pf::TrackDescriptor;
  pw::Buffer& p = packet_;
  p.clear();
  p.Uint(pf::TracePacket::kTrustedPacketSequenceIdFieldNumber, kExportSequenceId);
  const size_t d = p.BeginNested(pf::TracePacket::kTrackDescriptorFieldNumber);
  p.Uint(D::kUuidFieldNumber, t.uuid);
  p.Bytes(D::kNameFieldNumber, t.name);
  if (t.parent_uuid)
    p.Uint(D::kParentUuidFieldNumber, t.parent_uuid);
  if (t.kind == ExportTrack::Kind::kCounter) {
    using C = pf::CounterDescriptor;
    const size_t c = p.BeginNested(D::kCounterFieldNumber);
    if (t.unit == "count")
      p.Uint(C::kUnitFieldNumber, C::UNIT_COUNT);
    else if (t.unit == "ns")
      p.Uint(C::kUnitFieldNumber, C::UNIT_TIME_NS);
    else if (t.unit == "bytes")
      p.Uint(C::kUnitFieldNumber, C::UNIT_SIZE_BYTES);
    else if (!t.unit.empty())
      p.Bytes(C::kUnitNameFieldNumber, t.unit);
    p.EndNested(c);
  }
  if (t.kind == ExportTrack::Kind::kGroup)
    p.Uint(D::kChildOrderingFieldNumber, D::EXPLICIT);
  p.Int(D::kSiblingOrderRankFieldNumber, t.rank);  // int32: negative sign-extends
  if (!t.description.empty())
    p.Bytes(D::kDescriptionFieldNumber, t.description);
  p.EndNested(d);
  Put(p.view());
}

void ProtoTraceWriter::Event(const ExportEvent& e) {
  Start();
  // The TrackEvent, in the order Perfetto's own writers use (the parser
  // takes any order).
  using T = pf::TrackEvent;
  using A = pf::DebugAnnotation;
  pw::Buffer& s = slab_;
  const size_t offset = s.size();
  s.Uint(T::kTypeFieldNumber, TypeOf(e.type));
  s.Uint(T::kTrackUuidFieldNumber, e.track);
  if (!e.name.empty()) {
    if (const uint64_t iid = Intern(&names_, e.name_id, e.name))
      s.Uint(T::kNameIidFieldNumber, iid);
    else
      s.Bytes(T::kNameFieldNumber, e.name);
  }
  if (e.type == ExportEvent::Type::kCounter)
    s.Int(T::kCounterValueFieldNumber, e.counter);
  // A BEGIN's annotations are kept for its END, which gives its own to
  // the BEGIN while that waits in the window, else leaves out those that
  // repeat the BEGIN's (OpenSlice).
  OpenSlice* begin = nullptr;
  OpenSlice* end = nullptr;
  Placed* merge = nullptr;  // the BEGIN this END's arguments go to
  bool named = false;       // end_names_ holds the arguments' name iids
  if (e.type == ExportEvent::Type::kBegin) {
    begin = OpenSliceOn(e.track);
    if (begin) {
      begin->count = e.args.size() <= OpenSlice::kMaxArgs ? 0 : OpenSlice::kUntracked;
      begin->last_of.fill(0);
      begin->unique = true;
      begin->order = order_;
      begin->header = static_cast<uint32_t>(s.size() - offset);
    }
  } else if (e.type == ExportEvent::Type::kEnd) {
    end = CloseSlice(e.track);
    if (end && (end->count == 0 || end->count == OpenSlice::kUntracked))
      end = nullptr;
    if (end && end->unique && e.args.size() <= OpenSlice::kMaxArgs) {
      end_names_.clear();
      for (const ExportArg& a : e.args)
        end_names_.push_back(Intern(&arg_names_, a.name_id, a.name));
      named = true;
      merge = MergeTarget(*end, end_names_);
      end_args_.clear();
    }
  }
  const size_t args_start = s.size();
  for (const ExportArg& a : e.args) {
    const size_t start = s.size();
    const size_t body = s.BeginNested(T::kDebugAnnotationsFieldNumber);
    const uint64_t name_iid =
        named ? end_names_[static_cast<size_t>(&a - e.args.data())]
              : Intern(&arg_names_, a.name_id, a.name);
    if (name_iid)
      s.Uint(A::kNameIidFieldNumber, name_iid);
    else
      s.Bytes(A::kNameFieldNumber, a.name);
    switch (a.type) {
      case ExportArg::Type::kUint:
        s.Uint(A::kUintValueFieldNumber, a.u);
        break;
      case ExportArg::Type::kInt:
        s.Int(A::kIntValueFieldNumber, a.i);
        break;
      case ExportArg::Type::kBool:
        s.Uint(A::kBoolValueFieldNumber, a.u != 0);
        break;
      case ExportArg::Type::kString: {
        const std::string_view text = a.text();
        if (const uint64_t iid = a.interned_string ? Intern(&arg_values_, a.value_id, text) : 0)
          s.Uint(A::kStringValueIidFieldNumber, iid);
        else
          s.Bytes(A::kStringValueFieldNumber, text);
        break;
      }
    }
    s.EndNested(body);
    const OpenSlice::Arg at{static_cast<uint32_t>(name_iid),
                            static_cast<uint32_t>(start - args_start),
                            static_cast<uint32_t>(s.size() - start)};
    if (begin && begin->count != OpenSlice::kUntracked) {
      if (!name_iid || FindArg(*begin, name_iid) != begin->count)
        begin->unique = false;
      if (name_iid < OpenSlice::kDirect)
        begin->last_of[name_iid] = static_cast<uint8_t>(begin->count + 1);
      begin->args[begin->count++] = at;
    } else if (merge) {
      end_args_.push_back(at);
    } else if (end && name_iid && RepeatsBegin(*end, name_iid, start) &&
               std::none_of(e.args.begin(), e.args.end(), [&](const ExportArg& o) {
                 return &o != &a && o.name == a.name;  // the last of its name wins
               })) {
      s.Truncate(start);
      args_folded_++;
    }
  }
  if (begin && begin->count && begin->count != OpenSlice::kUntracked)
    begin->bytes.assign(s.view(args_start, s.size() - args_start));
  if (merge) {
    // The END's arguments go to its BEGIN; the END keeps its flows.
    MergeIntoBegin(*end, *merge, args_start);
    s.Truncate(args_start);
  }
  for (uint64_t id : e.flow_ids)
    s.Fixed64(T::kFlowIdsFieldNumber, id);
  for (uint64_t id : e.terminating_flow_ids)
    s.Fixed64(T::kTerminatingFlowIdsFieldNumber, id);
  const Pending p{e.ts, order_++, Place(offset, s.size() - offset)};
  live_ += s.size() - offset;
  if (in_order_.empty() || in_order_.back().ts <= p.ts) {
    in_order_.push_back(p);
  } else {
    window_.push_back(p);
    std::push_heap(window_.begin(), window_.end(), Later{});
  }
  if (begin)
    begin->slot = p.slot;
  if (merge) {
    // The merged BEGIN after the END's bytes; its old bytes are left to
    // the slab's compaction. (Place() may have moved placed_.)
    merge = &placed_[end->slot];
    live_ = live_ - merge->size + merge_scratch_.size();
    merge->offset = s.size();
    merge->size = merge_scratch_.size();
    s.Append(merge_scratch_);
    slices_merged_++;
  }
  newest_ = std::max(newest_, e.ts);
  Drain(false);
}

uint32_t ProtoTraceWriter::FindArg(const OpenSlice& begin, uint64_t name_iid) {
  if (name_iid < OpenSlice::kDirect) {
    const uint32_t last = begin.last_of[name_iid];
    return last ? last - 1 : begin.count;
  }
  for (uint32_t i = 0; i < begin.count; i++)
    if (begin.args[i].name_iid == name_iid)
      return i;
  return begin.count;
}

uint32_t ProtoTraceWriter::Place(size_t offset, size_t size) {
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(placed_.size());  // at most kMaxPending + 1
    placed_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  placed_[slot] = {offset, size, order_ - 1};
  return slot;
}

ProtoTraceWriter::Placed* ProtoTraceWriter::MergeTarget(const OpenSlice& begin,
                                                         const std::vector<uint64_t>& names) {
  bool shared = false;
  for (size_t i = 0; i < names.size(); i++) {
    if (!names[i] || std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i)
      return nullptr;  // not interned, or twice: the last of a name would win
    shared |= FindArg(begin, names[i]) != begin.count;
  }
  if (!shared)
    return nullptr;  // nothing to save: the END keeps its own
  // Its slot, unless the BEGIN was written and the slot given to another.
  Placed& at = placed_[begin.slot];
  return at.order == begin.order ? &at : nullptr;
}

void ProtoTraceWriter::MergeIntoBegin(const OpenSlice& begin, const Placed& target,
                                      size_t args_start) {
  // As trace_processor merges them: the BEGIN's names in their places,
  // an END's value replacing the BEGIN's, then the END's other names.
  std::string& m = merge_scratch_;
  const std::string_view old = slab_.view(target.offset, target.size);
  m.assign(old.substr(0, begin.header));
  auto end_arg = [&](const OpenSlice::Arg& a) {
    return slab_.view(args_start + a.offset, a.size);
  };
  for (uint32_t i = 0; i < begin.count; i++) {
    const OpenSlice::Arg& b = begin.args[i];
    const auto e = std::find_if(end_args_.begin(), end_args_.end(),
                                [&](const OpenSlice::Arg& a) { return a.name_iid == b.name_iid; });
    m.append(e != end_args_.end() ? end_arg(*e)
                                  : std::string_view(begin.bytes).substr(b.offset, b.size));
  }
  for (const OpenSlice::Arg& a : end_args_)
    if (FindArg(begin, a.name_iid) == begin.count)
      m.append(end_arg(a));
  m.append(old.substr(begin.header + begin.bytes.size()));  // its flows
}

ProtoTraceWriter::OpenSlice* ProtoTraceWriter::OpenSliceOn(uint64_t track) {
  if (track >= kMaxFollowedTrack)
    return nullptr;
  if (track >= slices_.size())
    slices_.resize(track + 1);
  TrackSlices& t = slices_[track];
  if (t.depth == kMaxDepth) {
    t.untracked++;
    return nullptr;
  }
  if (t.depth == t.open.size())
    t.open.emplace_back();
  return &t.open[t.depth++];
}

ProtoTraceWriter::OpenSlice* ProtoTraceWriter::CloseSlice(uint64_t track) {
  if (track >= slices_.size())
    return nullptr;
  TrackSlices& t = slices_[track];
  if (t.untracked) {
    t.untracked--;
    return nullptr;
  }
  if (t.depth == 0)
    return nullptr;  // no BEGIN to close: trace_processor ignores the END
  return &t.open[--t.depth];
}

bool ProtoTraceWriter::RepeatsBegin(const OpenSlice& begin, uint64_t name_iid,
                                    size_t start) const {
  const std::string_view mine = slab_.view(start, slab_.size() - start);
  auto same = [&](const OpenSlice::Arg& b) {
    return std::string_view(begin.bytes).substr(b.offset, b.size) == mine;
  };
  if (name_iid < OpenSlice::kDirect) {
    const uint32_t last = begin.last_of[name_iid];
    return last && same(begin.args[last - 1]);
  }
  for (uint32_t i = begin.count; i-- > 0;)
    if (begin.args[i].name_iid == name_iid)
      return same(begin.args[i]);
  return false;
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
    Placed& at = placed_[first.slot];
    WritePending(first.ts, at);
    live_ -= at.size;
    at.order = Placed::kWritten;
    free_slots_.push_back(first.slot);
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
    // Most of the slab is events already written: the others move down to
    // its start, in the order they lie in it, within the slab's memory (a
    // new buffer grew again by doubling: a copy and page faults per step).
    std::vector<Placed*>& live = compacting_;
    live.clear();
    for (const Pending& p : in_order_)
      live.push_back(&placed_[p.slot]);
    for (const Pending& p : window_)
      live.push_back(&placed_[p.slot]);
    std::sort(live.begin(), live.end(),
              [](const Placed* a, const Placed* b) { return a->offset < b->offset; });
    size_t to = 0;
    for (Placed* p : live) {
      slab_.Move(to, p->offset, p->size);
      p->offset = to;
      to += p->size;
    }
    slab_.Truncate(to);
  }
}

void ProtoTraceWriter::WritePending(uint64_t time, const Placed& p) {
  // Written straight into the output: the packet's length first.
  using P = pf::TracePacket;
  const bool late = time < clock_;
  const uint64_t ts = late ? time : time - clock_;
  size_t len = pw::UintFieldSize(P::kTimestampFieldNumber, ts) +
               pw::UintFieldSize(P::kTrustedPacketSequenceIdFieldNumber, kExportSequenceId) +
               pw::BytesFieldSize(P::kTrackEventFieldNumber, p.size);
  if (late)
    len += pw::UintFieldSize(P::kTimestampClockIdFieldNumber, kBaseClock);
  if (!interned_.empty())
    len += pw::BytesFieldSize(P::kInternedDataFieldNumber, interned_.size());
  pw::Buffer& out = compress_ ? pending_ : out_buf_;
  out.Tag(pf::Trace::kPacketFieldNumber, pw::kLengthDelimited);
  out.Varint(len);
  out.Uint(P::kTimestampFieldNumber, ts);
  if (late) {
    // Older than an event already written: absolute, on the base clock.
    out.Uint(P::kTimestampClockIdFieldNumber, kBaseClock);
    late_++;
  } else {
    clock_ = time;  // a delta on the default (incremental) clock
  }
  out.Uint(P::kTrustedPacketSequenceIdFieldNumber, kExportSequenceId);
  if (!interned_.empty()) {
    out.Bytes(P::kInternedDataFieldNumber, interned_.view());
    interned_.clear();
  }
  out.Bytes(P::kTrackEventFieldNumber, slab_.view(p.offset, p.size));
  packets_++;
  FlushIfFull();
}

// Ftrace event bundles are not TrackEvents: their FtraceEvent timestamps
// are absolute (ftrace's clock, read as BOOTTIME), so the packets do not
// wait in the window.
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
  // TracePacket{ftrace_events = FtraceEventBundle{cpu, event...},
  // trusted_packet_sequence_id}.
  pw::Buffer& packet = packet_;
  packet.clear();
  const size_t body = packet.BeginNested(pf::TracePacket::kFtraceEventsFieldNumber);
  packet.Uint(pf::FtraceEventBundle::kCpuFieldNumber, cpu);
  packet.Append(bundle->events_bytes.view());  // FtraceEventBundle.event fields
  packet.EndNested(body);
  packet.Uint(pf::TracePacket::kTrustedPacketSequenceIdFieldNumber, kExportSequenceId);
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
  using F = pf::FtraceEvent;
  using G = pf::GenericFtraceEvent;
  pw::Buffer& e = bundle.events_bytes;
  const size_t event = e.BeginNested(pf::FtraceEventBundle::kEventFieldNumber);
  e.Uint(F::kTimestampFieldNumber, ev.ts);
  e.Uint(F::kPidFieldNumber, ev.pid);
  if (ev.print) {
    const size_t print = e.BeginNested(F::kPrintFieldNumber);
    e.Uint(pf::PrintFtraceEvent::kIpFieldNumber, ev.ip);
    e.Bytes(pf::PrintFtraceEvent::kBufFieldNumber, buf);
    e.EndNested(print);
  } else {
    const size_t generic = e.BeginNested(F::kGenericFieldNumber);
    Text(&e, G::kEventNameFieldNumber, ev.name);
    for (const ExportFtraceField& field : ev.fields) {
      const size_t f = e.BeginNested(G::kFieldFieldNumber);
      Text(&e, G::Field::kNameFieldNumber, field.name);
      switch (field.kind) {
        case ExportFtraceField::Kind::kUint:
          e.Uint(G::Field::kUintValueFieldNumber, field.u);
          break;
        case ExportFtraceField::Kind::kInt:
          e.Int(G::Field::kIntValueFieldNumber, field.i);
          break;
        case ExportFtraceField::Kind::kString:
          Text(&e, G::Field::kStrValueFieldNumber, field.s);
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
  using S = pf::ClockSnapshot;
  pw::Buffer& p = packet_;
  p.clear();
  const size_t snapshot = p.BeginNested(pf::TracePacket::kClockSnapshotFieldNumber);
  const size_t c = p.BeginNested(S::kClocksFieldNumber);
  p.Uint(S::Clock::kClockIdFieldNumber, pf::BUILTIN_CLOCK_BOOTTIME);
  p.Uint(S::Clock::kTimestampFieldNumber, clock.ts);
  p.EndNested(c);
  p.Uint(S::kPrimaryTraceClockFieldNumber, pf::BUILTIN_CLOCK_BOOTTIME);
  p.EndNested(snapshot);
  p.Uint(pf::TracePacket::kTrustedPacketSequenceIdFieldNumber, kExportSequenceId);
  Put(p.view());
}

Status ProtoTraceWriter::Finish() {
  Start();
  Drain(true);
  for (auto& [cpu, bundle] : bundles_)
    FlushBundle(cpu, &bundle);
  if (compress_)
    FlushCompressed();
  FlushOut();
  if (failed_ || std::ferror(out_)) {
    return Status::Error(std::string("writing the trace failed: ") +
                         std::strerror(errno ? errno : EIO));
  }
  return {};
}

}  // namespace hmbtrace
