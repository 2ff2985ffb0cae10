// SPDX-License-Identifier: GPL-2.0-only
//
// For tests: fake /sys/class/hmb_trace and /sys/kernel/tracing trees in a
// temporary directory, shaped like what hmb_trace.ko and the kernel make
// (regular files; sysfs symlinks are plain directories here). Nothing
// here ever touches the real /sys.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_FAKE_TREE_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_FAKE_TREE_TESTUTIL_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hmb_trace_events_abi.h"

namespace hmbtrace {

class FakeTrees {
 public:
  FakeTrees() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hmbtrace-fake.XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      ADD_FAILURE() << "mkdtemp failed";
    root_ = tmpl;
  }
  ~FakeTrees() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeTrees(const FakeTrees&) = delete;
  FakeTrees& operator=(const FakeTrees&) = delete;

  std::string sysfs() const { return (root_ / "sys/class/hmb_trace").string(); }
  std::string tracefs() const { return (root_ / "sys/kernel/tracing").string(); }
  std::string instance() const { return tracefs() + "/instances/hmb"; }

  static void Write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  static std::string Read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // One area as the module shows it: 4 cores on 2 CPUs.
  void AddDevice(const std::string& name, const std::string& dictionary = "DICT") {
    const std::filesystem::path d = std::filesystem::path(sysfs()) / name;
    Write(d / "index", "0\n");
    Write(d / "state", "attached\n");
    Write(d / "broken_reason", "none\n");
    Write(d / "build_id", "00112233445566778899aabbccddeeff00112233\n");
    Write(d / "producer_gen", "3\n");
    Write(d / "page_size", "4096\n");
    Write(d / "nr_cores", "4\n");
    Write(d / "pages_per_core", "64\n");
    Write(d / "area_len", "2097152\n");
    Write(d / "mapped_len", "4194304\n");
    Write(d / "dict_offset", "4096\n");
    Write(d / "dict_len", "4096\n");
    Write(d / "ring_offset", "8192\n");
    Write(d / "clock_hz", "1000000000\n");
    Write(d / "resets", "1\n");
    Write(d / "core_cpu", "0 1 0 1\n");
    Write(d / "delivered", "100 200 300 400\n");
    Write(d / "lost/overwritten", "0 5 0 0\n");
    Write(d / "lost/torn", "0 0 1 0\n");
    Write(d / "lost/invalid", "0 0 0 0\n");
    Write(d / "lost/reset", "0 0 0 2\n");
    // The consumer's error names, and the module's own bad_dictionary.
    for (const char* e : {HMB_ABI_NAMES(HMB_AREA_ERROR_LIST), "bad_dictionary"})
      Write(d / "errors" / e, "0\n");
    Write(d / "errors/bad_record", "7\n");
    Write(d / "dictionary", dictionary);
  }

  // The tracefs root and the hmb instance with its events and 2 CPUs.
  void AddTracefs() {
    const std::filesystem::path t = tracefs();
    Write(t / "tracing_on", "1\n");
    std::filesystem::create_directories(t / "instances");
  }
  void AddInstance() {
    const std::filesystem::path i = instance();
    Write(i / "tracing_on", "1\n");
    Write(i / "buffer_size_kb", "16384\n");
    Write(i / "trace_marker", "");
    Write(i / "events/hmb/enable", "X\n");
    Write(i / "events/hmb/hmb_record/enable", "1\n");
    Write(i / "events/hmb/hmb_lost/enable", "0\n");
    Write(i / "events/hmb/hmb_state/enable", "1\n");
    Write(i / "events/hmb/hmb_dict/enable", "0\n");
    for (int cpu = 0; cpu < 2; cpu++)
      Write(i / "per_cpu" / ("cpu" + std::to_string(cpu)) / "stats",
            "entries: " + std::to_string(10 + cpu) +
                "\noverrun: 0\ncommit overrun: 0\nbytes: 1234\noldest event ts:    12.345678\n"
                "now ts:    13.000000\ndropped events: " +
                std::to_string(cpu) + "\nread events: 99\n");
  }

 private:
  std::filesystem::path root_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_FAKE_TREE_TESTUTIL_H_
