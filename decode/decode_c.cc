// SPDX-License-Identifier: GPL-2.0-only

#include "decode_c.h"

#include <climits>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "clock_set.h"
#include "decode_c_internal.h"
#include "dictionary.h"
#include "dictionary_file.h"
#include "dictionary_set.h"
#include "format.h"

struct hmb_dict_set {
  hmbtrace::DictionarySet set;
};

struct hmb_clock_set {
  hmbtrace::ClockSet set;
};

namespace {

// snprintf semantics for a std::string.
void CopyOut(const std::string& text, char* out, size_t outlen) {
  if (!out || outlen == 0)
    return;
  const size_t n = text.size() < outlen ? text.size() : outlen - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" {

struct hmb_dict* hmb_dict_parse(const void* buf, size_t len, char* err, size_t errlen) {
  if (!buf && len) {
    CopyOut("dictionary: NULL buffer", err, errlen);
    return nullptr;
  }
  // A C caller cannot catch std::bad_alloc: report it as an error instead.
  try {
    std::string error;
    auto dict =
        hmbtrace::Dictionary::Parse({static_cast<const uint8_t*>(buf), buf ? len : 0}, &error);
    if (!dict) {
      CopyOut(error, err, errlen);
      return nullptr;
    }
    CopyOut("", err, errlen);
    return new hmb_dict(std::move(*dict));
  } catch (const std::bad_alloc&) {
    CopyOut("dictionary: out of memory", err, errlen);
    return nullptr;
  }
}

void hmb_dict_free(struct hmb_dict* dict) {
  delete dict;
}

int hmb_dict_format(const struct hmb_dict* dict,
                    uint16_t id,
                    const void* payload,
                    size_t len,
                    char* out,
                    size_t outlen) {
  if (!dict || (!payload && len))
    return -1;
  try {
    const std::string text = hmbtrace::FormatRecord(
        dict->dict, id, {static_cast<const uint8_t*>(payload), payload ? len : 0});
    CopyOut(text, out, outlen);
    return text.size() > INT_MAX ? INT_MAX : static_cast<int>(text.size());
  } catch (const std::bad_alloc&) {
    CopyOut("", out, outlen);
    return -1;
  }
}

const char* hmb_dict_event_name(const struct hmb_dict* dict, uint16_t id) {
  if (!dict)
    return nullptr;
  const hmbtrace::EventDesc* event = dict->dict.Find(id);
  return event ? event->name.c_str() : nullptr;
}

size_t hmb_dict_nr_events(const struct hmb_dict* dict) {
  return dict ? dict->dict.events().size() : 0;
}

uint16_t hmb_dict_event_id(const struct hmb_dict* dict, size_t index) {
  if (!dict || index >= dict->dict.events().size())
    return 0;
  return dict->dict.events()[index].id;
}

struct hmb_dict_set* hmb_dict_set_alloc(void) {
  return new (std::nothrow) hmb_dict_set;
}

void hmb_dict_set_free(struct hmb_dict_set* set) {
  delete set;
}

}  // extern "C"

namespace {

int Result(const hmbtrace::DictionarySet::Update& u, char* msg, size_t msglen) {
  std::string text;
  int result = HMB_DICT_SET_NOTHING;
  if (u.completed) {
    text = "dictionary complete: " + std::to_string(u.nr_events) + " events";
    if (!u.problem.empty())
      text += "; " + u.problem;
    result = HMB_DICT_SET_COMPLETE;
  } else if (!u.problem.empty()) {
    text = u.problem;
    result = HMB_DICT_SET_PROBLEM;
  }
  CopyOut(text, msg, msglen);
  return result;
}

hmbtrace::BuildId ToBuildId(const uint8_t* p) {
  hmbtrace::BuildId id{};
  if (p)
    std::memcpy(id.data(), p, id.size());
  return id;
}

}  // namespace

extern "C" {

int hmb_dict_set_add_chunk(struct hmb_dict_set* set,
                           const struct hmb_dict_chunk* c,
                           char* msg,
                           size_t msglen) {
  if (!set || !c || (!c->data && c->len)) {
    CopyOut("bad argument", msg, msglen);
    return HMB_DICT_SET_PROBLEM;
  }
  try {
    return Result(set->set.AddChunk({c->dev,
                                     c->producer_gen,
                                     ToBuildId(c->build_id),
                                     c->total_len,
                                     c->offset,
                                     {c->data, c->data ? c->len : 0}}),
                  msg, msglen);
  } catch (const std::bad_alloc&) {
    CopyOut("out of memory", msg, msglen);
    return HMB_DICT_SET_PROBLEM;
  }
}

int hmb_dict_set_add_state(struct hmb_dict_set* set,
                           uint16_t dev,
                           int cpu,
                           uint8_t state,
                           uint32_t producer_gen,
                           const uint8_t* build_id,
                           char* msg,
                           size_t msglen) {
  if (!set) {
    CopyOut("bad argument", msg, msglen);
    return HMB_DICT_SET_PROBLEM;
  }
  try {
    return Result(set->set.AddState({dev, cpu, state, producer_gen, ToBuildId(build_id)}), msg,
                  msglen);
  } catch (const std::bad_alloc&) {
    CopyOut("out of memory", msg, msglen);
    return HMB_DICT_SET_PROBLEM;
  }
}

int hmb_dict_set_use_file(struct hmb_dict_set* set, const char* path, char* err, size_t errlen) {
  if (!set || !path) {
    CopyOut("bad argument", err, errlen);
    return -1;
  }
  try {
    std::vector<uint8_t> bytes;
    std::string error;
    if (!hmbtrace::ReadFileBounded(path, hmbtrace::kMaxDictFileBytes, &bytes, &error)) {
      CopyOut(error, err, errlen);
      return -1;
    }
    hmbtrace::BuildId id{};
    std::span<const uint8_t> dict;
    if (!hmbtrace::ParseDictFile(bytes, &id, &dict, &error)) {
      CopyOut(std::string(path) + ": " + error, err, errlen);
      return -1;
    }
    // The file alone must parse, or every merged dictionary would fail.
    auto parsed = hmbtrace::Dictionary::Parse(dict, &error);
    if (!parsed) {
      CopyOut(std::string(path) + ": " + error, err, errlen);
      return -1;
    }
    set->set.SetDictionaryFile(path, id, {dict.begin(), dict.end()});
    CopyOut("", err, errlen);
    const size_t nr = parsed->events().size();
    return nr > INT_MAX ? INT_MAX : static_cast<int>(nr);
  } catch (const std::bad_alloc&) {
    CopyOut(std::string(path) + ": out of memory", err, errlen);
    return -1;
  }
}

const struct hmb_dict* hmb_dict_set_lookup(const struct hmb_dict_set* set, uint16_t dev, int cpu) {
  return set ? set->set.ForC(dev, cpu) : nullptr;
}

int hmb_dict_set_file_used(const struct hmb_dict_set* set, uint16_t dev, int cpu) {
  return set && set->set.FileUsedFor(dev, cpu) ? 1 : 0;
}

uint32_t hmb_dict_set_generation(const struct hmb_dict_set* set, uint16_t dev, int cpu) {
  return set ? set->set.GenerationFor(dev, cpu) : 0;
}

struct hmb_clock_set* hmb_clock_set_alloc(void) {
  return new (std::nothrow) hmb_clock_set;
}

void hmb_clock_set_free(struct hmb_clock_set* set) {
  delete set;
}

int hmb_clock_set_add_fit(struct hmb_clock_set* set,
                          uint16_t dev,
                          uint32_t producer_gen,
                          const struct hmb_clock_fit* fit,
                          uint8_t flags,
                          uint8_t clock,
                          char* text,
                          size_t textlen) {
  if (!set || !fit) {
    CopyOut("bad argument", text, textlen);
    return HMB_CLOCK_SET_REFUSED;
  }
  try {
    const hmbtrace::ClockFit f{dev, producer_gen, flags, *fit, clock};
    const bool wanted = set->set.Wants(f);
    const std::string problem = set->set.Add(f);
    std::string line = hmbtrace::ClockFitText(f, set->set.ClockHz(dev, producer_gen));
    if (!problem.empty())
      line += " [" + problem + "]";
    CopyOut(line, text, textlen);
    if (!wanted)
      return HMB_CLOCK_SET_OTHER_CLOCK;
    return problem.empty() ? HMB_CLOCK_SET_USED : HMB_CLOCK_SET_REFUSED;
  } catch (const std::bad_alloc&) {
    CopyOut("out of memory", text, textlen);
    return HMB_CLOCK_SET_REFUSED;
  }
}

int hmb_clock_set_trace_clock(struct hmb_clock_set* set,
                              const char* name,
                              char* text,
                              size_t textlen) {
  if (!set) {
    CopyOut("bad argument", text, textlen);
    return -1;
  }
  try {
    const std::string problem = set->set.SetTraceClock(name ? name : "");
    CopyOut(problem, text, textlen);
    return problem.empty() ? 0 : -1;
  } catch (const std::bad_alloc&) {
    CopyOut("out of memory", text, textlen);
    return -1;
  }
}

void hmb_clock_set_add_state(struct hmb_clock_set* set,
                             uint16_t dev,
                             uint32_t producer_gen,
                             uint64_t clock_hz) {
  if (!set)
    return;
  try {
    set->set.AddState(dev, producer_gen, clock_hz);
  } catch (const std::bad_alloc&) {
    // The rate is for printing ppm only.
  }
}

int hmb_clock_set_record_time(const struct hmb_clock_set* set,
                              uint16_t dev,
                              uint32_t producer_gen,
                              uint64_t fw_ts,
                              char* out,
                              size_t outlen) {
  if (!set) {
    CopyOut("", out, outlen);
    return -1;
  }
  try {
    const hmbtrace::FwTime t = set->set.Convert(dev, producer_gen, fw_ts);
    CopyOut(hmbtrace::FwTimeText(t), out, outlen);
    return t.converted() ? 1 : 0;
  } catch (const std::bad_alloc&) {
    CopyOut("", out, outlen);
    return -1;
  }
}

int hmb_retimed_record_time(uint64_t ts,
                            uint8_t retime_flags,
                            uint8_t retime_miss,
                            uint32_t bound_ns,
                            uint64_t drain_ts,
                            char* out,
                            size_t outlen) {
  try {
    const hmbtrace::FwTime t = hmbtrace::RetimedFwTime(ts, retime_flags, retime_miss, bound_ns);
    CopyOut(hmbtrace::RetimedTimeText(t, ts, drain_ts), out, outlen);
    return t.converted() ? 1 : 0;
  } catch (const std::bad_alloc&) {
    CopyOut("", out, outlen);
    return -1;
  }
}

}  // extern "C"
