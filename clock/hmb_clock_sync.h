/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_clock_sync.h - the clock-sync policy: which sync samples the fit
 * (hmb_clock_fit.h) gets, and when the last fit is stale.
 *
 * Portable C, compiled unchanged into hmb_trace.ko and user space (like
 * hmb_clock_fit.c): the module runs it after every burst of sync requests,
 * and clock_sync_test (mock/fwsim/) drives the same code against hmb-fwsim,
 * so the test checks the policy the module runs. The caller owns the
 * transport, the period and the locking.
 *
 * One step per burst of up to HMB_CLOCK_SYNC_BURST answered samples:
 *
 *   no answer      count it; after HMB_CLOCK_SYNC_STALE_BURSTS in a row the
 *                  last fit is stale (kept: its bound grows with the distance
 *                  from its window), re-published every
 *                  HMB_CLOCK_SYNC_STALE_EVERY failed bursts
 *   best sample    the one with the shortest round trip (the least doubt)
 *   slow-burst     it joins the window only if its round trip is at most
 *   floor          4x the shortest of the recent bursts + HMB_CLOCK_SYNC_SLACK_NS:
 *                  a burst whose every request was slow (host or vCPU
 *                  preempted) carries ms of doubt that the bound would inherit
 *   refusal        a sample the window refuses (device clock went back or
 *                  stood still) restarts the window with that sample
 *   contradiction  a window no clock within the tolerance runs through
 *                  (hmb_clock_fit.h: a clock that jumped, a tick read
 *                  late, an answer that is not the device's) is not
 *                  fitted and restarts with its newest sample
 *   fit            the window is fitted again; a plausible fit is the new one
 */
#ifndef HMB_CLOCK_SYNC_H
#define HMB_CLOCK_SYNC_H

#include "hmb_clock_fit.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HMB_CLOCK_SYNC_BURST		4	/* requests per burst */
#define HMB_CLOCK_SYNC_STALE_BURSTS	3	/* failed bursts: fit stale */
#define HMB_CLOCK_SYNC_STALE_EVERY	10	/* re-publish a stale fit */
/* The slow-burst floor: the shortest round trip of the last this many. */
#define HMB_CLOCK_SYNC_FLOOR_BURSTS	32
#define HMB_CLOCK_SYNC_SLACK_NS		20000

/*
 * The policy's state. Counters survive hmb_clock_sync_restart(); the rest
 * is the current generation's.
 */
struct hmb_clock_sync {
	struct hmb_clock_window win;	/* the samples fitted */
	struct hmb_clock_fit fit;	/* the last fit, valid if have_fit */
	bool have_fit;
	bool stale;			/* no answer since fit, for a while */
	uint32_t failing;		/* failed bursts in a row */
	uint32_t floor_bursts;		/* bursts in the current floor period */
	uint64_t rtt_floor;		/* shortest recent round trip (ns) */
	uint64_t rtt_period_best;	/* shortest of the current floor period */
	uint64_t bursts;		/* steps */
	uint64_t failed_bursts;		/* steps with no answer */
	uint64_t slow;			/* best sample too slow for the window */
	uint64_t refused;		/* samples that restarted the window */
	uint64_t fits;			/* new fits */
	uint64_t bad_fits;		/* full enough windows with no fit */
	uint64_t contradicted;		/* windows restarted: no clock fits */
};

/* What a step asks the caller to do (flags). */
#define HMB_CLOCK_SYNC_NEW_FIT		0x1	/* publish sync->fit */
#define HMB_CLOCK_SYNC_PUBLISH_STALE	0x2	/* re-publish it, stale */
#define HMB_CLOCK_SYNC_WENT_STALE	0x4	/* it just became stale */
#define HMB_CLOCK_SYNC_CONTRADICTED	0x8	/* the window just restarted */

/* Everything zero, no fit. */
void hmb_clock_sync_init(struct hmb_clock_sync *k);

/*
 * A new generation (firmware reset): a new window, floor and no fit; the
 * counters go on.
 */
void hmb_clock_sync_restart(struct hmb_clock_sync *k);

/*
 * One burst: @s, the @n (<= HMB_CLOCK_SYNC_BURST) answered samples of it
 * (host ns of the trace clock, device ticks), 0 if none was answered.
 * @nominal_mult, @tolerance_ppm: as hmb_clock_fit().
 * Return: HMB_CLOCK_SYNC_* flags.
 */
unsigned int hmb_clock_sync_step(struct hmb_clock_sync *k,
				 const struct hmb_clock_sample *s,
				 unsigned int n, uint64_t nominal_mult,
				 uint32_t tolerance_ppm);

#ifdef __cplusplus
}
#endif

#endif /* HMB_CLOCK_SYNC_H */
