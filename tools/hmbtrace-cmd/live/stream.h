// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd stream: the live "hmb" instance, decoded as it comes, in
// the line format of `hmbtrace-cmd report`.
//
// It enables the instance's hmb events (and puts every one back as it was
// when it ends, also on SIGINT/SIGTERM), seeds the dictionary from the
// module's sysfs copy so that records decode from the first one, then
// follows hmb_state/hmb_dict for resets. Each CPU's buffer
// (per_cpu/cpuN/trace_pipe_raw) is read in turn and its lines go out as
// read, flushed after every round: a firmware core is drained on one CPU,
// so each core's records come in sequence order, but lines of different
// CPUs are not merged by time (unlike report on a capture).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STREAM_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STREAM_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "hmbtrace/status.h"
#include "live/status.h"
#include "report/report.h"

namespace hmbtrace {

// Enables every event of TRACEFS/instances/hmb/events/hmb/ and restores
// each one's enable file when Restore() runs or the guard is destroyed.
class EventEnableGuard {
 public:
  EventEnableGuard() = default;
  EventEnableGuard(const EventEnableGuard&) = delete;
  EventEnableGuard& operator=(const EventEnableGuard&) = delete;
  ~EventEnableGuard() { (void)Restore(); }

  // Remembers every hmb event's state, then enables them all. An error if
  // there are none or a file cannot be written; whatever was changed is
  // restored by Restore().
  Status EnableAll(const std::string& instance_dir);
  // Puts back the remembered states; idempotent. The first write that
  // failed, if one did (the others are tried all the same).
  Status Restore();

 private:
  std::vector<std::pair<std::string, char>> saved_;  // enable file, '0' or '1'
};

// The dictionary of each device as one whole-dictionary hmb_dict event
// (dev = the device's index, its producer_gen and build_id), for
// Reporter::Seed. Devices without a dictionary are skipped. `bytes` keeps
// the data the events point to.
std::vector<CaptureEvent> DictionarySeeds(const std::vector<DeviceStatus>& devices,
                                          std::vector<std::vector<uint8_t>>* bytes);

// Per firmware core, what the stream saw: for the summary.
class StreamTally {
 public:
  void Add(const CaptureEvent& ev);
  std::string Summary(double seconds) const;
  uint64_t records() const;

 private:
  struct Core {
    int cpu = -1;
    uint64_t records = 0;
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    uint64_t lost = 0;
  };
  std::map<std::pair<uint16_t, uint16_t>, Core> cores_;  // (dev, core)
  uint64_t markers_ = 0;
  uint64_t malformed_ = 0;
  uint64_t ftrace_missed_ = 0;
};

struct StreamOptions {
  double duration = 0;  // seconds; 0: until SIGINT/SIGTERM
  ReportOptions report;
  std::string tracefs_dir;
  std::string sysfs_dir;
};

int RunStream(const StreamOptions& options);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STREAM_H_
