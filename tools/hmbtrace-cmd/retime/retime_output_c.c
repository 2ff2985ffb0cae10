// SPDX-License-Identifier: GPL-2.0-only
/*
 * retime_output_c.c - libtracecmd's writer behind retime_output_c.h.
 *
 * libtracecmd exports its writer but declares it only in trace-cmd's
 * private header: capture/tracecmd_private_c.h declares what is used.
 */
#define _GNU_SOURCE
#include "retime/retime_output_c.h"
#include "capture/c_error.h"
#include "capture/tracecmd_walk_c.h"

#include <stdio.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "capture/tracecmd_private_c.h"

int retime_input_file_version(const char *in)
{
	struct tracecmd_input *ih = hmb_tracecmd_open_head(in);
	int version;

	if (!ih)
		return -1;
	version = (int)tracecmd_get_in_file_version(ih);
	tracecmd_close(ih);
	return version;
}

int retime_output_write(const char *in, const char *out, int file_version,
			const struct retime_output_buffer *buffers, int nr,
			char *err, size_t err_len)
{
	struct tracecmd_output *oh = NULL;
	struct tracecmd_input *ih;
	const char *clock;
	int i, ret = -1;

	tracecmd_set_loglevel(TEP_LOG_NONE);
	ih = hmb_tracecmd_open_head(in);
	if (!ih) {
		set_err(err, err_len, "cannot read the headers of the input again");
		return -1;
	}
	if (tracecmd_get_file_state(ih) == TRACECMD_FILE_CPU_LATENCY || nr < 1) {
		set_err(err, err_len, "a latency trace has no per-CPU buffers to retime");
		goto out;
	}
	/* Headers, formats, kallsyms, printk, cmdlines, CPU count and options, unchanged. */
	oh = tracecmd_copy(ih, out, TRACECMD_FILE_OPTIONS, file_version, NULL);
	if (!oh) {
		set_err(err, err_len, "libtracecmd could not write the headers (file version %d)",
			file_version);
		goto out;
	}
	tracecmd_set_quiet(oh, true);
	clock = tracecmd_get_trace_clock(ih);
	if (clock)
		tracecmd_set_out_clock(oh, clock);
	if (tracecmd_write_cpu_data(oh, buffers[0].cpus, buffers[0].cpu_files, NULL) < 0) {
		set_err(err, err_len, "libtracecmd could not write the top buffer's data");
		goto out;
	}
	for (i = 1; i < nr; i++) {
		if (tracecmd_append_buffer_cpu_data(oh, buffers[i].name, buffers[i].cpus,
						    buffers[i].cpu_files) < 0) {
			set_err(err, err_len,
				"libtracecmd could not write the data of instance \"%s\"",
				buffers[i].name);
			goto out;
		}
	}
	ret = 0;
out:
	if (oh)
		tracecmd_output_close(oh);
	tracecmd_close(ih);
	if (ret)
		unlink(out);
	return ret;
}
