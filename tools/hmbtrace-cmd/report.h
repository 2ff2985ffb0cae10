// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd report: one line per firmware event in host time order,
// decoded with the dictionary the capture carries, with losses, device
// state changes and trace_marker lines in the same timeline.
//
// A capture file is read twice: the first pass collects every dictionary it
// carries, so that records recorded before their dictionary's first
// hmb_dict chunks (the module re-sends it every dict_interval_ms) are
// decoded too. Without that look-ahead (a live stream), a record is decoded
// with the dictionary known when it is reached, and records before it print
// their event id and payload in hex. Dictionary lines and problems appear
// where their hmb_dict events are, either way.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "capture.h"
#include "dictionaries.h"

namespace hmbtrace {

struct ReportOptions {
  std::set<uint16_t> cores;      // empty: all
  std::set<std::string> events;  // empty: all; also "lost", "state", "marker", "dict"
  bool raw = false;              // add the payload hex to decoded records
};

class Reporter {
 public:
  // `lookahead`: dictionaries collected by a first pass over the same
  // capture (CollectDictionaries); nullptr decodes in stream order.
  explicit Reporter(ReportOptions options, DictionaryStore* lookahead = nullptr)
      : options_(std::move(options)), lookahead_(lookahead) {}

  // The line(s) for one event; empty if filtered out.
  std::string Line(const CaptureEvent& ev);

  // A dictionary known before the stream starts (a live stream: the
  // module's sysfs copy), as one hmb_dict chunk of the whole dictionary.
  DictionaryStore::Update Seed(const CaptureEvent& dict) { return dicts_.Add(dict); }

  uint64_t hmb_events() const { return hmb_events_; }

 private:
  bool Wanted(const std::string& name) const;

  ReportOptions options_;
  DictionaryStore dicts_;  // in stream order: what the timeline says when
  DictionaryStore* lookahead_;
  uint64_t hmb_events_ = 0;
};

int RunReport(const std::string& input, const ReportOptions& options);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_H_
