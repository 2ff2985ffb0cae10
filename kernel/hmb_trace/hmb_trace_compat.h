/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels hmb_trace.ko builds against, in one
 * place. Kbuild probes the headers it builds with (so backports count).
 */
#ifndef HMB_TRACE_COMPAT_H
#define HMB_TRACE_COMPAT_H

#include <linux/errno.h>
#include <linux/string.h>
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

/*
 * The drain's gate (hmb_trace_events.c): trace_array_puts() returns 0 when
 * the instance's buffer did not take the line. Added in v6.3 and in the
 * stable series before it (Debian's 6.1.0-57 has it); checked in the
 * headers of 6.1.0-57 (6.1.192) and in mainline up to v7.2. Without it
 * nothing exported says whether an instance's buffer takes writes: the
 * gate is always open (-EOPNOTSUPP is not 0).
 */
static inline int hmb_trace_array_puts(struct trace_array *tr,
				       const char *str)
{
#ifdef HMB_TRACE_HAVE_ARRAY_PUTS
	return trace_array_puts(tr, str);
#else
	return -EOPNOTSUPP;
#endif
}

#endif /* HMB_TRACE_COMPAT_H */
