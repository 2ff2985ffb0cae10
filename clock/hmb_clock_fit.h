/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_clock_fit.h - firmware time on the host clock: offset and slope
 * fitted from sync samples, with a stated error bound.
 *
 * Portable C, compiled unchanged into hmb_trace.ko and user space (like
 * consumer/): the module fits, decoders convert with the same arithmetic.
 *
 * A sync sample is (t0, tick, t1): the host read its clock (t0), asked the
 * device for its clock, got tick, read its clock again (t1); the device
 * latched tick at some host time in [t0, t1]. The fit is a line through
 * the window's samples:
 *
 *   host(tick) = host_ref + (tick - tick_ref) * mult / 2^32
 *
 * Its bound at a tick is honest under one assumption: between samples the
 * firmware clock's rate moves from its average over the window by at most
 * the stated tolerance (ppm). The slope uncertainty is that tolerance plus
 * what the two samples the slope comes from allow (half a round trip
 * each). A window that contradicts the assumption is not fitted: a sample
 * farther from the slope's line than its own round trip, the two ends'
 * and the tolerance allow (a firmware clock that jumped, a tick read late,
 * an answer that is not the device's) means the slope may rest on a bad
 * sample. Two samples cannot contradict each other; three or more can.
 *
 *   bound(tick) = err_ns + slope_err * distance to the nearest sample
 *
 * err_ns: the worst sample's |fit - midpoint| + round trip / 2 (the line
 * can be no closer to the truth at a sample than that); the distance is at
 * most half the largest gap inside the window, and grows outside it.
 */
#ifndef HMB_CLOCK_FIT_H
#define HMB_CLOCK_FIT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HMB_CLOCK_WINDOW	16	/* samples fitted */
#define HMB_CLOCK_FIT_MIN	3	/* fewest: two cannot contradict */

struct hmb_clock_sample {
	uint64_t t0;		/* host ns before the request */
	uint64_t t1;		/* host ns after the answer */
	uint64_t tick;		/* device clock latched in between */
};

/* The last HMB_CLOCK_WINDOW samples, oldest first from @first. */
struct hmb_clock_window {
	struct hmb_clock_sample s[HMB_CLOCK_WINDOW];
	uint32_t n;		/* valid samples */
	uint32_t first;		/* index of the oldest */
};

/** One fit: what hmb_clock events and status files carry. */
struct hmb_clock_fit {
	uint64_t tick_ref;	/* a sample's tick ... */
	uint64_t host_ref;	/* ... and the fitted host ns there */
	uint64_t mult;		/* host ns per tick, times 2^32 */
	uint64_t slope_err;	/* slope uncertainty, same unit as mult */
	uint64_t tick_first;	/* the window: oldest sample's tick */
	uint64_t tick_last;	/* newest sample's tick */
	uint64_t half_gap;	/* ticks: half the largest gap between samples */
	uint32_t err_ns;	/* bound at the samples */
	uint32_t rtt_min_ns;	/* shortest round trip in the window */
	uint32_t samples;	/* samples fitted */
};

void hmb_clock_window_reset(struct hmb_clock_window *w);

/*
 * Add a sample; a sample whose tick or host time does not move forward
 * from the newest one (a device clock that went back, a reset) is refused.
 * Return: 0, or -1 if refused.
 */
int hmb_clock_window_add(struct hmb_clock_window *w,
			 const struct hmb_clock_sample *s);

/*
 * Fit the window. @nominal_mult: host ns per tick times 2^32 from the
 * device's stated clock_hz; @tolerance_ppm: how far its rate may drift from
 * the fitted slope between samples (the floor of slope_err).
 * Return: 0; -1 with fewer than HMB_CLOCK_FIT_MIN samples or an absurd
 * slope (more than 1% from nominal: not this device's clock);
 * HMB_CLOCK_FIT_CONTRADICTED when no clock within the tolerance runs
 * through every sample (above).
 */
#define HMB_CLOCK_FIT_CONTRADICTED	(-2)

int hmb_clock_fit(const struct hmb_clock_window *w, uint64_t nominal_mult,
		  uint32_t tolerance_ppm, struct hmb_clock_fit *f);

/* host ns per tick times 2^32 for a clock of @clock_hz (0 if 0). */
uint64_t hmb_clock_nominal_mult(uint64_t clock_hz);

/*
 * Host ns of @tick, and (@bound_ns, optional) its error bound, saturated at
 * UINT64_MAX.
 */
uint64_t hmb_clock_to_host(const struct hmb_clock_fit *f, uint64_t tick,
			   uint64_t *bound_ns);

#ifdef __cplusplus
}
#endif

#endif /* HMB_CLOCK_FIT_H */
