/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_producer.h - reference firmware producer for the HMB trace area.
 *
 * Freestanding C: no libc, no malloc, no locks, no read-modify-write atomics.
 * Each firmware core owns its ring; hmb_trace_emit() for core k must only be
 * called from core k (or with core k's emits otherwise serialised). The
 * producer never blocks: when a ring is full its oldest page is overwritten.
 */
#ifndef HMB_TRACE_PRODUCER_H
#define HMB_TRACE_PRODUCER_H

#include "hmb_trace_abi.h"
#include "hmb_trace_ctrl_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes (negative return values). */
#define HMB_TRACE_EINVAL	(-22)	/* bad argument or geometry */
#define HMB_TRACE_ENOSPC	(-28)	/* area or dictionary too small */
#define HMB_TRACE_E2BIG		(-7)	/* record larger than a page */
/*
 * Not an error: the record was not written because the ring is frozen (or
 * this core has written its N records after a trigger). It takes no
 * sequence number and is counted nowhere, like a record not produced
 * while stopped.
 */
#define HMB_TRACE_FROZEN	1

/** Author-time description of one event field (serialised at init). */
struct hmb_trace_field_desc {
	const char *name;
	uint16_t offset;
	uint16_t size;
	uint8_t type;		/* HMB_TRACE_TYPE_* */
	uint8_t display;	/* HMB_TRACE_DISPLAY_* */
	uint16_t nr_values;
	const struct hmb_trace_value_desc *values;
};

struct hmb_trace_value_desc {
	uint64_t value;
	const char *name;
};

/** Author-time description of one event type. */
struct hmb_trace_event_desc {
	uint16_t id;
	uint8_t role;		/* HMB_TRACE_ROLE_* */
	uint8_t key_field;	/* field index or HMB_TRACE_NO_FIELD */
	uint8_t latency_field;
	uint8_t qid_field;
	uint8_t cid_field;
	uint8_t value_field;
	uint16_t pair_id;
	const char *name;
	const char *format;
	uint16_t nr_fields;
	const struct hmb_trace_field_desc *fields;
};

/*
 * ABI 1.2 command attribution of event @id (ABI "Command attribution"):
 * serialised as the trailer struct hmb_trace_dict_cmd of its entry. An
 * event no such entry names has none (kind HMB_TRACE_CMD_NONE).
 */
struct hmb_trace_cmd_desc {
	uint16_t id;
	uint8_t kind;		/* HMB_TRACE_CMD_* */
	uint8_t tag_field;	/* field index or HMB_TRACE_NO_FIELD */
	uint8_t resource_field;	/* field index or HMB_TRACE_NO_FIELD */
};

struct hmb_trace_producer_config {
	uint32_t page_size;		/* power of two, 512..32768 */
	uint32_t pages_per_core;	/* 0: as many as fit */
	uint16_t nr_cores;
	uint32_t dict_len;		/* bytes reserved, rounded up to pages */
	uint64_t clock_hz;
	uint8_t build_id[HMB_TRACE_BUILD_ID_LEN];
	/*
	 * Non-zero: this (re)initialisation does not know how far the cores
	 * of the previous generation got (a cold boot that lost the firmware's
	 * counters): prev_gen and prev_next_seq stay 0, "tail uncountable".
	 */
	uint8_t prev_unknown;
	uint16_t nr_events;
	const struct hmb_trace_event_desc *events;
	/*
	 * A dictionary built off the device, the ABI's header and entries
	 * (`hmbtrace-cmd dict --raw`, the tokenized printf sites of
	 * hmb_trace_printf.h): its entries follow those of @events. It is
	 * checked as far as the producer copies it (magic, version, length);
	 * ids unique across both are the build's to ensure. NULL: none.
	 */
	const void *dict_blob;
	uint32_t dict_blob_len;
	/* Optional (ABI 1.2): the events' command attribution, by id. */
	uint16_t nr_cmds;
	const struct hmb_trace_cmd_desc *cmds;
};

/*
 * Producer-private state of one core; lives in firmware RAM, not the area.
 * The first fields are what an append on the fast path reads and writes
 * (hmb_trace_reserve(), hmb_trace_commit()). Invariants: the next record
 * starts at page + sizeof(page header) + bytes; HMB_TRACE_COMMIT(records,
 * bytes) is the page's commit word as last stored; limit is the page's
 * data bytes while a page is open, 0 before the first one, so that no
 * record fits and the first append takes the slow path, which opens it.
 */
struct hmb_trace_producer_core {
	uint8_t *page;		/* current page, NULL before the first record */
	uint32_t bytes;		/* committed data bytes in the current page */
	uint32_t records;	/* committed records in the current page */
	uint32_t limit;		/* data bytes of the open page; 0: none */
	uint64_t base_ts;
	uint64_t next_seq;	/* sequence number of the next record */
	struct hmb_trace_core *desc;	/* this core's descriptor in meta */
	uint64_t miss_ts;	/* @ts of hmb_trace_reserve_miss(), see there */
	uint64_t page_seq;	/* seq of the current page */
	uint64_t dropped;
	uint32_t slot;		/* ring slot of the current page */
	/* The freeze: this core writes no record at or past freeze_stop. */
	uint64_t freeze_stop;
	/* Ring mode STOP: opening page stop_from + pages_per_core freezes. */
	uint64_t stop_from;
};

struct hmb_trace_producer {
	uint8_t *area;
	uint64_t area_len;
	uint32_t page_size;
	uint32_t pages_per_core;
	uint16_t nr_cores;
	uint32_t producer_gen;
	uint64_t ring_offset;
	uint32_t max_payload;
	/*
	 * The freeze (ABI 1.1). Written by whoever triggers or re-arms (a
	 * core, the control channel), read by every core's emit: a core
	 * racing a trigger may write one record more or fewer than N; a
	 * firmware that needs the exact count serialises the two.
	 */
	uint32_t freeze_word;		/* as published in meta.freeze */
	uint32_t freeze_after;		/* N, host-set (FREEZE_CONFIG) */
	uint64_t freeze_latency;	/* threshold in ticks; 0: off */
	uint64_t freeze_settle;		/* ticks after a trigger: FROZEN */
	uint64_t freeze_ts;		/* of the current trigger */
	uint32_t ring_stop_word;	/* ring mode STOP: non-zero */
	uint8_t freeze_armed;		/* FREEZE_CONFIG seen since init */
	/*
	 * What an append calls when the freeze is in play: NULL after init,
	 * set by the calls that start a freeze (hmb_trace_freeze*(),
	 * hmb_trace_ring_mode()) before they publish it, so that a firmware
	 * that never calls them does not link the freeze (--gc-sections).
	 */
	int (*ring_full)(struct hmb_trace_producer *p, uint16_t core,
			 uint64_t ts);
	void (*freeze_done)(struct hmb_trace_producer *p);
	struct hmb_trace_producer_core core[HMB_TRACE_MAX_CORES];
};

/**
 * hmb_trace_producer_init() - (re)initialise the area and publish the
 * dictionary. Safe to call again on a live area (firmware reset): the
 * producer generation is incremented and every page header invalidated
 * before the area is marked READY again. The configuration is checked
 * before the area is touched: on error the area is unchanged.
 * Return: 0, or a negative HMB_TRACE_E* code.
 */
int hmb_trace_producer_init(struct hmb_trace_producer *p, void *area,
			    uint64_t area_len,
			    const struct hmb_trace_producer_config *cfg);

/**
 * hmb_trace_producer_init_blob() - hmb_trace_producer_init() for a
 * firmware whose whole dictionary is a pre-built blob
 * (@cfg->dict_blob: `hmbtrace-cmd dict --raw`, or the bytes a host build
 * of the same declarations published): @cfg->nr_events must be 0. The
 * area, the dictionary it publishes and the checks are the same as
 * hmb_trace_producer_init() with those events in the blob, but the
 * dictionary serializer is not linked (--gc-sections): about 600 bytes of
 * Thumb-2 code less (producer/embedded/bench.sh measures both).
 * Return: 0, or a negative HMB_TRACE_E* code (EINVAL if @cfg has events).
 */
int hmb_trace_producer_init_blob(struct hmb_trace_producer *p, void *area,
				 uint64_t area_len,
				 const struct hmb_trace_producer_config *cfg);

/**
 * hmb_trace_emit() - append one record to @core's ring.
 * @fixed/@fixed_len: the fixed arguments (dictionary fields);
 * @var/@var_len: an optional variable payload appended after them.
 * @ts: firmware time; must not go backwards on a core.
 * Return: 0, or a negative code. An oversize record or event id 0 is
 * counted in the core's dropped counter; a bad @core has no counter.
 */
int hmb_trace_emit(struct hmb_trace_producer *p, uint16_t core,
		   uint16_t event_id, uint64_t ts,
		   const void *fixed, uint32_t fixed_len,
		   const void *var, uint32_t var_len);

/*
 * ---- Appending in two steps: reserve, write the payload, commit ----
 *
 * What hmb_trace_emit() and the emitters of hmb_trace_declare.h are made
 * of. hmb_trace_reserve() writes the record header and zeroes the padding
 * of a record of @fixed_len + @var_len payload bytes, and loads into a
 * struct hmb_trace_append (the caller's local: registers) what the commit
 * will store; the caller then writes exactly that many bytes at
 * hmb_trace_payload() and calls hmb_trace_commit(), on the same core,
 * before any other append on that core. Holding the state in the local is
 * what spares a reload of it after the payload stores, which may alias
 * anything.
 *
 * The inline part handles a record that fits in the open page while the
 * freeze is RUNNING, with word stores and one release; everything else
 * (the first page, a page switch, a timestamp the page cannot express,
 * the freeze, ring mode STOP, refusals and their accounting) is
 * hmb_trace_reserve_slow(), out of line. Both write the same bytes
 * (producer_unittest's FastPathWritesWhatTheGeneralPathWrites).
 */

#define hmb_trace_release()	__atomic_thread_fence(__ATOMIC_RELEASE)

/*
 * The fast path is inlined at -Os too: a call would cost what it saves.
 * Attributes are spelled __x__: the kernel, which builds this file
 * (kernel/patches/test), defines noinline and others as macros.
 */
#define HMB_TRACE_INLINE	static inline __attribute__((__always_inline__))
/* What the fast path calls out of line: rare, laid out away from it. */
#define HMB_TRACE_COLD		__attribute__((__cold__, __noinline__))

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define hmb_trace_cpu_to_le32(x)	__builtin_bswap32(x)
#define hmb_trace_cpu_to_le64(x)	__builtin_bswap64(x)
#else
#define hmb_trace_cpu_to_le32(x)	(x)
#define hmb_trace_cpu_to_le64(x)	(x)
#endif

/* Bytes a record of @len payload bytes takes in a page. */
#define HMB_TRACE_RECORD_SIZE(len) \
	((uint32_t)sizeof(struct hmb_trace_record_header) + \
	 (((uint32_t)(len) + HMB_TRACE_RECORD_ALIGN - 1) & \
	  ~(HMB_TRACE_RECORD_ALIGN - 1)))

/* An append under way: the core's state once the record is committed. */
struct hmb_trace_append {
	uint8_t *rec;		/* the record's header; payload after it */
	struct hmb_trace_page_header *page;
	struct hmb_trace_core *desc;
	uint32_t bytes;
	uint32_t records;
	uint64_t next_seq;
};

/**
 * hmb_trace_reserve_slow() - the general path of hmb_trace_reserve(): the
 * same contract, for any record, without filling a struct
 * hmb_trace_append. Return: 0, or what hmb_trace_emit() returns for a
 * record it does not write.
 */
HMB_TRACE_COLD
int hmb_trace_reserve_slow(struct hmb_trace_producer *p, uint16_t core,
			   uint16_t event_id, uint64_t ts,
			   uint32_t fixed_len, uint32_t var_len);

/*
 * hmb_trace_reserve_miss() - hmb_trace_reserve_slow() for the inline path,
 * with p->core[@core].miss_ts as @ts (when @core < HMB_TRACE_MAX_CORES)
 * and @len = @fixed_len + @var_len, or 0xffffffff if that does not fit 32
 * bits: four arguments travel in registers on a 32-bit core, so the call
 * site needs no stack frame for them.
 */
HMB_TRACE_COLD
int hmb_trace_reserve_miss(struct hmb_trace_producer *p, uint16_t core,
			   uint16_t event_id, uint32_t len);

/**
 * hmb_trace_commit_slow() - after a commit that saw the freeze word not
 * RUNNING: a core that wrote its N-th record may end the freeze's wait.
 */
HMB_TRACE_COLD
void hmb_trace_commit_slow(struct hmb_trace_producer *p, uint16_t core);

/** hmb_trace_copy() - copy @n bytes (no libc on a firmware core). */
void hmb_trace_copy(void *dst, const void *src, uint32_t n);

/* An aligned 32-bit store into the area, in its byte order. */
HMB_TRACE_INLINE void hmb_trace_store32(uint8_t *dst, uint32_t v)
{
	v = hmb_trace_cpu_to_le32(v);
	__builtin_memcpy(__builtin_assume_aligned(dst, 4), &v, 4);
}

/* What the commit of the next record, of @size bytes, will store. */
HMB_TRACE_INLINE void hmb_trace_append_load(struct hmb_trace_producer_core *pc,
					    uint32_t size,
					    struct hmb_trace_append *a)
{
	a->rec = (uint8_t *)__builtin_assume_aligned(pc->page, 8) +
		 sizeof(struct hmb_trace_page_header) + pc->bytes;
	a->page = (struct hmb_trace_page_header *)pc->page;
	a->desc = pc->desc;
	a->bytes = pc->bytes + size;
	a->records = pc->records + 1;
	a->next_seq = pc->next_seq + 1;
}

/**
 * hmb_trace_reserve() - start a record of @fixed_len + @var_len payload
 * bytes on @core (see above). Return: 0, the record's payload is at
 * hmb_trace_payload(@a); else the record is refused (hmb_trace_emit()'s
 * codes) and must not be written or committed.
 */
HMB_TRACE_INLINE int hmb_trace_reserve(struct hmb_trace_producer *p,
				       uint16_t core, uint16_t event_id,
				       uint64_t ts, uint32_t fixed_len,
				       uint32_t var_len,
				       struct hmb_trace_append *a)
{
	struct hmb_trace_producer_core *pc;
	uint32_t len = fixed_len + var_len;
	uint32_t size = HMB_TRACE_RECORD_SIZE(len);
	uint64_t delta;
	uint8_t *r;
	int err;

	/* Constants at an emitter: these tests fold away. */
	if (core >= HMB_TRACE_MAX_CORES || !event_id || fixed_len > 0xffff ||
	    var_len > 0xffff)
		goto slow;
	pc = &p->core[core];
	delta = ts - pc->base_ts;	/* ts < base_ts wraps: not < 2^32 */
	if (HMB_TRACE_FREEZE_STATE(*(volatile uint32_t *)&p->freeze_word) !=
	    HMB_TRACE_FREEZE_RUNNING ||
	    pc->bytes + size > pc->limit || (delta >> 32))
		goto slow;
	/* A record that fits the open page fits max_payload too. */
	hmb_trace_append_load(pc, size, a);
	r = a->rec;
	hmb_trace_store32(r, (uint32_t)event_id | len << 16);
	hmb_trace_store32(r + 4, (uint32_t)delta);
	/*
	 * Padding: zero the words it touches (the last one, and the one
	 * before if the payload ends in it); the payload overwrites them.
	 */
	if (len & (HMB_TRACE_RECORD_ALIGN - 1)) {
		if ((len & (HMB_TRACE_RECORD_ALIGN - 1)) <= 4)
			hmb_trace_store32(r + size - 8, 0);
		hmb_trace_store32(r + size - 4, 0);
	}
	return 0;
slow:
	if (core < HMB_TRACE_MAX_CORES)
		p->core[core].miss_ts = ts;
	if (fixed_len > 0xffff || var_len > 0xffff)
		len = 0xffffffffu;
	err = hmb_trace_reserve_miss(p, core, event_id, len);
	if (!err)
		hmb_trace_append_load(&p->core[core], size, a);
	return err;
}

/** Where the payload of the record hmb_trace_reserve() started goes. */
HMB_TRACE_INLINE uint8_t *hmb_trace_payload(const struct hmb_trace_append *a)
{
	return a->rec + sizeof(struct hmb_trace_record_header);
}

/**
 * hmb_trace_commit() - publish the record hmb_trace_reserve() started on
 * @core. Return: 0.
 */
HMB_TRACE_INLINE int hmb_trace_commit(struct hmb_trace_producer *p,
				      uint16_t core,
				      const struct hmb_trace_append *a)
{
	struct hmb_trace_producer_core *pc = &p->core[core];

	pc->bytes = a->bytes;
	pc->records = a->records;
	pc->next_seq = a->next_seq;
	/*
	 * Record bytes and padding before the commit word that covers them;
	 * pairs with the acquire after visit_page()'s read of commit
	 * (consumer/hmb_consumer.c).
	 */
	hmb_trace_release();
	*(volatile uint32_t *)&a->page->commit =
		hmb_trace_cpu_to_le32(HMB_TRACE_COMMIT(a->records, a->bytes));
	*(volatile uint64_t *)&a->desc->next_seq =
		hmb_trace_cpu_to_le64(a->next_seq);
	if (HMB_TRACE_FREEZE_STATE(*(volatile uint32_t *)&p->freeze_word) !=
	    HMB_TRACE_FREEZE_RUNNING)
		hmb_trace_commit_slow(p, core);
	return 0;
}

/*
 * The freeze (ABI 1.1, Documentation/hmb-trace-abi.rst "The freeze").
 * After init: not armed, N = 0, no latency threshold, ring mode OVERWRITE.
 */

/**
 * hmb_trace_freeze_config() - the control channel's FREEZE_CONFIG: arm
 * the firmware's triggers, with a latency threshold (firmware ticks; 0: no
 * latency trigger) and N, the records each core writes after a trigger.
 */
void hmb_trace_freeze_config(struct hmb_trace_producer *p,
			     uint64_t latency_ticks, uint32_t n_after);

/**
 * hmb_trace_freeze() - freeze the ring: every core writes at most N more
 * records, then none until re-armed. @core: the core that saw the trigger
 * (0xffff: none); @reason: HMB_TRACE_FREEZE_*; @detail: meta.freeze_detail.
 * Reasons other than HOST and RING_FULL act only when armed.
 * Return: 0 if this call froze the ring, HMB_TRACE_FROZEN if a freeze was
 * under way already (the first trigger wins) or the freeze is not armed,
 * HMB_TRACE_EINVAL for a bad reason.
 */
int hmb_trace_freeze(struct hmb_trace_producer *p, uint16_t core,
		     uint32_t reason, uint64_t detail, uint64_t ts);

/**
 * hmb_trace_freeze_latency() - the latency trigger: call after the
 * command's completion record is written (so the frozen window holds it).
 * Freezes with reason LATENCY if armed with a threshold and @latency_ticks
 * reaches it. @detail: qid << 16 | cid. Return: 0 if this call froze
 * the ring, else HMB_TRACE_FROZEN (under the threshold, not armed, or a
 * freeze under way).
 */
int hmb_trace_freeze_latency(struct hmb_trace_producer *p, uint16_t core,
			     uint64_t latency_ticks, uint64_t detail,
			     uint64_t ts);

/**
 * hmb_trace_freeze_tick() - firmware housekeeping, from any core: a freeze
 * TRIGGERED for clock_hz / 10 ticks becomes FROZEN even if an idle core
 * has not written its N records, so the host is not kept waiting.
 */
void hmb_trace_freeze_tick(struct hmb_trace_producer *p, uint64_t now);

/**
 * hmb_trace_freeze_rearm() - the control channel's FREEZE_REARM: clear a
 * freeze, overwrite again. Return: the freeze word before.
 */
uint32_t hmb_trace_freeze_rearm(struct hmb_trace_producer *p);

/**
 * hmb_trace_ring_mode() - the control channel's RING_MODE. STOP is the
 * freeze with reason RING_FULL and N = 0: the first core whose next page
 * would overwrite a page written since the mode was set freezes every
 * core. OVERWRITE ends that mode and re-arms a RING_FULL freeze.
 * Return: 0, HMB_TRACE_EINVAL for another mode.
 */
int hmb_trace_ring_mode(struct hmb_trace_producer *p, uint32_t mode);

/** Largest payload (fixed + var) one record can carry with this geometry. */
uint32_t hmb_trace_max_payload(const struct hmb_trace_producer *p);

/**
 * hmb_trace_area_size() - bytes needed for a configuration (with
 * pages_per_core set). Return 0 if the configuration is invalid.
 */
uint64_t hmb_trace_area_size(const struct hmb_trace_producer_config *cfg);

#ifdef __cplusplus
}
#endif

#endif /* HMB_TRACE_PRODUCER_H */
