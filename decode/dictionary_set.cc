// SPDX-License-Identifier: GPL-2.0-only
#include "dictionary_set.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <new>

#include "decode_c_internal.h"
#include "dictionary_file.h"
#include "format.h"
#include "hmb_trace_events_abi.h"

namespace hmbtrace {

// A dictionary being reassembled, then the parsed result. Invariant: bytes
// and have are sized total_len while incomplete, have_count counts the
// bytes received; once complete, have is released and exactly one of dict
// (parsed) or failed (refused) is set.
struct DictionarySet::Assembly {
  uint32_t total_len = 0;
  BuildId build_id{};
  std::vector<uint8_t> bytes;
  std::vector<bool> have;
  uint32_t have_count = 0;
  std::unique_ptr<hmb_dict> dict;
  bool failed = false;
  bool with_file = false;  // parsed merged with the dictionary file
  bool complete() const { return dict || failed; }
};

struct DictionarySet::Device {
  std::vector<uint32_t> generations;  // in order of first appearance
  // build_id of the latest hmb_state, per generation, for mismatch checks
  std::map<uint32_t, BuildId> state_build_id;

  void Note(uint32_t gen) {
    if (std::find(generations.begin(), generations.end(), gen) == generations.end())
      generations.push_back(gen);
  }
};

namespace {

std::string Where(uint16_t dev, uint32_t gen) {
  return "dev " + std::to_string(dev) + " producer_gen " + std::to_string(gen);
}

}  // namespace

std::string_view ChunkProblemName(ChunkProblem p) {
  switch (p) {
    case ChunkProblem::kOffsetPastTotal:
      return "offset past total_len";
    case ChunkProblem::kTooLarge:
      return "total_len out of range";
    case ChunkProblem::kTotalLenChanged:
      return "total_len changed";
    case ChunkProblem::kConflicting:
      return "conflicting bytes";
    case ChunkProblem::kUnparsable:
      return "unparsable dictionary";
    case ChunkProblem::kOverBudget:
      return "over the reassembly budget";
    case ChunkProblem::kAbandoned:
      return "incomplete dictionary abandoned";
    case ChunkProblem::kCount:
      break;
  }
  return "?";
}

DictionarySet::DictionarySet() = default;
DictionarySet::~DictionarySet() = default;

bool DictionarySet::IsGenerationStart(uint8_t state) {
  return state == HMB_TRACE_EV_ATTACHED || state == HMB_TRACE_EV_RESET;
}

uint64_t DictionarySet::total_problems() const {
  uint64_t n = 0;
  for (uint64_t p : problems_)
    n += p;
  return n;
}

DictionarySet::Update DictionarySet::Reject(ChunkProblem p, std::string message) {
  uint64_t& count = problems_[static_cast<size_t>(p)];
  if (count++ == 0)
    messages_.push_back(message);
  return Update{false, 0, std::move(message)};
}

DictionarySet::Device* DictionarySet::GetDevice(uint16_t dev) {
  if (auto it = devices_.find(dev); it != devices_.end())
    return &it->second;
  if (devices_.size() >= kMaxDevices)
    return nullptr;
  return &devices_[dev];
}

void DictionarySet::SetDictionaryFile(std::string path,
                                      const BuildId& build_id,
                                      std::vector<uint8_t> dict) {
  has_file_ = true;
  file_path_ = std::move(path);
  file_build_id_ = build_id;
  file_dict_ = std::move(dict);
}

std::string DictionaryFileRefusal(std::string_view path,
                                  const BuildId& file_id,
                                  uint16_t dev,
                                  uint32_t gen,
                                  const BuildId& id) {
  if (id == BuildId{} || id == file_id)
    return {};
  return "dictionary file " + std::string(path) + " is of build id " + Hex(file_id) +
         ", the trace's (dev " + std::to_string(dev) + ", producer_gen " + std::to_string(gen) +
         ") is " + Hex(id) + ": refused (a dictionary of another build decodes records wrongly)";
}

std::string DictionarySet::FileRefusal(uint16_t dev, uint32_t gen, const BuildId& id) const {
  if (!has_file_)
    return {};
  return DictionaryFileRefusal(file_path_, file_build_id_, dev, gen, id);
}

DictionarySet::Update DictionarySet::AddState(const StateChange& s) {
  if (!IsGenerationStart(s.state))
    return {};
  Device* d = GetDevice(s.dev);
  if (!d)
    return Reject(ChunkProblem::kOverBudget, "dev " + std::to_string(s.dev) + ": more than " +
                                                 std::to_string(kMaxDevices) + " devs, ignored");
  const bool new_gen = std::find(d->generations.begin(), d->generations.end(), s.producer_gen) ==
                       d->generations.end();
  if (!second_pass_ && !gen_before_first_state_.count({s.dev, s.cpu})) {
    // The records of a CPU before its first state are of the generation
    // that state continues; a reset's, of the generation it ends.
    uint32_t before = s.producer_gen;
    if (s.state == HMB_TRACE_EV_RESET) {
      if (new_gen) {
        before = d->generations.empty() ? 0 : d->generations.back();
      } else {
        auto it = std::find(d->generations.begin(), d->generations.end(), s.producer_gen);
        before = it != d->generations.begin() ? *std::prev(it) : 0;
      }
    }
    gen_before_first_state_[{s.dev, s.cpu}] = before;
  }
  d->Note(s.producer_gen);
  d->state_build_id[s.producer_gen] = s.build_id;
  cpu_gen_[{s.dev, s.cpu}] = s.producer_gen;

  Update u;
  auto it = assemblies_.find({s.dev, s.producer_gen});
  if (it != assemblies_.end() && it->second->build_id != s.build_id)
    u.problem = "build_id mismatch: dictionary of " + Where(s.dev, s.producer_gen) + " has " +
                Hex(it->second->build_id);
  if (std::string refused = FileRefusal(s.dev, s.producer_gen, s.build_id); !refused.empty())
    u.problem = u.problem.empty() ? refused : u.problem + "; " + refused;
  return u;
}

void DictionarySet::RestartStream() {
  cpu_gen_.clear();
  second_pass_ = true;
}

void DictionarySet::FollowState(const StateChange& s) {
  if (IsGenerationStart(s.state))
    cpu_gen_[{s.dev, s.cpu}] = s.producer_gen;
}

DictionarySet::Update DictionarySet::AddChunk(const DictionaryChunk& c) {
  const std::string where = Where(c.dev, c.producer_gen) + ": dictionary chunk at offset " +
                            std::to_string(c.offset) + " (" + std::to_string(c.data.size()) +
                            " bytes, total_len " + std::to_string(c.total_len) + ")";
  if (c.total_len == 0 || c.total_len > kMaxDictionaryLen)
    return Reject(ChunkProblem::kTooLarge, where + ": total_len out of range, dropped");
  if (c.offset > c.total_len || c.data.size() > c.total_len - c.offset)
    return Reject(ChunkProblem::kOffsetPastTotal, where + ": runs past total_len, dropped");
  Device* d = GetDevice(c.dev);
  if (!d)
    return Reject(ChunkProblem::kOverBudget,
                  where + ": more than " + std::to_string(kMaxDevices) + " devs, dropped");

  // At most one dictionary of a dev is reassembled at a time: chunks of a
  // new generation abandon an incomplete one (its missing chunks were lost,
  // or the capture began after them), so that its bytes do not hold the
  // budget for ever.
  std::string abandoned;
  if (!assemblies_.count({c.dev, c.producer_gen})) {
    for (auto it = assemblies_.lower_bound({c.dev, 0});
         it != assemblies_.end() && it->first.first == c.dev; ++it) {
      const Assembly& old = *it->second;
      if (old.complete())
        continue;
      abandoned = "restarting dictionary: had " + std::to_string(old.have_count) + " of " +
                  std::to_string(old.total_len) + " bytes of producer_gen " +
                  std::to_string(it->first.second);
      Reject(ChunkProblem::kAbandoned, Where(c.dev, it->first.second) + ": " + abandoned);
      assembly_bytes_ -= old.total_len;
      assemblies_.erase(it);
      break;
    }
  }
  Update u = AddChunkToAssembly(c, where, d);
  if (!abandoned.empty())
    u.problem = u.problem.empty() ? abandoned : abandoned + "; " + u.problem;
  return u;
}

DictionarySet::Update DictionarySet::AddChunkToAssembly(const DictionaryChunk& c,
                                                        const std::string& where,
                                                        Device* d) {
  std::unique_ptr<Assembly>& slot = assemblies_[{c.dev, c.producer_gen}];
  if (!slot) {
    if (assembly_bytes_ + c.total_len > kMaxAssemblyBytes) {
      assemblies_.erase({c.dev, c.producer_gen});
      return Reject(ChunkProblem::kOverBudget, where + ": over " +
                                                   std::to_string(kMaxAssemblyBytes) +
                                                   " bytes of dictionaries in progress, dropped");
    }
    try {
      auto a = std::make_unique<Assembly>();
      a->total_len = c.total_len;
      a->build_id = c.build_id;
      a->bytes.assign(c.total_len, 0);
      a->have.assign(c.total_len, false);
      slot = std::move(a);
    } catch (const std::bad_alloc&) {
      assemblies_.erase({c.dev, c.producer_gen});
      return Reject(ChunkProblem::kOverBudget, where + ": out of memory, dropped");
    }
    assembly_bytes_ += c.total_len;
  }
  Assembly& a = *slot;
  d->Note(c.producer_gen);
  if (a.total_len != c.total_len)
    return Reject(ChunkProblem::kTotalLenChanged,
                  where + ": total_len differs from the generation's earlier " +
                      std::to_string(a.total_len) + ", dropped");
  if (a.build_id != c.build_id)
    return Reject(ChunkProblem::kConflicting, where + ": build_id " + Hex(c.build_id) +
                                                  " differs from the generation's earlier " +
                                                  Hex(a.build_id) + ", dropped");
  for (size_t i = 0; i < c.data.size(); i++) {
    const size_t at = c.offset + i;
    if ((a.complete() || a.have[at]) && a.bytes[at] != c.data[i])
      return Reject(ChunkProblem::kConflicting,
                    where + ": contradicts bytes received earlier, dropped");
  }
  if (a.complete())
    return {};  // the periodic repeat of a dictionary already known
  for (size_t i = 0; i < c.data.size(); i++) {
    const size_t at = c.offset + i;
    if (!a.have[at]) {
      a.have[at] = true;
      a.bytes[at] = c.data[i];
      a.have_count++;
    }
  }
  if (a.have_count != a.total_len)
    return {};
  assembly_bytes_ -= a.total_len;
  std::vector<bool>().swap(a.have);
  std::string error, refused;
  std::vector<uint8_t> merged;
  if (has_file_) {
    refused = FileRefusal(c.dev, c.producer_gen, a.build_id);
    auto sb = d->state_build_id.find(c.producer_gen);
    if (refused.empty() && sb != d->state_build_id.end())
      refused = FileRefusal(c.dev, c.producer_gen, sb->second);
    if (refused.empty()) {
      merged = MergeDictionaries(a.bytes, file_dict_);
      a.with_file = true;
    }
  }
  auto dict = Dictionary::Parse(merged.empty() ? std::span<const uint8_t>(a.bytes) : merged,
                                &error);
  if (!dict) {
    a.failed = true;
    return Reject(ChunkProblem::kUnparsable,
                  Where(c.dev, c.producer_gen) + ": dictionary rejected: " + error);
  }
  a.dict = std::make_unique<hmb_dict>(std::move(*dict));
  Update u{true, a.dict->dict.events().size(), {}};
  auto sb = d->state_build_id.find(c.producer_gen);
  if (sb != d->state_build_id.end() && sb->second != a.build_id)
    u.problem = "build_id mismatch: hmb_state of " + Where(c.dev, c.producer_gen) + " has " +
                Hex(sb->second);
  if (!refused.empty())
    u.problem = u.problem.empty() ? refused : u.problem + "; " + refused;
  return u;
}

const std::vector<uint32_t>& DictionarySet::Generations(uint16_t dev) const {
  static const std::vector<uint32_t> kNone;
  auto it = devices_.find(dev);
  return it == devices_.end() ? kNone : it->second.generations;
}

uint32_t DictionarySet::GenerationFor(uint16_t dev, int cpu) const {
  if (auto it = cpu_gen_.find({dev, cpu}); it != cpu_gen_.end())
    return it->second;
  if (second_pass_) {
    if (auto it = gen_before_first_state_.find({dev, cpu});
        it != gen_before_first_state_.end() && it->second != 0)
      return it->second;
  }
  // No hmb_state on this CPU yet: the device's only generation, if one.
  if (auto d = devices_.find(dev); d != devices_.end() && d->second.generations.size() == 1)
    return d->second.generations.front();
  return 0;
}

const Dictionary* DictionarySet::Find(uint16_t dev, uint32_t gen) const {
  auto it = assemblies_.find({dev, gen});
  if (it == assemblies_.end() || !it->second->dict)
    return nullptr;
  return &it->second->dict->dict;
}

const Dictionary* DictionarySet::For(uint16_t dev, int cpu) const {
  const uint32_t gen = GenerationFor(dev, cpu);
  return gen ? Find(dev, gen) : nullptr;
}

bool DictionarySet::FileUsedFor(uint16_t dev, int cpu) const {
  const uint32_t gen = GenerationFor(dev, cpu);
  auto it = gen ? assemblies_.find({dev, gen}) : assemblies_.end();
  return it != assemblies_.end() && it->second->dict && it->second->with_file;
}

const hmb_dict* DictionarySet::ForC(uint16_t dev, int cpu) const {
  const uint32_t gen = GenerationFor(dev, cpu);
  if (!gen)
    return nullptr;
  auto it = assemblies_.find({dev, gen});
  return it == assemblies_.end() ? nullptr : it->second->dict.get();
}

}  // namespace hmbtrace
