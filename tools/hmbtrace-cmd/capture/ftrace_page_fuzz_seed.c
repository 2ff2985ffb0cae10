// SPDX-License-Identifier: GPL-2.0-only
/*
 * ftrace_page_fuzz_seed.c - seeds for the page reader's fuzz target: from
 * each capture named, the page with the most events, after the byte that
 * says its layout (ftrace_page_fuzz.cc).
 *
 * Usage: ftrace_page_fuzz_seed OUT CAPTURE [OUT CAPTURE]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/ftrace_file_pages_c.h"
#include "capture/tracecmd_walk_c.h"

static int write_seed(const char *out, const char *capture)
{
	struct hmb_tracecmd_file f;
	struct ftrace_file_pages fp;
	uint64_t best_events = 0;
	uint8_t *page_bytes = NULL, *best = NULL;
	char err[256];
	uint8_t layout;
	FILE *o;
	int b, i, ok;

	if (hmb_tracecmd_file_open(&f, capture, 1, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", capture, err);
		return -1;
	}
	if (ftrace_file_pages_open(&fp, capture, &f, err, sizeof(err))) {
		fprintf(stderr, "%s: not read by pages\n", capture);
		hmb_tracecmd_file_close(&f);
		return -1;
	}
	page_bytes = malloc(fp.page_size);
	best = malloc(fp.page_size);
	for (b = 0; page_bytes && best && b < fp.nr_buffers; b++) {
		for (i = 0; i < fp.nr_cpus[b]; i++) {
			const struct ftrace_cpu_pages *p = &fp.cpus[b][i];
			uint64_t page;

			for (page = p->offset; page < p->offset + p->size; page += fp.page_size) {
				struct ftrace_page_reader r;
				struct ftrace_page_event ev;
				uint64_t n = 0;

				if (page + fp.page_size > fp.file_len ||
				    ftrace_file_pages_read(&fp, page, page_bytes, fp.page_size) ||
				    ftrace_page_begin(&r, &fp.format, page_bytes, fp.page_size))
					continue;
				while (ftrace_page_next(&r, &ev) == 1)
					n++;
				if (n > best_events) {
					best_events = n;
					memcpy(best, page_bytes, fp.page_size);
				}
			}
		}
	}
	layout = (uint8_t)((fp.format.long_size == 8 ? 1 : 0) | (fp.format.big_endian ? 2 : 0));
	o = fopen(out, "wb");
	ok = o && best_events && fwrite(&layout, 1, 1, o) == 1 &&
	     fwrite(best, 1, fp.page_size, o) == fp.page_size;
	if (o && fclose(o))
		ok = 0;
	free(page_bytes);
	free(best);
	ftrace_file_pages_close(&fp);
	hmb_tracecmd_file_close(&f);
	if (!ok)
		fprintf(stderr, "%s: cannot write a seed from %s\n", out, capture);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 3 || argc % 2 == 0) {
		fprintf(stderr, "usage: ftrace_page_fuzz_seed OUT CAPTURE [OUT CAPTURE]...\n");
		return 2;
	}
	for (i = 1; i + 1 < argc; i += 2) {
		if (write_seed(argv[i], argv[i + 1]))
			return 1;
	}
	return 0;
}
