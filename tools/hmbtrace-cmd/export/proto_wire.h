// SPDX-License-Identifier: GPL-2.0-only
//
// Protocol Buffers wire format, written by hand into a byte buffer: the
// few primitives the export's hot path needs (varint, length-delimited,
// fixed64), so that a packet is encoded straight into its output buffer
// instead of through libprotobuf's generated classes (per-event object
// graph, ByteSizeLong, then serialize). The bytes are the ones libprotobuf
// writes for the same values; export_proto_unittest parses them back with
// the generated classes.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_WIRE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_WIRE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "export/out_buffer.h"

namespace hmbtrace::proto_wire {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

inline constexpr size_t kMaxVarint = 10;

// Bytes a varint of `v` takes.
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

// Bytes a field takes: a varint field of value `v`; a length-delimited
// field of `n` bytes.
inline size_t UintFieldSize(uint32_t field, uint64_t v) {
  return VarintSize(uint64_t{field} << 3) + VarintSize(v);
}
inline size_t BytesFieldSize(uint32_t field, size_t n) {
  return VarintSize((uint64_t{field} << 3) | kLengthDelimited) + VarintSize(n) + n;
}

// Writes `v` at `p` (room for kMaxVarint bytes); returns the end.
inline uint8_t* WriteVarint(uint64_t v, uint8_t* p) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// A protobuf being encoded: each field is one capacity check and the
// varint loop, written through a pointer into the OutBuffer's room, with
// no std::string::append (and its memmove call) per byte run.
class Buffer : public OutBuffer {
 public:
  void Varint(uint64_t v) { Done(WriteVarint(v, At(kMaxVarint))); }
  void Tag(uint32_t field, WireType type) { Varint((uint64_t{field} << 3) | type); }
  void Uint(uint32_t field, uint64_t v) {
    uint8_t* p = WriteVarint((uint64_t{field} << 3) | kVarint, At(2 * kMaxVarint));
    Done(WriteVarint(v, p));
  }
  void Int(uint32_t field, int64_t v) { Uint(field, static_cast<uint64_t>(v)); }
  void Fixed64(uint32_t field, uint64_t v) {
    uint8_t* p = WriteVarint((uint64_t{field} << 3) | kFixed64, At(kMaxVarint + 8));
    for (int i = 0; i < 8; i++)
      *p++ = static_cast<uint8_t>(v >> (8 * i));
    Done(p);
  }
  void Bytes(uint32_t field, std::string_view b) {
    uint8_t* p = WriteVarint((uint64_t{field} << 3) | kLengthDelimited, At(2 * kMaxVarint + b.size()));
    p = WriteVarint(b.size(), p);
    if (!b.empty())
      std::memcpy(p, b.data(), b.size());
    Done(p + b.size());
  }
  // A nested message of unknown length: room for a one-byte length,
  // moved along if the body turns out longer (rare: events are small).
  size_t BeginNested(uint32_t field) {
    Tag(field, kLengthDelimited);
    At(1);
    Advance(1);
    return size();
  }
  void EndNested(size_t body_start) {
    const size_t len = size() - body_start;
    const size_t extra = VarintSize(len) - 1;
    if (extra) {
      At(extra);
      Move(body_start + extra, body_start, len);
      Advance(extra);
    }
    WriteVarint(len, reinterpret_cast<uint8_t*>(Written(body_start - 1)));
  }

 private:
  uint8_t* At(size_t n) { return reinterpret_cast<uint8_t*>(Room(n)); }
  void Done(uint8_t* p) { AdvanceTo(reinterpret_cast<char*>(p)); }
};

}  // namespace hmbtrace::proto_wire

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_WIRE_H_
