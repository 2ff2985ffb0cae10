// SPDX-License-Identifier: GPL-2.0-only
//
// For tests: the small real capture and damaged copies of it.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FIXTURE_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FIXTURE_TESTUTIL_H_

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capture/capture.h"
#include "hmbtrace/status_testutil.h"

namespace hmbtrace {

// A 96 KiB trace.dat cut from a real QEMU guest capture (see
// tests/data/make_fixture.py): 4 firmware cores on 2 CPUs,
// records before and after the dictionary, 2 hmb_state, 8 hmb_dict.
inline std::string FixturePath() {
  return HMBTRACE_FIXTURE;
}

// 104 KiB cut from the "markers" scenario (testdata/markers-small.dat.license
// says how): one trace_marker line, "HMBMARK n=39" at 11.786078 on CPU 0,
// between firmware records; 2 hmb_state, 8 hmb_dict.
inline std::string MarkersFixturePath() {
  return HMBTRACE_MARKERS_FIXTURE;
}
inline constexpr uint64_t kMarkersFixtureRecordsPerCore[] = {288, 298, 293, 304};

// Synthetic, with the host's nvme events (testdata/make_cmd_join_fixture.py
// says how): 24 host commands on I/O queues 1..4 of nvme0 served by dev 0's
// cores 0 and 1, on trace clock "local"; commands 5 and 17 (in setup
// order) have no firmware record, command 23 no nvme_complete_rq; two
// trace_marker lines in the top buffer, pid 4242: "fixture start" at
// 1.000002000 s and "fixture mid" at 1.000012000 s.
inline std::string CmdJoinFixturePath() {
  return HMBTRACE_CMD_JOIN_FIXTURE;
}
// The same 24 commands, all served, recorded on trace clock "boot".
inline std::string CmdJoinBootFixturePath() {
  return HMBTRACE_CMD_JOIN_BOOT_FIXTURE;
}
// The same 24 commands, all served, with the nvme events in the hmb
// instance on "local" (`trace-cmd record -B hmb -e hmb -e nvme:...`) and
// none in the top buffer, which is on "boot" (no fit).
inline std::string CmdJoinInstanceFixturePath() {
  return HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE;
}

// Synthetic, with the module's clock fits (hmb_clock), written by
// tests/data/make_clock_capture.py (its docstring has the
// timeline): dev 0, cores 0 and 1 on CPUs 0 and 1, 11 records; three
// before any fit; a record drained after the marker "host write" that
// happened before it; a stale fit; a reset to producer_gen 2 with a record
// before its fit; a record drained 220 ms after it happened, past the
// markers "checkpoint" and "after the checkpoint".
inline std::string ClockFixturePath() {
  return HMBTRACE_CLOCK_FIXTURE;
}

// What `trace-cmd report -N -i record-small.dat | grep -c 'hmb_record.*core=K'`
// prints for K = 0..3.
inline constexpr uint64_t kFixtureRecordsPerCore[] = {259, 257, 250, 269};

inline std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A file in the test's temporary directory, removed at the end.
class TempFile {
 public:
  TempFile(const std::string& name, const std::vector<uint8_t>& bytes) {
    const char* dir = std::getenv("TMPDIR");
    path_ =
        std::string(dir ? dir : "/tmp") + "/hmbtrace-cmd-" + std::to_string(getpid()) + "-" + name;
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<CaptureEvent> ReadAll(const std::string& path, std::string* error) {
  // Without data and name: those die with the callback.
  std::vector<CaptureEvent> out;
  (void)StatusOk(ReadCapture(path,
                             [&out](const CaptureEvent& ev) {
                               out.push_back(ev);
                               out.back().data = {};
                               out.back().name = {};
                               return true;
                             }),
                 error);
  return out;
}

// The fixture with the first hmb_dict chunk at offset 1024 (of the two
// copies of the dictionary it holds) claiming offset 70000 instead, past
// its total_len of 3888. The bytes are found, not hard-coded: the u32s
// producer_gen 1, total_len 3888, offset 1024 of the event's fields.
inline std::vector<uint8_t> FixtureWithLyingDictChunk() {
  std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  const uint8_t pattern[] = {1, 0, 0, 0, 0x30, 0x0f, 0, 0, 0, 4, 0, 0};
  for (size_t i = 0; i + sizeof(pattern) <= bytes.size(); i++) {
    if (std::equal(std::begin(pattern), std::end(pattern), bytes.begin() + static_cast<long>(i))) {
      const uint32_t lie = 70000;
      for (int b = 0; b < 4; b++)
        bytes[i + 8 + static_cast<size_t>(b)] = static_cast<uint8_t>(lie >> (8 * b));
      return bytes;
    }
  }
  ADD_FAILURE() << "no hmb_dict chunk at offset 1024 in the fixture";
  return bytes;
}

// Every line `report` prints for `path`.
template <typename Reporter>
std::vector<std::string> ReportLines(const std::string& path, Reporter& reporter) {
  std::vector<std::string> lines;
  std::string error;
  EXPECT_TRUE(StatusOk(ReadCapture(path,
                                   [&](const CaptureEvent& ev) {
                                     const std::string text = reporter.Line(ev);
                                     size_t start = 0;
                                     for (size_t nl;
                                          (nl = text.find('\n', start)) != std::string::npos;
                                          start = nl + 1)
                                       lines.push_back(text.substr(start, nl - start));
                                     return true;
                                   }),
                       &error))
      << error;
  return lines;
}

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FIXTURE_TESTUTIL_H_
