// SPDX-License-Identifier: GPL-2.0-only
//
// What `hmbtrace-cmd export` keeps of the command join (nvme_join.h) to draw
// the host's NVMe commands and their flows to the firmware: per host
// command, its times, identity and join (ExportHostCommand, 48 bytes), and
// per firmware record a flow ends at (the fetch joined to a command), its
// identity (dev, core, producer generation, seq) -> flow id (FwFlowEnd,
// 32 bytes, sorted for a binary search while the records stream by): 80
// bytes a command during the export pass. The join itself needs the whole
// capture (a pass of its own, before the export's) and is freed before the
// export pass; while it runs it holds every host command and every
// firmware record that names one, as for `stat` (measured: about 400 bytes
// a command at its peak, 91 MB for a 200 k-command capture).
//
// Flow ids: command i (in setup order) has flow i + 1 when its fetch was
// joined; no flow is made for a command the join did not place.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_JOIN_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_JOIN_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "capture/capture.h"
#include "hmbtrace/status.h"
#include "join/nvme_join.h"

namespace hmbtrace {

struct ExportHostCommand {  // 48 bytes
  uint64_t setup_ns = 0;
  uint64_t complete_ns = 0;  // valid if completed
  uint32_t ctrl = 0;
  uint32_t nsid = 0;
  uint64_t flow = 0;  // 0: none
  uint16_t qid = 0;
  uint16_t cid = 0;
  uint16_t status = 0;
  uint8_t opcode = 0;
  bool completed = false;
  HostUnmatched why_no_fetch = HostUnmatched::kNone;
  HostUnmatched why_no_complete = HostUnmatched::kNone;
};

struct FwFlowEnd {
  uint64_t dev_core_gen = 0;  // dev << 48 | core << 32 | producer generation
  uint64_t seq = 0;
  uint64_t flow = 0;
  uint64_t host_setup_ns = 0;  // where the flow starts

  auto operator<=>(const FwFlowEnd& o) const {
    return std::tie(dev_core_gen, seq) <=> std::tie(o.dev_core_gen, o.seq);
  }
  bool operator==(const FwFlowEnd& o) const {
    return dev_core_gen == o.dev_core_gen && seq == o.seq;
  }
};

struct ExportJoin {
  bool host_events = false;  // the capture has the nvme events
  std::vector<ExportHostCommand> commands;  // in setup order
  std::vector<FwFlowEnd> fw_ends;           // sorted
  uint64_t complete_without_setup = 0;

  // The flow that ends at the firmware record (dev, core, gen, seq), if any.
  const FwFlowEnd* FlowAt(uint16_t dev, uint16_t core, uint32_t gen, uint64_t seq) const;
};

// Reads `path`'s host commands and joins them (nvme_capture.h). A capture
// without the nvme events gives an empty join, not an error.
Status ReadExportJoin(const std::string& path, ExportJoin* out);
// The same from a capture already open (its passes start from the first
// event again).
Status ReadExportJoin(CaptureFile& file, ExportJoin* out);

// From a finished CommandJoin (for tests).
ExportJoin ExportJoinFrom(const CommandJoin& join, bool host_events);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_JOIN_H_
