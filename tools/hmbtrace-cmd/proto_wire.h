// SPDX-License-Identifier: GPL-2.0-only
//
// Protocol Buffers wire format, written by hand into a std::string: the
// few primitives the export's hot path needs (varint, length-delimited,
// fixed64), so that a TrackEvent packet is encoded straight into its
// output buffer instead of through libprotobuf's generated classes
// (per-event object graph, ByteSizeLong, then serialize). The bytes are
// the ones libprotobuf writes for the same values; export_proto_unittest
// parses them back with the generated classes.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_PROTO_WIRE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_PROTO_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

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

// Writes `v` at `p` (room for kMaxVarint bytes); returns the end.
inline uint8_t* WriteVarint(uint64_t v, uint8_t* p) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

inline void PutVarint(std::string* out, uint64_t v) {
  uint8_t buf[kMaxVarint];
  out->append(reinterpret_cast<const char*>(buf), WriteVarint(v, buf) - buf);
}

inline void PutTag(std::string* out, uint32_t field, WireType type) {
  PutVarint(out, (uint64_t{field} << 3) | type);
}

inline void PutUint(std::string* out, uint32_t field, uint64_t v) {
  PutTag(out, field, kVarint);
  PutVarint(out, v);
}

// int64 fields are varints of the two's complement (negative: 10 bytes).
inline void PutInt(std::string* out, uint32_t field, int64_t v) {
  PutUint(out, field, static_cast<uint64_t>(v));
}

inline void PutFixed64(std::string* out, uint32_t field, uint64_t v) {
  PutTag(out, field, kFixed64);
  char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}

inline void PutBytes(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

// A nested message whose length is not known yet: BeginNested() leaves
// room for a one-byte length (most of ours are < 128 bytes) and
// EndNested() writes the length, moving the body if it needs more bytes.
inline size_t BeginNested(std::string* out, uint32_t field) {
  PutTag(out, field, kLengthDelimited);
  out->push_back('\0');
  return out->size();
}

inline void EndNested(std::string* out, size_t body_start) {
  const size_t len = out->size() - body_start;
  const size_t n = VarintSize(len);
  if (n > 1)
    out->insert(body_start, n - 1, '\0');
  uint8_t* p = reinterpret_cast<uint8_t*>(out->data()) + body_start - 1;
  WriteVarint(len, p);
}

}  // namespace hmbtrace::proto_wire

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_PROTO_WIRE_H_
