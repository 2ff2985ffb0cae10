// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of hmb_trace_declare.h, on the worked example of the ABI
// spec (hmb_trace_declare_example.def): the dictionary entries its
// declarations make (the example's table is created in C,
// hmb_trace_declare_example.c), and the records its emitters write (they
// expand here, in C++).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hmb_trace_declare_example.h"

namespace {

const hmb_trace_event_desc* Event(uint16_t id) {
  for (uint16_t i = 0; i < ex_nr_events; i++)
    if (ex_events[i].id == id)
      return &ex_events[i];
  return nullptr;
}

TEST(Declare, EventsInDeclarationOrderWithNamesAndFormats) {
  ASSERT_EQ(ex_nr_events, 6);
  const char* const names[] = {"read_start", "read_done", "l1_cache",
                               "l2_cache", "queue_depth", "media_error"};
  for (uint16_t i = 0; i < ex_nr_events; i++) {
    EXPECT_EQ(ex_events[i].id, i + 1);
    EXPECT_STREQ(ex_events[i].name, names[i]);
  }
  EXPECT_STREQ(Event(EX_EV_READ_START)->format, "qid=%u cid=%u lba=%#x");
}

TEST(Declare, FieldsAreThePackedPayloadInOrder) {
  const hmb_trace_event_desc* ev = Event(EX_EV_READ_START);
  ASSERT_EQ(ev->nr_fields, 3);
  const struct {
    const char* name;
    uint16_t offset, size;
    uint8_t type, display;
  } want[] = {{"qid", 0, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC},
              {"cid", 2, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC},
              {"lba", 4, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_HEX}};
  for (int f = 0; f < 3; f++) {
    SCOPED_TRACE(want[f].name);
    EXPECT_STREQ(ev->fields[f].name, want[f].name);
    EXPECT_EQ(ev->fields[f].offset, want[f].offset);
    EXPECT_EQ(ev->fields[f].size, want[f].size);
    EXPECT_EQ(ev->fields[f].type, want[f].type);
    EXPECT_EQ(ev->fields[f].display, want[f].display);
    EXPECT_EQ(ev->fields[f].nr_values, 0);
  }
  EXPECT_EQ(sizeof(ex_read_start), 8u);
  EXPECT_EQ(sizeof(ex_queue_depth), 5u);

  // A fixed string has its length; the tail starts after the struct, size 0.
  const hmb_trace_event_desc* err = Event(EX_EV_MEDIA_ERROR);
  ASSERT_EQ(err->nr_fields, 3);
  EXPECT_EQ(err->fields[1].type, HMB_TRACE_TYPE_STRING);
  EXPECT_EQ(err->fields[1].offset, 1);
  EXPECT_EQ(err->fields[1].size, 16);
  EXPECT_EQ(err->fields[2].type, HMB_TRACE_TYPE_BYTES);
  EXPECT_EQ(err->fields[2].offset, sizeof(ex_media_error));
  EXPECT_EQ(err->fields[2].size, 0);
  EXPECT_EQ(err->fields[2].display, HMB_TRACE_DISPLAY_HEX);
}

TEST(Declare, ValueTablesNameTheirValues) {
  const hmb_trace_field_desc& op = Event(EX_EV_L1_CACHE)->fields[0];
  EXPECT_EQ(op.display, HMB_TRACE_DISPLAY_ENUM);
  ASSERT_EQ(op.nr_values, 3);
  EXPECT_EQ(op.values[2].value, EX_CACHE_EVICT);
  EXPECT_STREQ(op.values[2].name, "evict");
  const hmb_trace_field_desc& flags = Event(EX_EV_MEDIA_ERROR)->fields[0];
  EXPECT_EQ(flags.display, HMB_TRACE_DISPLAY_FLAGS);
  ASSERT_EQ(flags.nr_values, 3);
  EXPECT_EQ(flags.values[1].value, EX_MEDIA_F_SOFT_ECC);
  EXPECT_STREQ(flags.values[1].name, "soft_ecc");
}

TEST(Declare, RolesNameTheirFieldsByIndex) {
  const hmb_trace_event_desc* start = Event(EX_EV_READ_START);
  EXPECT_EQ(start->role, HMB_TRACE_ROLE_BEGIN);
  EXPECT_EQ(start->pair_id, EX_EV_READ_DONE);
  EXPECT_EQ(start->key_field, 1);  // cid
  EXPECT_EQ(start->qid_field, 0);
  EXPECT_EQ(start->cid_field, 1);
  EXPECT_EQ(start->latency_field, HMB_TRACE_NO_FIELD);
  EXPECT_EQ(start->value_field, HMB_TRACE_NO_FIELD);
  const hmb_trace_event_desc* done = Event(EX_EV_READ_DONE);
  EXPECT_EQ(done->role, HMB_TRACE_ROLE_END);
  EXPECT_EQ(done->pair_id, EX_EV_READ_START);
  EXPECT_EQ(done->latency_field, 2);
  const hmb_trace_event_desc* depth = Event(EX_EV_QUEUE_DEPTH);
  EXPECT_EQ(depth->role, HMB_TRACE_ROLE_COUNTER);
  EXPECT_EQ(depth->value_field, 1);
  EXPECT_EQ(depth->key_field, HMB_TRACE_NO_FIELD);
  // The events of a class share its fields and format.
  const hmb_trace_event_desc* l1 = Event(EX_EV_L1_CACHE);
  const hmb_trace_event_desc* l2 = Event(EX_EV_L2_CACHE);
  EXPECT_EQ(l1->role, HMB_TRACE_ROLE_INSTANT);
  EXPECT_EQ(l1->fields, l2->fields);
  EXPECT_EQ(l1->format, l2->format);
}

// The records the emitters append, as the ring holds them.
struct Record {
  uint16_t id;
  std::vector<uint8_t> payload;
};

std::vector<Record> Records(const hmb_trace_producer& p) {
  std::vector<Record> out;
  const uint8_t* page = p.core[0].page;
  uint32_t off = sizeof(hmb_trace_page_header);
  for (uint32_t r = 0; r < p.core[0].records; r++) {
    hmb_trace_record_header h;
    std::memcpy(&h, page + off, sizeof(h));
    const uint8_t* payload = page + off + sizeof(h);
    out.push_back({h.event_id, {payload, payload + h.len}});
    off += (sizeof(h) + h.len + HMB_TRACE_RECORD_ALIGN - 1) &
           ~(HMB_TRACE_RECORD_ALIGN - 1);
  }
  return out;
}

// One core's area with the example's dictionary (not zeroed: padding and
// string bytes must be written).
class ExampleArea : public ::testing::Test {
 protected:
  void SetUp() override {
    hmb_trace_producer_config cfg{};
    cfg.page_size = 4096;
    cfg.pages_per_core = 4;
    cfg.nr_cores = 1;
    cfg.clock_hz = 1000000000;
    cfg.nr_events = ex_nr_events;
    cfg.events = ex_events;
    area_.assign(hmb_trace_area_size(&cfg), 0xee);
    ASSERT_EQ(hmb_trace_producer_init(&p_, area_.data(), area_.size(), &cfg), 0);
  }
  std::vector<uint8_t> area_;
  hmb_trace_producer p_{};
};

TEST_F(ExampleArea, EmittersPackTheirArgumentsLittleEndian) {
  hmb_trace_producer& p = p_;

  const uint8_t dump[] = {0xde, 0xad, 0xbe};
  EXPECT_EQ(ex_trace_read_start(&p, 0, 10, 0x0102, 0x0304, 0x0a0b0c0d), 0);
  EXPECT_EQ(ex_emit_cache(&p, 0, EX_EV_L2_CACHE, 11, EX_CACHE_MISS, 0x40), 0);
  EXPECT_EQ(ex_trace_queue_depth(&p, 0, 12, 7, -2), 0);
  EXPECT_EQ(ex_trace_media_error(&p, 0, 13,
                                 EX_MEDIA_F_RETRY | EX_MEDIA_F_FATAL,
                                 "a string longer than its field", dump,
                                 sizeof(dump)),
            0);

  const std::vector<Record> recs = Records(p);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].id, EX_EV_READ_START);
  EXPECT_EQ(recs[0].payload,
            (std::vector<uint8_t>{0x02, 0x01, 0x04, 0x03, 0x0d, 0x0c, 0x0b, 0x0a}));
  EXPECT_EQ(recs[1].id, EX_EV_L2_CACHE);
  EXPECT_EQ(recs[1].payload, (std::vector<uint8_t>{1, 0x40, 0, 0, 0}));
  EXPECT_EQ(recs[2].id, EX_EV_QUEUE_DEPTH);
  EXPECT_EQ(recs[2].payload, (std::vector<uint8_t>{7, 0xfe, 0xff, 0xff, 0xff}));
  EXPECT_EQ(recs[3].id, EX_EV_MEDIA_ERROR);
  // flags, 15 bytes of the string and its NUL, then the tail.
  const std::string want = std::string("\x05") +
                           std::string("a string longer than its field", 15) +
                           std::string(1, '\0') + "\xde\xad\xbe";
  EXPECT_EQ(recs[3].payload, std::vector<uint8_t>(want.begin(), want.end()));
}

TEST_F(ExampleArea, ShortStringIsNulPadded) {
  hmb_trace_producer& p = p_;
  ASSERT_EQ(ex_trace_media_error(&p, 0, 1, 0, "nand", nullptr, 0), 0);
  const std::vector<Record> recs = Records(p);
  ASSERT_EQ(recs.size(), 1u);
  std::vector<uint8_t> want(17, 0);
  std::memcpy(&want[1], "nand", 4);
  EXPECT_EQ(recs[0].payload, want);
}

}  // namespace
