/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_abi.h - layout of the HMB trace area, shared by the firmware
 * producer, the kernel module, the simulator and the user-space tools.
 *
 * The normative description is Documentation/hmb-trace-abi.rst; this header
 * is its machine-readable twin. The two agree on every structure (name,
 * size, field names, order, offsets, widths, signedness) and every constant
 * (name, value), not on wording; see "This document and the header" there.
 * tests/abi/abi_layout.h pins every size and offset.
 *
 * Freestanding: fixed-width types only, no libc beyond stdint.h/stddef.h.
 * All multi-byte fields are little-endian. Every reserved field is written as
 * zero by the producer and ignored by the consumer.
 *
 *   area offset 0                         page_size
 *   +--------------------------------------+
 *   | meta page: struct hmb_trace_meta     |  one page
 *   |   + struct hmb_trace_core[nr_cores]  |
 *   +--------------------------------------+  dict_offset (= page_size)
 *   | dictionary: hmb_trace_dict_header,   |  dict_len bytes, page multiple
 *   |   then hmb_trace_dict_event entries  |
 *   +--------------------------------------+  ring_offset
 *   | core 0 ring: pages_per_core pages    |
 *   | core 1 ring                          |
 *   | ...                                  |
 *   +--------------------------------------+  ring_offset + nr_cores *
 *                                              pages_per_core * page_size
 *
 * Each ring page:
 *   +-------------------------+-----------------------------------------+
 *   | hmb_trace_page_header   | record | record | ...     | (unused)     |
 *   +-------------------------+-----------------------------------------+
 *   0                         48        commit bytes ----->
 */
#ifndef HMB_TRACE_ABI_H
#define HMB_TRACE_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

#define HMB_TRACE_MAGIC		0x54424d48u	/* "HMBT" little-endian */
#define HMB_TRACE_DICT_MAGIC	0x44424d48u	/* "HMBD" little-endian */
#define HMB_TRACE_ABI_MAJOR	1
#define HMB_TRACE_ABI_MINOR	2	/* 1.1: the freeze; 1.2: command attribution */
#define HMB_TRACE_DICT_VERSION	1

/* Geometry limits; a consumer rejects an area outside them. */
#define HMB_TRACE_PAGE_SIZE_MIN		512u
#define HMB_TRACE_PAGE_SIZE_MAX		32768u
#define HMB_TRACE_MAX_CORES		32u
#define HMB_TRACE_PAGES_PER_CORE_MIN	2u
#define HMB_TRACE_PAGES_PER_CORE_MAX	(1u << 20)
#define HMB_TRACE_RECORD_ALIGN		8u
#define HMB_TRACE_BUILD_ID_LEN		20u

/* hmb_trace_meta.state */
#define HMB_TRACE_STATE_INIT	0u	/* producer is (re)initialising the area */
#define HMB_TRACE_STATE_READY	1u	/* layout, dictionary and rings are valid */

/* hmb_trace_meta.flags */
#define HMB_TRACE_META_OVERWRITE	(1u << 0) /* flight recorder: oldest page overwritten */
/*
 * ABI 1.1: the firmware implements the freeze (meta.freeze, freeze_core,
 * freeze_ts, freeze_detail, core.freeze_seq and the control channel's
 * FREEZE_* operations). Clear: those fields are reserved (zero) and mean
 * nothing; a consumer never reads them.
 */
#define HMB_TRACE_META_FREEZE		(1u << 1)

/*
 * The freeze word (hmb_trace_meta.freeze), one 32-bit store so that a
 * consumer learns state, reason and which freeze from one read:
 *
 *   31 .............. 16 15 ...... 8 7 .. 4 3 ... 0
 *   +-------------------+-----------+------+-------+
 *   |       count       |  reason   |  0   | state |
 *   +-------------------+-----------+------+-------+
 *
 * count: freezes since this generation began (+1 at every trigger, wraps
 * from 65535 to 1); 0 with state RUNNING: never frozen.
 */
#define HMB_TRACE_FREEZE_STATE(w)	((w) & 0xfu)
#define HMB_TRACE_FREEZE_REASON(w)	(((w) >> 8) & 0xffu)
#define HMB_TRACE_FREEZE_COUNT(w)	((w) >> 16)
#define HMB_TRACE_FREEZE_WORD(state, reason, count) \
	((uint32_t)(state) | (uint32_t)(reason) << 8 | (uint32_t)(count) << 16)

/* HMB_TRACE_FREEZE_STATE() */
#define HMB_TRACE_FREEZE_RUNNING	0u /* overwriting (armed or not) */
#define HMB_TRACE_FREEZE_TRIGGERED	1u /* cores write their N more records */
#define HMB_TRACE_FREEZE_FROZEN		2u /* no core writes until re-armed */

/* HMB_TRACE_FREEZE_REASON() */
#define HMB_TRACE_FREEZE_NONE		0u
#define HMB_TRACE_FREEZE_HOST		1u /* the host asked (FREEZE_NOW) */
#define HMB_TRACE_FREEZE_LATENCY	2u /* a command over the host's threshold */
#define HMB_TRACE_FREEZE_ASSERT		3u /* a firmware assert */
#define HMB_TRACE_FREEZE_ERROR		4u /* a firmware-detected error */
#define HMB_TRACE_FREEZE_RING_FULL	5u /* ring mode STOP: a ring became full */
#define HMB_TRACE_FREEZE_REASON_NR	6u

/**
 * struct hmb_trace_core - per-core producer position, in the meta page.
 *
 * Written by the producer only. Hints for the consumer: the page headers are
 * authoritative, these let a lagging consumer find the oldest surviving page
 * without scanning. A 32-bit producer may write the 64-bit fields as two
 * 32-bit stores; a consumer never trusts them beyond range-clamping.
 */
struct hmb_trace_core {
	uint64_t head_page;	/* page_seq of the page being written; ~0 if none */
	uint64_t next_seq;	/* sequence number the next record will get */
	uint64_t dropped;	/* emits refused on this core (oversize, event id 0) */
	uint64_t pages_written;	/* pages opened since init (== head_page + 1) */
	/*
	 * The previous generation's final next_seq on this core, written at
	 * re-initialisation when the producer still knew it (prev_gen != 0):
	 * a consumer charges the records it had not read as lost to "reset".
	 */
	uint64_t prev_next_seq;
	uint32_t prev_gen;	/* generation prev_next_seq belongs to; 0: unknown */
	uint32_t reserved0;
	/*
	 * ABI 1.1, with HMB_TRACE_META_FREEZE, valid while meta.freeze is not
	 * RUNNING: this core's next_seq at the trigger. Its records from
	 * freeze_seq on were written after the trigger (at most N of them).
	 */
	uint64_t freeze_seq;
	uint64_t reserved;
};

/**
 * struct hmb_trace_meta - start of the area (offset 0).
 *
 * Invariant while state == READY: every field but the per-core positions is
 * constant until the producer next re-initialises (state goes to INIT,
 * producer_gen is incremented, then state goes back to READY).
 */
struct hmb_trace_meta {
	uint32_t magic;		/*   0: HMB_TRACE_MAGIC */
	uint16_t abi_major;	/*   4: incompatible changes */
	uint16_t abi_minor;	/*   6: compatible additions */
	uint32_t meta_len;	/*   8: sizeof(struct hmb_trace_meta), >= 128 */
	uint32_t state;		/*  12: HMB_TRACE_STATE_* */
	uint32_t producer_gen;	/*  16: +1 on every (re)initialisation, never 0 */
	uint32_t page_size;	/*  20: bytes, power of two, MIN..MAX */
	uint16_t nr_cores;	/*  24: 1..HMB_TRACE_MAX_CORES */
	uint16_t core_len;	/*  26: sizeof(struct hmb_trace_core): 64 in ABI 1.x */
	uint32_t pages_per_core;	/*  28: ring length in pages, MIN..MAX */
	uint64_t area_len;	/*  32: bytes of the whole area */
	uint64_t dict_offset;	/*  40: from area start, page aligned */
	uint32_t dict_len;	/*  48: bytes reserved for the dictionary */
	uint32_t flags;		/*  52: HMB_TRACE_META_* */
	uint64_t ring_offset;	/*  56: from area start, page aligned */
	uint64_t clock_hz;	/*  64: firmware timestamp ticks per second */
	uint8_t build_id[HMB_TRACE_BUILD_ID_LEN]; /* 72: firmware build id */
	uint32_t core_offset;	/*  92: from area start, of core[0] */
	/* ABI 1.1, with HMB_TRACE_META_FREEZE; else reserved (zero). */
	uint32_t freeze;	/*  96: the freeze word, HMB_TRACE_FREEZE_* */
	uint16_t freeze_core;	/* 100: core that triggered; 0xffff: none */
	uint16_t reserved0;	/* 102 */
	uint64_t freeze_ts;	/* 104: firmware time of the trigger */
	uint64_t freeze_detail;	/* 112: per reason, see the spec */
	uint64_t reserved;	/* 120 */
};				/* 128 bytes; core[] follows at core_offset */

/*
 * The commit word of a page: one 32-bit store publishes bytes and records
 * together, so it is single-copy atomic on every firmware core.
 *
 *   31      30 ........ 16 15 ........ 0
 *   +--------+------------+-------------+
 *   | CLOSED |  records   |    bytes    |
 *   +--------+------------+-------------+
 *
 * HMB_TRACE_COMMIT_BUSY (all ones) means the producer is rewriting the
 * header; bytes can never be 0xffff since the data area is < 32768 bytes.
 */
#define HMB_TRACE_COMMIT_BUSY		0xffffffffu
#define HMB_TRACE_COMMIT_CLOSED		0x80000000u
#define HMB_TRACE_COMMIT_BYTES(c)	((c) & 0xffffu)
#define HMB_TRACE_COMMIT_RECORDS(c)	(((c) >> 16) & 0x7fffu)
#define HMB_TRACE_COMMIT(recs, bytes)	(((uint32_t)(recs) << 16) | (uint32_t)(bytes))

/* hmb_trace_page_header.flags */
#define HMB_TRACE_PAGE_FIRST	(1u << 0)	/* first page of this core since init */

/**
 * struct hmb_trace_page_header - start of every ring page.
 *
 * Write order (producer), see the ABI spec "Protocol":
 *   commit = BUSY; release fence;
 *   page_seq, first_seq, base_ts, producer_gen, flags; release fence;
 *   commit = 0; then per record: record bytes; release fence; commit = new.
 * A consumer accepts bytes it copied only if, after the copy and an acquire
 * fence, commit is not BUSY and page_seq still equals the page it wanted.
 */
struct hmb_trace_page_header {
	uint64_t page_seq;	/*  0: monotonic page number on this core */
	uint64_t first_seq;	/*  8: sequence number of the first record */
	uint64_t base_ts;	/* 16: firmware time the record deltas add to */
	uint32_t commit;	/* 24: see HMB_TRACE_COMMIT_* */
	uint32_t producer_gen;	/* 28: meta.producer_gen when the page was opened */
	uint32_t flags;		/* 32: HMB_TRACE_PAGE_* */
	uint32_t reserved0;	/* 36 */
	uint64_t reserved1;	/* 40 */
};				/* 48 bytes; records follow */

/**
 * struct hmb_trace_record_header - start of every record, 8-byte aligned.
 *
 * The record occupies sizeof(header) + len rounded up to
 * HMB_TRACE_RECORD_ALIGN bytes; padding bytes are zero.
 */
struct hmb_trace_record_header {
	uint16_t event_id;	/* 0: dictionary id; 0 is reserved (invalid) */
	uint16_t len;		/* 2: payload bytes, excluding this header */
	uint32_t ts_delta;	/* 4: firmware ticks after page base_ts */
};				/* 8 bytes; payload follows */

/* ---- Dictionary ---- */

#define HMB_TRACE_NAME_LEN	32u
#define HMB_TRACE_FORMAT_LEN	96u
#define HMB_TRACE_FIELD_NAME_LEN 24u
#define HMB_TRACE_VALUE_NAME_LEN 24u
#define HMB_TRACE_NO_FIELD	0xffu

/* hmb_trace_dict_event.role */
#define HMB_TRACE_ROLE_INSTANT	0u
#define HMB_TRACE_ROLE_BEGIN	1u	/* opens a span; pair_id names the END */
#define HMB_TRACE_ROLE_END	2u	/* closes a span; pair_id names the BEGIN */
#define HMB_TRACE_ROLE_COUNTER	3u	/* value_field is a counter sample */

/* hmb_trace_dict_field.type */
#define HMB_TRACE_TYPE_U8	1u
#define HMB_TRACE_TYPE_U16	2u
#define HMB_TRACE_TYPE_U32	3u
#define HMB_TRACE_TYPE_U64	4u
#define HMB_TRACE_TYPE_S8	5u
#define HMB_TRACE_TYPE_S16	6u
#define HMB_TRACE_TYPE_S32	7u
#define HMB_TRACE_TYPE_S64	8u
#define HMB_TRACE_TYPE_STRING	9u	/* fixed char array, NUL padded */
#define HMB_TRACE_TYPE_BYTES	10u	/* size 0: the rest of the payload */

/* hmb_trace_dict_field.display */
#define HMB_TRACE_DISPLAY_DEC	0u
#define HMB_TRACE_DISPLAY_HEX	1u
#define HMB_TRACE_DISPLAY_ENUM	2u	/* values[] name single values */
#define HMB_TRACE_DISPLAY_FLAGS	3u	/* values[] name bits, joined by '|' */

/**
 * struct hmb_trace_dict_header - start of the dictionary (at dict_offset).
 */
struct hmb_trace_dict_header {
	uint32_t magic;		/*  0: HMB_TRACE_DICT_MAGIC */
	uint16_t version;	/*  4: HMB_TRACE_DICT_VERSION */
	uint16_t nr_events;	/*  6 */
	uint32_t total_len;	/*  8: bytes used, header included, <= dict_len */
	uint32_t reserved;	/* 12 */
};				/* 16 bytes; nr_events entries follow */

/**
 * struct hmb_trace_dict_event - one event type. Followed by nr_fields
 * struct hmb_trace_dict_field, then the value names of every field in field
 * order (field i owns its nr_values entries). entry_len covers all of it.
 */
struct hmb_trace_dict_event {
	uint16_t id;		/*   0: 1..65535, unique */
	uint16_t nr_fields;	/*   2 */
	uint32_t entry_len;	/*   4: bytes of this entry, 8-byte multiple */
	uint8_t role;		/*   8: HMB_TRACE_ROLE_* */
	uint8_t key_field;	/*   9: pairs BEGIN with END (with qid_field) */
	uint8_t latency_field;	/*  10: field holding a latency in ticks */
	uint8_t qid_field;	/*  11: NVMe submission queue id */
	uint8_t cid_field;	/*  12: NVMe command id */
	uint8_t value_field;	/*  13: COUNTER: the sampled value */
	uint16_t pair_id;	/*  14: BEGIN/END partner event id, else 0 */
	char name[HMB_TRACE_NAME_LEN];	/*  16: NUL terminated */
	char format[HMB_TRACE_FORMAT_LEN]; /* 48: printf-like, one conversion per field */
};				/* 144 bytes */

struct hmb_trace_dict_field {
	char name[HMB_TRACE_FIELD_NAME_LEN]; /*  0: NUL terminated */
	uint16_t offset;	/* 24: in the payload */
	uint16_t size;		/* 26: bytes; 0 only for trailing BYTES */
	uint8_t type;		/* 28: HMB_TRACE_TYPE_* */
	uint8_t display;	/* 29: HMB_TRACE_DISPLAY_* */
	uint16_t nr_values;	/* 30: value names that follow for this field */
};				/* 32 bytes */

struct hmb_trace_dict_value {
	uint64_t value;		/*  0: a value (ENUM) or a bit mask (FLAGS) */
	char name[HMB_TRACE_VALUE_NAME_LEN]; /* 8: NUL terminated */
};				/* 32 bytes */

/*
 * ABI 1.2, command attribution (spec "Command attribution"): an entry may
 * end with this trailer, at the 8-byte aligned offset right after its
 * value names, inside entry_len. A reader of ABI 1.1 skips it (entry_len
 * may exceed what fields and values need); an entry without it, or with
 * another type, has kind HMB_TRACE_CMD_NONE and decodes as before.
 */
#define HMB_TRACE_DICT_EXT_CMD	0x4d43u	/* "CM" little-endian */

/* hmb_trace_dict_cmd.kind: what the event says about host commands */
#define HMB_TRACE_CMD_NONE	0u	/* nothing (as without the trailer) */
#define HMB_TRACE_CMD_BIND	1u	/* binds tag_field to qid/cid_field */
#define HMB_TRACE_CMD_STAGE	2u	/* a stage of a command's work */
#define HMB_TRACE_CMD_WAIT	3u	/* a command waits for resource_field */
#define HMB_TRACE_CMD_REWORK	4u	/* work repeated (retry): its own cause */
#define HMB_TRACE_CMD_ACTIVITY	5u	/* background work holding resource_field */
#define HMB_TRACE_CMD_KIND_MAX	HMB_TRACE_CMD_ACTIVITY

struct hmb_trace_dict_cmd {
	uint16_t type;		/* 0: HMB_TRACE_DICT_EXT_CMD */
	uint16_t len;		/* 2: 8; a reader uses the first 8 bytes */
	uint8_t kind;		/* 4: HMB_TRACE_CMD_* */
	uint8_t tag_field;	/* 5: firmware command tag, or 0xff */
	uint8_t resource_field;	/* 6: WAIT/ACTIVITY: resource's number, or 0xff */
	uint8_t reserved;	/* 7: 0 */
};				/* 8 bytes */

#endif /* HMB_TRACE_ABI_H */
