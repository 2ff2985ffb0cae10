// SPDX-License-Identifier: GPL-2.0-only
#include "join/nvme_join.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "join/nvme_capture.h"

namespace hmbtrace {
namespace {

using Kind = FwCommandRecord::Kind;

FwCommandRecord Rec(Kind kind,
                    uint16_t qid,
                    uint16_t cid,
                    uint64_t host_ns,
                    uint64_t bound_ns,
                    uint64_t seq,
                    uint16_t core = 0,
                    uint32_t gen = 1) {
  FwCommandRecord r;
  r.kind = kind;
  r.dev = 0;
  r.core = core;
  r.producer_gen = gen;
  r.seq = seq;
  r.qid = qid;
  r.cid = cid;
  r.converted = true;
  r.host_ns = host_ns;
  r.ftrace_ns = host_ns + 500;
  r.bound_ns = bound_ns;
  return r;
}

TEST(CommandJoin, WithNoHostCommandFirmwareRecordsAreCountedNotKept) {
  CommandJoin join;
  join.CountFwRecordsOnly();
  for (uint64_t i = 0; i < 1000; i++)
    join.FwRecord(Rec(i % 2 ? Kind::kComplete : Kind::kFetch, 1, i / 2 % 4096, 1000 * i, 10, i));
  join.Finish();
  EXPECT_TRUE(join.fw_records().empty());
  EXPECT_EQ(join.counts().fw_records, 1000u);
  EXPECT_EQ(join.counts().fw_unmatched[static_cast<size_t>(FwUnmatched::kNoHostCommand)], 1000u);
  EXPECT_EQ(join.counts().host_commands, 0u);
}

TEST(CommandJoin, JoinsByWindowEvenWhenCidsRepeat) {
  CommandJoin j;
  // The same (qid, cid) twice, and another cid interleaved.
  j.HostSetup(0, 1, 7, 2, 1, 1000);
  j.HostSetup(0, 1, 8, 1, 1, 1100);
  j.HostComplete(0, 1, 7, 0, 2000);
  j.HostSetup(0, 1, 7, 2, 1, 3000);
  j.HostComplete(0, 1, 8, 0, 3500);
  j.HostComplete(0, 1, 7, 0, 4000);
  j.FwRecord(Rec(Kind::kFetch, 1, 7, 1200, 50, 0));
  j.FwRecord(Rec(Kind::kFetch, 1, 8, 1250, 50, 1));
  j.FwRecord(Rec(Kind::kComplete, 1, 7, 1900, 50, 2));
  j.FwRecord(Rec(Kind::kFetch, 1, 7, 3100, 50, 3));
  j.FwRecord(Rec(Kind::kComplete, 1, 8, 3400, 50, 4));
  j.FwRecord(Rec(Kind::kComplete, 1, 7, 3900, 50, 5));
  j.Finish();
  ASSERT_EQ(j.commands().size(), 3u);
  EXPECT_EQ(j.counts().joined, 3u);
  EXPECT_EQ(j.commands()[0].fetch, 0);
  EXPECT_EQ(j.commands()[0].complete, 2);
  EXPECT_EQ(j.commands()[1].fetch, 1);
  EXPECT_EQ(j.commands()[1].complete, 4);
  EXPECT_EQ(j.commands()[2].fetch, 3);
  EXPECT_EQ(j.commands()[2].complete, 5);
  EXPECT_EQ(j.commands()[2].fetch_by, JoinedBy::kWindow);
  EXPECT_EQ(j.counts().by_order, 0u);
}

TEST(CommandJoin, TheBoundWidensTheWindowAndNoMore) {
  CommandJoin j;
  j.HostSetup(0, 2, 5, 1, 1, 10000);
  j.HostComplete(0, 2, 5, 0, 20000);
  j.HostSetup(0, 2, 6, 1, 1, 10000);
  j.HostComplete(0, 2, 6, 0, 20000);
  // Fetch 80 ns before the setup with a bound of 100: inside. The other
  // command's fetch 120 ns before: outside.
  j.FwRecord(Rec(Kind::kFetch, 2, 5, 9920, 100, 0));
  j.FwRecord(Rec(Kind::kFetch, 2, 6, 9880, 100, 1));
  j.FwSeen(0, 0, 1, 30000);  // the firmware wrote on
  j.Finish();
  EXPECT_EQ(j.commands()[0].fetch, 0);
  EXPECT_EQ(j.commands()[1].fetch, -1);
  EXPECT_EQ(j.fw_unmatched()[1], FwUnmatched::kOutsideWindows);
  EXPECT_EQ(j.commands()[1].why_no_fetch, HostUnmatched::kNoRecord);
  EXPECT_EQ(j.counts().partial, 1u);
  EXPECT_EQ(j.counts().unjoined, 1u);
}

TEST(CommandJoin, OrderDecidesWhenTimeCannot) {
  CommandJoin j;
  // Two back-to-back commands of one key, 100 ns apart, and a bound of
  // 1 us: every record lies in both widened intervals.
  j.HostSetup(0, 1, 3, 2, 1, 10000);
  j.HostComplete(0, 1, 3, 0, 10400);
  j.HostSetup(0, 1, 3, 2, 1, 10500);
  j.HostComplete(0, 1, 3, 0, 10900);
  // The first pair is decided by time with a tight bound, the second only
  // by order.
  j.FwRecord(Rec(Kind::kFetch, 1, 3, 10100, 10, 0));
  j.FwRecord(Rec(Kind::kComplete, 1, 3, 10300, 10, 1));
  j.FwRecord(Rec(Kind::kFetch, 1, 3, 10600, 1000, 2));
  j.FwRecord(Rec(Kind::kComplete, 1, 3, 10800, 1000, 3));
  j.Finish();
  EXPECT_EQ(j.counts().joined, 2u);
  EXPECT_EQ(j.commands()[1].fetch, 2);
  EXPECT_EQ(j.commands()[1].fetch_by, JoinedBy::kOrder);
  EXPECT_EQ(j.commands()[1].complete, 3);
  EXPECT_EQ(j.counts().by_order, 2u);
}

TEST(CommandJoin, OrderIsNotTrustedAcrossALoss) {
  CommandJoin j;
  j.HostSetup(0, 1, 3, 2, 1, 10000);
  j.HostComplete(0, 1, 3, 0, 10400);
  j.HostSetup(0, 1, 3, 2, 1, 10500);
  j.HostComplete(0, 1, 3, 0, 10900);
  j.FwRecord(Rec(Kind::kFetch, 1, 3, 10100, 10, 0));
  j.FwLost(0, 0, 10550);
  j.FwRecord(Rec(Kind::kFetch, 1, 3, 10600, 1000, 5));
  j.Finish();
  EXPECT_EQ(j.commands()[0].fetch, 0);
  EXPECT_EQ(j.commands()[1].fetch, -1) << "the loss may have taken the right fetch";
  EXPECT_EQ(j.fw_unmatched()[1], FwUnmatched::kAmbiguous);
  EXPECT_EQ(j.commands()[1].why_no_fetch, HostUnmatched::kFirmwareLost);
}

TEST(CommandJoin, AnUndecidedRecordIsTheHostCommandsReason) {
  CommandJoin j;
  j.HostSetup(0, 1, 3, 2, 1, 10000);
  j.HostComplete(0, 1, 3, 0, 10400);
  j.HostSetup(0, 1, 3, 2, 1, 10500);
  j.HostComplete(0, 1, 3, 0, 10900);
  // No chain yet and a bound that covers both: time cannot decide.
  j.FwRecord(Rec(Kind::kFetch, 1, 3, 10450, 1000, 0));
  j.FwSeen(0, 0, 1, 20000);
  j.Finish();
  EXPECT_EQ(j.fw_unmatched()[0], FwUnmatched::kAmbiguous);
  EXPECT_EQ(j.commands()[0].why_no_fetch, HostUnmatched::kUndecided);
  EXPECT_EQ(j.commands()[1].why_no_fetch, HostUnmatched::kUndecided);
}

TEST(CommandJoin, AFirmwareResetSplitsAndIsTheReason) {
  CommandJoin j;
  j.HostSetup(0, 1, 9, 1, 1, 1000);
  j.HostComplete(0, 1, 9, 0, 5000);
  j.FwRecord(Rec(Kind::kFetch, 1, 9, 1500, 10, 0, 0, 1));
  // The firmware resets (generation 2) before completing it.
  j.FwSeen(0, 0, 2, 3000);
  j.Finish();
  EXPECT_EQ(j.counts().partial, 1u);
  EXPECT_EQ(j.commands()[0].why_no_complete, HostUnmatched::kFirmwareReset);
  EXPECT_EQ(j.counts().host_unmatched[static_cast<size_t>(HostUnmatched::kFirmwareReset)], 1u);
}

TEST(CommandJoin, EveryHostCommandHasAnAnswer) {
  CommandJoin j;
  j.HostSetup(0, 1, 1, 2, 1, 100);  // before the firmware's first record
  j.HostComplete(0, 1, 1, 0, 200);
  j.HostSetup(0, 1, 2, 2, 1, 1000);  // joined
  j.HostComplete(0, 1, 2, 0, 2000);
  j.HostSetup(0, 1, 3, 2, 1, 9000);  // never completed
  j.HostSetup(1, 1, 4, 2, 1, 1000);  // controller 1: no device 1 records
  j.HostComplete(1, 1, 4, 0, 1500);
  j.HostComplete(0, 1, 77, 0, 1500);  // completion without its setup
  j.FwRecord(Rec(Kind::kFetch, 1, 2, 1100, 10, 0));
  j.FwRecord(Rec(Kind::kComplete, 1, 2, 1900, 10, 1));
  j.FwRecord(Rec(Kind::kFetch, 1, 99, 1950, 10, 2));  // no such host command
  j.Finish();
  const JoinCounts& c = j.counts();
  EXPECT_EQ(c.host_commands, 4u);
  EXPECT_EQ(c.joined, 1u);
  EXPECT_EQ(c.unjoined, 3u);
  EXPECT_EQ(j.commands()[0].why_no_fetch, HostUnmatched::kBeforeFirmware);
  EXPECT_EQ(j.commands()[2].why_no_complete, HostUnmatched::kNotCompleted);
  EXPECT_EQ(j.commands()[3].why_no_fetch, HostUnmatched::kNoDevice);
  EXPECT_EQ(c.complete_without_setup, 1u);
  EXPECT_EQ(j.fw_unmatched()[2], FwUnmatched::kNoHostCommand);
  uint64_t listed = 0;
  for (uint64_t n : c.host_unmatched)
    listed += n;
  EXPECT_EQ(listed, c.partial + c.unjoined);
}

TEST(CommandJoin, ControllersMapToDevices) {
  CommandJoin j;
  j.MapController(3, 0);
  j.HostSetup(3, 1, 2, 2, 1, 1000);
  j.HostComplete(3, 1, 2, 0, 2000);
  j.FwRecord(Rec(Kind::kFetch, 1, 2, 1100, 10, 0));
  j.FwRecord(Rec(Kind::kComplete, 1, 2, 1900, 10, 1));
  j.Finish();
  EXPECT_EQ(j.counts().joined, 1u);
}

TEST(CommandJoin, ASecondRecordOfAKindIsADuplicate) {
  CommandJoin j;
  j.HostSetup(0, 1, 2, 2, 1, 1000);
  j.HostComplete(0, 1, 2, 0, 2000);
  j.FwRecord(Rec(Kind::kFetch, 1, 2, 1100, 10, 0));
  j.FwRecord(Rec(Kind::kFetch, 1, 2, 1200, 10, 1));
  j.Finish();
  EXPECT_EQ(j.fw_unmatched()[1], FwUnmatched::kDuplicate);
}

// The reference SSD's record-global flake: the first command of a queue
// (qid 1, cid 0) and a boot-time partition scan's fetch of the same cid,
// converted by extrapolation before the first clock fit (bound 23 ms, 5 ms
// before the setup): the widened window admits both; the command's own
// fetch, inside its interval, is the one joined.
TEST(CommandJoin, ARecordInsideTheIntervalWinsOverAnExtrapolatedOne) {
  CommandJoin j;
  j.HostSetup(0, 1, 0, 2, 1, 100000000);
  j.HostComplete(0, 1, 0, 0, 100200000);
  j.FwRecord(Rec(Kind::kFetch, 1, 0, 95000000, 23000000, 0));     // boot's
  j.FwRecord(Rec(Kind::kComplete, 1, 0, 95100000, 23000000, 1));  // boot's
  j.FwRecord(Rec(Kind::kFetch, 1, 0, 100050000, 10000, 2));
  j.FwRecord(Rec(Kind::kComplete, 1, 0, 100150000, 10000, 3));
  j.Finish();
  ASSERT_EQ(j.commands().size(), 1u);
  EXPECT_EQ(j.commands()[0].fetch, 2);
  EXPECT_EQ(j.commands()[0].complete, 3);
  EXPECT_EQ(j.counts().joined, 1u);
  EXPECT_EQ(j.fw_unmatched()[0], FwUnmatched::kDuplicate);
  EXPECT_EQ(j.fw_unmatched()[1], FwUnmatched::kDuplicate);
  EXPECT_EQ(j.fw_unmatched()[2], FwUnmatched::kNone);
  EXPECT_EQ(j.fw_unmatched()[3], FwUnmatched::kNone);
  EXPECT_EQ(j.counts().fw_unmatched[static_cast<size_t>(FwUnmatched::kDuplicate)], 2u);
}

// And the other way round: the record inside the interval came first; the
// extrapolated one after it does not displace it.
TEST(CommandJoin, AnExtrapolatedRecordDoesNotDisplaceOneInsideTheInterval) {
  CommandJoin j;
  j.HostSetup(0, 1, 0, 2, 1, 100000000);
  j.HostComplete(0, 1, 0, 0, 100200000);
  j.FwRecord(Rec(Kind::kFetch, 1, 0, 100050000, 10000, 0));
  j.FwRecord(Rec(Kind::kFetch, 1, 0, 104000000, 23000000, 1));
  j.Finish();
  EXPECT_EQ(j.commands()[0].fetch, 0);
  EXPECT_EQ(j.fw_unmatched()[1], FwUnmatched::kDuplicate);
}

// A command in flight at the capture's end (a crash dump's) whose fetch
// the clock fit put 5 ms before its submit, outside the 1 ms bound: its
// key's latest fetch, nothing after it, is its own, by order.
TEST(CommandJoin, AnInFlightCommandTakesItsKeysLatestFetchByOrder) {
  CommandJoin j;
  j.HostSetup(0, 1, 7, 2, 1, 1000000);
  j.HostComplete(0, 1, 7, 0, 2000000);
  j.HostSetup(0, 1, 7, 2, 1, 20000000);  // in flight at the end
  j.FwRecord(Rec(Kind::kFetch, 1, 7, 1100000, 1000000, 0));
  j.FwRecord(Rec(Kind::kComplete, 1, 7, 1900000, 1000000, 1));
  j.FwRecord(Rec(Kind::kFetch, 1, 7, 15000000, 1000000, 2));
  j.Finish();
  ASSERT_EQ(j.commands().size(), 2u);
  EXPECT_EQ(j.commands()[0].fetch, 0);
  EXPECT_EQ(j.commands()[1].fetch, 2);
  EXPECT_EQ(j.commands()[1].fetch_by, JoinedBy::kOrder);
  EXPECT_EQ(j.commands()[1].why_no_complete, HostUnmatched::kNotCompleted);
  EXPECT_EQ(j.counts().by_order, 1u);
  EXPECT_EQ(j.counts().fw_unmatched[static_cast<size_t>(FwUnmatched::kOutsideWindows)], 0u);
}

// Not when something says the fetch was another command's: a complete of
// the key after it, or a loss on its core since.
TEST(CommandJoin, AnInFlightCommandDoesNotTakeAFetchThatCompleted) {
  for (int variant = 0; variant < 2; variant++) {
    CommandJoin j;
    j.HostSetup(0, 1, 7, 2, 1, 20000000);
    j.FwRecord(Rec(Kind::kFetch, 1, 7, 15000000, 1000000, 0));
    if (variant == 0)
      j.FwRecord(Rec(Kind::kComplete, 1, 7, 15100000, 1000000, 1));
    else
      j.FwLost(0, 0, 16000000);
    j.Finish();
    ASSERT_EQ(j.commands().size(), 1u);
    EXPECT_LT(j.commands()[0].fetch, 0) << variant;
    EXPECT_EQ(j.counts().by_order, 0u) << variant;
  }
}

TEST(CommandStat, AdminCommandsAreSplitUnderTheirAdminNames) {
  // Opcode 0x02 is get_log_page on the admin queue and read on an I/O
  // queue: the latency split must not count the one as the other.
  CommandCapture cap;
  cap.host_events = true;
  cap.join.HostSetup(0, 0, 5, 0x02, 0, 1000);
  cap.join.HostSetup(0, 1, 6, 0x02, 1, 1100);
  cap.join.FwRecord(Rec(Kind::kFetch, 0, 5, 1200, 10, 0));
  cap.join.FwRecord(Rec(Kind::kFetch, 1, 6, 1250, 10, 1));
  cap.join.FwRecord(Rec(Kind::kComplete, 0, 5, 1800, 10, 2));
  cap.join.FwRecord(Rec(Kind::kComplete, 1, 6, 1850, 10, 3));
  cap.join.HostComplete(0, 0, 5, 0, 2000);
  cap.join.HostComplete(0, 1, 6, 0, 2100);
  cap.join.Finish();
  ASSERT_EQ(cap.join.counts().joined, 2u);
  std::set<std::string> names;
  const nlohmann::json doc = CommandStatJson(cap);
  for (const auto& row : doc["latency_split"]) {
    names.insert(row["opcode"].get<std::string>());
    EXPECT_EQ(row["count"], 1u) << row.dump();
  }
  EXPECT_EQ(names, (std::set<std::string>{"get_log_page", "read"}));
}

TEST(CommandStat, ACommandTheHostDidNotCompleteHasNoSplit) {
  // Both firmware records joined, but no nvme_complete_rq in the capture:
  // its host total is unknown, not 0.
  CommandCapture cap;
  cap.host_events = true;
  cap.join.HostSetup(0, 1, 5, 0x02, 1, 1000);
  cap.join.HostSetup(0, 1, 6, 0x02, 1, 1100);
  cap.join.FwRecord(Rec(Kind::kFetch, 1, 5, 1200, 10, 0));
  cap.join.FwRecord(Rec(Kind::kFetch, 1, 6, 1250, 10, 1));
  cap.join.FwRecord(Rec(Kind::kComplete, 1, 5, 1800, 10, 2));
  cap.join.FwRecord(Rec(Kind::kComplete, 1, 6, 1850, 10, 3));
  cap.join.HostComplete(0, 1, 5, 0, 2000);
  cap.join.Finish();
  ASSERT_EQ(cap.join.counts().joined, 2u);
  const nlohmann::json doc = CommandStatJson(cap);
  ASSERT_EQ(doc["latency_split"].size(), 4u);
  for (const auto& row : doc["latency_split"]) {
    EXPECT_EQ(row["count"], 1u) << row.dump();
    if (row["phase"] == "host total") {
      EXPECT_EQ(row["p50_us"], 1.0) << row.dump();
    }
  }
}

TEST(Percentile, NearestRank) {
  const std::vector<uint64_t> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(v, 50), 5u);
  EXPECT_EQ(Percentile(v, 90), 9u);
  EXPECT_EQ(Percentile(v, 99), 10u);
  EXPECT_EQ(Percentile({}, 50), 0u);
}

}  // namespace
}  // namespace hmbtrace
