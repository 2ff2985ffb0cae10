// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd ctrl: requests to the firmware over the module's control
// channel (include/hmb_trace_ctrl_abi.h), through the area's sysfs files
// ctrl/tracing, ctrl/ring_mode, ctrl/event_mask and ctrl/echo: tracing
// at the source on or off, filtering at the source by event id, the ring
// mode, a timeline probe. The host never writes the HMB: the module sends
// each request and the write returns when the firmware answered.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_CTRL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_CTRL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hmbtrace/status.h"

namespace hmbtrace {

// "mask" and "unmask-all" rewrite the mask of event ids 0..kCtrlMaxEventId
// (four 64-id words); ids above keep what the firmware had.
constexpr uint32_t kCtrlMaxEventId = 255;

struct CtrlRequest {
  std::string file;   // under the area's ctrl/: "tracing", "ring_mode", ...
  std::string value;  // what is written
};

// The requests for an operation and its arguments: "start", "stop",
// "ring-mode overwrite|stop", "mask EVENT_ID..." (only those ids produced,
// among 0..max_id), "unmask-all", "echo COOKIE [CORE]", and the firmware
// freeze (ABI 1.1): "freeze-config THRESHOLD_US N" (ctrl/freeze_config, in
// ns), "freeze-now [DETAIL]" and "rearm" (ctrl/freeze). An error with a
// message for anything else.
Status CtrlRequests(const std::vector<std::string>& args,
                    uint32_t max_id,
                    std::vector<CtrlRequest>* out);

// What a failed write's errno means here, and what to do about it.
std::string CtrlErrorText(int err);

// Sends them to the area DEVICE (a directory name under sysfs_dir; empty:
// the only one); prints what the firmware acknowledged. Exit status: 0, 1
// if a request failed, 2 for bad arguments.
int RunCtrl(const std::string& sysfs_dir, const std::string& device,
            const std::vector<std::string>& args);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_CTRL_H_
