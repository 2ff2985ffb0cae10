// SPDX-License-Identifier: GPL-2.0-only
//
// Perfetto's native trace format (perfetto_trace.proto): the ExportModel
// stream as TracePackets, each written to the file as soon as it is made
// (a Trace is a sequence of length-delimited field-1 packets), so memory
// does not grow with the capture.
//
// One packet sequence (trusted_packet_sequence_id 1): the first packet
// clears its incremental state; event names, argument names and the
// values of enum-like arguments are interned on it, each defined in the
// packet that first uses it. Timestamps are the capture's trace clock in
// ns, written as Perfetto's default clock (BOOTTIME; the track groups'
// descriptions name the capture's clock when it is another: export_model.h).
//
// The capture's other ftrace events (markers, nvme, sched, ...) are written
// as ftrace event bundles, one per CPU and up to kBundleEvents events:
// trace_marker lines as `print`, the rest as generic events with their
// fields. A ClockSnapshot names BOOTTIME when the capture was recorded on
// the "boot" clock.
//
// With `compress`, packets are gathered into pieces of about
// kCompressPiece bytes, each written as one packet whose compressed_packets
// is their zlib deflate (as Perfetto's own tracing service writes them;
// trace_processor and the UI inflate them).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>

#include "export_model.h"
#include "perfetto_trace.pb.h"

namespace hmbtrace {

inline constexpr uint32_t kExportSequenceId = 1;
inline constexpr size_t kCompressPiece = 1u << 20;

class ProtoTraceWriter : public ExportSink {
 public:
  // Writes to `out` (not owned; buffered by the caller).
  explicit ProtoTraceWriter(std::FILE* out, bool compress = false)
      : out_(out), compress_(compress) {}

  void Track(const ExportTrack& track) override;
  void Event(const ExportEvent& event) override;
  // Gathered per CPU into FtraceEventBundles of up to kBundleEvents.
  void Ftrace(const ExportFtraceEvent& event) override;
  // "boot": a ClockSnapshot naming BOOTTIME as the trace's clock.
  void Clock(const ExportClock& clock) override;
  bool Finish(std::string* error) override;

  static constexpr size_t kBundleEvents = 512;
  // Perfetto rejects a bundle of a CPU >= 1024 (trace corruption): such
  // events are counted here and not written.
  static constexpr uint32_t kMaxCpus = 1024;
  uint64_t ftrace_dropped() const { return ftrace_dropped_; }

  uint64_t bytes() const { return bytes_; }
  uint64_t packets() const { return packets_; }

 private:
  // Looked up by string_view: no allocation per event.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using InternTable = std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>>;
  // The iid of `s` in `table` (0: the table is full, write `s` inline);
  // `*added` says whether it is new, to be defined in this packet.
  static uint64_t Intern(InternTable* table, std::string_view s, bool* added);
  void Write();
  // Frames `bytes` as one Trace.packet into the file.
  void Put(std::string_view bytes);
  void FlushCompressed();
  // A packet serialized elsewhere (the bundles): Write()'s framing.
  void WriteSerialized(const std::string& packet);
  struct Bundle {
    std::string events_bytes;  // FtraceEvent fields (2), encoded
    size_t events = 0;
  };
  void FlushBundle(uint32_t cpu, Bundle* bundle);

  std::FILE* out_;
  bool compress_;
  std::string pending_;     // framed packets not yet compressed
  std::string compressed_;  // reused
  perfetto::protos::TracePacket packet_;  // reused
  std::string buf_;                       // reused
  InternTable names_, arg_names_, arg_values_;
  std::map<uint32_t, Bundle> bundles_;  // per CPU
  std::string event_scratch_, body_scratch_, field_scratch_, bundle_body_, bundle_packet_;
  uint64_t ftrace_dropped_ = 0;
  bool first_ = true;
  bool failed_ = false;
  uint64_t bytes_ = 0;
  uint64_t packets_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_H_
