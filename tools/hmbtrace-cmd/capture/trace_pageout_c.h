/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_pageout_c.h - keeping a walk over a long trace.dat from keeping the
 * file resident, behind the one walk of every reader of a capture
 * (tracecmd_walk_c.c).
 *
 * libtracecmd maps a file's pages in large pieces and keeps a piece mapped
 * while any page in it is in use, so a walk over a long capture would keep
 * most of the file resident. Pages a CPU has moved past are not read again
 * by the walk, so they are given back, TRACE_PAGEOUT_BATCH pages at a time
 * (one madvise); trace_pageout_c.c says how (MADV_DONTNEED inside a
 * read-only private mapping of the file, MADV_PAGEOUT elsewhere).
 *
 * Use: trace_pageout_init() before the walk, trace_pageout_behind() for
 * each record it delivers, trace_pageout_flush() when it ends (the pages
 * still held), trace_pageout_free(). Out of memory at init only loses the
 * paging out (the walk reads the same either way).
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACE_PAGEOUT_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACE_PAGEOUT_C_H_

#include <stdint.h>
#include <sys/types.h>

/* Only pointers to them here: the header can be used from C++ (a test). */
struct tracecmd_input;
struct tep_record;

#ifdef __cplusplus
extern "C" {
#endif

/* CPU indexes past this (as libtracecmd's multi-buffer walk counts them) are not paged out. */
#define TRACE_PAGEOUT_MAX_CPUS 1024
/*
 * Pages passed are given back this many at a time: one madvise and one
 * read of /proc/self/maps each (at 64, those reads were 5 % of an export's
 * CPU); a walk holds at most 1 MiB more per CPU for it.
 */
#define TRACE_PAGEOUT_BATCH 256u

/* Pages a CPU has moved past and not yet given back: [lo, hi). */
struct trace_pageout_passed {
	uintptr_t last;	/* the page the CPU's last record was on */
	uintptr_t lo, hi;
};

struct trace_pageout {
	struct tracecmd_input **handles;	/* not owned */
	int nr_handles;
	/* [handle][cpu]; NULL: out of memory, do nothing */
	struct trace_pageout_passed *passed;
	dev_t dev;	/* the file's, to recognise its mappings */
	ino_t ino;
	char *maps;	/* /proc/self/maps read into it; NULL: MADV_PAGEOUT only */
};

/*
 * For a walk over handles[0..nr) of the file with this st_dev and st_ino
 * (from stat(); ino 0 when unknown: then every range is paged out, never
 * dropped with MADV_DONTNEED).
 */
void trace_pageout_init(struct trace_pageout *p, struct tracecmd_input **handles, int nr,
			dev_t dev, ino_t ino);
/* Call for each record the walk delivers, with the walk's cpu. */
void trace_pageout_behind(struct trace_pageout *p, struct tracecmd_input *handle,
			  const struct tep_record *record, int cpu);
/* At the end of a walk: gives back what is left of every CPU's pages passed. */
void trace_pageout_flush(struct trace_pageout *p);
void trace_pageout_free(struct trace_pageout *p);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACE_PAGEOUT_C_H_ */
