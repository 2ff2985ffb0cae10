// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd stat --html: one self-contained HTML file of a capture, for
// a browser with no network (a lab that is air-gapped, a file mailed to a
// colleague). The page holds its styles, its script and its data inline;
// the script draws the charts as SVG and runs the table (sort, filter,
// pages). Nothing is fetched when it opens.
//
// What it shows is what stat computes, not a second opinion: the
// collector's per-core counts, losses, latencies and activity
// (StatCollector::Json), the command join's counts and per-opcode split
// (CommandStatJson) and each command's story (CommandStoryText). What the
// page adds is bounded, so its size and the memory to make it do not grow
// with the capture: per device and metric one merged histogram, per opcode
// and phase one, the first kMaxTimelineMarks markers, losses and state
// changes with their times (the others counted), and the kSlowest slowest
// host commands, each with at most kStoryRecords firmware records.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_HTML_REPORT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_HTML_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "join/nvme_capture.h"
#include "hmbtrace/status.h"
#include "stat/stat.h"

namespace hmbtrace {

// The events of the capture that the page places on its time axis and
// that StatCollector only counts: trace_marker lines, hmb_lost events
// (where on which core, how many, why) and device state changes: an
// hmb_state whose state or producer generation differs from the
// device's previous one (a reset, a detach; the module repeats an
// unchanged state, which is not drawn). Fed the events stat is fed.
class HtmlTimeline {
 public:
  static constexpr size_t kMaxTimelineMarks = 2000;  // of each kind
  static constexpr size_t kMaxMarkerText = 200;      // bytes of a marker shown

  void Add(const CaptureEvent& ev);
  nlohmann::json Json() const;

 private:
  struct Marker {
    uint64_t ts;
    std::string text;
  };
  struct Loss {
    uint64_t ts;
    uint16_t dev, core;
    uint64_t count;
    uint8_t reason;
  };
  struct State {
    uint64_t ts;
    uint16_t dev;
    uint32_t producer_gen;
    uint8_t state;
  };
  std::vector<Marker> markers_;
  std::vector<Loss> losses_;
  std::vector<State> states_;
  std::map<uint16_t, std::pair<uint8_t, uint32_t>> last_state_;  // per dev: state, gen
  uint64_t markers_total_ = 0, losses_total_ = 0, states_total_ = 0;
};

struct HtmlReportInput {
  std::string file;                        // the capture's name, as shown
  const StatCollector* stat = nullptr;     // Finish()ed
  const HtmlTimeline* timeline = nullptr;
  const CommandCapture* commands = nullptr;  // null: --no-commands
  // The stories of the slowest commands: SlowestCommands()' windows after
  // a ReadCommandCapture() pass that filled them.
  const std::vector<const JoinedCommand*>* slowest = nullptr;
  const std::vector<StoryWindow>* stories = nullptr;
};

inline constexpr size_t kSlowest = 500;      // host commands in the table
inline constexpr size_t kStoryRecords = 40;  // firmware records per story
// Command causes: stage bars per opcode, of the tail stat --json lists
// (command_causes.opcodes[].tail.slowest).
inline constexpr size_t kCauseBars = 50;

// The completed host commands with the longest host total (setup to
// completion), longest first, at most `n`; and for each the window of its
// story, capped at kStoryRecords records.
std::vector<const JoinedCommand*> SlowestCommands(const CommandJoin& j, size_t n);
std::vector<StoryWindow> StoryWindowsOf(const CommandJoin& j,
                                        const std::vector<const JoinedCommand*>& cmds);

// The page's data: {file, stat, commands, event_latency[], opcode_latency[],
// timeline, slowest[]}.
nlohmann::json HtmlReportData(const HtmlReportInput& in);
// The page: the template with the styles, the script and `data` inline.
std::string HtmlReportPage(const nlohmann::json& data);
// Writes HtmlReportPage(HtmlReportData(in)) to `path`.
Status WriteHtmlReport(const HtmlReportInput& in, const std::string& path);
// stat --html: the slowest commands of `cap` (null: none) and their
// stories (one more pass over `input`), then WriteHtmlReport().
Status WriteStatHtml(const std::string& input,
                     const std::string& path,
                     const StatCollector& stat,
                     const HtmlTimeline& timeline,
                     const CommandCapture* cap);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_HTML_REPORT_H_
