// SPDX-License-Identifier: GPL-2.0-only
#include "dump/dump_file.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "decode_test_util.h"
#include "dump/dump_info.h"
#include "dump/dump_writer_testutil.h"
#include "hmb_trace_dump_abi.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace {
namespace {

using test::DumpLayout;
using test::InflightDump;
using test::Put16;
using test::Put32;
using test::Put64;
using test::SmallDump;
using test::TestDump;
using test::WriteDump;

std::vector<uint8_t> Dict() {
  return test::ProduceDictionary(test::RealisticEvents());
}

Dump ParseOk(std::vector<uint8_t> bytes) {
  Result<Dump> r = ParseDump(std::move(bytes), "t.hmbdump");
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok())
    return Dump{};
  return std::move(r.value());
}

std::string ParseError(std::vector<uint8_t> bytes) {
  Result<Dump> r = ParseDump(std::move(bytes), "t.hmbdump");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.message();
}

bool AnyProblem(const Dump& d, const std::string& text) {
  return std::any_of(d.problems.begin(), d.problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

TEST(DumpFile, AGoodDumpIsParsedExactly) {
  const TestDump in = SmallDump(Dict());
  const Dump d = ParseOk(WriteDump(in));
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  EXPECT_EQ(d.refused.total(), 0u);
  EXPECT_FALSE(d.truncated);
  EXPECT_EQ(d.header.version, 1u);
  EXPECT_EQ(d.header.producer_gen, 3u);
  EXPECT_EQ(d.header.nr_cores, 2u);
  EXPECT_EQ(d.header.name, "nvme0");
  EXPECT_EQ(d.header.clock_hz, 1000000000u);
  EXPECT_EQ(d.header.taken_real_ns, in.taken_real_ns);
  EXPECT_EQ(d.header.copy_ns, 12345u);
  EXPECT_EQ(d.header.build_id, in.build_id);
  EXPECT_EQ(d.header.taken_ns[HMB_TRACE_CLOCK_BOOT], 7000000000u);
  EXPECT_EQ(std::vector<uint8_t>(d.dict.begin(), d.dict.end()), in.dict);
  EXPECT_EQ(std::vector<uint8_t>(d.meta.begin(), d.meta.end()), in.meta);
  EXPECT_EQ(std::vector<uint8_t>(d.cores_desc.begin(), d.cores_desc.end()), in.cores_desc);
  ASSERT_EQ(d.clocks.size(), 2u);
  EXPECT_EQ(d.clocks[1].clock_id, static_cast<uint32_t>(HMB_TRACE_CLOCK_BOOT));
  EXPECT_EQ(d.clocks[1].fit.host_ref, 3000000000u);
  EXPECT_EQ(d.clocks[1].fit.samples, 16u);
  ASSERT_EQ(d.cores.size(), 2u);
  EXPECT_EQ(d.cores[0].start_seq, 10u);
  EXPECT_EQ(d.cores[0].end_seq, 15u);
  EXPECT_EQ(d.cores[0].records, 3u);
  EXPECT_EQ(d.cores[0].lost[0], 2u);
  EXPECT_EQ(d.cores[1].start_seq, 20u);
  EXPECT_EQ(d.cores[1].end_seq, 23u);
  ASSERT_EQ(d.records.size(), in.records.size());
  for (size_t i = 0; i < in.records.size(); i++) {
    EXPECT_EQ(d.records[i].core, in.records[i].core);
    EXPECT_EQ(d.records[i].seq, in.records[i].seq);
    EXPECT_EQ(d.records[i].ts, in.records[i].ts);
    EXPECT_EQ(d.records[i].event_id, in.records[i].event_id);
    const auto p = d.Payload(d.records[i]);
    EXPECT_EQ(std::vector<uint8_t>(p.begin(), p.end()), in.records[i].payload);
  }
  ASSERT_EQ(d.lost.size(), 1u);
  EXPECT_EQ(d.lost[0].count, 2u);
  EXPECT_EQ(d.lost[0].at_seq, 14u);
  EXPECT_TRUE(d.identity_holds());
}

// Every prefix of a good dump: an error that names the file and an
// offset, or a dump of records that are the original's, with a problem
// said; never a crash (ASan) or an absurd count.
TEST(DumpFile, CutAtEveryOffsetGivesAnErrorOrTheRecordsThatValidate) {
  const TestDump in = SmallDump(Dict());
  const std::vector<uint8_t> whole = WriteDump(in);
  for (size_t n = 0; n < whole.size(); n++) {
    Result<Dump> r = ParseDump(std::vector<uint8_t>(whole.begin(), whole.begin() + n), "t");
    if (!r.ok()) {
      EXPECT_EQ(r.message().rfind("t: offset ", 0), 0u) << n << ": " << r.message();
      continue;
    }
    const Dump& d = r.value();
    EXPECT_TRUE(d.truncated) << n;
    EXPECT_FALSE(d.problems.empty()) << n;
    EXPECT_LE(d.records.size(), in.records.size()) << n;
    EXPECT_LE(d.refused.records, in.records.size()) << n;
    EXPECT_LE(d.refused.sections_missing, 16u) << n;
    for (const DumpRecord& rec : d.records) {
      const auto it = std::find_if(in.records.begin(), in.records.end(), [&](const auto& o) {
        return o.core == rec.core && o.seq == rec.seq;
      });
      ASSERT_NE(it, in.records.end()) << n;
      const auto p = d.Payload(rec);
      EXPECT_EQ(std::vector<uint8_t>(p.begin(), p.end()), it->payload) << n;
    }
  }
}

TEST(DumpFile, ANewerVersionIsRefusedWithTheFix) {
  TestDump in = SmallDump(Dict());
  in.version = 2;
  const std::string e = ParseError(WriteDump(in));
  EXPECT_NE(e.find("t.hmbdump: offset 8: dump format version 2, newer than"), std::string::npos)
      << e;
  EXPECT_NE(e.find("newer hmbtrace-cmd"), std::string::npos) << e;
}

TEST(DumpFile, NotADumpIsAnError) {
  std::vector<uint8_t> bytes(300, 0);
  EXPECT_NE(ParseError(bytes).find("no \"HMBTDUMP\" magic"), std::string::npos);
}

TEST(DumpFile, UnknownSectionsAreSkipped) {
  TestDump in = SmallDump(Dict());
  in.extra_sections = {{99, std::vector<uint8_t>(13, 0xee)}, {1000, {}}};
  const Dump d = ParseOk(WriteDump(in));
  EXPECT_TRUE(d.problems.empty());
  EXPECT_EQ(d.refused.sections_unknown, 2u);
  EXPECT_EQ(d.records.size(), in.records.size());
}

TEST(DumpFile, ARecordCountTooBigIsBoundedByTheBytes) {
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  Put32(bytes, at.section.at(HMB_DUMP_SEC_RECORDS) + 4, 0xffffffffu);
  const Dump d = ParseOk(bytes);
  EXPECT_EQ(d.records.size(), 6u);
  EXPECT_TRUE(AnyProblem(d, "count 4294967295 cannot fit")) << d.problems.front();
  EXPECT_LT(d.refused.records, 16u);
}

TEST(DumpFile, ACoreStateCountTooBigRefusesWhatIsNotThere) {
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  Put32(bytes, at.section.at(HMB_DUMP_SEC_CORE_STATE) + 4, 1000000);
  const Dump d = ParseOk(bytes);
  EXPECT_EQ(d.cores.size(), 2u);
  // A count its bytes could never hold is a lie, not a million refusals.
  EXPECT_EQ(d.refused.cores, 0u);
  EXPECT_EQ(d.refused.sections_bad, 1u);
  EXPECT_TRUE(AnyProblem(d, "count 1000000 x 80 bytes is not its len 160"));
}

TEST(DumpFile, ASectionLengthPastTheEndKeepsWhatItHolds) {
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  Put64(bytes, at.section.at(HMB_DUMP_SEC_RECORDS) + 8, 1ull << 40);
  const Dump d = ParseOk(bytes);
  EXPECT_EQ(d.records.size(), 6u);
  EXPECT_TRUE(AnyProblem(d, "section RECORDS: len 1099511627776 runs past the end"));
  // LOST, after it, is not reachable: core 0's losses are not accounted for.
  EXPECT_EQ(d.refused.sections_missing, 1u);
  EXPECT_FALSE(d.identity_holds());
  EXPECT_TRUE(AnyProblem(d,
                         "core 0: LOST holds (0+0+0+0) lost by reason, CORE_STATE says "
                         "(2+0+0+0)"));
}

TEST(DumpFile, HugeClaimsAllocateOnlyWhatTheBytesHold) {
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  Put64(bytes, 16, 1ull << 62);  // total_len
  const size_t records = at.section.at(HMB_DUMP_SEC_RECORDS);
  Put32(bytes, records + 4, 0xffffffffu);
  Put64(bytes, records + 8, 1ull << 61);
  Put32(bytes, at.section.at(HMB_DUMP_SEC_CORE_STATE) + 4, 0xffffffffu);
  const Dump d = ParseOk(bytes);
  EXPECT_TRUE(d.truncated);
  EXPECT_EQ(d.cores.size(), 2u);
  EXPECT_EQ(d.records.size(), 6u);
  EXPECT_TRUE(AnyProblem(d, "cut short: total_len is 4611686018427387904"));
}

TEST(DumpFile, ARecordLengthPastItsSectionRefusesItAndTheRest) {
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  test::Put16(bytes, at.records[4] + 4, 60000);
  const Dump d = ParseOk(bytes);
  EXPECT_EQ(d.records.size(), 4u);
  EXPECT_EQ(d.refused.records, 2u);
  EXPECT_TRUE(AnyProblem(d, "record 4: len 60000 runs past the end of RECORDS"));
  EXPECT_FALSE(d.identity_holds());
}

TEST(DumpFile, AHeaderLenOffTheGridIsAnError) {
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()));
  Put32(bytes, 12, 204);
  EXPECT_NE(ParseError(bytes).find("offset 12: header_len 204 is not a multiple of 8"),
            std::string::npos);
  Put32(bytes, 12, 100);
  EXPECT_NE(ParseError(bytes).find("header_len 100 is smaller than the header"), std::string::npos);
}

TEST(DumpFile, ASectionOffTheGridIsNotReadAsWhatItIsNot) {
  // META 4 bytes longer: every later section header is read 8 bytes late.
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  Put64(bytes, at.section.at(HMB_DUMP_SEC_META) + 8, 64 + 4);
  Result<Dump> r = ParseDump(bytes, "t");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE(r->problems.empty());
  EXPECT_FALSE(r->identity_holds() && r->records.size() == 6 && r->refused.total() == 0);
}

TEST(DumpFile, ABrokenIdentityIsAnErrorWithTheFigures) {
  TestDump in = SmallDump(Dict());
  in.cores = test::CoresFor(in);
  in.cores[1].end_seq += 5;
  const Dump d = ParseOk(WriteDump(in));
  EXPECT_FALSE(d.identity_holds());
  EXPECT_TRUE(d.identity[0].holds);
  EXPECT_FALSE(d.identity[1].holds);
  EXPECT_EQ(d.identity[1].problem,
            "core 1: end_seq - start_seq = 28 - 20 = 8, but records + skipped + lost = 3 + 0 + "
            "(0+0+0+0)");
  EXPECT_TRUE(AnyProblem(d, "identity broken: core 1"));
}

TEST(DumpFile, SkippedRecordsKeepTheIdentity) {
  TestDump in = SmallDump(Dict());
  in.cores = test::CoresFor(in);
  in.cores[1].start_seq -= 7;
  in.cores[1].skipped = 7;
  const Dump d = ParseOk(WriteDump(in));
  EXPECT_TRUE(d.identity_holds()) << d.problems.front();
}

TEST(DumpFile, RecordsOfAnUnknownCoreOrOutOfOrderAreRefused) {
  DumpLayout at;
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()), &at);
  test::Put16(bytes, at.records[0], 7);  // core 7 of 2
  Put64(bytes, at.records[2] + 8, 10);   // core 0 seq 14 -> 10, after 11
  const Dump d = ParseOk(bytes);
  EXPECT_EQ(d.records.size(), 4u);
  EXPECT_EQ(d.refused.records, 2u);
  EXPECT_TRUE(AnyProblem(d, "record of core 7: core 7 is not in CORE_STATE: refused"));
  EXPECT_TRUE(AnyProblem(d, "seq 10 not after the core's previous record"));
}

TEST(DumpFile, BytesPastTotalLenAreIgnored) {
  std::vector<uint8_t> bytes = WriteDump(SmallDump(Dict()));
  bytes.resize(bytes.size() + 40, 0xff);
  const Dump d = ParseOk(bytes);
  EXPECT_EQ(d.records.size(), 6u);
  EXPECT_TRUE(AnyProblem(d, "40 bytes past total_len"));
}

TEST(DumpFile, ASecondSectionOfATypeIsSkipped) {
  TestDump in = SmallDump(Dict());
  in.extra_sections = {{HMB_DUMP_SEC_DICT, {1, 2, 3}}};
  const Dump d = ParseOk(WriteDump(in));
  EXPECT_EQ(d.refused.sections_duplicate, 1u);
  EXPECT_EQ(d.dict.size(), in.dict.size());
}

// Two commands in flight: a read on queue 1 and an admin identify.
std::vector<DumpCmd> TwoCmds() {
  return {{1, 0x1004, 0x02, 1, 8, 0x1000, 8999750000},
          {0, 0x0007, 0x06, 0, 0, 0, 0}};
}

TEST(DumpFile, TheCommandsInFlightAreParsed) {
  const TestDump in = InflightDump(Dict(), TwoCmds());
  const Dump d = ParseOk(WriteDump(in));
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  EXPECT_EQ(d.refused.total(), 0u);
  EXPECT_EQ(d.refused.sections_unknown, 0u);
  ASSERT_EQ(d.inflight.size(), 2u);
  const DumpCmd& c = d.inflight[0];
  EXPECT_EQ(c.qid, 1u);
  EXPECT_EQ(c.cid, 0x1004u);
  EXPECT_EQ(c.opcode, 0x02u);
  EXPECT_EQ(c.nsid, 1u);
  EXPECT_EQ(c.nlb, 8u);
  EXPECT_EQ(c.slba, 0x1000u);
  EXPECT_EQ(c.submit_ns, 8999750000u);
  EXPECT_EQ(d.inflight[1].qid, 0u);
  EXPECT_EQ(d.inflight[1].cid, 7u);
  EXPECT_EQ(d.inflight[1].opcode, 0x06u);
  EXPECT_EQ(d.records.size(), in.records.size());
  EXPECT_EQ(DumpFlagsText(d.header.flags), "dict,inflight");
  EXPECT_EQ(DumpFlagsText(HMB_DUMP_FL_INFLIGHT | HMB_DUMP_FL_INFLIGHT_PARTIAL | (1u << 5)),
            "inflight,inflight_partial,0x20");
}

TEST(DumpFile, AnInflightCountTooBigRefusesWhatIsNotThere) {
  TestDump in = InflightDump(Dict(), TwoCmds());
  in.inflight_count = 5;
  DumpLayout layout;
  const Dump d = ParseOk(WriteDump(in, &layout));
  EXPECT_EQ(d.inflight.size(), 2u);
  EXPECT_EQ(d.refused.sections_bad, 1u);
  ASSERT_FALSE(d.problems.empty());
  EXPECT_EQ(d.problems[0], "offset " + std::to_string(layout.section.at(HMB_DUMP_SEC_INFLIGHT)) +
                               ": section INFLIGHT: count 5 x 32 bytes is not its len 64");
  // The sections after it are read all the same.
  EXPECT_EQ(d.records.size(), in.records.size());
}

TEST(DumpFile, AnInflightSectionCutShortKeepsTheCommandsItHolds) {
  const TestDump in = InflightDump(Dict(), TwoCmds());
  DumpLayout layout;
  std::vector<uint8_t> bytes = WriteDump(in, &layout);
  // The first command and half the second.
  const size_t data = layout.section.at(HMB_DUMP_SEC_INFLIGHT) + kDumpSectionHeaderLen;
  bytes.resize(data + kDumpCmdLen + kDumpCmdLen / 2);
  const Dump d = ParseOk(std::move(bytes));
  EXPECT_TRUE(d.truncated);
  ASSERT_EQ(d.inflight.size(), 1u);
  EXPECT_EQ(d.inflight[0].cid, 0x1004u);
  EXPECT_EQ(d.refused.inflight, 1u);
}

TEST(DumpFile, ACommandInFlightTwiceOrAfterTheDumpIsRefused) {
  std::vector<DumpCmd> cmds = TwoCmds();
  cmds.push_back(cmds[0]);                          // the same qid and cid
  cmds.push_back({2, 2, 0x01, 1, 1, 0, 9000000002});   // within the slack: kept
  cmds.push_back({2, 1, 0x01, 1, 1, 0, 10000000001});  // more than 1 s after mono 9 s
  DumpLayout layout;
  const Dump d = ParseOk(WriteDump(InflightDump(Dict(), cmds), &layout));
  EXPECT_EQ(d.inflight.size(), 3u);
  EXPECT_EQ(d.refused.inflight, 2u);
  const size_t data = layout.section.at(HMB_DUMP_SEC_INFLIGHT) + kDumpSectionHeaderLen;
  ASSERT_EQ(d.problems.size(), 2u);
  EXPECT_EQ(d.problems[0], "offset " + std::to_string(data + 2 * kDumpCmdLen) +
                               ": command in flight qid 1 cid 4100: the same qid and cid as the "
                               "command at offset " +
                               std::to_string(data) + ": refused");
  EXPECT_NE(d.problems[1].find("submit_ns 10000000001 more than 1 s after the dump"),
            std::string::npos)
      << d.problems[1];
}

TEST(DumpFile, CutAtEveryOffsetOfADumpWithCommandsInFlight) {
  const TestDump in = InflightDump(Dict(), TwoCmds());
  const std::vector<uint8_t> whole = WriteDump(in);
  for (size_t n = 0; n < whole.size(); n++) {
    Result<Dump> r = ParseDump(std::vector<uint8_t>(whole.begin(), whole.begin() + n), "t");
    if (!r.ok())
      continue;
    const Dump& d = r.value();
    EXPECT_LE(d.inflight.size(), in.inflight.size()) << n;
    EXPECT_LE(d.inflight.size() + d.refused.inflight, in.inflight.size()) << n;
    for (size_t i = 0; i < d.inflight.size(); i++)
      EXPECT_EQ(d.inflight[i].cid, in.inflight[i].cid) << n;
    (void)DumpInfoText(d);
  }
}

TEST(DumpInfo, SaysTheHeaderAndEachCoresAccount) {
  const Dump d = ParseOk(WriteDump(SmallDump(Dict())));
  const std::string text = DumpInfoText(d);
  EXPECT_NE(text.find("crash dump of HMB trace area \"nvme0\" (dev 0)"), std::string::npos);
  EXPECT_NE(text.find("reason:       disabling"), std::string::npos) << text;
  EXPECT_NE(text.find("taken:        2025-12-04 14:53:42.123456789 UTC"), std::string::npos)
      << text;
  EXPECT_NE(text.find("reset path:   12345 ns"), std::string::npos) << text;
  // A firmware restart's dump is not taken on a reset path.
  Dump restart = ParseOk(WriteDump(SmallDump(Dict())));
  restart.header.reason = HMB_DUMP_REASON_FW_RESTART;
  const std::string restart_text = DumpInfoText(restart);
  EXPECT_EQ(restart_text.find("reset path:"), std::string::npos) << restart_text;
  EXPECT_NE(restart_text.find("copy:         12345 ns to take the dump (from a work item)"),
            std::string::npos)
      << restart_text;
  EXPECT_NE(text.find("times on \"local\""), std::string::npos) << text;
  EXPECT_NE(text.find("    0          10          15           3           0            2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("holds"), std::string::npos) << text;
}

TEST(DumpInfo, NamesEachReasonAndTheNumberOfAnUnknownOne) {
  EXPECT_EQ(DumpReasonName(HMB_DUMP_REASON_DISABLING), "disabling");
  EXPECT_EQ(DumpReasonName(HMB_DUMP_REASON_REMOVED), "removed");
  EXPECT_EQ(DumpReasonName(HMB_DUMP_REASON_FW_RESTART), "fw_restart");
  EXPECT_EQ(DumpReasonName(HMB_DUMP_REASON_FW_FREEZE), "fw_freeze");
  EXPECT_EQ(DumpReasonName(7), "reason 7");
}

// A record of nvme_cmd_begin (fetch) or nvme_cmd_end (complete) of
// RealisticEvents(): qid and cid first.
test::TestRecord CmdRecord(uint16_t core, uint16_t event, uint64_t seq, uint64_t ts, uint16_t qid,
                           uint16_t cid) {
  std::vector<uint8_t> p(event == test::kCmdBegin ? 28 : 12, 0);
  Put16(p, 0, qid);
  Put16(p, 2, cid);
  return {core, event, seq, ts, p};
}

TEST(DumpInfo, ListsTheCommandsInFlightWithTheRecordsThatNameThem) {
  TestDump in = InflightDump(Dict(), TwoCmds());
  // Core 1 fetched the read (after seq 22); nothing names the identify.
  in.records.push_back(CmdRecord(1, test::kCmdBegin, 23, 4000, 1, 0x1004));
  // An older use of the same cid, fetched and completed: not this command.
  in.records.insert(in.records.begin(), CmdRecord(0, test::kCmdBegin, 8, 500, 1, 0x1004));
  in.records.insert(in.records.begin() + 1, CmdRecord(0, test::kCmdEnd, 9, 600, 1, 0x1004));
  const Dump d = ParseOk(WriteDump(in));
  ASSERT_TRUE(d.problems.empty()) << d.problems.front();
  const std::string text = DumpInfoText(d);
  EXPECT_NE(text.find("flags:        dict,inflight\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ncommands in flight: 2\n"
                      "  qid 1 cid 0x1004 read nsid 1 slba 0x1000 nlb 8, submitted 250.0 us "
                      "before the dump\n"
                      "      fetched by core 1 at seq 23; no complete record after it\n"
                      "  qid 0 cid 0x0007 identify, submit time unknown\n"
                      "      no fetch record in the dump; no complete record after it\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("does not know"), std::string::npos) << text;
}

TEST(DumpInfo, SaysACommandTheFirmwareCompletedAndThePartialList) {
  TestDump in = InflightDump(Dict(), {TwoCmds()[0]});
  in.flags |= HMB_DUMP_FL_INFLIGHT_PARTIAL;
  in.records.push_back(CmdRecord(1, test::kCmdBegin, 23, 4000, 1, 0x1004));
  in.records.push_back(CmdRecord(1, test::kCmdEnd, 24, 4100, 1, 0x1004));
  const std::string text = DumpInfoText(ParseOk(WriteDump(in)));
  EXPECT_NE(text.find("commands in flight: 1 listed, the host had more\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("      fetched by core 1 at seq 23; completed by core 1 at seq 24\n"),
            std::string::npos)
      << text;
}

TEST(DumpInfo, WithoutTheInflightFlagTheCommandsAreNotListed) {
  const std::string text = DumpInfoText(ParseOk(WriteDump(SmallDump(Dict()))));
  EXPECT_NE(text.find("\ncommands in flight: not listed (the nvme-pci series cannot list them)\n"),
            std::string::npos)
      << text;
}

TEST(DumpInfo, WithoutADictionaryTheRecordsAreNotMatched) {
  TestDump in = InflightDump({}, TwoCmds());
  in.flags &= ~1u;
  const std::string text = DumpInfoText(ParseOk(WriteDump(in)));
  EXPECT_NE(text.find("      records not matched: the dump has no dictionary\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace hmbtrace
