// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_join.h"

#include <algorithm>
#include <tuple>

#include "join/nvme_capture.h"

namespace hmbtrace {
namespace {

uint64_t DevCoreGen(uint16_t dev, uint16_t core, uint32_t gen) {
  return uint64_t{dev} << 48 | uint64_t{core} << 32 | gen;
}

}  // namespace

const FwFlowEnd* ExportJoin::FlowAt(uint16_t dev,
                                    uint16_t core,
                                    uint32_t gen,
                                    uint64_t seq) const {
  FwFlowEnd key;
  key.dev_core_gen = DevCoreGen(dev, core, gen);
  key.seq = seq;
  auto it = std::lower_bound(fw_ends.begin(), fw_ends.end(), key);
  return it != fw_ends.end() && *it == key ? &*it : nullptr;
}

ExportJoin ExportJoinFrom(const CommandJoin& join, bool host_events) {
  ExportJoin out;
  out.host_events = host_events;
  out.complete_without_setup = join.counts().complete_without_setup;
  out.commands.reserve(join.commands().size());
  for (const JoinedCommand& c : join.commands()) {
    ExportHostCommand h;
    h.setup_ns = c.host.setup_ns;
    h.completed = c.host.complete_ns.has_value();
    h.complete_ns = c.host.complete_ns.value_or(0);
    h.ctrl = c.host.ctrl;
    h.nsid = c.host.nsid;
    h.qid = c.host.qid;
    h.cid = c.host.cid;
    h.status = c.host.status;
    h.opcode = c.host.opcode;
    h.why_no_fetch = c.fetch >= 0 ? HostUnmatched::kNone : c.why_no_fetch;
    h.why_no_complete = c.complete >= 0 ? HostUnmatched::kNone : c.why_no_complete;
    if (c.fetch >= 0) {
      const FwCommandRecord& f = join.fw_records()[static_cast<size_t>(c.fetch)];
      h.flow = out.commands.size() + 1;
      out.fw_ends.push_back(
          {DevCoreGen(f.dev, f.core, f.producer_gen), f.seq, h.flow, h.setup_ns});
    }
    out.commands.push_back(h);
  }
  std::sort(out.fw_ends.begin(), out.fw_ends.end());
  // One record is joined to one command at most (nvme_join.h: a second one
  // is "duplicate"), so the keys are unique.
  return out;
}

Status ReadExportJoin(const std::string& path, ExportJoin* out) {
  CommandCapture cap;
  if (Status s = ReadCommandCapture(path, &cap); !s.ok())
    return s;
  *out = ExportJoinFrom(cap.join, cap.host_events);
  return {};
}

Status ReadExportJoin(CaptureFile& file, ExportJoin* out) {
  CommandCapture cap;
  if (Status s = ReadCommandCapture(file, &cap); !s.ok())
    return s;
  *out = ExportJoinFrom(cap.join, cap.host_events);
  return {};
}

}  // namespace hmbtrace
