// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the reference producer: the bytes it leaves in the area are
// what the ABI says, and it refuses what it cannot store.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <memory>
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

// A firmware that embeds the dictionary its events serialise to, and
// inits without the serializer, publishes the same area byte for byte.
TEST(Producer, InitBlobPublishesWhatTheSerializerDoes) {
  hmb_trace_producer_config cfg = Config(4096, 4, 2);
  const uint64_t len = hmb_trace_area_size(&cfg);
  Area serialised(len), blob(len);
  hmb_trace_producer p{};
  ASSERT_EQ(hmb_trace_producer_init(&p, serialised.bytes.data(), len, &cfg), 0);
  const uint32_t total = serialised.At<uint32_t>(4096 + 8);
  const std::vector<uint8_t> dict(serialised.bytes.begin() + 4096,
                                  serialised.bytes.begin() + 4096 + total);
  hmb_trace_producer_config bcfg = cfg;
  bcfg.dict_blob = dict.data();
  bcfg.dict_blob_len = static_cast<uint32_t>(dict.size());
  // The events go in the blob: init_blob has no serializer for cfg.events.
  EXPECT_EQ(hmb_trace_producer_init_blob(&p, blob.bytes.data(), len, &bcfg), HMB_TRACE_EINVAL);
  EXPECT_EQ(blob.At<uint32_t>(0), 0xeeeeeeeeu);  // refused before the area is touched
  bcfg.nr_events = 0;
  bcfg.events = nullptr;
  ASSERT_EQ(hmb_trace_area_size(&bcfg), len);
  ASSERT_EQ(hmb_trace_producer_init_blob(&p, blob.bytes.data(), len, &bcfg), 0);
  EXPECT_EQ(blob.bytes, serialised.bytes);
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


// ---- The freeze (ABI 1.1) ----

constexpr size_t kFreezeWord = offsetof(hmb_trace_meta, freeze);

uint64_t FreezeSeq(const Area& a, uint16_t core) {
  return a.At<uint64_t>(sizeof(hmb_trace_meta) + core * sizeof(hmb_trace_core) +
                        offsetof(hmb_trace_core, freeze_seq));
}

uint64_t NextSeq(const Area& a, uint16_t core) {
  return a.At<uint64_t>(sizeof(hmb_trace_meta) + core * sizeof(hmb_trace_core) +
                        offsetof(hmb_trace_core, next_seq));
}

struct Frozen : ::testing::Test {
  void SetUp() override {
    cfg = Config(512, 8, 2);
    a = std::make_unique<Area>(hmb_trace_area_size(&cfg));
    ASSERT_EQ(hmb_trace_producer_init(&p, a->bytes.data(), a->bytes.size(), &cfg), 0);
  }
  int Emit(uint16_t core, uint64_t ts) {
    const uint8_t fixed[3] = {1, 2, 3};
    return hmb_trace_emit(&p, core, 7, ts, fixed, 3, nullptr, 0);
  }
  uint32_t Word() const { return a->At<uint32_t>(kFreezeWord); }
  hmb_trace_producer_config cfg{};
  std::unique_ptr<Area> a;
  hmb_trace_producer p{};
};

TEST_F(Frozen, InitAdvertisesTheFreezeAndStartsRunning) {
  EXPECT_EQ(a->At<uint16_t>(offsetof(hmb_trace_meta, abi_minor)), 2u);
  EXPECT_EQ(a->At<uint32_t>(offsetof(hmb_trace_meta, flags)),
            HMB_TRACE_META_OVERWRITE | HMB_TRACE_META_FREEZE);
  EXPECT_EQ(Word(), 0u);
  EXPECT_EQ(a->At<uint16_t>(offsetof(hmb_trace_meta, freeze_core)), 0xffffu);
}

TEST_F(Frozen, UnarmedFirmwareIgnoresLatencyAndAssert) {
  EXPECT_EQ(hmb_trace_freeze_latency(&p, 0, 1u << 30, 5, 10), HMB_TRACE_FROZEN);
  EXPECT_EQ(hmb_trace_freeze(&p, 0, HMB_TRACE_FREEZE_ASSERT, 1, 10), HMB_TRACE_FROZEN);
  EXPECT_EQ(hmb_trace_freeze(&p, 0, 77, 1, 10), HMB_TRACE_EINVAL);
  EXPECT_EQ(Word(), 0u);
  EXPECT_EQ(Emit(0, 20), 0);
}

TEST_F(Frozen, LatencyOutlierWritesNMorePerCoreThenStops) {
  hmb_trace_freeze_config(&p, 1000, 3);
  for (uint64_t t = 0; t < 100; t++) ASSERT_EQ(Emit(t % 2, t), 0);
  EXPECT_EQ(hmb_trace_freeze_latency(&p, 1, 999, 0x10005, 100), HMB_TRACE_FROZEN);
  EXPECT_EQ(Word(), 0u);  // under the threshold
  ASSERT_EQ(hmb_trace_freeze_latency(&p, 1, 1000, 0x10005, 100), 0);
  EXPECT_EQ(Word(), HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_TRIGGERED,
                                          HMB_TRACE_FREEZE_LATENCY, 1));
  EXPECT_EQ(a->At<uint16_t>(offsetof(hmb_trace_meta, freeze_core)), 1u);
  EXPECT_EQ(a->At<uint64_t>(offsetof(hmb_trace_meta, freeze_ts)), 100u);
  EXPECT_EQ(a->At<uint64_t>(offsetof(hmb_trace_meta, freeze_detail)), 0x10005u);
  EXPECT_EQ(FreezeSeq(*a, 0), 50u);
  EXPECT_EQ(FreezeSeq(*a, 1), 50u);
  // A second trigger while one is under way changes nothing.
  EXPECT_EQ(hmb_trace_freeze(&p, 0, HMB_TRACE_FREEZE_HOST, 0, 101), HMB_TRACE_FROZEN);
  // Core 0 writes its 3 and is refused after; not frozen until core 1 is done.
  for (int i = 0; i < 3; i++) EXPECT_EQ(Emit(0, 110 + i), 0);
  EXPECT_EQ(Emit(0, 120), HMB_TRACE_FROZEN);
  EXPECT_EQ(NextSeq(*a, 0), 53u);
  EXPECT_EQ(HMB_TRACE_FREEZE_STATE(Word()), HMB_TRACE_FREEZE_TRIGGERED);
  for (int i = 0; i < 3; i++) EXPECT_EQ(Emit(1, 130 + i), 0);
  EXPECT_EQ(Word(), HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN,
                                          HMB_TRACE_FREEZE_LATENCY, 1));
  EXPECT_EQ(Emit(1, 140), HMB_TRACE_FROZEN);
  EXPECT_EQ(NextSeq(*a, 1), 53u);
  // Refused records are neither sequenced nor counted as dropped.
  EXPECT_EQ(p.core[0].dropped, 0u);
}

TEST_F(Frozen, IdleCoreSettlesAfterATenthOfASecond) {
  hmb_trace_freeze_config(&p, 0, 2);
  ASSERT_EQ(hmb_trace_freeze(&p, 0, HMB_TRACE_FREEZE_ERROR, 42, 1000), 0);
  EXPECT_EQ(Emit(0, 1001), 0);
  EXPECT_EQ(Emit(0, 1002), 0);
  hmb_trace_freeze_tick(&p, 1000 + cfg.clock_hz / 10 - 1);
  EXPECT_EQ(HMB_TRACE_FREEZE_STATE(Word()), HMB_TRACE_FREEZE_TRIGGERED);
  hmb_trace_freeze_tick(&p, 1000 + cfg.clock_hz / 10);
  EXPECT_EQ(HMB_TRACE_FREEZE_STATE(Word()), HMB_TRACE_FREEZE_FROZEN);
  EXPECT_EQ(Emit(1, 2000), HMB_TRACE_FROZEN);  // the idle core stops too
}

TEST_F(Frozen, RearmResumesOverwritingAndKeepsTheCount) {
  ASSERT_EQ(hmb_trace_freeze(&p, 0xffff, HMB_TRACE_FREEZE_HOST, 9, 5), 0);
  EXPECT_EQ(Word(), HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN,  // N = 0
                                          HMB_TRACE_FREEZE_HOST, 1));
  EXPECT_EQ(Emit(0, 6), HMB_TRACE_FROZEN);
  EXPECT_EQ(hmb_trace_freeze_rearm(&p),
            HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN, HMB_TRACE_FREEZE_HOST, 1));
  EXPECT_EQ(Word(), HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_RUNNING, 0, 1));
  // Overwriting again: many rings' worth of records go in.
  for (uint64_t t = 0; t < 2000; t++) ASSERT_EQ(Emit(0, 10 + t), 0);
  ASSERT_EQ(hmb_trace_freeze(&p, 0, HMB_TRACE_FREEZE_HOST, 0, 3000), 0);
  EXPECT_EQ(HMB_TRACE_FREEZE_COUNT(Word()), 2u);
  EXPECT_EQ(FreezeSeq(*a, 0), 2000u);
}

TEST_F(Frozen, FirmwareResetForgetsTheFreeze) {
  hmb_trace_freeze_config(&p, 1, 1);
  ASSERT_EQ(hmb_trace_freeze(&p, 0, HMB_TRACE_FREEZE_ASSERT, 0, 5), 0);
  ASSERT_EQ(hmb_trace_producer_init(&p, a->bytes.data(), a->bytes.size(), &cfg), 0);
  EXPECT_EQ(Word(), 0u);
  EXPECT_EQ(Emit(0, 1), 0);
  EXPECT_EQ(hmb_trace_freeze(&p, 0, HMB_TRACE_FREEZE_ASSERT, 0, 5), HMB_TRACE_FROZEN);
}

TEST_F(Frozen, RingModeStopKeepsTheFirstRingAndIsTheSameFreeze) {
  ASSERT_EQ(hmb_trace_ring_mode(&p, 7), HMB_TRACE_EINVAL);
  ASSERT_EQ(hmb_trace_ring_mode(&p, HMB_CTRL_RING_STOP), 0);
  // 512-byte pages: 464 data bytes, 16-byte records: 29 per page, 8 pages.
  uint64_t t = 0;
  while (Emit(0, t) == 0) t++;
  EXPECT_EQ(t, 29u * 8);
  EXPECT_EQ(Word(), HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN,
                                          HMB_TRACE_FREEZE_RING_FULL, 1));
  EXPECT_EQ(FreezeSeq(*a, 0), 29u * 8);
  EXPECT_EQ(Emit(1, t), HMB_TRACE_FROZEN);  // every core stops
  // The first page is still page 0: nothing was overwritten.
  EXPECT_EQ(a->At<uint64_t>(cfg.page_size * 2), 0u);
  // OVERWRITE ends the mode and re-arms.
  ASSERT_EQ(hmb_trace_ring_mode(&p, HMB_CTRL_RING_OVERWRITE), 0);
  EXPECT_EQ(HMB_TRACE_FREEZE_STATE(Word()), HMB_TRACE_FREEZE_RUNNING);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(Emit(0, t + i), 0);
}

// The inline fast path (hmb_trace_reserve()), the general path alone
// (hmb_trace_reserve_slow()) and hmb_trace_emit() leave the same bytes.
enum class Path { kFast, kGeneral, kEmit };

int AppendBy(Path path, hmb_trace_producer* p, uint16_t core, uint16_t id,
             uint64_t ts, const uint8_t* data, uint32_t len) {
  if (path == Path::kEmit)
    return hmb_trace_emit(p, core, id, ts, data, len / 2, data + len / 2,
                          len - len / 2);
  hmb_trace_append a;
  int err;
  if (path == Path::kFast) {
    err = hmb_trace_reserve(p, core, id, ts, len, 0, &a);
  } else {
    err = hmb_trace_reserve_slow(p, core, id, ts, len, 0);
    if (!err) hmb_trace_append_load(&p->core[core], HMB_TRACE_RECORD_SIZE(len), &a);
  }
  if (err) return err;
  if (len)  // (data is null for an empty payload)
    std::memcpy(hmb_trace_payload(&a), data, len);
  return hmb_trace_commit(p, core, &a);
}

struct Expected {
  uint16_t id;
  uint64_t ts;
  std::vector<uint8_t> payload;
};

// Records of sizes 0..128 on two cores, three times over: page switches
// for room, for a timestamp 2^32 ticks on, and for one that goes back.
std::vector<Expected> AppendAll(Path path, hmb_trace_producer* p) {
  std::vector<Expected> core0;
  uint64_t ts = 1000;
  for (int round = 0; round < 3; round++) {
    for (uint32_t len = 0; len <= 128; len++) {
      std::vector<uint8_t> data(len);
      for (uint32_t i = 0; i < len; i++) data[i] = static_cast<uint8_t>(len * 7 + i + 1);
      ts += len % 5;
      if (round == 1 && len == 64) ts += (1ull << 32) + 5;
      const uint64_t t = round == 2 && len == 100 ? ts - 50 : ts;
      const uint16_t id = static_cast<uint16_t>(1 + len % 3);
      EXPECT_EQ(AppendBy(path, p, 0, id, t, data.data(), len), 0);
      EXPECT_EQ(AppendBy(path, p, 1, id, t, data.data(), len), 0);
      core0.push_back({id, t, data});
    }
  }
  return core0;
}

TEST(Producer, FastPathWritesWhatTheGeneralPathWrites) {
  hmb_trace_producer_config cfg = Config(4096, 16, 2);
  Area fast(hmb_trace_area_size(&cfg)), general(fast.bytes.size()), emit(fast.bytes.size());
  hmb_trace_producer pf{}, pg{}, pe{};
  ASSERT_EQ(hmb_trace_producer_init(&pf, fast.bytes.data(), fast.bytes.size(), &cfg), 0);
  ASSERT_EQ(hmb_trace_producer_init(&pg, general.bytes.data(), general.bytes.size(), &cfg), 0);
  ASSERT_EQ(hmb_trace_producer_init(&pe, emit.bytes.data(), emit.bytes.size(), &cfg), 0);
  const std::vector<Expected> want = AppendAll(Path::kFast, &pf);
  AppendAll(Path::kGeneral, &pg);
  AppendAll(Path::kEmit, &pe);
  EXPECT_TRUE(fast.bytes == general.bytes);
  EXPECT_TRUE(fast.bytes == emit.bytes);
  for (int c = 0; c < 2; c++) {
    EXPECT_EQ(pf.core[c].next_seq, pg.core[c].next_seq);
    EXPECT_EQ(pf.core[c].records, pg.core[c].records);
    EXPECT_EQ(pf.core[c].bytes, pg.core[c].bytes);
  }

  // And those bytes are the ABI's: walk core 0's pages (none overwritten).
  const size_t ring = 2 * 4096;
  size_t k = 0;
  for (uint64_t pg_seq = 0; pg_seq <= pf.core[0].page_seq; pg_seq++) {
    const size_t page = ring + pg_seq * 4096;
    const uint32_t commit = fast.At<uint32_t>(page + 24);
    EXPECT_EQ(fast.At<uint64_t>(page), pg_seq);
    EXPECT_EQ(fast.At<uint64_t>(page + 8), k);  // first_seq
    const uint64_t base = fast.At<uint64_t>(page + 16);
    size_t off = 48;
    for (uint32_t r = 0; r < HMB_TRACE_COMMIT_RECORDS(commit); r++, k++) {
      ASSERT_LT(k, want.size());
      const Expected& e = want[k];
      const uint32_t len = static_cast<uint32_t>(e.payload.size());
      EXPECT_EQ(fast.At<uint16_t>(page + off), e.id) << k;
      EXPECT_EQ(fast.At<uint16_t>(page + off + 2), len) << k;
      EXPECT_EQ(base + fast.At<uint32_t>(page + off + 4), e.ts) << k;
      if (len) {
        EXPECT_EQ(0, std::memcmp(&fast.bytes[page + off + 8], e.payload.data(), len)) << k;
      }
      for (uint32_t i = len; i < ((len + 7) & ~7u); i++)
        EXPECT_EQ(fast.At<uint8_t>(page + off + 8 + i), 0) << k;  // padding
      off += HMB_TRACE_RECORD_SIZE(len);
    }
    EXPECT_EQ(HMB_TRACE_COMMIT_BYTES(commit), off - 48);
  }
  EXPECT_EQ(k, want.size());
  EXPECT_GT(pf.core[0].page_seq, 4u);
}

}  // namespace
