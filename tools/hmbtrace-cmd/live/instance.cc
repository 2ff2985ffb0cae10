// SPDX-License-Identifier: GPL-2.0-only
#include "live/instance.h"

#include <cerrno>
#include <filesystem>

namespace hmbtrace {

namespace fs = std::filesystem;

std::string InstanceDir(const std::string& tracefs_dir) {
  return tracefs_dir + "/instances/hmb";
}

bool TracefsMounted(const std::string& tracefs_dir) {
  std::error_code ec;
  return fs::exists(tracefs_dir + "/tracing_on", ec) &&
         fs::is_directory(tracefs_dir + "/instances", ec);
}

std::string NoTracefsMessage(const std::string& tracefs_dir) {
  return "no tracefs at " + tracefs_dir + " (mount it: mount -t tracefs nodev " + tracefs_dir + ")";
}

bool ModuleLoaded(const std::string& sysfs_dir) {
  std::error_code ec;
  return fs::is_directory(sysfs_dir, ec);
}

std::string NotLoadedMessage(const std::string& sysfs_dir) {
  return std::string(kNotLoaded) + ": no " + sysfs_dir;
}

bool InstanceExists(const std::string& tracefs_dir) {
  std::error_code ec;
  return fs::is_directory(InstanceDir(tracefs_dir), ec);
}

std::string NoInstanceMessage(const std::string& tracefs_dir) {
  return "no trace instance " + InstanceDir(tracefs_dir) +
         ": hmb_trace.ko creates it when it loads (is it loaded? after an rmmod, "
         "insmod hmb_trace.ko again)";
}

Result<InstancePtr> OpenInstance(const std::string& tracefs_dir) {
  if (!TracefsMounted(tracefs_dir))
    return Status::Error(NoTracefsMessage(tracefs_dir));
  char err[512] = "";
  errno = 0;
  InstancePtr inst(hmb_instance_open(tracefs_dir.c_str(), err, sizeof(err)));
  if (!inst)
    return Status::Error(errno == ENOENT ? NoInstanceMessage(tracefs_dir) : std::string(err));
  return inst;
}

}  // namespace hmbtrace
