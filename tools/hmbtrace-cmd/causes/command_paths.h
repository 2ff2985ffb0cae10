// SPDX-License-Identifier: GPL-2.0-only
//
// Why a command was slow: the firmware's records of ABI 1.2 "Command
// attribution" (a command's stages, its waits for resources, the
// background activities holding them) put together per host command. A
// wait is blamed on the activity that held its resource for most of it,
// else on "queueing"; a rework (a read retry) is its own cause.
//
// Records are device memory: a tag naming no command, a stage that never
// ends, a wait or activity with no resource are counted and left
// "unattributed", never blamed on something else. What is kept is bounded
// (commands, stages per command, activities per resource).
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_COMMAND_PATHS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_COMMAND_PATHS_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dictionary.h"

namespace hmbtrace {

inline constexpr const char kCauseQueueing[] = "queueing";
inline constexpr const char kCauseUnattributed[] = "unattributed";
inline constexpr const char kCauseNone[] = "none";

// One stage of a command, firmware ticks.
struct CommandStage {
  std::string name;  // its event's name
  uint8_t kind = HMB_TRACE_CMD_STAGE;
  uint64_t begin = 0, end = 0;
  std::string resource;  // WAIT: "die 4"; empty if none
  // WAIT and REWORK: the cause; an activity's event name, kCauseQueueing,
  // the rework's own name, or kCauseUnattributed.
  std::string cause;
  std::string cause_text;                   // the activity's record, formatted
  uint64_t cause_begin = 0, cause_end = 0;  // the activity blamed
  uint64_t length() const { return end - begin; }
  bool is_delay() const { return kind == HMB_TRACE_CMD_WAIT || kind == HMB_TRACE_CMD_REWORK; }
};

// A host command as the firmware served it: from its fetch (the BEGIN of
// its qid/cid span) to its completion (the END).
struct CommandPath {
  uint16_t dev = 0;
  uint16_t qid = 0, cid = 0;
  std::string opcode;  // the fetch's "opcode"/"opc" field as printed, or its event name
  uint64_t fetch = 0, complete = 0;  // ticks
  bool completed = false;
  std::vector<CommandStage> stages;  // in the order they ended
  uint64_t latency() const { return complete - fetch; }
  // The index of its longest delay (ties: the first), or -1.
  int LongestDelay() const;
  // Cause of its longest delay; kCauseNone if it had none.
  std::string MainCause() const;
  // Its stages in the order they began (ties: the order they ended).
  std::vector<const CommandStage*> StagesByBegin() const;
};

struct AttributionCounts {
  uint64_t records = 0;            // records with a command attribution
  uint64_t unknown_command = 0;    // a stage whose tag or qid/cid names no open command
  uint64_t stage_never_ended = 0;  // a BEGIN stage or activity with no END
  uint64_t no_resource = 0;        // a wait or an activity naming no resource
  uint64_t bad_field = 0;          // a field the record is too short for
  uint64_t dropped = 0;            // beyond the bounds kept
  uint64_t total_unattributed() const {
    return unknown_command + stage_never_ended + no_resource + bad_field + dropped;
  }
};

// Whether any event of `dict` has ABI 1.2 command attribution.
bool HasCommandAttribution(const Dictionary& dict);

class CommandPaths {
 public:
  static constexpr size_t kMaxCommands = 1u << 22;
  static constexpr size_t kMaxStagesPerCommand = 256;
  static constexpr size_t kMaxOpen = 1u << 16;  // open commands, tags, spans per device
  static constexpr size_t kMaxActivities = 1u << 22;

  // One record of device |dev| at firmware time |ts| (ticks), in time
  // order per device. Records without command attribution and not a
  // command's span are ignored.
  void Add(uint16_t dev, uint64_t ts, const EventDesc& ev, std::span<const uint8_t> payload);
  // Judges every wait against the activities seen; then commands() is final.
  void Finish();

  // Whether the capture had any ABI 1.2 command attribution record.
  bool any() const { return counts_.records > 0; }
  const std::vector<CommandPath>& commands() const { return commands_; }
  const AttributionCounts& counts() const { return counts_; }

 private:
  struct Activity {
    uint64_t begin = 0, end = 0;
    std::string name, text;
  };
  struct Resources {
    // (field name, value) -> activities, sorted by begin at Finish().
    std::map<std::pair<std::string, uint64_t>, std::vector<Activity>> held;
    // The longest activity of each, set at Finish().
    std::map<std::pair<std::string, uint64_t>, uint64_t> longest;
  };
  struct Device {
    std::map<std::pair<uint16_t, uint16_t>, size_t> open;    // (qid, cid) -> command
    std::map<uint64_t, std::pair<uint16_t, uint16_t>> tags;  // tag -> (qid, cid)
    // Open BEGIN stages: (begin id, key, command) -> stage; activities: command ~0.
    std::map<std::tuple<uint16_t, uint64_t, size_t>, std::pair<uint64_t, std::string>> spans;
    Resources resources;
  };

  void AddCommandSpan(Device& d,
                      uint16_t dev,
                      uint64_t ts,
                      const EventDesc& ev,
                      std::span<const uint8_t> payload);
  // The open command a stage record names, or -1 (counted).
  long FindCommand(Device& d, const EventDesc& ev, std::span<const uint8_t> payload);
  // [begin, end] of a stage or activity record; false while a span is open.
  bool Interval(Device& d,
                uint64_t ts,
                const EventDesc& ev,
                std::span<const uint8_t> payload,
                size_t owner,
                uint64_t* begin,
                uint64_t* end);
  void AddStage(Device& d, uint64_t ts, const EventDesc& ev, std::span<const uint8_t> payload);
  void AddActivity(Device& d, uint64_t ts, const EventDesc& ev, std::span<const uint8_t> payload);
  void Judge(const Device& d, uint16_t dev, CommandStage& s) const;

  std::map<uint16_t, Device> devices_;
  std::vector<CommandPath> commands_;
  // Per stage: the resource key it waited for, until Finish().
  std::map<std::pair<size_t, size_t>, std::pair<std::string, uint64_t>> wait_keys_;
  AttributionCounts counts_;
  size_t activities_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_COMMAND_PATHS_H_
