/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * retime_output_c.h - a trace-cmd data file written by libtracecmd's own
 * writer, as `trace-cmd convert` and `split` write one: the headers,
 * event formats, kallsyms, printk formats, command lines and options of an
 * input capture copied unchanged, then each buffer's CPU data from files
 * of ready pages (trace_page_writer.h). libtracecmd.h is C only, so this
 * is the C side; retime.cc uses it.
 */
#ifndef HMBTRACE_RETIME_OUTPUT_C_H_
#define HMBTRACE_RETIME_OUTPUT_C_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One buffer of the output: the top one (name "") or an instance. */
struct retime_output_buffer {
	const char *name;
	int cpus;
	char *const *cpu_files;	/* [cpus]: each CPU's pages */
};

/*
 * Writes `out`: the headers and options of `in`, then buffers[0..nr)
 * (buffers[0] the top buffer, then the instances in the input's order),
 * as file version `file_version` (6 or 7; 0: the input's), compressed as
 * the input is where the version allows. Returns 0, or -1 with a message
 * in err (and `out` removed).
 */
int retime_output_write(const char *in, const char *out, int file_version,
			const struct retime_output_buffer *buffers, int nr,
			char *err, size_t err_len);

/*
 * As retime_output_write(), every buffer's data copied by libtracecmd's
 * own writer. retime_output_write() copies a version 6 file's data itself
 * in large pieces (libtracecmd's loop moves 8 KiB per read and write);
 * its output is this one's, byte for byte (retime_output_unittest).
 */
int retime_output_write_by_libtracecmd(const char *in, const char *out, int file_version,
				       const struct retime_output_buffer *buffers, int nr,
				       char *err, size_t err_len);

/* The input's file version, or -1 if it cannot be read. */
int retime_input_file_version(const char *in);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_RETIME_OUTPUT_C_H_ */
