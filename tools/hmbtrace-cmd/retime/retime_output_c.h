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

/*
 * The same file, one CPU's pages written straight to their place instead
 * of through a file of pages: `cpu` of buffers[buffer], every CPU before
 * it (of every buffer) empty. A version 6 output only: NULL when the
 * output would not be one, or on any failure (nothing then left behind).
 * The buffers' cpu_files are not read yet.
 */
struct retime_output;
struct retime_output *retime_output_begin(const char *in, const char *out, int file_version,
					  const struct retime_output_buffer *buffers, int nr,
					  int buffer, int cpu);
/* Where that CPU's pages go in `out`, one after the other. */
long long retime_output_direct_offset(const struct retime_output *o);
/*
 * Completes `out`: the direct CPU has direct_size bytes of pages, the
 * others their cpu_files. Returns 0, or -1 with a message in err (and
 * `out` removed); frees o.
 */
int retime_output_finish(struct retime_output *o, const struct retime_output_buffer *buffers,
			 int nr, long long direct_size, char *err, size_t err_len);
/* Removes the output begun; frees o. NULL is allowed. */
void retime_output_abort(struct retime_output *o);

/*
 * The first CPU with data of the input open in `f` (tracecmd_walk_c.h),
 * in the output's order: buffers of cpus[0..nr) CPUs, the top one first.
 * 0 with it in *buffer and *cpu; -1 if none, or `f` is not as said.
 */
struct hmb_tracecmd_file;
int retime_input_first_cpu_with_data(struct hmb_tracecmd_file *f, const int *cpus, int nr,
				     int *buffer, int *cpu);

/*
 * `size` bytes of descriptor `in` at offset `from` to descriptor `out` at
 * offset `to` (copy_file_range() where the file systems allow, else
 * 1 MiB reads and writes); neither descriptor's position moves. 0, or -1
 * with errno set (a short input is -1).
 */
int retime_copy_range(int in, long long from, int out, long long to, long long size);

/* The input's file version, or -1 if it cannot be read. */
int retime_input_file_version(const char *in);
/* The same, of the input open in `f`. */
int retime_input_file_version_open(struct hmb_tracecmd_file *f);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_RETIME_OUTPUT_C_H_ */
