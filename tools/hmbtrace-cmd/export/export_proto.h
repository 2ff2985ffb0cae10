// SPDX-License-Identifier: GPL-2.0-only
//
// Perfetto's native trace format (perfetto_trace.proto): the ExportModel
// stream as TracePackets, each written to the file as soon as it is made
// (a Trace is a sequence of length-delimited field-1 packets), so memory
// does not grow with the capture.
//
// One packet sequence (trusted_packet_sequence_id 1). Its first packet
// clears the sequence's incremental state, declares the sequence's own
// incremental clock (kIncrementalClock, in a ClockSnapshot that ties it
// to kBaseClock) and makes it the default clock of the packets that
// follow (TracePacketDefaults.timestamp_clock_id): a track event's
// timestamp is then the delta from the previous one's, 2-3 bytes instead
// of 6. ExportModel keeps every track in time order but not the whole
// stream (a latency slice begins before the records just written), so
// events wait in a window of kReorderWindowNs (at most kMaxPending
// events, 8 MiB) and leave it in time order; one that comes later than the
// window (older than an event already written) is written with its
// absolute time on kBaseClock (timestamp_clock_id set on that packet),
// which leaves the incremental clock alone. Timestamps are the capture's
// trace clock in ns, written as kBaseClock = BOOTTIME (the track groups'
// descriptions name the capture's clock when it is another:
// export_model.h).
//
// The capture's other ftrace events (nvme, sched, ...) are written as
// ftrace event bundles, one per CPU and up to kBundleEvents events, as
// generic events with their fields; their FtraceEvent timestamps are
// absolute. Perfetto's ftrace parser hands every `print` to its atrace
// parser, which counts any text not in atrace form as an import error
// (stats.systrace_parse_failure): a trace_marker line is a `print` only
// when AtraceAccepts() its text (an atrace writer's "B|pid|name", ...,
// which Perfetto turns into the slices and counters meant); every line is
// an instant on the trace_marker track anyway (export_model.h). A ClockSnapshot names
// BOOTTIME when the capture was recorded on the "boot" clock.
//
// Event names, argument names and the values of enum-like arguments are
// interned on the sequence, each defined in the first packet written
// after it was first used (packets leave the window in time order, so
// that packet comes before every packet using it).
//
// A slice's arguments are written once where its BEGIN and END share
// names. trace_processor merges an END's arguments into its slice (a
// name keeps the place of its first insertion and takes the last
// value), so when an END names an argument its BEGIN has (a
// cmd_complete's seq and fw_ts, its cid and qid) while the BEGIN still
// waits in the window, the writer does that merge itself: the BEGIN
// carries the merged arguments and the END none (a command's seq, fw_ts
// and fw_time_bound_ns once instead of twice). A BEGIN already written
// (a slice longer than the window), or arguments it cannot compare, fall
// back to an END that leaves out the arguments its BEGIN has with the
// same value. Either way the slice shows the same arguments, in the same
// order (OpenSlice). Each track's events leave in its order, so the
// writer pairs an END with the BEGIN trace_processor pairs it with: the
// innermost one open on its track.
//
// Every packet is encoded by hand (proto_wire.h), with the field numbers
// of perfetto_trace.proto by name (perfetto_fields.h): the hot path writes
// a TrackEvent straight into its output buffer, with no per-event object
// graph. libprotobuf is only the tests' decoder.
//
// With `compress`, packets are gathered into pieces of about
// kCompressPiece bytes, each written as one packet whose compressed_packets
// is their zlib deflate (as Perfetto's own tracing service writes them;
// trace_processor and the UI inflate them). Deflated by libdeflate at
// kDeflateLevel where the build has it (HMBTRACE_HAVE_LIBDEFLATE), else by
// zlib at Z_BEST_SPEED: the same zlib stream format. On the 1 M benchmark
// capture's 75 MB: zlib level 1, about 31 B/record; libdeflate level 4,
// 27.7, in no more CPU time.
//
// With Codec::kZstd (export --zstd), each piece is zstd at kZstdLevel in
// zstd_compressed_packets instead: 8.9 B/record in a quarter of
// libdeflate's time on that capture, but only Perfetto v58 and later read
// the field (an older trace_processor skips it: an empty trace).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_PROTO_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_PROTO_H_

#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/export_model.h"
#include "export/perfetto_fields.h"
#include "export/proto_wire.h"

#ifdef HMBTRACE_HAVE_LIBDEFLATE
struct libdeflate_compressor;
#endif
struct ZSTD_CCtx_s;

namespace hmbtrace {

inline constexpr uint32_t kExportSequenceId = 1;
inline constexpr size_t kCompressPiece = 1u << 20;
inline constexpr int kDeflateLevel = 4;
inline constexpr int kZstdLevel = 1;
// Perfetto's BUILTIN_CLOCK_BOOTTIME, and the first of the clock ids a
// packet sequence may define for itself (64..127).
inline constexpr uint32_t kBaseClock = perfetto_fields::BUILTIN_CLOCK_BOOTTIME;
inline constexpr uint32_t kIncrementalClock = 64;
// Long enough for a command's slice on a busy drive (the benchmark mix's
// longest, 35 ms) to have its END merged into its BEGIN (20 ms: 27 % of
// them were written before their END, 76.3 B/record instead of 74.7).
inline constexpr uint64_t kReorderWindowNs = 50'000'000;
inline constexpr size_t kMaxPending = 1u << 16;

class ProtoTraceWriter : public ExportSink {
 public:
  // Writes to `out` (not owned; buffered by the caller).
  enum class Codec { kZlib, kZstd };
  // Whether this build can write Codec::kZstd.
  static bool HasZstd();
  // `codec`: how the packets are compressed, with `compress`.
  explicit ProtoTraceWriter(std::FILE* out, bool compress = false, Codec codec = Codec::kZlib);
  ~ProtoTraceWriter() override;
  ProtoTraceWriter(const ProtoTraceWriter&) = delete;
  ProtoTraceWriter& operator=(const ProtoTraceWriter&) = delete;

  void Track(const ExportTrack& track) override;
  void Event(const ExportEvent& event) override;
  // Gathered per CPU into FtraceEventBundles of up to kBundleEvents.
  void Ftrace(const ExportFtraceEvent& event) override;
  // "boot": a ClockSnapshot naming BOOTTIME as the trace's clock.
  void Clock(const ExportClock& clock) override;
  Status Finish() override;

  static constexpr size_t kBundleEvents = 512;
  // Perfetto rejects a bundle of a CPU >= 1024 (trace corruption): such
  // events are counted here and not written (export's summary says so).
  static constexpr uint32_t kMaxCpus = 1024;
  uint64_t ftrace_dropped() const { return ftrace_dropped_; }
  // trace_marker lines left out of the bundles (not in atrace form).
  uint64_t prints_not_atrace() const { return prints_not_atrace_; }

  uint64_t bytes() const { return bytes_; }
  uint64_t packets() const { return packets_; }
  // Events that came after the window had passed their time (written
  // with an absolute timestamp).
  uint64_t late() const { return late_; }
  // END arguments left out: the same name and value as on the BEGIN.
  uint64_t args_folded() const { return args_folded_; }
  // Slices whose END's arguments were merged into their BEGIN.
  uint64_t slices_merged() const { return slices_merged_; }

 private:
  // Looked up by string_view: no allocation per event.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct InternTable {
    uint32_t field = 0;  // InternedData field its definitions go to
    std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>> ids;
    // The strings of an event mostly live in the dictionaries (and
    // constants) at the same address event after event: a small cache by
    // address (checked by content) saves hashing them again. It holds a
    // copy of the string (up to kRecentText bytes; longer ones are looked
    // up in `ids`), so that a hit reads one line of memory and chases no
    // pointer to the map's node.
    static constexpr size_t kRecentText = 16;
    struct Recent {
      const char* data = nullptr;
      uint32_t size = 0;
      uint32_t iid = 0;  // 0: empty (iids start at 1; at most kMaxInterned)
      char text[kRecentText] = {};
    };
    std::array<Recent, 256> recent{};
    ByExportId<uint32_t> by_id;  // iid by ExportEvent/ExportArg id
  };
  // A slice open on a track, as the writer last saw its BEGIN: its
  // debug annotations (encoded), for its END to leave out those it would
  // repeat. trace_processor merges an END's arguments into its slice's
  // (the BEGIN's), a key keeping the place of its first insertion and
  // the last value (ArgsInserter::AddArg(), kAddOrUpdate; before v58
  // ArgsTracker::Flush()), so an END argument of the same name and value
  // as the BEGIN's changes nothing. `args` is empty (kUntracked) when the
  // BEGIN had too many arguments to compare.
  struct OpenSlice {
    static constexpr uint32_t kMaxArgs = 24;
    static constexpr uint32_t kUntracked = UINT32_MAX;
    struct Arg {
      uint32_t name_iid = 0;
      uint32_t offset = 0;  // in bytes
      uint32_t size = 0;
    };
    uint32_t count = 0;
    std::array<Arg, kMaxArgs> args{};
    uint64_t order = 0;      // its BEGIN's Pending::order
    uint32_t slot = 0;       // and Pending::slot
    bool unique = true;      // no name twice among `args`
    uint32_t header = 0;     // the BEGIN's bytes before its annotations
    // For names of an iid below kDirect: 1 + the index of the last arg
    // of that name, 0 if none (an END's look-up without a search).
    static constexpr uint32_t kDirect = 64;
    std::array<uint8_t, kDirect> last_of{};
    static_assert(kMaxArgs < UINT8_MAX, "last_of holds 1 + an index of args");
    std::string bytes;  // the annotations, encoded (reused)
  };
  // The slices open on a track, innermost last: the BEGINs its ENDs will
  // close, in the order trace_processor pairs them (each track's events
  // are in time order and leave in it). open[depth..] are spare.
  struct TrackSlices {
    std::vector<OpenSlice> open;
    size_t depth = 0;
    size_t untracked = 0;  // BEGINs past kMaxDepth above `depth`
  };
  static constexpr size_t kMaxDepth = 64;
  // Tracks with a larger uuid are not followed (their ENDs repeat all).
  static constexpr uint64_t kMaxFollowedTrack = 1u << 16;
  // The BEGIN an END on `track` closes (nullptr: unknown), popped.
  OpenSlice* CloseSlice(uint64_t track);
  // A new BEGIN on `track` (nullptr: not followed).
  OpenSlice* OpenSliceOn(uint64_t track);
  // Whether the annotation just encoded at slab_[start..] repeats the
  // last one of the same name in `begin`.
  bool RepeatsBegin(const OpenSlice& begin, uint64_t name_iid, size_t start) const;
  // The index in `begin.args` of the argument named `name_iid` (count:
  // none).
  static uint32_t FindArg(const OpenSlice& begin, uint64_t name_iid);
  // Where a waiting event's bytes lie in slab_, by Pending::slot (a
  // merge moves a BEGIN's; order: kWritten once the slot is free).
  struct Placed {
    static constexpr uint64_t kWritten = UINT64_MAX;
    size_t offset = 0;
    size_t size = 0;
    uint64_t order = kWritten;
  };
  // A slot for the event of order_ - 1 at slab_[offset, offset + size).
  uint32_t Place(size_t offset, size_t size);
  // The BEGIN an END would merge its arguments into (`names`: their
  // iids, in the END's order): its place while it still waits in the
  // window, every name interned and unique and one of them the BEGIN's;
  // else nullptr.
  Placed* MergeTarget(const OpenSlice& begin, const std::vector<uint64_t>& names);
  // Writes into merge_scratch_ the BEGIN at `target` with the END's
  // annotations (end_args_, encoded at slab_[args_start..]) merged in.
  void MergeIntoBegin(const OpenSlice& begin, const Placed& target, size_t args_start);

  // An encoded TrackEvent waiting in the window: its time, its place in
  // the stream (ties keep stream order, so every track stays in order)
  // and its bytes in slab_.
  struct Pending {
    uint64_t ts = 0;
    uint64_t order = 0;
    uint32_t slot = 0;  // placed_[slot]: its bytes
  };
  struct Later {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.ts != b.ts ? a.ts > b.ts : a.order > b.order;
    }
  };

  // The iid of `s` in `table` (0: the table is full, write `s` inline);
  // a new one is defined in the next packet written.
  uint64_t Intern(InternTable* table, std::string_view s);
  // Intern() of `s`, found by its id (0: none) after the first time.
  uint64_t Intern(InternTable* table, uint32_t id, std::string_view s);
  // The first packet of the file: clears the incremental state, declares
  // the clocks.
  void Start();
  // Writes the events due (all of them with `all`).
  void Drain(bool all);
  void WritePending(uint64_t time, const Placed& p);
  // Frames `bytes` as one Trace.packet into the output.
  void Put(std::string_view bytes);
  // Writes or compresses what has piled up.
  void FlushIfFull();
  void FlushOut();
  void FlushCompressed();
  // `in` deflated into compressed_ (zlib format): its size, 0 on failure.
  size_t Deflate(std::string_view in);
  // `in` compressed into compressed_ with zstd_: its size, 0 on failure.
  size_t ZstdCompress(std::string_view in);
  struct Bundle {
    proto_wire::Buffer events_bytes;  // FtraceEvent fields (2), encoded
    size_t events = 0;
  };
  void FlushBundle(uint32_t cpu, Bundle* bundle);

  std::FILE* out_;
  bool compress_;
  proto_wire::Buffer out_buf_;  // framed packets not yet written to out_
  proto_wire::Buffer pending_;  // framed packets not yet compressed
  std::string compressed_;      // reused
#ifdef HMBTRACE_HAVE_LIBDEFLATE
  struct FreeCompressor {
    void operator()(libdeflate_compressor* c) const;
  };
  std::unique_ptr<libdeflate_compressor, FreeCompressor> deflater_;  // with compress_
#endif
  struct FreeZstd {
    void operator()(ZSTD_CCtx_s* c) const;
  };
  std::unique_ptr<ZSTD_CCtx_s, FreeZstd> zstd_;  // with Codec::kZstd
  proto_wire::Buffer packet_;                    // reused: the packets not in the window
  proto_wire::Buffer slab_;                      // encoded events in the window
  // The window: events that came in time order (most: instants, ends)
  // queue in `in_order_`; the others (a latency slice's begin, back-dated)
  // wait in the heap `window_` (Later: earliest first). The earlier of the
  // two fronts leaves first.
  std::deque<Pending> in_order_;
  std::vector<Pending> window_;
  std::vector<Placed> placed_;
  std::vector<uint32_t> free_slots_;  // of placed_
  std::vector<Placed*> compacting_;   // reused by Drain()
  proto_wire::Buffer interned_;  // InternedData entries not yet written
  InternTable names_{perfetto_fields::InternedData::kEventNamesFieldNumber, {}, {}, {}};
  InternTable arg_names_{
      perfetto_fields::InternedData::kDebugAnnotationNamesFieldNumber, {}, {}, {}};
  InternTable arg_values_{
      perfetto_fields::InternedData::kDebugAnnotationStringValuesFieldNumber, {}, {}, {}};
  size_t live_ = 0;  // bytes of the events in the window
  uint64_t order_ = 0;
  uint64_t newest_ = 0;  // the latest time given to Event()
  uint64_t clock_ = 0;   // the incremental clock's value (last time written on it)
  bool started_ = false;
  std::vector<TrackSlices> slices_;     // by track uuid
  uint64_t args_folded_ = 0;
  uint64_t slices_merged_ = 0;
  std::vector<uint64_t> end_names_;          // reused: an END's annotation name iids
  std::vector<OpenSlice::Arg> end_args_;     // reused: where they lie in the slab
  std::string merge_scratch_;                // reused: a merged BEGIN
  std::map<uint32_t, Bundle> bundles_;  // per CPU
  std::string text_scratch_;            // reused
  uint64_t ftrace_dropped_ = 0;
  uint64_t prints_not_atrace_ = 0;
  bool failed_ = false;
  uint64_t bytes_ = 0;
  uint64_t packets_ = 0;
  uint64_t late_ = 0;
};

// Whether `text`, a print event's buf, is in atrace form: a strict subset
// of what Perfetto's atrace parser (ParseSystraceTracePoint(),
// src/trace_processor/importers/systrace/systrace_parser.h) takes without
// counting a systrace_parse_failure. After trailing '\n' and '\0', fields
// split at '|'; the phase is one character; tgid is decimal digits:
// "B|tgid|name", "E" or "E|tgid[|...]", "I|tgid|name", "N|tgid|track|name",
// "S|tgid|name|cookie", "F|tgid|name|cookie", "C|tgid|name|value",
// "G|tgid|track|name|cookie", "H|tgid|track|[name|]cookie" (cookie and
// value: an optional '-' and digits), or a "trace_event_clock_sync:" line
// (which Perfetto ignores quietly). Perfetto reads any text whose first
// character is E as an end; this does not ("End of test" is no atrace).
bool AtraceAccepts(std::string_view text);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_PROTO_H_
