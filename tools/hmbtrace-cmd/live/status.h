// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd status: what the module and the "hmb" trace instance say
// right now, read-only. Per device (/sys/class/hmb_trace/<name>/, see
// kernel/hmb_trace/hmb_trace_status.c): state, geometry, per-core
// delivered and lost by reason, error counters, dictionary size. For the
// instance: tracing_on, buffer_size_kb, which hmb events are enabled and
// each CPU buffer's ftrace counters (per_cpu/cpuN/stats).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STATUS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STATUS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hmbtrace/status.h"

namespace hmbtrace {

struct CoreStatus {
  uint16_t core = 0;
  std::optional<uint64_t> cpu;  // host CPU that drains it
  uint64_t delivered = 0;
  std::vector<std::pair<std::string, uint64_t>> lost;  // reason -> records, sysfs order
  uint64_t lost_total() const;
};

struct DeviceStatus {
  std::string name;  // the status directory
  std::string path;
  std::string state;
  // Why state is "broken" (bad_magic, bad_abi_version, ...), "none"
  // otherwise; empty from a module without the file.
  std::string broken_reason;
  std::string build_id;
  std::string consume;  // "traced" or "always"; empty from an older module
  // ctrl/* and clock/* files ("ctrl/timeouts" -> "0"); empty from an older module
  std::map<std::string, std::string> channel;
  // index, producer_gen, nr_cores, clock_hz, resets and the geometry files
  std::map<std::string, uint64_t> values;
  std::vector<CoreStatus> cores;
  std::map<std::string, uint64_t> errors;
  std::optional<uint64_t> dictionary_bytes;
  std::vector<std::string> problems;  // files that could not be read
  std::optional<uint64_t> Value(const std::string& key) const;
};

struct CpuBufferStatus {
  int cpu = 0;
  std::map<std::string, uint64_t> stats;  // "entries", "overrun", "dropped events", ...
};

struct InstanceStatus {
  std::string dir;
  bool tracefs_mounted = false;
  bool exists = false;
  std::optional<bool> tracing_on;
  std::optional<uint64_t> buffer_size_kb;
  std::map<std::string, bool> events;  // hmb_* -> enabled
  std::vector<CpuBufferStatus> cpus;
};

// Every device under sysfs_dir, sorted by name. An error if the
// directory does not exist: the module is not loaded.
Status ReadDevices(const std::string& sysfs_dir, std::vector<DeviceStatus>* devices);
InstanceStatus ReadInstance(const std::string& tracefs_dir);

// The raw dictionary the module validated (sysfs "dictionary"), empty if none.
std::vector<uint8_t> ReadDictionary(const DeviceStatus& dev);

std::string StatusText(const std::vector<DeviceStatus>& devices, const InstanceStatus& inst);
nlohmann::json StatusJson(const std::vector<DeviceStatus>& devices, const InstanceStatus& inst);

struct StatusOptions {
  bool json = false;
  std::string sysfs_dir;
  std::string tracefs_dir;
};

// Prints the status; 1 (with the fix on stderr) if the module is not
// loaded, tracefs is not mounted or the instance is missing.
int RunStatus(const StatusOptions& options);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_STATUS_H_
