// SPDX-License-Identifier: GPL-2.0-only
#include "stat/open_spans.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

namespace hmbtrace {
namespace {

// What stat counts of spans (ends without a begin, begins reopened, the
// latency from a begin to its end, begins left open) rests on the table
// answering as a map would: many spans, few distinct keys, so that probe
// runs collide, wrap around and are shifted back on every removal.
TEST(OpenSpans, AnswersAsAMapThroughCollisionsAndRemovals) {
  OpenSpans spans;
  std::map<std::tuple<uint16_t, uint64_t, uint64_t>, uint64_t> model;
  std::mt19937_64 rng(36);
  for (int step = 0; step < 200000; step++) {
    const uint16_t id = static_cast<uint16_t>(rng() % 3);
    const uint64_t key = rng() % 97;
    const uint64_t qid = rng() % 5;
    const uint64_t ts = rng();
    ASSERT_EQ(spans.Contains(id, key, qid), model.count({id, key, qid}) != 0) << "step " << step;
    if (rng() % 2) {
      const bool fresh = model.find({id, key, qid}) == model.end();
      model[{id, key, qid}] = ts;
      ASSERT_EQ(spans.Open(id, key, qid, ts), fresh) << "step " << step;
    } else {
      auto it = model.find({id, key, qid});
      uint64_t got = 0;
      ASSERT_EQ(spans.Close(id, key, qid, &got), it != model.end()) << "step " << step;
      if (it != model.end()) {
        EXPECT_EQ(got, it->second) << "step " << step;
        model.erase(it);
      }
    }
    ASSERT_EQ(spans.size(), model.size()) << "step " << step;
  }
  spans.clear();
  uint64_t got = 0;
  EXPECT_EQ(spans.size(), 0u);
  EXPECT_FALSE(spans.Close(0, 0, 0, &got));
  EXPECT_TRUE(spans.Open(0, 0, 0, 1));
}

}  // namespace
}  // namespace hmbtrace
