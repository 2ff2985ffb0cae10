// SPDX-License-Identifier: GPL-2.0-only
//
// The firmware's event dictionary, parsed from the bytes the producer
// publishes at dict_offset of the HMB trace area (see hmb_trace_abi.h).
//
// Those bytes are device memory, i.e. hostile input: Parse() copies them once,
// checks every count, length, offset and index against the copy, and either
// returns a Dictionary whose every field index and payload range is known to
// be sane, or an error naming the entry and the problem. Nothing that uses a
// parsed Dictionary has to re-validate it.

#ifndef HMBTRACE_DECODE_DICTIONARY_H_
#define HMBTRACE_DECODE_DICTIONARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hmb_trace_abi.h"

namespace hmbtrace {

// One named value of an ENUM field, or one named bit mask of a FLAGS field.
struct ValueDesc {
  uint64_t value = 0;
  std::string name;
};

// One field of an event payload.
//
// Invariants after Parse(): type and display are known HMB_TRACE_* values;
// integer fields have size == their type's width; offset + size <= 0xffff
// (a record payload is at most 0xffff bytes); size == 0 only for a BYTES
// field that is the event's last field ("the rest of the payload"); ENUM and
// FLAGS are only used on integer fields.
struct FieldDesc {
  std::string name;
  uint16_t offset = 0;
  uint16_t size = 0;
  uint8_t type = 0;
  uint8_t display = HMB_TRACE_DISPLAY_DEC;
  std::vector<ValueDesc> values;

  // Types 1..8 are the integers (hmb_trace_abi.h), S8..S64 the signed ones.
  bool is_integer() const { return type >= HMB_TRACE_TYPE_U8 && type <= HMB_TRACE_TYPE_S64; }
  bool is_signed() const { return type >= HMB_TRACE_TYPE_S8 && type <= HMB_TRACE_TYPE_S64; }
};

// One event type.
//
// Invariants after Parse(): id != 0 and unique in its dictionary; role is a
// known HMB_TRACE_ROLE_*; key/latency/qid/cid/value/tag/resource_field are
// each either HMB_TRACE_NO_FIELD or the index of an integer field; cmd_kind
// is a known HMB_TRACE_CMD_* (an unknown one, from a later minor, reads as
// NONE).
struct EventDesc {
  uint16_t id = 0;
  std::string name;
  std::string format;
  uint8_t role = HMB_TRACE_ROLE_INSTANT;
  uint16_t pair_id = 0;
  uint8_t key_field = HMB_TRACE_NO_FIELD;
  uint8_t latency_field = HMB_TRACE_NO_FIELD;
  uint8_t qid_field = HMB_TRACE_NO_FIELD;
  uint8_t cid_field = HMB_TRACE_NO_FIELD;
  uint8_t value_field = HMB_TRACE_NO_FIELD;
  // ABI 1.2 command attribution (struct hmb_trace_dict_cmd): NONE when the
  // entry has no trailer; the two fields are then HMB_TRACE_NO_FIELD.
  uint8_t cmd_kind = HMB_TRACE_CMD_NONE;
  uint8_t tag_field = HMB_TRACE_NO_FIELD;
  uint8_t resource_field = HMB_TRACE_NO_FIELD;
  std::vector<FieldDesc> fields;
};

class Dictionary {
 public:
  // Parses a dictionary (struct hmb_trace_dict_header and its entries).
  // `bytes` may be longer than the dictionary (e.g. the whole dict_len
  // region); it is read exactly once, into a private copy. On failure
  // returns std::nullopt and, if `error` is not null, stores a message such
  // as "event #2 (id 17): field 1 'opc': unknown type 11".
  static std::optional<Dictionary> Parse(std::span<const uint8_t> bytes,
                                         std::string* error = nullptr);

  // Events in dictionary order.
  const std::vector<EventDesc>& events() const { return events_; }

  // The event with `id`, or nullptr. O(log n).
  const EventDesc* Find(uint16_t id) const;

  // Bytes the dictionary occupies (its header's total_len).
  uint32_t total_len() const { return total_len_; }

 private:
  Dictionary() = default;

  uint32_t total_len_ = 0;
  std::vector<EventDesc> events_;
  // (id, index into events_), sorted by id; also how duplicates are found.
  std::vector<std::pair<uint16_t, uint32_t>> by_id_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_DECODE_DICTIONARY_H_
