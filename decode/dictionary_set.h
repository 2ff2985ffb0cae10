// SPDX-License-Identifier: GPL-2.0-only
//
// The firmware dictionaries a trace carries, and which one decodes a
// record: the one decoding policy of hmbtrace (Documentation/design.rst,
// decision 9), used by hmbtrace-cmd (report, stat, export, stream) and,
// through decode_c.h, by plugin_hmb.so, so that the tool and trace-cmd
// report print the same text for the same record.
//
// Reassembly. The module emits a dictionary as hmb_dict chunks of up to
// 1 KiB, per (dev, producer_gen). Chunks come from a file or the kernel's
// copy of device data and are untrusted: a chunk is accepted only if
// offset + len <= total_len <= kMaxDictionaryLen, its total_len and
// build_id agree with the earlier chunks of its (dev, producer_gen), it
// does not contradict bytes already received, and the bytes of all
// dictionaries still incomplete stay under kMaxAssemblyBytes; at most
// kMaxDevices devs are tracked. Anything else is counted, with a message,
// and dropped. One dictionary per dev is reassembled at a time: a chunk of
// another generation abandons an incomplete one (counted). A dictionary is parsed (dictionary.h)
// once every byte of [0, total_len) has arrived, and kept.
//
// The generation rule. hmb_record carries no producer_gen. The module
// drains each firmware core on one host CPU and emits hmb_state before the
// records of a new generation on every CPU that carries records (and
// periodically), so a record of `dev` on `cpu` belongs to the generation
// of the last hmb_state(attached|reset) of `dev` on `cpu`. Before the
// first one on a CPU:
//   - on a second pass over the same trace (RestartStream), the generation
//     that first hmb_state continues: its own, or, for a "reset", the one
//     before it;
//   - otherwise the device's only generation, if it has exactly one so far;
//   - otherwise none: the record is not decoded (printed raw), rather than
//     decoded with a dictionary that may be another firmware's.
// A reader that can make two passes (hmbtrace-cmd) therefore decodes more
// records than one that cannot (plugin_hmb.so in trace-cmd report), but
// never a record differently.

#ifndef HMBTRACE_DECODE_DICTIONARY_SET_H_
#define HMBTRACE_DECODE_DICTIONARY_SET_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dictionary.h"

struct hmb_dict;  // decode_c.h: a Dictionary for C callers

namespace hmbtrace {

inline constexpr uint32_t kMaxDictionaryLen = 1u << 20;
inline constexpr uint64_t kMaxAssemblyBytes = 8u << 20;
inline constexpr size_t kMaxDevices = 256;
inline constexpr size_t kBuildIdLen = 20;
using BuildId = std::array<uint8_t, kBuildIdLen>;

// Why the dictionary file `path` (dictionary_file.h), of build id
// `file_id`, does not go with build id `id` of generation `gen` of `dev`,
// or "" if it does (a zero id says nothing): the one text of the refusal,
// for every reader.
std::string DictionaryFileRefusal(std::string_view path,
                                  const BuildId& file_id,
                                  uint16_t dev,
                                  uint32_t gen,
                                  const BuildId& id);

// Why a dictionary chunk was dropped.
enum class ChunkProblem {
  kOffsetPastTotal,  // offset + len > total_len
  kTooLarge,         // total_len 0 or > kMaxDictionaryLen
  kTotalLenChanged,  // total_len differs from earlier chunks of the generation
  kConflicting,      // bytes or build_id differ from ones already received
  kUnparsable,       // complete, but Dictionary::Parse refused it
  kOverBudget,       // too many devs, or too many bytes being reassembled
  kAbandoned,        // incomplete when chunks of the dev's next generation came
  kCount,
};
std::string_view ChunkProblemName(ChunkProblem p);

// One hmb_dict event.
struct DictionaryChunk {
  uint16_t dev = 0;
  uint32_t producer_gen = 0;
  BuildId build_id{};
  uint32_t total_len = 0;
  uint32_t offset = 0;
  std::span<const uint8_t> data;
};

// One hmb_state event, as far as decoding is concerned.
struct StateChange {
  uint16_t dev = 0;
  int cpu = 0;
  uint8_t state = 0;  // enum hmb_trace_ev_state
  uint32_t producer_gen = 0;
  BuildId build_id{};
};

class DictionarySet {
 public:
  DictionarySet();
  ~DictionarySet();
  DictionarySet(const DictionarySet&) = delete;
  DictionarySet& operator=(const DictionarySet&) = delete;

  // What an event changed, for a reader to print.
  struct Update {
    bool completed = false;  // a dictionary became usable
    size_t nr_events = 0;    // its number of events, if completed
    std::string problem;     // non-empty: rejected, or a build_id mismatch
  };

  Update AddChunk(const DictionaryChunk& chunk);
  // Only attached and reset start a generation on the CPU; every state
  // names a generation of the device.
  Update AddState(const StateChange& state);

  // A dictionary file (dictionary_file.h: a firmware that keeps its
  // tokenized printf sites out of its image), set before the first chunk:
  // each generation's dictionary, once complete, is parsed merged with the
  // file's entries, unless the generation's build id (its hmb_state's or
  // its chunks'; a zero one says nothing) is not the file's. Then it is
  // parsed alone, and that hmb_state and the completion say so with both
  // ids (FileRefusal()).
  void SetDictionaryFile(std::string path, const BuildId& build_id, std::vector<uint8_t> dict);
  bool has_dictionary_file() const { return has_file_; }
  // Whether the dictionary of a record of `dev` on `cpu` took the file.
  bool FileUsedFor(uint16_t dev, int cpu) const;
  // Why the file does not go with build id `id` of (dev, gen), or "".
  std::string FileRefusal(uint16_t dev, uint32_t gen, const BuildId& id) const;

  // For a second pass over the same trace: forgets which generation each
  // CPU was in, keeps the dictionaries. Feed that pass's hmb_state events
  // to FollowState(), not AddState(), so that nothing is counted twice.
  void RestartStream();
  void FollowState(const StateChange& state);

  // The producer generation a record of `dev` on `cpu` belongs to, or 0.
  uint32_t GenerationFor(uint16_t dev, int cpu) const;
  // The dictionary of that generation, or nullptr.
  const Dictionary* For(uint16_t dev, int cpu) const;
  const Dictionary* Find(uint16_t dev, uint32_t gen) const;
  // The same, as the C interface's handle (decode_c.h).
  const hmb_dict* ForC(uint16_t dev, int cpu) const;

  // Every producer_gen of `dev` seen in states or chunks, in order.
  const std::vector<uint32_t>& Generations(uint16_t dev) const;

  const std::array<uint64_t, static_cast<size_t>(ChunkProblem::kCount)>& problems() const {
    return problems_;
  }
  uint64_t total_problems() const;
  // The first message of each kind, for reports.
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  struct Assembly;
  struct Device;

  Update Reject(ChunkProblem p, std::string message);
  // The chunk, already checked against its bounds, into the assembly of
  // its (dev, producer_gen); `d` is its dev's Device.
  Update AddChunkToAssembly(const DictionaryChunk& chunk, const std::string& where, Device* d);
  Device* GetDevice(uint16_t dev);
  static bool IsGenerationStart(uint8_t state);

  std::map<std::pair<uint16_t, uint32_t>, std::unique_ptr<Assembly>> assemblies_;
  std::map<uint16_t, Device> devices_;
  std::map<std::pair<uint16_t, int>, uint32_t> cpu_gen_;  // (dev, cpu) -> gen
  // (dev, cpu) -> gen of the records before the CPU's first hmb_state
  std::map<std::pair<uint16_t, int>, uint32_t> gen_before_first_state_;
  bool second_pass_ = false;
  bool has_file_ = false;
  std::string file_path_;
  BuildId file_build_id_{};
  std::vector<uint8_t> file_dict_;
  uint64_t assembly_bytes_ = 0;  // total_len of the incomplete assemblies
  std::array<uint64_t, static_cast<size_t>(ChunkProblem::kCount)> problems_{};
  std::vector<std::string> messages_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_DECODE_DICTIONARY_SET_H_
