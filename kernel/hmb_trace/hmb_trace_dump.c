// SPDX-License-Identifier: GPL-2.0-only
/*
 * The crash dump: what the firmware's ring still held when its controller
 * was disabled, for devcoredump (include/hmb_trace_dump_abi.h).
 *
 * A controller reset (a command timeout, reset_controller, error recovery)
 * is when the records matter most and when they go: the firmware starts a
 * new generation and overwrites its ring. So when nvme-pci disables an
 * area (DISABLING, hmb_trace_nvme.c), whether or not anyone traces, the
 * records the trace had not delivered are copied out, with the meta page,
 * the core descriptors, the dictionary and the last clock fits, and
 * handed to devcoredump as a dump of the controller:
 *
 *   DISABLING (nvme-pci's reset path)        system_unbound_wq
 *   hmb_trace_dump_take():                   hmb_trace_dump_work():
 *     drains paused; copy into the buffer      dev_coredumpv(buffer)
 *     allocated in advance, no allocation,     (devcoredump owns and frees
 *     no wait ------------ queue_work ------->  it), then allocate the next
 *
 * The rule of the reset path (hmb_trace_nvme.c) holds: taking a dump
 * allocates nothing and waits for nothing that allocates; the buffer lock
 * is held by the work only to swap a pointer. At most one dump is under
 * way per area (a second DISABLING while the last is being handed over is
 * counted, not taken), and dumps are at least coredump_interval_s apart.
 * devcoredump itself keeps one pending dump per device until it is read
 * or its timeout (5 minutes) passes.
 *
 * The records are read by a copy of each drain's consumer: the copy
 * starts where the trace stood, validates and decodes records like a
 * drain (device memory is input), and the drain's own position does not
 * move, so a trace that resumes after the reset still charges the same
 * records as lost to "reset" (the dump is a second copy, not a delivery).
 * A first pass counts what each core has; the bound is shared so that a
 * core that has less than an equal part leaves the rest to the others, and
 * a core whose share is full keeps its newest records: the second pass
 * leaves out the oldest (hmb_dump_core.skipped).
 *
 * A firmware that restarts on its own (an assert) starts a new generation
 * with no DISABLING. A drain that notices it (hmb_trace_on_event(): the
 * meta page in INIT while it was reading, or a newer generation that no
 * DISABLING announced) asks for a dump of the generation that ended
 * (HMB_DUMP_REASON_FW_RESTART, hmb_trace_dump_fw_restart()): under its
 * lock it only marks the generation and queues a work item, which takes
 * the dump as above, the consumer copies reading the ended generation
 * (hmb_consumer_read_ended()). While the firmware re-initialises (INIT)
 * its pages are intact and every record validates; once the new
 * generation has invalidated them, little or nothing does. Such a dump
 * lists no commands in flight (the backend's list is for its own reset
 * path), and its META and CORES are the area as it is: the new
 * generation's core descriptors say where each core of the ended one got
 * (prev_gen, prev_next_seq).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/devcoredump.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "hmb_trace_dump_abi.h"
#include "hmb_trace_internal.h"

static unsigned int hmb_trace_coredump_kb = 2048;
module_param_named(coredump_kb, hmb_trace_coredump_kb, uint, 0444);
MODULE_PARM_DESC(coredump_kb,
		 "Size of each area's crash dump in KiB (0 or 64..65536), allocated at registration, taken when its controller disables it (reset, timeout, removal), for devcoredump; 0 = no dump (default 2048)");

static unsigned int hmb_trace_coredump_interval_s = 60;
module_param_named(coredump_interval_s, hmb_trace_coredump_interval_s, uint,
		   0444);
MODULE_PARM_DESC(coredump_interval_s,
		 "Least time between two crash dumps of an area, in s (0..86400, default 60)");

/* The smallest buffer worth taking: the fixed parts and some records. */
#define HMB_TRACE_DUMP_MIN_KB		64
#define HMB_TRACE_DUMP_MAX_KB		65536
#define HMB_TRACE_DUMP_MAX_INTERVAL_S	86400
/* In-flight commands kept at most, and at most an eighth of the buffer. */
#define HMB_TRACE_DUMP_MAX_INFLIGHT	4096
/* LOST entries kept per core; later runs are merged into the last one. */
#define HMB_TRACE_DUMP_LOST_PER_CORE	16

/**
 * struct hmb_trace_dump - an area's crash dump (hmb_trace_area.dump).
 * @lock: protects @buf, @len, @last and the counters; never held while
 *	allocating
 * @buf: the buffer taken dumps are written into; NULL while the work
 *	hands the last one over and allocates the next
 * @cap: bytes of @buf
 * @len: bytes of a dump in @buf not handed over yet; 0 if none
 * @last: jiffies of the last dump taken
 * @have_last: @last is valid
 * @work: hands @buf to devcoredump, allocates the next
 * @dev: the device the dumps are of (the controller)
 * @c: the consumer copy a dump reads with
 * @scratch: @c's copy buffer
 * @lost: the LOST entries of the dump being taken
 * @nr_lost: entries in @lost
 * @core_lost: entries in @lost per core (bounded)
 * @cur: the core the consumer copy reads
 * @count_only: first pass: count, store nothing
 * @counted_bytes: first pass: the dump bytes of @cur's records
 * @want: first pass: the dump bytes of each core's records
 * @shares: each core's bytes of RECORDS (hmb_trace_dump_shares())
 * @rest: second pass: the dump bytes of this record and the ones after it
 *	(as the first pass saw them); the oldest are left out while it is
 *	more than @share
 * @share: @cur's bytes of RECORDS
 * @out: second pass: where the next record goes
 * @out_end: second pass: the end of the core's share
 * @state: the core being dumped
 * @cmds: INFLIGHT's entries, in the buffer
 * @nr_cmds: entries in @cmds
 * @max_cmds: room in @cmds
 * @cmds_more: the backend had more commands than @max_cmds
 * @area: the area the dumps are of
 * @restart_work: takes the dump of a firmware's own restart
 * @gen: the ended generation the dump being taken reads; 0: the current
 * @noticed_gen: the last generation a firmware restart ended (drains write
 *	it under their own locks, xchg() decides which one queues the work)
 * @disabled_gen: the generation of the last DISABLING or removal: its end
 *	is the host's doing, not a firmware restart
 * @stats: counters for debugfs
 */
struct hmb_trace_dump {
	struct mutex lock;		/* protects buf, len, last, stats */
	u8 *buf;
	size_t cap;
	size_t len;
	unsigned long last;
	bool have_last;
	struct work_struct work;
	struct device *dev;
	struct hmb_consumer c;
	u8 *scratch;
	struct hmb_dump_lost lost[HMB_TRACE_MAX_CORES *
				  HMB_TRACE_DUMP_LOST_PER_CORE];
	unsigned int nr_lost;
	u8 core_lost[HMB_TRACE_MAX_CORES];
	u16 cur;
	bool count_only;
	u64 counted_bytes;
	u64 want[HMB_TRACE_MAX_CORES];
	u64 shares[HMB_TRACE_MAX_CORES];
	u64 rest;
	u64 share;
	u8 *out;
	u8 *out_end;
	struct hmb_dump_core *state;
	struct hmb_dump_cmd *cmds;
	u32 nr_cmds;
	u32 max_cmds;
	bool cmds_more;
	struct hmb_trace_area *area;
	struct work_struct restart_work;
	u32 gen;
	u32 noticed_gen;
	u32 disabled_gen;
	struct {
		u64 taken;		/* dumps written into the buffer */
		u64 handed;		/* given to devcoredump */
		u64 busy;		/* not taken: the last one still pending */
		u64 too_soon;		/* not taken: coredump_interval_s */
		u64 no_buffer;		/* not taken: allocating the next failed */
		u64 truncated;		/* taken with records left out */
		u64 last_copy_ns;	/* how long the last one took */
		u64 last_len;		/* its bytes */
		u64 fw_restarts;	/* firmware restarts noticed */
	} stats;
};

static size_t hmb_trace_dump_rec_size(u16 len)
{
	return sizeof(struct hmb_dump_record) + ALIGN(len, HMB_DUMP_ALIGN);
}

static int hmb_trace_dump_on_record(void *ctx, const struct hmb_record *rec)
{
	struct hmb_trace_dump *p = ctx;
	struct hmb_dump_record *r;
	size_t size = hmb_trace_dump_rec_size(rec->len);
	bool skip;

	if (rec->core != p->cur)
		return HMB_DELIVER_REFUSED;	/* not ours: never happens */
	if (p->count_only) {
		p->counted_bytes += size;
		return HMB_DELIVER_OK;
	}
	/*
	 * Bounded: the producer may have written records the first pass did
	 * not count, so @size can exceed what is left of @rest.
	 */
	skip = p->rest > p->share;
	p->rest -= min_t(u64, size, p->rest);
	if (skip) {
		/* The oldest go: what follows still fills the share. */
		p->state->skipped++;
		return HMB_DELIVER_OK;
	}
	/* The producer may still write: the share is a hard bound. */
	if (size > p->out_end - p->out)
		return HMB_DELIVER_REFUSED;
	r = (struct hmb_dump_record *)p->out;
	r->core = rec->core;
	r->event_id = rec->event_id;
	r->len = rec->len;
	r->reserved0 = 0;
	r->seq = rec->seq;
	r->ts = rec->ts;
	memcpy(r + 1, rec->payload, rec->len);
	memset((u8 *)(r + 1) + rec->len, 0,
	       ALIGN(rec->len, HMB_DUMP_ALIGN) - rec->len);
	p->out += size;
	p->state->records++;
	return HMB_DELIVER_OK;
}

static void hmb_trace_dump_on_lost(void *ctx, u16 core, u64 count,
				   enum hmb_lost_reason reason, u64 at_seq)
{
	struct hmb_trace_dump *p = ctx;
	struct hmb_dump_lost *l;

	if (p->count_only || core != p->cur || reason >= HMB_LOST_NR)
		return;
	p->state->lost[reason] += count;
	if (p->core_lost[core] < HMB_TRACE_DUMP_LOST_PER_CORE) {
		l = &p->lost[p->nr_lost++];
		p->core_lost[core]++;
		l->core = core;
		l->reason = reason;
		l->reserved0 = 0;
		l->reserved1 = 0;
		l->count = count;
	} else {
		/* Bounded: the counts stay whole in the core's state. */
		l = &p->lost[p->nr_lost - 1];
		l->count += count;
	}
	l->at_seq = at_seq;
}

static void hmb_trace_dump_on_event(void *ctx, enum hmb_trace_ev_state ev,
				    u32 producer_gen)
{
}

static const struct hmb_consumer_ops hmb_trace_dump_ops = {
	.deliver = hmb_trace_dump_on_record,
	.lost = hmb_trace_dump_on_lost,
	.event = hmb_trace_dump_on_event,
};

static u64 hmb_trace_dump_now(void *ctx)
{
	return local_clock();
}

/*
 * The consumer copy, from where drain @d stands: polled, so that it is
 * attached to the generation the area is in. Under @d's lock.
 */
static enum hmb_consumer_state
hmb_trace_dump_copy(struct hmb_trace_dump *p, const struct hmb_trace_drain *d)
{
	p->c = d->c;
	p->c.ops = hmb_trace_dump_ops;
	p->c.ctx = p;
	p->c.scratch = p->scratch;
	p->c.now_ns = hmb_trace_dump_now;
	p->c.core_mask = 1u << p->cur;
	if (hmb_consumer_poll(&p->c) == HMB_CONSUMER_BROKEN)
		return HMB_CONSUMER_BROKEN;
	if (p->gen && hmb_consumer_read_ended(&p->c, p->gen))
		return HMB_CONSUMER_DETACHED;	/* not a generation we read */
	return p->c.state;
}

/* A section header at @at, its data after it; returns the data. */
static u8 *hmb_trace_dump_section(u8 *at, u32 type, u32 count, u64 len)
{
	struct hmb_dump_section *s = (struct hmb_dump_section *)at;

	s->type = type;
	s->count = count;
	s->len = len;
	return at + sizeof(*s);
}

/* Room for a section of @len bytes between @at and @end? */
static bool hmb_trace_dump_fits(const u8 *at, const u8 *end, u64 len)
{
	return end - at >= sizeof(struct hmb_dump_section) &&
	       len <= end - at - sizeof(struct hmb_dump_section);
}

static u8 *hmb_trace_dump_end_section(u8 *data, u64 len, u32 *nr)
{
	u8 *next = data + ALIGN(len, HMB_DUMP_ALIGN);

	memset(data + len, 0, next - (data + len));
	(*nr)++;
	return next;
}

/* A ring's worth: a producer still writing cannot keep a pass going. */
static u32 hmb_trace_dump_budget(const struct hmb_trace_dump *p)
{
	return min_t(u64, hmb_consumer_capacity(&p->c.geo), U32_MAX);
}

/*
 * The dump bytes of @core's records not delivered yet, read from where
 * drain @d stands: a first pass that stores nothing.
 */
static u64 hmb_trace_dump_count(struct hmb_trace_dump *p,
				struct hmb_trace_drain *d, u16 core)
{
	p->cur = core;
	p->count_only = true;
	p->counted_bytes = 0;
	if (hmb_trace_dump_copy(p, d) != HMB_CONSUMER_ATTACHED)
		return 0;
	hmb_consumer_drain_core(&p->c, core, hmb_trace_dump_budget(p));
	return p->counted_bytes;
}

/*
 * @core's records from where drain @d stands into @out: the newest that
 * fit @share bytes, of the @want the first pass counted. Returns where
 * the next core's records go.
 */
static u8 *hmb_trace_dump_store(struct hmb_trace_dump *p,
				struct hmb_trace_drain *d, u16 core,
				struct hmb_dump_core *st, u8 *out, u64 share,
				u64 want)
{
	p->cur = core;
	p->state = st;
	memset(st, 0, sizeof(*st));
	st->core = core;
	st->delivered = d->c.core[core].delivered;
	p->count_only = false;
	p->rest = want;
	p->share = share;
	p->out = out;
	p->out_end = out + share;
	if (hmb_trace_dump_copy(p, d) != HMB_CONSUMER_ATTACHED)
		return out;
	st->start_seq = p->c.core[core].next_seq;
	st->end_seq = st->start_seq;
	hmb_consumer_drain_core(&p->c, core, hmb_trace_dump_budget(p));
	st->end_seq = p->c.core[core].next_seq;
	return p->out;
}

/*
 * Share @bound bytes between @nr cores that want @want[k]: a core that
 * wants less than an equal part gets what it wants, the rest is shared
 * again between the others (max-min fairness). Multiples of 8.
 */
static void hmb_trace_dump_shares(const u64 *want, u64 *share, u16 nr,
				  u64 bound)
{
	u32 done = 0;
	u16 left = nr, k;
	bool again = true;
	u64 fair;

	while (again && left) {
		again = false;
		fair = div_u64(bound, left) & ~(u64)(HMB_DUMP_ALIGN - 1);
		for (k = 0; k < nr; k++) {
			if (done & BIT(k) || want[k] > fair)
				continue;
			share[k] = want[k];
			bound -= want[k];
			done |= BIT(k);
			left--;
			again = true;
		}
	}
	for (k = 0; k < nr; k++)
		if (!(done & BIT(k)))
			share[k] = div_u64(bound, left) & ~(u64)(HMB_DUMP_ALIGN - 1);
}

/* struct hmb_trace_inflight's @add: one command into INFLIGHT. */
static bool hmb_trace_dump_add_cmd(void *dump, const struct hmb_dump_cmd *cmd)
{
	struct hmb_trace_dump *p = dump;

	if (p->nr_cmds >= p->max_cmds) {
		p->cmds_more = true;
		return false;
	}
	p->cmds[p->nr_cmds] = *cmd;
	memset(p->cmds[p->nr_cmds].reserved0, 0,
	       sizeof(p->cmds[p->nr_cmds].reserved0));
	p->nr_cmds++;
	return true;
}

/*
 * Write the dump into p->buf; returns its length, 0 if the area has no
 * generation to dump. Under p->lock; the drains are paused.
 */
static size_t hmb_trace_dump_fill(struct hmb_trace_dump *p,
				  struct hmb_trace_area *a, u32 reason,
				  const struct hmb_trace_inflight *inflight)
{
	struct hmb_dump_header *h = (struct hmb_dump_header *)p->buf;
	u8 *end = p->buf + p->cap, *at = p->buf + sizeof(*h), *data;
	struct hmb_trace_drain *d0 = a->drains[0];
	struct hmb_dump_core *states;
	struct hmb_trace_stamps now;
	/* A copy: the passes below overwrite p->c, geometry included. */
	struct hmb_geometry geo;
	const struct hmb_geometry *g = &geo;
	u64 t0 = local_clock(), len;
	u32 nr = 0, dlen, i;
	u16 core, nr_cores;

	BUILD_BUG_ON(HMB_TRACE_CLOCK_NR > HMB_DUMP_CLOCKS);
	BUILD_BUG_ON(HMB_TRACE_MAX_CORES > 32);	/* hmb_trace_dump_shares() */
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HMB_DUMP_MAGIC, HMB_DUMP_MAGIC_LEN);
	h->version = HMB_DUMP_VERSION;
	h->header_len = sizeof(*h);
	h->reason = reason;
	h->area_index = a->index;
	strscpy(h->name, a->name, sizeof(h->name));

	/*
	 * The geometry every drain validated; the first one's copy. Its poll
	 * may notice a reset the drain has not (a firmware restart while
	 * nobody traces) and report the ended generation's tail as lost:
	 * this copy stores nothing (no core's state is set up yet), each
	 * core's passes below copy the drain again and report it there.
	 */
	mutex_lock(&d0->lock);
	p->cur = 0;
	p->count_only = true;
	if (hmb_trace_dump_copy(p, d0) != HMB_CONSUMER_ATTACHED) {
		mutex_unlock(&d0->lock);
		return 0;	/* never READY, or broken: nothing to decode */
	}
	mutex_unlock(&d0->lock);
	geo = p->c.geo;
	nr_cores = g->nr_cores;
	h->producer_gen = g->producer_gen;
	h->nr_cores = nr_cores;
	h->clock_hz = g->clock_hz;
	memcpy(h->build_id, g->build_id, sizeof(h->build_id));

	/* META and CORES, as the device left them (validated geometry). */
	len = sizeof(struct hmb_trace_meta);
	data = hmb_trace_dump_section(at, HMB_DUMP_SEC_META, 0, len);
	if (hmb_area_read(&p->c, 0, data, len))
		memset(data, 0, len);
	at = hmb_trace_dump_end_section(data, len, &nr);
	len = (u64)nr_cores * sizeof(struct hmb_trace_core);
	data = hmb_trace_dump_section(at, HMB_DUMP_SEC_CORES, nr_cores, len);
	if (hmb_area_read(&p->c, g->core_offset, data, len))
		memset(data, 0, len);
	at = hmb_trace_dump_end_section(data, len, &nr);

	/*
	 * DICT: the private copy, if it is this generation's; else (nobody
	 * traced since the generation began) a snapshot of the area's,
	 * validated by the consumer core like the private copy.
	 */
	if (mutex_trylock(&a->dict_lock)) {
		if (a->dict && a->dict_gen == g->producer_gen &&
		    hmb_trace_dump_fits(at, end, a->dict_len + SZ_16K)) {
			data = hmb_trace_dump_section(at, HMB_DUMP_SEC_DICT, 0,
						      a->dict_len);
			memcpy(data, a->dict, a->dict_len);
			at = hmb_trace_dump_end_section(data, a->dict_len, &nr);
			h->flags |= HMB_DUMP_FL_DICT;
		}
		mutex_unlock(&a->dict_lock);
	}
	if (!(h->flags & HMB_DUMP_FL_DICT) &&
	    hmb_consumer_dict_len(&p->c, &dlen) == HMB_DICT_OK &&
	    hmb_trace_dump_fits(at, end, (u64)dlen + SZ_16K)) {
		data = hmb_trace_dump_section(at, HMB_DUMP_SEC_DICT, 0, dlen);
		if (hmb_consumer_dict_copy(&p->c, data, dlen) == HMB_DICT_OK) {
			at = hmb_trace_dump_end_section(data, dlen, &nr);
			h->flags |= HMB_DUMP_FL_DICT;
		}
	}

	/* CLOCK: the last fit per trace clock (the sync is stopped). */
	if (mutex_trylock(&a->clock.lock)) {
		struct hmb_dump_clock *k;
		u32 n = 0;

		data = hmb_trace_dump_section(at, HMB_DUMP_SEC_CLOCK, 0, 0);
		k = (struct hmb_dump_clock *)data;
		for (i = 0; i < HMB_TRACE_CLOCK_NR; i++) {
			const struct hmb_clock_sync *y = &a->clock.sync[i];

			if (!y->have_fit || !a->clock.have_gen)
				continue;
			memset(k, 0, sizeof(*k));
			k->clock_id = i;
			k->flags = y->stale ? HMB_CLOCK_FL_STALE : 0;
			k->gen = a->clock.gen;
			k->tick_ref = y->fit.tick_ref;
			k->host_ref = y->fit.host_ref;
			k->mult = y->fit.mult;
			k->slope_err = y->fit.slope_err;
			k->tick_first = y->fit.tick_first;
			k->tick_last = y->fit.tick_last;
			k->half_gap = y->fit.half_gap;
			k->err_ns = y->fit.err_ns;
			k->rtt_min_ns = y->fit.rtt_min_ns;
			k->samples = y->fit.samples;
			k++;
			n++;
		}
		mutex_unlock(&a->clock.lock);
		hmb_trace_dump_section(at, HMB_DUMP_SEC_CLOCK, n,
				       n * sizeof(*k));
		at = hmb_trace_dump_end_section(data, n * sizeof(*k), &nr);
	}

	/* INFLIGHT: the backend's commands in flight, if it can say. */
	if (inflight) {
		p->max_cmds = min_t(u64, HMB_TRACE_DUMP_MAX_INFLIGHT,
				    div_u64(p->cap / 8, sizeof(*p->cmds)));
		len = (u64)p->max_cmds * sizeof(*p->cmds);
		if (hmb_trace_dump_fits(at, end, len + SZ_16K)) {
			data = hmb_trace_dump_section(at, HMB_DUMP_SEC_INFLIGHT,
						      0, 0);
			p->cmds = (struct hmb_dump_cmd *)data;
			p->nr_cmds = 0;
			p->cmds_more = false;
			inflight->walk(inflight->ctx, hmb_trace_dump_add_cmd, p);
			len = (u64)p->nr_cmds * sizeof(*p->cmds);
			hmb_trace_dump_section(at, HMB_DUMP_SEC_INFLIGHT,
					       p->nr_cmds, len);
			at = hmb_trace_dump_end_section(data, len, &nr);
			h->flags |= HMB_DUMP_FL_INFLIGHT;
			if (p->cmds_more)
				h->flags |= HMB_DUMP_FL_INFLIGHT_PARTIAL;
		}
	}

	/*
	 * The dump's time on every trace clock: after the commands in flight
	 * were listed, so that each was submitted before it.
	 */
	hmb_trace_clock_stamp(&now, false);
	for (i = 0; i < HMB_TRACE_CLOCK_NR && i < ARRAY_SIZE(h->taken_ns); i++)
		h->taken_ns[i] = now.ns[i];
	h->taken_real_ns = ktime_get_real_ns();

	/* CORE_STATE now, filled in as the cores are read. */
	len = (u64)nr_cores * sizeof(*states);
	data = hmb_trace_dump_section(at, HMB_DUMP_SEC_CORE_STATE, nr_cores,
				      len);
	states = (struct hmb_dump_core *)data;
	at = hmb_trace_dump_end_section(data, len, &nr);

	/* RECORDS: what is left but the LOST entries, shared by the cores. */
	len = sizeof(struct hmb_dump_section) * 2 + (u64)nr_cores *
	      HMB_TRACE_DUMP_LOST_PER_CORE * sizeof(p->lost[0]);
	if (end - at < len + sizeof(struct hmb_dump_section))
		return 0;	/* cannot happen: HMB_TRACE_DUMP_MIN_KB */
	h->record_bound = end - at - len;
	for (core = 0; core < nr_cores; core++) {
		struct hmb_trace_drain *d = a->drains[core % a->nr_drains];

		mutex_lock(&d->lock);
		p->want[core] = hmb_trace_dump_count(p, d, core);
		mutex_unlock(&d->lock);
	}
	hmb_trace_dump_shares(p->want, p->shares, nr_cores, h->record_bound);
	data = hmb_trace_dump_section(at, HMB_DUMP_SEC_RECORDS, 0, 0);
	p->nr_lost = 0;
	memset(p->core_lost, 0, sizeof(p->core_lost));
	{
		u8 *out = data;
		u64 records = 0;

		for (core = 0; core < nr_cores; core++) {
			struct hmb_trace_drain *d =
				a->drains[core % a->nr_drains];

			mutex_lock(&d->lock);
			out = hmb_trace_dump_store(p, d, core, &states[core],
						   out, p->shares[core],
						   p->want[core]);
			mutex_unlock(&d->lock);
			records += states[core].records;
			if (states[core].skipped)
				h->flags |= HMB_DUMP_FL_TRUNCATED;
		}
		hmb_trace_dump_section(at, HMB_DUMP_SEC_RECORDS, records,
				       out - data);
		at = hmb_trace_dump_end_section(data, out - data, &nr);
	}

	len = p->nr_lost * sizeof(p->lost[0]);
	data = hmb_trace_dump_section(at, HMB_DUMP_SEC_LOST, p->nr_lost, len);
	memcpy(data, p->lost, len);
	at = hmb_trace_dump_end_section(data, len, &nr);

	h->nr_sections = nr;
	h->total_len = at - p->buf;
	h->copy_ns = local_clock() - t0;
	if (h->flags & HMB_DUMP_FL_TRUNCATED)
		p->stats.truncated++;
	p->stats.last_copy_ns = h->copy_ns;
	p->stats.last_len = h->total_len;
	return h->total_len;
}

/*
 * Take a dump of generation @gen (0: the one the area is in) into the
 * buffer and queue its hand-over. Allocates nothing. The area is
 * suspended (no drain runs), or its firmware froze it (its producer writes
 * nothing; every copy is taken under its drain's lock).
 */
static void hmb_trace_dump_take_gen(struct hmb_trace_area *a, u32 reason,
				    const struct hmb_trace_inflight *inflight,
				    u32 gen)
{
	struct hmb_trace_dump *p = a->dump;
	unsigned long gap = hmb_trace_coredump_interval_s * HZ;
	size_t len;

	mutex_lock(&p->lock);
	p->gen = gen;
	if (!p->buf || p->len) {
		if (p->buf)
			p->stats.busy++;
		else
			p->stats.no_buffer++;
		goto out;
	}
	if (p->have_last && time_before(jiffies, p->last + gap)) {
		p->stats.too_soon++;
		goto out;
	}
	len = hmb_trace_dump_fill(p, a, reason, inflight);
	p->gen = 0;
	if (!len)
		goto out;
	p->len = len;
	p->last = jiffies;
	p->have_last = true;
	p->stats.taken++;
	queue_work(system_unbound_wq, &p->work);
	pr_info("%s: crash dump of %zu bytes taken in %llu us (generation %u); for devcoredump\n",
		a->name, len, div_u64(p->stats.last_copy_ns, NSEC_PER_USEC),
		((struct hmb_dump_header *)p->buf)->producer_gen);
out:
	p->gen = 0;
	mutex_unlock(&p->lock);
}

/**
 * hmb_trace_dump_take() - take a crash dump of @a for devcoredump.
 * @a: a suspended area (no drain runs)
 * @reason: HMB_DUMP_REASON_DISABLING or HMB_DUMP_REASON_REMOVED
 * @inflight: the host's commands in flight, or NULL if the backend
 *	cannot say
 *
 * The generation the area is in ends by the host's doing: its end is no
 * firmware restart (hmb_trace_dump_fw_restart()).
 *
 * Context: nvme-pci's DISABLING, on its reset path: allocates nothing,
 * waits for nothing that allocates.
 */
void hmb_trace_dump_take(struct hmb_trace_area *a, u32 reason,
			 const struct hmb_trace_inflight *inflight)
{
	struct hmb_trace_drain *d0 = a->drains[0];
	struct hmb_trace_dump *p = a->dump;

	if (!p)
		return;
	mutex_lock(&d0->lock);
	WRITE_ONCE(p->disabled_gen, d0->c.geo.producer_gen);
	mutex_unlock(&d0->lock);
	hmb_trace_dump_take_gen(a, reason, inflight, 0);
}

/*
 * The dump of a firmware restart, in process context outside every drain's
 * lock; the generation it reads is the last one noticed (a later restart
 * noticed meanwhile is the one that is still there to read).
 */
static void hmb_trace_dump_restart_work(struct work_struct *work)
{
	struct hmb_trace_dump *p = container_of(work, struct hmb_trace_dump,
						restart_work);

	hmb_trace_dump_take_gen(p->area, HMB_DUMP_REASON_FW_RESTART, NULL,
				READ_ONCE(p->noticed_gen));
}

/**
 * hmb_trace_dump_fw_restart() - the firmware ended generation @gen on its
 * own (no DISABLING): ask for a dump of what @gen still holds.
 * @a: the area
 * @gen: the generation that ended
 *
 * Several drains notice the same restart; one queues the dump. The rate
 * limit and the one-pending rule of every dump apply when it is taken.
 *
 * Context: a drain's pass, under its lock: allocates nothing, waits for
 * nothing.
 */
void hmb_trace_dump_fw_restart(struct hmb_trace_area *a, u32 gen)
{
	struct hmb_trace_dump *p = READ_ONCE(a->dump);

	if (!p || !gen || gen == READ_ONCE(p->disabled_gen))
		return;
	if (xchg(&p->noticed_gen, gen) == gen)
		return;		/* another drain queued it */
	p->stats.fw_restarts++;	/* racy between drains: a debug figure */
	queue_work(system_unbound_wq, &p->restart_work);
}

/* Hand the dump to devcoredump, which frees it; allocate the next. */
static void hmb_trace_dump_work(struct work_struct *work)
{
	struct hmb_trace_dump *p = container_of(work, struct hmb_trace_dump,
						work);
	size_t len;
	u8 *buf;

	mutex_lock(&p->lock);
	buf = p->buf;
	len = p->len;
	if (len) {
		p->buf = NULL;
		p->len = 0;
	}
	mutex_unlock(&p->lock);
	if (!len)
		return;
	/* Not under the lock: devcoredump allocates, the reset path may wait. */
	dev_coredumpv(p->dev, buf, len, GFP_KERNEL);
	buf = vmalloc(p->cap);
	mutex_lock(&p->lock);
	p->stats.handed++;
	p->buf = buf;
	mutex_unlock(&p->lock);
}

static int hmb_trace_dump_show(struct seq_file *m, void *unused)
{
	struct hmb_trace_dump *p = m->private;

	mutex_lock(&p->lock);
	seq_printf(m, "bytes %zu\ntaken %llu\nhanded %llu\nbusy %llu\ntoo_soon %llu\nno_buffer %llu\ntruncated %llu\nlast_copy_ns %llu\nlast_len %llu\nfw_restarts %llu\n",
		   p->cap, p->stats.taken, p->stats.handed, p->stats.busy,
		   p->stats.too_soon, p->stats.no_buffer, p->stats.truncated,
		   p->stats.last_copy_ns, p->stats.last_len,
		   p->stats.fw_restarts);
	mutex_unlock(&p->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hmb_trace_dump);

/**
 * hmb_trace_dump_check_params() - the module parameters in range?
 *
 * Return: 0, or -EINVAL (the load fails, as for the tunables).
 */
int hmb_trace_dump_check_params(void)
{
	unsigned int kb = hmb_trace_coredump_kb;

	if ((kb && (kb < HMB_TRACE_DUMP_MIN_KB || kb > HMB_TRACE_DUMP_MAX_KB)) ||
	    hmb_trace_coredump_interval_s > HMB_TRACE_DUMP_MAX_INTERVAL_S)
		return -EINVAL;
	return 0;
}

/**
 * hmb_trace_dump_create() - the crash dump of @a, its buffer allocated now
 * (coredump_kb); none if that is 0. <debugfs>/hmb_trace/<area>/coredump
 * counts what it did.
 * @a: a new area, with its status device
 * @parent: the device that owns the area (the controller): the dumps are
 *	of it; NULL: of the area's status device
 *
 * An area without one (no memory) works as before: it says so once.
 *
 * Context: process context, may sleep (allocates).
 */
void hmb_trace_dump_create(struct hmb_trace_area *a, struct device *parent)
{
	size_t cap = (size_t)hmb_trace_coredump_kb * SZ_1K;
	struct hmb_trace_dump *p;

	if (!cap || !a->dev)
		return;
	p = kvzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		goto nomem;
	p->scratch = kvmalloc(HMB_CONSUMER_SCRATCH_LEN, GFP_KERNEL);
	p->buf = vmalloc(cap);
	if (!p->scratch || !p->buf) {
		vfree(p->buf);
		kvfree(p->scratch);
		kvfree(p);
		goto nomem;
	}
	p->cap = cap;
	p->dev = get_device(parent ?: a->dev);
	p->area = a;
	mutex_init(&p->lock);
	INIT_WORK(&p->work, hmb_trace_dump_work);
	INIT_WORK(&p->restart_work, hmb_trace_dump_restart_work);
	a->dump = p;
	debugfs_create_file("coredump", 0400, a->debugfs, p,
			    &hmb_trace_dump_fops);
	return;
nomem:
	pr_warn("%s: no crash dump (%zu KiB not available)\n", a->name,
		cap >> 10);
}

/**
 * hmb_trace_dump_destroy() - hand over a dump still in the buffer, free it.
 * @a: an area being unregistered (no DISABLING can come any more)
 */
void hmb_trace_dump_destroy(struct hmb_trace_area *a)
{
	struct hmb_trace_dump *p = a->dump;
	unsigned int i;

	if (!p)
		return;
	/*
	 * The drains still run: no notice after this (they read a->dump
	 * under their locks), and none under way.
	 */
	WRITE_ONCE(a->dump, NULL);
	for (i = 0; i < a->nr_drains; i++) {
		mutex_lock(&a->drains[i]->lock);
		mutex_unlock(&a->drains[i]->lock);
	}
	/* A restart's dump, then its hand-over. */
	cancel_work_sync(&p->restart_work);
	flush_work(&p->work);
	put_device(p->dev);
	vfree(p->buf);
	kvfree(p->scratch);
	mutex_destroy(&p->lock);
	kvfree(p);
	a->dump = NULL;
}

/*
 * The firmware's freeze (ABI 1.1, hmb-trace-abi.rst "The freeze"): the
 * firmware stops overwriting on a trigger of its own (a latency outlier,
 * an assert) and says so in meta.freeze. drains[0] reads that word at
 * every pass, traced or not (one 32-bit read); on FROZEN with a count it
 * has not handled it queues a work that takes the same crash dump as a
 * reset, reason FW_FREEZE. The rings stay frozen until the host re-arms
 * (ctrl/freeze), so nothing is lost by taking the dump from a work.
 *
 *   drain pass (drains[0], its lock)       system_unbound_wq
 *   hmb_trace_freeze_look():               hmb_trace_freeze_work():
 *     freeze word changed, FROZEN,           hmb_trace_dump_take(FW_FREEZE)
 *     new count --------- queue_work ------>   (allocates nothing)
 */
static const char *const hmb_trace_freeze_states[] = {
	[HMB_TRACE_FREEZE_RUNNING] = "running",
	[HMB_TRACE_FREEZE_TRIGGERED] = "triggered",
	[HMB_TRACE_FREEZE_FROZEN] = "frozen",
};

static const char *const hmb_trace_freeze_reasons[HMB_TRACE_FREEZE_REASON_NR] = {
	[HMB_TRACE_FREEZE_NONE] = "none",
	[HMB_TRACE_FREEZE_HOST] = "host",
	[HMB_TRACE_FREEZE_LATENCY] = "latency",
	[HMB_TRACE_FREEZE_ASSERT] = "assert",
	[HMB_TRACE_FREEZE_ERROR] = "error",
	[HMB_TRACE_FREEZE_RING_FULL] = "ring_full",
};

/**
 * hmb_trace_freeze_state_name() - the state of a freeze word.
 * @word: as read from the device: bounded here
 * Return: "running", "triggered", "frozen" or "unknown".
 */
const char *hmb_trace_freeze_state_name(u32 word)
{
	u32 s = HMB_TRACE_FREEZE_STATE(word);

	return s < ARRAY_SIZE(hmb_trace_freeze_states) ?
	       hmb_trace_freeze_states[s] : "unknown";
}

/**
 * hmb_trace_freeze_reason_name() - the reason of a freeze word.
 * @word: as read from the device: bounded here
 * Return: the reason's name, or "unknown".
 */
const char *hmb_trace_freeze_reason_name(u32 word)
{
	u32 r = HMB_TRACE_FREEZE_REASON(word);

	return r < HMB_TRACE_FREEZE_REASON_NR ? hmb_trace_freeze_reasons[r] :
						"unknown";
}

static void hmb_trace_freeze_work(struct work_struct *work)
{
	struct hmb_trace_area *a = container_of(work, struct hmb_trace_area,
						freeze.work);

	/* The generation goes on: no DISABLING, no firmware restart. */
	if (a->dump)
		hmb_trace_dump_take_gen(a, HMB_DUMP_REASON_FW_FREEZE, NULL, 0);
}

static int hmb_trace_freeze_show(struct seq_file *m, void *unused)
{
	struct hmb_trace_area *a = m->private;
	u32 w = READ_ONCE(a->freeze.word);

	seq_printf(m, "state %s\nreason %s\ncount %u\nfreezes %llu\nunknown %llu\n",
		   hmb_trace_freeze_state_name(w),
		   hmb_trace_freeze_reason_name(w), HMB_TRACE_FREEZE_COUNT(w),
		   READ_ONCE(a->freeze.freezes), READ_ONCE(a->freeze.unknown));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hmb_trace_freeze);

/**
 * hmb_trace_freeze_init() - the freeze state of a new area, and its
 * debugfs file <debugfs>/hmb_trace/<area>/freeze.
 * @a: a new area, with its debugfs directory
 */
void hmb_trace_freeze_init(struct hmb_trace_area *a)
{
	mutex_init(&a->freeze.lock);
	INIT_WORK(&a->freeze.work, hmb_trace_freeze_work);
	debugfs_create_file("freeze", 0400, a->debugfs, a,
			    &hmb_trace_freeze_fops);
}

/**
 * hmb_trace_freeze_look() - has the firmware frozen its ring? One read of
 * the meta page's freeze word; a dump is asked for once per freeze.
 * @d: drains[0], locked, its consumer attached
 */
void hmb_trace_freeze_look(struct hmb_trace_drain *d)
{
	struct hmb_trace_freeze *f = &d->area->freeze;
	u32 w = hmb_consumer_freeze_word(&d->c);
	u32 gen = d->c.geo.producer_gen;
	u32 count = HMB_TRACE_FREEZE_COUNT(w);

	lockdep_assert_held(&d->lock);
	if (w == f->word && gen == f->word_gen)
		return;
	WRITE_ONCE(f->word, w);
	f->word_gen = gen;
	/* Device memory: a state or reason we do not know is not acted on. */
	if (HMB_TRACE_FREEZE_STATE(w) >= ARRAY_SIZE(hmb_trace_freeze_states) ||
	    HMB_TRACE_FREEZE_REASON(w) >= HMB_TRACE_FREEZE_REASON_NR) {
		WRITE_ONCE(f->unknown, f->unknown + 1);
		return;
	}
	if (HMB_TRACE_FREEZE_STATE(w) != HMB_TRACE_FREEZE_FROZEN ||
	    (f->have_handled && f->handled_gen == gen && f->handled == count))
		return;
	/*
	 * The window's positions and details before the dump reads them:
	 * paired with the release before the word in the producer's
	 * freeze_now() (producer/hmb_trace_producer.c).
	 */
	dma_rmb();
	f->have_handled = true;
	f->handled = count;
	f->handled_gen = gen;
	WRITE_ONCE(f->freezes, f->freezes + 1);
	pr_info("%s: the firmware froze its ring (reason %s, freeze %u of generation %u)\n",
		d->area->name, hmb_trace_freeze_reason_name(w), count, gen);
	mutex_lock(&f->lock);
	if (!f->going)
		queue_work(system_unbound_wq, &f->work);
	mutex_unlock(&f->lock);
}

/**
 * hmb_trace_freeze_going() - no freeze's dump from now on; waits for one
 * under way.
 * @a: an area being unregistered
 */
void hmb_trace_freeze_going(struct hmb_trace_area *a)
{
	mutex_lock(&a->freeze.lock);
	a->freeze.going = true;
	mutex_unlock(&a->freeze.lock);
	cancel_work_sync(&a->freeze.work);
}
