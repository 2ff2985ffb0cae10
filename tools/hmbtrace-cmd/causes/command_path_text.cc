// SPDX-License-Identifier: GPL-2.0-only
#include "causes/command_path_text.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "causes/cause_stat.h"

namespace hmbtrace {

std::string CommandPathText(const CommandPath& c, uint64_t hz) {
  std::string out = "  firmware stages, fetch to ";
  out += c.completed ? "completion " + CauseDuration(c.latency(), hz)
                     : "end of capture (no completion)";
  out += ":\n";
  // By begin; a longer stage first when two begin together, so that it
  // encloses the shorter.
  std::vector<size_t> order(c.stages.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const CommandStage& x = c.stages[a];
    const CommandStage& y = c.stages[b];
    return x.begin != y.begin ? x.begin < y.begin : x.length() > y.length();
  });
  const int longest = c.LongestDelay();
  std::vector<uint64_t> open_ends;  // the enclosing stages' ends
  uint64_t staged = 0;
  for (size_t i : order) {
    const CommandStage& s = c.stages[i];
    while (!open_ends.empty() && s.begin >= open_ends.back())
      open_ends.pop_back();
    if (open_ends.empty()) {
      // Only outermost stages count towards the command's time.
      staged += s.length();
    }
    out += "    +" + CauseDuration(s.begin - std::min(s.begin, c.fetch), hz);
    out +=
        std::string(2 + 2 * open_ends.size(), ' ') + s.name + " " + CauseDuration(s.length(), hz);
    if (s.kind == HMB_TRACE_CMD_WAIT) {
      out += ": waited";
      if (!s.resource.empty())
        out += " for " + s.resource;
      if (s.cause == kCauseQueueing)
        out += ", queueing";
      else if (!s.cause_text.empty())
        out += ": " + s.cause_text;
      else
        out += ", " + s.cause;
    } else if (s.kind == HMB_TRACE_CMD_REWORK) {
      out += ": rework";
    }
    if (static_cast<int>(i) == longest)
      out += "  <- longest wait";
    out += "\n";
    open_ends.push_back(s.end);
  }
  if (c.completed && c.latency() > staged) {
    out += "    (" + CauseDuration(c.latency() - staged, hz) +
           " of the command in no stage: unattributed)\n";
  }
  const std::string cause = c.MainCause();
  out += "  main cause: " + cause;
  if (longest >= 0) {
    const CommandStage& s = c.stages[static_cast<size_t>(longest)];
    out += " (" + s.name + " " + CauseDuration(s.length(), hz) + ")";
  }
  out += "\n";
  return out;
}

}  // namespace hmbtrace
