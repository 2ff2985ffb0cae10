// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd retime: a copy of a capture in which every hmb_record has
// its converted firmware time as its ftrace timestamp, so that trace-cmd
// report, KernelShark and every other libtracecmd reader order and draw
// firmware events where they happened rather than where the module drained
// them (design decision 7: ftrace stamps an event when it is written).
//
// Where each event goes is the order of hmbtrace-cmd report (timeline.h),
// with the conversion every reader uses (decode/clock_set.h, the
// generation of dictionaries.h): a record at its converted time (never
// after its drain, never before the previous record of its core); hmb_lost
// before the next record of its core; hmb_state, hmb_dict and hmb_clock
// before the next record of their dev on their CPU, so every reader still
// meets a generation's state and dictionary before its first record; any
// other event (trace_marker lines, the top buffer's events) at its own
// time. Each CPU's events are written in that order. A record that cannot
// be converted keeps its drain time; the summary counts and lists them.
// One difference from report: report prints one stream, so a record
// drained past the reorder margin is "placed late" behind any line
// already printed; here only behind what its own CPU's buffer already
// holds (Timeline::SetLatePerCpu), so it usually keeps its converted time.
//
// With --dictionary FILE (capture/dictionary_override.h: refused, with
// both build ids, for a capture of another build), the output carries the
// file: each dictionary of the capture, merged with the file's events, is
// written as hmb_dict chunks where the capture had its first chunk (its
// other chunks are dropped), so the retimed capture describes itself and
// trace-cmd report decodes a firmware's tokenized printf with no option.
//
// Each hmb_record of the output carries a mark past its payload
// (decode/hmb_events.h: its drain time, the bound, whether it was
// converted): the file says it was retimed, so plugin_hmb.so and
// hmbtrace-cmd do not convert it again, and the drain delay stays readable
// (report, the plugin's fw_time text). A capture already retimed is
// refused.
//
// The file is written by libtracecmd (retime_output_c.h): headers,
// formats, options and buffers copied from the input; the pages of every
// buffer re-encoded by trace_page_writer.h. Memory is bounded by the
// reorder window (events of --reorder-margin of capture time), not by the
// capture's length: pages go to temporary files beside the output, then
// into it in large copies; in a version 6 output the first CPU with data
// goes straight to its place (retime_output_begin), its offset being known
// before the walk.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_RETIME_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_RETIME_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "clock_set.h"
#include "hmbtrace/status.h"
#include "report/timeline.h"

namespace hmbtrace {

struct RetimeOptions {
  std::string input = "trace.dat";
  std::string output;    // required
  int file_version = 0;  // 6 or 7; 0: the input's
  uint64_t reorder_margin_ms = kDefaultReorderMarginMs;
  bool quiet = false;  // no summary on stderr
  std::string dictionary{};  // --dictionary FILE, or ""
};

// A record that kept its drain time, for the summary.
struct UnconvertedRecord {
  uint16_t dev = 0;
  uint16_t core = 0;
  uint64_t seq = 0;
  uint64_t drain_ts = 0;
  ClockMiss miss = ClockMiss::kNoFit;
};

struct RetimeSummary {
  uint64_t events = 0;         // every event written, every buffer
  uint64_t records = 0;        // hmb_record
  uint64_t converted = 0;      // of them, at their converted time
  uint64_t not_converted = 0;  // kept their drain time
  std::array<uint64_t, static_cast<size_t>(ClockMiss::kCount)> by_miss{};
  std::vector<UnconvertedRecord> unconverted;  // the first kMaxListed
  uint64_t lost = 0;                           // hmb_lost placed before their record
  uint64_t metadata = 0;                       // hmb_state, hmb_dict, hmb_clock
  uint64_t late = 0;                           // placed behind its CPU's events (timeline.h)
  uint64_t late_max_ns = 0;
  uint64_t drain_max_ns = 0;  // the longest drain delay of a converted record
  uint64_t too_large = 0;     // records written without a mark (no room on a page)
  int file_version = 0;
  // Retime refused the input for having no clock fits (hmb_clock) at all,
  // or none for its trace clock (clock_problem says why and what to do).
  bool no_clock_fits = false;
  std::string clock_problem;
  static constexpr size_t kMaxListed = 20;
};

// Writes options.output from options.input. An error (and no output left
// behind) if the input cannot be read or retimed, or the output cannot be
// written.
Status Retime(const RetimeOptions& options, RetimeSummary* summary);

// The summary printed on stderr after a retime.
std::string RetimeSummaryText(const RetimeOptions& options, const RetimeSummary& s);

// The subcommand: 0, or 1 with the reason on stderr.
int RunRetime(const RetimeOptions& options);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_RETIME_H_
