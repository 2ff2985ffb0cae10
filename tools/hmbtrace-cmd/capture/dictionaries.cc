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

Status CollectFrom(CaptureFile& file,
                   DictionaryStore* store,
                   const CaptureFile::Tick& tick = nullptr) {
  Status s = file.Read(
      [store](const CaptureEvent& ev) {
        store->Add(ev);
        return true;
      },
      CaptureFilter::kMetadata, tick);
  store->RestartStream();
  return s;
}

}  // namespace

Status CollectDictionaries(const std::string& path, DictionaryStore* store, CaptureScan* scan) {
  CaptureFile file;
  if (Status s = file.Open(path); !s.ok())
    return s;
  Status s = CollectFrom(file, store);
  if (scan)
    *scan = file.scan();
  return s;
}

Status ReadCaptureWithDictionaries(const std::string& path,
                                   DictionaryStore* store,
                                   const CaptureCallback& fn,
                                   const ReadOptions& options) {
  CaptureFile file;
  if (Status s = file.Open(path); !s.ok())
    return s;
  return ReadCaptureWithDictionaries(file, store, fn, options);
}

Status ReadCaptureWithDictionaries(CaptureFile& file,
                                   DictionaryStore* store,
                                   const CaptureCallback& fn,
                                   const ReadOptions& options) {
  Progress progress(file.path(), !options.quiet && Progress::Wanted(options.streams_stdout),
                    stderr);
  if (Status s =
          CollectFrom(file, store, [&progress](uint64_t walked) { progress.Set(1, 2, walked, 0); });
      !s.ok())
    return s;
  const CaptureScan scan = file.scan();  // the second pass's events
  if (options.on_scan)
    options.on_scan(scan);
  Status s = file.Read([&](const CaptureEvent& ev) {
    progress.Tick(2, 2, scan.events);
    return fn(ev);
  });
  progress.Done();
  return s;
}

}  // namespace hmbtrace
