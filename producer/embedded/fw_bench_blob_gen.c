// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * fw_bench_blob_gen.c - run on the build host by bench.sh: the dictionary
 * the sample firmware's events (fw_bench_dict.c) serialise to, written as
 * a C file (fw_blob[], fw_blob_len) that the "blob embedded" build of the
 * sample links instead of the events, and inits with
 * hmb_trace_producer_init_blob(): the pre-built blob of a firmware that
 * does not link the dictionary serializer.
 *
 *   fw_bench_blob_gen OUT.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_bench_events.h"

int main(int argc, char **argv)
{
	static struct hmb_trace_producer p;
	struct hmb_trace_producer_config cfg;
	struct hmb_trace_dict_header h;
	struct hmb_trace_meta m;
	uint64_t len;
	uint8_t *area;
	uint32_t i;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUT.c\n", argv[0]);
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.page_size = 4096;
	cfg.pages_per_core = 2;
	cfg.nr_cores = 1;
	cfg.clock_hz = 1000000000;
	cfg.nr_events = fw_nr_events;
	cfg.events = fw_events;
	len = hmb_trace_area_size(&cfg);
	area = len ? calloc(1, (size_t)len) : NULL;
	if (!area || hmb_trace_producer_init(&p, area, len, &cfg)) {
		fprintf(stderr, "%s: the producer refused the events\n", argv[0]);
		return 1;
	}
	memcpy(&m, area, sizeof(m));
	memcpy(&h, area + m.dict_offset, sizeof(h));
	out = fopen(argv[1], "w");
	if (!out)
		return 1;
	fprintf(out, "/* Made by fw_bench_blob_gen: %u events. */\n"
		"const unsigned char fw_blob[] __attribute__((aligned(8))) = {",
		(unsigned)h.nr_events);
	for (i = 0; i < h.total_len; i++)
		fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n\t",
			area[m.dict_offset + i]);
	fprintf(out, "\n};\nconst unsigned int fw_blob_len = %u;\n",
		(unsigned)h.total_len);
	free(area);
	return fclose(out) ? 1 : 0;
}
