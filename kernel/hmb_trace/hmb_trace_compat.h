/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels hmb_trace.ko builds against, in one
 * place. Kbuild probes the headers it builds with (so backports count).
 */
#ifndef HMB_TRACE_COMPAT_H
#define HMB_TRACE_COMPAT_H

#include <linux/trace.h>

/*
 * v6.8 added the "systems" argument of trace_array_get_by_name(); NULL:
 * every event system, so other events can join the instance's timeline.
 */
static inline struct trace_array *hmb_trace_array_get_by_name(const char *name)
{
#ifdef HMB_TRACE_GET_BY_NAME_SYSTEMS
	return trace_array_get_by_name(name, NULL);
#else
	return trace_array_get_by_name(name);
#endif
}

#endif /* HMB_TRACE_COMPAT_H */
