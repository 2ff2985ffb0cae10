// SPDX-License-Identifier: GPL-2.0-only
//
// The output export writes, not yet written to its file: a growing byte
// buffer written through a pointer. Its memory is not cleared first and
// grows with realloc() (a large block moves by remapping, not copying):
// a page is touched first when output is written on it. The protobuf
// writer (proto_wire.h's Buffer) and the JSON writer (json_text.h) both
// write through it.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_OUT_BUFFER_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_OUT_BUFFER_H_

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <utility>

namespace hmbtrace {

class OutBuffer {
 public:
  // Room() always leaves this much more than asked: a writer may copy a
  // short piece as a block of fixed size past its real end (what lands
  // beyond is written over by the next piece, or is past size()).
  static constexpr size_t kSlack = 64;

  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  const char* data() const { return bytes_.get(); }
  std::string_view view() const { return {bytes_.get(), used_}; }
  std::string_view view(size_t offset, size_t n) const { return {bytes_.get() + offset, n}; }
  void clear() { used_ = 0; }
  // Keeps the first `n` bytes.
  void Truncate(size_t n) { used_ = std::min(used_, n); }
  // Drops the first `n` bytes (n <= size()).
  void EraseFront(size_t n) {
    if (n)
      std::memmove(bytes_.get(), bytes_.get() + n, used_ - n);
    used_ -= n;
  }
  // Moves bytes [from, from + n) to `to` (the ranges may overlap; both
  // within the room reserved).
  void Move(size_t to, size_t from, size_t n) {
    if (n)
      std::memmove(bytes_.get() + to, bytes_.get() + from, n);
  }
  void swap(OutBuffer& other) {
    bytes_.swap(other.bytes_);
    std::swap(capacity_, other.capacity_);
    std::swap(used_, other.used_);
  }
  // Room for `n` bytes (and kSlack more) written through the pointer,
  // then Advance() by what was written.
  char* Room(size_t n) {
    if (n + kSlack > capacity_ - used_) [[unlikely]]
      Grow(n + kSlack);
    return bytes_.get() + used_;
  }
  void Advance(size_t n) { used_ += n; }
  // Room for `n` bytes in all, made now (its pages are touched only
  // when written).
  void Reserve(size_t n) {
    if (n > capacity_)
      Grow(n - used_);
  }
  // The byte at `offset` (< size()), to be written over.
  char* Written(size_t offset) { return bytes_.get() + offset; }
  // Sets the end at `p`, a pointer into the room last reserved.
  void AdvanceTo(const char* p) { used_ = static_cast<size_t>(p - bytes_.get()); }
  void Append(std::string_view b) {
    char* p = Room(b.size());
    if (!b.empty())
      std::memcpy(p, b.data(), b.size());
    used_ += b.size();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  [[gnu::noinline]] void Grow(size_t n) {
    const size_t capacity = std::max(2 * capacity_, used_ + n);
    char* p = static_cast<char*>(std::realloc(bytes_.get(), capacity));
    if (!p)
      throw std::bad_alloc();
    (void)bytes_.release();
    bytes_.reset(p);
    capacity_ = capacity;
  }

  std::unique_ptr<char, Free> bytes_;
  size_t capacity_ = 0;
  size_t used_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_OUT_BUFFER_H_
