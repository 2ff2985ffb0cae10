// SPDX-License-Identifier: GPL-2.0-only
#include "capture/dictionaries.h"

#include "capture/progress.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace {
namespace {

StateChange ToStateChange(const CaptureEvent& ev) {
  return StateChange{ev.dev, ev.cpu, ev.state, ev.producer_gen, ev.build_id};
}

}  // namespace

void DictionaryStore::FollowState(const CaptureEvent& ev) {
  if (ev.kind == CaptureKind::kState)
    set_.FollowState(ToStateChange(ev));
}

DictionaryStore::Update DictionaryStore::Add(const CaptureEvent& ev) {
  Update u;
  if (ev.kind == CaptureKind::kState) {
    u = set_.AddState(ToStateChange(ev));
    DeviceInfo& d = devices_[ev.dev];
    d.name = Printable(ev.name);
    d.clock_hz = ev.clock_hz;
    d.nr_cores = ev.nr_cores;
    d.producer_gen = ev.producer_gen;
    // "implausible" reports a value the module refused, not a new state.
    if (ev.state != HMB_TRACE_EV_IMPLAUSIBLE)
      d.state = ev.state;
    d.build_id = ev.build_id;
    d.seen_state = true;
  } else if (ev.kind == CaptureKind::kDict) {
    u = set_.AddChunk(
        DictionaryChunk{ev.dev, ev.producer_gen, ev.build_id, ev.total_len, ev.offset, ev.data});
    if (!set_.Generations(ev.dev).empty())
      devices_.try_emplace(ev.dev);  // a device known from its dictionary only
  }
  return u;
}

namespace {

bool CollectFrom(CaptureFile& file,
                 DictionaryStore* store,
                 std::string* error,
                 const CaptureFile::Tick& tick = nullptr) {
  const bool ok = file.Read(
      [store](const CaptureEvent& ev) {
        store->Add(ev);
        return true;
      },
      error, CaptureFilter::kMetadata, tick);
  store->RestartStream();
  return ok;
}

}  // namespace

bool CollectDictionaries(const std::string& path,
                         DictionaryStore* store,
                         std::string* error,
                         CaptureScan* scan) {
  CaptureFile file;
  if (!file.Open(path, error))
    return false;
  const bool ok = CollectFrom(file, store, error);
  if (scan)
    *scan = file.scan();
  return ok;
}

bool ReadCaptureWithDictionaries(const std::string& path,
                                 DictionaryStore* store,
                                 const CaptureCallback& fn,
                                 std::string* error,
                                 const ReadOptions& options) {
  CaptureFile file;
  if (!file.Open(path, error))
    return false;
  Progress progress(path, !options.quiet && Progress::Wanted(options.streams_stdout), stderr);
  if (!CollectFrom(file, store, error, [&progress](uint64_t walked) {
        progress.Set(1, 2, walked, 0);
      }))
    return false;
  const CaptureScan scan = file.scan();  // the second pass's events
  if (options.on_scan)
    options.on_scan(scan);
  const bool ok = file.Read(
      [&](const CaptureEvent& ev) {
        progress.Tick(2, 2, scan.events);
        return fn(ev);
      },
      error);
  progress.Done();
  return ok;
}

}  // namespace hmbtrace
