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

// A growing byte buffer written through a pointer: each field is one
// capacity check and the varint loop, with no std::string::append (and
// its memmove call) per byte run. (The JSON writer's is
// json_text.h's TextBuffer.)
class Buffer {
 public:
  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  const char* data() const { return bytes_.data(); }
  std::string_view view() const { return {bytes_.data(), used_}; }
  std::string_view view(size_t offset, size_t n) const { return {bytes_.data() + offset, n}; }
  void clear() { used_ = 0; }
  // Keeps the first `n` bytes.
  void Truncate(size_t n) { used_ = std::min(used_, n); }
  // Drops the first `n` bytes (n <= size()).
  void EraseFront(size_t n) {
    std::memmove(begin(), begin() + n, used_ - n);
    used_ -= n;
  }
  // Moves bytes [from, from + n) to `to` (the ranges may overlap).
  void Move(size_t to, size_t from, size_t n) { std::memmove(begin() + to, begin() + from, n); }
  void swap(Buffer& other) {
    bytes_.swap(other.bytes_);
    std::swap(used_, other.used_);
  }

  void Varint(uint64_t v) {
    Reserve(kMaxVarint);
    used_ = WriteVarint(v, end()) - begin();
  }
  void Tag(uint32_t field, WireType type) { Varint((uint64_t{field} << 3) | type); }
  void Uint(uint32_t field, uint64_t v) {
    Reserve(2 * kMaxVarint);
    uint8_t* p = WriteVarint((uint64_t{field} << 3) | kVarint, end());
    used_ = WriteVarint(v, p) - begin();
  }
  void Int(uint32_t field, int64_t v) { Uint(field, static_cast<uint64_t>(v)); }
  void Fixed64(uint32_t field, uint64_t v) {
    Reserve(kMaxVarint + 8);
    uint8_t* p = WriteVarint((uint64_t{field} << 3) | kFixed64, end());
    for (int i = 0; i < 8; i++)
      *p++ = static_cast<uint8_t>(v >> (8 * i));
    used_ = p - begin();
  }
  void Bytes(uint32_t field, std::string_view b) {
    Reserve(2 * kMaxVarint + b.size());
    uint8_t* p = WriteVarint((uint64_t{field} << 3) | kLengthDelimited, end());
    p = WriteVarint(b.size(), p);
    if (!b.empty())
      std::memcpy(p, b.data(), b.size());
    used_ = p + b.size() - begin();
  }
  void Append(std::string_view b) {
    Reserve(b.size());
    if (!b.empty())
      std::memcpy(end(), b.data(), b.size());
    used_ += b.size();
  }
  // A nested message of unknown length: room for a one-byte length,
  // moved along if the body turns out longer (rare: events are small).
  size_t BeginNested(uint32_t field) {
    Tag(field, kLengthDelimited);
    Reserve(1);
    used_++;
    return used_;
  }
  void EndNested(size_t body_start) {
    const size_t len = used_ - body_start;
    const size_t extra = VarintSize(len) - 1;
    if (extra) {
      Reserve(extra);
      std::memmove(begin() + body_start + extra, begin() + body_start, len);
      used_ += extra;
    }
    WriteVarint(len, begin() + body_start - 1);
  }

 private:
  uint8_t* begin() { return reinterpret_cast<uint8_t*>(bytes_.data()); }
  uint8_t* end() { return begin() + used_; }
  void Reserve(size_t n) {
    if (used_ + n > bytes_.size()) [[unlikely]]
      Grow(n);
  }
  [[gnu::noinline]] void Grow(size_t n) { bytes_.resize(std::max(bytes_.size() * 2, used_ + n + 4096)); }

  std::string bytes_;  // its size is the capacity; used_ bytes are written
  size_t used_ = 0;
};

}  // namespace hmbtrace::proto_wire

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PROTO_WIRE_H_
