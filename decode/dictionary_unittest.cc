// SPDX-License-Identifier: GPL-2.0-only

#include "dictionary.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "decode_test_util.h"
#include "format.h"

namespace hmbtrace {
namespace {

using test::Put16;
using test::Put32;
using test::Put8;

constexpr size_t kHeaderLen = sizeof(hmb_trace_dict_header);
constexpr size_t kEventLen = sizeof(hmb_trace_dict_event);
constexpr size_t kFieldLen = sizeof(hmb_trace_dict_field);

std::vector<uint8_t> Realistic() {
  return test::ProduceDictionary(test::RealisticEvents());
}

// Offset of the index-th entry, walking entry_len of a valid dictionary.
size_t EntryOffset(const std::vector<uint8_t>& bytes, size_t index) {
  size_t off = kHeaderLen;
  for (size_t i = 0; i < index; i++) {
    uint32_t len;
    std::memcpy(&len,
                &bytes.at(off + offsetof(hmb_trace_dict_event, entry_len)),
                sizeof(len));
    off += len;
  }
  return off;
}

size_t FieldOffset(const std::vector<uint8_t>& bytes,
                   size_t event,
                   size_t field) {
  return EntryOffset(bytes, event) + kEventLen + field * kFieldLen;
}

// Parses `bytes`, expecting failure; returns the error message.
std::string ParseError(const std::vector<uint8_t>& bytes) {
  std::string error;
  const auto dict = Dictionary::Parse(bytes, &error);
  EXPECT_FALSE(dict.has_value());
  EXPECT_FALSE(error.empty());
  return error;
}

#define EXPECT_CONTAINS(haystack, needle)                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
      << "\"" << (haystack) << "\" does not contain \"" << (needle) << "\""

TEST(DictionaryTest, RealisticDictionaryRoundTrips) {
  const std::vector<uint8_t> bytes = Realistic();
  ASSERT_FALSE(bytes.empty());
  std::string error;
  const auto dict = Dictionary::Parse(bytes, &error);
  ASSERT_TRUE(dict.has_value()) << error;
  EXPECT_EQ(dict->total_len(), bytes.size());

  const auto expected = test::RealisticEvents();
  ASSERT_EQ(dict->events().size(), expected.size());
  for (size_t i = 0; i < expected.size(); i++) {
    const hmb_trace_event_desc& want = expected[i];
    const EventDesc& got = dict->events()[i];
    SCOPED_TRACE(want.name);
    EXPECT_EQ(got.id, want.id);
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.format, want.format);
    EXPECT_EQ(got.role, want.role);
    EXPECT_EQ(got.pair_id, want.pair_id);
    EXPECT_EQ(got.key_field, want.key_field);
    EXPECT_EQ(got.latency_field, want.latency_field);
    EXPECT_EQ(got.qid_field, want.qid_field);
    EXPECT_EQ(got.cid_field, want.cid_field);
    EXPECT_EQ(got.value_field, want.value_field);
    ASSERT_EQ(got.fields.size(), want.nr_fields);
    for (size_t f = 0; f < want.nr_fields; f++) {
      const hmb_trace_field_desc& wf = want.fields[f];
      const FieldDesc& gf = got.fields[f];
      EXPECT_EQ(gf.name, wf.name);
      EXPECT_EQ(gf.offset, wf.offset);
      EXPECT_EQ(gf.size, wf.size);
      EXPECT_EQ(gf.type, wf.type);
      EXPECT_EQ(gf.display, wf.display);
      ASSERT_EQ(gf.values.size(), wf.nr_values);
      for (size_t v = 0; v < wf.nr_values; v++) {
        EXPECT_EQ(gf.values[v].value, wf.values[v].value);
        EXPECT_EQ(gf.values[v].name, wf.values[v].name);
      }
    }
    EXPECT_EQ(dict->Find(want.id), &got);
  }
}

TEST(DictionaryTest, FindReturnsNullForUnknownIds) {
  const auto dict = Dictionary::Parse(Realistic());
  ASSERT_TRUE(dict.has_value());
  EXPECT_EQ(dict->Find(0), nullptr);
  EXPECT_EQ(dict->Find(6), nullptr);
  EXPECT_EQ(dict->Find(0xffff), nullptr);
}

TEST(DictionaryTest, FieldTypesAreClassified) {
  const auto dict = Dictionary::Parse(Realistic());
  ASSERT_TRUE(dict.has_value());
  const EventDesc* temps = dict->Find(test::kTemps);
  ASSERT_NE(temps, nullptr);
  EXPECT_TRUE(temps->fields[0].is_integer());
  EXPECT_TRUE(temps->fields[0].is_signed());
  const EventDesc* log = dict->Find(test::kLog);
  ASSERT_NE(log, nullptr);
  EXPECT_TRUE(log->fields[0].is_integer());
  EXPECT_FALSE(log->fields[0].is_signed());
  EXPECT_FALSE(log->fields[1].is_integer());
  EXPECT_FALSE(log->fields[2].is_integer());
}

TEST(DictionaryTest, EmptyDictionaryParses) {
  const std::vector<uint8_t> bytes = test::ProduceDictionary({});
  ASSERT_EQ(bytes.size(), kHeaderLen);
  const auto dict = Dictionary::Parse(bytes);
  ASSERT_TRUE(dict.has_value());
  EXPECT_TRUE(dict->events().empty());
}

TEST(DictionaryTest, WholeRegionWithZeroTailParses) {
  // Tools hand over the whole dict_len region; total_len says what is used.
  const std::vector<uint8_t> bytes =
      test::ProduceDictionary(test::RealisticEvents(), true);
  const auto dict = Dictionary::Parse(bytes);
  ASSERT_TRUE(dict.has_value());
  EXPECT_LT(dict->total_len(), bytes.size());
  EXPECT_EQ(dict->events().size(), test::RealisticEvents().size());
}

TEST(DictionaryTest, ParseKeepsNoReferenceToTheInput) {
  std::vector<uint8_t> bytes = Realistic();
  const auto dict = Dictionary::Parse(bytes);
  ASSERT_TRUE(dict.has_value());
  std::fill(bytes.begin(), bytes.end(), 0xa5);
  EXPECT_EQ(dict->Find(test::kCmdBegin)->name, "nvme_cmd_begin");
}

TEST(DictionaryTest, EveryTruncatedPrefixFailsCleanly) {
  const std::vector<uint8_t> bytes = Realistic();
  for (size_t len = 0; len < bytes.size(); len++) {
    SCOPED_TRACE(len);
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + len);
    ParseError(prefix);
    // Also with a header that agrees with the truncation, so the entries
    // themselves must be found short.
    if (len >= kHeaderLen) {
      Put32(prefix, offsetof(hmb_trace_dict_header, total_len),
            static_cast<uint32_t>(len));
      ParseError(prefix);
    }
  }
}

TEST(DictionaryTest, RejectsBadHeader) {
  std::vector<uint8_t> bytes = Realistic();
  Put32(bytes, offsetof(hmb_trace_dict_header, magic), HMB_TRACE_MAGIC);
  EXPECT_CONTAINS(ParseError(bytes), "bad magic");

  bytes = Realistic();
  Put16(bytes, offsetof(hmb_trace_dict_header, version), 2);
  EXPECT_CONTAINS(ParseError(bytes), "unsupported version 2");

  bytes = Realistic();
  Put32(bytes, offsetof(hmb_trace_dict_header, total_len), 8);
  EXPECT_CONTAINS(ParseError(bytes), "smaller than the header");
}

TEST(DictionaryTest, RejectsTotalLenPastBuffer) {
  std::vector<uint8_t> bytes = Realistic();
  Put32(bytes, offsetof(hmb_trace_dict_header, total_len),
        static_cast<uint32_t>(bytes.size() + 8));
  EXPECT_CONTAINS(ParseError(bytes), "exceeds the");
}

TEST(DictionaryTest, RejectsMoreEventsThanFit) {
  std::vector<uint8_t> bytes = Realistic();
  Put16(bytes, offsetof(hmb_trace_dict_header, nr_events), 0xffff);
  EXPECT_CONTAINS(ParseError(bytes), "65535 events cannot fit");

  // One more than written but still "fits" by the cheap bound: the entry
  // walk must notice.
  bytes = test::ProduceDictionary(test::RealisticEvents(), true);
  Put16(bytes, offsetof(hmb_trace_dict_header, nr_events), 6);
  EXPECT_CONTAINS(ParseError(bytes), "event #5");
}

TEST(DictionaryTest, RejectsNameWithoutNul) {
  std::vector<uint8_t> bytes = Realistic();
  const size_t name =
      EntryOffset(bytes, 1) + offsetof(hmb_trace_dict_event, name);
  for (size_t i = 0; i < HMB_TRACE_NAME_LEN; i++)
    Put8(bytes, name + i, 'a');
  const std::string error = ParseError(bytes);
  EXPECT_CONTAINS(error, "event #1 (id 2)");
  EXPECT_CONTAINS(error, "name is not NUL-terminated");
}

TEST(DictionaryTest, RejectsFormatWithoutNul) {
  std::vector<uint8_t> bytes = Realistic();
  const size_t fmt =
      EntryOffset(bytes, 0) + offsetof(hmb_trace_dict_event, format);
  for (size_t i = 0; i < HMB_TRACE_FORMAT_LEN; i++)
    Put8(bytes, fmt + i, 'x');
  EXPECT_CONTAINS(ParseError(bytes),
                  "event #0 (id 1 'nvme_cmd_begin'): format is not "
                  "NUL-terminated");
}

TEST(DictionaryTest, RejectsFieldAndValueNamesWithoutNul) {
  std::vector<uint8_t> bytes = Realistic();
  const size_t field = FieldOffset(bytes, 0, 2);
  for (size_t i = 0; i < HMB_TRACE_FIELD_NAME_LEN; i++)
    Put8(bytes, field + i, 'f');
  EXPECT_CONTAINS(ParseError(bytes), "field 2 name is not NUL-terminated");

  // The first value name of event 0 follows its 7 field headers.
  bytes = Realistic();
  const size_t value =
      FieldOffset(bytes, 0, 7) + offsetof(hmb_trace_dict_value, name);
  for (size_t i = 0; i < HMB_TRACE_VALUE_NAME_LEN; i++)
    Put8(bytes, value + i, 'v');
  EXPECT_CONTAINS(ParseError(bytes),
                  "field 2 'opcode': value 0 name is not NUL-terminated");
}

TEST(DictionaryTest, RejectsControlCharactersInNames) {
  std::vector<uint8_t> bytes = Realistic();
  Put8(bytes, EntryOffset(bytes, 0) + offsetof(hmb_trace_dict_event, name),
       0x1b);  // ESC: would drive the user's terminal
  EXPECT_CONTAINS(ParseError(bytes), "non-printable byte 0x1b");
}

TEST(DictionaryTest, RejectsEmptyEventName) {
  std::vector<uint8_t> bytes = Realistic();
  Put8(bytes, EntryOffset(bytes, 2) + offsetof(hmb_trace_dict_event, name), 0);
  EXPECT_CONTAINS(ParseError(bytes), "event #2 (id 3): name is empty");
}

TEST(DictionaryTest, RejectsEntryLenNotMultipleOf8) {
  std::vector<uint8_t> bytes = Realistic();
  Put32(bytes,
        EntryOffset(bytes, 0) + offsetof(hmb_trace_dict_event, entry_len), 564);
  EXPECT_CONTAINS(ParseError(bytes), "entry_len 564 is not a multiple of 8");
}

TEST(DictionaryTest, RejectsEntryLenTooSmall) {
  std::vector<uint8_t> bytes = Realistic();
  const size_t len =
      EntryOffset(bytes, 0) + offsetof(hmb_trace_dict_event, entry_len);
  Put32(bytes, len, 0);
  EXPECT_CONTAINS(ParseError(bytes), "entry_len 0 is smaller than");

  Put32(bytes, len, 136);
  EXPECT_CONTAINS(ParseError(bytes), "entry_len 136 is smaller than");

  // Room for the 7 field headers but not for their 6 value names.
  Put32(bytes, len, kEventLen + 7 * kFieldLen);
  EXPECT_CONTAINS(ParseError(bytes), "value names need");

  // Not even room for the field headers.
  Put32(bytes, len, kEventLen + 6 * kFieldLen);
  EXPECT_CONTAINS(ParseError(bytes), "7 fields need");
}

TEST(DictionaryTest, RejectsEntryLenPastTotalLen) {
  std::vector<uint8_t> bytes = Realistic();
  Put32(bytes,
        EntryOffset(bytes, 4) + offsetof(hmb_trace_dict_event, entry_len),
        0xfffffff8u);
  EXPECT_CONTAINS(ParseError(bytes),
                  "event #4 (id 5): entry_len 4294967288 "
                  "runs past total_len");
}

TEST(DictionaryTest, RejectsHugeNrFields) {
  std::vector<uint8_t> bytes = Realistic();
  Put16(bytes,
        EntryOffset(bytes, 0) + offsetof(hmb_trace_dict_event, nr_fields),
        0xffff);
  EXPECT_CONTAINS(ParseError(bytes), "65535 fields need");
}

TEST(DictionaryTest, RejectsFieldPastLargestPayload) {
  std::vector<uint8_t> bytes = Realistic();
  // nsid: a u32 at offset 0xfffe would end past 64 KiB.
  Put16(bytes,
        FieldOffset(bytes, 0, 4) + offsetof(hmb_trace_dict_field, offset),
        0xfffe);
  EXPECT_CONTAINS(ParseError(bytes),
                  "field 4 'nsid': offset 65534 + size 4 exceeds");
}

TEST(DictionaryTest, RejectsBadSizes) {
  std::vector<uint8_t> bytes = Realistic();
  const size_t nsid_size =
      FieldOffset(bytes, 0, 4) + offsetof(hmb_trace_dict_field, size);
  Put16(bytes, nsid_size, 2);
  EXPECT_CONTAINS(ParseError(bytes), "size 2 does not match");
  Put16(bytes, nsid_size, 0);
  EXPECT_CONTAINS(ParseError(bytes), "size 0 on a non-BYTES field");

  // Make fw_log's string an open-ended BYTES field that is not the last.
  bytes = Realistic();
  const size_t msg = FieldOffset(bytes, 3, 1);
  Put8(bytes, msg + offsetof(hmb_trace_dict_field, type), HMB_TRACE_TYPE_BYTES);
  Put16(bytes, msg + offsetof(hmb_trace_dict_field, size), 0);
  EXPECT_CONTAINS(ParseError(bytes), "size-0 BYTES field is not the last");
}

TEST(DictionaryTest, RejectsUnknownTypeDisplayAndRole) {
  std::vector<uint8_t> bytes = Realistic();
  const size_t type =
      FieldOffset(bytes, 1, 2) + offsetof(hmb_trace_dict_field, type);
  Put8(bytes, type, 0);
  EXPECT_CONTAINS(ParseError(bytes),
                  "event #1 (id 2 'nvme_cmd_end'): field 2 'status': "
                  "unknown type 0");
  Put8(bytes, type, HMB_TRACE_TYPE_BYTES + 1);
  EXPECT_CONTAINS(ParseError(bytes), "unknown type 11");

  bytes = Realistic();
  Put8(bytes,
       FieldOffset(bytes, 1, 2) + offsetof(hmb_trace_dict_field, display),
       HMB_TRACE_DISPLAY_FLAGS + 1);
  EXPECT_CONTAINS(ParseError(bytes), "unknown display 4");

  bytes = Realistic();
  Put8(bytes, EntryOffset(bytes, 1) + offsetof(hmb_trace_dict_event, role),
       HMB_TRACE_ROLE_COUNTER + 1);
  EXPECT_CONTAINS(ParseError(bytes), "unknown role 4");
}

TEST(DictionaryTest, RejectsEnumDisplayOnString) {
  std::vector<uint8_t> bytes = Realistic();
  Put8(bytes,
       FieldOffset(bytes, 3, 1) + offsetof(hmb_trace_dict_field, display),
       HMB_TRACE_DISPLAY_ENUM);
  EXPECT_CONTAINS(ParseError(bytes), "ENUM/FLAGS display on a non-integer");
}

TEST(DictionaryTest, RejectsDuplicateId) {
  std::vector<uint8_t> bytes = Realistic();
  Put16(bytes, EntryOffset(bytes, 3) + offsetof(hmb_trace_dict_event, id),
        test::kCmdEnd);
  EXPECT_CONTAINS(ParseError(bytes),
                  "event #3 (id 2 'fw_log'): duplicate id, already used by "
                  "event #1 'nvme_cmd_end'");
}

TEST(DictionaryTest, RejectsIdZero) {
  std::vector<uint8_t> bytes = Realistic();
  Put16(bytes, EntryOffset(bytes, 2) + offsetof(hmb_trace_dict_event, id), 0);
  EXPECT_CONTAINS(ParseError(bytes), "event #2 (id 0): id 0 is reserved");
}

TEST(DictionaryTest, RejectsBadFieldIndexes) {
  const size_t members[] = {
      offsetof(hmb_trace_dict_event, key_field),
      offsetof(hmb_trace_dict_event, latency_field),
      offsetof(hmb_trace_dict_event, qid_field),
      offsetof(hmb_trace_dict_event, cid_field),
      offsetof(hmb_trace_dict_event, value_field),
  };
  for (const size_t member : members) {
    SCOPED_TRACE(member);
    std::vector<uint8_t> bytes = Realistic();
    // nvme_cmd_end has 4 fields: 4 is the first index out of range.
    Put8(bytes, EntryOffset(bytes, 1) + member, 4);
    EXPECT_CONTAINS(ParseError(bytes), "4 is not a field (event has 4)");
  }

  // In range but not an integer: tools could not read it as one.
  std::vector<uint8_t> bytes = Realistic();
  Put8(bytes,
       EntryOffset(bytes, 3) + offsetof(hmb_trace_dict_event, latency_field),
       1);
  EXPECT_CONTAINS(ParseError(bytes),
                  "latency_field 1 'msg' is not an integer field");
}

TEST(DictionaryTest, NoFieldMarkerIsAccepted) {
  const auto dict = Dictionary::Parse(Realistic());
  ASSERT_TRUE(dict.has_value());
  EXPECT_EQ(dict->Find(test::kLog)->key_field, HMB_TRACE_NO_FIELD);
}

TEST(DictionaryTest, TrailingBytesInsideTotalLenAreIgnored) {
  std::vector<uint8_t> bytes = Realistic();
  bytes.resize(bytes.size() + 64, 0xee);
  Put32(bytes, offsetof(hmb_trace_dict_header, total_len),
        static_cast<uint32_t>(bytes.size()));
  const auto dict = Dictionary::Parse(bytes);
  ASSERT_TRUE(dict.has_value());
  EXPECT_EQ(dict->events().size(), test::RealisticEvents().size());
}

TEST(DictionaryTest, SurvivesEverySingleByteCorruption) {
  // Not a substitute for the fuzzer, but runs in every unit build: each
  // byte set to a few nasty values must parse or fail, never crash, and
  // whatever parses must format without reading outside the payload.
  const std::vector<uint8_t> good = Realistic();
  const std::vector<uint8_t> payload(40, 0xff);
  size_t parsed = 0;
  for (size_t i = 0; i < good.size(); i++) {
    for (const uint8_t v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::vector<uint8_t> bytes = good;
      bytes[i] = v;
      std::string error;
      const auto dict = Dictionary::Parse(bytes, &error);
      if (!dict) {
        EXPECT_FALSE(error.empty());
        continue;
      }
      parsed++;
      for (const EventDesc& event : dict->events()) {
        for (size_t n : {size_t{0}, size_t{7}, payload.size()}) {
          FormatEvent(event, std::span(payload).first(n));
          for (size_t f = 0; f < event.fields.size(); f++)
            FieldValue(event, f, std::span(payload).first(n));
        }
      }
    }
  }
  EXPECT_GT(parsed, 0u);  // e.g. changed pair ids and value numbers
}

}  // namespace
}  // namespace hmbtrace
