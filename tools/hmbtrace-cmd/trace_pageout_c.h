/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_pageout_c.h - keeping a walk over a long trace.dat from keeping the
 * file resident. libtracecmd maps a file's pages in large pieces and keeps
 * a piece mapped while any page in it is in use, so a walk over a long
 * capture would keep most of the file resident. Pages a CPU has moved past
 * are not read again by the walk: they are given back to the page cache
 * (MADV_PAGEOUT only drops clean file pages and never changes what the
 * memory reads, so this is safe whatever libtracecmd does with the page
 * later; before Linux 5.4 it fails with EINVAL and nothing is saved).
 *
 * The same as capture_c.c's page_out_behind() (the walk of the hmb events),
 * for the other walks; capture_c.c can use it too.
 */
#ifndef HMBTRACE_TRACE_PAGEOUT_C_H_
#define HMBTRACE_TRACE_PAGEOUT_C_H_

#include <stdint.h>

#include <trace-cmd.h>

/* CPU indexes past this (as libtracecmd's multi-buffer walk counts them) are not paged out. */
#define TRACE_PAGEOUT_MAX_CPUS 1024

struct trace_pageout {
	struct tracecmd_input **handles;	/* not owned */
	int nr_handles;
	uintptr_t *last_page;			/* [handle][cpu]; NULL: out of memory, do nothing */
};

/* For a walk over handles[0..nr). */
void trace_pageout_init(struct trace_pageout *p, struct tracecmd_input **handles, int nr);
/* Call for each record the walk delivers, with the walk's cpu. */
void trace_pageout_behind(struct trace_pageout *p, struct tracecmd_input *handle,
			  const struct tep_record *record, int cpu);
void trace_pageout_free(struct trace_pageout *p);

#endif /* HMBTRACE_TRACE_PAGEOUT_C_H_ */
