// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace_pageout_c.c - giving a walk's past trace pages back, behind
 * trace_pageout_c.h.
 *
 * Pages a CPU has moved past are not read again by the walk, so they are
 * given back, TRACE_PAGEOUT_BATCH at a time:
 *   - inside a read-only private mapping of the capture file (how
 *     libtracecmd maps trace data), with MADV_DONTNEED: the process's page
 *     table entries go, the page cache keeps the pages, and a later read
 *     (the next pass) maps the same bytes again - a page that can never
 *     have been written has no private copy to lose;
 *   - anywhere else (libtracecmd reading a compressed capture into memory
 *     it allocated), with MADV_PAGEOUT, which never changes what memory
 *     reads (anonymous pages go to swap, if any; before Linux 5.4 it fails
 *     with EINVAL and nothing is saved).
 * Which one is decided from /proc/self/maps for each range, just before the
 * madvise: nothing else maps or unmaps in between (one thread).
 */
#define _GNU_SOURCE
#include "capture/trace_pageout_c.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <trace-cmd.h>

#define TRACE_PAGE 4096u
/* /proc/self/maps larger than this: pages are paged out instead. */
#define MAPS_MAX (256u * 1024u)

void trace_pageout_init(struct trace_pageout *p, struct tracecmd_input **handles, int nr,
			dev_t dev, ino_t ino)
{
	memset(p, 0, sizeof(*p));
	p->handles = handles;
	p->nr_handles = nr > 0 ? nr : 0;
	p->passed = p->nr_handles ? calloc((size_t)p->nr_handles * TRACE_PAGEOUT_MAX_CPUS,
					   sizeof(*p->passed)) : NULL;
	p->dev = dev;
	p->ino = ino;
	/*
	 * Inode 0 is what /proc/self/maps shows for anonymous memory: an
	 * unknown file must not make those look like the file's pages.
	 */
	p->maps = p->passed && ino ? malloc(MAPS_MAX) : NULL;
}

static int maps_hex(const char **p, const char *end, unsigned long long *v)
{
	const char *start = *p;

	*v = 0;
	while (*p < end) {
		char c = **p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			break;
		*v = *v * 16 + d;
		(*p)++;
	}
	return *p > start;
}

static int maps_dec(const char **p, const char *end, unsigned long long *v)
{
	const char *start = *p;

	*v = 0;
	while (*p < end && **p >= '0' && **p <= '9') {
		*v = *v * 10 + (unsigned)(**p - '0');
		(*p)++;
	}
	return *p > start;
}

/* Whether [lo, hi) lies in one read-only mapping of the capture file. */
static int in_file_mapping(struct trace_pageout *pg, uintptr_t lo, uintptr_t hi)
{
	size_t len = 0;
	ssize_t n;
	const char *p, *end;
	int fd;

	if (!pg->maps)
		return 0;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (len < MAPS_MAX &&
	       (n = read(fd, pg->maps + len, MAPS_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len == MAPS_MAX)
		return 0;	/* maybe cut short: do not guess */
	p = pg->maps;
	end = pg->maps + len;
	/* "start-end perms offset major:minor inode path" per line */
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		unsigned long long start, stop, off, major, minor, inode;
		const char *perms;

		if (!eol)
			eol = end;
		if (maps_hex(&p, eol, &start) && p < eol && *p++ == '-' &&
		    maps_hex(&p, eol, &stop) && p < eol && *p++ == ' ' &&
		    eol - p > 5) {
			perms = p;
			p += 5;
			if (maps_hex(&p, eol, &off) && p < eol && *p++ == ' ' &&
			    maps_hex(&p, eol, &major) && p < eol && *p++ == ':' &&
			    maps_hex(&p, eol, &minor) && p < eol && *p++ == ' ' &&
			    maps_dec(&p, eol, &inode) && start <= lo && hi <= stop)
				return perms[0] == 'r' && perms[1] == '-' &&
				       perms[3] == 'p' &&
				       major == major(pg->dev) &&
				       minor == minor(pg->dev) &&
				       inode == (unsigned long long)pg->ino;
		}
		p = eol + 1;
	}
	return 0;
}

static void give_back(struct trace_pageout *p, uintptr_t lo, uintptr_t hi)
{
	if (lo >= hi)
		return;
	if (in_file_mapping(p, lo, hi))
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
	else
		madvise((void *)lo, hi - lo, MADV_PAGEOUT);
}

void trace_pageout_behind(struct trace_pageout *p, struct tracecmd_input *handle,
			  const struct tep_record *record, int cpu)
{
	uintptr_t page = (uintptr_t)record->data & ~(uintptr_t)(TRACE_PAGE - 1);
	struct trace_pageout_passed *ps;
	int h;

	if (!p->passed || cpu < 0 || cpu >= TRACE_PAGEOUT_MAX_CPUS)
		return;
	for (h = 0; h < p->nr_handles && p->handles[h] != handle; h++)
		;
	if (h == p->nr_handles)
		return;
	ps = &p->passed[(size_t)h * TRACE_PAGEOUT_MAX_CPUS + (size_t)cpu];
	if (ps->last && ps->last != page) {
		if (ps->hi != ps->last ||
		    ps->hi - ps->lo >= TRACE_PAGEOUT_BATCH * TRACE_PAGE) {
			give_back(p, ps->lo, ps->hi);
			ps->lo = ps->last;
		}
		ps->hi = ps->last + TRACE_PAGE;
	}
	ps->last = page;
}

void trace_pageout_flush(struct trace_pageout *p)
{
	size_t i, n = (size_t)p->nr_handles * TRACE_PAGEOUT_MAX_CPUS;

	if (!p->passed)
		return;
	for (i = 0; i < n; i++) {
		struct trace_pageout_passed *ps = &p->passed[i];

		give_back(p, ps->lo, ps->hi);
		if (ps->last)
			give_back(p, ps->last, ps->last + TRACE_PAGE);
		memset(ps, 0, sizeof(*ps));
	}
}

void trace_pageout_free(struct trace_pageout *p)
{
	free(p->passed);
	free(p->maps);
	p->passed = NULL;
	p->maps = NULL;
}
