// SPDX-License-Identifier: GPL-2.0-only

#include "decode_c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "decode_test_util.h"

namespace hmbtrace {
namespace {

struct DictFree {
  void operator()(hmb_dict* d) const { hmb_dict_free(d); }
};
using DictPtr = std::unique_ptr<hmb_dict, DictFree>;

DictPtr ParseRealistic() {
  const std::vector<uint8_t> bytes =
      test::ProduceDictionary(test::RealisticEvents());
  char err[128] = "stale";
  DictPtr dict(hmb_dict_parse(bytes.data(), bytes.size(), err, sizeof(err)));
  EXPECT_NE(dict, nullptr) << err;
  EXPECT_STREQ(err, "");  // cleared on success
  return dict;
}

TEST(DecodeCTest, ParseReportsErrorsIntoCallerBuffer) {
  std::vector<uint8_t> bytes = test::ProduceDictionary(test::RealisticEvents());
  test::Put16(bytes, sizeof(hmb_trace_dict_header), 0);  // event #0 id
  char err[128];
  EXPECT_EQ(hmb_dict_parse(bytes.data(), bytes.size(), err, sizeof(err)),
            nullptr);
  EXPECT_STREQ(err, "event #0 (id 0): id 0 is reserved");

  // Truncated to the caller's buffer, always NUL-terminated.
  char tiny[8];
  EXPECT_EQ(hmb_dict_parse(bytes.data(), bytes.size(), tiny, sizeof(tiny)),
            nullptr);
  EXPECT_STREQ(tiny, "event #");

  // No error buffer at all is fine too.
  EXPECT_EQ(hmb_dict_parse(bytes.data(), bytes.size(), nullptr, 0), nullptr);
  EXPECT_EQ(hmb_dict_parse(nullptr, 16, err, sizeof(err)), nullptr);
  EXPECT_STREQ(err, "dictionary: NULL buffer");
}

TEST(DecodeCTest, FormatIsSnprintfLike) {
  DictPtr dict = ParseRealistic();
  ASSERT_NE(dict, nullptr);
  const uint8_t payload[4] = {0x10, 0x27, 0, 0};  // free = 10000
  const std::string want = "free=10000";

  char out[64];
  EXPECT_EQ(hmb_dict_format(dict.get(), test::kFreeBlocks, payload,
                            sizeof(payload), out, sizeof(out)),
            int(want.size()));
  EXPECT_EQ(out, want);

  // Too small: truncated and terminated, full length returned.
  char small[5];
  EXPECT_EQ(hmb_dict_format(dict.get(), test::kFreeBlocks, payload,
                            sizeof(payload), small, sizeof(small)),
            int(want.size()));
  EXPECT_STREQ(small, "free");

  // Size query.
  EXPECT_EQ(hmb_dict_format(dict.get(), test::kFreeBlocks, payload,
                            sizeof(payload), nullptr, 0),
            int(want.size()));
}

TEST(DecodeCTest, FormatHandlesUnknownEventsAndBadArguments) {
  DictPtr dict = ParseRealistic();
  ASSERT_NE(dict, nullptr);
  char out[64];
  EXPECT_GT(hmb_dict_format(dict.get(), 77, nullptr, 0, out, sizeof(out)), 0);
  EXPECT_STREQ(out, "unknown event 77 len=0 data=");
  EXPECT_EQ(hmb_dict_format(nullptr, 1, nullptr, 0, out, sizeof(out)), -1);
  EXPECT_EQ(hmb_dict_format(dict.get(), 1, nullptr, 4, out, sizeof(out)), -1);
}

TEST(DecodeCTest, EventNamesAndIteration) {
  DictPtr dict = ParseRealistic();
  ASSERT_NE(dict, nullptr);
  EXPECT_STREQ(hmb_dict_event_name(dict.get(), test::kCmdEnd), "nvme_cmd_end");
  EXPECT_EQ(hmb_dict_event_name(dict.get(), 999), nullptr);
  EXPECT_EQ(hmb_dict_event_name(nullptr, 1), nullptr);

  const auto events = test::RealisticEvents();
  ASSERT_EQ(hmb_dict_nr_events(dict.get()), events.size());
  for (size_t i = 0; i < events.size(); i++)
    EXPECT_EQ(hmb_dict_event_id(dict.get(), i), events[i].id);
  EXPECT_EQ(hmb_dict_event_id(dict.get(), events.size()), 0);
  EXPECT_EQ(hmb_dict_nr_events(nullptr), 0u);
  hmb_dict_free(nullptr);
}

}  // namespace
}  // namespace hmbtrace
