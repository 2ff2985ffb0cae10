// SPDX-License-Identifier: GPL-2.0-only
//
// Rendering of trace record payloads with the dictionary's printf-like
// formats. This is the one decoder shared by hmbtrace-cmd and the
// libtraceevent plugin, so the two always print a record the same way.
//
// Format rules (a subset of printf, applied to dictionary fields, not to
// C varargs):
//   - Each conversion consumes the next field, in field order. Supported:
//     %d %i %u %x %X %s, with flags [-+ 0#], a width, a precision, and any
//     length modifier (h hh l ll z j t L q), which is accepted and ignored:
//     the field's type, not the format, decides how many bytes are read.
//     "%%" prints '%'. Anything else after '%' is copied verbatim and
//     consumes no field.
//   - How a field prints depends on the field first, then the conversion:
//       ENUM     the value's name; unknown values as 0x<hex>
//       FLAGS    names of the set masks joined by '|', leftover bits as
//                0x<hex>; 0 prints the name of a 0 value, else "0"
//       STRING   the characters up to the first NUL, non-printable ones
//                escaped as \xNN, a backslash doubled
//       BYTES    lower-case hex, two digits per byte
//       integer  %d %i %u: decimal, signed iff the field's type is signed;
//                %x %X: the field's bits in hex (a signed field is not
//                sign-extended: an s8 of -1 prints "ff");
//                %s: decimal, or 0x<hex> if the field's display is HEX.
//     Flags, width and precision apply to the result as printf would.
//   - A field whose bytes are not all inside the payload prints
//     "<truncated>"; a conversion with no field left prints "<?>"; fields
//     with no conversion left are not printed.
// Nothing outside the payload span is ever read.

#ifndef HMBTRACE_DECODE_FORMAT_H_
#define HMBTRACE_DECODE_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dictionary.h"

namespace hmbtrace {

// Renders one record. An id missing from `dict` renders as
// "unknown event <id> len=<n> data=<hex>", the hex capped at
// kUnknownEventHexBytes bytes followed by "..." when longer.
std::string FormatRecord(const Dictionary& dict,
                         uint16_t event_id,
                         std::span<const uint8_t> payload);

// Same, for an event already looked up.
std::string FormatEvent(const EventDesc& event,
                        std::span<const uint8_t> payload);
// Same, appended to `out` (no string per record: a reader's hot path).
void AppendFormatEvent(std::string* out,
                       const EventDesc& event,
                       std::span<const uint8_t> payload);

// One conversion specification of a format, parsed.
struct FormatSpec {
  bool left = false;   // '-'
  bool plus = false;   // '+'
  bool space = false;  // ' '
  bool zero = false;   // '0'
  bool alt = false;    // '#'
  size_t width = 0;
  bool has_precision = false;
  size_t precision = 0;
  // One of "diuxXs%", or 0 when the text after '%' is not a conversion we
  // support (it is then copied verbatim).
  char conv = 0;
};

// An event's format read once, for a reader that renders many records of
// the event: Append() gives what AppendFormatEvent() gives. It points
// into `event`, which must outlive it.
class FormatPlan {
 public:
  explicit FormatPlan(const EventDesc& event);
  void Append(std::string* out, std::span<const uint8_t> payload) const;

 private:
  // Text, then the conversion of `field` if any.
  struct Step {
    std::string text;
    const FieldDesc* field = nullptr;
    FormatSpec spec;
  };
  std::vector<Step> steps_;
};

inline constexpr size_t kUnknownEventHexBytes = 64;

namespace format_internal {

// The bytes of `field` inside `payload`, or nullopt if any lies outside.
inline std::optional<std::span<const uint8_t>> FieldBytes(const FieldDesc& field,
                                                          std::span<const uint8_t> payload) {
  if (field.offset > payload.size())
    return std::nullopt;
  // Size 0: a trailing BYTES field that takes the rest of the payload.
  if (field.size == 0)
    return payload.subspan(field.offset);
  if (field.size > payload.size() - field.offset)
    return std::nullopt;
  return payload.subspan(field.offset, field.size);
}

inline uint64_t LoadLe(std::span<const uint8_t> bytes) {
  if constexpr (std::endian::native == std::endian::little) {
    // The integer widths, one load each (the hot path of every reader).
    switch (bytes.size()) {
      case 1:
        return bytes[0];
      case 2: {
        uint16_t v;
        std::memcpy(&v, bytes.data(), sizeof(v));
        return v;
      }
      case 4: {
        uint32_t v;
        std::memcpy(&v, bytes.data(), sizeof(v));
        return v;
      }
      case 8: {
        uint64_t v;
        std::memcpy(&v, bytes.data(), sizeof(v));
        return v;
      }
      default:
        break;
    }
  }
  uint64_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;)
    v = v << 8 | bytes[i];
  return v;
}

inline uint64_t SignExtend(uint64_t raw, size_t width) {
  // EventDesc is a plain struct a tool may build by hand; only a parsed one
  // guarantees size == type width, so do not trust it for the shift.
  if (width == 0 || width >= 8)
    return raw;
  const uint64_t sign = uint64_t{1} << (width * 8 - 1);
  return (raw ^ sign) - sign;
}

}  // namespace format_internal

// FieldValue() of a field already looked up, inline for a reader's hot
// path: std::nullopt if it is not an integer or its bytes are not all
// inside the payload.
inline std::optional<uint64_t> IntegerFieldValue(const FieldDesc& field,
                                                 std::span<const uint8_t> payload) {
  if (!field.is_integer())
    return std::nullopt;
  const auto bytes = format_internal::FieldBytes(field, payload);
  if (!bytes)
    return std::nullopt;
  const uint64_t raw = format_internal::LoadLe(*bytes);
  return field.is_signed() ? format_internal::SignExtend(raw, field.size) : raw;
}

// A record as hmbtrace-cmd report and hmb-read --records print it after
// "dev core seq fw_ts" (and plugin_hmb.so for an id its dictionary has):
// "<name>: <text>" with `dict`, which is the dictionary of the record's
// generation, or "event_id=<id> (not in the dictionary)" / "event_id=<id>
// (no dictionary yet)" when it cannot be decoded.
std::string RecordText(const Dictionary* dict,
                       uint16_t event_id,
                       std::span<const uint8_t> payload);
void AppendRecordText(std::string* out,
                      const Dictionary* dict,
                      uint16_t event_id,
                      std::span<const uint8_t> payload);

// Lower-case hex, two digits per byte, no separators (build ids, payloads).
std::string Hex(std::span<const uint8_t> bytes);

// The value of integer field `index` of `event` in `payload`; signed types
// are sign-extended to 64 bits (cast the result to int64_t). std::nullopt
// if there is no such field, it is not an integer, or its bytes are not all
// inside the payload.
//
// Inline, as IntegerFieldValue(), so that the optional is built in the
// caller's registers: returned from a call, GCC stores its flag byte and
// reloads it with the value as one word, a store-forwarding stall that
// cost stat a tenth of its time (once per record and role field).
inline std::optional<uint64_t> FieldValue(const EventDesc& event,
                                          size_t index,
                                          std::span<const uint8_t> payload) {
  if (index >= event.fields.size())
    return std::nullopt;
  return IntegerFieldValue(event.fields[index], payload);
}

// FieldValue() of the field a role names (EventDesc's key_field,
// latency_field, qid_field, cid_field): std::nullopt when the event has no
// field in that role (HMB_TRACE_NO_FIELD).
inline std::optional<uint64_t> RoleFieldValue(const EventDesc& event,
                                              uint8_t role_index,
                                              std::span<const uint8_t> payload) {
  if (role_index == HMB_TRACE_NO_FIELD)
    return std::nullopt;
  return FieldValue(event, role_index, payload);
}

}  // namespace hmbtrace

#endif  // HMBTRACE_DECODE_FORMAT_H_
