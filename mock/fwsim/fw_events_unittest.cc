// SPDX-License-Identifier: GPL-2.0-only
#include "fwsim_events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "decode_test_util.h"
#include "fwsim.h"
#include "hmb_trace_producer.h"

// The hand-written tables the reference SSD (mock/qemu-nvme) compiled
// before fwsim_events.def (testdata/fw_events.c, renamed by meson.build):
// the dictionary the declarations must publish unchanged.
extern "C" {
extern const hmb_trace_event_desc fw_events_reference[];
extern const uint16_t fw_nr_events_reference;
}

namespace hmbtrace {
namespace {

// Where @offset falls: "event <name>, byte <n> of its entry".
std::string WhereInDictionary(const std::vector<uint8_t>& dict, size_t offset) {
  size_t entry = sizeof(hmb_trace_dict_header);
  while (entry + sizeof(hmb_trace_dict_event) <= dict.size()) {
    uint32_t len;
    std::memcpy(&len, &dict[entry + offsetof(hmb_trace_dict_event, entry_len)],
                sizeof(len));
    if (len == 0 || offset < entry + len) {
      const char* name = reinterpret_cast<const char*>(
          &dict[entry + offsetof(hmb_trace_dict_event, name)]);
      return "event " + std::string(name, strnlen(name, HMB_TRACE_NAME_LEN)) +
             ", byte " + std::to_string(offset - entry) + " of its entry";
    }
    entry += len;
  }
  return offset < entry ? "the dictionary header" : "past the last entry";
}

// hmb-fwsim declares its events (fwsim_events.def); the reference SSD still
// compiles the hand-written tables. Both publish one dictionary, to the byte
// (and so hash to one build id: FwEventsBuildId() reads only what the
// dictionary carries).
TEST(FwEventsTest, DictionaryIsTheReferenceSsdsByteForByte) {
  const std::vector<uint8_t> reference =
      test::ProduceDictionary({fw_events_reference, fw_nr_events_reference});
  const std::vector<uint8_t> declared =
      test::ProduceDictionary({fw_events, fw_nr_events});
  ASSERT_GT(reference.size(), sizeof(hmb_trace_dict_header));
  ASSERT_FALSE(declared.empty());
  const size_t common = std::min(reference.size(), declared.size());
  for (size_t i = 0; i < common; i++) {
    ASSERT_EQ(declared[i], reference[i])
        << "first difference at dictionary byte " << i << ": "
        << WhereInDictionary(reference, i);
  }
  EXPECT_EQ(declared.size(), reference.size());
}

size_t FixedPayloadSize(uint16_t id) {
  switch (id) {
    case FW_EV_CMD_FETCH:
      return sizeof(fw_cmd_fetch);
    case FW_EV_CMD_COMPLETE:
      return sizeof(fw_cmd_complete);
    case FW_EV_NAND_READ:
    case FW_EV_NAND_PROGRAM:
      return sizeof(fw_nand_op);
    case FW_EV_NAND_ERASE:
      return sizeof(fw_nand_erase);
    case FW_EV_GC_BEGIN:
      return sizeof(fw_gc_begin);
    case FW_EV_GC_END:
      return sizeof(fw_gc_end);
    case FW_EV_THERMAL:
      return sizeof(fw_thermal);
    case FW_EV_ERROR:
      return sizeof(fw_error);
    case FW_EV_LOG:
      return sizeof(fw_log);
    case FW_EV_HMB_ECHO:
      return sizeof(fw_hmb_echo);
  }
  return 0;
}

// printf conversions, "%%" excluded.
size_t CountConversions(const char* format) {
  size_t n = 0;
  for (const char* p = format; *p; p++) {
    if (*p != '%')
      continue;
    if (p[1] == '%') {
      p++;
      continue;
    }
    n++;
  }
  return n;
}

TEST(FwEventsTest, ProducerInitAcceptsTheTable) {
  std::vector<uint64_t> buf((256u << 10) / 8);
  hmb_trace_producer_config cfg{};
  cfg.page_size = 4096;
  cfg.nr_cores = 4;
  cfg.clock_hz = 1000000000;
  cfg.nr_events = fw_nr_events;
  cfg.events = fw_events;
  hmb_trace_producer producer{};
  EXPECT_EQ(
      hmb_trace_producer_init(&producer, buf.data(), buf.size() * 8, &cfg), 0);
}

TEST(FwEventsTest, IdsAreTheRegistryInOrderAndUnique) {
  ASSERT_EQ(fw_nr_events, FW_EV_NR_IDS - 1);
  std::set<std::string> names;
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    EXPECT_EQ(fw_events[i].id, i + 1);
    EXPECT_EQ(fw_event_by_id(fw_events[i].id), &fw_events[i]);
    EXPECT_TRUE(names.insert(fw_events[i].name).second) << fw_events[i].name;
    EXPECT_LT(std::strlen(fw_events[i].name), HMB_TRACE_NAME_LEN);
  }
  EXPECT_EQ(fw_event_by_id(0), nullptr);
  EXPECT_EQ(fw_event_by_id(FW_EV_NR_IDS), nullptr);
}

TEST(FwEventsTest, FieldsCoverThePackedPayloadInOrder) {
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    const hmb_trace_event_desc& ev = fw_events[i];
    SCOPED_TRACE(ev.name);
    const size_t size = FixedPayloadSize(ev.id);
    ASSERT_GT(size, 0u);
    size_t next = 0;
    for (uint16_t f = 0; f < ev.nr_fields; f++) {
      const hmb_trace_field_desc& fd = ev.fields[f];
      EXPECT_EQ(fd.offset, next) << fd.name;
      EXPECT_LT(std::strlen(fd.name), HMB_TRACE_FIELD_NAME_LEN);
      if (fd.type == HMB_TRACE_TYPE_BYTES) {
        EXPECT_EQ(fd.size, 0) << "only a trailing BYTES field has no size";
        EXPECT_EQ(f, ev.nr_fields - 1);
      }
      next = fd.offset + fd.size;
      EXPECT_EQ(fd.nr_values != 0, fd.display == HMB_TRACE_DISPLAY_ENUM ||
                                       fd.display == HMB_TRACE_DISPLAY_FLAGS)
          << fd.name;
    }
    EXPECT_EQ(next, size);
  }
}

TEST(FwEventsTest, FormatHasOneConversionPerField) {
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    EXPECT_EQ(CountConversions(fw_events[i].format), fw_events[i].nr_fields)
        << fw_events[i].name << ": " << fw_events[i].format;
    EXPECT_LT(std::strlen(fw_events[i].format), HMB_TRACE_FORMAT_LEN);
  }
}

TEST(FwEventsTest, RolesNameValidFieldsAndPartners) {
  auto valid = [](const hmb_trace_event_desc& ev, uint8_t field) {
    return field == HMB_TRACE_NO_FIELD || field < ev.nr_fields;
  };
  for (uint16_t i = 0; i < fw_nr_events; i++) {
    const hmb_trace_event_desc& ev = fw_events[i];
    SCOPED_TRACE(ev.name);
    EXPECT_TRUE(valid(ev, ev.key_field));
    EXPECT_TRUE(valid(ev, ev.latency_field));
    EXPECT_TRUE(valid(ev, ev.qid_field));
    EXPECT_TRUE(valid(ev, ev.cid_field));
    EXPECT_TRUE(valid(ev, ev.value_field));
    if (ev.role == HMB_TRACE_ROLE_BEGIN || ev.role == HMB_TRACE_ROLE_END) {
      const hmb_trace_event_desc* partner = fw_event_by_id(ev.pair_id);
      ASSERT_NE(partner, nullptr);
      EXPECT_EQ(partner->pair_id, ev.id);
      EXPECT_NE(partner->role, ev.role);
      ASSERT_NE(ev.key_field, HMB_TRACE_NO_FIELD);
      EXPECT_STREQ(ev.fields[ev.key_field].name,
                   partner->fields[partner->key_field].name);
    } else {
      EXPECT_EQ(ev.pair_id, 0);
    }
    if (ev.role == HMB_TRACE_ROLE_COUNTER) {
      EXPECT_NE(ev.value_field, HMB_TRACE_NO_FIELD);
    }
  }
  const hmb_trace_event_desc* complete = fw_event_by_id(FW_EV_CMD_COMPLETE);
  EXPECT_STREQ(complete->fields[complete->qid_field].name, "qid");
  EXPECT_STREQ(complete->fields[complete->cid_field].name, "cid");
  EXPECT_STREQ(complete->fields[complete->key_field].name, "cid");
  EXPECT_STREQ(complete->fields[complete->latency_field].name, "latency");
}

TEST(FwEventsTest, BuildIdIsStableAndNotZero) {
  const auto a = FwEventsBuildId();
  EXPECT_EQ(a, FwEventsBuildId());
  EXPECT_NE(a, (std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN>{}));
}

}  // namespace
}  // namespace hmbtrace
