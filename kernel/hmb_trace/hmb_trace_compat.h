/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels hmb_trace.ko builds against, in one
 * place. Kbuild probes the headers it builds with (so backports count),
 * and each probe says which kernels it was checked on: the kernel matrix
 * (mock/kernels/README.md) builds the module with W=1 against Debian's
 * 6.1.0-57 (6.1.192), 6.12.118 and 7.2.13 headers, amd64, and 6.1 and 7.2
 * for arm64.
 */
#ifndef HMB_TRACE_COMPAT_H
#define HMB_TRACE_COMPAT_H

#include <linux/device.h>
#include <linux/errno.h>
#include <linux/hrtimer.h>
#include <linux/pci.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/trace.h>
#include <linux/workqueue.h>

/*
 * v6.8 added the "systems" argument of trace_array_get_by_name(); NULL:
 * every event system, so other events can join the instance's timeline.
 * HMB_TRACE_GET_BY_NAME_SYSTEMS: not on 6.1; on 6.12 and 7.2.
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

/*
 * v6.13 added hrtimer_setup(), which sets the callback with the rest, and
 * the kernel then removed hrtimer_init(). HMB_TRACE_HRTIMER_SETUP: not on
 * 6.1 or 6.12 (hrtimer_init() only); on 7.2 (hrtimer_setup() only).
 */
static inline void
hmb_trace_hrtimer_setup(struct hrtimer *timer,
			enum hrtimer_restart (*function)(struct hrtimer *),
			clockid_t clock_id, enum hrtimer_mode mode)
{
#ifdef HMB_TRACE_HRTIMER_SETUP
	hrtimer_setup(timer, function, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
#endif
}

/*
 * Sysfs binary attributes became const: v6.13 added the const read_new()
 * and bin_attrs_new beside the old members, and once every user moved the
 * kernel gave the old names the const types. HMB_TRACE_CONST_BIN_ATTR
 * (struct attribute_group's bin_attrs is "const struct bin_attribute
 * *const *"): not on 6.1 or 6.12; on 7.2.
 */
#ifdef HMB_TRACE_CONST_BIN_ATTR
#define hmb_trace_bin_attr_const const
#else
#define hmb_trace_bin_attr_const
#endif

/*
 * The driver core took driver_override over from the buses (struct device,
 * with its own lock, and device_has_driver_override()); before, the PCI
 * core kept it in struct pci_dev. HMB_TRACE_DEVICE_DRIVER_OVERRIDE: not on
 * 6.1 or 6.12; on 7.2.
 */
static inline bool hmb_trace_pci_has_driver_override(struct pci_dev *pdev)
{
#ifdef HMB_TRACE_DEVICE_DRIVER_OVERRIDE
	return device_has_driver_override(&pdev->dev);
#else
	return pdev->driver_override;
#endif
}

/*
 * v6.17 added WQ_PERCPU, the flag for what alloc_workqueue() without
 * WQ_UNBOUND always gave, and later kernels warn (a WARNING at insmod, seen
 * on 7.2) when a workqueue asks for neither. hmb_trace_wq is per-CPU by
 * design (core k drains on a chosen CPU through queue_work_on()), so it
 * asks for WQ_PERCPU where the flag exists. HMB_TRACE_HAVE_WQ_PERCPU: not
 * on 6.1 or 6.12; on 7.2.
 */
#ifdef HMB_TRACE_HAVE_WQ_PERCPU
#define HMB_TRACE_WQ_PERCPU WQ_PERCPU
#else
#define HMB_TRACE_WQ_PERCPU 0
#endif

#endif /* HMB_TRACE_COMPAT_H */
