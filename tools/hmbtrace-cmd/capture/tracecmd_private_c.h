/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracecmd_private_c.h - what hmbtrace-cmd uses of libtracecmd beyond its
 * installed header: functions that libtracecmd.so.1 exports but declares
 * only in trace-cmd's private header
 * (lib/trace-cmd/include/private/trace-cmd-private.h), as trace-cmd's own
 * tools use them. The declarations are those of trace-cmd 3.1.6
 * (libtracecmd 1.3.1, Debian 12), checked against it and unchanged in
 * trace-cmd 3.4's source; libtracecmd 1.5.2 (Debian 13) and 1.5.5 (sid)
 * export them all, and capture/ compiles against both with -Werror
 * (mock/kernels/build-tools.sh). meson pins the library to soname 1 from
 * 1.3.1 for them (tools/hmbtrace-cmd/meson.build). One place, so that a
 * new libtracecmd is checked against one list.
 *
 * C only, after <trace-cmd.h>.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACECMD_PRIVATE_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACECMD_PRIVATE_C_H_

#include <stdbool.h>
#include <stdint.h>

struct tracecmd_input;
struct tracecmd_output;

/* Reading (capture/) */

/* A handle flag, not an open flag: set on the handle once open. */
#define HMB_TRACECMD_FL_RAW_TS (1 << 3)
void tracecmd_set_flag(struct tracecmd_input *handle, int flag);
/*
 * The clock named in the buffer's saved trace_clock file ("[local] global
 * ..."), as libtracecmd parsed it.
 */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
unsigned long tracecmd_get_in_file_version(struct tracecmd_input *handle);
int tracecmd_cpus(struct tracecmd_input *handle);

/*
 * Where a CPU's pages lie (ftrace_file_pages_c.c): its last record, and the
 * bytes of its data in the file. trace-cmd declares the size as off64_t, a
 * 64-bit signed integer on every Linux ABI, returned in the same register
 * as int64_t (which does not need _LARGEFILE64_SOURCE here). Its page size
 * comes from tracecmd_page_size().
 */
struct tep_record *tracecmd_read_cpu_last(struct tracecmd_input *handle, int cpu);
int64_t tracecmd_get_cpu_file_size(struct tracecmd_input *handle, int cpu);
int tracecmd_page_size(struct tracecmd_input *handle);

/* Writing (retime/) */

enum tracecmd_file_states {
	TRACECMD_FILE_ALLOCATED = 0,
	TRACECMD_FILE_INIT,
	TRACECMD_FILE_HEADERS,
	TRACECMD_FILE_FTRACE_EVENTS,
	TRACECMD_FILE_ALL_EVENTS,
	TRACECMD_FILE_KALLSYMS,
	TRACECMD_FILE_PRINTK,
	TRACECMD_FILE_CMD_LINES,
	TRACECMD_FILE_CPU_COUNT,
	TRACECMD_FILE_OPTIONS,
	TRACECMD_FILE_CPU_LATENCY,
	TRACECMD_FILE_CPU_FLYRECORD,
};
enum tracecmd_file_states tracecmd_get_file_state(struct tracecmd_input *handle);
struct tracecmd_output *tracecmd_copy(struct tracecmd_input *ihandle, const char *file,
				      enum tracecmd_file_states state, int file_version,
				      const char *compression);
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
void tracecmd_set_out_clock(struct tracecmd_output *handle, const char *clock);
int tracecmd_write_cpu_data(struct tracecmd_output *handle, int cpus,
			    char *const *cpu_data_files, const char *buff_name);
int tracecmd_append_buffer_cpu_data(struct tracecmd_output *handle, const char *name,
				    int cpus, char *const *cpu_data_files);
void tracecmd_output_close(struct tracecmd_output *handle);

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACECMD_PRIVATE_C_H_ */
