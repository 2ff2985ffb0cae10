// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * fw_events.c - the simulated SSD firmware's event dictionary, as written
 * by hand before fwsim_events.def declared it; fw_events_unittest's
 * reference (mock/fwsim/meson.build builds it under other names).
 *
 * One conversion per field, in field order. ENUM, FLAGS, STRING and BYTES
 * fields use "%s": the decoder renders them (value names, '|'-joined bit
 * names, the NUL-padded text, a hex dump of the tail).
 */
#include "fw_events.h"

#define ARRAY_LEN(a) ((uint16_t)(sizeof(a) / sizeof((a)[0])))
#define MEMBER_SIZE(st, m) ((uint16_t)sizeof(((struct st *)0)->m))

#define FIELD(st, m, type, display)                                     \
	{ #m, (uint16_t)offsetof(struct st, m), MEMBER_SIZE(st, m), type,   \
	  display, 0, 0 }
#define NAMED_FIELD(st, m, type, display, vals)                         \
	{ #m, (uint16_t)offsetof(struct st, m), MEMBER_SIZE(st, m), type,   \
	  display, ARRAY_LEN(vals), vals }

#define NO HMB_TRACE_NO_FIELD

static const struct hmb_trace_value_desc opcode_names[] = {
	{ FW_NVME_OPC_FLUSH, "flush" },
	{ FW_NVME_OPC_WRITE, "write" },
	{ FW_NVME_OPC_READ, "read" },
	{ FW_NVME_OPC_WRITE_UNCOR, "write_uncor" },
	{ FW_NVME_OPC_COMPARE, "compare" },
	{ FW_NVME_OPC_WRITE_ZEROES, "write_zeroes" },
	{ FW_NVME_OPC_DSM, "dsm" },
};

static const struct hmb_trace_value_desc status_names[] = {
	{ FW_NVME_SC_SUCCESS, "SUCCESS" },
	{ FW_NVME_SC_INVALID_OPCODE, "INVALID_OPCODE" },
	{ FW_NVME_SC_INVALID_FIELD, "INVALID_FIELD" },
	{ FW_NVME_SC_DATA_XFER_ERROR, "DATA_XFER_ERROR" },
	{ FW_NVME_SC_INTERNAL, "INTERNAL" },
	{ FW_NVME_SC_LBA_RANGE, "LBA_RANGE" },
	{ FW_NVME_SC_NS_NOT_READY, "NS_NOT_READY" },
	{ FW_NVME_SC_WRITE_FAULT, "WRITE_FAULT" },
	{ FW_NVME_SC_READ_ERROR, "READ_ERROR" },
};

static const struct hmb_trace_value_desc throttle_names[] = {
	{ FW_THROTTLE_NONE, "none" },
	{ FW_THROTTLE_LIGHT, "light" },
	{ FW_THROTTLE_HEAVY, "heavy" },
	{ FW_THROTTLE_CRITICAL, "critical" },
};

static const struct hmb_trace_value_desc error_code_names[] = {
	{ FW_ERR_UECC, "uecc" },
	{ FW_ERR_PROGRAM_FAIL, "program_fail" },
	{ FW_ERR_ERASE_FAIL, "erase_fail" },
	{ FW_ERR_READ_RETRY, "read_retry" },
	{ FW_ERR_CRC, "crc" },
	{ FW_ERR_CMD_TIMEOUT, "cmd_timeout" },
};

static const struct hmb_trace_value_desc error_flag_names[] = {
	{ FW_ERR_F_RETRIED, "retried" },
	{ FW_ERR_F_RECOVERED, "recovered" },
	{ FW_ERR_F_FATAL, "fatal" },
	{ FW_ERR_F_HOST_VISIBLE, "host_visible" },
	{ FW_ERR_F_GROWN_BAD, "grown_bad" },
};

static const struct hmb_trace_value_desc log_level_names[] = {
	{ FW_LOG_ERR, "err" },
	{ FW_LOG_WARN, "warn" },
	{ FW_LOG_INFO, "info" },
	{ FW_LOG_DEBUG, "debug" },
};

static const struct hmb_trace_field_desc cmd_fetch_fields[] = {
	FIELD(fw_cmd_fetch, qid, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_cmd_fetch, cid, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	NAMED_FIELD(fw_cmd_fetch, opcode, HMB_TRACE_TYPE_U8,
		    HMB_TRACE_DISPLAY_ENUM, opcode_names),
	FIELD(fw_cmd_fetch, nsid, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_cmd_fetch, slba, HMB_TRACE_TYPE_U64, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_cmd_fetch, nlb, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc cmd_complete_fields[] = {
	FIELD(fw_cmd_complete, qid, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_cmd_complete, cid, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	NAMED_FIELD(fw_cmd_complete, status, HMB_TRACE_TYPE_U16,
		    HMB_TRACE_DISPLAY_ENUM, status_names),
	FIELD(fw_cmd_complete, latency, HMB_TRACE_TYPE_U32,
	      HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc nand_op_fields[] = {
	FIELD(fw_nand_op, die, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_op, plane, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_op, block, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_op, page, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_op, latency, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc nand_erase_fields[] = {
	FIELD(fw_nand_erase, die, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_erase, plane, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_erase, block, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_nand_erase, latency, HMB_TRACE_TYPE_U32,
	      HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc gc_begin_fields[] = {
	FIELD(fw_gc_begin, die, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_gc_begin, victim_block, HMB_TRACE_TYPE_U16,
	      HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_gc_begin, valid_pages, HMB_TRACE_TYPE_U16,
	      HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc gc_end_fields[] = {
	FIELD(fw_gc_end, die, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_gc_end, victim_block, HMB_TRACE_TYPE_U16,
	      HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_gc_end, pages_moved, HMB_TRACE_TYPE_U16,
	      HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_gc_end, latency, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc thermal_fields[] = {
	FIELD(fw_thermal, sensor, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_thermal, temperature_c, HMB_TRACE_TYPE_S16,
	      HMB_TRACE_DISPLAY_DEC),
	NAMED_FIELD(fw_thermal, throttle, HMB_TRACE_TYPE_U8,
		    HMB_TRACE_DISPLAY_ENUM, throttle_names),
};

static const struct hmb_trace_field_desc error_fields[] = {
	NAMED_FIELD(fw_error, code, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_ENUM,
		    error_code_names),
	NAMED_FIELD(fw_error, flags, HMB_TRACE_TYPE_U32,
		    HMB_TRACE_DISPLAY_FLAGS, error_flag_names),
	FIELD(fw_error, die, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC),
	FIELD(fw_error, block, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC),
	/* The variable tail: everything after the fixed struct. */
	{ "context", (uint16_t)sizeof(struct fw_error), 0, HMB_TRACE_TYPE_BYTES,
	  HMB_TRACE_DISPLAY_HEX, 0, 0 },
};

static const struct hmb_trace_field_desc log_fields[] = {
	NAMED_FIELD(fw_log, level, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_ENUM,
		    log_level_names),
	FIELD(fw_log, msg, HMB_TRACE_TYPE_STRING, HMB_TRACE_DISPLAY_DEC),
};

static const struct hmb_trace_field_desc hmb_echo_fields[] = {
	FIELD(fw_hmb_echo, cookie, HMB_TRACE_TYPE_U64, HMB_TRACE_DISPLAY_DEC),
};

#define EVENT(ident, nm, rl, key, lat, q, c, val, pair, fmt, flds)      \
	{ .id = (ident), .role = (rl), .key_field = (key),                  \
	  .latency_field = (lat), .qid_field = (q), .cid_field = (c),       \
	  .value_field = (val), .pair_id = (pair), .name = (nm),            \
	  .format = (fmt), .nr_fields = ARRAY_LEN(flds), .fields = (flds) }

const struct hmb_trace_event_desc fw_events[] = {
	EVENT(FW_EV_CMD_FETCH, "cmd_fetch", HMB_TRACE_ROLE_BEGIN, 1, NO, 0, 1,
	      NO, FW_EV_CMD_COMPLETE,
	      "qid=%u cid=%u opc=%s nsid=%u slba=%llu nlb=%u",
	      cmd_fetch_fields),
	EVENT(FW_EV_CMD_COMPLETE, "cmd_complete", HMB_TRACE_ROLE_END, 1, 3, 0,
	      1, NO, FW_EV_CMD_FETCH, "qid=%u cid=%u status=%s latency=%u",
	      cmd_complete_fields),
	EVENT(FW_EV_NAND_READ, "nand_read", HMB_TRACE_ROLE_INSTANT, NO, 4, NO,
	      NO, NO, 0, "die=%u plane=%u block=%u page=%u latency=%u",
	      nand_op_fields),
	EVENT(FW_EV_NAND_PROGRAM, "nand_program", HMB_TRACE_ROLE_INSTANT, NO,
	      4, NO, NO, NO, 0, "die=%u plane=%u block=%u page=%u latency=%u",
	      nand_op_fields),
	EVENT(FW_EV_NAND_ERASE, "nand_erase", HMB_TRACE_ROLE_INSTANT, NO, 3,
	      NO, NO, NO, 0, "die=%u plane=%u block=%u latency=%u",
	      nand_erase_fields),
	EVENT(FW_EV_GC_BEGIN, "gc_begin", HMB_TRACE_ROLE_BEGIN, 1, NO, NO, NO,
	      NO, FW_EV_GC_END, "die=%u victim_block=%u valid_pages=%u",
	      gc_begin_fields),
	EVENT(FW_EV_GC_END, "gc_end", HMB_TRACE_ROLE_END, 1, 3, NO, NO, NO,
	      FW_EV_GC_BEGIN, "die=%u victim_block=%u pages_moved=%u latency=%u",
	      gc_end_fields),
	EVENT(FW_EV_THERMAL, "thermal", HMB_TRACE_ROLE_COUNTER, NO, NO, NO, NO,
	      1, 0, "sensor=%u temperature_c=%d throttle=%s", thermal_fields),
	EVENT(FW_EV_ERROR, "error", HMB_TRACE_ROLE_INSTANT, NO, NO, NO, NO, NO,
	      0, "code=%s flags=%s die=%u block=%u context=%s", error_fields),
	EVENT(FW_EV_LOG, "log", HMB_TRACE_ROLE_INSTANT, NO, NO, NO, NO, NO, 0,
	      "%s: %s", log_fields),
	EVENT(FW_EV_HMB_ECHO, "hmb_echo", HMB_TRACE_ROLE_INSTANT, NO, NO, NO,
	      NO, NO, 0, "cookie=%llu", hmb_echo_fields),
};

const uint16_t fw_nr_events = ARRAY_LEN(fw_events);

const struct hmb_trace_event_desc *fw_event_by_id(uint16_t id)
{
	uint16_t i;

	for (i = 0; i < fw_nr_events; i++)
		if (fw_events[i].id == id)
			return &fw_events[i];
	return 0;
}
