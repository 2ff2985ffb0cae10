// SPDX-License-Identifier: GPL-2.0-only
#include "live/marker.h"

#include <algorithm>
#include <cstdio>

#include "live/instance.h"

namespace hmbtrace {

std::string MarkerLine(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty())
      line += ' ';
    line += w;
  }
  // One write is one ftrace:print event; an embedded newline would make
  // the line read as two in text output.
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line + "\n";
}

Status WriteMarker(const std::string& tracefs_dir, const std::vector<std::string>& words) {
  Result<InstancePtr> inst = OpenInstance(tracefs_dir);
  if (!inst.ok())
    return inst.status();
  const std::string line = MarkerLine(words);
  char err[512] = "";
  if (hmb_instance_write_marker(inst->get(), line.data(), line.size(), err, sizeof(err)) != 0)
    return Status::Error(err);
  return {};
}

int RunMarker(const std::string& tracefs_dir, const std::vector<std::string>& words) {
  if (Status s = WriteMarker(tracefs_dir, words); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd marker: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace hmbtrace
