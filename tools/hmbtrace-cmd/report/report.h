// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd report: one line per firmware event in host time order,
// decoded with the dictionary the capture carries, with losses, device
// state changes and trace_marker lines in the same timeline. Firmware
// records are placed at their firmware time converted to the host clock
// by the clock fits the capture carries (hmb_clock; decode/clock_set.h),
// and each says its converted time and bound, or why it has none; the
// order is timeline.h's.
//
// A capture file is read twice: the first pass collects every dictionary it
// carries, so that records recorded before their dictionary's first
// hmb_dict chunks (the module re-sends it every dict_interval_ms) are
// decoded too. Without that look-ahead (a live stream), a record is decoded
// with the dictionary known when it is reached, and records before it print
// their event id and payload in hex. Dictionary lines and problems appear
// where their hmb_dict events are, either way.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_REPORT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_REPORT_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "clock_set.h"
#include "format.h"
#include "hmbtrace/status.h"
#include "report/timeline.h"

namespace hmbtrace {

struct ReportOptions {
  std::set<uint16_t> cores;      // empty: all
  std::set<std::string> events;  // empty: all; also "lost", "state", "marker", "dict", "clock"
  bool raw = false;              // add the payload hex to decoded records
  uint64_t reorder_margin_ms = kDefaultReorderMarginMs;  // timeline.h
};

class Reporter {
 public:
  // `lookahead`: dictionaries collected by a first pass over the same
  // capture (CollectDictionaries); nullptr decodes in stream order.
  explicit Reporter(ReportOptions options, DictionaryStore* lookahead = nullptr)
      : options_(std::move(options)), lookahead_(lookahead) {}

  // The line for one event, before it has its place in the timeline;
  // false if it is filtered out or has no line.
  bool Format(const CaptureEvent& ev, TimelineLine* line);
  // The line for one event as it comes, at its own place (converted time
  // for a record), with a newline; empty if filtered out. For a stream
  // that is not reordered.
  std::string Line(const CaptureEvent& ev);

  // A dictionary known before the stream starts (a live stream: the
  // module's sysfs copy), as one hmb_dict chunk of the whole dictionary.
  DictionaryStore::Update Seed(const CaptureEvent& dict) {
    epoch_++;
    return dicts_.Add(dict);
  }

  // The clock fits seen so far; set its trace clock before the first event.
  ClockSet& clocks() { return clocks_; }

  uint64_t hmb_events() const { return hmb_events_; }
  // Records of a capture with clock fits that had no converted time.
  uint64_t not_converted() const { return not_converted_; }

 private:
  bool Wanted(const std::string& name) const;
  bool FormatRecord(const CaptureEvent& ev, TimelineLine* line);

  // The generation and dictionary of records of `dev` on a CPU, as the
  // store gave them in `epoch`. A store changes only through the events
  // Format() and Seed() feed it (hmb_state, hmb_dict; `lookahead_` is
  // complete before the first record), and each of those starts an epoch:
  // until then its dictionaries, and the EventDescs in them, stay put.
  struct Place {
    uint64_t epoch = 0;
    uint16_t dev = 0;
    uint32_t gen = 0;
    const Dictionary* dict = nullptr;
  };
  static constexpr int kPlaceCpus = 1024;

  ReportOptions options_;
  DictionaryStore dicts_;  // in stream order: what the timeline says when
  DictionaryStore* lookahead_;
  std::vector<Place> places_;  // by CPU, below kPlaceCpus
  uint64_t epoch_ = 1;
  // Each event's format read once, for the dictionaries of plans_epoch_.
  const FormatPlan& PlanFor(const EventDesc& desc);
  std::unordered_map<const EventDesc*, FormatPlan> plans_;
  uint64_t plans_epoch_ = 0;
  ClockSet clocks_;  // in stream order, always: no look-ahead for time
  uint64_t hmb_events_ = 0;
  uint64_t not_converted_ = 0;
};

// What a report ends with, beyond its lines.
struct ReportSummary {
  uint64_t hmb_events = 0;
  uint64_t not_converted = 0;  // records placed by their ftrace time
  uint64_t late = 0;           // records drained past the reorder margin
  uint64_t late_max_ns = 0;
};

// The report of `input`, in order, to `sink` a batch of lines at a time
// (return false from it to stop). An error if the capture cannot be read.
Status WriteReport(const std::string& input,
                   const ReportOptions& options,
                   const std::function<bool(const std::string&)>& sink,
                   ReportSummary* summary);

int RunReport(const std::string& input, const ReportOptions& options);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_REPORT_H_
