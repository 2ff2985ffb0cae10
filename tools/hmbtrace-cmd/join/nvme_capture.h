// SPDX-License-Identifier: GPL-2.0-only
//
// The command join over a capture: feeds nvme_join.h from a trace.dat (the
// hmb instance's records, their converted times and losses; the top
// instance's nvme:nvme_setup_cmd / nvme:nvme_complete_rq), and what the
// subcommands show of it: stat's latency split, report --cmd's story, a
// JSON list for tests.
//
// Which firmware records name a command is the dictionary's to say: an
// event whose qid_field and cid_field are set, BEGIN (the fetch) or END
// (the completion). Converted times and their bounds follow the one rule of
// decode/clock_set.h.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_JOIN_NVME_CAPTURE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_JOIN_NVME_CAPTURE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "clock_set.h"
#include "hmbtrace/status.h"
#include "join/nvme_join.h"

namespace hmbtrace {

struct CommandCapture {
  CommandJoin join;
  bool host_events = false;  // the file's formats have the nvme events
  // The buffer they were read from: "" the top buffer, else an instance's
  // name (nvme_host_c.h: the first buffer that holds them).
  std::string host_instance;
  std::string host_clock;  // its trace clock: the one firmware times are converted to
  uint64_t host_malformed = 0;
  uint64_t fw_not_converted = 0;  // command records without a converted time
  // A dictionary of the capture has ABI 1.2 command attribution: the
  // firmware's stages of each command can be looked for (report --cmd).
  bool command_attribution = false;
};

// A firmware record near a command, for its story (report --cmd).
struct StoryRecord {
  uint16_t dev = 0, core = 0;
  uint64_t seq = 0;
  uint64_t fw_ts = 0;
  std::optional<uint64_t> host_ns;  // converted
  uint64_t bound_ns = 0;
  std::string text;  // "<name>: <fields>"
};

// Reads `path` into `out` and joins. With a `story`, also collects the
// records of each window's (dev, core) converted into [from, to] (widened
// by their bound) into that window's `records`; with a story and no
// `out`, only that (a second pass for the stories of a join made before,
// whose `host_clock` the caller passes: the windows are on that clock).
struct StoryWindow {
  uint16_t dev = 0, core = 0;
  uint64_t from = 0, to = 0;
  std::vector<StoryRecord> records;
  // At most this many records are kept (the first in the capture's
  // order); the others are counted.
  size_t max_records = SIZE_MAX;
  uint64_t records_left_out = 0;
  // Where the records left out were: before records[left_out_at]
  // (SIZE_MAX: after the last).
  size_t left_out_at = SIZE_MAX;
  // A crash dump's command in flight: the dump's time on its trace clock;
  // the window runs to the dump's end (what the core did after the fetch,
  // and where it stopped).
  std::optional<uint64_t> dump_taken_ns;
};
Status ReadCommandCapture(const std::string& path,
                          CommandCapture* out,
                          std::vector<StoryWindow>* story = nullptr,
                          const std::string& host_clock = "");
// The join alone (no stories) from a capture already open: its passes
// start from the first event again.
Status ReadCommandCapture(CaptureFile& file, CommandCapture* out);

// ReadCommandCapture in steps, for a caller that walks the capture itself
// so that one pass serves it and the join (stat): Begin() reads the host's
// commands; every event of the caller's walk goes to Add() with the
// DictionaryStore that walk keeps, whose states the caller follows
// (DictionaryStore::FollowState); Finish() ends the join. The arguments
// are ReadCommandCapture's.
class CommandCaptureReader {
 public:
  CommandCaptureReader(const std::string& path,
                       CommandCapture* out,
                       std::vector<StoryWindow>* story = nullptr,
                       const std::string& story_clock = "")
      : path_(path), out_(out), story_(story), story_clock_(story_clock) {}
  // With `file` (`path` open), the host's commands are read from that open.
  Status Begin(CaptureFile* file = nullptr);
  // `fw_time`: the record's firmware time as RecordFwTime() gives it on
  // trace_clock() with a ClockSet fed the same events (the caller's
  // conversion, made once for both), or nullptr to convert it here.
  void Add(const CaptureEvent& ev, const DictionaryStore& dicts, const FwTime* fw_time = nullptr);
  // The trace clock firmware times are converted to, once Begin() is done.
  const std::string& trace_clock() const { return clocks_.trace_clock(); }
  void Finish(const DictionaryStore& dicts);

 private:
  const std::string path_;
  CommandCapture* const out_;
  std::vector<StoryWindow>* const story_;
  const std::string story_clock_;
  CommandJoin* join_ = nullptr;
  ClockSet clocks_;
  bool own_clock_ = false;
  // A record's generation and dictionary by (dev, cpu): only an event of
  // another kind changes them (hmb_state, hmb_dict: each starts a new
  // epoch), so they are looked up once per key and epoch.
  struct Route {
    uint64_t epoch = 0;  // 0: empty
    uint16_t dev = 0;
    int cpu = 0;
    uint32_t gen = 0;
    const Dictionary* dict = nullptr;
    // dict's events by id as last looked up (Find(), nullptr included):
    // a capture's records name few ids.
    struct EventCache {
      bool set = false;
      uint16_t id = 0;
      const EventDesc* desc = nullptr;
    };
    static constexpr size_t kEventCache = 16;  // a power of two
    std::array<EventCache, kEventCache> events{};
    const EventDesc* Find(uint16_t id);
  };
  static constexpr size_t kRoutes = 16;  // a power of two
  std::array<Route, kRoutes> routes_{};
  uint64_t epoch_ = 1;
};

// The four phases of a joined command, in ns; a phase that the bound
// makes negative counts as 0.
struct CommandSplit {
  uint64_t submit_to_fetch, fetch_to_complete, complete_to_host, total;
};
// Whether `c` has one: both firmware records joined and the host's
// completion in the capture.
inline bool HasSplit(const JoinedCommand& c) {
  return c.joined() && c.host.complete_ns.has_value();
}
// `c` must HasSplit().
CommandSplit SplitOf(const CommandJoin& j, const JoinedCommand& c);
// Their names, in that order.
inline constexpr const char* kCommandPhases[] = {"host submit -> fw fetch",
                                                 "fw fetch -> fw complete",
                                                 "fw complete -> host completion", "host total"};

// A command's story (report --cmd): the window of firmware time, on the
// core of the records joined to it, whose records ReadCommandCapture()
// collects; then the host events and those records in time order, the
// ones joined to it marked, and its split or why it has none.
StoryWindow CommandStoryWindow(const CommandJoin& j, const JoinedCommand& c);
std::string CommandStoryText(const CommandJoin& j, const JoinedCommand& c, const StoryWindow& w);

// stat's section: counts, unmatched by reason, and the latency split per
// opcode (host submit -> fw fetch -> fw complete -> host completion) with
// percentiles, as text and as JSON.
std::string CommandStatText(const CommandCapture& cap);
nlohmann::json CommandStatJson(const CommandCapture& cap);

// Every host command with its join (for tests and scripts): host times,
// the records' converted times and bounds, or the reasons; and every
// unmatched firmware record with its reason.
nlohmann::json CommandListJson(const CommandCapture& cap);

// Reads `input` and writes CommandListJson() to `path` (stat
// --commands-json). Exit code.
int WriteCommandListJson(const std::string& input, const std::string& path);

// "read", "write", "flush", ... or "opc 0xNN".
std::string NvmeOpcodeName(uint8_t opcode);
// An admin command's (queue 0: NVMe base spec, "Opcodes for Admin
// Commands"), e.g. "identify", "admin opc 0x7f".
std::string NvmeAdminOpcodeName(uint8_t opcode);
// The name of a command on queue `qid`: admin opcodes on queue 0, I/O
// opcodes elsewhere.
std::string NvmeCommandName(uint16_t qid, uint8_t opcode);

// Calls fn(opcode name, the four phases in kCommandPhases' order) for each
// command of `j` that HasSplit(): the grouping stat's percentiles and the
// HTML report's histograms share.
template <typename Fn>
void ForEachSplit(const CommandJoin& j, Fn&& fn) {
  for (const JoinedCommand& c : j.commands()) {
    if (!HasSplit(c))
      continue;
    const CommandSplit s = SplitOf(j, c);
    fn(NvmeCommandName(c.host.qid, c.host.opcode),
       std::array<uint64_t, 4>{s.submit_to_fetch, s.fetch_to_complete, s.complete_to_host,
                               s.total});
  }
}

// The host nvme events record adds for the join (top instance), as
// trace-cmd arguments: -C local -e nvme:nvme_setup_cmd -e
// nvme:nvme_complete_rq (the top instance on the clock the fits are on).
std::vector<std::string> NvmeHostEventArgs();
// Whether TRACEFS_DIR has them (the nvme driver is loaded).
bool NvmeHostEventsPresent(const std::string& tracefs_dir);

// `hmbtrace-cmd report --cmd QID:CID`: every host command with that
// (qid, cid) (of every controller), each with its story. Of a crash dump:
// the command in flight with that (qid, cid), its fetch record, the first
// and last records of its core after it, where the core stopped. Exit code.
int RunCommandStory(const std::string& input, const std::string& qid_cid);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_JOIN_NVME_CAPTURE_H_
