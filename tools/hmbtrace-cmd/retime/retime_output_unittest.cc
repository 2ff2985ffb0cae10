// SPDX-License-Identifier: GPL-2.0-only
#include "retime/retime_output_c.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capture/capture.h"
#include "hmbtrace/status_testutil.h"
#include "retime/temp_dir_testutil.h"

namespace hmbtrace {
namespace {

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// How the writer under test gets the pages.
enum class Direct {
  kNone,        // every CPU from its file (retime_output_write)
  kFirst,       // the first CPU with data straight into the output
  kInInstance,  // the same, the top buffer's CPUs all empty
};

// Each CPU of each buffer of `capture` given pages of its own (sizes
// varied, some CPUs empty, one page not page sized), written by both
// writers: the same bytes.
void ExpectSameAsLibtracecmd(const std::string& capture,
                             int file_version,
                             Direct direct = Direct::kNone) {
  TempDir dir;
  CaptureFile file;
  std::string error;
  ASSERT_TRUE(StatusOk(file.Open(capture), &error)) << error;
  const std::vector<CaptureBuffer> buffers = file.buffers();
  ASSERT_FALSE(buffers.empty());
  std::vector<std::vector<std::string>> names(buffers.size());
  std::vector<std::vector<char*>> paths(buffers.size());
  std::vector<retime_output_buffer> out;
  int n = 0;
  for (size_t b = 0; b < buffers.size(); b++) {
    for (int c = 0; c < buffers[b].cpus; c++, n++) {
      const std::string path = dir.File("cpu" + std::to_string(n));
      // 0, 3 pages, 1 page, 7 pages and a half, ...
      size_t size = n % 4 == 0 ? 0 : n % 4 == 1 ? 3 * 4096 : n % 4 == 2 ? 4096 : 7 * 4096 + 2048;
      if (direct == Direct::kInInstance && b == 0)
        size = 0;
      std::string data(size, '\0');
      for (size_t i = 0; i < size; i++)
        data[i] = static_cast<char>(n * 31 + i * 7);
      std::ofstream(path, std::ios::binary) << data;
      names[b].push_back(path);
    }
    for (std::string& p : names[b])
      paths[b].push_back(p.data());
    out.push_back({buffers[b].name.c_str(), buffers[b].cpus, paths[b].data()});
  }
  char err[256] = "";
  const std::string ours = dir.File("ours.dat"), theirs = dir.File("theirs.dat");
  if (direct == Direct::kNone) {
    ASSERT_EQ(retime_output_write(capture.c_str(), ours.c_str(), file_version, out.data(),
                                  static_cast<int>(out.size()), err, sizeof(err)),
              0)
        << err;
  } else {
    // The first CPU with data, its pages written where begin says.
    size_t b = 0;
    int c = 0;
    std::string data;
    for (; b < names.size(); b++) {
      for (c = 0; c < static_cast<int>(names[b].size()); c++)
        if (!(data = Contents(names[b][static_cast<size_t>(c)])).empty())
          break;
      if (c < static_cast<int>(names[b].size()))
        break;
    }
    ASSERT_LT(b, names.size());
    if (direct == Direct::kInInstance) {
      ASSERT_GT(b, 0u) << capture << " has no instance with CPUs";
    }
    retime_output* o = retime_output_begin(capture.c_str(), ours.c_str(), file_version, out.data(),
                                           static_cast<int>(out.size()), static_cast<int>(b), c);
    ASSERT_NE(o, nullptr);
    {
      std::fstream f(ours, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(retime_output_direct_offset(o));
      f << data;
      ASSERT_TRUE(f.good());
    }
    ASSERT_EQ(retime_output_finish(o, out.data(), static_cast<int>(out.size()),
                                   static_cast<long long>(data.size()), err, sizeof(err)),
              0)
        << err;
  }
  ASSERT_EQ(
      retime_output_write_by_libtracecmd(capture.c_str(), theirs.c_str(), file_version, out.data(),
                                         static_cast<int>(out.size()), err, sizeof(err)),
      0)
      << err;
  const std::string a = Contents(ours), b = Contents(theirs);
  if (file_version == 6) {  // the data uncompressed
    EXPECT_GT(a.size(), 4096u * 11);
  }
  EXPECT_TRUE(a == b) << capture << " version " << file_version << ": " << a.size() << " bytes, "
                      << b.size() << " by libtracecmd";
}

TEST(RetimeOutput, Version6DataAsLibtracecmdWritesIt) {
  ExpectSameAsLibtracecmd(HMBTRACE_FIXTURE, 6);
  ExpectSameAsLibtracecmd(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE, 6);  // an instance after the top
  ExpectSameAsLibtracecmd(HMBTRACE_MARKERS_FIXTURE, 6);
  ExpectSameAsLibtracecmd(HMBTRACE_V7_FIXTURE, 6);  // written as version 6
  ExpectSameAsLibtracecmd(HMBTRACE_CLOCK_FIXTURE, 6);
}

TEST(RetimeOutput, Version6FirstCpuWrittenInPlace) {
  ExpectSameAsLibtracecmd(HMBTRACE_FIXTURE, 6, Direct::kFirst);
  ExpectSameAsLibtracecmd(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE, 6, Direct::kFirst);
  ExpectSameAsLibtracecmd(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE, 6, Direct::kInInstance);
  ExpectSameAsLibtracecmd(HMBTRACE_CLOCK_FIXTURE, 6, Direct::kInInstance);
  ExpectSameAsLibtracecmd(HMBTRACE_V7_FIXTURE, 6, Direct::kFirst);
}

TEST(RetimeOutput, Version7IsNotBegun) {
  TempDir dir;
  CaptureFile file;
  std::string error;
  ASSERT_TRUE(StatusOk(file.Open(HMBTRACE_V7_FIXTURE), &error)) << error;
  std::vector<retime_output_buffer> out;
  for (const CaptureBuffer& b : file.buffers())
    out.push_back({b.name.c_str(), b.cpus, nullptr});
  const std::string path = dir.File("out.dat");
  EXPECT_EQ(retime_output_begin(HMBTRACE_V7_FIXTURE, path.c_str(), 0, out.data(),
                                static_cast<int>(out.size()), 0, 0),
            nullptr);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "left behind";
}

TEST(RetimeOutput, Version7StaysWithLibtracecmd) {
  ExpectSameAsLibtracecmd(HMBTRACE_V7_FIXTURE, 0);
  ExpectSameAsLibtracecmd(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE, 7);
}

}  // namespace
}  // namespace hmbtrace
