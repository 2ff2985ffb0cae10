/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Registration API of hmb_trace.ko, for drivers that own an
 * HMB trace area (nvme-pci; the module's own ivshmem backend uses it too).
 */
#ifndef HMB_TRACE_H
#define HMB_TRACE_H

struct device;
struct hmb_trace_area;

struct hmb_trace_area *hmb_trace_register_area(const char *name,
					       struct device *parent,
					       const void *const *pages,
					       unsigned int nr_pages,
					       unsigned int page_shift);
void hmb_trace_unregister_area(struct hmb_trace_area *area);

#endif /* HMB_TRACE_H */
