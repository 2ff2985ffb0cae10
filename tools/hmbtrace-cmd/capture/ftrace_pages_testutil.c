// SPDX-License-Identifier: GPL-2.0-only
#include "capture/ftrace_pages_testutil.h"
#include "capture/ftrace_file_pages_c.h"
#include "capture/tracecmd_walk_c.h"

#include <trace-cmd.h>

#include "capture/tracecmd_private_c.h"

int ftrace_test_read_by_tracecmd(const char *path, ftrace_test_event_fn fn, void *data)
{
	struct hmb_tracecmd_file f;
	char err[256];
	int b, cpu;

	if (hmb_tracecmd_file_open(&f, path, 1, NULL, err, sizeof(err)))
		return -1;
	for (b = 0; b < f.nr_handles; b++) {
		struct tracecmd_input *h = f.handles[b];
		struct tep_handle *tep = tracecmd_get_tep(h);

		for (cpu = 0; cpu < tracecmd_cpus(h); cpu++) {
			struct tep_record *r;

			for (r = tracecmd_read_cpu_first(h, cpu); r; r = tracecmd_read_data(h, cpu)) {
				struct ftrace_test_event ev = {
					b, r->cpu, r->ts, tep_data_type(tep, r), r->data,
					(uint32_t)r->size, r->missed_events,
				};

				fn(&ev, data);
				tracecmd_free_record(r);
			}
		}
	}
	hmb_tracecmd_file_close(&f);
	return 0;
}

int ftrace_test_read_by_pages(const char *path, ftrace_test_event_fn fn, void *data,
			      uint64_t *page_errors, struct ftrace_page_error *first)
{
	struct hmb_tracecmd_file f;
	struct ftrace_file_pages fp;
	char err[256];
	int b, i, ret;

	*page_errors = 0;
	if (hmb_tracecmd_file_open(&f, path, 1, NULL, err, sizeof(err)))
		return -1;
	ret = ftrace_file_pages_open(&fp, path, &f, err, sizeof(err));
	if (ret) {
		hmb_tracecmd_file_close(&f);
		return ret;
	}
	for (b = 0; b < fp.nr_buffers; b++) {
		struct tep_handle *tep = tracecmd_get_tep(f.handles[b]);

		for (i = 0; i < fp.nr_cpus[b]; i++) {
			struct ftrace_cpu_cursor c;
			struct ftrace_page_event pe;

			if (ftrace_cpu_cursor_init(&c, &fp, b, i))
				break;
			while (ftrace_cpu_cursor_next(&c, &pe) == 1) {
				struct tep_record r = { 0 };
				struct ftrace_test_event ev;

				r.data = (void *)pe.data;
				r.size = (int)pe.size;
				ev.buffer = b;
				ev.cpu = fp.cpus[b][i].cpu;
				ev.ts = pe.ts;
				ev.common_type = tep_data_type(tep, &r);
				ev.data = pe.data;
				ev.size = pe.size;
				ev.missed_events = pe.missed_events;
				fn(&ev, data);
			}
			ftrace_cpu_cursor_destroy(&c);
		}
	}
	*page_errors = fp.page_errors;
	if (first)
		*first = fp.first_error;
	ftrace_file_pages_close(&fp);
	hmb_tracecmd_file_close(&f);
	return 0;
}

int ftrace_test_walk_reads_pages(const char *path)
{
	struct hmb_tracecmd_file f;
	char err[256];
	int pages;

	if (hmb_tracecmd_file_open(&f, path, 1, NULL, err, sizeof(err)))
		return -1;
	pages = f.pages != NULL;
	hmb_tracecmd_file_close(&f);
	return pages;
}

int ftrace_test_middle_page(const char *path, uint64_t *offset, uint32_t *page_size)
{
	struct hmb_tracecmd_file f;
	struct ftrace_file_pages fp;
	char err[256];
	int b, i, ret = -1;

	if (hmb_tracecmd_file_open(&f, path, 1, NULL, err, sizeof(err)))
		return -1;
	if (ftrace_file_pages_open(&fp, path, &f, err, sizeof(err)) == 0) {
		for (b = 0; ret && b < fp.nr_buffers; b++) {
			for (i = 0; ret && i < fp.nr_cpus[b]; i++) {
				if (fp.cpus[b][i].size >= 3ull * fp.page_size) {
					*offset = fp.cpus[b][i].offset + fp.page_size;
					*page_size = fp.page_size;
					ret = 0;
				}
			}
		}
		ftrace_file_pages_close(&fp);
	}
	hmb_tracecmd_file_close(&f);
	return ret;
}
