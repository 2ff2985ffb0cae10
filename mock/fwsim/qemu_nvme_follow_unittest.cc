// SPDX-License-Identifier: GPL-2.0-only
#include "qemu_nvme_follow.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "fwsim_events.h"

namespace hmbtrace {
namespace {

// Lines as QEMU 7.2 writes them (hw/nvme/trace-events, -msg timestamp=on).
constexpr char kIo[] =
    "1796034@1796034802.126377:pci_nvme_io_cmd cid 4192 nsid 0x1 sqid 2 opc 0x2 "
    "opname 'NVME_NVM_CMD_READ'";
constexpr char kWrite[] =
    "1796034@1796034802.126379:pci_nvme_write cid 4193 opname 'NVME_NVM_CMD_WRITE' nsid 1 "
    "nlb 1 count 512 lba 0x8";
constexpr char kRead[] =
    "1796034@1796034802.126379:pci_nvme_read cid 4192 nsid 1 nlb 8 count 4096 lba 0x1f0";
constexpr char kDone[] =
    "1796034@1796034802.126500:pci_nvme_enqueue_req_completion cid 4192 cqid 2 dw0 0x0 "
    "dw1 0x0 status 0x0";

TEST(ParseQemuNvmeLine, ReadsCommandCompletionAndRange) {
  QemuNvmeLine l;
  ASSERT_EQ(ParseQemuNvmeLine(kIo, &l), QemuLineParse::kOk);
  EXPECT_EQ(l.kind, QemuNvmeLine::Kind::kIoCmd);
  EXPECT_EQ(l.realtime_us, 1796034802126377ull);
  EXPECT_EQ(l.cid, 4192);
  EXPECT_EQ(l.qid, 2);
  EXPECT_EQ(l.opcode, 2);
  EXPECT_EQ(l.nsid, 1u);
  ASSERT_EQ(ParseQemuNvmeLine(kRead, &l), QemuLineParse::kOk);
  EXPECT_EQ(l.kind, QemuNvmeLine::Kind::kRead);
  EXPECT_EQ(l.nlb, 8u);
  EXPECT_EQ(l.slba, 0x1f0u);
  ASSERT_EQ(ParseQemuNvmeLine(kWrite, &l), QemuLineParse::kOk);
  EXPECT_EQ(l.kind, QemuNvmeLine::Kind::kWrite);
  EXPECT_EQ(l.slba, 8u);
  ASSERT_EQ(ParseQemuNvmeLine(kDone, &l), QemuLineParse::kOk);
  EXPECT_EQ(l.kind, QemuNvmeLine::Kind::kCompletion);
  EXPECT_EQ(l.qid, 2);
  EXPECT_EQ(l.status, 0);
  ASSERT_EQ(ParseQemuNvmeLine("12@1.000002:pci_nvme_admin_cmd cid 7 sqid 0 opc 0x6 "
                              "opname 'NVME_ADM_CMD_IDENTIFY'",
                              &l),
            QemuLineParse::kOk);
  EXPECT_EQ(l.kind, QemuNvmeLine::Kind::kAdminCmd);
  EXPECT_EQ(l.opcode, 6);
  EXPECT_EQ(l.realtime_us, 1000002u);
}

TEST(ParseQemuNvmeLine, RefusesWhatItCannotTrust) {
  QemuNvmeLine l;
  EXPECT_EQ(ParseQemuNvmeLine("pci_nvme_io_cmd cid 1 nsid 0x1 sqid 1 opc 0x1 opname 'W'", &l),
            QemuLineParse::kNoTimestamp);
  EXPECT_EQ(ParseQemuNvmeLine("1@5.000001:pci_nvme_mmio_write addr 0x1000", &l),
            QemuLineParse::kOther);
  EXPECT_EQ(ParseQemuNvmeLine("some other text", &l), QemuLineParse::kOther);
  // cid beyond 16 bits, a missing field, a bad number.
  EXPECT_EQ(ParseQemuNvmeLine("1@5.000001:pci_nvme_io_cmd cid 70000 nsid 0x1 sqid 1 opc 0x1 "
                              "opname 'W'",
                              &l),
            QemuLineParse::kMalformed);
  EXPECT_EQ(ParseQemuNvmeLine("1@5.000001:pci_nvme_io_cmd cid 3 nsid 0x1 opc 0x1 opname 'W'", &l),
            QemuLineParse::kMalformed);
  EXPECT_EQ(ParseQemuNvmeLine("1@5.0000x1:pci_nvme_io_cmd cid 3 nsid 0x1 sqid 1 opc 0x1 "
                              "opname 'W'",
                              &l),
            QemuLineParse::kMalformed);
}

// The payload structs are packed: their members are compared as copies
// (unary +), since EXPECT_EQ binds references and a reference to a
// misaligned member is undefined behaviour (UBSan reports it).
template <typename T>
T Payload(const FollowedRecord& r) {
  T v;
  std::memcpy(&v, r.rec.fixed.data(), sizeof(v));
  return v;
}

TEST(QemuNvmeCommands, ACommandBecomesFetchNandComplete) {
  QemuNvmeCommands cmds(2, 1000000000);
  std::vector<FollowedRecord> out;
  QemuNvmeLine l;
  ASSERT_EQ(ParseQemuNvmeLine(kIo, &l), QemuLineParse::kOk);
  cmds.Feed(l, 1000000, &out);
  EXPECT_TRUE(out.empty()) << "the fetch waits for its read/write line";
  ASSERT_EQ(ParseQemuNvmeLine(kRead, &l), QemuLineParse::kOk);
  cmds.Feed(l, 1002000, &out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(ParseQemuNvmeLine(kDone, &l), QemuLineParse::kOk);
  cmds.Feed(l, 1123000, &out);
  ASSERT_EQ(out.size(), 3u);

  EXPECT_EQ(out[0].rec.event_id, FW_EV_CMD_FETCH);
  EXPECT_EQ(out[0].core, 1) << "sqid 2 of 2 cores: core 1";
  EXPECT_EQ(out[0].mono_ns, 1000000u) << "stamped when QEMU fetched it";
  const auto fetch = Payload<fw_cmd_fetch>(out[0]);
  EXPECT_EQ(+fetch.qid, 2);
  EXPECT_EQ(+fetch.cid, 4192);
  EXPECT_EQ(+fetch.opcode, FW_NVME_OPC_READ);
  EXPECT_EQ(+fetch.slba, 0x1f0u);
  EXPECT_EQ(+fetch.nlb, 7u) << "0's based";

  EXPECT_EQ(out[1].rec.event_id, FW_EV_NAND_READ);
  EXPECT_GT(out[1].mono_ns, out[0].mono_ns);
  EXPECT_LT(out[1].mono_ns, out[2].mono_ns);
  EXPECT_EQ(out[2].rec.event_id, FW_EV_CMD_COMPLETE);
  EXPECT_EQ(out[2].mono_ns, 1123000u);
  const auto done = Payload<fw_cmd_complete>(out[2]);
  EXPECT_EQ(+done.qid, 2);
  EXPECT_EQ(+done.cid, 4192);
  EXPECT_EQ(+done.latency, 123000u) << "ticks at 1 GHz from fetch to completion";
  EXPECT_EQ(cmds.counts().completed, 1u);
  ASSERT_EQ(cmds.commands().size(), 1u);
  EXPECT_EQ(cmds.commands()[0]["complete_mono_ns"], 1123000u);
}

// A latency field is the span between the stamps of the fetch and the
// completion, in ticks of the scaled clock, even when QEMU logs a line of
// another queue of the same core out of order.
TEST(QemuNvmeCommands, LatenciesAreTheSpansBetweenStampsOfOneCore) {
  QemuNvmeCommands cmds(2, 1000000000, /*time_scale=*/4);
  std::vector<FollowedRecord> out;
  QemuNvmeLine l;
  ASSERT_EQ(ParseQemuNvmeLine(kIo, &l), QemuLineParse::kOk);
  cmds.Feed(l, 1000000, &out);
  ASSERT_EQ(ParseQemuNvmeLine(kRead, &l), QemuLineParse::kOk);
  cmds.Feed(l, 1002000, &out);
  // sqid 4 is served by core 1 too; its fetch is logged at 1.1 ms, and the
  // completion of the read (sqid 2) after it, stamped 1.05 ms.
  ASSERT_EQ(ParseQemuNvmeLine("1@5.000001:pci_nvme_io_cmd cid 9 nsid 0x1 sqid 4 opc 0x0 "
                              "opname 'NVME_NVM_CMD_FLUSH'",
                              &l),
            QemuLineParse::kOk);
  cmds.Feed(l, 1100000, &out);
  ASSERT_EQ(ParseQemuNvmeLine(kDone, &l), QemuLineParse::kOk);
  cmds.Feed(l, 1050000, &out);
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 1; i < out.size(); i++) {
    EXPECT_EQ(out[i].core, 1);
    EXPECT_GE(out[i].mono_ns, out[i - 1].mono_ns) << "record " << i;
  }
  ASSERT_EQ(out[3].rec.event_id, FW_EV_CMD_COMPLETE);
  const auto done = Payload<fw_cmd_complete>(out[3]);
  EXPECT_EQ(+done.latency, 4 * (out[3].mono_ns - out[0].mono_ns));
  ASSERT_EQ(out[2].rec.event_id, FW_EV_NAND_READ);
  const auto read = Payload<fw_nand_op>(out[2]);
  EXPECT_EQ(+read.latency, 4 * (out[2].mono_ns - out[0].mono_ns));
}

TEST(QemuNvmeCommands, CountsWhatItCannotPair) {
  QemuNvmeCommands cmds(4, 1000000000);
  std::vector<FollowedRecord> out;
  QemuNvmeLine l;
  ASSERT_EQ(ParseQemuNvmeLine(kDone, &l), QemuLineParse::kOk);
  cmds.Feed(l, 5, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(cmds.counts().completion_without_fetch, 1u);
  // A flush (no read/write line) is released by the next line.
  ASSERT_EQ(ParseQemuNvmeLine("1@5.000001:pci_nvme_io_cmd cid 9 nsid 0x1 sqid 3 opc 0x0 "
                              "opname 'NVME_NVM_CMD_FLUSH'",
                              &l),
            QemuLineParse::kOk);
  cmds.Feed(l, 10, &out);
  cmds.Feed(l, 11, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].core, 2);
  EXPECT_EQ(cmds.counts().refetched_in_flight, 1u);
  cmds.Flush(&out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(QemuNvmeFollower, FollowsALogWrittenInPieces) {
  char path[] = "/tmp/qemu_nvme_follow_unittest.XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::atomic<bool> stop{false};
  std::vector<FollowedRecord> got;
  QemuNvmeFollower follower(path, 2, 1000000000);
  std::thread t([&] {
    EXPECT_TRUE(follower.Run(stop, [&](std::vector<FollowedRecord>& r) {
                          got.insert(got.end(), r.begin(), r.end());
                        }).ok());
  });
  // Stamped now, so that they map to a positive CLOCK_MONOTONIC.
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const std::string stamp = "7@" + std::to_string(now.tv_sec) + ".";
  const std::string text =
      stamp + "000100:pci_nvme_io_cmd cid 5 nsid 0x1 sqid 1 opc 0x1 opname 'W'\n" + stamp +
      "000102:pci_nvme_write cid 5 opname 'W' nsid 1 nlb 1 count 512 lba 0x0\n" + stamp +
      "000223:pci_nvme_enqueue_req_completion cid 5 cqid 1 dw0 0x0 dw1 0x0 status 0x0\n";
  // Half a line, a pause, the rest: the follower must not parse a piece.
  ASSERT_EQ(write(fd, text.data(), 40), 40);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(write(fd, text.data() + 40, text.size() - 40),
            static_cast<ssize_t>(text.size() - 40));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop.store(true);
  t.join();
  close(fd);
  unlink(path);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].rec.event_id, FW_EV_CMD_FETCH);
  EXPECT_EQ(got[2].rec.event_id, FW_EV_CMD_COMPLETE);
  // Wall clock mapped to CLOCK_MONOTONIC: the difference survives.
  EXPECT_NEAR(static_cast<double>(got[2].mono_ns - got[0].mono_ns), 123000.0, 1000.0);
  const nlohmann::json truth = follower.TruthJson();
  EXPECT_EQ(truth["malformed_lines"], 0u);
  EXPECT_EQ(truth["completed"], 1u);
}

}  // namespace
}  // namespace hmbtrace
