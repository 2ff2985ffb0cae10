// SPDX-License-Identifier: GPL-2.0-only
#include "dump/devcoredump.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "decode_test_util.h"
#include "dump/dump_writer_testutil.h"
#include "hmbtrace/status_testutil.h"

namespace hmbtrace {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteBytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A fake /sys/class/devcoredump: devcd1 is ours (of 0000:00:04.0),
// devcd2 another driver's.
class FakeDevcoredump : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/devcoredump_unittest.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    sysfs_ = root_ / "devcoredump";
    out_ = root_ / "out";
    fs::create_directories(sysfs_ / "devcd1");
    fs::create_directories(sysfs_ / "devcd2");
    fs::create_directories(out_);
    ours_ = test::WriteDump(test::SmallDump(test::ProduceDictionary(test::RealisticEvents())));
    WriteBytes(sysfs_ / "devcd1" / "data", ours_);
    fs::create_directory_symlink("../../devices/pci0000:00/0000:00:04.0",
                                 sysfs_ / "devcd1" / "failing_device");
    WriteBytes(sysfs_ / "devcd2" / "data", {0x7f, 'E', 'L', 'F', 1, 2, 3, 4, 5, 6, 7, 8});
  }
  void TearDown() override { fs::remove_all(root_); }

  SaveOptions Options() const {
    SaveOptions o;
    o.sysfs_dir = sysfs_;
    o.dir = out_;
    return o;
  }

  fs::path root_, sysfs_, out_;
  std::vector<uint8_t> ours_;
};

TEST_F(FakeDevcoredump, SavesOursDismissesItAndLeavesTheOtherAlone) {
  std::vector<SavedDump> saved;
  std::string error;
  ASSERT_TRUE(StatusOk(SaveDevcoredumps(Options(), &saved), &error)) << error;
  ASSERT_EQ(saved.size(), 1u);
  const fs::path want = out_ / "hmb-nvme0-20251204T145342Z-3.hmbdump";
  EXPECT_EQ(saved[0].path, want.string());
  EXPECT_EQ(saved[0].devcd, "devcd1");
  EXPECT_EQ(saved[0].device, "0000:00:04.0");
  const std::string copy = ReadText(want);
  EXPECT_EQ(std::vector<uint8_t>(copy.begin(), copy.end()), ours_);
  // Dismissed: "1" written to its data, as `echo 1 >` does.
  EXPECT_EQ(ReadText(sysfs_ / "devcd1" / "data"), "1");
  // The other driver's: neither copied nor written.
  EXPECT_EQ(ReadText(sysfs_ / "devcd2" / "data").size(), 12u);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out_))
    files++;
  EXPECT_EQ(files, 1u);  // no temporary left behind
  EXPECT_NE(saved[0].line.find("devcd1 of 0000:00:04.0, area nvme0, generation 3, disabling, 6 "
                               "records"),
            std::string::npos)
      << saved[0].line;
}

TEST_F(FakeDevcoredump, KeepLeavesTheDevcoredumpAndASecondCopyGetsItsOwnName) {
  SaveOptions o = Options();
  o.keep = true;
  std::vector<SavedDump> saved;
  ASSERT_TRUE(SaveDevcoredumps(o, &saved).ok());
  ASSERT_TRUE(SaveDevcoredumps(o, &saved).ok());
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[1].path, (out_ / "hmb-nvme0-20251204T145342Z-3-1.hmbdump").string());
  EXPECT_EQ(ReadText(sysfs_ / "devcd1" / "data").size(), ours_.size());
}

// --wait: a dump that comes while it watches is saved within a second or
// two; SIGTERM ends it with exit code 0.
TEST_F(FakeDevcoredump, WaitSavesDumpsAsTheyComeUntilSigterm) {
  std::thread later([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // Made whole, then put in place: the watcher never sees half of it.
    fs::create_directories(root_ / "devcd7");
    test::TestDump d = test::SmallDump({});
    d.producer_gen = 4;
    WriteBytes(root_ / "devcd7" / "data", test::WriteDump(d));
    fs::rename(root_ / "devcd7", sysfs_ / "devcd7");
    for (int i = 0; i < 50 && !fs::exists(out_ / "hmb-nvme0-20251204T145342Z-4.hmbdump"); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(getpid(), SIGTERM);
  });
  testing::internal::CaptureStdout();
  const int rc = RunDumpSave(Options(), /*wait=*/true);
  const std::string out = testing::internal::GetCapturedStdout();
  later.join();
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(fs::exists(out_ / "hmb-nvme0-20251204T145342Z-3.hmbdump")) << out;
  EXPECT_TRUE(fs::exists(out_ / "hmb-nvme0-20251204T145342Z-4.hmbdump")) << out;
  EXPECT_EQ(ReadText(sysfs_ / "devcd7" / "data"), "1");
  EXPECT_NE(out.find("devcd1"), std::string::npos) << out;
  EXPECT_NE(out.find("devcd7"), std::string::npos) << out;
}

TEST_F(FakeDevcoredump, NoDevcoredumpDirectorySaysTheKernelOption) {
  SaveOptions o = Options();
  o.sysfs_dir = (root_ / "none").string();
  std::vector<SavedDump> saved;
  const Status s = SaveDevcoredumps(o, &saved);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no devcoredump support in this kernel (CONFIG_DEV_COREDUMP)"),
            std::string::npos)
      << s.message();
}

TEST_F(FakeDevcoredump, AnUnreadableDataFileSaysRunAsRoot) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root reads a file of mode 0";
  chmod((sysfs_ / "devcd1" / "data").c_str(), 0);
  std::vector<SavedDump> saved;
  const Status s = SaveDevcoredumps(Options(), &saved);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("run as root"), std::string::npos) << s.message();
}

TEST_F(FakeDevcoredump, TheEnvironmentNamesTheSysfsDirectory) {
  setenv(kDevcoredumpDirEnv, sysfs_.c_str(), 1);
  EXPECT_EQ(DevcoredumpDir(), sysfs_.string());
  unsetenv(kDevcoredumpDirEnv);
  EXPECT_EQ(DevcoredumpDir(), kDefaultDevcoredumpDir);
}

TEST(DumpFileName, IsAreaTimeAndGenerationWithASafeName) {
  EXPECT_EQ(DumpFileName("nvme0", 1764860022123456789ull, 3),
            "hmb-nvme0-20251204T145342Z-3.hmbdump");
  EXPECT_EQ(DumpFileName("a/b c", 0, 1), "hmb-a_b_c-19700101T000000Z-1.hmbdump");
  EXPECT_EQ(DumpFileName("", 0, 1), "hmb-area-19700101T000000Z-1.hmbdump");
}

}  // namespace
}  // namespace hmbtrace
