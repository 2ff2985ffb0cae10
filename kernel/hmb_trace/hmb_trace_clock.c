// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware time on the host clock: sync samples over the control channel,
 * the policy (clock/hmb_clock_sync.c: which sample joins the window, when
 * the fit is stale), the fit (clock/hmb_clock_fit.c), and its publication
 * in-band.
 *
 * Every HMB_TRACE_SYNC_PERIOD_MS a burst of HMB_CLOCK_SYNC_BURST sync
 * requests, handed to hmb_clock_sync_step(). Each fit it makes is an
 * hmb_clock event (so every capture can be converted), is repeated with
 * each drain's metadata (so a capture has one before its first record),
 * and is in the status files. A firmware reset (new generation) restarts
 * the policy's window. A fit the policy marks stale (bursts no longer
 * answered) is re-published as such once a second: its bound still grows
 * with the distance from its window, and converters say it is stale.
 *
 * Samples are taken whether or not anyone traces: a capture that starts
 * needs a window already full. The cost is one burst per period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/workqueue.h>

#include "hmb_clock_sync.h"
#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

#define HMB_TRACE_SYNC_PERIOD_MS	100
#define HMB_TRACE_SYNC_TIMEOUT_US	5000

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

/* One burst: its answered samples into @s; how many. */
static unsigned int hmb_trace_clock_burst(struct hmb_trace_area *a,
					  struct hmb_clock_sample *s)
{
	static const u64 arg[4];
	unsigned int i, n = 0;

	for (i = 0; i < HMB_CLOCK_SYNC_BURST; i++) {
		u64 val[4];

		if (hmb_trace_ctrl_call(a, HMB_CTRL_OP_SYNC, arg, val, &s[n].t0,
					&s[n].t1, HMB_TRACE_SYNC_TIMEOUT_US) !=
		    HMB_CTRL_OK)
			continue;
		s[n++].tick = val[0];
	}
	return n;
}

static void hmb_trace_clock_work(struct work_struct *work)
{
	struct hmb_trace_clock *k = container_of(to_delayed_work(work),
						 struct hmb_trace_clock,
						 work);
	struct hmb_trace_area *a = container_of(k, struct hmb_trace_area,
						clock);
	struct hmb_clock_sample s[HMB_CLOCK_SYNC_BURST];
	struct hmb_clock_sync *y = &k->sync;
	unsigned int n, act;
	u64 clock_hz;
	u32 gen;

	if (!hmb_trace_clock_geometry(a, &gen, &clock_hz))
		goto again;
	n = hmb_trace_clock_burst(a, s);

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
		hmb_clock_sync_restart(y);
		k->have_gen = true;
		k->gen = gen;
	}
	act = hmb_clock_sync_step(y, s, n, hmb_clock_nominal_mult(clock_hz),
				  READ_ONCE(a->tun.clock_tolerance_ppm));
	if (act & HMB_CLOCK_SYNC_WENT_STALE)
		pr_warn_ratelimited("%s: clock sync: no answer for %u bursts: the last fit is stale\n",
				    a->name, y->failing);
	if (act & HMB_CLOCK_SYNC_CONTRADICTED)
		pr_warn_ratelimited("%s: clock sync: no clock within %u ppm runs through the samples (firmware SYNC answers that are not its clock at the request?): window restarted, %llu so far\n",
				    a->name,
				    READ_ONCE(a->tun.clock_tolerance_ppm),
				    y->contradicted);
	if (act & HMB_CLOCK_SYNC_NEW_FIT)
		trace_hmb_clock(a->index, k->gen, &y->fit, 0);
	if (act & HMB_CLOCK_SYNC_PUBLISH_STALE)
		trace_hmb_clock(a->index, k->gen, &y->fit, HMB_CLOCK_FL_STALE);
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
	if (k->sync.have_fit && k->gen == gen)
		trace_hmb_clock(a->index, k->gen, &k->sync.fit,
				k->sync.stale ? HMB_CLOCK_FL_STALE : 0);
	mutex_unlock(&k->lock);
}

/** hmb_trace_clock_init() - no samples, no fit. */
void hmb_trace_clock_init(struct hmb_trace_area *a)
{
	mutex_init(&a->clock.lock);
	INIT_DELAYED_WORK(&a->clock.work, hmb_trace_clock_work);
	hmb_clock_sync_init(&a->clock.sync);
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

/** hmb_trace_clock_resume() - after a stop: sample from the next start on. */
void hmb_trace_clock_resume(struct hmb_trace_area *a)
{
	WRITE_ONCE(a->clock.stopping, false);
}

/** hmb_trace_clock_destroy() - free what init set up. */
void hmb_trace_clock_destroy(struct hmb_trace_area *a)
{
	mutex_destroy(&a->clock.lock);
}
