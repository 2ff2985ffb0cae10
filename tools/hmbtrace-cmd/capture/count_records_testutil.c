// SPDX-License-Identifier: GPL-2.0-only
#include "capture/count_records_testutil.h"

#include <trace-cmd.h>

static long long count_handle(struct tracecmd_input *h, uint64_t *counts,
			      int nr_counts)
{
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct tep_event *ev = tep_find_event_by_name(tep, "hmb", "hmb_record");
	long long total = 0;
	int cpu;

	if (!ev)
		return 0;
	for (cpu = 0; cpu < tep_get_cpus(tep); cpu++) {
		struct tep_record *r;

		for (r = tracecmd_read_cpu_first(h, cpu); r;
		     r = tracecmd_read_data(h, cpu)) {
			unsigned long long core;

			if (tep_data_type(tep, r) == ev->id &&
			    tep_get_field_val(NULL, ev, "core", r, &core, 0) == 0) {
				if (core < (unsigned long long)nr_counts)
					counts[core]++;
				total++;
			}
			tracecmd_free_record(r);
		}
	}
	return total;
}

long long count_hmb_records_per_core(const char *path, uint64_t *counts,
				     int nr_counts)
{
	struct tracecmd_input *top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	long long total;
	int i;

	if (!top)
		return -1;
	total = count_handle(top, counts, nr_counts);
	for (i = 0; i < tracecmd_buffer_instances(top); i++) {
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);

		if (h) {
			total += count_handle(h, counts, nr_counts);
			tracecmd_close(h);
		}
	}
	tracecmd_close(top);
	return total;
}
