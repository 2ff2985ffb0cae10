/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_dat_layout_c.h - where a trace.dat of file version 6 (what
 * `trace-cmd record` writes) says its CPU data lies, checked against the
 * file's size before libtracecmd opens it.
 *
 * libtracecmd 3.1's tracecmd_open() fails on a file cut short inside the
 * data of a CPU after the first, and its cleanup then dereferences the
 * unset state of that CPU (tracecmd_close(): a crash, for every reader of
 * a capture copied before trace-cmd finished writing it). This reads the
 * file's headers as trace-cmd-dat(5) lays them out, only to find the
 * flyrecord sections (the top buffer's, and each instance's from its
 * BUFFER option), every length and offset bounded by the file's size.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACE_DAT_LAYOUT_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACE_DAT_LAYOUT_C_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * -1 with the reason in `err` when a CPU's data of the top buffer or of
 * an instance ends past the end of the file at `path`; 0 when all of it is
 * there, and when the file is not laid out as this reads it (another file
 * version, a header it does not know: left to libtracecmd to judge).
 */
int hmb_trace_dat_check_cpu_data(const char *path, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACE_DAT_LAYOUT_C_H_ */
