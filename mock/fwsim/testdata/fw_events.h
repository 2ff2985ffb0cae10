/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * fw_events.h - the simulated SSD firmware's trace events: the event-id
 * registry and the payload layouts, as written by hand before
 * fwsim_events.def declared them. Kept only as fw_events_unittest's
 * reference: the declarations must publish this dictionary byte for byte.
 *
 * Plain C so that real firmware can compile the same table. Every payload is
 * a packed little-endian struct; the dictionary in fw_events.c declares each
 * field with offsetof(), so the layout below is the single source of truth.
 * Event ids are never reused: a retired event keeps its number.
 */
#ifndef FW_EVENTS_H
#define FW_EVENTS_H

#include "hmb_trace_producer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The event-id registry. 0 is reserved by the ABI. */
enum fw_event_id {
	FW_EV_CMD_FETCH = 1,	/* BEGIN: host command fetched from an SQ */
	FW_EV_CMD_COMPLETE = 2,	/* END: completion posted to the CQ */
	FW_EV_NAND_READ = 3,
	FW_EV_NAND_PROGRAM = 4,
	FW_EV_NAND_ERASE = 5,
	FW_EV_GC_BEGIN = 6,	/* BEGIN: garbage collection of a victim block */
	FW_EV_GC_END = 7,	/* END */
	FW_EV_THERMAL = 8,	/* COUNTER: composite temperature sample */
	FW_EV_ERROR = 9,	/* error with a variable-length context dump */
	FW_EV_LOG = 10,		/* free-text debug log line */
	FW_EV_HMB_ECHO = 11,	/* the control channel's ECHO: a causality probe */
	FW_EV_NR_IDS		/* one past the highest id */
};

/* The workload produces ids 1 .. FW_EV_WORKLOAD_END - 1; hmb_echo only on request. */
#define FW_EV_WORKLOAD_END	FW_EV_HMB_ECHO

/* NVMe I/O command set opcodes (NVM Command Set Specification). */
enum fw_nvme_opcode {
	FW_NVME_OPC_FLUSH = 0x00,
	FW_NVME_OPC_WRITE = 0x01,
	FW_NVME_OPC_READ = 0x02,
	FW_NVME_OPC_WRITE_UNCOR = 0x04,
	FW_NVME_OPC_COMPARE = 0x05,
	FW_NVME_OPC_WRITE_ZEROES = 0x08,
	FW_NVME_OPC_DSM = 0x09,
};

/* NVMe status as (SCT << 8) | SC, as Linux's NVME_SC_* values. */
enum fw_nvme_status {
	FW_NVME_SC_SUCCESS = 0x000,
	FW_NVME_SC_INVALID_OPCODE = 0x001,
	FW_NVME_SC_INVALID_FIELD = 0x002,
	FW_NVME_SC_DATA_XFER_ERROR = 0x004,
	FW_NVME_SC_INTERNAL = 0x006,
	FW_NVME_SC_LBA_RANGE = 0x080,
	FW_NVME_SC_NS_NOT_READY = 0x082,
	FW_NVME_SC_WRITE_FAULT = 0x280,
	FW_NVME_SC_READ_ERROR = 0x281,
};

enum fw_throttle_level {
	FW_THROTTLE_NONE = 0,
	FW_THROTTLE_LIGHT = 1,	/* above TMT1 */
	FW_THROTTLE_HEAVY = 2,	/* above TMT2 */
	FW_THROTTLE_CRITICAL = 3,
};

enum fw_error_code {
	FW_ERR_UECC = 1,		/* uncorrectable ECC on read */
	FW_ERR_PROGRAM_FAIL = 2,
	FW_ERR_ERASE_FAIL = 3,
	FW_ERR_READ_RETRY = 4,		/* soft decode needed */
	FW_ERR_CRC = 5,			/* end-to-end data path CRC */
	FW_ERR_CMD_TIMEOUT = 6,
};

/* Bits of fw_error.flags. */
#define FW_ERR_F_RETRIED	(1u << 0)
#define FW_ERR_F_RECOVERED	(1u << 1)
#define FW_ERR_F_FATAL		(1u << 2)
#define FW_ERR_F_HOST_VISIBLE	(1u << 3)
#define FW_ERR_F_GROWN_BAD	(1u << 4)

enum fw_log_level {
	FW_LOG_ERR = 0,
	FW_LOG_WARN = 1,
	FW_LOG_INFO = 2,
	FW_LOG_DEBUG = 3,
};

#define FW_PACKED __attribute__((packed))

struct FW_PACKED fw_cmd_fetch {
	uint16_t qid;
	uint16_t cid;
	uint8_t opcode;		/* enum fw_nvme_opcode */
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;		/* 0's based, as in the command */
};

struct FW_PACKED fw_cmd_complete {
	uint16_t qid;
	uint16_t cid;
	uint16_t status;	/* enum fw_nvme_status */
	uint32_t latency;	/* ticks from fetch to completion */
};

/*
 * NAND read and program. Like the erase, written when the operation ends:
 * the record's time minus its latency is when the operation began.
 */
struct FW_PACKED fw_nand_op {
	uint8_t die;
	uint8_t plane;
	uint16_t block;
	uint16_t page;
	uint32_t latency;	/* ticks (tR / tPROG) */
};

struct FW_PACKED fw_nand_erase {
	uint8_t die;
	uint8_t plane;
	uint16_t block;
	uint32_t latency;	/* ticks (tBERS) */
};

struct FW_PACKED fw_gc_begin {
	uint8_t die;
	uint16_t victim_block;
	uint16_t valid_pages;	/* pages that must be moved */
};

struct FW_PACKED fw_gc_end {
	uint8_t die;
	uint16_t victim_block;
	uint16_t pages_moved;
	uint32_t latency;	/* ticks from GC begin */
};

struct FW_PACKED fw_thermal {
	uint8_t sensor;
	int16_t temperature_c;
	uint8_t throttle;	/* enum fw_throttle_level */
};

/* Followed by up to FW_ERROR_CONTEXT_MAX context bytes. */
struct FW_PACKED fw_error {
	uint16_t code;		/* enum fw_error_code */
	uint32_t flags;		/* FW_ERR_F_* */
	uint8_t die;
	uint16_t block;
};

#define FW_ERROR_CONTEXT_MAX	32u
#define FW_LOG_MSG_LEN		56u

struct FW_PACKED fw_log {
	uint8_t level;		/* enum fw_log_level */
	char msg[FW_LOG_MSG_LEN]; /* NUL padded */
};

/*
 * "hmb_echo": written only when the host asks (HMB_CTRL_OP_ECHO), with the
 * host's cookie, on the core it names; see include/hmb_trace_ctrl_abi.h.
 */
struct FW_PACKED fw_hmb_echo {
	uint64_t cookie;
};

/* The firmware's event table, in id order; passed to hmb_trace_producer_init. */
extern const struct hmb_trace_event_desc fw_events[];
extern const uint16_t fw_nr_events;

/* The table entry for @id, or NULL. */
const struct hmb_trace_event_desc *fw_event_by_id(uint16_t id);

#ifdef __cplusplus
}
#endif

#endif /* FW_EVENTS_H */
