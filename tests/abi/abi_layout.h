/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * abi_layout.h - pins every size and offset of hmb_trace_abi.h,
 * hmb_trace_ctrl_abi.h and hmb_trace_dump_abi.h, and that the value lists of hmb_trace_events_abi.h
 * run 0, 1, ... in list order (HMB_ABI_NAMES() indexes by value). Included
 * from a C11 and a C++20 translation unit so both languages see the same
 * layout; a change to the ABI that moves a byte fails the build.
 */
#include "hmb_trace_abi.h"
#include "hmb_trace_ctrl_abi.h"
#include "hmb_trace_dump_abi.h"
#include "hmb_trace_events_abi.h"

#ifdef __cplusplus
#define HMB_ASSERT(e) static_assert(e, #e)
#else
#define HMB_ASSERT(e) _Static_assert(e, #e)
#endif
#define HMB_AT(type, field, off) HMB_ASSERT(offsetof(struct type, field) == (off))

HMB_ASSERT(sizeof(struct hmb_trace_core) == 64);
HMB_AT(hmb_trace_core, head_page, 0);
HMB_AT(hmb_trace_core, next_seq, 8);
HMB_AT(hmb_trace_core, dropped, 16);
HMB_AT(hmb_trace_core, pages_written, 24);
HMB_AT(hmb_trace_core, prev_next_seq, 32);
HMB_AT(hmb_trace_core, prev_gen, 40);
HMB_AT(hmb_trace_core, reserved0, 44);
HMB_AT(hmb_trace_core, freeze_seq, 48);
HMB_AT(hmb_trace_core, reserved, 56);

HMB_ASSERT(sizeof(struct hmb_trace_meta) == 128);
HMB_AT(hmb_trace_meta, magic, 0);
HMB_AT(hmb_trace_meta, abi_major, 4);
HMB_AT(hmb_trace_meta, abi_minor, 6);
HMB_AT(hmb_trace_meta, meta_len, 8);
HMB_AT(hmb_trace_meta, state, 12);
HMB_AT(hmb_trace_meta, producer_gen, 16);
HMB_AT(hmb_trace_meta, page_size, 20);
HMB_AT(hmb_trace_meta, nr_cores, 24);
HMB_AT(hmb_trace_meta, core_len, 26);
HMB_AT(hmb_trace_meta, pages_per_core, 28);
HMB_AT(hmb_trace_meta, area_len, 32);
HMB_AT(hmb_trace_meta, dict_offset, 40);
HMB_AT(hmb_trace_meta, dict_len, 48);
HMB_AT(hmb_trace_meta, flags, 52);
HMB_AT(hmb_trace_meta, ring_offset, 56);
HMB_AT(hmb_trace_meta, clock_hz, 64);
HMB_AT(hmb_trace_meta, build_id, 72);
HMB_AT(hmb_trace_meta, core_offset, 92);
HMB_AT(hmb_trace_meta, freeze, 96);
HMB_AT(hmb_trace_meta, freeze_core, 100);
HMB_AT(hmb_trace_meta, reserved0, 102);
HMB_AT(hmb_trace_meta, freeze_ts, 104);
HMB_AT(hmb_trace_meta, freeze_detail, 112);
HMB_AT(hmb_trace_meta, reserved, 120);

/* The largest core table must fit the smallest page with the meta. */
HMB_ASSERT(sizeof(struct hmb_trace_meta) +
	   HMB_TRACE_MAX_CORES * sizeof(struct hmb_trace_core) <=
	   4096);

HMB_ASSERT(sizeof(struct hmb_trace_page_header) == 48);
HMB_AT(hmb_trace_page_header, page_seq, 0);
HMB_AT(hmb_trace_page_header, first_seq, 8);
HMB_AT(hmb_trace_page_header, base_ts, 16);
HMB_AT(hmb_trace_page_header, commit, 24);
HMB_AT(hmb_trace_page_header, producer_gen, 28);
HMB_AT(hmb_trace_page_header, flags, 32);
HMB_AT(hmb_trace_page_header, reserved0, 36);
HMB_AT(hmb_trace_page_header, reserved1, 40);

HMB_ASSERT(sizeof(struct hmb_trace_record_header) == 8);
HMB_AT(hmb_trace_record_header, event_id, 0);
HMB_AT(hmb_trace_record_header, len, 2);
HMB_AT(hmb_trace_record_header, ts_delta, 4);

HMB_ASSERT(sizeof(struct hmb_trace_dict_header) == 16);
HMB_AT(hmb_trace_dict_header, magic, 0);
HMB_AT(hmb_trace_dict_header, version, 4);
HMB_AT(hmb_trace_dict_header, nr_events, 6);
HMB_AT(hmb_trace_dict_header, total_len, 8);
HMB_AT(hmb_trace_dict_header, reserved, 12);

HMB_ASSERT(sizeof(struct hmb_trace_dict_event) == 144);
HMB_AT(hmb_trace_dict_event, id, 0);
HMB_AT(hmb_trace_dict_event, nr_fields, 2);
HMB_AT(hmb_trace_dict_event, entry_len, 4);
HMB_AT(hmb_trace_dict_event, role, 8);
HMB_AT(hmb_trace_dict_event, key_field, 9);
HMB_AT(hmb_trace_dict_event, latency_field, 10);
HMB_AT(hmb_trace_dict_event, qid_field, 11);
HMB_AT(hmb_trace_dict_event, cid_field, 12);
HMB_AT(hmb_trace_dict_event, value_field, 13);
HMB_AT(hmb_trace_dict_event, pair_id, 14);
HMB_AT(hmb_trace_dict_event, name, 16);
HMB_AT(hmb_trace_dict_event, format, 48);

HMB_ASSERT(sizeof(struct hmb_trace_dict_field) == 32);
HMB_AT(hmb_trace_dict_field, name, 0);
HMB_AT(hmb_trace_dict_field, offset, 24);
HMB_AT(hmb_trace_dict_field, size, 26);
HMB_AT(hmb_trace_dict_field, type, 28);
HMB_AT(hmb_trace_dict_field, display, 29);
HMB_AT(hmb_trace_dict_field, nr_values, 30);

HMB_ASSERT(sizeof(struct hmb_trace_dict_value) == 32);
HMB_AT(hmb_trace_dict_value, value, 0);
HMB_AT(hmb_trace_dict_value, name, 8);

HMB_ASSERT(sizeof(struct hmb_trace_dict_cmd) == 8);
HMB_AT(hmb_trace_dict_cmd, type, 0);
HMB_AT(hmb_trace_dict_cmd, len, 2);
HMB_AT(hmb_trace_dict_cmd, kind, 4);
HMB_AT(hmb_trace_dict_cmd, tag_field, 5);
HMB_AT(hmb_trace_dict_cmd, resource_field, 6);
HMB_AT(hmb_trace_dict_cmd, reserved, 7);

/* Commit word: BUSY can never be a legal commit of the largest page. */
HMB_ASSERT(HMB_TRACE_PAGE_SIZE_MAX - 48 < 0xffffu);
HMB_ASSERT((HMB_TRACE_PAGE_SIZE_MAX - 48) / 8 < 0x7fffu);
HMB_ASSERT(HMB_TRACE_COMMIT(4090u, 32720u) != HMB_TRACE_COMMIT_BUSY);
/* A torn 64-bit page_seq can not alias the wanted page (see the spec). */
HMB_ASSERT(HMB_TRACE_PAGES_PER_CORE_MAX < (1u << 31));

/* The control channel's mailbox (the mock's; the NVMe commands carry the same words). */
HMB_ASSERT(sizeof(struct hmb_ctrl_request) == 48);
HMB_AT(hmb_ctrl_request, magic, 0);
HMB_AT(hmb_ctrl_request, version, 4);
HMB_AT(hmb_ctrl_request, op, 6);
HMB_AT(hmb_ctrl_request, seq, 8);
HMB_AT(hmb_ctrl_request, arg, 16);
HMB_ASSERT(sizeof(struct hmb_ctrl_response) == 48);
HMB_AT(hmb_ctrl_response, magic, 0);
HMB_AT(hmb_ctrl_response, version, 4);
HMB_AT(hmb_ctrl_response, status, 6);
HMB_AT(hmb_ctrl_response, seq, 8);
HMB_AT(hmb_ctrl_response, val, 16);
HMB_ASSERT(HMB_CTRL_RSP_OFFSET + sizeof(struct hmb_ctrl_response) <= HMB_CTRL_MAILBOX_SIZE);
HMB_ASSERT(sizeof(struct hmb_ctrl_request) <= HMB_CTRL_RSP_OFFSET);
/* ABI 1.1: the freeze, its word and its operations. */
HMB_ASSERT(HMB_TRACE_ABI_MINOR == 2);
HMB_ASSERT(HMB_TRACE_META_FREEZE == 2u);
HMB_ASSERT(HMB_TRACE_FREEZE_WORD(2u, 5u, 0xffffu) == 0xffff0502u);
HMB_ASSERT(HMB_TRACE_FREEZE_STATE(0xffff0502u) == HMB_TRACE_FREEZE_FROZEN);
HMB_ASSERT(HMB_TRACE_FREEZE_REASON(0xffff0502u) == HMB_TRACE_FREEZE_RING_FULL);
HMB_ASSERT(HMB_TRACE_FREEZE_COUNT(0xffff0502u) == 0xffffu);
HMB_ASSERT(HMB_TRACE_FREEZE_TRIGGERED == 1u);
HMB_ASSERT(HMB_TRACE_FREEZE_HOST == 1u && HMB_TRACE_FREEZE_LATENCY == 2u &&
	   HMB_TRACE_FREEZE_ASSERT == 3u && HMB_TRACE_FREEZE_ERROR == 4u &&
	   HMB_TRACE_FREEZE_REASON_NR == 6u);
HMB_ASSERT(HMB_CTRL_OP_FREEZE_CONFIG == 7u && HMB_CTRL_OP_FREEZE_REARM == 8u &&
	   HMB_CTRL_OP_FREEZE_NOW == 9u && HMB_CTRL_OP_NR == 10u);

/* The crash dump (hmb_trace_dump_abi.h). */
HMB_ASSERT(HMB_DUMP_REASON_DISABLING == 0 && HMB_DUMP_REASON_REMOVED == 1 &&
           HMB_DUMP_REASON_FW_RESTART == 2);
HMB_ASSERT(sizeof(struct hmb_dump_header) == 200);
HMB_AT(hmb_dump_header, magic, 0);
HMB_AT(hmb_dump_header, version, 8);
HMB_AT(hmb_dump_header, header_len, 12);
HMB_AT(hmb_dump_header, total_len, 16);
HMB_AT(hmb_dump_header, nr_sections, 24);
HMB_AT(hmb_dump_header, reason, 28);
HMB_ASSERT(HMB_DUMP_REASON_DISABLING == 0u && HMB_DUMP_REASON_REMOVED == 1u &&
	   HMB_DUMP_REASON_FW_RESTART == 2u && HMB_DUMP_REASON_FW_FREEZE == 3u);
HMB_AT(hmb_dump_header, flags, 32);
HMB_AT(hmb_dump_header, producer_gen, 36);
HMB_AT(hmb_dump_header, nr_cores, 40);
HMB_AT(hmb_dump_header, area_index, 42);
HMB_AT(hmb_dump_header, clock_hz, 48);
HMB_AT(hmb_dump_header, record_bound, 56);
HMB_AT(hmb_dump_header, taken_ns, 64);
HMB_AT(hmb_dump_header, taken_real_ns, 128);
HMB_AT(hmb_dump_header, copy_ns, 136);
HMB_AT(hmb_dump_header, build_id, 144);
HMB_AT(hmb_dump_header, name, 168);
HMB_ASSERT(HMB_DUMP_CLOCKS >= HMB_TRACE_CLOCK_NR);
HMB_ASSERT(sizeof(struct hmb_dump_section) == 16);
HMB_AT(hmb_dump_section, count, 4);
HMB_AT(hmb_dump_section, len, 8);
HMB_ASSERT(sizeof(struct hmb_dump_clock) == 88);
HMB_AT(hmb_dump_clock, gen, 8);
HMB_AT(hmb_dump_clock, tick_ref, 16);
HMB_AT(hmb_dump_clock, half_gap, 64);
HMB_AT(hmb_dump_clock, err_ns, 72);
HMB_AT(hmb_dump_clock, samples, 80);
HMB_ASSERT(sizeof(struct hmb_dump_core) == 80);
HMB_AT(hmb_dump_core, start_seq, 8);
HMB_AT(hmb_dump_core, end_seq, 16);
HMB_AT(hmb_dump_core, records, 24);
HMB_AT(hmb_dump_core, skipped, 32);
HMB_AT(hmb_dump_core, delivered, 40);
HMB_AT(hmb_dump_core, lost, 48);
HMB_ASSERT(HMB_LOST_NR <= 4);
HMB_ASSERT(sizeof(struct hmb_dump_lost) == 24);
HMB_AT(hmb_dump_lost, reason, 2);
HMB_AT(hmb_dump_lost, count, 8);
HMB_AT(hmb_dump_lost, at_seq, 16);
HMB_ASSERT(sizeof(struct hmb_dump_cmd) == 32);
HMB_AT(hmb_dump_cmd, opcode, 4);
HMB_AT(hmb_dump_cmd, nsid, 8);
HMB_AT(hmb_dump_cmd, nlb, 12);
HMB_AT(hmb_dump_cmd, slba, 16);
HMB_AT(hmb_dump_cmd, submit_ns, 24);
HMB_ASSERT(sizeof(struct hmb_dump_record) == 24);
HMB_AT(hmb_dump_record, event_id, 2);
HMB_AT(hmb_dump_record, len, 4);
HMB_AT(hmb_dump_record, seq, 8);
HMB_AT(hmb_dump_record, ts, 16);

#ifdef __cplusplus
/*
 * Each value list of hmb_trace_events_abi.h is dense and in order (entry
 * i has value i), as HMB_ABI_NAMES() arrays indexed by value need.
 */
#define HMB_ABI_VALUE(e, v, n)	v
template <unsigned N>
constexpr bool HmbAbiDense(const int (&v)[N]) {
  for (unsigned i = 0; i < N; i++)
    if (v[i] != static_cast<int>(i)) return false;
  return true;
}
constexpr int kHmbLostValues[] = {HMB_LOST_REASON_LIST(HMB_ABI_VALUE, HMB_ABI_COMMA)};
constexpr int kHmbStateValues[] = {HMB_TRACE_EV_STATE_LIST(HMB_ABI_VALUE, HMB_ABI_COMMA)};
constexpr int kHmbErrorValues[] = {HMB_AREA_ERROR_LIST(HMB_ABI_VALUE, HMB_ABI_COMMA)};
constexpr int kHmbBrokenValues[] = {HMB_BROKEN_REASON_LIST(HMB_ABI_VALUE, HMB_ABI_COMMA)};
constexpr int kHmbClockValues[] = {HMB_TRACE_CLOCK_LIST(HMB_ABI_VALUE, HMB_ABI_COMMA)};
HMB_ASSERT(HmbAbiDense(kHmbLostValues));
HMB_ASSERT(HmbAbiDense(kHmbStateValues));
HMB_ASSERT(HmbAbiDense(kHmbErrorValues));
HMB_ASSERT(HmbAbiDense(kHmbBrokenValues));
HMB_ASSERT(HmbAbiDense(kHmbClockValues));
#endif
