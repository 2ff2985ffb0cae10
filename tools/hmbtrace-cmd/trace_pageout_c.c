// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace_pageout_c.c - giving a walk's past trace pages back, behind
 * trace_pageout_c.h.
 */
#define _GNU_SOURCE
#include "trace_pageout_c.h"

#include <stdlib.h>
#include <sys/mman.h>

#define TRACE_PAGE 4096u

void trace_pageout_init(struct trace_pageout *p, struct tracecmd_input **handles, int nr)
{
	p->handles = handles;
	p->nr_handles = nr;
	p->last_page = nr > 0 ? calloc((size_t)nr * TRACE_PAGEOUT_MAX_CPUS,
				       sizeof(*p->last_page)) : NULL;
}

void trace_pageout_behind(struct trace_pageout *p, struct tracecmd_input *handle,
			  const struct tep_record *record, int cpu)
{
	uintptr_t page = (uintptr_t)record->data & ~(uintptr_t)(TRACE_PAGE - 1);
	uintptr_t *last;
	int h;

	if (!p->last_page || cpu < 0 || cpu >= TRACE_PAGEOUT_MAX_CPUS)
		return;
	for (h = 0; h < p->nr_handles && p->handles[h] != handle; h++)
		;
	if (h == p->nr_handles)
		return;
	last = &p->last_page[(size_t)h * TRACE_PAGEOUT_MAX_CPUS + (size_t)cpu];
	if (*last && *last != page)
		madvise((void *)*last, TRACE_PAGE, MADV_PAGEOUT);
	*last = page;
}

void trace_pageout_free(struct trace_pageout *p)
{
	free(p->last_page);
	p->last_page = NULL;
}
