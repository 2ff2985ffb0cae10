// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the reference producer: the bytes it leaves in the area are
// what the ABI says, and it refuses what it cannot store.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hmb_trace_producer.h"

namespace {

struct Area {
  explicit Area(size_t n) : bytes(n, 0xee) {}
  std::vector<uint8_t> bytes;
  template <typename T>
  T At(size_t off) const {
    T v;
    std::memcpy(&v, bytes.data() + off, sizeof(v));
    return v;
  }
};

const hmb_trace_value_desc kOpcodes[] = {{1, "write"}, {2, "read"}};
const hmb_trace_field_desc kFields[] = {
    {"qid", 0, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"opc", 2, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_ENUM, 2, kOpcodes},
};
const hmb_trace_event_desc kEvents[] = {
    {7, HMB_TRACE_ROLE_INSTANT, HMB_TRACE_NO_FIELD, HMB_TRACE_NO_FIELD, 0,
     HMB_TRACE_NO_FIELD, HMB_TRACE_NO_FIELD, 0, "cmd", "qid=%u opc=%s", 2, kFields},
};

hmb_trace_producer_config Config(uint32_t page_size, uint32_t ppc, uint16_t cores) {
  hmb_trace_producer_config c{};
  c.page_size = page_size;
  c.pages_per_core = ppc;
  c.nr_cores = cores;
  c.clock_hz = 800000000;
  c.build_id[0] = 0xab;
  c.nr_events = 1;
  c.events = kEvents;
  return c;
}

TEST(Producer, InitWritesMetaDictionaryAndInvalidPages) {
  hmb_trace_producer_config cfg = Config(4096, 4, 2);
  const uint64_t len = hmb_trace_area_size(&cfg);
  ASSERT_EQ(len, 4096u + 4096u + 2 * 4 * 4096u);
  Area a(len);
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), len, &cfg), 0);
  EXPECT_EQ(a.At<uint32_t>(0), HMB_TRACE_MAGIC);
  EXPECT_EQ(a.At<uint32_t>(12), HMB_TRACE_STATE_READY);
  EXPECT_EQ(a.At<uint32_t>(16), 1u);  // first generation
  EXPECT_EQ(a.At<uint64_t>(56), 8192u);  // ring offset
  EXPECT_EQ(a.At<uint64_t>(64), 800000000u);
  EXPECT_EQ(a.At<uint8_t>(72), 0xab);
  EXPECT_EQ(a.At<uint64_t>(128), ~0ull);  // core 0 head: no page yet
  EXPECT_EQ(a.At<uint32_t>(128 + 40), 0u);  // no previous generation
  // Dictionary: header, then the event entry with its fields and values.
  EXPECT_EQ(a.At<uint32_t>(4096), HMB_TRACE_DICT_MAGIC);
  EXPECT_EQ(a.At<uint16_t>(4096 + 6), 1u);
  EXPECT_EQ(a.At<uint32_t>(4096 + 8), 16u + 144u + 2 * 32u + 2 * 32u);
  EXPECT_EQ(a.At<uint16_t>(4096 + 16), 7u);
  EXPECT_STREQ(reinterpret_cast<const char*>(&a.bytes[4096 + 16 + 16]), "cmd");
  EXPECT_STREQ(reinterpret_cast<const char*>(&a.bytes[4096 + 16 + 144 + 32 + 64 + 8]), "read");
  // Every ring page header is BUSY until the producer opens it.
  for (int pg = 0; pg < 8; pg++)
    EXPECT_EQ(a.At<uint32_t>(8192 + pg * 4096 + 24), HMB_TRACE_COMMIT_BUSY);
}

TEST(Producer, EmitAppendsRecordAndPublishesCommit) {
  hmb_trace_producer_config cfg = Config(4096, 4, 1);
  Area a(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), 0);
  const uint8_t fixed[3] = {1, 2, 3}, var[2] = {9, 9};
  ASSERT_EQ(hmb_trace_emit(&p, 0, 7, 500, fixed, 3, var, 2), 0);
  ASSERT_EQ(hmb_trace_emit(&p, 0, 7, 510, fixed, 3, nullptr, 0), 0);
  const size_t pg = 8192;
  EXPECT_EQ(a.At<uint64_t>(pg + 0), 0u);    // page_seq
  EXPECT_EQ(a.At<uint64_t>(pg + 8), 0u);    // first_seq
  EXPECT_EQ(a.At<uint64_t>(pg + 16), 500u);  // base_ts
  EXPECT_EQ(a.At<uint32_t>(pg + 24), HMB_TRACE_COMMIT(2, 32));
  EXPECT_EQ(a.At<uint32_t>(pg + 32), HMB_TRACE_PAGE_FIRST);
  EXPECT_EQ(a.At<uint16_t>(pg + 48), 7u);
  EXPECT_EQ(a.At<uint16_t>(pg + 50), 5u);
  EXPECT_EQ(a.At<uint32_t>(pg + 52), 0u);
  EXPECT_EQ(a.At<uint8_t>(pg + 56 + 4), 9);
  EXPECT_EQ(a.At<uint8_t>(pg + 56 + 5), 0);  // padding is zero
  EXPECT_EQ(a.At<uint32_t>(pg + 64 + 4), 10u);  // second record's delta
  EXPECT_EQ(a.At<uint64_t>(128 + 8), 2u);       // core next_seq
}

TEST(Producer, FullRingOverwritesOldestPage) {
  hmb_trace_producer_config cfg = Config(512, 2, 1);
  Area a(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), 0);
  const uint32_t per_page = (512 - 48) / 16;
  for (uint32_t i = 0; i < per_page * 5; i++)
    ASSERT_EQ(hmb_trace_emit(&p, 0, 7, i, &i, 4, nullptr, 0), 0);
  // Pages 0..4 were opened; slot 0 holds page 4, slot 1 page 3 (closed).
  const size_t ring = a.bytes.size() - 2 * 512;
  EXPECT_EQ(a.At<uint64_t>(ring), 4u);
  EXPECT_EQ(a.At<uint64_t>(ring + 512), 3u);
  EXPECT_EQ(a.At<uint64_t>(ring + 512 + 8), 3u * per_page);
  EXPECT_EQ(a.At<uint32_t>(ring + 512 + 24),
            HMB_TRACE_COMMIT_CLOSED | HMB_TRACE_COMMIT(per_page, per_page * 16));
  EXPECT_EQ(a.At<uint64_t>(128), 4u);  // head_page
}

TEST(Producer, RefusesOversizeRecordsAndCountsThem) {
  hmb_trace_producer_config cfg = Config(512, 2, 1);
  Area a(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), 0);
  std::vector<uint8_t> big(1024);
  EXPECT_EQ(hmb_trace_max_payload(&p), 456u);
  EXPECT_EQ(hmb_trace_emit(&p, 0, 7, 0, big.data(), 457, nullptr, 0), HMB_TRACE_E2BIG);
  EXPECT_EQ(hmb_trace_emit(&p, 0, 7, 0, big.data(), 456, nullptr, 0), 0);
  EXPECT_EQ(hmb_trace_emit(&p, 0, 0, 0, big.data(), 4, nullptr, 0), HMB_TRACE_EINVAL);
  EXPECT_EQ(hmb_trace_emit(&p, 1, 7, 0, big.data(), 4, nullptr, 0), HMB_TRACE_EINVAL);
  EXPECT_EQ(a.At<uint64_t>(128 + 16), 2u);  // dropped
}

TEST(Producer, RejectsBadGeometry) {
  hmb_trace_producer p{};
  Area a(1 << 20);
  hmb_trace_producer_config cfg = Config(3000, 4, 1);
  EXPECT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), HMB_TRACE_EINVAL);
  cfg = Config(4096, 4, 0);
  EXPECT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), HMB_TRACE_EINVAL);
  cfg = Config(4096, 4, 33);
  EXPECT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), HMB_TRACE_EINVAL);
  cfg = Config(4096, 1000, 1);
  EXPECT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), HMB_TRACE_ENOSPC);
  cfg = Config(4096, 0, 2);  // as many pages as fit
  EXPECT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), 0);
  EXPECT_EQ(p.pages_per_core, ((1u << 20) - 8192) / 4096 / 2);
}

TEST(Producer, RejectsOverlongDictionaryNames) {
  static const hmb_trace_event_desc bad[] = {
      {9, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0, "a_name_that_is_much_longer_than_32_bytes", "", 0, nullptr}};
  hmb_trace_producer_config cfg = Config(4096, 4, 1);
  cfg.events = bad;
  Area a(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  EXPECT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), HMB_TRACE_EINVAL);
  EXPECT_EQ(a.At<uint32_t>(12), 0xeeeeeeeeu) << "a refused config must leave the area alone";
}

TEST(Producer, ReinitIncrementsGenerationAndInvalidatesPages) {
  hmb_trace_producer_config cfg = Config(4096, 4, 1);
  Area a(hmb_trace_area_size(&cfg));
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), 0);
  uint32_t x = 1;
  ASSERT_EQ(hmb_trace_emit(&p, 0, 7, 0, &x, 4, nullptr, 0), 0);
  ASSERT_EQ(hmb_trace_producer_init(&p, a.bytes.data(), a.bytes.size(), &cfg), 0);
  EXPECT_EQ(a.At<uint32_t>(16), 2u);
  EXPECT_EQ(a.At<uint64_t>(128 + 32), 1u);  // core 0: previous life's next_seq
  EXPECT_EQ(a.At<uint32_t>(128 + 40), 1u);  // ... of generation 1
  EXPECT_EQ(a.At<uint32_t>(8192 + 24), HMB_TRACE_COMMIT_BUSY);
  EXPECT_EQ(a.At<uint64_t>(8192), ~0ull);
}

}  // namespace
