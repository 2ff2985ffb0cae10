// SPDX-License-Identifier: GPL-2.0-only
#include "dictionaries.h"

#include <algorithm>
#include <iterator>

namespace hmbtrace {

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
    case ChunkProblem::kCount:
      break;
  }
  return "?";
}

uint64_t DictionaryStore::total_problems() const {
  uint64_t n = 0;
  for (uint64_t p : problems_)
    n += p;
  return n;
}

DictionaryStore::Update DictionaryStore::Reject(ChunkProblem p, std::string message) {
  uint64_t& count = problems_[static_cast<size_t>(p)];
  if (count++ == 0)
    messages_.push_back(message);
  return Update{false, std::move(message)};
}

void DictionaryStore::FollowState(const CaptureEvent& ev) {
  if (ev.kind == CaptureKind::kState)
    cpu_gen_[{ev.dev, ev.cpu}] = ev.producer_gen;
}

bool CollectDictionaries(const std::string& path, DictionaryStore* store, std::string* error) {
  const bool ok = ReadCapture(
      path,
      [store](const CaptureEvent& ev) {
        store->Add(ev);
        return true;
      },
      error);
  store->RestartStream();
  return ok;
}

DictionaryStore::Update DictionaryStore::Add(const CaptureEvent& ev) {
  if (ev.kind == CaptureKind::kState) {
    DeviceInfo& d = devices_[ev.dev];
    d.name = Printable(ev.name);
    d.clock_hz = ev.clock_hz;
    d.nr_cores = ev.nr_cores;
    d.producer_gen = ev.producer_gen;
    d.state = ev.state;
    d.build_id = ev.build_id;
    d.seen_state = true;
    const bool new_gen = std::find(d.generations.begin(), d.generations.end(), ev.producer_gen) ==
                         d.generations.end();
    if (!second_pass_ && !gen_before_first_state_.count({ev.dev, ev.cpu})) {
      // A reset's records before it are of the generation it ends.
      uint32_t before = ev.producer_gen;
      if (ev.state == kStateReset) {
        auto it = std::find(d.generations.begin(), d.generations.end(), ev.producer_gen);
        before = it != d.generations.begin() ? *std::prev(it) : 0;
        if (new_gen)
          before = d.generations.empty() ? 0 : d.generations.back();
      }
      gen_before_first_state_[{ev.dev, ev.cpu}] = before;
    }
    if (new_gen)
      d.generations.push_back(ev.producer_gen);
    cpu_gen_[{ev.dev, ev.cpu}] = ev.producer_gen;
    return {};
  }
  if (ev.kind != CaptureKind::kDict)
    return {};

  const std::string where = "dev " + std::to_string(ev.dev) + " producer_gen " +
                            std::to_string(ev.producer_gen) + ": dictionary chunk at offset " +
                            std::to_string(ev.offset) + " (" + std::to_string(ev.data.size()) +
                            " bytes, total_len " + std::to_string(ev.total_len) + ")";
  if (ev.total_len == 0 || ev.total_len > kMaxDictionaryLen)
    return Reject(ChunkProblem::kTooLarge, where + ": total_len out of range, dropped");
  if (ev.offset > ev.total_len || ev.data.size() > ev.total_len - ev.offset)
    return Reject(ChunkProblem::kOffsetPastTotal, where + ": runs past total_len, dropped");

  DeviceInfo& d = devices_[ev.dev];
  if (std::find(d.generations.begin(), d.generations.end(), ev.producer_gen) == d.generations.end())
    d.generations.push_back(ev.producer_gen);

  Assembly& a = assemblies_[{ev.dev, ev.producer_gen}];
  if (a.total_len == 0) {
    a.total_len = ev.total_len;
    a.bytes.assign(ev.total_len, 0);
    a.have.assign(ev.total_len, false);
    a.build_id = ev.build_id;
  } else if (a.total_len != ev.total_len) {
    return Reject(ChunkProblem::kTotalLenChanged,
                  where + ": total_len differs from the generation's earlier " +
                      std::to_string(a.total_len) + ", dropped");
  }
  for (size_t i = 0; i < ev.data.size(); i++) {
    const size_t at = ev.offset + i;
    if (a.have[at] && a.bytes[at] != ev.data[i])
      return Reject(ChunkProblem::kConflicting,
                    where + ": contradicts bytes received earlier, dropped");
  }
  if (a.dict || a.failed)
    return {};  // the periodic repeat of a dictionary already known
  for (size_t i = 0; i < ev.data.size(); i++) {
    const size_t at = ev.offset + i;
    if (!a.have[at]) {
      a.have[at] = true;
      a.bytes[at] = ev.data[i];
      a.have_count++;
    }
  }
  if (a.have_count != a.total_len)
    return {};
  std::string error;
  a.dict = Dictionary::Parse(a.bytes, &error);
  if (!a.dict) {
    a.failed = true;
    return Reject(ChunkProblem::kUnparsable, "dev " + std::to_string(ev.dev) + " producer_gen " +
                                                 std::to_string(ev.producer_gen) +
                                                 ": dictionary rejected: " + error);
  }
  return Update{true, {}};
}

const Dictionary* DictionaryStore::Find(uint16_t dev, uint32_t gen) const {
  auto it = assemblies_.find({dev, gen});
  if (it == assemblies_.end() || !it->second.dict)
    return nullptr;
  return &*it->second.dict;
}

uint32_t DictionaryStore::GenerationFor(uint16_t dev, int cpu) const {
  if (auto it = cpu_gen_.find({dev, cpu}); it != cpu_gen_.end())
    return it->second;
  if (second_pass_) {
    if (auto it = gen_before_first_state_.find({dev, cpu});
        it != gen_before_first_state_.end() && it->second != 0)
      return it->second;
  }
  // No hmb_state on this CPU yet: the device's only generation, if one.
  uint32_t found = 0;
  int n = 0;
  for (auto it = assemblies_.lower_bound({dev, 0});
       it != assemblies_.end() && it->first.first == dev; ++it) {
    found = it->first.second;
    n++;
  }
  if (n == 1)
    return found;
  if (auto d = devices_.find(dev); d != devices_.end() && d->second.generations.size() == 1)
    return d->second.generations.front();
  return 0;
}

const Dictionary* DictionaryStore::For(uint16_t dev, int cpu) const {
  const uint32_t gen = GenerationFor(dev, cpu);
  return gen ? Find(dev, gen) : nullptr;
}

bool ReadCaptureWithDictionaries(const std::string& path, DictionaryStore* store,
                                 const CaptureCallback& fn, std::string* error) {
  return CollectDictionaries(path, store, error) && ReadCapture(path, fn, error);
}

}  // namespace hmbtrace
