/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * hmb_consumer.h - the consumer core: drains an HMB trace area, read-only.
 *
 * Portable C compiled unchanged into the kernel module (hmb_trace.ko) and into
 * user space (tests, hmb-read, the fuzzer). It never writes the area and
 * never allocates: the caller provides the state and a page-sized scratch
 * buffer. Every value read from the area is read once, copied out and
 * range-checked before use; no value from the area can make it read outside
 * the area, loop without bound or allocate.
 */
#ifndef HMB_CONSUMER_H
#define HMB_CONSUMER_H

#include "hmb_trace_abi.h"
#include "hmb_trace_events_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct hmb_area - the mapped trace area as a set of equal host pages.
 * @pages: kernel/user addresses of each host page, in area order
 * @nr_pages: number of host pages
 * @page_shift: log2 of the host page size (e.g. 12)
 *
 * The area need not be virtually contiguous (nvme-pci HMB chunks are not).
 */
struct hmb_area {
	const uint8_t *const *pages;
	uint64_t nr_pages;
	uint32_t page_shift;
};

/*
 * enum hmb_lost_reason (why records were lost; indexes
 * hmb_consumer_core.lost[]), enum hmb_consumer_error (invalid input by
 * kind; indexes hmb_consumer.errors[]) and enum
 * hmb_consumer_broken_reason are ABI, with their names:
 * hmb_trace_events_abi.h.
 */

/* hmb_consumer_poll() results and consumer states. */
enum hmb_consumer_state {
	HMB_CONSUMER_DETACHED = 0,	/* not started: no READY area seen yet */
	HMB_CONSUMER_ATTACHED,		/* draining */
	HMB_CONSUMER_PRODUCER_INIT,	/* producer is (re)initialising */
	HMB_CONSUMER_BROKEN,		/* meta invalid: nothing is read */
};

/*
 * Why the consumer is BROKEN (hmb_consumer.broken_reason); NONE in every
 * other state. An area that was never READY and has no magic (all zero)
 * is not broken but not started: DETACHED.
 */

/*
 * What the event callback reports: the hmb_state state it becomes
 * (enum hmb_trace_ev_state, hmb_trace_events_abi.h). The consumer core
 * reports attached, reset, producer_init, broken and implausible;
 * detached is the module's own.
 */

/** A record handed to the deliver callback; valid only during the call. */
struct hmb_record {
	uint16_t core;
	uint16_t event_id;
	uint16_t len;
	uint64_t seq;		/* per-core record sequence number */
	uint64_t ts;		/* firmware time: page base_ts + ts_delta */
	const uint8_t *payload;	/* len bytes, in the consumer's scratch copy */
};

/*
 * What a deliver callback returns. HMB_DELIVER_REFUSED is for a reader that
 * cannot take the record now (the kernel module's trace buffer is off or
 * full): the record is not consumed, and the next drain of the core starts
 * with it again; no loss is charged for it.
 */
enum hmb_deliver_result {
	HMB_DELIVER_OK = 0,		/* taken; go on */
	HMB_DELIVER_STOP = 1,		/* taken; end this drain */
	HMB_DELIVER_REFUSED = -1,	/* not taken; end this drain */
};

struct hmb_consumer_ops {
	/* An enum hmb_deliver_result: > 0 stops after, < 0 refuses @rec. */
	int (*deliver)(void *ctx, const struct hmb_record *rec);
	/* @count records before sequence @at_seq are gone, for @reason. */
	void (*lost)(void *ctx, uint16_t core, uint64_t count,
		     enum hmb_lost_reason reason, uint64_t at_seq);
	/* Attached, producer reset (new generation), area broken. */
	void (*event)(void *ctx, enum hmb_trace_ev_state ev,
		      uint32_t producer_gen);
};

/** Validated copy of the meta page: constant for one producer generation. */
struct hmb_geometry {
	uint32_t page_size;
	uint32_t data_size;		/* page_size - page header */
	uint16_t nr_cores;
	uint32_t pages_per_core;
	uint64_t area_len;		/* clamped to the mapped size */
	uint64_t dict_offset;
	uint32_t dict_len;
	uint64_t ring_offset;
	uint32_t core_offset;
	uint64_t clock_hz;
	uint32_t producer_gen;
	uint8_t build_id[HMB_TRACE_BUILD_ID_LEN];
	uint32_t flags;			/* HMB_TRACE_META_* */
};

/** Consumer position and counters of one firmware core. */
struct hmb_consumer_core {
	uint64_t next_page;	/* page_seq we want next */
	uint64_t last_page;	/* page_seq we last started delivering from */
	uint64_t next_seq;	/* sequence number we expect next */
	uint32_t page_off;	/* data bytes of next_page already consumed */
	uint32_t page_recs;	/* records of next_page already consumed */
	uint64_t delivered;
	uint64_t lost[HMB_LOST_NR];
	/*
	 * Records known to be gone but not yet placed: the next gap in the
	 * sequence is charged to torn, then invalid, then up to one page per
	 * page skipped with an unknown record count (invalid_pages, at most a
	 * ring's worth) to invalid, the rest to overwritten.
	 */
	uint64_t pending_torn;
	uint64_t pending_invalid;
	uint32_t invalid_pages;
	/*
	 * The producer lapped us (pages were skipped as overwritten) since
	 * the last gap was charged: only then can part of a gap be
	 * "overwritten"; without a lap, what skipped pages held is invalid.
	 */
	uint8_t lapped;
	/*
	 * The time bound (hmb_consumer.now_ns and max_rate; unused without
	 * them). seen_ns: when next_seq was last confirmed: the start of the
	 * drain that delivered a record of the core or accepted a gap, or,
	 * for a new generation, the last poll that saw no newer one READY.
	 * seen_known is 0 while nothing bounds it (the consumer attached to a
	 * producer that was already running), and then no gap is too large
	 * for the clock.
	 */
	uint64_t seen_ns;
	uint8_t seen_known;
	/*
	 * How far past next_seq the producer claimed to be at seen_ns: 0 once
	 * a drain confirmed next_seq; at the first attach, the core's next_seq
	 * hint (anchor_positions()), so that a generation the consumer never
	 * drained (the flight recorder) is still bounded by time.
	 */
	uint64_t seen_ahead;
	uint64_t seen_end;	/* past the last record a read header showed */
	/*
	 * A position the clock rules out, seen on pages that agree with each
	 * other (claim_low/high: the lowest and highest of them, with their
	 * first_seq): if it spans a ring, the producer really numbers from
	 * there and the consumer follows it (see too_far()). Cleared by every
	 * confirmation of next_seq.
	 */
	uint8_t claim;
	uint32_t claim_invalid_pages;	/* invalid_pages before the claim */
	uint64_t claim_low_ns;		/* drain that saw claim_low_page */
	uint64_t claim_low_page;
	uint64_t claim_low_first;
	uint64_t claim_high_page;
	uint64_t claim_high_first;
};

/* Where a core stood in a generation: what a return to it resumes. */
struct hmb_consumer_pos {
	uint64_t next_page;
	uint64_t last_page;
	uint64_t next_seq;
	uint32_t page_off;
	uint32_t page_recs;
	uint64_t pending_torn;
	uint64_t pending_invalid;
	uint32_t invalid_pages;
	uint64_t seen_ns;
	uint8_t seen_known;
	uint64_t seen_ahead;
	uint64_t seen_end;
};

struct hmb_consumer {
	struct hmb_area area;
	uint64_t mapped_len;
	struct hmb_consumer_ops ops;
	void *ctx;
	uint8_t *scratch;		/* >= HMB_TRACE_PAGE_SIZE_MAX bytes */
	enum hmb_consumer_state state;
	struct hmb_geometry geo;
	struct hmb_consumer_core core[HMB_TRACE_MAX_CORES];
	/*
	 * Cores this consumer drains (bit k: core k); all by default. Loss at
	 * a reset is reported only for these, so that several consumers can
	 * share one area, each draining its own cores.
	 */
	uint32_t core_mask;
	/*
	 * The time bound, off unless the owner sets both after
	 * hmb_consumer_init(): now_ns (a monotonic clock in nanoseconds, called
	 * with ctx) and max_rate (the most records per second any one core's
	 * producer can write; 0: no bound). Then no gap in a core's sequence
	 * is charged that is larger than a ring (hmb_consumer_capacity()) plus
	 * max_rate x the time since that core's next_seq was last confirmed:
	 * the producer cannot have written more since. A page claiming more
	 * (its page_seq or first_seq) is counted as "implausible" and skipped,
	 * never charged. A max_rate above anything the producer can reach
	 * never calls an honest producer implausible; the clock is read only
	 * when a gap exceeds a ring, and once per drain and poll.
	 */
	uint64_t (*now_ns)(void *ctx);
	uint64_t max_rate;
	uint64_t drain_ns;		/* now_ns() when this drain began */
	uint64_t poll_ns;		/* now_ns() when this poll began */
	/*
	 * The last poll that found the area INIT or READY in the generation
	 * attached to after it: a generation that is READY later wrote all
	 * its records after polled_ns.
	 */
	uint64_t polled_ns;
	uint8_t polled_known;
	/*
	 * Producer re-initialisations seen: one per observed change to a
	 * newer generation (never a difference of generation numbers). A
	 * generation that goes back, or READY again after INIT in the same
	 * generation, is a "bad_generation" error, not a reset; positions are
	 * never rewound, so no record is delivered twice.
	 */
	uint64_t resets;
	/*
	 * Of the last reset, the cores (bit k: core k) of the old generation
	 * whose unread tail was not counted: reset_uncountable when the new
	 * meta page did not say how far the core got (prev_gen not the old
	 * generation, the core gone, or the reset found the consumer broken),
	 * reset_refused when it said more than reset_bound() allows. Valid
	 * from the HMB_TRACE_EV_RESET callback on, until the next reset.
	 */
	uint32_t reset_uncountable;
	uint32_t reset_refused;
	uint64_t errors[HMB_ERR_NR];	/* saturate at UINT64_MAX, as lost[] */
	enum hmb_consumer_broken_reason broken_reason;
	uint32_t broken_gen;		/* producer_gen when it broke */
	uint8_t attached_once;		/* positions belong to geo.producer_gen */
	/*
	 * The generation left for geo.producer_gen, and where each core
	 * stood in it: if the meta page goes back to it before anything of
	 * the newer one was delivered or charged, the newer one was never
	 * real (a corrupted generation word) and reading resumes there.
	 */
	uint8_t have_prev;		/* prev_geo and prev_pos are valid */
	uint8_t gen_progress;		/* a record of geo's gen delivered/charged */
	struct hmb_geometry prev_geo;
	struct hmb_consumer_pos prev_pos[HMB_TRACE_MAX_CORES];
	/*
	 * Reading a generation that ended (hmb_consumer_read_ended()): the
	 * meta page in INIT of that same generation is not a change, the
	 * producer is re-initialising and its pages are what they were.
	 */
	uint8_t ended;
};

#define HMB_CONSUMER_SCRATCH_LEN	HMB_TRACE_PAGE_SIZE_MAX

/**
 * hmb_consumer_init() - prepare a consumer over @area. Nothing is read yet.
 * @scratch: caller-owned buffer of HMB_CONSUMER_SCRATCH_LEN bytes.
 */
void hmb_consumer_init(struct hmb_consumer *c, const struct hmb_area *area,
		       const struct hmb_consumer_ops *ops, void *ctx,
		       uint8_t *scratch);

/**
 * hmb_consumer_poll() - check the meta page: attach, notice a producer
 * reset (new generation: positions restart, state callback) or a broken
 * area. Call before draining. Return: the consumer state.
 */
enum hmb_consumer_state hmb_consumer_poll(struct hmb_consumer *c);

/**
 * hmb_consumer_drain_core() - deliver new records of @core, in order,
 * at most @budget records. Return: records delivered (lost records are
 * reported through ops.lost, not counted here).
 */
uint32_t hmb_consumer_drain_core(struct hmb_consumer *c, uint16_t core,
				 uint32_t budget);

/**
 * hmb_consumer_read_ended() - make @c, a copy of a consumer, read what
 * generation @gen still holds although it ended: the producer is
 * re-initialising the area (meta page INIT, @c still in @gen: it reads on
 * from where it stands) or re-initialised it since (@c saw the reset from
 * @gen: it goes back to where each core stood in @gen, whose pages the new
 * generation has invalidated, so little or nothing validates). For a
 * crash dump of a firmware's own restart; the consumer it copied is not
 * changed. Call after hmb_consumer_poll(), then drain as usual.
 * Return: 0, or -1 if @c has no position in @gen.
 */
int hmb_consumer_read_ended(struct hmb_consumer *c, uint32_t gen);

/**
 * hmb_consumer_capacity() - records one ring of @g can hold at most
 * (pages_per_core pages of records of 8 bytes): the bound of an invalid
 * charge, of the part of a reset's unread tail charged to "reset" (and of
 * the whole tail without a clock), and how far ahead of a confirmed
 * position the producer can be before time counts (hmb_consumer.max_rate).
 */
uint64_t hmb_consumer_capacity(const struct hmb_geometry *g);

/**
 * struct hmb_consumer_peek - what a cheap look at the area compares with:
 * where the consumer stood after its last drain. Taken by the drainer
 * (hmb_consumer_peek_take()); a look (hmb_consumer_peek_changed()) reads
 * only this, the area and the consumer's mapping, so it may run on
 * another CPU or in another context than the drainer, while the drainer
 * is not running.
 */
struct hmb_consumer_peek {
	uint8_t valid;			/* attached when it was taken */
	uint32_t producer_gen;
	uint32_t core_offset;
	uint32_t cores;			/* bit k: core k is looked at */
	uint64_t next_seq[HMB_TRACE_MAX_CORES];
};

/**
 * hmb_consumer_peek_take() - remember where @c stands on @cores (bit k:
 * core k; cores the geometry does not have are left out) in @p.
 */
void hmb_consumer_peek_take(const struct hmb_consumer *c, uint32_t cores,
			    struct hmb_consumer_peek *p);

/**
 * hmb_consumer_peek_changed() - might a drain find anything new since @p
 * was taken? Reads the meta page's state and generation and the cores'
 * next_seq hints: a few words, no copy. Return: 0 only if the area is
 * READY in the same generation and every looked-at core's next_seq hint
 * equals the consumer's position; 1 otherwise (also for an invalid @p,
 * an unmapped offset, or a hint the producer does not keep up to date:
 * the hint is not authoritative, so a caller that skips drains on 0 must
 * still drain now and then).
 */
int hmb_consumer_peek_changed(const struct hmb_consumer *c,
			      const struct hmb_consumer_peek *p);

/**
 * hmb_consumer_backlog_pages() - how many pages of @core, by the producer's
 * head_page hint, are written but not yet drained (the page being written
 * included): 0 when not attached, for a core the geometry does not have,
 * or without a hint; at most pages_per_core. A hint of device memory, not
 * authoritative: for decisions a wrong answer cannot make unsafe (the
 * module holds records back for a clock fit until a ring is half full; a
 * lie only ends the wait early or lets it run to its time bound).
 */
uint32_t hmb_consumer_backlog_pages(const struct hmb_consumer *c,
				    uint16_t core);

/**
 * hmb_consumer_freeze_word() - the firmware's freeze word (ABI 1.1,
 * meta.freeze): one 32-bit read, no barrier. 0 (RUNNING, never frozen)
 * when not attached or when the producer does not set
 * HMB_TRACE_META_FREEZE (a 1.0 firmware: the field is reserved). A caller
 * that acts on a freeze issues a read barrier before reading what the
 * producer wrote before the word (freeze_seq, freeze_detail: paired with
 * the release in the producer's freeze_now()), and bounds state and
 * reason itself: this is device memory.
 */
uint32_t hmb_consumer_freeze_word(const struct hmb_consumer *c);

/** Total records lost on @core for every reason (saturating). */
uint64_t hmb_consumer_lost_total(const struct hmb_consumer_core *cc);

/**
 * hmb_area_read() - copy @len bytes at area offset @off into @dst.
 * Return: 0, or -1 if the range is outside the mapped area.
 */
int hmb_area_read(const struct hmb_consumer *c, uint64_t off, void *dst,
		  uint32_t len);

/*
 * The dictionary of the generation the consumer is attached to, copied the
 * way the meta page is (hmb_consumer_poll()): READY and the generation are
 * checked before the copy and again after it, so that a copy that
 * overlapped a re-initialisation is never used. Two steps, so that the
 * caller allocates (kvmalloc in the kernel) between them:
 *
 *	ret = hmb_consumer_dict_len(c, &len);      HMB_DICT_OK: len is known
 *	buf = alloc(len);
 *	ret = hmb_consumer_dict_copy(c, buf, len); HMB_DICT_OK: buf is it
 *
 * HMB_DICT_RETRY means the producer is re-initialising (poll again, then
 * retry); HMB_DICT_INVALID that this generation's dictionary header is bad
 * (wrong magic, total_len not within the header, dict_len and
 * HMB_CONSUMER_DICT_MAX): decoders must not use it.
 */
#define HMB_CONSUMER_DICT_MAX	(1u << 20)

enum hmb_dict_snapshot {
	HMB_DICT_OK = 0,
	HMB_DICT_NONE,		/* dict_len is 0: no dictionary published */
	HMB_DICT_RETRY,		/* not READY in our generation: try later */
	HMB_DICT_INVALID,	/* the header is implausible */
};

/** hmb_consumer_dict_len() - validate the header, give its total_len. */
enum hmb_dict_snapshot hmb_consumer_dict_len(const struct hmb_consumer *c,
					     uint32_t *len);

/**
 * hmb_consumer_dict_copy() - copy @len bytes (from hmb_consumer_dict_len())
 * into @buf and check that they are this generation's dictionary.
 */
enum hmb_dict_snapshot hmb_consumer_dict_copy(const struct hmb_consumer *c,
					      uint8_t *buf, uint32_t len);

/** Names for counters, for status files and tools. */
const char *hmb_lost_reason_name(enum hmb_lost_reason r);
const char *hmb_consumer_error_name(enum hmb_consumer_error e);
const char *hmb_consumer_broken_reason_name(enum hmb_consumer_broken_reason r);

#ifdef __cplusplus
}
#endif

#endif /* HMB_CONSUMER_H */
