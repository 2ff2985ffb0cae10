// SPDX-License-Identifier: GPL-2.0-only
//
// The firmware dictionaries a capture carries, reassembled from hmb_dict
// chunks, and the device state from hmb_state.
//
// hmb_dict chunks come from the file and are untrusted: a chunk is accepted
// only if offset + len <= total_len <= kMaxDictionaryLen, total_len agrees
// with the other chunks of its (dev, producer_gen), and it does not
// contradict bytes already received. Anything else is counted, with a
// message, and dropped. A dictionary is parsed (decode/dictionary.h) once
// every byte of [0, total_len) has arrived.
//
// Which dictionary decodes a record: the kernel drains each firmware core
// on one host CPU and emits hmb_state on every CPU that carries records,
// so the producer generation of a record is that of the last hmb_state of
// its device on its CPU. Before the first one on a CPU: on a second pass
// (RestartStream), the generation that first hmb_state continues (its own,
// or for a "reset" the one before it); otherwise the device's only
// generation, if it has exactly one.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICTIONARIES_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICTIONARIES_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture.h"
#include "dictionary.h"

namespace hmbtrace {

inline constexpr uint32_t kMaxDictionaryLen = 1u << 20;

// Why a dictionary chunk was dropped.
enum class ChunkProblem {
  kOffsetPastTotal,  // offset + len > total_len
  kTooLarge,         // total_len 0 or > kMaxDictionaryLen
  kTotalLenChanged,  // total_len differs from earlier chunks of the generation
  kConflicting,      // bytes differ from ones already received
  kUnparsable,       // complete, but Dictionary::Parse refused it
  kCount,
};
std::string_view ChunkProblemName(ChunkProblem p);

struct DeviceInfo {
  std::string name;  // from hmb_state
  uint64_t clock_hz = 0;
  uint16_t nr_cores = 0;
  uint32_t producer_gen = 0;  // latest hmb_state
  uint8_t state = 0;
  std::array<uint8_t, 20> build_id{};
  bool seen_state = false;
  std::vector<uint32_t> generations;  // every producer_gen seen, in order
};

class DictionaryStore {
 public:
  // What an event changed, for the report to print.
  struct Update {
    bool completed = false;  // a dictionary became usable
    std::string problem;     // non-empty: a chunk or a dictionary was rejected
  };

  // Feeds hmb_state and hmb_dict events; other kinds are ignored.
  Update Add(const CaptureEvent& ev);

  // For a second pass over the same capture: forgets which generation each
  // CPU was in, keeps the dictionaries. Feed that pass's hmb_state events
  // to FollowState(), not to Add(), so that nothing is counted twice.
  void RestartStream() {
    cpu_gen_.clear();
    second_pass_ = true;
  }
  void FollowState(const CaptureEvent& ev);

  // The dictionary for a record of `dev` delivered on `cpu`, or nullptr.
  const Dictionary* For(uint16_t dev, int cpu) const;
  // The producer generation a record of `dev` on `cpu` belongs to, or 0.
  uint32_t GenerationFor(uint16_t dev, int cpu) const;

  const Dictionary* Find(uint16_t dev, uint32_t gen) const;
  const std::map<uint16_t, DeviceInfo>& devices() const { return devices_; }
  const std::array<uint64_t, static_cast<size_t>(ChunkProblem::kCount)>& problems() const {
    return problems_;
  }
  uint64_t total_problems() const;
  // The first message of each kind, for reports.
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  struct Assembly {
    uint32_t total_len = 0;
    std::vector<uint8_t> bytes;
    std::vector<bool> have;
    uint32_t have_count = 0;
    std::array<uint8_t, 20> build_id{};
    std::optional<Dictionary> dict;
    bool failed = false;
  };

  Update Reject(ChunkProblem p, std::string message);

  std::map<std::pair<uint16_t, uint32_t>, Assembly> assemblies_;
  std::map<uint16_t, DeviceInfo> devices_;
  std::map<std::pair<uint16_t, int>, uint32_t> cpu_gen_;  // (dev, cpu) -> gen
  // (dev, cpu) -> gen of the records before the CPU's first hmb_state
  std::map<std::pair<uint16_t, int>, uint32_t> gen_before_first_state_;
  bool second_pass_ = false;
  std::array<uint64_t, static_cast<size_t>(ChunkProblem::kCount)> problems_{};
  std::vector<std::string> messages_;
};

// First pass over `path`: every dictionary and device it carries.
bool CollectDictionaries(const std::string& path, DictionaryStore* store, std::string* error);

// Both passes: every dictionary into `store`, then every event to `fn`, so
// that records are decoded with their generation's dictionary even where
// its hmb_dict events come later in the capture.
bool ReadCaptureWithDictionaries(const std::string& path, DictionaryStore* store,
                                 const CaptureCallback& fn, std::string* error);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICTIONARIES_H_
