/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Registration API of hmb_trace.ko, for drivers that own an
 * HMB trace area (nvme-pci; the module's own ivshmem backend uses it too).
 */
#ifndef HMB_TRACE_H
#define HMB_TRACE_H

#include <linux/types.h>

struct device;
struct hmb_trace_area;

struct hmb_trace_area *hmb_trace_register_area(const char *name,
					       struct device *parent,
					       const void *const *pages,
					       unsigned int nr_pages,
					       unsigned int page_shift);
void hmb_trace_unregister_area(struct hmb_trace_area *area);
void hmb_trace_suspend_area(struct hmb_trace_area *area);
void hmb_trace_resume_area(struct hmb_trace_area *area);

/**
 * struct hmb_trace_ctrl_ops - a control channel's transport
 * (include/hmb_trace_ctrl_abi.h gives the operations and their meaning).
 * @post: send request @seq: @op with @arg. Must not sleep. Return: 0, or
 *	a negative errno when it was not sent (-EBUSY: the transport still
 *	has an earlier request in flight and takes no other until that one
 *	ends, as nvme-pci's command does).
 * @answered: if the device has answered request @seq, fill @status and
 *	@val and return true. Must not sleep.
 * @wait: optional; sleep until request @seq may be answered, for at most
 *	@timeout_ns, and return early (any value) when the channel is going
 *	away. Without it the caller polls @answered with short sleeps.
 *
 * One request is outstanding at a time; a new @seq supersedes an old one
 * whose answer never came, unless @post refuses it.
 */
struct hmb_trace_ctrl_ops {
	int (*post)(void *priv, u16 op, u64 seq, const u64 arg[4]);
	bool (*answered)(void *priv, u64 seq, u16 *status, u64 val[4]);
	void (*wait)(void *priv, u64 seq, u64 timeout_ns);
};

void hmb_trace_set_ctrl(struct hmb_trace_area *area,
			const struct hmb_trace_ctrl_ops *ops, void *priv);

#endif /* HMB_TRACE_H */
