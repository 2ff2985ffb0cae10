// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd stat: per device and firmware core, what a capture holds and
// what it misses: records, sequence range, losses by reason cross-checked
// against the sequence numbers, per-event counts and latency statistics;
// per device, the clock fits the capture carries and what they made of
// the records' firmware times (decode/clock_set.h).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_STAT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_STAT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "causes/command_paths.h"
#include "clock_set.h"
#include "stat/histogram.h"
#include "stat/open_spans.h"
#include "stat/quantile_histogram.h"

namespace hmbtrace {

struct LatencySummary {
  uint64_t count = 0, min = 0, median = 0, p99 = 0, max = 0;
};
// Nearest-rank percentiles: count, min and max exact, the median and p99
// within QuantileHistogram::kRelativeError.
LatencySummary Summarize(const QuantileHistogram& h);

// One latency metric of a core: its values in ticks for the percentiles,
// and the log2 histogram stat draws (in ns when the clock rate is known).
struct LatencyStat {
  QuantileHistogram ticks;
  Log2Histogram plot;

  // `ticks`; `hz` the firmware clock rate, 0 if unknown.
  void Add(uint64_t ticks, uint64_t hz);
};

struct CoreStat {
  uint64_t records = 0;
  uint64_t first_seq = 0, last_seq = 0;
  std::vector<uint32_t> generations;
  std::array<uint64_t, kLostReasonCount + 1> lost{};  // by reason; last: unknown reason
  // hmb_lost before the core's first record of a generation: no sequence
  // number to check them against.
  uint64_t lost_before_first = 0;
  // Records missing from the sequence with no hmb_lost that covers them.
  uint64_t gap_unexplained = 0;
  // Records hmb_lost counts that the sequence says were not missing there.
  uint64_t lost_unmatched = 0;
  uint64_t seq_backwards = 0;  // a sequence number not above the previous one
  std::map<std::string, uint64_t> events;
  std::map<std::string, LatencyStat> latencies;  // by metric name
  // The activity plot: records per slice of the capture's time span
  // (kActivityBins slices), counted as they come when the span is known
  // beforehand (StatCollector::SetSpan); else the host time of each record.
  std::vector<uint64_t> activity;
  std::vector<uint64_t> record_times;
  uint64_t end_without_begin = 0;
  uint64_t begin_without_end = 0;  // at the end of the capture

  uint64_t lost_total() const;
  bool seq_agrees() const { return gap_unexplained == 0 && lost_unmatched == 0; }
  // `ticks` of metric `name`; `hz` the firmware clock rate, 0 if unknown.
  void AddLatency(const std::string& name, uint64_t ticks, uint64_t hz);

  // Per event of a dictionary, where its figures go: its count in
  // `events`, its latency field's metric and the latency from the BEGIN it
  // ends (nullptr until the first), found by name once per event rather
  // than per record (std::map's nodes stay put; a dictionary's events live
  // as long as the DictionaryStore).
  struct EventSlot {
    uint64_t* count = nullptr;
    LatencyStat* latency = nullptr;
    LatencyStat* pair_latency = nullptr;
  };
  std::unordered_map<const EventDesc*, EventSlot> slots;
};

// Per device: its clock fits, and the records' converted times.
struct ClockStat {
  uint64_t clock_events = 0;           // hmb_clock events (each fit is on every CPU)
  uint64_t fits = 0;                   // distinct fits (numbers or stale flag changed)
  uint64_t stale_fits = 0;             // of them, stale
  uint64_t refused = 0;                // unusable numbers
  std::vector<uint32_t> generations;   // with a fit, in order
  QuantileHistogram bounds;            // ns, per converted record
  QuantileHistogram drain_delays;      // ns: ftrace time - converted time
  uint64_t converted_stale = 0;        // records converted with a stale fit
  uint64_t after_drain = 0;            // records converted to after their drain, beyond the bound
  std::array<uint64_t, static_cast<size_t>(ClockMiss::kCount)> not_converted{};

  uint64_t not_converted_total() const;
};

class StatCollector {
 public:
  // `dicts` must already hold the capture's dictionaries (a first pass),
  // and is fed hmb_state events again here to follow generations per CPU.
  explicit StatCollector(DictionaryStore* dicts) : dicts_(dicts) {}

  // The host time of the first and last event that Add() will be given
  // (a first pass's CaptureScan): the activity plot is then counted as
  // records come, in memory that does not grow with the capture. Without
  // it, each record's time is kept until the end.
  // The clock fits seen so far; set its trace clock before the first event.
  ClockSet& clocks() { return clocks_; }
  void SetSpan(uint64_t first_ts, uint64_t last_ts);

  void Add(const CaptureEvent& ev);
  void Finish();
  // The firmware time of the record the last Add() took, as
  // RecordFwTime() gave it on clocks(); nullptr if that Add() converted
  // none. For a reader of the same stream that converts on the same trace
  // clock (the command join), so that each record is converted once.
  const FwTime* last_fw_time() const { return have_fw_time_ ? &fw_time_ : nullptr; }

  std::string Text(const std::string& file) const;
  nlohmann::json Json(const std::string& file) const;

  const std::map<std::pair<uint16_t, uint16_t>, CoreStat>& cores() const { return cores_; }
  uint64_t records() const { return records_; }
  const CommandPaths& command_paths() const { return paths_; }
  uint64_t hmb_events() const {
    return records_ + lost_events_ + states_ + dicts_seen_ + clock_events_;
  }

 private:
  struct SeqTracker {
    uint32_t gen = 0;
    bool have = false;  // `expected` is known
    uint64_t expected = 0;
    // open spans: (begin event id, key, qid) -> fw_ts
    OpenSpans open;
    // hmb_lost events of one gap: the module reports a gap split by reason
    // (torn, invalid, overwritten) as events with the same at_seq that
    // together cover [at_seq - sum of counts, at_seq).
    bool lost_group = false;
    uint64_t lost_at = 0;
    uint64_t lost_count = 0;
  };

  // What AddRecord() looks up for a record of (dev, core) on a cpu: its
  // statistics, its generation (the tracker is at it), its dictionary and
  // clock rate. Only events of other kinds change them (hmb_state,
  // hmb_lost, hmb_clock, ...: each starts a new epoch), so a route found
  // once serves every record of its key until the next one.
  struct RecordRoute {
    uint64_t epoch = 0;  // 0: empty
    uint16_t dev = 0;
    uint16_t core = 0;
    int cpu = 0;
    CoreStat* cs = nullptr;
    SeqTracker* t = nullptr;
    ClockStat* clock = nullptr;  // found at its first converted record
    uint32_t gen = 0;
    ClockSet::Conversion conv;  // of (dev, gen) on clocks_
    const Dictionary* dict = nullptr;
    bool attributing = false;
    uint64_t hz = 0;
    // The activity bin of the route's last record, and the offsets from
    // the span's first it holds (none yet: first > last).
    uint64_t* bin = nullptr;
    uint64_t bin_first = UINT64_MAX, bin_last = 0;
    // The last events seen by this route, by event id (direct-mapped):
    // the dictionary's description and the core's slot for it.
    struct EventCache {
      const EventDesc* desc = nullptr;  // nullptr: empty
      CoreStat::EventSlot* slot = nullptr;
      uint16_t id = 0;
    };
    static constexpr size_t kEventCache = 32;  // a power of two
    std::array<EventCache, kEventCache> events{};
  };
  static constexpr size_t kRoutes = 64;  // a power of two
  RecordRoute& Route(const CaptureEvent& ev);

  void AddRecord(const CaptureEvent& ev);
  void AddLost(const CaptureEvent& ev);
  void AddClock(const CaptureEvent& ev);
  void ConvertRecord(const CaptureEvent& ev, RecordRoute& r);
  // Text()'s parts: the capture's totals and warnings; a device's line,
  // clock and histograms; a core's lines (hz: its device's clock rate).
  std::string SummaryText(const std::string& file) const;
  std::string DeviceText(uint16_t dev) const;
  std::string CoreText(uint16_t core, const CoreStat& cs, uint64_t hz) const;
  std::string ClockText(uint16_t dev) const;
  nlohmann::json ClockJson(uint16_t dev) const;
  // Checks the pending group of hmb_lost events against the sequence.
  static void FlushLost(SeqTracker& t, CoreStat& cs);
  SeqTracker& Track(const CaptureEvent& ev, CoreStat& cs);
  uint64_t ClockHz(uint16_t dev) const;  // of the device's latest hmb_state
  // The span the activity plot covers.
  uint64_t PlotBegin() const { return span_set_ ? span_first_ : first_ts_; }
  uint64_t PlotEnd() const { return span_set_ ? span_last_ : last_ts_; }

  DictionaryStore* dicts_;
  // Command causes, from dictionaries with ABI 1.2 attribution only (so a
  // capture without it costs nothing and prints as before).
  CommandPaths paths_;
  std::map<const Dictionary*, bool> attributing_;
  std::map<std::pair<uint16_t, uint16_t>, CoreStat> cores_;
  std::map<std::pair<uint16_t, uint16_t>, SeqTracker> trackers_;
  ClockSet clocks_;  // in stream order
  std::map<uint16_t, ClockStat> clock_stats_;
  bool clock_format_ = false;       // the capture has hmb_clock
  std::map<int, uint64_t> missed_;  // ftrace-dropped events per CPU
  std::map<std::string, uint64_t> malformed_;
  uint64_t records_ = 0, lost_events_ = 0, states_ = 0, dicts_seen_ = 0, markers_ = 0;
  uint64_t clock_events_ = 0;
  uint64_t first_ts_ = 0, last_ts_ = 0;
  bool any_ = false;
  bool span_set_ = false;
  uint64_t span_first_ = 0, span_last_ = 0;
  FwTime fw_time_;  // last_fw_time()
  bool have_fw_time_ = false;
  std::array<RecordRoute, kRoutes> routes_{};
  uint64_t route_epoch_ = 1;
};

// Both passes over `input` into `stat` (which holds `dicts`), with the
// capture's span, then stat->Finish(): stat's and record's summary. With
// `also`, every event is given to it too, after `stat` (stat --html's
// timeline), in the same walk.
Status CollectStat(const std::string& input,
                   DictionaryStore* dicts,
                   StatCollector* stat,
                   const std::function<void(const CaptureEvent&)>& also = {});

// The same over a capture already open.
Status CollectStat(CaptureFile& file,
                   DictionaryStore* dicts,
                   StatCollector* stat,
                   const std::function<void(const CaptureEvent&)>& also = {});

// The subcommand: returns the exit code.
// With `commands`, also the command join's section (join/nvme_capture.h);
// with `html`, also the HTML report (stat/html_report.h) written there.
int RunStat(const std::string& input,
            bool json,
            bool commands = true,
            const std::string& html = "");

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_STAT_H_
