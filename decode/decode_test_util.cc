// SPDX-License-Identifier: GPL-2.0-only

#include "decode_test_util.h"

#include <cstddef>
#include <cstring>

namespace hmbtrace::test {
namespace {

constexpr uint8_t kNo = HMB_TRACE_NO_FIELD;

constexpr hmb_trace_value_desc kOpcodes[] = {
    {0x00, "flush"},
    {0x01, "write"},
    {0x02, "read"},
};

constexpr hmb_trace_value_desc kCmdFlags[] = {
    {0x01, "fua"},
    {0x02, "lr"},
    {0x0c, "prio"},  // a two-bit mask: named only when both bits are set
};

constexpr hmb_trace_field_desc kCmdBeginFields[] = {
    {"qid", 0, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"cid", 2, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"opcode", 4, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_ENUM, 3, kOpcodes},
    {"flags", 5, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_FLAGS, 3, kCmdFlags},
    {"nsid", 8, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"slba", 16, 8, HMB_TRACE_TYPE_U64, HMB_TRACE_DISPLAY_HEX, 0, nullptr},
    {"nlb", 24, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
};

constexpr hmb_trace_field_desc kCmdEndFields[] = {
    {"qid", 0, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"cid", 2, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"status", 4, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_HEX, 0, nullptr},
    {"latency", 8, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
};

constexpr hmb_trace_field_desc kFreeBlocksFields[] = {
    {"free", 0, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
};

constexpr hmb_trace_value_desc kLevels[] = {
    {0, "err"},
    {1, "warn"},
    {2, "info"},
};

constexpr hmb_trace_field_desc kLogFields[] = {
    {"level", 0, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_ENUM, 3, kLevels},
    {"msg", 1, 15, HMB_TRACE_TYPE_STRING, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"data", 16, 0, HMB_TRACE_TYPE_BYTES, HMB_TRACE_DISPLAY_HEX, 0, nullptr},
};

constexpr hmb_trace_field_desc kTempsFields[] = {
    {"s8", 0, 1, HMB_TRACE_TYPE_S8, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"s16", 2, 2, HMB_TRACE_TYPE_S16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"s32", 4, 4, HMB_TRACE_TYPE_S32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"s64", 8, 8, HMB_TRACE_TYPE_S64, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
};

constexpr hmb_trace_event_desc kRealistic[] = {
    {kCmdBegin, HMB_TRACE_ROLE_BEGIN, /*key=*/1, kNo, /*qid=*/0, /*cid=*/1, kNo,
     kCmdEnd, "nvme_cmd_begin",
     "qid=%u cid=%u op=%s flags=%s nsid=%u slba=%s nlb=%u", 7, kCmdBeginFields},
    {kCmdEnd, HMB_TRACE_ROLE_END, /*key=*/1, /*latency=*/3, /*qid=*/0,
     /*cid=*/1, kNo, kCmdBegin, "nvme_cmd_end",
     "qid=%u cid=%u status=%s latency=%u", 4, kCmdEndFields},
    {kFreeBlocks, HMB_TRACE_ROLE_COUNTER, kNo, kNo, kNo, kNo, /*value=*/0, 0,
     "gc_free_blocks", "free=%u", 1, kFreeBlocksFields},
    {kLog, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "fw_log",
     "[%s] %s data=%s", 3, kLogFields},
    {kTemps, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "temps",
     "%d %d %d %lld", 4, kTempsFields},
};

}  // namespace

std::span<const hmb_trace_event_desc> RealisticEvents() {
  return kRealistic;
}

std::vector<uint8_t> ProduceDictionary(
    std::span<const hmb_trace_event_desc> events,
    bool whole_region,
    std::span<const hmb_trace_cmd_desc> cmds) {
  hmb_trace_producer_config cfg{};
  cfg.page_size = 4096;
  cfg.pages_per_core = 2;
  cfg.nr_cores = 1;
  cfg.clock_hz = 1000000000;
  cfg.nr_events = static_cast<uint16_t>(events.size());
  cfg.events = events.data();
  cfg.nr_cmds = static_cast<uint16_t>(cmds.size());
  cfg.cmds = cmds.data();
  const uint64_t area_len = hmb_trace_area_size(&cfg);
  if (!area_len)
    return {};
  // uint64_t storage: the producer stores whole words into the area.
  std::vector<uint64_t> area((area_len + 7) / 8);
  hmb_trace_producer producer;
  if (hmb_trace_producer_init(&producer, area.data(), area_len, &cfg))
    return {};

  const auto* base = reinterpret_cast<const uint8_t*>(area.data());
  uint64_t dict_offset;
  uint32_t dict_len;
  uint32_t total_len;
  std::memcpy(&dict_offset, base + offsetof(hmb_trace_meta, dict_offset),
              sizeof(dict_offset));
  std::memcpy(&dict_len, base + offsetof(hmb_trace_meta, dict_len),
              sizeof(dict_len));
  std::memcpy(&total_len,
              base + dict_offset + offsetof(hmb_trace_dict_header, total_len),
              sizeof(total_len));
  const uint32_t len = whole_region ? dict_len : total_len;
  return std::vector<uint8_t>(base + dict_offset, base + dict_offset + len);
}

void Put8(std::vector<uint8_t>& bytes, size_t off, uint8_t v) {
  bytes.at(off) = v;
}

void Put16(std::vector<uint8_t>& bytes, size_t off, uint16_t v) {
  Put8(bytes, off, static_cast<uint8_t>(v));
  Put8(bytes, off + 1, static_cast<uint8_t>(v >> 8));
}

void Put32(std::vector<uint8_t>& bytes, size_t off, uint32_t v) {
  Put16(bytes, off, static_cast<uint16_t>(v));
  Put16(bytes, off + 2, static_cast<uint16_t>(v >> 16));
}

}  // namespace hmbtrace::test
