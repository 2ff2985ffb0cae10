// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * Firmware time on the host clock (see hmb_clock_fit.h).
 *
 * The slope comes from two samples far apart: the shortest round trip of
 * the window's older half and of its newer half (long round trips carry
 * the most doubt). The offset then puts the line half way between the
 * farthest midpoints above and below it (minimax), so the worst sample
 * decides err_ns. No floating point: the module runs this too.
 */
#include "hmb_clock_fit.h"

#ifdef __KERNEL__
#include <linux/limits.h>
#include <linux/math64.h>

#define INT64_MAX	S64_MAX
#define INT64_MIN	S64_MIN
#define UINT64_MAX	U64_MAX
#define UINT32_MAX	U32_MAX

/*
 * a * b / c and a * b >> 32, exact to the last bit, saturated. The x86
 * divide faults on a quotient wider than 64 bits, and the operands come
 * from device answers: check first.
 */
static uint64_t clk_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	if (!c || mul_u64_u64_shr(a, b, 64) >= c)
		return U64_MAX;
	return mul_u64_u64_div_u64(a, b, c);
}

static uint64_t clk_mulshr(uint64_t a, uint64_t b)
{
	return mul_u64_u64_shr(a, b, 32);
}
#else
#include <stdbool.h>

#if !defined(__SIZEOF_INT128__)
#error "hmb_clock_fit.c needs a 128-bit integer type"
#endif

static uint64_t clk_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	unsigned __int128 q;

	if (!c)
		return UINT64_MAX;
	q = (unsigned __int128)a * b / c;

	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static uint64_t clk_mulshr(uint64_t a, uint64_t b)
{
	unsigned __int128 q = ((unsigned __int128)a * b) >> 32;

	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}
#endif

#define CLK_ONE		(1ull << 32)
#define CLK_NS_PER_S	1000000000ull

static const struct hmb_clock_sample *clk_at(const struct hmb_clock_window *w,
					     uint32_t k)
{
	return &w->s[(w->first + k) % HMB_CLOCK_WINDOW];
}

static uint64_t clk_mid(const struct hmb_clock_sample *s)
{
	return s->t0 + (s->t1 - s->t0) / 2;
}

static uint64_t clk_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void hmb_clock_window_reset(struct hmb_clock_window *w)
{
	w->n = 0;
	w->first = 0;
}

int hmb_clock_window_add(struct hmb_clock_window *w,
			 const struct hmb_clock_sample *s)
{
	if (s->t1 < s->t0)
		return -1;
	if (w->n) {
		const struct hmb_clock_sample *last = clk_at(w, w->n - 1);

		if (s->tick <= last->tick || s->t0 <= last->t0)
			return -1;
	}
	if (w->n < HMB_CLOCK_WINDOW) {
		w->s[(w->first + w->n) % HMB_CLOCK_WINDOW] = *s;
		w->n++;
	} else {
		w->s[w->first] = *s;
		w->first = (w->first + 1) % HMB_CLOCK_WINDOW;
	}
	return 0;
}

uint64_t hmb_clock_nominal_mult(uint64_t clock_hz)
{
	return clock_hz ? clk_muldiv(CLK_NS_PER_S, CLK_ONE, clock_hz) : 0;
}

/* Host ns of @tick on the line through (tick_ref, host_ref); signed. */
static int64_t clk_line(uint64_t tick_ref, int64_t host_ref, uint64_t mult,
			uint64_t tick)
{
	uint64_t d;

	/* Saturated: a fit read from a capture is untrusted input. */
	if (tick >= tick_ref) {
		d = clk_mulshr(tick - tick_ref, mult);
		if (d > (uint64_t)(INT64_MAX - (host_ref > 0 ? host_ref : 0)))
			return INT64_MAX;
		return host_ref + (int64_t)d;
	}
	d = clk_mulshr(tick_ref - tick, mult);
	if (d > (uint64_t)INT64_MAX || host_ref < INT64_MIN + (int64_t)d)
		return INT64_MIN;
	return host_ref - (int64_t)d;
}

/* The sample with the shortest round trip among [from, to). */
static uint32_t clk_best(const struct hmb_clock_window *w, uint32_t from,
			 uint32_t to)
{
	uint32_t k, best = from;

	for (k = from + 1; k < to; k++)
		if (clk_at(w, k)->t1 - clk_at(w, k)->t0 <
		    clk_at(w, best)->t1 - clk_at(w, best)->t0)
			best = k;
	return best;
}

static uint64_t clk_absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/*
 * Whether sample @s, @r ns off the chord through @si and @sj, is farther
 * from it than one true clock allows: its own half round trip, the
 * chord's ends' (each weighed by how far the other end is: the doubt
 * grows outside the chord), and the rate's tolerance (@tol, mult units)
 * over twice its distance to the nearer end. Never for samples of one
 * clock within the tolerance; for a clock that jumped or a tick read
 * outside its request, when the others show it.
 */
static bool clk_contradicts(const struct hmb_clock_sample *si,
			    const struct hmb_clock_sample *sj,
			    const struct hmb_clock_sample *s, int64_t r,
			    uint64_t tol)
{
	uint64_t dtick = sj->tick - si->tick;
	uint64_t di = clk_absdiff(s->tick, si->tick);
	uint64_t dj = clk_absdiff(s->tick, sj->tick);
	uint64_t dn = di < dj ? di : dj;
	uint64_t off = r < 0 ? -(uint64_t)r : (uint64_t)r;
	uint64_t allow = (s->t1 - s->t0 + 1) / 2;

	allow = clk_sat_add(allow, clk_muldiv((si->t1 - si->t0 + 1) / 2, dj,
					      dtick));
	allow = clk_sat_add(allow, clk_muldiv((sj->t1 - sj->t0 + 1) / 2, di,
					      dtick));
	allow = clk_sat_add(allow, clk_mulshr(clk_sat_add(dn, dn), tol));
	/* Midpoints and the line are each rounded to 1 ns. */
	allow = clk_sat_add(allow, 4);
	return off > allow;
}

int hmb_clock_fit(const struct hmb_clock_window *w, uint64_t nominal_mult,
		  uint32_t tolerance_ppm, struct hmb_clock_fit *f)
{
	const struct hmb_clock_sample *si, *sj;
	int64_t rmin = INT64_MAX, rmax = INT64_MIN, c, mid_i;
	uint64_t dtick, dhost, mult, err = 0, rtt_min = UINT64_MAX, gap = 0;
	uint64_t tol;
	bool contradicted = false;
	uint32_t k;

	if (w->n < HMB_CLOCK_FIT_MIN || !nominal_mult)
		return -1;
	si = clk_at(w, clk_best(w, 0, w->n / 2));
	sj = clk_at(w, clk_best(w, w->n / 2, w->n));
	dtick = sj->tick - si->tick;
	if (clk_mid(sj) <= clk_mid(si))
		return -1;
	dhost = clk_mid(sj) - clk_mid(si);
	mult = clk_muldiv(dhost, CLK_ONE, dtick);
	/* 1% off nominal is not a drift, it is the wrong clock (or a bug). */
	if (mult > nominal_mult + nominal_mult / 100 ||
	    mult < nominal_mult - nominal_mult / 100)
		return -1;
	mid_i = (int64_t)clk_mid(si);
	tol = clk_muldiv(nominal_mult, tolerance_ppm, 1000000);
	for (k = 0; k < w->n; k++) {
		const struct hmb_clock_sample *s = clk_at(w, k);
		int64_t r = (int64_t)clk_mid(s) -
			    clk_line(si->tick, mid_i, mult, s->tick);

		if (clk_contradicts(si, sj, s, r, tol))
			contradicted = true;
		if (r < rmin)
			rmin = r;
		if (r > rmax)
			rmax = r;
		if (s->t1 - s->t0 < rtt_min)
			rtt_min = s->t1 - s->t0;
		if (k + 1 < w->n && clk_at(w, k + 1)->tick - s->tick > gap)
			gap = clk_at(w, k + 1)->tick - s->tick;
	}
	/*
	 * No clock within the tolerance runs through every sample: the
	 * chord (and the bound stated from its ends) may rest on a bad one.
	 */
	if (contradicted)
		return HMB_CLOCK_FIT_CONTRADICTED;
	c = rmin + (rmax - rmin) / 2;
	for (k = 0; k < w->n; k++) {
		const struct hmb_clock_sample *s = clk_at(w, k);
		int64_t r = (int64_t)clk_mid(s) -
			    clk_line(si->tick, mid_i, mult, s->tick) - c;
		uint64_t e = (uint64_t)(r < 0 ? -r : r) +
			     (s->t1 - s->t0 + 1) / 2;

		if (e > err)
			err = e;
	}
	f->tick_ref = si->tick;
	f->host_ref = (uint64_t)(mid_i + c);
	f->mult = mult;
	/*
	 * The chord's own doubt (its ends are known to half a round trip
	 * each) plus how far the rate may wander from it between samples.
	 */
	f->slope_err = clk_sat_add(clk_muldiv((si->t1 - si->t0 +
					       sj->t1 - sj->t0 + 1) / 2,
					      CLK_ONE, dtick), tol);
	f->tick_first = clk_at(w, 0)->tick;
	f->tick_last = clk_at(w, w->n - 1)->tick;
	f->half_gap = (gap + 1) / 2;
	f->err_ns = err > UINT32_MAX ? UINT32_MAX : (uint32_t)err;
	f->rtt_min_ns = rtt_min > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt_min;
	f->samples = w->n;
	return 0;
}

uint64_t hmb_clock_to_host(const struct hmb_clock_fit *f, uint64_t tick,
			   uint64_t *bound_ns)
{
	int64_t host = clk_line(f->tick_ref, (int64_t)f->host_ref, f->mult,
				tick);

	if (bound_ns) {
		uint64_t dist;

		if (tick < f->tick_first)
			dist = f->tick_first - tick;
		else if (tick > f->tick_last)
			dist = tick - f->tick_last;
		else
			dist = f->half_gap;
		*bound_ns = clk_sat_add(f->err_ns,
					clk_sat_add(clk_mulshr(dist,
							       f->slope_err),
						    1));
	}
	return host < 0 ? 0 : (uint64_t)host;
}
