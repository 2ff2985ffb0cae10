// SPDX-License-Identifier: GPL-2.0-only
//
// The one decoding policy: which dictionary decodes a record, across a
// firmware reset that brings a different build, as the module's events
// arrive in a trace (per-CPU buffers merged by host time). The C interface
// the plugin uses must give the same answers as the C++ one the tool uses.

#include "dictionary_set.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "decode_c.h"
#include "decode_test_util.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr BuildId kBuildA = {0xaa};
constexpr BuildId kBuildB = {0xbb};

// The second build renames every event: a decoder that picks the wrong
// generation's dictionary prints different names.
Bytes SecondBuildDictionary() {
  static std::vector<std::string> names;
  std::vector<hmb_trace_event_desc> events(test::RealisticEvents().begin(),
                                           test::RealisticEvents().end());
  names.clear();
  names.reserve(events.size());
  for (const auto& e : events)
    names.push_back(std::string(e.name) + "_b2");
  for (size_t i = 0; i < events.size(); i++)
    events[i].name = names[i].c_str();
  return test::ProduceDictionary(events);
}

// One event of a trace, fed to both interfaces.
struct Event {
  enum { kState, kChunk } kind;
  uint16_t dev;
  int cpu;
  uint8_t state;
  uint32_t gen;
  BuildId build_id;
  Bytes dict;  // kChunk: the whole dictionary, as one chunk
};

Event State(int cpu, uint8_t state, uint32_t gen, const BuildId& id) {
  return {Event::kState, 0, cpu, state, gen, id, {}};
}
Event Dict(int cpu, uint32_t gen, const BuildId& id, Bytes dict) {
  return {Event::kChunk, 0, cpu, 0, gen, id, std::move(dict)};
}

class Both {
 public:
  Both() : c_(hmb_dict_set_alloc()) {}
  ~Both() { hmb_dict_set_free(c_); }

  void Feed(const Event& e) {
    char msg[256];
    if (e.kind == Event::kState) {
      set_.AddState({e.dev, e.cpu, e.state, e.gen, e.build_id});
      hmb_dict_set_add_state(c_, e.dev, e.cpu, e.state, e.gen, e.build_id.data(), msg, sizeof(msg));
    } else {
      const auto total = static_cast<uint32_t>(e.dict.size());
      set_.AddChunk({e.dev, e.gen, e.build_id, total, 0, e.dict});
      const hmb_dict_chunk c = {e.dev, e.gen, e.build_id.data(), total, 0, e.dict.data(), total};
      hmb_dict_set_add_chunk(c_, &c, msg, sizeof(msg));
    }
  }

  // The name the record (id kCmdBegin) of dev 0 on `cpu` decodes to, "" if
  // undecoded; fails the test if the two interfaces disagree.
  std::string NameOn(int cpu) const {
    const Dictionary* d = set_.For(0, cpu);
    const EventDesc* e = d ? d->Find(test::kCmdBegin) : nullptr;
    const std::string cxx = e ? e->name : "";
    const char* c = hmb_dict_event_name(hmb_dict_set_lookup(c_, 0, cpu), test::kCmdBegin);
    EXPECT_EQ(cxx, c ? c : "") << "C and C++ interfaces disagree on cpu " << cpu;
    return cxx;
  }

  DictionarySet& set() { return set_; }

 private:
  DictionarySet set_;
  hmb_dict_set* c_;
};

TEST(DictionarySet, RecordsOfEachCpuFollowThatCpusLastState) {
  const Bytes first = test::ProduceDictionary(test::RealisticEvents());
  const Bytes second = SecondBuildDictionary();
  Both b;
  b.Feed(State(0, HMB_TRACE_EV_ATTACHED, 1, kBuildA));
  b.Feed(Dict(0, 1, kBuildA, first));
  b.Feed(State(1, HMB_TRACE_EV_ATTACHED, 1, kBuildA));
  EXPECT_EQ(b.NameOn(0), "nvme_cmd_begin");
  EXPECT_EQ(b.NameOn(1), "nvme_cmd_begin");

  // The reset reaches CPU 0 first: CPU 1's records that the merge puts
  // after it are still the old firmware's, and decode with its dictionary.
  b.Feed(State(0, HMB_TRACE_EV_RESET, 2, kBuildB));
  b.Feed(Dict(0, 2, kBuildB, second));
  EXPECT_EQ(b.NameOn(0), "nvme_cmd_begin_b2");
  EXPECT_EQ(b.NameOn(1), "nvme_cmd_begin");
  b.Feed(State(1, HMB_TRACE_EV_RESET, 2, kBuildB));
  EXPECT_EQ(b.NameOn(1), "nvme_cmd_begin_b2");
  EXPECT_EQ(b.set().Generations(0), (std::vector<uint32_t>{1, 2}));
}

TEST(DictionarySet, BeforeACpusFirstStateOnlyAnUnambiguousGenerationDecodes) {
  const Bytes first = test::ProduceDictionary(test::RealisticEvents());
  Both b;
  // A capture that starts mid-run: records on CPU 1 before any state there.
  b.Feed(State(0, HMB_TRACE_EV_ATTACHED, 1, kBuildA));
  b.Feed(Dict(0, 1, kBuildA, first));
  EXPECT_EQ(b.NameOn(1), "nvme_cmd_begin");  // the device's only generation
  b.Feed(State(0, HMB_TRACE_EV_RESET, 2, kBuildB));
  b.Feed(Dict(0, 2, kBuildB, SecondBuildDictionary()));
  EXPECT_EQ(b.NameOn(1), "");  // two generations: not guessed
}

TEST(DictionarySet, SecondPassDecodesRecordsBeforeTheirCpusFirstState) {
  const Bytes first = test::ProduceDictionary(test::RealisticEvents());
  const Bytes second = SecondBuildDictionary();
  DictionarySet set;
  // First pass: CPU 1's first state is the reset, so its earlier records
  // are of generation 1.
  set.AddState({0, 0, HMB_TRACE_EV_ATTACHED, 1, kBuildA});
  set.AddChunk({0, 1, kBuildA, static_cast<uint32_t>(first.size()), 0, first});
  set.AddState({0, 1, HMB_TRACE_EV_RESET, 2, kBuildB});
  set.AddChunk({0, 2, kBuildB, static_cast<uint32_t>(second.size()), 0, second});
  set.RestartStream();
  ASSERT_NE(set.For(0, 1), nullptr);
  EXPECT_EQ(set.GenerationFor(0, 1), 1u);
  EXPECT_EQ(set.For(0, 1)->Find(test::kCmdBegin)->name, "nvme_cmd_begin");
  set.FollowState({0, 1, HMB_TRACE_EV_RESET, 2, kBuildB});
  EXPECT_EQ(set.For(0, 1)->Find(test::kCmdBegin)->name, "nvme_cmd_begin_b2");
}

TEST(DictionarySet, StatesThatStartNoGenerationChangeNothing) {
  const Bytes first = test::ProduceDictionary(test::RealisticEvents());
  Both b;
  b.Feed(State(0, HMB_TRACE_EV_ATTACHED, 1, kBuildA));
  b.Feed(Dict(0, 1, kBuildA, first));
  b.Feed(State(0, HMB_TRACE_EV_PRODUCER_INIT, 0, BuildId{}));
  b.Feed(State(0, HMB_TRACE_EV_BROKEN, 0, BuildId{}));
  EXPECT_EQ(b.NameOn(0), "nvme_cmd_begin");
  EXPECT_EQ(b.set().Generations(0), (std::vector<uint32_t>{1}));
}

TEST(DictionarySet, ChunksOutOfOrderAndRepeatedCompleteOnce) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  const auto total = static_cast<uint32_t>(dict.size());
  DictionarySet set;
  const uint32_t half = total / 2;
  const std::span<const uint8_t> all(dict);
  EXPECT_FALSE(set.AddChunk({0, 1, kBuildA, total, half, all.subspan(half)}).completed);
  const auto done = set.AddChunk({0, 1, kBuildA, total, 0, all.first(half)});
  EXPECT_TRUE(done.completed);
  EXPECT_EQ(done.nr_events, test::RealisticEvents().size());
  // The periodic repeat is silent; a contradicting one is counted.
  EXPECT_FALSE(set.AddChunk({0, 1, kBuildA, total, 0, all.first(half)}).completed);
  Bytes wrong(dict.begin(), dict.begin() + half);
  wrong[half - 1] ^= 1;
  EXPECT_NE(set.AddChunk({0, 1, kBuildA, total, 0, wrong}).problem.find("contradicts"),
            std::string::npos);
  EXPECT_EQ(set.problems()[static_cast<size_t>(ChunkProblem::kConflicting)], 1u);
  EXPECT_EQ(set.total_problems(), 1u);
}

TEST(DictionarySet, BuildIdDisagreementIsReportedFromEitherSide) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  const auto total = static_cast<uint32_t>(dict.size());
  DictionarySet set;
  set.AddState({0, 0, HMB_TRACE_EV_ATTACHED, 1, kBuildA});
  const auto u = set.AddChunk({0, 1, kBuildB, total, 0, dict});
  EXPECT_TRUE(u.completed);
  EXPECT_NE(u.problem.find("build_id mismatch"), std::string::npos) << u.problem;
  EXPECT_NE(set.AddState({0, 1, HMB_TRACE_EV_ATTACHED, 1, kBuildA})
                .problem.find("build_id mismatch: dictionary of dev 0 producer_gen 1 has bb"),
            std::string::npos);
}

TEST(DictionarySet, AnIncompleteDictionaryIsAbandonedForTheNextGeneration) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  const auto total = static_cast<uint32_t>(dict.size());
  DictionarySet set;
  // Generation 1's dictionary never completes (a chunk was lost); its
  // bytes must not hold the reassembly budget for ever.
  set.AddChunk({0, 1, kBuildA, kMaxDictionaryLen, 0, std::span<const uint8_t>(dict).first(8)});
  const auto u = set.AddChunk({0, 2, kBuildA, total, 0, dict});
  EXPECT_TRUE(u.completed);
  EXPECT_NE(u.problem.find("restarting dictionary: had 8 of 1048576 bytes of producer_gen 1"),
            std::string::npos)
      << u.problem;
  EXPECT_EQ(set.problems()[static_cast<size_t>(ChunkProblem::kAbandoned)], 1u);
  EXPECT_EQ(set.Find(0, 1), nullptr);
  EXPECT_NE(set.Find(0, 2), nullptr);
}

TEST(DictionarySet, HostileChunksAreCountedAndBounded) {
  DictionarySet set;
  const Bytes one = {1};
  EXPECT_FALSE(set.AddChunk({0, 1, kBuildA, 0, 0, {}}).problem.empty());
  EXPECT_FALSE(set.AddChunk({0, 1, kBuildA, kMaxDictionaryLen + 1, 0, one}).problem.empty());
  EXPECT_FALSE(set.AddChunk({0, 1, kBuildA, 4, 4, one}).problem.empty());
  EXPECT_EQ(set.problems()[static_cast<size_t>(ChunkProblem::kTooLarge)], 2u);
  EXPECT_EQ(set.problems()[static_cast<size_t>(ChunkProblem::kOffsetPastTotal)], 1u);
  // Incomplete 1 MiB dictionaries on many devs: the budget holds eight.
  for (uint16_t dev = 0; dev < 8; dev++)
    EXPECT_TRUE(set.AddChunk({dev, 1, kBuildA, kMaxDictionaryLen, 0, one}).problem.empty());
  EXPECT_NE(set.AddChunk({8, 1, kBuildA, kMaxDictionaryLen, 0, one}).problem.find("in progress"),
            std::string::npos);
  for (uint16_t dev = 9; dev < kMaxDevices; dev++)
    set.AddChunk({dev, 1, kBuildA, 16, 0, one});
  EXPECT_NE(set.AddChunk({1000, 1, kBuildA, 16, 0, one}).problem.find("devs"), std::string::npos);
  EXPECT_NE(set.AddState({1001, 0, HMB_TRACE_EV_ATTACHED, 1, kBuildA}).problem.find("devs"),
            std::string::npos);
}

// A dictionary file (a firmware's printf sites kept out of its trace)
// completes the trace's dictionary of its own build, and only that one.
TEST(DictionarySet, DictionaryFileJoinsItsBuildOnly) {
  const std::span<const hmb_trace_event_desc> all = test::RealisticEvents();
  const Bytes first = test::ProduceDictionary(all.first(1));
  const Bytes rest = test::ProduceDictionary(all.subspan(1));
  const size_t n = all.size();
  ASSERT_GT(n, 1u);

  DictionarySet set;
  set.SetDictionaryFile("fw.hmbdict", kBuildA, rest);
  EXPECT_TRUE(set.AddState({0, 0, HMB_TRACE_EV_ATTACHED, 1, kBuildA}).problem.empty());
  auto u = set.AddChunk({0, 1, kBuildA, static_cast<uint32_t>(first.size()), 0, first});
  EXPECT_TRUE(u.completed);
  EXPECT_EQ(u.nr_events, n);
  EXPECT_TRUE(u.problem.empty()) << u.problem;
  EXPECT_TRUE(set.FileUsedFor(0, 0));
  ASSERT_NE(set.For(0, 0), nullptr);
  EXPECT_EQ(set.For(0, 0)->events().size(), n);

  // A reset into another build: refused, with both ids, and decoded alone.
  u = set.AddState({0, 0, HMB_TRACE_EV_RESET, 2, kBuildB});
  EXPECT_NE(u.problem.find("dictionary file fw.hmbdict is of build id aa000000"),
            std::string::npos)
      << u.problem;
  EXPECT_NE(u.problem.find("the trace's (dev 0, producer_gen 2) is bb000000"), std::string::npos)
      << u.problem;
  u = set.AddChunk({0, 2, kBuildB, static_cast<uint32_t>(first.size()), 0, first});
  EXPECT_TRUE(u.completed);
  EXPECT_EQ(u.nr_events, 1u);
  EXPECT_NE(u.problem.find("refused"), std::string::npos) << u.problem;
  EXPECT_FALSE(set.FileUsedFor(0, 0));

  // The C interface reads the file bounded and refuses what is not one.
  hmb_dict_set* c = hmb_dict_set_alloc();
  char err[256];
  EXPECT_EQ(hmb_dict_set_use_file(c, "/nonexistent/fw.hmbdict", err, sizeof(err)), -1);
  EXPECT_NE(std::string(err).find("/nonexistent/fw.hmbdict: "), std::string::npos) << err;
  hmb_dict_set_free(c);
}

}  // namespace
}  // namespace hmbtrace
