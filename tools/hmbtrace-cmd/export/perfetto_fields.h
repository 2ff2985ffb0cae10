// SPDX-License-Identifier: GPL-2.0-only
//
// The field numbers and enum values of perfetto_trace.proto that the
// export writes, by name, for the hand encoder (proto_wire.h): the names
// and numbers are those of the .proto, spelled as protoc spells its
// constants (TracePacket::kTimestampFieldNumber), so that a line of
// export_proto.cc reads as the message it writes. export_proto_unittest
// checks every one against the classes protoc generates from the .proto;
// the tool itself does not use libprotobuf.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PERFETTO_FIELDS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PERFETTO_FIELDS_H_

#include <cstdint>

namespace hmbtrace::perfetto_fields {

struct Trace {
  static constexpr uint32_t kPacketFieldNumber = 1;
};

struct TracePacket {
  static constexpr uint32_t kFtraceEventsFieldNumber = 1;
  static constexpr uint32_t kClockSnapshotFieldNumber = 6;
  static constexpr uint32_t kTimestampFieldNumber = 8;
  static constexpr uint32_t kTrustedPacketSequenceIdFieldNumber = 10;
  static constexpr uint32_t kTrackEventFieldNumber = 11;
  static constexpr uint32_t kInternedDataFieldNumber = 12;
  static constexpr uint32_t kSequenceFlagsFieldNumber = 13;
  static constexpr uint32_t kCompressedPacketsFieldNumber = 50;
  static constexpr uint32_t kTimestampClockIdFieldNumber = 58;
  static constexpr uint32_t kTracePacketDefaultsFieldNumber = 59;
  static constexpr uint32_t kTrackDescriptorFieldNumber = 60;
  static constexpr uint32_t kZstdCompressedPacketsFieldNumber = 133;
  // enum SequenceFlags
  static constexpr uint32_t SEQ_INCREMENTAL_STATE_CLEARED = 1;
};

struct TracePacketDefaults {
  static constexpr uint32_t kTimestampClockIdFieldNumber = 58;
};

// enum BuiltinClock
inline constexpr uint32_t BUILTIN_CLOCK_BOOTTIME = 6;

struct ClockSnapshot {
  static constexpr uint32_t kClocksFieldNumber = 1;
  static constexpr uint32_t kPrimaryTraceClockFieldNumber = 2;
  struct Clock {
    static constexpr uint32_t kClockIdFieldNumber = 1;
    static constexpr uint32_t kTimestampFieldNumber = 2;
    static constexpr uint32_t kIsIncrementalFieldNumber = 3;
  };
};

struct TrackDescriptor {
  static constexpr uint32_t kUuidFieldNumber = 1;
  static constexpr uint32_t kNameFieldNumber = 2;
  static constexpr uint32_t kParentUuidFieldNumber = 5;
  static constexpr uint32_t kCounterFieldNumber = 8;
  static constexpr uint32_t kChildOrderingFieldNumber = 11;
  static constexpr uint32_t kSiblingOrderRankFieldNumber = 12;
  static constexpr uint32_t kDescriptionFieldNumber = 14;
  // enum ChildTracksOrdering
  static constexpr uint32_t EXPLICIT = 3;
};

struct CounterDescriptor {
  static constexpr uint32_t kUnitFieldNumber = 3;
  static constexpr uint32_t kUnitNameFieldNumber = 6;
  // enum Unit
  static constexpr uint32_t UNIT_TIME_NS = 1;
  static constexpr uint32_t UNIT_COUNT = 2;
  static constexpr uint32_t UNIT_SIZE_BYTES = 3;
};

struct TrackEvent {
  static constexpr uint32_t kDebugAnnotationsFieldNumber = 4;
  static constexpr uint32_t kTypeFieldNumber = 9;
  static constexpr uint32_t kNameIidFieldNumber = 10;
  static constexpr uint32_t kTrackUuidFieldNumber = 11;
  static constexpr uint32_t kNameFieldNumber = 23;
  static constexpr uint32_t kCounterValueFieldNumber = 30;
  static constexpr uint32_t kFlowIdsFieldNumber = 47;
  static constexpr uint32_t kTerminatingFlowIdsFieldNumber = 48;
  // enum Type
  static constexpr uint32_t TYPE_SLICE_BEGIN = 1;
  static constexpr uint32_t TYPE_SLICE_END = 2;
  static constexpr uint32_t TYPE_INSTANT = 3;
  static constexpr uint32_t TYPE_COUNTER = 4;
};

struct DebugAnnotation {
  static constexpr uint32_t kNameIidFieldNumber = 1;
  static constexpr uint32_t kBoolValueFieldNumber = 2;
  static constexpr uint32_t kUintValueFieldNumber = 3;
  static constexpr uint32_t kIntValueFieldNumber = 4;
  static constexpr uint32_t kStringValueFieldNumber = 6;
  static constexpr uint32_t kNameFieldNumber = 10;
  static constexpr uint32_t kStringValueIidFieldNumber = 17;
};

struct InternedData {
  static constexpr uint32_t kEventNamesFieldNumber = 2;
  static constexpr uint32_t kDebugAnnotationNamesFieldNumber = 3;
  static constexpr uint32_t kDebugAnnotationStringValuesFieldNumber = 29;
};

// EventName, DebugAnnotationName and InternedString: an iid and its string.
struct InternedEntry {
  static constexpr uint32_t kIidFieldNumber = 1;
  static constexpr uint32_t kNameFieldNumber = 2;  // InternedString: str
};

struct FtraceEventBundle {
  static constexpr uint32_t kCpuFieldNumber = 1;
  static constexpr uint32_t kEventFieldNumber = 2;
};

struct FtraceEvent {
  static constexpr uint32_t kTimestampFieldNumber = 1;
  static constexpr uint32_t kPidFieldNumber = 2;
  static constexpr uint32_t kPrintFieldNumber = 3;
  static constexpr uint32_t kGenericFieldNumber = 327;
};

struct PrintFtraceEvent {
  static constexpr uint32_t kIpFieldNumber = 1;
  static constexpr uint32_t kBufFieldNumber = 2;
};

struct GenericFtraceEvent {
  static constexpr uint32_t kEventNameFieldNumber = 1;
  static constexpr uint32_t kFieldFieldNumber = 2;
  struct Field {
    static constexpr uint32_t kNameFieldNumber = 1;
    static constexpr uint32_t kStrValueFieldNumber = 3;
    static constexpr uint32_t kIntValueFieldNumber = 4;
    static constexpr uint32_t kUintValueFieldNumber = 5;
  };
};

}  // namespace hmbtrace::perfetto_fields

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PERFETTO_FIELDS_H_
