// SPDX-License-Identifier: GPL-2.0-only
//
// The pieces of JSON text export_json.cc writes a million times a
// capture (into out_buffer.h's OutBuffer, here TextBuffer): numbers, short
// strings known ahead.
//
// Every writer here writes at a pointer into room reserved beforehand
// (TextBuffer::Room()) and returns the new end: no bounds check per piece.
// Room() always leaves kSlack bytes more than asked, so that a short
// piece may be copied as a whole block of fixed size (one or two vector
// moves, no call to memcpy) past its real end: what lands beyond the end
// is written over by the next piece, or is past size() and never read.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_TEXT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_TEXT_H_

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "export/out_buffer.h"

namespace hmbtrace::json_text {

inline constexpr size_t kSlack = OutBuffer::kSlack;
using TextBuffer = OutBuffer;

// A literal, its length known at compile time (no call to memcpy).
template <size_t N>
inline char* Lit(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}

// The most a JSON string of n characters takes (String()).
constexpr size_t StringRoom(size_t n) {
  return 6 * n + 2;  // an escaped control character: 6 bytes; the quotes
}

// `s` as a JSON string: '"' and '\\' escaped, control characters as
// \u00XX, the rest as it is (UTF-8 passes through).
inline char* String(char* p, std::string_view s) {
  *p++ = '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c != '"' && c != '\\' && c >= 0x20) [[likely]] {
      *p++ = ch;
    } else if (c >= 0x20) {
      *p++ = '\\';
      *p++ = ch;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      std::memcpy(p, esc, sizeof(esc));
      p += sizeof(esc);
    }
  }
  *p++ = '"';
  return p;
}

// The most a number takes ("-9223372036854775808", 18446744073709551615).
inline constexpr size_t kNumberRoom = 24;

namespace internal {
inline constexpr char kPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
inline constexpr uint64_t kPow10[20] = {1ull,
                                        10ull,
                                        100ull,
                                        1000ull,
                                        10000ull,
                                        100000ull,
                                        1000000ull,
                                        10000000ull,
                                        100000000ull,
                                        1000000000ull,
                                        10000000000ull,
                                        100000000000ull,
                                        1000000000000ull,
                                        10000000000000ull,
                                        100000000000000ull,
                                        1000000000000000ull,
                                        10000000000000000ull,
                                        100000000000000000ull,
                                        1000000000000000000ull,
                                        10000000000000000000ull};

// The number of decimal digits of v > 0.
inline unsigned Digits(uint64_t v) {
  // bit_width * log10(2), then one correction: at most one off.
  const unsigned guess = (static_cast<unsigned>(std::bit_width(v)) * 1233) >> 12;
  return guess + (v >= kPow10[guess]);
}
}  // namespace internal

namespace internal {
inline uint64_t Pair(uint32_t v) {  // v < 100
  uint16_t two;
  std::memcpy(&two, kPairs + 2 * v, 2);
  return two;
}

// The 8 digits of v < 10^8, zeros first, as the bytes of one word (in
// memory order on a little-endian machine): two independent halves, no
// store and load of the pieces.
inline uint64_t Eight(uint32_t v) {
  const uint32_t hi = v / 10000;
  const uint32_t lo = v - 10000 * hi;
  const uint32_t a = hi / 100;
  const uint32_t c = lo / 100;
  return Pair(a) | Pair(hi - 100 * a) << 16 | Pair(c) << 32 | Pair(lo - 100 * c) << 48;
}

// The n digits of v < 10^8 (n: Digits(v), 1 for 0) at p; 8 bytes of
// room: the zeros in front shifted out of the word.
inline char* Short(char* p, uint32_t v, unsigned n) {
  const uint64_t word = Eight(v) >> (8 * (8 - n));
  std::memcpy(p, &word, 8);
  return p + n;
}
}  // namespace internal

// `v` in decimal, as std::to_chars writes it: cut in pieces of 8 digits
// (one 64-bit division each), each made with 32-bit arithmetic and no
// branch on its digits.
inline char* Uint(char* p, uint64_t v) {
  if constexpr (std::endian::native != std::endian::little) {
    return std::to_chars(p, p + kNumberRoom, v).ptr;
  } else {
    const unsigned n = internal::Digits(v | 1);  // 0: one digit too
    constexpr uint64_t k8 = 100000000;
    if (v < k8)
      return internal::Short(p, static_cast<uint32_t>(v), n);
    if (v < k8 * k8) {
      const uint64_t hi = v / k8;
      p = internal::Short(p, static_cast<uint32_t>(hi), n - 8);
      const uint64_t low = internal::Eight(static_cast<uint32_t>(v - k8 * hi));
      std::memcpy(p, &low, 8);
      return p + 8;
    }
    const uint64_t hi = v / (k8 * k8);
    const uint64_t rest = v - k8 * k8 * hi;
    const uint64_t mid = rest / k8;
    p = internal::Short(p, static_cast<uint32_t>(hi), n - 16);
    const uint64_t words[2] = {internal::Eight(static_cast<uint32_t>(mid)),
                               internal::Eight(static_cast<uint32_t>(rest - k8 * mid))};
    std::memcpy(p, words, 16);
    return p + 16;
  }
}

inline char* Int(char* p, int64_t v) {
  if (v >= 0)
    return Uint(p, static_cast<uint64_t>(v));
  *p++ = '-';
  return Uint(p, 0 - static_cast<uint64_t>(v));
}

// µs with three decimals: the ns ("7525752.848", "0.005").
inline char* Micros(char* p, uint64_t ns) {
  if (ns < 1000) {
    p = Lit(p, "0.");
    std::memcpy(p, internal::kPairs + 2 * (ns / 10), 2);  // "00".."99"
    p[2] = static_cast<char>('0' + ns % 10);
    return p + 3;
  }
  // All the digits, then the last three one place on behind the point.
  char* const end = Uint(p, ns);
  end[0] = end[-1];
  end[-1] = end[-2];
  end[-2] = end[-3];
  end[-3] = '.';
  return end + 1;
}

// The text of a short JSON string (with its quotes) kept to be copied
// as a block: Put() copies kText bytes whatever its length.
struct ShortText {
  static constexpr size_t kText = 47;
  char text[kText] = {};
  uint8_t size = 0;  // 0: none kept

  // False if `s` is too long to keep.
  bool Keep(std::string_view s) {
    if (s.empty() || s.size() > kText)
      return false;
    std::memcpy(text, s.data(), s.size());
    size = static_cast<uint8_t>(s.size());
    return true;
  }
  // Needs kText bytes of room (kText <= kSlack).
  char* Put(char* p) const {
    std::memcpy(p, text, kText);
    return p + size;
  }
};
static_assert(ShortText::kText <= kSlack);
static_assert(sizeof(ShortText) == 48);

}  // namespace hmbtrace::json_text

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_TEXT_H_
