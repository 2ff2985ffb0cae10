// SPDX-License-Identifier: GPL-2.0-only
#include "live/record.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "capture/fixture_testutil.h"
#include "hmbtrace/status_testutil.h"
#include "live/fake_tree_testutil.h"

namespace hmbtrace {
namespace {

namespace fs = std::filesystem;

// A fake trace-cmd: a shell script that writes its arguments, one a line,
// to argv.txt, then does `body` (which may use $out, the -o path).
class FakeTraceCmd {
 public:
  FakeTraceCmd(const FakeTrees& trees, const std::string& body)
      : dir_(fs::path(trees.sysfs()).parent_path().parent_path().parent_path() / "bin") {
    fs::create_directories(dir_);
    const std::string argv = "'" + argv_file() + "'";
    std::string script = "#!/bin/sh\n";
    script += "printf '%s\\n' \"$@\" >" + argv + ".tmp\n";
    script += "mv " + argv + ".tmp " + argv + "\n";
    script += "out=\nprev=\n";
    script += "for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n";
    FakeTrees::Write(path(), script + body + "\n");
    chmod(path().c_str(), 0755);
  }
  std::string dir() const { return dir_.string(); }
  std::string path() const { return (dir_ / "trace-cmd").string(); }
  std::string argv_file() const { return (dir_ / "argv.txt").string(); }
  std::string Argv() const { return FakeTrees::Read(argv_file()); }
  bool Ran() const { return fs::exists(argv_file()); }

 private:
  fs::path dir_;
};

const std::string kCopyFixture = "cp '" + FixturePath() + "' \"$out\"\nexit 0";

struct LiveTrees {
  LiveTrees() {
    trees.AddDevice("0000:00:04.0");
    trees.AddTracefs();
    trees.AddInstance();
    options.sysfs_dir = trees.sysfs();
    options.tracefs_dir = trees.tracefs();
    options.output = fs::path(trees.tracefs()).parent_path().parent_path().string() + "/out.dat";
  }
  FakeTrees trees;
  RecordOptions options;
};

int RunCapturingStderr(const RecordOptions& options, std::string* err) {
  testing::internal::CaptureStderr();
  const int rc = RunRecord(options);
  *err = testing::internal::GetCapturedStderr();
  return rc;
}

TEST(Record, DurationRunsTraceCmdOnTheInstanceWithItsEventsAroundSleep) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, kCopyFixture);
  s.options.trace_cmd = fake.path();
  s.options.duration = 3;
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_EQ(fake.Argv(),
            "record\n-B\nhmb\n-e\nhmb\n-o\n" + TraceCmdOutput(s.options) + "\nsleep\n3\n");
}

TEST(Record, FractionalDurationIsPassedToSleepAsDecimal) {
  RecordOptions o;
  o.duration = 0.5;
  o.nvme = false;
  EXPECT_EQ(TraceCmdArgv("/t", o),
            (std::vector<std::string>{"/t", "record", "-B", "hmb", "-e", "hmb", "-o",
                                      "trace.dat.drain-time", "sleep", "0.5"}));
}

TEST(Record, NvmeEventsGoToTheTopInstanceOnTheLocalClock) {
  RecordOptions o;
  o.duration = 1;
  EXPECT_EQ(TraceCmdArgv("/t", o),
            (std::vector<std::string>{"/t", "record", "-C", "local", "-e", "nvme:nvme_setup_cmd",
                                      "-e", "nvme:nvme_complete_rq", "-B", "hmb", "-e", "hmb", "-o",
                                      "trace.dat.drain-time", "sleep", "1"}));
}

TEST(Record, AClockPutsBothBuffersOnIt) {
  RecordOptions o;
  o.duration = 1;
  o.clock = "mono";
  EXPECT_EQ(TraceCmdArgv("/t", o),
            (std::vector<std::string>{"/t", "record", "-C", "mono", "-e", "nvme:nvme_setup_cmd",
                                      "-e", "nvme:nvme_complete_rq", "-B", "hmb", "-C", "mono",
                                      "-e", "hmb", "-o", "trace.dat.drain-time", "sleep", "1"}));
  o.nvme = false;
  EXPECT_EQ(TraceCmdArgv("/t", o),
            (std::vector<std::string>{"/t", "record", "-B", "hmb", "-C", "mono", "-e", "hmb",
                                      "-o", "trace.dat.drain-time", "sleep", "1"}));
}

TEST(Record, NvmeEventsAreRecordedWhenTracefsHasThem) {
  LiveTrees s;
  for (const char* ev : {"nvme_setup_cmd", "nvme_complete_rq"})
    fs::create_directories(s.trees.tracefs() + "/events/nvme/" + ev);
  FakeTraceCmd fake(s.trees, kCopyFixture);
  s.options.trace_cmd = fake.path();
  s.options.duration = 2;
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_EQ(fake.Argv(),
            "record\n-C\nlocal\n-e\nnvme:nvme_setup_cmd\n-e\nnvme:nvme_complete_rq\n"
            "-B\nhmb\n-e\nhmb\n-o\n" +
                TraceCmdOutput(s.options) + "\nsleep\n2\n");
  EXPECT_EQ(err.find("no nvme events"), std::string::npos) << err;
}

TEST(Record, WithoutTheNvmeDriverItSaysSoAndRecordsTheRest) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, kCopyFixture);
  s.options.trace_cmd = fake.path();
  s.options.duration = 2;
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_NE(err.find("no nvme events in tracefs"), std::string::npos) << err;
}

TEST(Record, CommandFollowsTheOptionsUnchanged) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, kCopyFixture);
  s.options.trace_cmd = fake.path();
  s.options.command = {"dd", "if=/dev/zero", "-x", "two words"};
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_EQ(fake.Argv(), "record\n-B\nhmb\n-e\nhmb\n-o\n" + TraceCmdOutput(s.options) +
                             "\ndd\nif=/dev/zero\n-x\ntwo words\n");
}

TEST(Record, SummaryCountsComeFromTheCapture) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, kCopyFixture);
  s.options.trace_cmd = fake.path();
  s.options.duration = 1;
  std::string err;
  ASSERT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  uint64_t total = 0;
  for (int core = 0; core < 4; core++) {
    const std::string line = "  dev 0 core " + std::to_string(core) + ": " +
                             std::to_string(kFixtureRecordsPerCore[core]) + " records";
    EXPECT_NE(err.find(line), std::string::npos) << line << "\n" << err;
    total += kFixtureRecordsPerCore[core];
  }
  EXPECT_NE(err.find(s.options.output + ": " + std::to_string(total) + " records, 0 lost"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("decode with: hmbtrace-cmd report -i " + s.options.output), std::string::npos)
      << err;
}

// The first hmb_record of `path`: whether it carries the retime mark.
bool FirstRecordRetimed(const std::string& path) {
  bool retimed = false;
  std::string error;
  EXPECT_TRUE(StatusOk(ReadCapture(path,
                                   [&retimed](const CaptureEvent& ev) {
                                     if (ev.kind != CaptureKind::kRecord)
                                       return true;
                                     retimed = ev.retimed;
                                     return false;
                                   }),
                       &error))
      << error;
  return retimed;
}

TEST(Record, TheCaptureIsRetimedIntoOutputAndTraceCmdsFileRemoved) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, "cp '" HMBTRACE_CLOCK_FIXTURE "' \"$out\"\nexit 0");
  s.options.trace_cmd = fake.path();
  s.options.duration = 1;
  std::string err;
  ASSERT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_EQ(TraceCmdOutput(s.options), s.options.output + ".drain-time");
  EXPECT_TRUE(FirstRecordRetimed(s.options.output));
  EXPECT_FALSE(fs::exists(TraceCmdOutput(s.options)));
  // clock-small.dat: 4 of its 11 records have no fit.
  EXPECT_NE(err.find("4 of 11 records had no clock fit"), std::string::npos) << err;
}

TEST(Record, NoRetimeWritesTraceCmdsCaptureAsItIs) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, "cp '" HMBTRACE_CLOCK_FIXTURE "' \"$out\"\nexit 0");
  s.options.trace_cmd = fake.path();
  s.options.duration = 1;
  s.options.retime = false;
  std::string err;
  ASSERT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_EQ(fake.Argv(), "record\n-B\nhmb\n-e\nhmb\n-o\n" + s.options.output + "\nsleep\n1\n");
  EXPECT_FALSE(FirstRecordRetimed(s.options.output));
}

TEST(Record, WithoutClockFitsTheCaptureIsKeptAtDrainTime) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, kCopyFixture);  // no hmb_clock in its formats
  s.options.trace_cmd = fake.path();
  s.options.duration = 1;
  std::string err;
  ASSERT_EQ(RunCapturingStderr(s.options, &err), 0) << err;
  EXPECT_NE(err.find("no clock fits"), std::string::npos) << err;
  EXPECT_TRUE(fs::exists(s.options.output));
  EXPECT_FALSE(fs::exists(TraceCmdOutput(s.options)));
}

TEST(Record, ModuleNotLoadedSaysHowToLoadItAndRunsNothing) {
  LiveTrees s;
  fs::remove_all(s.trees.sysfs());
  FakeTraceCmd fake(s.trees, kCopyFixture);
  s.options.trace_cmd = fake.path();
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 1);
  EXPECT_NE(err.find("hmb_trace.ko is not loaded (modprobe hmb_trace"), std::string::npos) << err;
  EXPECT_FALSE(fake.Ran());
}

TEST(Record, MissingInstanceSaysTheModuleCreatesIt) {
  LiveTrees s;
  fs::remove_all(s.trees.instance());
  std::string trace_cmd, error;
  EXPECT_FALSE(StatusOk(CheckRecordPreconditions(s.options, "/nonexistent"), &trace_cmd, &error));
  EXPECT_NE(error.find("no trace instance"), std::string::npos) << error;
}

TEST(Record, TraceCmdMissingFromPathSaysHowToInstallIt) {
  LiveTrees s;
  std::string trace_cmd, error;
  EXPECT_FALSE(StatusOk(CheckRecordPreconditions(s.options, s.trees.sysfs() + ":/nonexistent"),
                        &trace_cmd, &error));
  EXPECT_NE(error.find("trace-cmd not found in PATH"), std::string::npos) << error;
  EXPECT_NE(error.find("apt-get install trace-cmd"), std::string::npos) << error;
}

TEST(Record, TraceCmdIsFoundInPath) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, kCopyFixture);
  std::string trace_cmd, error;
  ASSERT_TRUE(StatusOk(CheckRecordPreconditions(s.options, "/nonexistent:" + fake.dir()),
                       &trace_cmd, &error))
      << error;
  EXPECT_EQ(trace_cmd, fake.path());
}

TEST(Record, GivenTraceCmdThatIsNotExecutableIsRefused) {
  LiveTrees s;
  s.options.trace_cmd = s.trees.sysfs() + "/0000:00:04.0/state";
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 1);
  EXPECT_NE(err.find("is not an executable file"), std::string::npos) << err;
  EXPECT_NE(err.find("apt-get install trace-cmd"), std::string::npos) << err;
}

TEST(Record, FailingTraceCmdIsReportedWithItsExitStatus) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, "echo 'trace-cmd: no such instance' >&2\nexit 3");
  s.options.trace_cmd = fake.path();
  s.options.duration = 1;
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 1);
  EXPECT_NE(err.find("trace-cmd exited with status 3"), std::string::npos) << err;
  EXPECT_EQ(err.find("decode with"), std::string::npos) << err;
}

TEST(Record, CaptureWithoutHmbEventsFails) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees, ": >\"$out\"\nexit 0");  // an empty file
  s.options.trace_cmd = fake.path();
  std::string err;
  EXPECT_EQ(RunCapturingStderr(s.options, &err), 1);
  EXPECT_EQ(err.find("decode with"), std::string::npos) << err;
}

// Ctrl-C (here: SIGINT sent to this process alone) reaches trace-cmd, which
// then writes its file and exits 0; the summary follows.
TEST(Record, SigintIsForwardedAndEndsTheRecordingCleanly) {
  LiveTrees s;
  FakeTraceCmd fake(s.trees,
                    "sleep 30 &\nchild=$!\n"
                    "trap 'kill $child; " +
                        kCopyFixture +
                        "' INT\n"
                        "wait\nexit 4");
  s.options.trace_cmd = fake.path();
  std::thread interrupter([&fake]() {
    for (int i = 0; i < 1000 && !fake.Ran(); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the trap is set
    kill(getpid(), SIGINT);
  });
  std::string err;
  const auto start = std::chrono::steady_clock::now();
  const int rc = RunCapturingStderr(s.options, &err);
  interrupter.join();
  EXPECT_EQ(rc, 0) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_NE(err.find("decode with"), std::string::npos) << err;
}

}  // namespace
}  // namespace hmbtrace
