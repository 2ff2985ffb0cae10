// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd export --perfetto: the Chrome JSON trace-event format, which
// the Perfetto UI and chrome://tracing open.
//
// Layout: one process per device ("hmb dev N (<name>)"), one thread per
// firmware core. BEGIN/END pairs (matched by the dictionary's pairing key
// and qid within a core) become "B"/"E" slices; spans in flight at the same
// time on one core cannot nest, so each core gets as many extra threads
// ("core N spans K") as it has spans open at once. COUNTER events become
// "C" counters, other records, losses ("lost") and device state changes
// instants ("i"); trace_marker lines are instants on a "markers" thread.
// Timestamps are host trace-clock times in µs: a firmware record's is its
// firmware time converted by the capture's clock fits (decode/clock_set.h;
// args fw_time_bound_ns), or, without a fit, its ftrace time (args
// fw_time "not converted: <why>"); other events' are their ftrace times.
// Firmware timestamps are in args.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PERFETTO_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PERFETTO_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture.h"
#include "clock_set.h"
#include "dictionaries.h"

namespace hmbtrace {

// pid of the markers process; devices are pid dev + 1.
inline constexpr int kMarkersPid = 0x10000 + 1;
// tid of core k's main thread is k * kLaneStride + 1; its span lanes follow.
inline constexpr int kLaneStride = 1000;

class PerfettoExporter {
 public:
  // `dicts` must already hold the capture's dictionaries (a first pass).
  explicit PerfettoExporter(DictionaryStore* dicts) : dicts_(dicts) {}

  void Add(const CaptureEvent& ev);
  // Closes spans still open at the last timestamp, adds the metadata and
  // returns the document.
  nlohmann::json Finish();

  uint64_t hmb_events() const { return hmb_events_; }

 private:
  struct Lane {
    bool open = false;
    uint64_t last_end = 0;
  };
  struct Core {
    uint32_t gen = 0;
    uint64_t last_at = 0;  // the last record's timestamp: a core's stay in order
    std::vector<Lane> lanes;
    // (begin event id, key, qid) -> (lane, begin name)
    std::map<std::tuple<uint16_t, uint64_t, uint64_t>, std::pair<size_t, std::string>> open;
  };

  void AddRecord(const CaptureEvent& ev);
  nlohmann::json Base(const char* ph, const std::string& name, int pid, int tid, uint64_t ts);
  Core& CoreFor(const CaptureEvent& ev);

  DictionaryStore* dicts_;
  ClockSet clocks_;  // in stream order
  nlohmann::json events_ = nlohmann::json::array();
  std::map<std::pair<uint16_t, uint16_t>, Core> cores_;
  bool markers_ = false;
  uint64_t last_ts_ = 0;
  uint64_t hmb_events_ = 0;
};

int RunExportPerfetto(const std::string& input, const std::string& output);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_PERFETTO_H_
