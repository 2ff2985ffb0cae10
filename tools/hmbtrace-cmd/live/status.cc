// SPDX-License-Identifier: GPL-2.0-only
#include "live/status.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "hmb_trace_events_abi.h"
#include "live/instance.h"

namespace hmbtrace {
namespace {

namespace fs = std::filesystem;

// Scalar status files, in the order they are shown.
constexpr const char* kValueFiles[] = {
    "index",          "producer_gen", "nr_cores",   "clock_hz",    "resets",   "page_size",
    "pages_per_core", "area_len",     "mapped_len", "dict_offset", "dict_len", "ring_offset",
    // draining: whether now, and the area's tunables (absent from older modules)
    "consuming", "poll_interval_us", "idle_interval_us", "budget", "dict_interval_ms"};
// lost/<reason> in hmb_lost's reason order; others follow by name.
constexpr const char* kLostOrder[] = {HMB_ABI_NAMES(HMB_LOST_REASON_LIST)};

std::optional<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return std::nullopt;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  if (s.empty() || s.size() > 20)
    return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10)
      return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::optional<std::vector<uint64_t>> ParseArray(const std::string& s) {
  std::vector<uint64_t> out;
  std::istringstream in(s);
  std::string word;
  while (in >> word) {
    auto v = ParseU64(word);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// A file's sorted regular entries, for lost/ and errors/.
std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec))
      names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

DeviceStatus ReadDevice(const fs::path& dir) {
  DeviceStatus d;
  d.name = dir.filename().string();
  d.path = dir.string();
  auto note = [&d](const std::string& file) { d.problems.push_back(file + " unreadable"); };
  if (auto s = ReadText(dir / "state"))
    d.state = *s;
  else
    note("state");
  if (auto s = ReadText(dir / "broken_reason"))
    d.broken_reason = *s;
  if (auto s = ReadText(dir / "build_id"))
    d.build_id = *s;
  if (auto s = ReadText(dir / "consume"))
    d.consume = *s;
  // ctrl/ and clock/: one value per file; absent from older modules.
  for (const char* sub : {"ctrl", "clock"}) {
    for (const std::string& f : FilesIn(dir / sub)) {
      if (f == "echo")
        continue;  // write-only
      if (auto s = ReadText(dir / sub / f))
        d.channel[std::string(sub) + "/" + f] = *s;
    }
  }
  for (const char* f : kValueFiles) {
    auto s = ReadText(dir / f);
    auto v = s ? ParseU64(*s) : std::nullopt;
    if (v)
      d.values[f] = *v;
    else if (s)
      note(f);
  }
  std::error_code ec;
  // sysfs gives binary attributes size 0: read it to learn the length.
  if (fs::exists(dir / "dictionary", ec))
    d.dictionary_bytes = ReadDictionary(d).size();

  auto cpus = ReadText(dir / "core_cpu");
  auto cpu = cpus ? ParseArray(*cpus) : std::nullopt;
  auto del_text = ReadText(dir / "delivered");
  auto delivered = del_text ? ParseArray(*del_text) : std::nullopt;
  if (!delivered)
    note("delivered");
  std::vector<std::string> reasons;
  const std::vector<std::string> lost_files = FilesIn(dir / "lost");
  for (const char* r : kLostOrder)
    if (std::find(lost_files.begin(), lost_files.end(), r) != lost_files.end())
      reasons.push_back(r);
  for (const std::string& r : lost_files)
    if (std::find(reasons.begin(), reasons.end(), r) == reasons.end())
      reasons.push_back(r);
  std::vector<std::vector<uint64_t>> lost;
  for (const std::string& r : reasons) {
    auto s = ReadText(dir / "lost" / r);
    auto v = s ? ParseArray(*s) : std::nullopt;
    if (!v)
      note("lost/" + r);
    lost.push_back(v.value_or(std::vector<uint64_t>{}));
  }
  const size_t n = delivered ? delivered->size() : 0;
  for (size_t k = 0; k < n && k <= UINT16_MAX; k++) {
    CoreStatus c;
    c.core = static_cast<uint16_t>(k);
    if (cpu && k < cpu->size())
      c.cpu = (*cpu)[k];
    c.delivered = (*delivered)[k];
    for (size_t r = 0; r < reasons.size(); r++)
      c.lost.emplace_back(reasons[r], k < lost[r].size() ? lost[r][k] : 0);
    d.cores.push_back(std::move(c));
  }
  for (const std::string& e : FilesIn(dir / "errors")) {
    auto s = ReadText(dir / "errors" / e);
    auto v = s ? ParseU64(*s) : std::nullopt;
    if (v)
      d.errors[e] = *v;
    else
      note("errors/" + e);
  }
  return d;
}

// The state, and what it means when nothing is read: firmware that has
// not started (an all-zero area) is not the same as garbage in the area.
std::string StateText(const DeviceStatus& d) {
  if (d.state.empty())
    return "?";
  if (d.state == "detached")
    return "detached (not started: no trace area written yet)";
  if (d.state != "broken")
    return d.state;
  // The module's broken_reason names (hmb_trace_events_abi.h), in words.
  static const char* const kName[] = {HMB_ABI_NAMES(HMB_BROKEN_REASON_LIST)};
  static const std::map<std::string, std::string> kWhy = {
      {kName[HMB_BROKEN_BAD_MAGIC], "garbage: no trace area magic"},
      {kName[HMB_BROKEN_BAD_ABI], "a trace area of another ABI version"},
      {kName[HMB_BROKEN_BAD_STATE], "garbage: state neither INIT nor READY"},
      {kName[HMB_BROKEN_BAD_GEOMETRY], "layout fails validation"},
      {kName[HMB_BROKEN_GEN_BACKWARDS], "producer_gen went back: not re-read"},
      {kName[HMB_BROKEN_UNMAPPED], "the meta page is not mapped"},
  };
  if (d.broken_reason.empty())
    return d.state;
  auto it = kWhy.find(d.broken_reason);
  return "broken (" + d.broken_reason + (it == kWhy.end() ? "" : ": " + it->second) + ")";
}

std::string Num(const std::optional<uint64_t>& v) {
  return v ? std::to_string(*v) : "?";
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// per_cpu/cpuN/stats: "key: value" lines; keys as the kernel spells them.
std::map<std::string, uint64_t> ParseStats(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (auto v = ParseU64(value))
      out[line.substr(0, colon)] = *v;  // timestamps ("123.456") are skipped
  }
  return out;
}

constexpr const char* kCpuStatKeys[] = {"entries", "overrun", "commit overrun", "dropped events",
                                        "read events"};

std::string JsonKey(std::string s) {
  std::replace(s.begin(), s.end(), ' ', '_');
  return s;
}

}  // namespace

uint64_t CoreStatus::lost_total() const {
  uint64_t t = 0;
  for (const auto& [reason, n] : lost)
    t += n;
  return t;
}

std::optional<uint64_t> DeviceStatus::Value(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end())
    return std::nullopt;
  return it->second;
}

std::vector<uint8_t> ReadDictionary(const DeviceStatus& dev) {
  std::ifstream in(fs::path(dev.path) / "dictionary", std::ios::binary);
  if (!in)
    return {};
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

Status ReadDevices(const std::string& sysfs_dir, std::vector<DeviceStatus>* devices) {
  if (!ModuleLoaded(sysfs_dir)) {
    return Status::Error(NotLoadedMessage(sysfs_dir));
  }
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (fs::directory_iterator it(sysfs_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec))  // follows the class's symlinks
      dirs.push_back(it->path());
  }
  if (ec) {
    return Status::Error(sysfs_dir + ": " + ec.message());
  }
  std::sort(dirs.begin(), dirs.end());
  devices->clear();
  for (const fs::path& d : dirs)
    devices->push_back(ReadDevice(d));
  return {};
}

InstanceStatus ReadInstance(const std::string& tracefs_dir) {
  InstanceStatus st;
  st.dir = InstanceDir(tracefs_dir);
  st.tracefs_mounted = TracefsMounted(tracefs_dir);
  std::error_code ec;
  st.exists = st.tracefs_mounted && fs::is_directory(st.dir, ec);
  if (!st.exists)
    return st;
  const fs::path dir(st.dir);
  if (auto s = ReadText(dir / "tracing_on"); s && ParseU64(*s))
    st.tracing_on = *ParseU64(*s) != 0;
  if (auto s = ReadText(dir / "buffer_size_kb")) {
    // "7 (expanded: 1408)" before the buffer is first used: the first number.
    st.buffer_size_kb = ParseU64(s->substr(0, s->find(' ')));
  }
  std::vector<std::string> events;
  for (fs::directory_iterator it(dir / "events" / "hmb", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_directory(ec))
      events.push_back(it->path().filename().string());
  }
  for (const std::string& e : events) {
    if (auto s = ReadText(dir / "events" / "hmb" / e / "enable"); s && !s->empty())
      st.events[e] = (*s)[0] == '1';  // "1", or "1*" when soft-enabled
  }
  std::vector<int> cpus;
  for (fs::directory_iterator it(dir / "per_cpu", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.size() > 3 && n.compare(0, 3, "cpu") == 0)
      if (auto v = ParseU64(std::string_view(n).substr(3)); v && *v < 65536)
        cpus.push_back(static_cast<int>(*v));
  }
  std::sort(cpus.begin(), cpus.end());
  for (int c : cpus) {
    CpuBufferStatus b;
    b.cpu = c;
    if (auto s = ReadText(dir / "per_cpu" / ("cpu" + std::to_string(c)) / "stats"))
      b.stats = ParseStats(*s);
    st.cpus.push_back(std::move(b));
  }
  return st;
}

// The control channel and the clock fit (empty from older modules).
std::string ClockText(const DeviceStatus& d) {
  auto get = [&d](const std::string& k) -> std::string {
    auto it = d.channel.find(k);
    return it == d.channel.end() ? "?" : it->second;
  };
  if (d.channel.empty())
    return "";
  std::string out = "  control channel: ";
  if (get("ctrl/available") != "1")
    return out + "not available (no mailbox; on nvme-pci: needs the kernel/patches series)\n";
  out += "requests " + get("ctrl/requests") + ", timeouts " + get("ctrl/timeouts") +
         ", refused " + get("ctrl/failed") + "; acknowledged: tracing " + get("ctrl/tracing") +
         ", ring_mode " + get("ctrl/ring_mode") + ", event_mask " + get("ctrl/event_mask") + "\n";
  out += "  clock fit: ";
  if (get("clock/have_fit") != "1")
    return out + "none yet (" + get("clock/bursts") + " sync bursts, " +
           get("clock/failed_bursts") + " unanswered)\n";
  uint64_t err = ParseU64(get("clock/err_ns")).value_or(0);
  uint64_t rtt = ParseU64(get("clock/rtt_min_ns")).value_or(0);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "+-%.1f us at its samples, round trip >= %.1f us, %s samples",
                static_cast<double>(err) / 1000, static_cast<double>(rtt) / 1000,
                get("clock/samples").c_str());
  out += buf;
  if (get("clock/stale") == "1")
    out += ", STALE (sync requests unanswered: the last fit, ageing)";
  out += "; bursts " + get("clock/bursts") + ", unanswered " + get("clock/failed_bursts") + "\n";
  return out;
}

// Whether the module drains the area now, and why (empty from older modules).
std::string DrainingText(const DeviceStatus& d) {
  auto consuming = d.Value("consuming");
  if (!consuming)
    return "";
  std::string out = "  draining: ";
  if (*consuming)
    out += d.consume == "always" ? "yes (consume mode always)"
                                 : "yes (a tracer has hmb_record enabled in the hmb instance)";
  else
    out +=
        "no: the firmware ring keeps its newest records until a tracer enables the hmb events "
        "(trace-cmd record -B hmb -e hmb, hmbtrace-cmd record)";
  out += "\n  consume " + (d.consume.empty() ? std::string("?") : d.consume) + ", poll " +
         Num(d.Value("poll_interval_us")) + " us, idle " + Num(d.Value("idle_interval_us")) +
         " us, budget " + Num(d.Value("budget")) + ", dict_interval " +
         Num(d.Value("dict_interval_ms")) + " ms\n";
  return out;
}

std::string StatusText(const std::vector<DeviceStatus>& devices, const InstanceStatus& inst) {
  std::string out;
  if (devices.empty())
    out += "no devices: hmb_trace.ko is loaded, but no trace area is registered\n";
  for (const DeviceStatus& d : devices) {
    out += "device " + d.name + " (dev " + Num(d.Value("index")) +
           "): " + StateText(d) + ", producer_gen " +
           Num(d.Value("producer_gen")) + ", " + Num(d.Value("nr_cores")) + " cores, clock_hz " +
           Num(d.Value("clock_hz")) + ", resets " + Num(d.Value("resets")) + "\n";
    out += "  build_id " + (d.build_id.empty() ? "?" : d.build_id) + ", dictionary " +
           (d.dictionary_bytes ? std::to_string(*d.dictionary_bytes) + " bytes" : "?") + "\n";
    out += DrainingText(d);
    out += ClockText(d);
    std::string head = "  core  cpu   delivered";
    for (const auto& [reason, n] :
         d.cores.empty() ? std::vector<std::pair<std::string, uint64_t>>{} : d.cores.front().lost)
      head += " " + Pad(reason, std::max<size_t>(reason.size(), 8));
    out += head + "\n";
    uint64_t total_delivered = 0, total_lost = 0;
    for (const CoreStatus& c : d.cores) {
      std::string line = "  " + Pad(std::to_string(c.core), 4) + " " + Pad(Num(c.cpu), 4) + " " +
                         Pad(std::to_string(c.delivered), 11);
      for (const auto& [reason, n] : c.lost)
        line += " " + Pad(std::to_string(n), std::max<size_t>(reason.size(), 8));
      out += line + "\n";
      total_delivered += c.delivered;
      total_lost += c.lost_total();
    }
    out += "  total: " + std::to_string(total_delivered) + " delivered, " +
           std::to_string(total_lost) + " lost\n";
    std::string errs;
    for (const auto& [name, n] : d.errors) {
      if (n)
        errs += (errs.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    out += "  errors: " + (errs.empty() ? std::string("none") : errs) + "\n";
    for (const std::string& p : d.problems)
      out += "  warning: " + p + "\n";
  }
  if (!inst.tracefs_mounted) {
    out += "instance: tracefs is not mounted\n";
    return out;
  }
  if (!inst.exists) {
    out += "instance " + inst.dir + ": does not exist\n";
    return out;
  }
  out += "instance " + inst.dir + ": tracing_on " +
         (inst.tracing_on ? std::to_string(*inst.tracing_on) : "?") + ", buffer_size_kb " +
         Num(inst.buffer_size_kb) + "\n";
  std::string evs;
  for (const auto& [name, on] : inst.events)
    evs += (evs.empty() ? "" : ", ") + name + (on ? " on" : " off");
  out += "  events: " + (evs.empty() ? std::string("none (hmb_trace.ko not loaded?)") : evs) + "\n";
  std::string head = "  cpu";
  for (const char* k : kCpuStatKeys)
    head += " " + Pad(k, std::max<size_t>(std::string(k).size(), 9));
  out += head + "\n";
  for (const CpuBufferStatus& b : inst.cpus) {
    std::string line = "  " + Pad(std::to_string(b.cpu), 3);
    for (const char* k : kCpuStatKeys) {
      auto it = b.stats.find(k);
      line += " " + Pad(it == b.stats.end() ? "?" : std::to_string(it->second),
                        std::max<size_t>(std::string(k).size(), 9));
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::json StatusJson(const std::vector<DeviceStatus>& devices, const InstanceStatus& inst) {
  using nlohmann::json;
  json doc;
  json devs = json::array();
  for (const DeviceStatus& d : devices) {
    json j;
    j["name"] = d.name;
    j["state"] = d.state;
    j["broken_reason"] = d.broken_reason.empty() ? json(nullptr) : json(d.broken_reason);
    j["build_id"] = d.build_id;
    j["consume"] = d.consume.empty() ? json(nullptr) : json(d.consume);
    for (const auto& [k, v] : d.channel) {
      auto n = ParseU64(v);
      j[k] = n ? json(*n) : json(v);
    }
    for (const auto& [k, v] : d.values)
      j[k] = v;
    j["dictionary_bytes"] = d.dictionary_bytes ? json(*d.dictionary_bytes) : json(nullptr);
    json cores = json::array();
    for (const CoreStatus& c : d.cores) {
      json jc;
      jc["core"] = c.core;
      jc["cpu"] = c.cpu ? json(*c.cpu) : json(nullptr);
      jc["delivered"] = c.delivered;
      json lost = json::object();
      for (const auto& [reason, n] : c.lost)
        lost[reason] = n;
      lost["total"] = c.lost_total();
      jc["lost"] = lost;
      cores.push_back(jc);
    }
    j["cores"] = cores;
    j["errors"] = json(d.errors);
    j["problems"] = json(d.problems);
    devs.push_back(j);
  }
  doc["devices"] = devs;
  json ji;
  ji["dir"] = inst.dir;
  ji["tracefs_mounted"] = inst.tracefs_mounted;
  ji["exists"] = inst.exists;
  if (inst.exists) {
    ji["tracing_on"] = inst.tracing_on ? json(*inst.tracing_on) : json(nullptr);
    ji["buffer_size_kb"] = inst.buffer_size_kb ? json(*inst.buffer_size_kb) : json(nullptr);
    ji["events"] = json(inst.events);
    json cpus = json::array();
    for (const CpuBufferStatus& b : inst.cpus) {
      json jb;
      jb["cpu"] = b.cpu;
      for (const auto& [k, v] : b.stats)
        jb[JsonKey(k)] = v;
      cpus.push_back(jb);
    }
    ji["cpus"] = cpus;
  }
  doc["instance"] = ji;
  return doc;
}

int RunStatus(const StatusOptions& options) {
  std::vector<DeviceStatus> devices;
  if (Status s = ReadDevices(options.sysfs_dir, &devices); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd status: %s\n", s.message().c_str());
    return 1;
  }
  const InstanceStatus inst = ReadInstance(options.tracefs_dir);
  const std::string out =
      options.json ? StatusJson(devices, inst).dump(2) + "\n" : StatusText(devices, inst);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  if (!inst.tracefs_mounted) {
    std::fprintf(stderr, "hmbtrace-cmd status: %s\n",
                 NoTracefsMessage(options.tracefs_dir).c_str());
    return 1;
  }
  if (!inst.exists) {
    std::fprintf(stderr,
                 "hmbtrace-cmd status: no trace instance %s: hmb_trace.ko creates it when it "
                 "loads (after an rmmod, insmod hmb_trace.ko again)\n",
                 inst.dir.c_str());
    return 1;
  }
  return 0;
}

}  // namespace hmbtrace
