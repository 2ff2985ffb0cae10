// SPDX-License-Identifier: GPL-2.0-only
#include "causes/cause_stat.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

namespace hmbtrace {
namespace {

// Nearest-rank percentile of sorted |v|; |v| not empty.
uint64_t Percentile(const std::vector<uint64_t>& v, unsigned pct) {
  size_t rank = (v.size() * pct + 99) / 100;
  return v[rank ? rank - 1 : 0];
}

double Micros(uint64_t ticks, uint64_t hz) {
  return hz ? static_cast<double>(ticks) * 1e6 / static_cast<double>(hz)
            : static_cast<double>(ticks);
}

struct OpcodeStat {
  std::vector<uint64_t> latency;
  std::map<std::string, std::vector<uint64_t>> stages;  // per command, summed
  uint64_t p99 = 0;
  uint64_t tail = 0, tail_ticks = 0;
  std::map<std::string, uint64_t> tail_cause_ticks;
  std::map<std::string, uint64_t> tail_main_cause;
  std::map<std::string, uint64_t> main_cause;  // of every command
  std::vector<const CommandPath*> slowest;  // the tail, slowest first, at most kMaxSlowest
  uint64_t slowest_truncated = 0;           // tail commands left out of |slowest|
};

// Slowest first; ties in fetch order, then by qid and cid, so the list is
// the same on every run.
bool Slower(const CommandPath* a, const CommandPath* b) {
  if (a->latency() != b->latency())
    return a->latency() > b->latency();
  return std::tie(a->fetch, a->qid, a->cid) < std::tie(b->fetch, b->qid, b->cid);
}


// Per (device, opcode), from the completed commands.
std::map<std::pair<uint16_t, std::string>, OpcodeStat> Collect(const CommandPaths& paths,
                                                                size_t max_slowest) {
  std::map<std::pair<uint16_t, std::string>, OpcodeStat> out;
  for (const CommandPath& c : paths.commands()) {
    if (!c.completed)
      continue;
    OpcodeStat& o = out[{c.dev, c.opcode}];
    o.latency.push_back(c.latency());
    o.main_cause[c.MainCause()]++;
    std::map<std::string, uint64_t> sums;
    for (const CommandStage& s : c.stages)
      sums[s.name] += s.length();
    for (const auto& [name, ticks] : sums)
      o.stages[name].push_back(ticks);
  }
  for (auto& [key, o] : out) {
    std::vector<uint64_t> sorted = o.latency;
    std::sort(sorted.begin(), sorted.end());
    o.p99 = Percentile(sorted, 99);
    for (auto& [name, v] : o.stages)
      std::sort(v.begin(), v.end());
  }
  for (const CommandPath& c : paths.commands()) {
    if (!c.completed)
      continue;
    OpcodeStat& o = out[{c.dev, c.opcode}];
    if (c.latency() <= o.p99)
      continue;
    o.tail++;
    o.tail_ticks += c.latency();
    o.tail_main_cause[c.MainCause()]++;
    o.slowest.push_back(&c);
    uint64_t staged = 0;
    for (const CommandStage& s : c.stages) {
      o.tail_cause_ticks[s.is_delay() ? s.cause : kCauseWork] += s.length();
      staged += s.length();
    }
    // Time no stage accounts for (or stages overlapping) is not guessed at.
    if (c.latency() > staged)
      o.tail_cause_ticks[kCauseUnattributed] += c.latency() - staged;
  }
  for (auto& [key, o] : out) {
    std::sort(o.slowest.begin(), o.slowest.end(), Slower);
    if (o.slowest.size() > max_slowest) {
      o.slowest_truncated = o.slowest.size() - max_slowest;
      o.slowest.resize(max_slowest);
    }
  }
  return out;
}

std::string Line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Line(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

nlohmann::json SlowCommandJson(const CommandPath& c) {
  const int longest = c.LongestDelay();
  nlohmann::json list = nlohmann::json::array();
  for (const CommandStage* s : c.StagesByBegin()) {
    list.push_back({{"name", s->name},
                    {"begin", s->begin},
                    {"end", s->end},
                    {"cause", s->is_delay() ? s->cause : std::string()}});
  }
  return {{"qid", c.qid},
          {"cid", c.cid},
          {"fetch", c.fetch},
          {"latency", c.latency()},
          {"main_cause", c.MainCause()},
          {"longest_delay",
           longest < 0 ? std::string(kCauseNone) : c.stages[static_cast<size_t>(longest)].name},
          {"stages", std::move(list)}};
}

}  // namespace

std::string CauseDuration(uint64_t ticks, uint64_t hz) {
  if (!hz)
    return std::to_string(ticks) + " ticks";
  const double us = Micros(ticks, hz);
  return us >= 1000 ? Line("%.3f ms", us / 1000) : Line("%.1f us", us);
}

std::string CauseStatText(const CommandPaths& paths, const std::function<uint64_t(uint16_t)>& hz) {
  if (!paths.any())
    return "";
  const AttributionCounts& n = paths.counts();
  std::string out = Line("\nCommand causes (ABI 1.2 attribution): %zu commands, %" PRIu64
                         " attribution records, %" PRIu64 " unattributed\n",
                         paths.commands().size(), n.records, n.total_unattributed());
  if (n.total_unattributed()) {
    out +=
        Line("  unattributed: %" PRIu64 " name no open command, %" PRIu64 " never ended, %" PRIu64
             " name no resource, %" PRIu64 " too short, %" PRIu64 " beyond bounds\n",
             n.unknown_command, n.stage_never_ended, n.no_resource, n.bad_field, n.dropped);
  }
  for (const auto& [key, o] : Collect(paths, 0)) {
    const uint64_t rate = hz(key.first);
    const char* unit = rate ? "us" : "ticks";
    std::vector<uint64_t> sorted = o.latency;
    std::sort(sorted.begin(), sorted.end());
    out +=
        Line("  device %u %s: %zu commands, firmware time p50 %.1f p90 %.1f p99 %.1f %s\n",
             key.first, key.second.c_str(), o.latency.size(), Micros(Percentile(sorted, 50), rate),
             Micros(Percentile(sorted, 90), rate), Micros(o.p99, rate), unit);
    out += Line("    %-24s %9s %11s %11s %11s\n", "stage", "commands", "p50", "p90", "p99");
    for (const auto& [name, v] : o.stages) {
      out += Line("    %-24s %9zu %11.1f %11.1f %11.1f\n", name.c_str(), v.size(),
                  Micros(Percentile(v, 50), rate), Micros(Percentile(v, 90), rate),
                  Micros(Percentile(v, 99), rate));
    }
    if (!o.tail)
      continue;
    out += Line("    tail: %" PRIu64 " commands above p99 (%.1f %s), share of their time:\n",
                o.tail, Micros(o.p99, rate), unit);
    out += Line("    %-24s %7s %14s\n", "cause", "time", "main cause of");
    std::vector<std::pair<uint64_t, std::string>> by_time;
    for (const auto& [cause, ticks] : o.tail_cause_ticks)
      by_time.emplace_back(ticks, cause);
    std::sort(by_time.rbegin(), by_time.rend());
    for (const auto& [ticks, cause] : by_time) {
      const auto main = o.tail_main_cause.find(cause);
      out += Line("    %-24s %6.1f%% %14" PRIu64 "\n", cause.c_str(),
                  100.0 * static_cast<double>(ticks) / static_cast<double>(o.tail_ticks),
                  main == o.tail_main_cause.end() ? 0 : main->second);
    }
    const auto none = o.tail_main_cause.find(kCauseNone);
    if (none != o.tail_main_cause.end())
      out += Line("    %-24s %7s %14" PRIu64 "\n", "(no delay)", "", none->second);
  }
  return out;
}

nlohmann::json CauseStatJson(const CommandPaths& paths,
                             const std::function<uint64_t(uint16_t)>& hz,
                             size_t max_slowest) {
  nlohmann::json doc = nlohmann::json::object();
  const AttributionCounts& n = paths.counts();
  doc["commands"] = paths.commands().size();
  doc["records"] = n.records;
  doc["unattributed"] = {{"unknown_command", n.unknown_command},
                         {"stage_never_ended", n.stage_never_ended},
                         {"no_resource", n.no_resource},
                         {"bad_field", n.bad_field},
                         {"dropped", n.dropped}};
  nlohmann::json& ops = doc["opcodes"] = nlohmann::json::array();
  for (const auto& [key, o] : Collect(paths, max_slowest)) {
    const uint64_t rate = hz(key.first);
    nlohmann::json op;
    op["device"] = key.first;
    op["opcode"] = key.second;
    op["commands"] = o.latency.size();
    op["unit"] = rate ? "us" : "ticks";
    for (const auto& [name, v] : o.stages) {
      op["stages"][name] = {{"commands", v.size()},
                            {"p50", Micros(Percentile(v, 50), rate)},
                            {"p90", Micros(Percentile(v, 90), rate)},
                            {"p99", Micros(Percentile(v, 99), rate)}};
    }
    // Every command's main cause: how often anything was blamed at all.
    op["main_causes"] = o.main_cause;
    op["tail"]["commands"] = o.tail;
    op["tail"]["p99"] = Micros(o.p99, rate);
    for (const auto& [cause, ticks] : o.tail_cause_ticks) {
      const auto main = o.tail_main_cause.find(cause);
      op["tail"]["causes"][cause] = {
          {"share",
           o.tail_ticks ? static_cast<double>(ticks) / static_cast<double>(o.tail_ticks) : 0.0},
          {"main_cause_of", main == o.tail_main_cause.end() ? 0 : main->second}};
    }
    nlohmann::json& slowest = op["tail"]["slowest"] = nlohmann::json::array();
    for (const CommandPath* c : o.slowest)
      slowest.push_back(SlowCommandJson(*c));
    op["tail"]["slowest_truncated"] = o.slowest_truncated;
    ops.push_back(std::move(op));
  }
  return doc;
}

}  // namespace hmbtrace
