/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_dump_abi.h - the crash dump of an HMB trace area: what
 * hmb_trace.ko hands to devcoredump when the controller that carries the
 * area is reset, disabled or removed (/sys/class/devcoredump/devcdN/data),
 * and what `hmbtrace-cmd dump` reads back (kernel/hmb_trace/README.md,
 * "Crash dump"; hmbtrace-cmd-dump(1)).
 *
 * A dump is a header followed by sections, each a section header and
 * `len` bytes of data, the next section at the following 8-byte boundary.
 * Every integer is little-endian. A reader skips sections whose type it
 * does not know (new types are appended, never renumbered) and must bound
 * every length and count by the bytes it holds: a dump is a copy of what
 * a device wrote.
 *
 *   header | META | CORES | DICT | CLOCK | INFLIGHT | CORE_STATE | RECORDS | LOST
 *
 * (hmb_trace.ko writes them in this order; a reader finds them by type.)
 *
 * What it holds of each firmware core of the ending producer generation
 * is what the module had not yet delivered to the trace when the area was
 * disabled: the records from the core's position in the trace on
 * (hmb_dump_core.start_seq), decoded and validated by the consumer core
 * like any drain, and the losses among them. The oldest ones are left out
 * when a core's share of the record bound is full (hmb_dump_core.skipped),
 * so that, per core:
 *
 *   end_seq - start_seq == records + skipped + sum(lost)
 *
 * Freestanding: no includes, usable from the kernel and user space.
 */
#ifndef HMB_TRACE_DUMP_ABI_H
#define HMB_TRACE_DUMP_ABI_H

#define HMB_DUMP_MAGIC		"HMBTDUMP"	/* 8 bytes, no NUL */
#define HMB_DUMP_MAGIC_LEN	8u
#define HMB_DUMP_VERSION	1u
#define HMB_DUMP_ALIGN		8u
#define HMB_DUMP_NAME_LEN	32u
#define HMB_DUMP_CLOCKS		8u	/* >= HMB_TRACE_CLOCK_NR (7) */

/* hmb_dump_header.reason: why the dump was taken. */
#define HMB_DUMP_REASON_DISABLING 0u	/* the controller disables the area: reset, timeout, suspend */
#define HMB_DUMP_REASON_REMOVED	1u	/* the controller, or the module, goes */
/*
 * The firmware ended the generation on its own, with no DISABLING (an
 * assert: it re-initialised its area). The dump is of the ended
 * generation (producer_gen): what it still held undelivered that
 * validates, which is all of it while the firmware re-initialises and
 * little or nothing once the new generation invalidated its pages; no
 * INFLIGHT section; META and CORES are the area as it is (the new
 * generation's core descriptors: prev_gen, prev_next_seq).
 */
#define HMB_DUMP_REASON_FW_RESTART 2u
#define HMB_DUMP_REASON_FW_FREEZE 3u	/* the firmware froze its ring (meta.freeze) */

/* hmb_dump_section.type */
#define HMB_DUMP_SEC_META	1u	/* the meta page as it was: meta_len bytes */
#define HMB_DUMP_SEC_CORES	2u	/* the core descriptors: nr_cores x core_len bytes */
#define HMB_DUMP_SEC_DICT	3u	/* the generation's validated dictionary */
#define HMB_DUMP_SEC_CLOCK	4u	/* count x struct hmb_dump_clock */
#define HMB_DUMP_SEC_CORE_STATE	5u	/* count x struct hmb_dump_core */
#define HMB_DUMP_SEC_LOST	6u	/* count x struct hmb_dump_lost, in order per core */
#define HMB_DUMP_SEC_RECORDS	7u	/* count records: struct hmb_dump_record, payload, padding */
#define HMB_DUMP_SEC_INFLIGHT	8u	/* count x struct hmb_dump_cmd */

/* hmb_dump_header.flags */
#define HMB_DUMP_FL_DICT	(1u << 0)	/* DICT is the generation's dictionary */
#define HMB_DUMP_FL_TRUNCATED	(1u << 1)	/* a core's share was full: see skipped */
/*
 * (1u << 2) is reserved: never set. A dump is only taken of an area the
 * module could attach to (READY, valid geometry): one that never was has
 * no records to decode, and its DISABLING gives no dump.
 */
#define HMB_DUMP_FL_INFLIGHT	(1u << 3)	/* INFLIGHT lists the host's commands in flight */
#define HMB_DUMP_FL_INFLIGHT_PARTIAL (1u << 4)	/* ... but not all: more than it holds */

/**
 * struct hmb_dump_header - the start of a dump.
 * @magic: HMB_DUMP_MAGIC
 * @version: HMB_DUMP_VERSION; a reader refuses a newer one
 * @header_len: sizeof(struct hmb_dump_header): sections start there
 * @total_len: bytes of the whole dump
 * @nr_sections: sections that follow
 * @reason: HMB_DUMP_REASON_*
 * @flags: HMB_DUMP_FL_*
 * @producer_gen: the generation the records belong to
 * @nr_cores: its firmware cores
 * @area_index: the "dev" field of the area's trace events
 * @clock_hz: the firmware clock's ticks per second
 * @record_bound: the bytes RECORDS could take at most (the module's bound)
 * @taken_ns: host time of the dump on every trace clock the module fits,
 *	indexed by enum hmb_trace_clock_id (the rest 0), for the CLOCK fits
 * @taken_real_ns: CLOCK_REALTIME of the dump
 * @copy_ns: how long taking the dump kept the reset path (host ns)
 * @build_id: the firmware's build id (the meta page's)
 * @name: the area's name ("nvme0"), NUL padded
 */
struct hmb_dump_header {
	char magic[HMB_DUMP_MAGIC_LEN];		/*   0 */
	uint32_t version;			/*   8 */
	uint32_t header_len;			/*  12 */
	uint64_t total_len;			/*  16 */
	uint32_t nr_sections;			/*  24 */
	uint32_t reason;			/*  28 */
	uint32_t flags;				/*  32 */
	uint32_t producer_gen;			/*  36 */
	uint16_t nr_cores;			/*  40 */
	uint16_t area_index;			/*  42 */
	uint32_t reserved0;			/*  44 */
	uint64_t clock_hz;			/*  48 */
	uint64_t record_bound;			/*  56 */
	uint64_t taken_ns[HMB_DUMP_CLOCKS];	/*  64: [HMB_TRACE_CLOCK_NR] */
	uint64_t taken_real_ns;			/* 128 */
	uint64_t copy_ns;			/* 136 */
	uint8_t build_id[20];			/* 144 */
	uint32_t reserved1;			/* 164 */
	char name[HMB_DUMP_NAME_LEN];		/* 168 */
};						/* 200 bytes */

/**
 * struct hmb_dump_section - the header of a section; @len bytes follow.
 * @type: HMB_DUMP_SEC_*
 * @count: entries (CLOCK, CORE_STATE, LOST, RECORDS), else 0
 * @len: bytes of data that follow, not counting the padding to 8
 */
struct hmb_dump_section {
	uint32_t type;
	uint32_t count;
	uint64_t len;
};						/* 16 bytes */

/**
 * struct hmb_dump_clock - the last fit of firmware time to one host trace
 * clock (as the hmb_clock event carries it).
 * @clock_id: enum hmb_trace_clock_id
 * @flags: HMB_CLOCK_FL_* (stale)
 * @gen: the producer generation the fit is for
 * @tick_ref..@samples: struct hmb_clock_fit (clock/hmb_clock_fit.h)
 */
struct hmb_dump_clock {
	uint32_t clock_id;			/*  0 */
	uint32_t flags;				/*  4 */
	uint32_t gen;				/*  8 */
	uint32_t reserved0;			/* 12 */
	uint64_t tick_ref;			/* 16 */
	uint64_t host_ref;			/* 24 */
	uint64_t mult;				/* 32 */
	uint64_t slope_err;			/* 40 */
	uint64_t tick_first;			/* 48 */
	uint64_t tick_last;			/* 56 */
	uint64_t half_gap;			/* 64 */
	uint32_t err_ns;			/* 72 */
	uint32_t rtt_min_ns;			/* 76 */
	uint32_t samples;			/* 80 */
	uint32_t reserved1;			/* 84 */
};						/* 88 bytes */

/**
 * struct hmb_dump_core - one firmware core in the dump.
 * @core: the core
 * @start_seq: the first sequence number the trace had not delivered
 * @end_seq: one past the last the dump accounts for
 * @records: records in RECORDS
 * @skipped: the oldest records after @start_seq left out by the bound
 * @delivered: records of this core the trace had delivered since the
 *	module attached to the area (all generations)
 * @lost: of [@start_seq, @end_seq), lost by reason (enum hmb_lost_reason)
 */
struct hmb_dump_core {
	uint16_t core;				/*  0 */
	uint16_t reserved0;			/*  2 */
	uint32_t reserved1;			/*  4 */
	uint64_t start_seq;			/*  8 */
	uint64_t end_seq;			/* 16 */
	uint64_t records;			/* 24 */
	uint64_t skipped;			/* 32 */
	uint64_t delivered;			/* 40 */
	uint64_t lost[4];			/* 48: [HMB_LOST_NR] <= 4 */
};						/* 80 bytes */

/**
 * struct hmb_dump_cmd - a command the host had submitted to the controller
 * and not seen completed when the dump was taken (nvme-pci's DISABLING
 * comes before the reset cancels them).
 * @qid: its submission queue (0: admin)
 * @cid: its command identifier, as the controller saw it
 * @opcode: its opcode
 * @nsid: its namespace, 0 if none
 * @nlb: reads, writes and other commands with a range: logical blocks;
 *	else 0
 * @slba: their first logical block; else 0
 * @submit_ns: when the host's block layer allocated it, on
 *	HMB_TRACE_CLOCK_MONO (CLOCK_MONOTONIC); 0 if unknown. On another
 *	trace clock K: taken_ns[K] - (taken_ns[MONO] - submit_ns)
 */
struct hmb_dump_cmd {
	uint16_t qid;				/*  0 */
	uint16_t cid;				/*  2 */
	uint8_t opcode;				/*  4 */
	uint8_t reserved0[3];			/*  5 */
	uint32_t nsid;				/*  8 */
	uint32_t nlb;				/* 12 */
	uint64_t slba;				/* 16 */
	uint64_t submit_ns;			/* 24 */
};						/* 32 bytes */

/**
 * struct hmb_dump_lost - a run of lost records, as hmb_lost carries it.
 * @core: the core
 * @reason: enum hmb_lost_reason
 * @count: records lost
 * @at_seq: the sequence number of the first record after them
 */
struct hmb_dump_lost {
	uint16_t core;
	uint8_t reason;
	uint8_t reserved0;
	uint32_t reserved1;
	uint64_t count;
	uint64_t at_seq;
};						/* 24 bytes */

/**
 * struct hmb_dump_record - a record, as hmb_record carries it; @len
 * payload bytes follow, then zeros to the next 8-byte boundary. Records
 * of a core are in sequence order; cores follow each other.
 * @core: the firmware core
 * @event_id: its dictionary event
 * @len: payload bytes
 * @seq: its sequence number on @core
 * @ts: its firmware time (ticks)
 */
struct hmb_dump_record {
	uint16_t core;
	uint16_t event_id;
	uint16_t len;
	uint16_t reserved0;
	uint64_t seq;
	uint64_t ts;
};						/* 24 bytes */

#endif /* HMB_TRACE_DUMP_ABI_H */
