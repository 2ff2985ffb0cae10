// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * hmb_consumer.c - drain an HMB trace area without ever writing it.
 *
 * Read protocol for one page (paired with the producer's write order, see
 * hmb_trace_abi.h and Documentation/hmb-trace-abi.rst):
 *
 *   c1 = commit            BUSY: producer is rewriting the header, retry
 *   acquire fence          pairs with the release before "commit = 0"
 *   gen, page_seq, first_seq, base_ts
 *   copy data[page_off, bytes(c1))  into scratch
 *   acquire fence          orders the copy before the re-check
 *   c2 = commit, page_seq  BUSY or another page_seq: the copy is torn
 *
 * Bytes below bytes(c1) are never rewritten while page_seq stays the same,
 * so a copy that passes the re-check is exactly what the producer wrote.
 * Records are parsed from the scratch copy only: nothing is read twice.
 *
 * Exact loss: each page carries first_seq, the per-core sequence number of
 * its first record. Whenever the next page we can read starts above the
 * sequence number we expect, the gap is lost; it is charged to the reasons
 * we already know about (torn copies, invalid pages), the rest to
 * "overwritten".
 *
 * Bounded loss: those numbers come from the area, so none is believed
 * beyond what the consumer can know. A reset's unread tail is at most a
 * ring plus what the producer can have written since the core was last
 * confirmed (reset_bound(); a ring without a clock); a gap at most what the pages between can
 * hold (gap_plausible()); a page is a lap only if the head hint got there
 * too (lap_plausible()); and with a clock and a rate from the owner
 * (hmb_consumer.now_ns, max_rate) no gap, in records or in pages, exceeds
 * a ring plus max_rate x the time since the core's position was last
 * confirmed (time_plausible()). Beyond that a value is implausible:
 * counted, its page skipped, never charged.
 */
#include "hmb_consumer.h"
#include "hmb_consumer_port.h"

#define HDR_LEN		((uint32_t)sizeof(struct hmb_trace_page_header))
#define REC_HDR_LEN	((uint32_t)sizeof(struct hmb_trace_record_header))
/* Where each field lives: offsetof the ABI structs (tests/abi pins them). */
#define META_OFF(f)	offsetof(struct hmb_trace_meta, f)
#define CORE_OFF(f)	offsetof(struct hmb_trace_core, f)
#define PAGE_OFF(f)	offsetof(struct hmb_trace_page_header, f)
#define REC_OFF(f)	offsetof(struct hmb_trace_record_header, f)
#define OFF_PAGE_SEQ	PAGE_OFF(page_seq)
#define OFF_FIRST_SEQ	PAGE_OFF(first_seq)
#define OFF_BASE_TS	PAGE_OFF(base_ts)
#define OFF_COMMIT	PAGE_OFF(commit)
#define OFF_GEN		PAGE_OFF(producer_gen)
#define META_OFF_STATE	META_OFF(state)
#define META_OFF_GEN	META_OFF(producer_gen)
#define CORE_OFF_HEAD	CORE_OFF(head_page)
#define CORE_OFF_PREV_NEXT_SEQ	CORE_OFF(prev_next_seq)
#define CORE_OFF_PREV_GEN	CORE_OFF(prev_gen)

static const char *const lost_names[HMB_LOST_NR] = {
	HMB_ABI_NAMES(HMB_LOST_REASON_LIST)
};

static const char *const error_names[HMB_ERR_NR] = {
	HMB_ABI_NAMES(HMB_AREA_ERROR_LIST)
};

static const char *const broken_names[HMB_BROKEN_NR] = {
	HMB_ABI_NAMES(HMB_BROKEN_REASON_LIST)
};

const char *hmb_lost_reason_name(enum hmb_lost_reason r)
{
	return (unsigned int)r < HMB_LOST_NR ? lost_names[r] : "unknown";
}

const char *hmb_consumer_error_name(enum hmb_consumer_error e)
{
	return (unsigned int)e < HMB_ERR_NR ? error_names[e] : "unknown";
}

const char *hmb_consumer_broken_reason_name(enum hmb_consumer_broken_reason r)
{
	return (unsigned int)r < HMB_BROKEN_NR ? broken_names[r] : "unknown";
}

/* Counters saturate: a hostile area must not make them wrap to small. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? ~0ull : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return a && b > ~0ull / a ? ~0ull : a * b;
}

uint64_t hmb_consumer_lost_total(const struct hmb_consumer_core *cc)
{
	uint64_t n = 0;
	int r;

	for (r = 0; r < HMB_LOST_NR; r++)
		n = sat_add(n, cc->lost[r]);
	return n;
}

uint64_t hmb_consumer_capacity(const struct hmb_geometry *g)
{
	return (uint64_t)g->pages_per_core * (g->data_size / REC_HDR_LEN);
}

#define NSEC_PER_S	1000000000ull

/* Is there a time bound? Without one the clock is never read. */
static int timed(const struct hmb_consumer *c)
{
	return c->now_ns && c->max_rate;
}

/* Records @rate per second make in @ns nanoseconds: rounded up, saturating. */
static uint64_t records_in(uint64_t rate, uint64_t ns)
{
	uint64_t s = ns / NSEC_PER_S, rem = ns % NSEC_PER_S;
	uint64_t part = ((rate % NSEC_PER_S) * rem + NSEC_PER_S - 1) / NSEC_PER_S;

	return sat_add(sat_add(sat_mul(rate, s), sat_mul(rate / NSEC_PER_S, rem)),
		       part);
}

/*
 * How far past next_seq (in records, and so in pages past next_page: every
 * page the producer opens gets a record) the producer of @cc can be by
 * now; ~0 if nothing bounds it. When next_seq was confirmed (seen_ns) its
 * record was in the ring, so the producer was at most a ring ahead
 * (hmb_consumer_capacity(): a ring of the smallest records); since then it
 * wrote at most max_rate per second. seen_ns is never later than the
 * confirmation, so an honest producer within max_rate is always within.
 */
static uint64_t time_bound(struct hmb_consumer *c,
			   const struct hmb_consumer_core *cc)
{
	uint64_t now;

	if (!timed(c) || !cc->seen_known)
		return ~0ull;
	now = c->now_ns(c->ctx);
	return sat_add(sat_add(hmb_consumer_capacity(&c->geo), cc->seen_ahead),
		       records_in(c->max_rate, now > cc->seen_ns ?
				  now - cc->seen_ns : 0));
}

/* @ahead within time_bound(); the clock is read only beyond a ring. */
static int time_plausible(struct hmb_consumer *c,
			  const struct hmb_consumer_core *cc, uint64_t ahead)
{
	return ahead <= hmb_consumer_capacity(&c->geo) ||
	       ahead <= time_bound(c, cc);
}

/* Address of area byte @off, or NULL; @len bytes must stay in one host page. */
static const uint8_t *area_ptr(const struct hmb_consumer *c, uint64_t off,
			       uint32_t len)
{
	uint64_t mask = ((uint64_t)1 << c->area.page_shift) - 1;
	uint64_t idx = off >> c->area.page_shift;

	if (off + len > c->mapped_len || off + len < off)
		return NULL;
	if ((off & mask) + len > mask + 1)
		return NULL;
	return c->area.pages[idx] + (off & mask);
}

/* Core descriptor @core of geometry @g in the area, or NULL. */
static const uint8_t *core_desc_ptr(const struct hmb_consumer *c,
				    const struct hmb_geometry *g, uint16_t core)
{
	return area_ptr(c, g->core_offset +
			(uint64_t)core * sizeof(struct hmb_trace_core),
			sizeof(struct hmb_trace_core));
}

int hmb_area_read(const struct hmb_consumer *c, uint64_t off, void *dst,
		  uint32_t len)
{
	uint64_t psize = (uint64_t)1 << c->area.page_shift;
	uint8_t *d = (uint8_t *)dst;

	if (off + len > c->mapped_len || off + len < off)
		return -1;
	while (len) {
		uint64_t in_page = psize - (off & (psize - 1));
		uint32_t n = len < in_page ? len : (uint32_t)in_page;

		hmb_memcpy(d, c->area.pages[off >> c->area.page_shift] +
			      (off & (psize - 1)), n);
		d += n;
		off += n;
		len -= n;
	}
	return 0;
}

void hmb_consumer_init(struct hmb_consumer *c, const struct hmb_area *area,
		       const struct hmb_consumer_ops *ops, void *ctx,
		       uint8_t *scratch)
{
	hmb_memset(c, 0, sizeof(*c));
	c->area = *area;
	c->mapped_len = area->nr_pages << area->page_shift;
	if (area->page_shift < 12 || area->page_shift > 30)
		c->mapped_len = 0; /* nothing will ever be read */
	c->ops = *ops;
	c->ctx = ctx;
	c->scratch = scratch;
	c->core_mask = ~0u;
	c->state = HMB_CONSUMER_DETACHED;
}

static void emit_event(struct hmb_consumer *c, enum hmb_trace_ev_state ev)
{
	if (c->ops.event)
		c->ops.event(c->ctx, ev, c->geo.producer_gen);
}

static void count_error(struct hmb_consumer *c, enum hmb_consumer_error err)
{
	c->errors[err] = sat_add(c->errors[err], 1);
}

/*
 * A value from the area that cannot be true (a reset tail longer than the
 * ring, a page far beyond the producer's head, a generation going back):
 * counted and reported as an hmb_state "implausible" event, never charged.
 */
static void implausible(struct hmb_consumer *c, enum hmb_consumer_error err)
{
	count_error(c, err);
	emit_event(c, HMB_TRACE_EV_IMPLAUSIBLE);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Validate a private copy of the meta page into @g. Return 0 if usable. */
static int parse_meta(const struct hmb_consumer *c, const uint8_t *m,
		      struct hmb_geometry *g)
{
	uint32_t meta_len = hmb_get32(m + META_OFF(meta_len));
	uint16_t core_len = hmb_get16(m + META_OFF(core_len));
	uint64_t rings;

	g->producer_gen = hmb_get32(m + META_OFF(producer_gen));
	g->page_size = hmb_get32(m + META_OFF(page_size));
	g->nr_cores = hmb_get16(m + META_OFF(nr_cores));
	g->pages_per_core = hmb_get32(m + META_OFF(pages_per_core));
	g->area_len = hmb_get64(m + META_OFF(area_len));
	g->dict_offset = hmb_get64(m + META_OFF(dict_offset));
	g->dict_len = hmb_get32(m + META_OFF(dict_len));
	g->ring_offset = hmb_get64(m + META_OFF(ring_offset));
	g->clock_hz = hmb_get64(m + META_OFF(clock_hz));
	hmb_memcpy(g->build_id, m + META_OFF(build_id), HMB_TRACE_BUILD_ID_LEN);
	g->core_offset = hmb_get32(m + META_OFF(core_offset));
	g->flags = hmb_get32(m + META_OFF(flags));

	if (meta_len < sizeof(struct hmb_trace_meta) ||
	    core_len < sizeof(struct hmb_trace_core))
		return -1;
	if (!is_pow2(g->page_size) || g->page_size < HMB_TRACE_PAGE_SIZE_MIN ||
	    g->page_size > HMB_TRACE_PAGE_SIZE_MAX)
		return -1;
	g->data_size = g->page_size - HDR_LEN;
	if (!g->nr_cores || g->nr_cores > HMB_TRACE_MAX_CORES)
		return -1;
	if (g->pages_per_core < HMB_TRACE_PAGES_PER_CORE_MIN ||
	    g->pages_per_core > HMB_TRACE_PAGES_PER_CORE_MAX)
		return -1;
	/* Core descriptors: inside the meta page, 8-byte aligned. */
	if (g->core_offset < meta_len || (g->core_offset & 7) ||
	    (uint64_t)g->core_offset + (uint64_t)g->nr_cores * core_len >
	    g->page_size)
		return -1;
	if (core_len != sizeof(struct hmb_trace_core))
		return -1; /* stride other than ours: refuse, do not guess */
	if (g->area_len > c->mapped_len)
		return -1;
	if (g->dict_offset < g->page_size || (g->dict_offset % g->page_size) ||
	    g->dict_offset > g->area_len ||
	    g->dict_len > g->area_len - g->dict_offset)
		return -1;
	rings = (uint64_t)g->nr_cores * g->pages_per_core * g->page_size;
	if (g->ring_offset < g->page_size || (g->ring_offset % g->page_size) ||
	    g->ring_offset > g->area_len || rings > g->area_len - g->ring_offset)
		return -1;
	return 0;
}

static void report_lost(struct hmb_consumer *c, uint16_t core, uint64_t n,
			enum hmb_lost_reason r, uint64_t at);

/*
 * The most records of the old generation that a reset can have left unread
 * on @cc: with the time bound, a ring plus what the producer can have
 * written since next_seq was confirmed (time_bound()); an honest producer
 * within max_rate never exceeds it, however long the reader lagged.
 * Without a clock, or before anything of the core was confirmed (attached
 * to a running producer, reset before the first drain), a ring: then an
 * honest tail longer than a ring is refused too (see the ABI spec).
 */
static uint64_t reset_bound(struct hmb_consumer *c,
			    const struct hmb_consumer_core *cc)
{
	if (!timed(c) || !cc->seen_known)
		return hmb_consumer_capacity(&c->geo);
	return time_bound(c, cc);
}

/*
 * The producer re-initialised: records of the old generation we had not read
 * are gone. When the new meta page says how far each core of the old
 * generation got (prev_gen/prev_next_seq), the tail prev_next_seq - next_seq
 * is charged: the last ring's worth of it (hmb_consumer_capacity(), the most
 * the old ring could still hold) to "reset", the rest, older, to
 * "overwritten" (it was overwritten before the reset, and would have been
 * charged so had the reader read on):
 *
 *   next_seq          prev_next_seq - ring          prev_next_seq
 *      |---- overwritten ----|-------- reset ----------|
 *
 * A tail beyond reset_bound() is not believed (a torn or corrupt 64-bit
 * value): it is counted as implausible and charges nothing. Cores whose tail
 * is not counted are left in reset_uncountable (no prev_gen of ours: the
 * spec's "tail uncountable") or reset_refused (implausible).
 */
static void account_reset(struct hmb_consumer *c, const struct hmb_geometry *g)
{
	uint64_t cap = hmb_consumer_capacity(&c->geo);
	uint16_t k;

	for (k = 0; k < c->geo.nr_cores && k < g->nr_cores; k++) {
		struct hmb_consumer_core *cc = &c->core[k];
		const uint8_t *cd;
		uint64_t prev, tail, kept;

		if (!(c->core_mask & (1u << k)))
			continue;
		cd = core_desc_ptr(c, g, k);
		if (!cd || hmb_load32(cd + CORE_OFF_PREV_GEN) !=
			   c->geo.producer_gen)
			continue;
		prev = hmb_load64(cd + CORE_OFF_PREV_NEXT_SEQ);
		c->reset_uncountable &= ~(1u << k);
		if (prev <= cc->next_seq)
			continue;
		tail = prev - cc->next_seq;
		if (tail > reset_bound(c, cc)) {
			c->reset_refused |= 1u << k;
			implausible(c, HMB_ERR_IMPLAUSIBLE);
			continue;
		}
		kept = tail < cap ? tail : cap;
		report_lost(c, k, tail - kept, HMB_LOST_OVERWRITTEN, prev - kept);
		report_lost(c, k, kept, HMB_LOST_RESET, prev);
	}
}

/*
 * A new generation (or the first): its records were all written after the
 * last poll that did not see it READY, if there was one.
 */
static void reset_positions(struct hmb_consumer *c)
{
	uint32_t i;

	for (i = 0; i < HMB_TRACE_MAX_CORES; i++) {
		struct hmb_consumer_core *cc = &c->core[i];

		cc->seen_ns = c->polled_ns;
		cc->seen_known = c->polled_known;
		cc->seen_ahead = 0;
		cc->seen_end = 0;
		cc->claim = 0;
		cc->next_page = 0;
		cc->last_page = 0;
		cc->next_seq = 0;
		cc->page_off = 0;
		cc->page_recs = 0;
		cc->pending_torn = 0;
		cc->pending_invalid = 0;
		cc->invalid_pages = 0;
		cc->lapped = 0;
	}
}

/*
 * Same generation, other geometry: page positions restart, the sequence
 * number we expect does not, so nothing already delivered comes again.
 */
static void restart_pages(struct hmb_consumer *c)
{
	uint32_t i;

	for (i = 0; i < HMB_TRACE_MAX_CORES; i++) {
		struct hmb_consumer_core *cc = &c->core[i];

		cc->next_page = 0;
		cc->last_page = 0;
		cc->page_off = 0;
		cc->page_recs = 0;
		cc->claim = 0;
	}
}

/* Exchanges every core's position with the one saved in prev_pos[]. */
static void swap_positions(struct hmb_consumer *c)
{
	uint32_t i;

	for (i = 0; i < HMB_TRACE_MAX_CORES; i++) {
		struct hmb_consumer_core *cc = &c->core[i];
		struct hmb_consumer_pos *p = &c->prev_pos[i];
		struct hmb_consumer_pos t = *p;

		p->next_page = cc->next_page;
		p->last_page = cc->last_page;
		p->next_seq = cc->next_seq;
		p->page_off = cc->page_off;
		p->page_recs = cc->page_recs;
		p->pending_torn = cc->pending_torn;
		p->pending_invalid = cc->pending_invalid;
		p->invalid_pages = cc->invalid_pages;
		p->seen_ns = cc->seen_ns;
		p->seen_known = cc->seen_known;
		p->seen_ahead = cc->seen_ahead;
		p->seen_end = cc->seen_end;
		cc->next_page = t.next_page;
		cc->last_page = t.last_page;
		cc->next_seq = t.next_seq;
		cc->page_off = t.page_off;
		cc->page_recs = t.page_recs;
		cc->pending_torn = t.pending_torn;
		cc->pending_invalid = t.pending_invalid;
		cc->invalid_pages = t.invalid_pages;
		cc->seen_ns = t.seen_ns;
		cc->seen_known = t.seen_known;
		cc->seen_ahead = t.seen_ahead;
		cc->seen_end = t.seen_end;
		cc->claim = 0;
	}
}

static int same_geometry(const struct hmb_geometry *a,
			 const struct hmb_geometry *b)
{
	return a->page_size == b->page_size && a->nr_cores == b->nr_cores &&
	       a->pages_per_core == b->pages_per_core &&
	       a->ring_offset == b->ring_offset &&
	       a->core_offset == b->core_offset;
}

static enum hmb_consumer_state set_state(struct hmb_consumer *c,
					 enum hmb_consumer_state s,
					 enum hmb_trace_ev_state ev)
{
	if (s != HMB_CONSUMER_BROKEN)
		c->broken_reason = HMB_BROKEN_NONE;
	if (c->state != s) {
		c->state = s;
		emit_event(c, ev);
	}
	return s;
}

/*
 * The area is not (or no longer) a trace area we can read. The error is
 * counted once per kind and generation, not once per poll.
 */
static enum hmb_consumer_state set_broken(struct hmb_consumer *c,
					  enum hmb_consumer_broken_reason why,
					  uint32_t gen, int err)
{
	if (c->state != HMB_CONSUMER_BROKEN || c->broken_reason != why ||
	    c->broken_gen != gen) {
		if (err >= 0)
			count_error(c, (enum hmb_consumer_error)err);
	}
	c->broken_reason = why;
	c->broken_gen = gen;
	return set_state(c, HMB_CONSUMER_BROKEN, HMB_TRACE_EV_BROKEN);
}

/* Is generation @a after @b? Serial-number order: generations wrap. */
static int gen_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/*
 * The first attach, to a producer that may have run for long: where each
 * core is, nothing confirms yet, and what the producer wrote before is
 * not bounded by time (a backlog from before the attach). With a clock,
 * the core's next_seq hint, read once now, anchors the bound from here on:
 * the producer was at most there at poll_ns (the hint is written after
 * each append, so it lags by at most a record). A lying hint can only
 * widen the bound for that core until its first confirmation, as a
 * backlog does; an honest one keeps a generation the consumer never drains
 * (events off: the flight recorder) bounded by time at its reset.
 */
static void anchor_positions(struct hmb_consumer *c)
{
	uint16_t k;

	if (!timed(c))
		return;
	for (k = 0; k < c->geo.nr_cores; k++) {
		struct hmb_consumer_core *cc = &c->core[k];
		const uint8_t *cd = core_desc_ptr(c, &c->geo, k);

		if (!cd)
			continue;
		cc->seen_ahead = hmb_load64(cd + CORE_OFF(next_seq));
		cc->seen_ns = c->poll_ns;
		cc->seen_known = 1;
	}
}

/* A validated meta page @g, READY: attach, resume, or take a reset. */
static enum hmb_consumer_state take_meta(struct hmb_consumer *c,
					 const struct hmb_geometry *g)
{
	if (!c->attached_once) {
		c->attached_once = 1;
		c->geo = *g;
		reset_positions(c);
		if (!c->polled_known)
			anchor_positions(c);
		return set_state(c, HMB_CONSUMER_ATTACHED, HMB_TRACE_EV_ATTACHED);
	}
	if (g->producer_gen == c->geo.producer_gen) {
		/*
		 * The generation we were reading: resume, never rewind. A
		 * re-initialisation always bumps the generation, so READY
		 * after INIT in the same one is a device bug: count it.
		 */
		if (c->state == HMB_CONSUMER_PRODUCER_INIT)
			implausible(c, HMB_ERR_BAD_GENERATION);
		if (!same_geometry(g, &c->geo)) {
			if (c->state != HMB_CONSUMER_PRODUCER_INIT)
				implausible(c, HMB_ERR_BAD_GENERATION);
			restart_pages(c);
		}
		c->geo = *g;
		return set_state(c, HMB_CONSUMER_ATTACHED, HMB_TRACE_EV_ATTACHED);
	}
	if (!gen_after(g->producer_gen, c->geo.producer_gen) &&
	    c->have_prev && !c->gen_progress &&
	    g->producer_gen == c->prev_geo.producer_gen &&
	    same_geometry(g, &c->prev_geo)) {
		/*
		 * Back to the generation we left, and nothing of the newer
		 * one was ever read: that one was a corrupted generation word,
		 * not a re-initialisation. Resume where each core stood; the
		 * reset it was counted as is taken back.
		 */
		swap_positions(c);
		c->have_prev = 0;
		if (c->resets && c->resets != ~(uint64_t)0)
			c->resets--;
		implausible(c, HMB_ERR_BAD_GENERATION);
		c->geo = *g;
		c->state = HMB_CONSUMER_ATTACHED;
		c->broken_reason = HMB_BROKEN_NONE;
		emit_event(c, HMB_TRACE_EV_ATTACHED);
		return c->state;
	}
	if (!gen_after(g->producer_gen, c->geo.producer_gen)) {
		/*
		 * Back to an older generation: its records were delivered or
		 * charged already. Read nothing until ours or a newer one.
		 */
		if (c->state != HMB_CONSUMER_BROKEN ||
		    c->broken_reason != HMB_BROKEN_GEN_BACKWARDS ||
		    c->broken_gen != g->producer_gen)
			emit_event(c, HMB_TRACE_EV_IMPLAUSIBLE);
		return set_broken(c, HMB_BROKEN_GEN_BACKWARDS, g->producer_gen,
				  HMB_ERR_BAD_GENERATION);
	}
	/* One reset per change observed, however far the number moved. */
	c->resets = sat_add(c->resets, 1);
	/* Every core of ours in the old generation, until counted. */
	c->reset_uncountable = c->core_mask &
			       (c->geo.nr_cores >= 32 ? ~0u :
				(1u << c->geo.nr_cores) - 1);
	c->reset_refused = 0;
	if (c->state == HMB_CONSUMER_ATTACHED ||
	    c->state == HMB_CONSUMER_PRODUCER_INIT)
		account_reset(c, g);
	c->prev_geo = c->geo;
	swap_positions(c);	/* saves ours; prev_pos held nothing of use */
	c->have_prev = 1;
	c->gen_progress = 0;
	c->geo = *g;
	reset_positions(c);
	c->state = HMB_CONSUMER_ATTACHED;
	c->broken_reason = HMB_BROKEN_NONE;
	emit_event(c, HMB_TRACE_EV_RESET);
	return c->state;
}

/* hmb_consumer_poll() once it has read @gen, then @state. */
static enum hmb_consumer_state poll_meta(struct hmb_consumer *c,
					 const uint8_t *m, uint32_t gen,
					 uint32_t state)
{
	uint8_t meta[sizeof(struct hmb_trace_meta)];
	struct hmb_geometry g;
	uint32_t magic;

	if (state == HMB_TRACE_STATE_INIT) {
		/* Not started (an all-zero area reads INIT) or initialising. */
		if (c->state == HMB_CONSUMER_DETACHED)
			return c->state;
		/*
		 * A re-initialisation keeps the magic (P5 clears the meta page
		 * only from offset 128, P6 writes the same magic): an area we
		 * have read that shows INIT without it was wiped.
		 */
		if (hmb_load32(m + META_OFF(magic)) != HMB_TRACE_MAGIC)
			return set_broken(c, HMB_BROKEN_BAD_MAGIC, gen,
					  HMB_ERR_BAD_MAGIC);
		return set_state(c, HMB_CONSUMER_PRODUCER_INIT,
				 HMB_TRACE_EV_PRODUCER_INIT);
	}
	if (state != HMB_TRACE_STATE_READY) {
		/* No producer writes another state: this is not a trace area. */
		magic = hmb_load32(m + META_OFF(magic));
		return set_broken(c, magic == HMB_TRACE_MAGIC ?
				  HMB_BROKEN_BAD_STATE : HMB_BROKEN_BAD_MAGIC,
				  gen, HMB_ERR_BAD_MAGIC);
	}
	if (c->state == HMB_CONSUMER_ATTACHED && gen == c->geo.producer_gen)
		return c->state;

	hmb_memcpy(meta, m, sizeof(meta));
	hmb_rmb(); /* the copy before the re-check */
	state = hmb_load32(m + META_OFF_STATE);
	hmb_rmb();
	if (state != HMB_TRACE_STATE_READY ||
	    hmb_load32(m + META_OFF_GEN) != gen ||
	    hmb_get32(meta + META_OFF_GEN) != gen)
		return c->state; /* changed under us: try again next poll */

	magic = hmb_get32(meta + META_OFF(magic));
	if (magic != HMB_TRACE_MAGIC)
		return set_broken(c, HMB_BROKEN_BAD_MAGIC, gen,
				  HMB_ERR_BAD_MAGIC);
	if (hmb_get16(meta + META_OFF(abi_major)) != HMB_TRACE_ABI_MAJOR)
		return set_broken(c, HMB_BROKEN_BAD_ABI, gen, HMB_ERR_BAD_MAGIC);
	if (parse_meta(c, meta, &g))
		return set_broken(c, HMB_BROKEN_BAD_GEOMETRY, gen,
				  HMB_ERR_BAD_GEOMETRY);
	return take_meta(c, &g);
}

enum hmb_consumer_state hmb_consumer_poll(struct hmb_consumer *c)
{
	const uint8_t *m = area_ptr(c, 0, sizeof(struct hmb_trace_meta));
	enum hmb_consumer_state ret;
	uint32_t state, gen;
	uint64_t now;

	if (!m)
		return set_broken(c, HMB_BROKEN_UNMAPPED, 0, -1);
	now = timed(c) ? c->now_ns(c->ctx) : 0; /* before the reads */
	c->poll_ns = now;
	/*
	 * Like a seqlock read with two words: gen, fence, state ... copy ...
	 * state, fence, gen. A copy that saw any store of a re-init sees
	 * INIT or the new generation in the closing reads.
	 */
	gen = hmb_load32(m + META_OFF_GEN);
	hmb_rmb();
	state = hmb_load32(m + META_OFF_STATE);
	hmb_rmb(); /* pairs with the producer's release before state = READY */
	ret = poll_meta(c, m, gen, state);
	/*
	 * No generation newer than the one we are attached to was READY when
	 * this poll began: the next one writes its records after now.
	 */
	if (timed(c) &&
	    (state == HMB_TRACE_STATE_INIT ||
	     (state == HMB_TRACE_STATE_READY && ret == HMB_CONSUMER_ATTACHED &&
	      gen == c->geo.producer_gen))) {
		c->polled_ns = now;
		c->polled_known = 1;
	}
	return ret;
}

void hmb_consumer_peek_take(const struct hmb_consumer *c, uint32_t cores,
			    struct hmb_consumer_peek *p)
{
	uint16_t k;

	p->valid = c->state == HMB_CONSUMER_ATTACHED;
	p->producer_gen = c->geo.producer_gen;
	p->core_offset = c->geo.core_offset;
	if (c->geo.nr_cores < 32)
		cores &= ((uint32_t)1 << c->geo.nr_cores) - 1;
	p->cores = cores;
	for (k = 0; k < HMB_TRACE_MAX_CORES; k++)
		p->next_seq[k] = (cores >> k) & 1 ? c->core[k].next_seq : 0;
}

uint32_t hmb_consumer_freeze_word(const struct hmb_consumer *c)
{
	const uint8_t *m = area_ptr(c, 0, sizeof(struct hmb_trace_meta));

	if (c->state != HMB_CONSUMER_ATTACHED || !m ||
	    !(c->geo.flags & HMB_TRACE_META_FREEZE))
		return 0;
	return hmb_load32(m + META_OFF(freeze));
}

int hmb_consumer_peek_changed(const struct hmb_consumer *c,
			      const struct hmb_consumer_peek *p)
{
	const uint8_t *m = area_ptr(c, 0, sizeof(struct hmb_trace_meta));
	uint16_t k;

	if (!p->valid || !m ||
	    hmb_load32(m + META_OFF_STATE) != HMB_TRACE_STATE_READY ||
	    hmb_load32(m + META_OFF_GEN) != p->producer_gen)
		return 1;
	for (k = 0; k < HMB_TRACE_MAX_CORES; k++) {
		const uint8_t *d;

		if (!((p->cores >> k) & 1))
			continue;
		d = area_ptr(c, p->core_offset +
			     (uint64_t)k * sizeof(struct hmb_trace_core),
			     sizeof(struct hmb_trace_core));
		if (!d ||
		    hmb_load64(d + offsetof(struct hmb_trace_core, next_seq)) !=
		    p->next_seq[k])
			return 1;
	}
	return 0;
}

static uint64_t page_offset(const struct hmb_geometry *g, uint16_t core,
			    uint64_t page_seq)
{
	uint64_t slot = page_seq % g->pages_per_core;

	return g->ring_offset +
	       ((uint64_t)core * g->pages_per_core + slot) * g->page_size;
}

static void report_lost(struct hmb_consumer *c, uint16_t core, uint64_t n,
			enum hmb_lost_reason r, uint64_t at)
{
	if (!n)
		return;
	c->gen_progress = 1;
	c->core[core].lost[r] = sat_add(c->core[core].lost[r], n);
	if (c->ops.lost)
		c->ops.lost(c->ctx, core, n, r, at);
}

/* next_seq of @cc is where the producer really was, at c->drain_ns or later. */
static void observed(const struct hmb_consumer *c,
		     struct hmb_consumer_core *cc)
{
	cc->seen_ns = c->drain_ns;
	cc->seen_known = timed(c);
	cc->seen_ahead = 0;
	cc->claim = 0;
}

/* The next readable record has sequence @first: account for the gap. */
static void account_gap(struct hmb_consumer *c, uint16_t core, uint64_t first)
{
	struct hmb_consumer_core *cc = &c->core[core];
	uint64_t gap = first - cc->next_seq;
	uint64_t cap = hmb_consumer_capacity(&c->geo);
	uint64_t torn, inval, skipped;

	/*
	 * Torn and invalid records were on pages of the ring, so neither
	 * charge exceeds its capacity; pages skipped with an unknown count
	 * held at most a page of records each. The rest was overwritten.
	 * These caps move records between reasons, never out of the gap, so
	 * an honest producer that exceeded one would still be counted in
	 * full; the gap itself is bounded by gap_plausible() and the clock.
	 */
	torn = cc->pending_torn < gap ? cc->pending_torn : gap;
	if (torn > cap)
		torn = cap;
	gap -= torn;
	skipped = cc->invalid_pages < c->geo.pages_per_core ?
		  cc->invalid_pages : c->geo.pages_per_core;
	inval = sat_add(cc->pending_invalid,
			skipped * (c->geo.data_size / REC_HDR_LEN));
	/*
	 * No lap seen (no page found overwritten) since the last gap: nothing
	 * was overwritten, so the rest of the gap was damage too.
	 */
	if (!cc->lapped)
		inval = gap;
	if (inval > gap)
		inval = gap;
	if (inval > cap)
		inval = cap;
	report_lost(c, core, torn, HMB_LOST_TORN, first);
	report_lost(c, core, inval, HMB_LOST_INVALID, first);
	report_lost(c, core, gap - inval, HMB_LOST_OVERWRITTEN, first);
	cc->pending_torn = 0;
	cc->pending_invalid = 0;
	cc->invalid_pages = 0;
	cc->lapped = 0;
	cc->next_seq = first;
	observed(c, cc);
}

/* Records up to sequence @end existed: a page header said so. */
static void seen_to(struct hmb_consumer_core *cc, uint64_t end)
{
	if (end > cc->seen_end)
		cc->seen_end = end;
}

static void next_page(struct hmb_consumer_core *cc, uint64_t page)
{
	cc->next_page = page;
	cc->page_off = 0;
	cc->page_recs = 0;
}

static void skip_page(struct hmb_consumer_core *cc)
{
	if (cc->invalid_pages != ~0u)
		cc->invalid_pages++;
	next_page(cc, cc->next_page + 1);
}

/* A page we cannot trust: skip it; its records show up as an invalid gap. */
static void skip_invalid_page(struct hmb_consumer *c, uint16_t core,
			      enum hmb_consumer_error err)
{
	if (err == HMB_ERR_IMPLAUSIBLE)
		implausible(c, err);
	else
		count_error(c, err);
	skip_page(&c->core[core]);
}

/* The producer's head page hint for @core; ~0 if it has none. */
static uint64_t read_head(const struct hmb_consumer *c, uint16_t core)
{
	const uint8_t *cd = core_desc_ptr(c, &c->geo, core);

	return cd ? hmb_load64(cd + CORE_OFF_HEAD) : ~0ull;
}

uint32_t hmb_consumer_backlog_pages(const struct hmb_consumer *c,
				    uint16_t core)
{
	uint64_t head;

	if (c->state != HMB_CONSUMER_ATTACHED || core >= c->geo.nr_cores)
		return 0;
	head = read_head(c, core);
	if (head == ~0ull || head < c->core[core].next_page)
		return 0;
	if (head - c->core[core].next_page >= c->geo.pages_per_core)
		return c->geo.pages_per_core;
	return (uint32_t)(head - c->core[core].next_page) + 1;
}

/*
 * The slot of next_page holds a later page: next_page is gone. Jump to the
 * oldest page that can still be in the ring; the producer's head hint may
 * move that further on, but never past the page we saw.
 */
static void skip_overwritten(struct hmb_consumer *c, uint16_t core,
			     uint64_t seen)
{
	const struct hmb_geometry *g = &c->geo;
	struct hmb_consumer_core *cc = &c->core[core];
	uint64_t oldest = seen - g->pages_per_core + 1;
	uint64_t head = read_head(c, core);

	if (head >= seen && head - seen < g->pages_per_core &&
	    head - g->pages_per_core + 1 > oldest)
		oldest = head - g->pages_per_core + 1;
	cc->lapped = 1;
	next_page(cc, oldest > cc->next_page ? oldest : cc->next_page + 1);
}

enum visit_result { VISIT_MORE, VISIT_STOP };

/*
 * Parse @n copied bytes of a page and deliver its records. The hot loop: the
 * position lives in locals and is written back when the loop ends, so the
 * consumer's counters are up to date whenever a drain returns (a deliver
 * callback must not rely on them).
 */
static enum visit_result deliver_copy(struct hmb_consumer *c, uint16_t core,
				      uint32_t n, uint32_t nrec, uint64_t first,
				      uint64_t base_ts, uint32_t *delivered,
				      uint32_t budget)
{
	struct hmb_consumer_core *cc = &c->core[core];
	int (*deliver)(void *ctx, const struct hmb_record *rec) = c->ops.deliver;
	const uint8_t *start = c->scratch, *p = start, *end = start + n;
	uint32_t recs = cc->page_recs, done = *delivered;
	/* Records this call may deliver: the page's and the budget's limit. */
	uint32_t left = nrec - recs;
	enum visit_result res = VISIT_MORE;
	struct hmb_record rec;
	int bad = 0, ret;

	if (left > budget - done)
		left = budget - done;
	rec.core = core;
	/*
	 * The walk from one record to the next is a chain of dependent loads
	 * (the next header's address comes from this header's length), so it
	 * is kept to a pointer, a 16-bit load and an add.
	 */
	while (left && p != end) {
		uint32_t id, len, size;

		if ((uint32_t)(end - p) < REC_HDR_LEN) {
			bad = 1;
			break;
		}
		len = hmb_get16(p + REC_OFF(len));
		size = (len + REC_HDR_LEN + HMB_TRACE_RECORD_ALIGN - 1) &
		       ~(HMB_TRACE_RECORD_ALIGN - 1);
		id = hmb_get16(p + REC_OFF(event_id));
		if (id == 0 || size > (uint32_t)(end - p)) {
			bad = 1;
			break;
		}
		left--;
		if (deliver) {
			rec.event_id = (uint16_t)id;
			rec.len = (uint16_t)len;
			rec.seq = first + recs;
			rec.ts = base_ts + hmb_get32(p + REC_OFF(ts_delta));
			rec.payload = p + REC_HDR_LEN;
			ret = deliver(c->ctx, &rec);
			if (ret < 0) {
				/* Refused: not consumed, first again next drain. */
				res = VISIT_STOP;
				break;
			}
			p += size;
			recs++;
			if (ret) {
				res = VISIT_STOP;
				break;
			}
		} else {
			p += size;
			recs++;
		}
	}
	done += recs - cc->page_recs;
	if (!bad && res == VISIT_MORE && p != end && recs < nrec)
		res = VISIT_STOP; /* budget spent: resume mid-page next drain */
	if (recs > cc->page_recs) {
		c->gen_progress = 1;
		observed(c, cc);
	}
	cc->delivered = sat_add(cc->delivered, recs - cc->page_recs);
	cc->page_off += (uint32_t)(p - start);
	cc->page_recs = recs;
	if (recs)
		cc->next_seq = first + recs;
	*delivered = done;
	if (res == VISIT_STOP)
		return res;
	if (!bad && p == end)
		return VISIT_MORE;
	/* A bad record, or more bytes than the commit word's records. */
	cc->pending_invalid = sat_add(cc->pending_invalid, nrec - cc->page_recs);
	skip_invalid_page(c, core, HMB_ERR_BAD_RECORD);
	cc->invalid_pages--; /* its count is known: pending_invalid */
	return VISIT_MORE;
}

/*
 * Between the page we last read from and page @pseq there can be at most
 * (pseq - last_page) pages of records. A first_seq beyond that is a lie that
 * would charge a huge loss and then make every real page look "backwards".
 * An honest producer never exceeds it, however far behind the reader is:
 * every record is on a page, every page holds at most data_size / 8
 * records, and page numbers count every page opened (laps included).
 */
static int gap_plausible(const struct hmb_geometry *g,
			 const struct hmb_consumer_core *cc, uint64_t pseq,
			 uint64_t first)
{
	uint64_t per_page = g->data_size / REC_HDR_LEN;
	uint64_t pages = pseq - cc->last_page;

	if (pseq < cc->last_page)
		return 0;
	if (pages > ~0ull / per_page)
		return 1;
	return first - cc->next_seq <= pages * per_page;
}

/*
 * Is the producer READY in the generation we are attached to? Two words
 * read like a seqlock (see hmb_consumer_poll()): before a copy gen, fence,
 * state; after it (@closing) state, fence, gen. A copy that overlapped any
 * store of a re-initialisation then sees INIT or a new generation in the
 * closing reads. Paired with the producer's hmb_trace_producer_init(),
 * which stores state = INIT before touching anything and releases before
 * state = READY.
 */
static int meta_ready(const struct hmb_consumer *c, int closing)
{
	const uint8_t *m = area_ptr(c, 0, sizeof(struct hmb_trace_meta));
	uint32_t s, g;

	if (!m)
		return 0;
	if (closing) {
		s = hmb_load32(m + META_OFF_STATE);
		hmb_rmb(); /* state before gen */
		g = hmb_load32(m + META_OFF_GEN);
	} else {
		g = hmb_load32(m + META_OFF_GEN);
		hmb_rmb(); /* gen before state */
		s = hmb_load32(m + META_OFF_STATE);
	}
	if (c->ended && s == HMB_TRACE_STATE_INIT)
		s = HMB_TRACE_STATE_READY;	/* hmb_consumer_read_ended() */
	return s == HMB_TRACE_STATE_READY && g == c->geo.producer_gen;
}

/* A re-init of the whole area started since we polled the meta page. */
static int meta_changed(const struct hmb_consumer *c)
{
	return !meta_ready(c, 1);
}

/* A consistent snapshot of one page header. */
struct page_snap {
	uint64_t pseq;
	uint64_t first;
	uint64_t base_ts;
	uint32_t gen;
	uint32_t commit;
};

/*
 * Read header, fence, commit, fence, header again. If both header reads agree
 * and commit is not BUSY, commit belongs to that header's page: a commit of
 * the slot's previous page would have been read before the producer's BUSY
 * store, and then the first header read could not have seen the new page.
 */
static int read_header(const uint8_t *h, struct page_snap *s)
{
	s->pseq = hmb_load64(h + OFF_PAGE_SEQ);
	s->first = hmb_load64(h + OFF_FIRST_SEQ);
	s->base_ts = hmb_load64(h + OFF_BASE_TS);
	s->gen = hmb_load32(h + OFF_GEN);
	hmb_rmb(); /* pairs with the producer's release after "commit = BUSY" */
	s->commit = hmb_load32(h + OFF_COMMIT);
	if (s->commit == HMB_TRACE_COMMIT_BUSY)
		return -1;
	hmb_rmb(); /* pairs with its release before "commit = 0" */
	if (hmb_load64(h + OFF_PAGE_SEQ) != s->pseq ||
	    hmb_load64(h + OFF_FIRST_SEQ) != s->first ||
	    hmb_load64(h + OFF_BASE_TS) != s->base_ts ||
	    hmb_load32(h + OFF_GEN) != s->gen)
		return -1;
	return 0;
}

/*
 * Page next_page (header at @h) is not moving: BUSY, of another
 * generation, still its slot's previous lap, or open with every record
 * read. A page in progress looks like that too, but only until the
 * producer opens the next one. If the head hint is past it and the next
 * page's header says it is page next_page + 1 of our generation, the
 * producer closed next_page before it opened that one (the release after
 * "commit = BUSY" in hmb_trace_producer's page open orders the CLOSED
 * store first): re-read next_page, and if it is still not a closed page
 * of ours it is damaged.
 *
 * Return: VISIT_STOP to wait, VISIT_MORE to look at next_page again (it
 * is closed after all), or 2: damaged, skip it.
 */
#define VISIT_DAMAGED	2
static int page_passed(struct hmb_consumer *c, uint16_t core,
		       const uint8_t *h)
{
	const struct hmb_geometry *g = &c->geo;
	struct hmb_consumer_core *cc = &c->core[core];
	uint64_t w = cc->next_page, head = read_head(c, core);
	const uint8_t *nh;
	struct page_snap s;

	if (head == ~0ull || head <= w)
		return VISIT_STOP; /* nothing after w yet */
	nh = area_ptr(c, page_offset(g, core, w + 1), HDR_LEN);
	if (!nh || read_header(nh, &s) || s.gen != g->producer_gen ||
	    s.pseq != w + 1)
		return VISIT_STOP;
	hmb_rmb(); /* pairs with the release after "commit = BUSY" of w + 1 */
	hmb_test_before_recheck(c, core);
	if (read_header(h, &s)) {
		/*
		 * BUSY or changing: damaged, unless w's slot may be reopened
		 * for page w + pages_per_core right now, i.e. the producer got
		 * to page w + pages_per_core - 1. The head hint read above may
		 * be any number of pages old by now (we may have been
		 * preempted), so read it again: a reopen we saw any store of
		 * comes after the head store of the page before it (the
		 * release before that page's first commit in hmb_trace_emit()
		 * pairs with this fence).
		 */
		hmb_rmb();
		head = read_head(c, core);
		return head - w >= g->pages_per_core - 1 ? VISIT_STOP :
		       VISIT_DAMAGED;
	}
	/* Closed after all, or overwritten: the normal path decides. */
	if (s.gen == g->producer_gen &&
	    (s.pseq > w ||
	     (s.pseq == w && (s.commit & HMB_TRACE_COMMIT_CLOSED))))
		return VISIT_MORE;
	return VISIT_DAMAGED;
}

/* Stop at next_page, unless the producer has left it damaged behind. */
static enum visit_result wait_or_pass(struct hmb_consumer *c, uint16_t core,
				      const uint8_t *h)
{
	int r = page_passed(c, core, h);

	if (r != VISIT_DAMAGED)
		return (enum visit_result)r;
	skip_invalid_page(c, core, HMB_ERR_BAD_PAGE_HEADER);
	return VISIT_MORE;
}

/*
 * Page @seen in next_page's slot says the producer lapped us. Believe it
 * only if its head hint has got there too (it is written after every page
 * open, so it may lag by one): one header far ahead must not throw away
 * the pages that still exist.
 */
static int lap_plausible(const struct hmb_consumer *c, uint16_t core,
			 uint64_t seen)
{
	uint64_t head = read_head(c, core);

	return head != ~0ull && head + 1 >= seen;
}

/*
 * Can one producer have written page @p1 starting at sequence @f1 and
 * page @p2 starting at @f2? The later page starts later, by no more than
 * the pages between can hold.
 */
static int same_numbering(const struct hmb_geometry *g, uint64_t p1,
			  uint64_t f1, uint64_t p2, uint64_t f2)
{
	uint64_t per_page = g->data_size / REC_HDR_LEN;

	if (p1 > p2)
		return same_numbering(g, p2, f2, p1, f1);
	return f1 <= f2 && f2 - f1 <= sat_mul(p2 - p1, per_page);
}

/*
 * Page @s, in next_page's slot, puts the producer further on (its page_seq
 * or first_seq) than it can have got since next_seq was confirmed
 * (time_plausible()): the head hint and the page agree on a lie. Like a
 * page far beyond the head hint, it is counted as implausible and skipped,
 * never charged, and reading goes on with the next page, so that the lie
 * costs at most the records of the pages skipped.
 *
 * Unless the producer really numbers from there (a firmware counter that
 * jumped): then every page it writes is as far, and they agree with each
 * other. Once such pages span a ring, and the head hint is among them,
 * the consumer follows: it reads on from the lowest of them, with the
 * sequence it claims, as confirmed when that page was seen. The jump is
 * counted once and never charged; records of the old numbering that were
 * seen and not delivered are (a producer faster than max_rate looks the
 * same, and those were overwritten).
 */
static enum visit_result too_far(struct hmb_consumer *c, uint16_t core,
				 const struct page_snap *s)
{
	const struct hmb_geometry *g = &c->geo;
	struct hmb_consumer_core *cc = &c->core[core];
	uint64_t known, lim;

	if (!cc->claim || s->first < cc->next_seq ||
	    !same_numbering(g, cc->claim_low_page, cc->claim_low_first,
			    s->pseq, s->first) ||
	    !same_numbering(g, cc->claim_high_page, cc->claim_high_first,
			    s->pseq, s->first)) {
		/* A new claim, or damage behind us in sequence: no claim. */
		cc->claim = s->first >= cc->next_seq;
		cc->claim_invalid_pages = cc->invalid_pages;
		cc->claim_low_ns = c->drain_ns;
		cc->claim_low_page = s->pseq;
		cc->claim_low_first = s->first;
		cc->claim_high_page = s->pseq;
		cc->claim_high_first = s->first;
		skip_invalid_page(c, core, HMB_ERR_IMPLAUSIBLE);
		return VISIT_MORE;
	}
	if (s->pseq < cc->claim_low_page) {
		cc->claim_low_ns = c->drain_ns;
		cc->claim_low_page = s->pseq;
		cc->claim_low_first = s->first;
	}
	if (s->pseq > cc->claim_high_page) {
		cc->claim_high_page = s->pseq;
		cc->claim_high_first = s->first;
	}
	if (cc->claim_high_page - cc->claim_low_page < g->pages_per_core - 1 ||
	    !lap_plausible(c, core, cc->claim_high_page)) {
		skip_page(cc);	/* the same claim: counted already */
		return VISIT_MORE;
	}
	/*
	 * Of the old numbering, what we saw and did not deliver is lost (it
	 * was a lap behind the claim), bounded by the clock; the rest of
	 * the jump is not known and not charged.
	 */
	known = cc->seen_end > cc->next_seq ? cc->seen_end - cc->next_seq : 0;
	lim = time_bound(c, cc);
	if (known > lim)
		known = lim;
	if (known > cc->claim_low_first - cc->next_seq)
		known = cc->claim_low_first - cc->next_seq;
	cc->next_seq = cc->claim_low_first - known;
	cc->invalid_pages = cc->claim_invalid_pages;
	cc->lapped = 1;
	c->gen_progress = 1;	/* this generation's numbering is taken */
	account_gap(c, core, cc->claim_low_first);
	cc->seen_ns = cc->claim_low_ns;	/* earlier than this drain */
	cc->last_page = cc->claim_low_page;
	next_page(cc, cc->claim_low_page);
	return VISIT_MORE;
}

static enum visit_result visit_page(struct hmb_consumer *c, uint16_t core,
				    uint32_t *delivered, uint32_t budget)
{
	const struct hmb_geometry *g = &c->geo;
	struct hmb_consumer_core *cc = &c->core[core];
	uint64_t off = page_offset(g, core, cc->next_page);
	const uint8_t *h = area_ptr(c, off, HDR_LEN);
	struct page_snap s;
	uint64_t pseq, first, base_ts;
	uint32_t c1, c2, bytes, nrec, n;

	if (!h)
		return VISIT_STOP; /* cannot happen with a validated geometry */
	if (read_header(h, &s))
		return wait_or_pass(c, core, h); /* being rewritten? */
	if (s.gen != g->producer_gen)
		return wait_or_pass(c, core, h); /* not opened here yet? */
	pseq = s.pseq;
	first = s.first;
	base_ts = s.base_ts;
	c1 = s.commit;
	if (pseq < cc->next_page) {
		uint64_t head;

		/* The slot still holds its previous lap: not written yet. */
		if (cc->next_page >= g->pages_per_core &&
		    pseq == cc->next_page - g->pages_per_core)
			return wait_or_pass(c, core, h);
		/*
		 * Impossible for a correct producer. If the producer's head is
		 * behind us, bogus page numbers pushed us ahead: go back to
		 * its oldest page (sequence checks prevent repeats). Otherwise
		 * this one page is corrupt: skip it.
		 */
		head = read_head(c, core);
		if (head < cc->next_page) {
			count_error(c, HMB_ERR_PAGE_BACKWARDS);
			cc->lapped = 1;	/* how far back is not known */
			next_page(cc, head >= g->pages_per_core ?
				      head - g->pages_per_core + 1 : 0);
			return VISIT_STOP;
		}
		skip_invalid_page(c, core, HMB_ERR_PAGE_BACKWARDS);
		return VISIT_MORE;
	}
	if (pseq > cc->next_page) {
		if ((pseq - cc->next_page) % g->pages_per_core) {
			skip_invalid_page(c, core, HMB_ERR_BAD_PAGE_HEADER);
			return VISIT_MORE;
		}
		if (!lap_plausible(c, core, pseq)) {
			skip_invalid_page(c, core, HMB_ERR_IMPLAUSIBLE);
			return VISIT_MORE;
		}
		/* Neither its number nor its first_seq may be beyond the clock. */
		if (!time_plausible(c, cc, pseq - cc->next_page) ||
		    (first >= cc->next_seq &&
		     !time_plausible(c, cc, first - cc->next_seq)))
			return too_far(c, core, &s);
		skip_overwritten(c, core, pseq);
		return VISIT_MORE;
	}

	bytes = HMB_TRACE_COMMIT_BYTES(c1);
	nrec = HMB_TRACE_COMMIT_RECORDS(c1);
	if (bytes > g->data_size || (bytes & (HMB_TRACE_RECORD_ALIGN - 1)) ||
	    (uint64_t)nrec * REC_HDR_LEN > bytes || (!nrec != !bytes) ||
	    first + nrec < first || cc->page_off > bytes ||
	    cc->page_recs > nrec) {
		skip_invalid_page(c, core, HMB_ERR_BAD_PAGE_HEADER);
		return VISIT_MORE;
	}
	if (cc->page_recs && first + cc->page_recs != cc->next_seq) {
		/* first_seq changed under a page we are half way through. */
		skip_invalid_page(c, core, HMB_ERR_BAD_PAGE_HEADER);
		return VISIT_MORE;
	}
	if (cc->page_recs == 0 && nrec) {
		if (first < cc->next_seq) {
			skip_invalid_page(c, core, HMB_ERR_SEQ_BACKWARDS);
			return VISIT_MORE;
		}
		if (!gap_plausible(g, cc, pseq, first)) {
			skip_invalid_page(c, core, HMB_ERR_BAD_PAGE_HEADER);
			return VISIT_MORE;
		}
		if (!time_plausible(c, cc, first - cc->next_seq))
			return too_far(c, core, &s);
	}

	n = bytes - cc->page_off;
	if (n) {
		if (hmb_area_read(c, off + HDR_LEN + cc->page_off, c->scratch, n))
			return VISIT_STOP;
		hmb_test_after_copy(c, core);
		/*
		 * If the copy saw any byte of a rewrite, commit now reads BUSY
		 * or a later page's header is visible (the producer's release
		 * after "commit = BUSY" pairs with this fence).
		 */
		hmb_rmb();
		c2 = hmb_load32(h + OFF_COMMIT);
		hmb_rmb();
		if (c2 == HMB_TRACE_COMMIT_BUSY ||
		    hmb_load64(h + OFF_PAGE_SEQ) != pseq ||
		    hmb_load64(h + OFF_FIRST_SEQ) != first ||
		    hmb_load64(h + OFF_BASE_TS) != base_ts ||
		    hmb_load32(h + OFF_GEN) != s.gen || meta_changed(c)) {
			/* Overwritten while we copied: those records are gone. */
			cc->pending_torn = sat_add(cc->pending_torn,
						   nrec - cc->page_recs);
			seen_to(cc, first + nrec);
			return VISIT_MORE;
		}
		seen_to(cc, first + nrec);
		if (cc->page_recs == 0) {
			account_gap(c, core, first);
			cc->last_page = pseq;
		}
		if (deliver_copy(c, core, n, nrec, first, base_ts, delivered,
				 budget) == VISIT_STOP)
			return VISIT_STOP;
		if (cc->next_page != pseq)
			return VISIT_MORE; /* page was skipped as invalid */
	}
	if ((c1 & HMB_TRACE_COMMIT_CLOSED) && cc->page_off == bytes) {
		next_page(cc, cc->next_page + 1);
		return VISIT_MORE;
	}
	if (cc->page_off == bytes)
		return wait_or_pass(c, core, h); /* open, all read: stalled? */
	return VISIT_STOP;
}

uint32_t hmb_consumer_drain_core(struct hmb_consumer *c, uint16_t core,
				 uint32_t budget)
{
	uint32_t delivered = 0;
	uint64_t visits;

	if (c->state != HMB_CONSUMER_ATTACHED || core >= c->geo.nr_cores ||
	    !budget)
		return 0;
	/* Earlier than any confirmation in this drain: see time_plausible(). */
	c->drain_ns = timed(c) ? c->now_ns(c->ctx) : 0;
	/*
	 * Every visit either delivers, moves to a later page or stops; the
	 * visit bound keeps a hostile area from holding us here.
	 */
	for (visits = 0; visits < (uint64_t)budget + 2 && delivered < budget;
	     visits++) {
		if (visit_page(c, core, &delivered, budget) == VISIT_STOP)
			break;
	}
	return delivered;
}

int hmb_consumer_read_ended(struct hmb_consumer *c, uint32_t gen)
{
	if (!c->attached_once)
		return -1;
	if ((c->state == HMB_CONSUMER_PRODUCER_INIT ||
	     c->state == HMB_CONSUMER_ATTACHED) &&
	    c->geo.producer_gen == gen) {
		/* Still in @gen: INIT of it is the restart under way. */
		c->state = HMB_CONSUMER_ATTACHED;
		c->ended = 1;
		return 0;
	}
	if (c->state == HMB_CONSUMER_ATTACHED && c->have_prev &&
	    c->prev_geo.producer_gen == gen) {
		/* The reset from @gen was taken: back to where we stood. */
		swap_positions(c);
		c->geo = c->prev_geo;
		c->have_prev = 0;
		c->ended = 1;
		return 0;
	}
	return -1;
}

enum hmb_dict_snapshot hmb_consumer_dict_len(const struct hmb_consumer *c,
					     uint32_t *len)
{
	const struct hmb_geometry *g = &c->geo;
	uint8_t hdr[sizeof(struct hmb_trace_dict_header)];
	uint32_t total;

	if (c->state != HMB_CONSUMER_ATTACHED || !meta_ready(c, 0))
		return HMB_DICT_RETRY;
	hmb_rmb(); /* pairs with the producer's release before state = READY */
	if (!g->dict_len)
		return HMB_DICT_NONE;
	if (g->dict_len < sizeof(hdr) ||
	    hmb_area_read(c, g->dict_offset, hdr, sizeof(hdr)))
		return HMB_DICT_INVALID;
	total = hmb_get32(hdr + offsetof(struct hmb_trace_dict_header,
					 total_len));
	if (hmb_get32(hdr + offsetof(struct hmb_trace_dict_header, magic)) !=
		    HMB_TRACE_DICT_MAGIC ||
	    total < sizeof(hdr) || total > g->dict_len ||
	    total > HMB_CONSUMER_DICT_MAX)
		return meta_ready(c, 1) ? HMB_DICT_INVALID : HMB_DICT_RETRY;
	*len = total;
	return HMB_DICT_OK;
}

enum hmb_dict_snapshot hmb_consumer_dict_copy(const struct hmb_consumer *c,
					      uint8_t *buf, uint32_t len)
{
	const struct hmb_geometry *g = &c->geo;

	if (c->state != HMB_CONSUMER_ATTACHED || !meta_ready(c, 0))
		return HMB_DICT_RETRY;
	hmb_rmb(); /* pairs with the producer's release before state = READY */
	if (len < sizeof(struct hmb_trace_dict_header) || len > g->dict_len ||
	    hmb_area_read(c, g->dict_offset, buf, len))
		return HMB_DICT_INVALID;
	hmb_rmb(); /* the copy before the re-check */
	if (!meta_ready(c, 1))
		return HMB_DICT_RETRY;
	/* Decoders parse the copied header: it must be the one we sized. */
	if (hmb_get32(buf + offsetof(struct hmb_trace_dict_header, magic)) !=
		    HMB_TRACE_DICT_MAGIC ||
	    hmb_get32(buf + offsetof(struct hmb_trace_dict_header,
				     total_len)) != len)
		return HMB_DICT_INVALID;
	return HMB_DICT_OK;
}
