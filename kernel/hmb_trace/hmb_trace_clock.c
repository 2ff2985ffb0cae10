// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware time on the host clock: sync samples over the control channel,
 * the fit (clock/hmb_clock_fit.c), and its publication in-band.
 *
 * Every HMB_TRACE_SYNC_PERIOD_MS a burst of HMB_TRACE_SYNC_BURST sync
 * requests; the sample with the shortest round trip joins the window, and
 * the window is fitted again. Each fit is an hmb_clock event (so every
 * capture can be converted), is repeated with each drain's metadata (so a
 * capture has one before its first record), and is in the status files.
 * A firmware reset (new generation) or a clock that went back starts a new
 * window. Bursts that get no answer are counted; after
 * HMB_TRACE_SYNC_STALE_BURSTS of them the last fit is marked stale and
 * re-published as such once a second: its bound still grows with the
 * distance from its window, and converters say it is stale.
 *
 * Samples are taken whether or not anyone traces: a capture that starts
 * needs a window already full. The cost is one burst per period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/workqueue.h>

#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

#define HMB_TRACE_SYNC_PERIOD_MS	100
#define HMB_TRACE_SYNC_BURST		4
#define HMB_TRACE_SYNC_TIMEOUT_US	5000
#define HMB_TRACE_SYNC_STALE_BURSTS	3
/* A stale fit is re-published this often (in periods). */
#define HMB_TRACE_SYNC_STALE_EVERY	10
/*
 * A burst's best sample joins the window only if its round trip is at most
 * 4x the shortest of the last HMB_TRACE_SYNC_FLOOR_BURSTS bursts plus
 * 20 us: a burst whose every request was slow (the host, or the guest's
 * vCPU, preempted) carries ms of doubt that the bound would inherit.
 */
#define HMB_TRACE_SYNC_FLOOR_BURSTS	32
#define HMB_TRACE_SYNC_SLACK_NS		(20 * NSEC_PER_USEC)

/* The generation and clock rate drains[0] is attached to; false if none. */
static bool hmb_trace_clock_geometry(struct hmb_trace_area *a, u32 *gen,
				     u64 *clock_hz)
{
	struct hmb_trace_drain *d = a->drains[0];
	bool attached;

	mutex_lock(&d->lock);
	attached = d->c.state == HMB_CONSUMER_ATTACHED;
	*gen = d->c.geo.producer_gen;
	*clock_hz = d->c.geo.clock_hz;
	mutex_unlock(&d->lock);
	return attached;
}

/* One burst: the answered sample with the shortest round trip. */
static bool hmb_trace_clock_burst(struct hmb_trace_area *a,
				  struct hmb_clock_sample *best)
{
	static const u64 arg[4];
	bool got = false;
	unsigned int i;

	for (i = 0; i < HMB_TRACE_SYNC_BURST; i++) {
		struct hmb_clock_sample s;
		u64 val[4];

		if (hmb_trace_ctrl_call(a, HMB_CTRL_OP_SYNC, arg, val, &s.t0,
					&s.t1, HMB_TRACE_SYNC_TIMEOUT_US) !=
		    HMB_CTRL_OK)
			continue;
		s.tick = val[0];
		if (!got || s.t1 - s.t0 < best->t1 - best->t0)
			*best = s;
		got = true;
	}
	return got;
}

/*
 * Is @rtt too slow to join the window? Tracks the shortest round trip of
 * the recent bursts (the floor decays: every HMB_TRACE_SYNC_FLOOR_BURSTS
 * bursts it restarts from the last period's best).
 */
static bool hmb_trace_clock_slow(struct hmb_trace_clock *k, u64 rtt)
{
	if (!k->rtt_floor || rtt < k->rtt_floor)
		k->rtt_floor = rtt;
	if (!k->rtt_period_best || rtt < k->rtt_period_best)
		k->rtt_period_best = rtt;
	if (++k->floor_bursts >= HMB_TRACE_SYNC_FLOOR_BURSTS) {
		k->rtt_floor = k->rtt_period_best;
		k->rtt_period_best = 0;
		k->floor_bursts = 0;
	}
	return rtt > 4 * k->rtt_floor + HMB_TRACE_SYNC_SLACK_NS;
}

static void hmb_trace_clock_work(struct work_struct *work)
{
	struct hmb_trace_clock *k = container_of(to_delayed_work(work),
						 struct hmb_trace_clock,
						 work);
	struct hmb_trace_area *a = container_of(k, struct hmb_trace_area,
						clock);
	struct hmb_clock_sample s;
	struct hmb_clock_fit f;
	u64 clock_hz;
	bool got;
	u32 gen;

	if (!hmb_trace_clock_geometry(a, &gen, &clock_hz))
		goto again;
	got = hmb_trace_clock_burst(a, &s);

	if (k->have_gen && k->gen != gen) {
		/* A firmware reset restores its defaults: what it acked is gone. */
		mutex_lock(&a->ctrl.lock);
		a->ctrl.tracing = -1;
		a->ctrl.ring_mode = -1;
		a->ctrl.have_mask = false;
		mutex_unlock(&a->ctrl.lock);
	}
	mutex_lock(&k->lock);
	if (!k->have_gen || k->gen != gen) {
		hmb_clock_window_reset(&k->win);
		k->rtt_floor = 0;
		k->rtt_period_best = 0;
		k->floor_bursts = 0;
		k->have_gen = true;
		k->have_fit = false;
		k->stale = false;
		k->gen = gen;
	}
	k->bursts++;
	if (!got) {
		k->failed_bursts++;
		if (++k->failing >= HMB_TRACE_SYNC_STALE_BURSTS && k->have_fit) {
			if (!k->stale)
				pr_warn_ratelimited("%s: clock sync: no answer for %u bursts: the last fit is stale\n",
						    a->name, k->failing);
			k->stale = true;
			if (k->failing % HMB_TRACE_SYNC_STALE_EVERY ==
			    HMB_TRACE_SYNC_STALE_BURSTS)
				trace_hmb_clock(a->index, k->gen, &k->fit,
						HMB_CLOCK_FL_STALE);
		}
		goto unlock;
	}
	k->failing = 0;
	if (hmb_trace_clock_slow(k, s.t1 - s.t0)) {
		k->slow++;
		goto unlock;
	}
	if (hmb_clock_window_add(&k->win, &s)) {
		/* The device clock went back (or stood still): start over. */
		k->refused++;
		hmb_clock_window_reset(&k->win);
		hmb_clock_window_add(&k->win, &s);
	}
	if (hmb_clock_fit(&k->win, hmb_clock_nominal_mult(clock_hz),
			  READ_ONCE(a->tun.clock_tolerance_ppm), &f)) {
		if (k->win.n >= 2)
			k->bad_fits++;
		goto unlock;
	}
	k->fit = f;
	k->have_fit = true;
	k->stale = false;
	k->fits++;
	trace_hmb_clock(a->index, k->gen, &k->fit, 0);
unlock:
	mutex_unlock(&k->lock);
again:
	if (!READ_ONCE(k->stopping))
		queue_delayed_work(system_wq, &k->work,
				   msecs_to_jiffies(HMB_TRACE_SYNC_PERIOD_MS));
}

/**
 * hmb_trace_clock_emit() - the current fit of @gen into this CPU's buffer
 * (with a drain's metadata), if there is one.
 * @a: the area
 * @gen: the generation the drain is in
 */
void hmb_trace_clock_emit(struct hmb_trace_area *a, u32 gen)
{
	struct hmb_trace_clock *k = &a->clock;

	mutex_lock(&k->lock);
	if (k->have_fit && k->gen == gen)
		trace_hmb_clock(a->index, k->gen, &k->fit,
				k->stale ? HMB_CLOCK_FL_STALE : 0);
	mutex_unlock(&k->lock);
}

/** hmb_trace_clock_init() - no samples, no fit. */
void hmb_trace_clock_init(struct hmb_trace_area *a)
{
	mutex_init(&a->clock.lock);
	INIT_DELAYED_WORK(&a->clock.work, hmb_trace_clock_work);
	hmb_clock_window_reset(&a->clock.win);
}

/** hmb_trace_clock_start() - sample from now on (the control channel is set). */
void hmb_trace_clock_start(struct hmb_trace_area *a)
{
	queue_delayed_work(system_wq, &a->clock.work, 0);
}

/** hmb_trace_clock_stop() - no sample after this returns. */
void hmb_trace_clock_stop(struct hmb_trace_area *a)
{
	WRITE_ONCE(a->clock.stopping, true);
	cancel_delayed_work_sync(&a->clock.work);
}

/** hmb_trace_clock_destroy() - free what init set up. */
void hmb_trace_clock_destroy(struct hmb_trace_area *a)
{
	mutex_destroy(&a->clock.lock);
}
