// SPDX-License-Identifier: GPL-2.0-only
//
// The firmware dictionaries a capture carries and the device state from
// hmb_state, for the subcommands. Reassembly and the rule that picks the
// dictionary of a record are the decode library's (decode/dictionary_set.h),
// shared with plugin_hmb.so; this adds what the tool shows of each device.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_DICTIONARIES_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_DICTIONARIES_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "dictionary.h"
#include "dictionary_set.h"
#include "hmbtrace/status.h"

namespace hmbtrace {

struct DeviceInfo {
  std::string name;  // from hmb_state
  uint64_t clock_hz = 0;
  uint16_t nr_cores = 0;
  uint32_t producer_gen = 0;  // latest hmb_state
  uint8_t state = 0;
  BuildId build_id{};
  bool seen_state = false;
};

class DictionaryStore {
 public:
  using Update = DictionarySet::Update;

  // Feeds hmb_state and hmb_dict events; other kinds are ignored.
  Update Add(const CaptureEvent& ev);

  // For a second pass over the same capture (DictionarySet::RestartStream):
  // feed that pass's hmb_state events to FollowState(), not to Add().
  void RestartStream() { set_.RestartStream(); }
  void FollowState(const CaptureEvent& ev);

  // The dictionary for a record of `dev` delivered on `cpu`, or nullptr.
  const Dictionary* For(uint16_t dev, int cpu) const { return set_.For(dev, cpu); }
  // The producer generation a record of `dev` on `cpu` belongs to, or 0.
  uint32_t GenerationFor(uint16_t dev, int cpu) const { return set_.GenerationFor(dev, cpu); }
  const Dictionary* Find(uint16_t dev, uint32_t gen) const { return set_.Find(dev, gen); }
  // Every producer_gen of `dev` seen in states or chunks, in order.
  const std::vector<uint32_t>& Generations(uint16_t dev) const { return set_.Generations(dev); }

  const std::map<uint16_t, DeviceInfo>& devices() const { return devices_; }
  const std::array<uint64_t, static_cast<size_t>(ChunkProblem::kCount)>& problems() const {
    return set_.problems();
  }
  uint64_t total_problems() const { return set_.total_problems(); }
  const std::vector<std::string>& messages() const { return set_.messages(); }

 private:
  DictionarySet set_;
  std::map<uint16_t, DeviceInfo> devices_;
};

// First pass over `path`: every dictionary and device it carries (only
// hmb_state and hmb_dict events are decoded). `scan`, if given: what a
// full pass would deliver (capture.h).
Status CollectDictionaries(const std::string& path,
                           DictionaryStore* store,
                           CaptureScan* scan = nullptr);

struct ReadOptions {
  // `fn` prints to stdout as it goes (progress.h).
  bool streams_stdout = false;
  // No progress line at all.
  bool quiet = false;
  // Called between the passes, with what the second pass will deliver.
  std::function<void(const CaptureScan&)> on_scan;
};

// Both passes, over one open of the file: every dictionary into `store`,
// then every event to `fn`, so that records are decoded with their
// generation's dictionary even where its hmb_dict events come later in the
// capture. Shows its progress on a terminal (progress.h).
Status ReadCaptureWithDictionaries(const std::string& path,
                                   DictionaryStore* store,
                                   const CaptureCallback& fn,
                                   const ReadOptions& options);
// The same over a capture already open (its passes start from its first
// event).
Status ReadCaptureWithDictionaries(CaptureFile& file,
                                   DictionaryStore* store,
                                   const CaptureCallback& fn,
                                   const ReadOptions& options);
inline Status ReadCaptureWithDictionaries(const std::string& path,
                                          DictionaryStore* store,
                                          const CaptureCallback& fn,
                                          bool streams_stdout = false) {
  ReadOptions options;
  options.streams_stdout = streams_stdout;
  return ReadCaptureWithDictionaries(path, store, fn, options);
}

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_DICTIONARIES_H_
