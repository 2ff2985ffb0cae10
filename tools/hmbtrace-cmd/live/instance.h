// SPDX-License-Identifier: GPL-2.0-only
//
// The live side of hmbtrace-cmd: where the module's status (sysfs) and the
// "hmb" trace instance (tracefs) are, the messages that say what is
// missing and how to fix it, and an RAII handle on the instance
// (instance_c.h). Every path is passed in; the defaults are only used by
// main.cc, so tests never touch the real /sys.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_INSTANCE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_INSTANCE_H_

#include <memory>
#include <string>
#include <string_view>

#include "hmbtrace/status.h"
#include "live/instance_c.h"

namespace hmbtrace {

inline constexpr std::string_view kDefaultSysfsDir = "/sys/class/hmb_trace";
inline constexpr std::string_view kDefaultTracefsDir = "/sys/kernel/tracing";

inline constexpr std::string_view kNotLoaded =
    "hmb_trace.ko is not loaded (modprobe hmb_trace / insmod hmb_trace.ko)";

struct InstanceCloser {
  void operator()(hmb_instance* inst) const { hmb_instance_close(inst); }
};
using InstancePtr = std::unique_ptr<hmb_instance, InstanceCloser>;

// TRACEFS_DIR/instances/hmb.
std::string InstanceDir(const std::string& tracefs_dir);

// Whether a tracefs is mounted at tracefs_dir (it has tracing_on and
// instances/), and the message with the fix when it is not.
bool TracefsMounted(const std::string& tracefs_dir);
std::string NoTracefsMessage(const std::string& tracefs_dir);

// Whether the module's sysfs class directory exists.
bool ModuleLoaded(const std::string& sysfs_dir);
std::string NotLoadedMessage(const std::string& sysfs_dir);

// Whether TRACEFS_DIR/instances/hmb exists, and the message with the fix
// when it does not.
bool InstanceExists(const std::string& tracefs_dir);
std::string NoInstanceMessage(const std::string& tracefs_dir);

// Opens the hmb instance. On failure: a message that says which of
// tracefs / the instance is missing and the fix.
Result<InstancePtr> OpenInstance(const std::string& tracefs_dir);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_INSTANCE_H_
