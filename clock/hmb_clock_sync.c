// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * The clock-sync policy (see hmb_clock_sync.h). No floating point, no
 * allocation, no clock of its own: the module runs this under its lock.
 */
#include "hmb_clock_sync.h"

#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

void hmb_clock_sync_init(struct hmb_clock_sync *k)
{
	memset(k, 0, sizeof(*k));
	hmb_clock_window_reset(&k->win);
}

void hmb_clock_sync_restart(struct hmb_clock_sync *k)
{
	hmb_clock_window_reset(&k->win);
	k->rtt_floor = 0;
	k->rtt_period_best = 0;
	k->floor_bursts = 0;
	k->have_fit = false;
	k->stale = false;
}

/*
 * Is @rtt too slow to join the window? Tracks the shortest round trip of
 * the recent bursts; the floor decays: every HMB_CLOCK_SYNC_FLOOR_BURSTS
 * bursts it restarts from the best of the period just ended, so a link
 * that got slower for good is followed within that many bursts.
 */
static bool clk_sync_slow(struct hmb_clock_sync *k, uint64_t rtt)
{
	if (!k->rtt_floor || rtt < k->rtt_floor)
		k->rtt_floor = rtt;
	if (!k->rtt_period_best || rtt < k->rtt_period_best)
		k->rtt_period_best = rtt;
	if (++k->floor_bursts >= HMB_CLOCK_SYNC_FLOOR_BURSTS) {
		k->rtt_floor = k->rtt_period_best;
		k->rtt_period_best = 0;
		k->floor_bursts = 0;
	}
	return rtt > 4 * k->rtt_floor + HMB_CLOCK_SYNC_SLACK_NS;
}

/* No answer at all: the last fit ages, and is stale after a few. */
static unsigned int clk_sync_failed(struct hmb_clock_sync *k)
{
	unsigned int act = 0;

	k->failed_bursts++;
	if (++k->failing < HMB_CLOCK_SYNC_STALE_BURSTS || !k->have_fit)
		return 0;
	if (!k->stale)
		act |= HMB_CLOCK_SYNC_WENT_STALE;
	k->stale = true;
	if (k->failing % HMB_CLOCK_SYNC_STALE_EVERY ==
	    HMB_CLOCK_SYNC_STALE_BURSTS % HMB_CLOCK_SYNC_STALE_EVERY)
		act |= HMB_CLOCK_SYNC_PUBLISH_STALE;
	return act;
}

/* The window starts over from @s: the samples before it are of no use. */
static void clk_sync_start_over(struct hmb_clock_sync *k,
				const struct hmb_clock_sample *s)
{
	hmb_clock_window_reset(&k->win);
	hmb_clock_window_add(&k->win, s);
}

unsigned int hmb_clock_sync_step(struct hmb_clock_sync *k,
				 const struct hmb_clock_sample *s,
				 unsigned int n, uint64_t nominal_mult,
				 uint32_t tolerance_ppm)
{
	const struct hmb_clock_sample *best = NULL;
	struct hmb_clock_fit f;
	unsigned int i;
	int ret;

	k->bursts++;
	for (i = 0; i < n && i < HMB_CLOCK_SYNC_BURST; i++)
		if (!best || s[i].t1 - s[i].t0 < best->t1 - best->t0)
			best = &s[i];
	if (!best)
		return clk_sync_failed(k);
	k->failing = 0;
	if (clk_sync_slow(k, best->t1 - best->t0)) {
		k->slow++;
		return 0;
	}
	if (hmb_clock_window_add(&k->win, best)) {
		/* The device clock went back (or stood still): start over. */
		k->refused++;
		clk_sync_start_over(k, best);
	}
	ret = hmb_clock_fit(&k->win, nominal_mult, tolerance_ppm, &f);
	if (ret == HMB_CLOCK_FIT_CONTRADICTED) {
		/* Some sample is bad: start over from the newest. */
		k->contradicted++;
		clk_sync_start_over(k, best);
		return HMB_CLOCK_SYNC_CONTRADICTED;
	}
	if (ret) {
		if (k->win.n >= HMB_CLOCK_FIT_MIN)
			k->bad_fits++;
		return 0;
	}
	k->fit = f;
	k->have_fit = true;
	k->stale = false;
	k->fits++;
	return HMB_CLOCK_SYNC_NEW_FIT;
}
