// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drain contexts: who reads which firmware core, when, and on which CPU.
 *
 * Draining and CPUs
 * -----------------
 * Firmware core k is drained on host CPU (k mod nr_drains), so each CPU
 * buffer of the "hmb" instance carries whole firmware cores, in order:
 *
 *   area --+-- drains[0] on CPU a: cores 0, D, 2D, ...   --> cpu a buffer
 *          +-- drains[1] on CPU b: cores 1, D+1, ...     --> cpu b buffer
 *          +-- ...  (D = nr_drains = min(housekeeping CPUs, MAX_CORES))
 *
 * Only housekeeping CPUs drain: a CPU isolated with isolcpus= (domain) or
 * nohz_full= (timers, unbound work) gets neither a drain's timer nor its
 * work, and a hand-over on hotplug goes to another housekeeping CPU
 * (hmb_trace_cpu_housekeeping()). Every timer is armed and every pass
 * queued from the context's own CPU, or queued there directly
 * (queue_work_on()), never armed on the CPU of whoever kicked it.
 *
 * Each drain context owns a complete struct hmb_consumer over the whole
 * area, with its own scratch buffer, and only ever drains its own cores:
 * nothing is shared between contexts but the read-only meta page, which
 * each polls itself (and so notices attach/reset/broken in its own CPU
 * buffer, right where its records change generation).
 *
 * A CPU that goes offline hands its contexts to another online
 * housekeeping CPU (hmb_trace_cpu_offline()); they come back when it
 * returns. A context
 * keeps its consumer, so nothing is lost or delivered twice; its records
 * land in the stand-in CPU's buffer meanwhile.
 *
 * When
 * ----
 * Nothing is consumed while nobody traces: the firmware ring is a flight
 * recorder, and a tracer that enables hmb_record (in any instance, perf,
 * BPF: the tracepoint gets a probe) gets what it still holds (consume mode
 * "always" drains from the start).
 * While records flow, a pass runs every poll_interval_us (an hrtimer, not
 * a jiffy: HZ=250 would make it 4-8 ms). A pass drains at most budget
 * records per core and stops taking cores after HMB_TRACE_PASS_NS; one
 * that had more to do runs again at once, for at most
 * HMB_TRACE_CATCHUP_NS, then yields for
 * HMB_TRACE_YIELD_US; HMB_TRACE_ACTIVE_NS after the last record the pause
 * doubles up to idle_interval_us. While the gate is shut (below) records
 * stay in the firmware ring, and so does every later one of their core;
 * the pause backs off.
 *
 *   timer --queue_work_on(cpu)--> work: poll, drain each core, pace --+
 *     ^                                                              |
 *     +----------- hrtimer_start(pause) or queue_work_on(now) -------+
 *
 * Locks: a context's @lock is held by its work for a whole pass, by
 * status readers and by the CPU hotplug callbacks; the work item is
 * non-reentrant, so the lock never contends between CPUs. Lock order:
 * drain->lock, then area->dict_lock.
 *
 * The gate
 * --------
 * Events fire through their tracepoints, which cannot say whether a
 * buffer took them; trace-cmd enables the events while the instance's
 * tracing_on is 0 and turns it on later (off first, when it stops). So
 * before it writes, a context asks the "hmb" instance whether its buffer
 * takes writes (hmb_trace_instance_takes(): one ftrace print line when it
 * does, nothing when it does not), and believes the answer until:
 *
 *   - hmb_record loses its last probe, or gets a first one again
 *     (hmb_trace_record_generation() moved),
 *   - HMB_TRACE_GATE_RECHECK_MS passed,
 *   - the context had no record for HMB_TRACE_QUIET_MS.
 *
 * Shut, nothing is written and nothing consumed: the records, losses and
 * metadata wait for a later pass. A tracer that turns tracing_on off while
 * records flow and its events stay enabled loses up to
 * HMB_TRACE_GATE_RECHECK_MS of them: nothing exported tells sooner
 * (kernel/hmb_trace/README.md, "The gate"). The gate is the "hmb"
 * instance's: other instances, perf and BPF get what it lets through.
 * Consume mode "always" has no gate.
 *
 * Metadata: a context that carries records (and always drains[0]) emits
 * hmb_state then the whole dictionary as hmb_dict chunks on attach and on
 * reset (the dictionary changed), when tracing starts (a reader starts:
 * owed until the buffer takes it, and again before the next record, since
 * trace-cmd resets the buffers after enabling the events and a one-off
 * emission could be lost), before the first record after a quiet spell or
 * a refusal, and every
 * dict_interval_ms if set (0 by default: for a buffer read after it
 * wrapped).
 *
 * Clock: while the sync's run has no fit of the generation yet, a pass
 * delivers nothing (hmb_trace_clock_ready(), bounded in time, and until a
 * ring of the context is half full): the records wait in the firmware
 * ring, and a capture has its fit before its first record.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched/clock.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched/isolation.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "hmb_consumer_port.h"
#include "hmb_trace_compat.h"
#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

/* A pass stops taking more cores after this long (budget permitting). */
#define HMB_TRACE_PASS_NS	(500 * NSEC_PER_USEC)
/* Back-to-back passes of a catch-up run at most this long, ... */
#define HMB_TRACE_CATCHUP_NS	(2 * NSEC_PER_MSEC)
/* ... then yield the CPU this long. */
#define HMB_TRACE_YIELD_US	100
/* The pause stays poll_interval_us this long after the last record. */
#define HMB_TRACE_ACTIVE_NS	(20 * NSEC_PER_MSEC)
/* While nobody traces: how often to look at the meta page (status). */
#define HMB_TRACE_GATE_NS	(100 * NSEC_PER_MSEC)
/*
 * Looks by the timer alone (no pass) for at most this long in a row: a
 * producer whose next_seq hints lag still has its records found, and the
 * periodic work of a pass (metadata, the consume gate, backing off) is
 * done at least this often.
 */
#define HMB_TRACE_PEEK_NS	NSEC_PER_MSEC
/*
 * After a tracer enabled hmb_record: a pass at once, and if its flag is
 * not set yet (the reg callback runs first), another this much later.
 */
#define HMB_TRACE_KICK_NS	NSEC_PER_MSEC
/* A pass that waits for the clock's first fit looks again this soon. */
#define HMB_TRACE_CLOCK_WAIT_NS	(2 * NSEC_PER_MSEC)
/*
 * Records after this long without any on a drain are "the first after a
 * quiet spell": see hmb_trace_on_record().
 */
#define HMB_TRACE_QUIET_MS	250
/* An open gate is asked again after this long (see "The gate"). */
#define HMB_TRACE_GATE_RECHECK_MS	1000

static enum cpuhp_state hmb_trace_cpuhp_state;

/*
 * May @cpu run drains? Not if it is isolated from scheduler domains
 * (isolcpus=) or from timers and unbound work (nohz_full=).
 */
static bool hmb_trace_cpu_housekeeping(int cpu)
{
	return housekeeping_cpu(cpu, HK_TYPE_DOMAIN) &&
	       housekeeping_cpu(cpu, HK_TYPE_TIMER) &&
	       housekeeping_cpu(cpu, HK_TYPE_WQ);
}

/* An online housekeeping CPU other than @but, else any online one. */
static unsigned int hmb_trace_cpu_stand_in(unsigned int but)
{
	unsigned int cpu;

	for_each_online_cpu(cpu)
		if (cpu != but && hmb_trace_cpu_housekeeping(cpu))
			return cpu;
	return cpumask_any_but(cpu_online_mask, but);
}

/**
 * hmb_trace_area_consuming() - are @a's rings drained now?
 * @a: the area
 *
 * Return: true while a tracer has hmb_record enabled in the "hmb"
 * instance, or in consume mode "always"; false while the firmware's ring
 * is kept (flight recorder).
 */
bool hmb_trace_area_consuming(const struct hmb_trace_area *a)
{
	return READ_ONCE(a->tun.consume) == HMB_TRACE_CONSUME_ALWAYS ||
	       hmb_trace_record_wanted();
}

/* Does this context's CPU buffer carry the area's records and metadata? */
static bool hmb_trace_drain_emits(const struct hmb_trace_drain *d)
{
	return d->index == 0 || d->index < d->c.geo.nr_cores;
}

/*
 * May this context write into the trace now? See "The gate" at the top.
 * Return: true to write; false: what is left stays in the firmware ring.
 */
static bool hmb_trace_gate(struct hmb_trace_drain *d)
{
	unsigned int gen = hmb_trace_record_generation();

	lockdep_assert_held(&d->lock);
	if (READ_ONCE(d->area->tun.consume) == HMB_TRACE_CONSUME_ALWAYS)
		return true;
	if (!hmb_trace_record_wanted()) {
		/* The tracer went in the middle of a pass. */
		d->gate_open = false;
		return false;
	}
	if (d->gate_open && d->gate_gen == gen &&
	    time_before(jiffies, d->gate_until) &&
	    !(d->had_records &&
	      time_after(jiffies, d->last_record +
				  msecs_to_jiffies(HMB_TRACE_QUIET_MS))))
		return true;
	/* Asked in this pass already: the answer was no. */
	if (d->gate_shut)
		return false;
	d->gate_open = hmb_trace_instance_takes(d->area->name,
						raw_smp_processor_id());
	if (!d->gate_open) {
		d->gate_shut = true;
		return false;
	}
	d->stats.gate_probes++;
	d->gate_gen = gen;
	d->gate_until = jiffies + msecs_to_jiffies(HMB_TRACE_GATE_RECHECK_MS);
	/*
	 * What the buffer holds from now on starts with hmb_state and the
	 * dictionary (hmb_trace_metadata_if_due()); the quiet spell that
	 * reopened the gate is over.
	 */
	d->meta_due = true;
	d->last_record = jiffies;
	return true;
}

/*
 * hmb_state, then (attached/reset) the dictionary, in this CPU's buffer.
 * Return: true if written (the gate was open).
 */
static bool hmb_trace_emit_metadata(struct hmb_trace_drain *d,
				    enum hmb_trace_ev_state state)
{
	unsigned int ms = READ_ONCE(d->area->tun.dict_interval_ms);
	int ret;

	lockdep_assert_held(&d->lock);

	/*
	 * Behind the gate like hmb_record: while tracing_on is 0 (trace-cmd
	 * enables the events first, turns tracing on after) the metadata
	 * would be lost, and a short capture of an idle firmware would have
	 * none. Shut: it is owed, and the next pass tries again.
	 */
	if (!hmb_trace_gate(d)) {
		if (state != HMB_TRACE_EV_IMPLAUSIBLE)
			d->dict_due = true;
		return false;
	}
	trace_hmb_state(d->area->index, state, &d->c.geo, d->area->name);
	if (state == HMB_TRACE_EV_IMPLAUSIBLE)
		return true; /* an owed dictionary stays owed */
	if (state != HMB_TRACE_EV_ATTACHED && state != HMB_TRACE_EV_RESET) {
		d->dict_due = false;
		return true;
	}
	ret = hmb_trace_dict_emit(d);
	hmb_trace_clock_emit(d->area, d->c.geo.producer_gen);
	/* The next record needs no metadata of its own (the gate's ask). */
	d->meta_due = false;
	/* A transient failure is retried on the next poll. */
	d->dict_due = ret == -EAGAIN || ret == -ENOMEM;
	d->next_dict = jiffies + msecs_to_jiffies(ms);
	return true;
}

/* hmb_lost, if the gate lets it through; else it stays pending. */
static bool hmb_trace_lost_taken(struct hmb_trace_drain *d, u16 core,
				 const struct hmb_trace_pending_lost *p)
{
	if (!hmb_trace_gate(d))
		return false;
	trace_hmb_lost(d->area->index, core, p->count, p->reason, p->at_seq);
	return true;
}

/*
 * Write the losses of @core the gate has held back, oldest first.
 * Return: true if none is left.
 */
static bool hmb_trace_flush_lost(struct hmb_trace_drain *d, u16 core)
{
	struct hmb_trace_pending_lost *p = d->pending[core];
	unsigned int n = d->nr_pending[core], i;

	for (i = 0; i < n; i++)
		if (!hmb_trace_lost_taken(d, core, &p[i]))
			break;
	if (i) {
		memmove(p, p + i, (n - i) * sizeof(*p));
		d->nr_pending[core] = n - i;
	}
	return !d->nr_pending[core];
}

/*
 * A capture that started while this drain was quiet has none of its
 * metadata: trace-cmd clears the buffers when it starts, and the periodic
 * emission may be up to dict_interval_ms away. So the first record or loss
 * after a quiet spell (or after the gate opened) comes after
 * hmb_state and the dictionary, and a one-pass decoder (plugin_hmb.so in
 * trace-cmd report, KernelShark) decodes a burst from its first record.
 */
static void hmb_trace_metadata_if_due(struct hmb_trace_drain *d)
{
	if (!hmb_trace_drain_emits(d))
		return;
	if (d->meta_due || !d->had_records ||
	    time_after(jiffies, d->last_record +
				msecs_to_jiffies(HMB_TRACE_QUIET_MS)))
		hmb_trace_emit_metadata(d, HMB_TRACE_EV_ATTACHED);
	d->meta_due = false;
	d->had_records = true;
	d->last_record = jiffies;
}

static int hmb_trace_on_record(void *ctx, const struct hmb_record *rec)
{
	struct hmb_trace_drain *d = ctx;

	lockdep_assert_held(&d->lock);
	/* Losses held back come first: they happened before. */
	if (!hmb_trace_gate(d) || !hmb_trace_flush_lost(d, rec->core))
		goto refused;
	hmb_trace_metadata_if_due(d);
	trace_hmb_record(d->area->index, rec);
	return HMB_DELIVER_OK;

refused:
	d->meta_due = true;
	if (d->stats.refused != U64_MAX)
		d->stats.refused++;
	return HMB_DELIVER_REFUSED;
}

static void hmb_trace_on_lost(void *ctx, u16 core, u64 count,
			      enum hmb_lost_reason reason, u64 at_seq)
{
	struct hmb_trace_drain *d = ctx;
	struct hmb_trace_pending_lost *p;
	unsigned int n;

	lockdep_assert_held(&d->lock);
	if (WARN_ON_ONCE(core >= HMB_TRACE_MAX_CORES))
		return;
	n = d->nr_pending[core];
	if (!n) {
		struct hmb_trace_pending_lost now = {
			.count = count, .at_seq = at_seq, .reason = reason,
		};

		hmb_trace_metadata_if_due(d);
		if (hmb_trace_lost_taken(d, core, &now))
			return;
		d->meta_due = true;
	}
	/*
	 * Kept for the next record of @core. No record of @core is
	 * delivered before these are written, so two of the same reason
	 * next to each other are one contiguous gap.
	 */
	p = &d->pending[core][n ? n - 1 : 0];
	if (n && p->reason == reason) {
		p->count = count > U64_MAX - p->count ? U64_MAX :
			   p->count + count;
		p->at_seq = at_seq;
	} else if (n < HMB_TRACE_PENDING_LOST) {
		p = &d->pending[core][n];
		p->count = count;
		p->at_seq = at_seq;
		p->reason = reason;
		d->nr_pending[core] = n + 1;
	} else if (d->stats.unreported_lost != U64_MAX) {
		d->stats.unreported_lost++; /* still in lost/<reason> */
	}
}

static void hmb_trace_on_event(void *ctx, enum hmb_trace_ev_state ev,
			       u32 producer_gen)
{
	struct hmb_trace_drain *d = ctx;

	lockdep_assert_held(&d->lock);
	/*
	 * The firmware ends its generation on its own (an assert): it
	 * re-initialises the area (INIT while we read it), or has done so
	 * (a newer generation; one that follows a DISABLING is the host's
	 * reset, hmb_trace_dump_fw_restart() tells them apart). A dump of
	 * the ended generation, whether or not anyone traces.
	 */
	if (ev == HMB_TRACE_EV_PRODUCER_INIT && d->c.attached_once)
		hmb_trace_dump_fw_restart(d->area, d->c.geo.producer_gen);
	else if (ev == HMB_TRACE_EV_RESET && d->c.have_prev)
		hmb_trace_dump_fw_restart(d->area, d->c.prev_geo.producer_gen);
	/*
	 * One line per transition to broken, and only from the first CPU's
	 * context (every context polls the same meta page): an area that
	 * is garbage says so, where one that was never started stays quiet.
	 */
	if (ev == HMB_TRACE_EV_BROKEN && d->index == 0)
		pr_warn_ratelimited("%s: trace area broken (%s), generation %u: nothing is read\n",
				    d->area->name,
				    hmb_consumer_broken_reason_name(d->c.broken_reason),
				    d->c.broken_gen);
	if (!hmb_trace_drain_emits(d))
		return;
	/*
	 * Nobody traces: the reset's losses wait in pending[] and the event
	 * would go nowhere; it is written when tracing starts
	 * (hmb_trace_owed_reset()), so the trace still shows the old
	 * generation's tail before the reset and the new one after it.
	 */
	if (ev == HMB_TRACE_EV_RESET && !d->tracing) {
		d->reset_owed = true;
		return;
	}
	hmb_trace_emit_metadata(d, ev);
}

/*
 * Write a reset seen while nobody traced: first the losses of the old
 * generation still pending on this context's cores, then hmb_state(reset)
 * and the dictionary, as a live trace would have had them. Several resets
 * while nobody traced show as one, after all their losses.
 * Return: true when written; false if the gate is shut (next pass).
 */
static bool hmb_trace_owed_reset(struct hmb_trace_drain *d)
{
	unsigned int step = d->area->nr_drains;
	unsigned int core;

	lockdep_assert_held(&d->lock);
	for (core = d->index; core < HMB_TRACE_MAX_CORES; core += step)
		if (!hmb_trace_flush_lost(d, core))
			return false;
	if (!hmb_trace_emit_metadata(d, HMB_TRACE_EV_RESET))
		return false;
	d->reset_owed = false;
	d->meta_due = false;
	d->had_records = true;
	d->last_record = jiffies;
	return true;
}

static const struct hmb_consumer_ops hmb_trace_consumer_ops = {
	.deliver = hmb_trace_on_record,
	.lost = hmb_trace_on_lost,
	.event = hmb_trace_on_event,
};

/* Periodic re-emission, and retry of an owed dictionary. */
static void hmb_trace_periodic_metadata(struct hmb_trace_drain *d)
{
	unsigned int ms = READ_ONCE(d->area->tun.dict_interval_ms);

	lockdep_assert_held(&d->lock);

	if (!hmb_trace_drain_emits(d))
		return;
	if (d->dict_due || (ms && time_after_eq(jiffies, d->next_dict)))
		hmb_trace_emit_metadata(d, HMB_TRACE_EV_ATTACHED);
}

/*
 * Run the next pass @delay_ns after the previous one was due, or at once
 * (0). A steady period is counted from when the timer last fired, not from
 * the end of the pass: the pass itself and the wakeup of its worker would
 * otherwise stretch every period (a record waits half a period on
 * average). A pass that ran from a catch-up run, not the timer, counts
 * from now. Little slack: at the poll interval it is latency.
 */
static void hmb_trace_drain_arm(struct hmb_trace_drain *d, u64 delay_ns)
{
	ktime_t fired = READ_ONCE(d->fired);

	WRITE_ONCE(d->fired, 0);
	if (READ_ONCE(d->stopping))
		return;
	if (!delay_ns) {
		queue_work_on(READ_ONCE(d->cpu), hmb_trace_wq, &d->work);
		return;
	}
	if (fired)
		hrtimer_start_range_ns(&d->timer, ktime_add_ns(fired, delay_ns),
				       delay_ns >> 5, HRTIMER_MODE_ABS_SOFT);
	else
		hrtimer_start_range_ns(&d->timer, ns_to_ktime(delay_ns),
				       delay_ns >> 5, HRTIMER_MODE_REL_SOFT);
}

/*
 * The next look, an interval after this one was due (after now if late).
 * hrtimer_start(), not hrtimer_forward() and a restart: a pass that ends
 * meanwhile on another CPU arms the timer too, and hrtimer_forward() must
 * not move a queued timer (it warns); the base lock orders the two starts.
 */
static void hmb_trace_drain_look_again(struct hrtimer *t, u64 interval_ns)
{
	ktime_t next = ktime_add_ns(hrtimer_get_expires(t), interval_ns);
	ktime_t now = hrtimer_cb_get_time(t);

	if (ktime_before(next, now))
		next = ktime_add_ns(now, interval_ns);
	hrtimer_start_range_ns(t, next, interval_ns >> 5,
			       HRTIMER_MODE_ABS_SOFT);
}

/*
 * Softirq context. At the poll interval, a look at the area's words (a few
 * reads, no lock: the work is not running) decides whether a pass is
 * needed; an idle-but-traced device then costs a timer tick, not a worker
 * wakeup and a pass, so the poll interval can be short.
 */
static enum hrtimer_restart hmb_trace_drain_timer(struct hrtimer *t)
{
	struct hmb_trace_drain *d = container_of(t, struct hmb_trace_drain,
						 timer);
	u64 interval_ns;

	if (READ_ONCE(d->stopping))
		return HRTIMER_NORESTART;
	/* Pairs with smp_store_release() in hmb_trace_peek_prepare(). */
	if (smp_load_acquire(&d->peek_armed)) {
		interval_ns = (u64)READ_ONCE(d->interval_us) * NSEC_PER_USEC;
		if (d->peek_skipped_ns + interval_ns < HMB_TRACE_PEEK_NS &&
		    !hmb_consumer_peek_changed(&d->c, &d->peek)) {
			d->peek_skipped_ns += interval_ns;
			d->stats.peeks++;
			hmb_trace_drain_look_again(t, interval_ns);
			return HRTIMER_NORESTART;
		}
	}
	/* Read by the work this queues (queue_work_on() orders it). */
	WRITE_ONCE(d->fired, hrtimer_get_expires(t));
	queue_work_on(READ_ONCE(d->cpu), hmb_trace_wq, &d->work);
	return HRTIMER_NORESTART;
}

/*
 * Is a ring this context drains half full (by the producer's hint)? Then
 * the records wait no longer for the clock's first fit: a capture without
 * a fit for its first records is better than records overwritten or
 * dropped for it.
 */
static bool hmb_trace_ring_half_full(struct hmb_trace_drain *d)
{
	unsigned int step = d->area->nr_drains;
	u16 core;

	lockdep_assert_held(&d->lock);
	for (core = d->index; core < d->c.geo.nr_cores; core += step)
		if (2 * hmb_consumer_backlog_pages(&d->c, core) >=
		    d->c.geo.pages_per_core)
			return true;
	return false;
}

/* What one pass saw. */
struct hmb_trace_pass {
	bool consuming;		/* someone traces (or mode "always") */
	bool more;		/* a core filled its budget */
	bool refused;		/* the gate kept records in the ring */
	bool held;		/* waiting for the clock's first fit */
	u32 got;		/* records delivered */
};

/* The pause before the next pass, in ns; 0: at once. */
static u64 hmb_trace_pace(struct hmb_trace_drain *d,
			  const struct hmb_trace_pass *p, u64 now)
{
	unsigned int poll = READ_ONCE(d->area->tun.poll_interval_us);
	unsigned int idle = READ_ONCE(d->area->tun.idle_interval_us);

	idle = max(idle, poll);
	if (!p->consuming) {
		d->busy_since = 0;
		d->interval_us = poll;
		/* Kicked before the tracer's flag was set: look again soon. */
		if (d->kicked) {
			d->kicked = false;
			return HMB_TRACE_KICK_NS;
		}
		return max_t(u64, HMB_TRACE_GATE_NS,
			     (u64)idle * NSEC_PER_USEC);
	}
	d->kicked = false;
	if (p->held)
		return HMB_TRACE_CLOCK_WAIT_NS;
	if (p->more && !p->refused) {
		/* A backlog: no idle time, but bounded by time spent. */
		d->last_data = now;
		d->interval_us = poll;
		if (!d->busy_since)
			d->busy_since = now;
		if (now - d->busy_since < HMB_TRACE_CATCHUP_NS)
			return 0;
		d->busy_since = 0;
		d->stats.yields++;
		return HMB_TRACE_YIELD_US * NSEC_PER_USEC;
	}
	d->busy_since = 0;
	if (p->got)
		d->last_data = now;
	if (p->refused || now - d->last_data >= HMB_TRACE_ACTIVE_NS)
		d->interval_us = clamp(d->interval_us * 2, poll, idle);
	else
		d->interval_us = poll;
	return (u64)d->interval_us * NSEC_PER_USEC;
}

/*
 * After a pass: may the timer look instead of running the next one? Only
 * in the steady state at the poll interval, with nothing owed.
 */
static void hmb_trace_peek_prepare(struct hmb_trace_drain *d,
				   const struct hmb_trace_pass *p, u64 delay_ns)
{
	unsigned int step = d->area->nr_drains, k;
	u32 cores = 0;
	bool armed;

	lockdep_assert_held(&d->lock);

	armed = p->consuming && !p->more && !p->refused && !p->held &&
		!d->dict_due &&
		!d->meta_due && d->c.state == HMB_CONSUMER_ATTACHED &&
		d->index < d->c.geo.nr_cores &&
		delay_ns == (u64)READ_ONCE(d->area->tun.poll_interval_us) *
			    NSEC_PER_USEC;
	d->peek_skipped_ns = 0;
	if (armed) {
		for (k = d->index; k < d->c.geo.nr_cores; k += step)
			cores |= BIT(k);
		hmb_consumer_peek_take(&d->c, cores, &d->peek);
	}
	/* Pairs with smp_load_acquire() in hmb_trace_drain_timer(). */
	smp_store_release(&d->peek_armed, armed);
}

/*
 * Poll the meta page; drain each of our cores by at most "budget" records,
 * for at most HMB_TRACE_PASS_NS: a pass cut short starts the next one with
 * the core it did not reach, so every core gets its turn.
 */
static void hmb_trace_drain_pass(struct hmb_trace_drain *d,
				 struct hmb_trace_pass *p)
{
	struct hmb_trace_area *a = d->area;
	u32 budget = READ_ONCE(a->tun.budget);
	unsigned int step = a->nr_drains, i, n_mine;
	u64 start = local_clock();
	u16 core;

	lockdep_assert_held(&d->lock);

	p->consuming = hmb_trace_area_consuming(a);
	d->tracing = p->consuming;
	d->gate_shut = false;
	d->c.max_rate = READ_ONCE(a->tun.max_rate);
	/*
	 * Not consuming, the meta page is still polled (status, the broken
	 * log line, resets); its events go nowhere while nobody traces.
	 */
	if (hmb_consumer_poll(&d->c) != HMB_CONSUMER_ATTACHED)
		return;
	/* The firmware's freeze: one read of the meta page, on one context. */
	if (!d->index)
		hmb_trace_freeze_look(d);
	if (!p->consuming)
		return;
	if (!hmb_trace_clock_ready(a, d->c.geo.producer_gen) &&
	    !hmb_trace_ring_half_full(d)) {
		p->held = true;
		return;
	}
	if (d->reset_owed && !hmb_trace_owed_reset(d)) {
		p->refused = true;
		return;
	}
	if (d->index >= d->c.geo.nr_cores)
		goto metadata;
	/* Our cores: index, index + step, ...; n_mine of them. */
	n_mine = (d->c.geo.nr_cores - d->index + step - 1) / step;
	if (d->next_core >= n_mine)
		d->next_core = 0;
	for (i = 0; i < n_mine; i++) {
		u64 refused = d->stats.refused;
		u32 n = 0;

		core = d->index + ((d->next_core + i) % n_mine) * step;
		if (hmb_trace_flush_lost(d, core))
			n = hmb_consumer_drain_core(&d->c, core, budget);
		else
			d->stats.refused++;
		p->got += n;
		if (n >= budget)
			p->more = true;
		if (d->stats.refused != refused)
			p->refused = true;
		if (i + 1 < n_mine && local_clock() - start > HMB_TRACE_PASS_NS) {
			/* Out of time: the rest first next pass, at once. */
			d->next_core = (d->next_core + i + 1) % n_mine;
			p->more = true;
			break;
		}
	}
	cond_resched();
metadata:
	hmb_trace_periodic_metadata(d);
}

static void hmb_trace_drain_work(struct work_struct *work)
{
	struct hmb_trace_drain *d = container_of(work, struct hmb_trace_drain,
						 work);
	struct hmb_trace_pass p = {};
	int cpu = READ_ONCE(d->cpu);
	u64 start, end, delay;

	if (READ_ONCE(d->stopping))
		return;
	/*
	 * Queued before a CPU hotplug moved this context: run where its
	 * records belong (cpu is online: the callbacks move it first).
	 */
	if (cpu != raw_smp_processor_id() && cpu_online(cpu)) {
		queue_work_on(cpu, hmb_trace_wq, &d->work);
		return;
	}
	/*
	 * local_clock(), not ktime_get_ns(): only durations on this CPU are
	 * needed, and under QEMU's TCG the clocksource (HPET) costs
	 * microseconds a read.
	 */
	start = local_clock();
	mutex_lock(&d->lock);
	/*
	 * A timer started meanwhile (a kick) looks no more. One that looked
	 * just before may have read a snapshot being rewritten: a wrong
	 * answer costs one interval, the next pass or look is right.
	 */
	WRITE_ONCE(d->peek_armed, false);
	/*
	 * Tracing started (a reader starts): the metadata goes into this
	 * buffer as soon as it takes it (owed until then: trace-cmd turns
	 * tracing_on on after enabling the events), so a capture of an idle
	 * firmware still describes it, and again before the next record.
	 */
	if (READ_ONCE(d->kick_pending)) {
		WRITE_ONCE(d->kick_pending, false);
		d->kicked = true;
		if (hmb_trace_drain_emits(d)) {
			d->dict_due = true;
			d->meta_due = true;
		}
	}
	hmb_trace_drain_pass(d, &p);
	end = local_clock();
	if (p.consuming) {
		d->stats.passes++;
		d->stats.busy_ns += end - start;
		if (!p.got && !p.refused)
			d->stats.empty_passes++;
	}
	delay = hmb_trace_pace(d, &p, end);
	hmb_trace_peek_prepare(d, &p, delay);
	mutex_unlock(&d->lock);
	hmb_trace_drain_arm(d, delay);
}

/* The consumer's clock for its time bound on loss charges. */
static u64 hmb_trace_consumer_now(void *ctx)
{
	return local_clock();
}

static void hmb_trace_drain_free(struct hmb_trace_drain *d)
{
	if (!d)
		return;
	mutex_destroy(&d->lock);
	kvfree(d->scratch);
	kvfree(d);
}

static struct hmb_trace_drain *hmb_trace_drain_alloc(struct hmb_trace_area *a,
						     unsigned int index,
						     int cpu)
{
	struct hmb_trace_drain *d;

	d = kvzalloc_node(sizeof(*d), GFP_KERNEL, cpu_to_node(cpu));
	if (!d)
		return NULL;
	d->scratch = kvmalloc_node(HMB_CONSUMER_SCRATCH_LEN, GFP_KERNEL,
				   cpu_to_node(cpu));
	if (!d->scratch) {
		kvfree(d);
		return NULL;
	}
	d->area = a;
	d->index = index;
	d->home_cpu = cpu;
	d->cpu = cpu;
	d->interval_us = a->tun.poll_interval_us;
	mutex_init(&d->lock);
	INIT_WORK(&d->work, hmb_trace_drain_work);
	hmb_trace_hrtimer_setup(&d->timer, hmb_trace_drain_timer, CLOCK_MONOTONIC,
				HRTIMER_MODE_REL_SOFT);
	hmb_consumer_init(&d->c, &a->map, &hmb_trace_consumer_ops, d,
			  d->scratch);
	/*
	 * A loss the device claims larger than a ring plus max_rate records
	 * per second since the core was last confirmed is counted as
	 * implausible, not charged (consumer/README.md).
	 */
	d->c.now_ns = hmb_trace_consumer_now;
	d->c.max_rate = a->tun.max_rate;
	return d;
}

/**
 * hmb_trace_drains_create() - one context per online housekeeping CPU, at
 * most one per possible firmware core, and their hotplug hook.
 * @a: the area
 *
 * Return: 0 or a negative errno.
 */
int hmb_trace_drains_create(struct hmb_trace_area *a)
{
	unsigned int nr, i = 0;
	int cpu, ret = -ENOMEM;

	bool any_hk = false;

	cpus_read_lock();
	nr = 0;
	for_each_online_cpu(cpu)
		if (hmb_trace_cpu_housekeeping(cpu))
			nr++;
	/* Every online CPU isolated (not a setup the kernel allows): all. */
	any_hk = nr > 0;
	if (!any_hk)
		nr = num_online_cpus();
	nr = min(nr, HMB_TRACE_MAX_CORES);
	a->drains = kcalloc(nr, sizeof(*a->drains), GFP_KERNEL);
	if (!a->drains)
		goto err_unlock;
	for_each_online_cpu(cpu) {
		if (i == nr)
			break;
		if (any_hk && !hmb_trace_cpu_housekeeping(cpu))
			continue;
		a->drains[i] = hmb_trace_drain_alloc(a, i, cpu);
		if (!a->drains[i])
			goto err_free;
		i++;
	}
	cpus_read_unlock();
	a->nr_drains = i;
	/* Context j drains cores j, j + nr, j + 2 nr, ...: say so to its consumer. */
	for (i = 0; i < a->nr_drains; i++) {
		unsigned int core;

		a->drains[i]->c.core_mask = 0;
		for (core = i; core < HMB_TRACE_MAX_CORES; core += a->nr_drains)
			a->drains[i]->c.core_mask |= BIT(core);
	}
	ret = cpuhp_state_add_instance_nocalls(hmb_trace_cpuhp_state,
					       &a->cpuhp_node);
	if (ret)
		goto err_free_unlocked;
	/*
	 * A CPU that went offline before the hook was in place: its
	 * contexts move now (the hook takes them back when it returns).
	 */
	cpus_read_lock();
	for (i = 0; i < a->nr_drains; i++)
		if (!cpu_online(a->drains[i]->cpu))
			a->drains[i]->cpu =
				hmb_trace_cpu_stand_in(a->drains[i]->cpu);
	cpus_read_unlock();
	return 0;

err_free:
	cpus_read_unlock();
err_free_unlocked:
	for (i = 0; i < nr; i++)
		hmb_trace_drain_free(a->drains[i]);
	kfree(a->drains);
	a->drains = NULL;
	a->nr_drains = 0;
	return ret;

err_unlock:
	cpus_read_unlock();
	return ret;
}

/** hmb_trace_drains_start() - first pass of every context, at once. */
void hmb_trace_drains_start(struct hmb_trace_area *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++)
		hmb_trace_drain_arm(a->drains[i], 0);
}

/**
 * hmb_trace_drains_stop() - stop every context synchronously.
 * @a: the area
 *
 * The hotplug hook goes first (it re-arms). Then, with @stopping set,
 * neither the timer nor the work re-arms: a work that raced past the
 * check armed the timer at most, a timer that raced queued the work at
 * most, so work, timer, work.
 */
void hmb_trace_drains_stop(struct hmb_trace_area *a)
{
	cpuhp_state_remove_instance_nocalls(hmb_trace_cpuhp_state,
					    &a->cpuhp_node);
	hmb_trace_drains_pause(a);
}

/**
 * hmb_trace_drains_pause() - stop every context synchronously, keeping the
 * hotplug hook (it arms nothing while @stopping is set) and every position.
 * @a: the area
 */
void hmb_trace_drains_pause(struct hmb_trace_area *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++) {
		struct hmb_trace_drain *d = a->drains[i];

		WRITE_ONCE(d->stopping, true);
		cancel_work_sync(&d->work);
		hrtimer_cancel(&d->timer);
		cancel_work_sync(&d->work);
	}
}

/**
 * hmb_trace_drains_resume() - a paused area: every context from where it
 * stood, a pass at once.
 * @a: the area
 */
void hmb_trace_drains_resume(struct hmb_trace_area *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++)
		WRITE_ONCE(a->drains[i]->stopping, false);
	hmb_trace_drains_start(a);
}

/** hmb_trace_drains_destroy() - free the contexts of a stopped area. */
void hmb_trace_drains_destroy(struct hmb_trace_area *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++)
		hmb_trace_drain_free(a->drains[i]);
	kfree(a->drains);
}

/**
 * hmb_trace_drains_kick() - a tracer enabled hmb_record: a pass soon on
 * every context of @a, instead of at the next gate check, with the
 * metadata owed to the trace.
 * @a: the area
 *
 * The pass is queued on the context's own CPU: a timer armed here would
 * run on the kicker's CPU, which may be an isolated one.
 */
void hmb_trace_drains_kick(struct hmb_trace_area *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++) {
		struct hmb_trace_drain *d = a->drains[i];

		WRITE_ONCE(d->kick_pending, true);
		/*
		 * Not while the timer's callback runs: it queues a pass or
		 * looks again within the interval anyway.
		 */
		if (hrtimer_try_to_cancel(&d->timer) >= 0)
			hmb_trace_drain_arm(d, 0);
	}
}

/* Run @d on @cpu from now on, and have a pass there at once. */
static void hmb_trace_drain_move(struct hmb_trace_drain *d, int cpu)
{
	mutex_lock(&d->lock);	/* no pass writes to the old CPU's buffer */
	WRITE_ONCE(d->cpu, cpu);
	mutex_unlock(&d->lock);
	hmb_trace_drain_arm(d, 0);
}

static int hmb_trace_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct hmb_trace_area *a = hlist_entry(node, struct hmb_trace_area,
					       cpuhp_node);
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++)
		if (a->drains[i]->home_cpu == cpu &&
		    READ_ONCE(a->drains[i]->cpu) != cpu)
			hmb_trace_drain_move(a->drains[i], cpu);
	return 0;
}

static int hmb_trace_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct hmb_trace_area *a = hlist_entry(node, struct hmb_trace_area,
					       cpuhp_node);
	unsigned int i, to;

	to = hmb_trace_cpu_stand_in(cpu);
	if (to >= nr_cpu_ids)
		return 0;
	for (i = 0; i < a->nr_drains; i++)
		if (READ_ONCE(a->drains[i]->cpu) == cpu)
			hmb_trace_drain_move(a->drains[i], to);
	return 0;
}

/**
 * hmb_trace_cpuhp_init() - the CPU hotplug state of all areas.
 * Return: 0 or a negative errno.
 */
int hmb_trace_cpuhp_init(void)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "hmb_trace:online",
				      hmb_trace_cpu_online,
				      hmb_trace_cpu_offline);
	if (ret < 0)
		return ret;
	hmb_trace_cpuhp_state = ret;
	return 0;
}

/** hmb_trace_cpuhp_exit() - remove the CPU hotplug state. */
void hmb_trace_cpuhp_exit(void)
{
	cpuhp_remove_multi_state(hmb_trace_cpuhp_state);
}

static int hmb_trace_drains_show(struct seq_file *m, void *unused)
{
	struct hmb_trace_area *a = m->private;
	unsigned int i;

	seq_puts(m, "drain cpu home_cpu passes empty_passes peeks busy_ns refused yields unreported_lost interval_us gate_probes\n");
	for (i = 0; i < a->nr_drains; i++) {
		struct hmb_trace_drain *d = a->drains[i];

		mutex_lock(&d->lock);
		seq_printf(m, "%u %d %d %llu %llu %llu %llu %llu %llu %llu %u %llu\n",
			   i, d->cpu, d->home_cpu, d->stats.passes,
			   d->stats.empty_passes, READ_ONCE(d->stats.peeks),
			   d->stats.busy_ns,
			   d->stats.refused, d->stats.yields,
			   d->stats.unreported_lost, d->interval_us,
			   d->stats.gate_probes);
		mutex_unlock(&d->lock);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hmb_trace_drains);

/**
 * hmb_trace_drains_debugfs() - <debugfs>/hmb_trace/<area>/drains: one line
 * per context (what a pass costs, how often it found nothing).
 * @a: the area, with a->debugfs set (or an error pointer: ignored)
 */
void hmb_trace_drains_debugfs(struct hmb_trace_area *a)
{
	debugfs_create_file("drains", 0400, a->debugfs, a,
			    &hmb_trace_drains_fops);
}
