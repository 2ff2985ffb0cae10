// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control channel: requests from the host to the firmware (start/stop
 * tracing at the source, event mask, ring mode, clock sync, echo), over a
 * transport the backend provides (include/hmb_trace_ctrl_abi.h):
 *
 *   mock (ivshmem):  a mailbox in a second ivshmem-plain device, polled by
 *                    hmb-fwsim; hmb_trace_ivshmem.c
 *   nvme-pci:        a vendor-specific admin command of the nvme-pci
 *                    series (kernel/patches), hmb_trace_nvme.c
 *
 * One request at a time per area (@lock). A request not answered within
 * its timeout is an error, counted, never a hang: the caller gets
 * -ETIMEDOUT and a later answer to the old seq is ignored. The caller
 * sleeps while it waits: on the transport's own wait (nvme-pci: the
 * command's completion), else in short hrtimer sleeps between looks at
 * the mailbox, after looking for at most 50 us without sleeping: the mock
 * has no interrupt, and a sync sample's doubt is its round trip). The
 * nvme-pci transport never spins. A transport that keeps an unanswered
 * request in flight (an NVMe admin command lives until it completes, is
 * cancelled by a controller reset, or meets the admin timeout) refuses
 * the next one with -EBUSY, returned at once: after a timeout nothing
 * more is sent until that request has ended.
 *
 * Nothing is sent unless asked: a user's write in ctrl/, or the clock
 * sync, which runs only while someone traces (hmb_trace_clock.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/export.h>
#include <linux/sched/clock.h>

#include "hmb_trace_internal.h"

/*
 * Without a transport's wait (the mock's mailbox: no interrupt), look at
 * the answer without sleeping for at most this long (a sync sample's
 * doubt is its round trip, and a sleep's wakeup under load is
 * milliseconds), ...
 */
#define HMB_TRACE_CTRL_SPIN_NS		(50 * NSEC_PER_USEC)
/* ... then sleep between looks (us, range). */
#define HMB_TRACE_CTRL_POLL_MIN_US	10
#define HMB_TRACE_CTRL_POLL_MAX_US	20

static const char *const hmb_trace_ctrl_op_names[HMB_CTRL_OP_NR] = {
	[HMB_CTRL_OP_NOP] = "nop",
	[HMB_CTRL_OP_START] = "start",
	[HMB_CTRL_OP_STOP] = "stop",
	[HMB_CTRL_OP_EVENT_MASK] = "event_mask",
	[HMB_CTRL_OP_RING_MODE] = "ring_mode",
	[HMB_CTRL_OP_SYNC] = "sync",
	[HMB_CTRL_OP_ECHO] = "echo",
	[HMB_CTRL_OP_FREEZE_CONFIG] = "freeze_config",
	[HMB_CTRL_OP_FREEZE_REARM] = "freeze_rearm",
	[HMB_CTRL_OP_FREEZE_NOW] = "freeze_now",
};

/**
 * hmb_trace_ctrl_op_name() - name of a control operation.
 * @op: HMB_CTRL_OP_*
 * Return: the name, "?" if unknown.
 */
const char *hmb_trace_ctrl_op_name(unsigned int op)
{
	return op < HMB_CTRL_OP_NR ? hmb_trace_ctrl_op_names[op] : "?";
}

/**
 * hmb_trace_set_ctrl() - give an area its control channel.
 * @area: a registered area
 * @ops: the transport; NULL: none ("not available")
 * @priv: passed to @ops
 *
 * @ops and @priv must stay valid until hmb_trace_unregister_area(), which
 * stops every request first. Clock sync starts if someone traces (else
 * when tracing starts, after one calibration run for the crash dump:
 * hmb_trace_clock_calibrate()); setting NULL stops it and makes a request that
 * waits give up (hmb_trace_suspend_area()).
 *
 * Context: process context, may sleep.
 */
void hmb_trace_set_ctrl(struct hmb_trace_area *area,
			const struct hmb_trace_ctrl_ops *ops, void *priv)
{
	struct hmb_trace_ctrl *ctrl = &area->ctrl;

	mutex_lock(&ctrl->lock);
	ctrl->ops = ops;
	ctrl->priv = priv;
	WRITE_ONCE(ctrl->going, !ops);
	mutex_unlock(&ctrl->lock);
	if (ops)
		hmb_trace_clock_calibrate(area);
}
EXPORT_SYMBOL_GPL(hmb_trace_set_ctrl);

/**
 * hmb_trace_ctrl_call() - one request, and its answer.
 * @a: the area
 * @op: HMB_CTRL_OP_*
 * @arg: the request's four arguments
 * @val: the answer's four values (out)
 * @t0: the trace clocks right before the request is posted (out)
 * @t1: the trace clocks right after the answer is seen (out)
 * @timeout_us: give up after this long
 *
 * Sleeps until the answer comes (the transport's wait; without one, after
 * at most HMB_TRACE_CTRL_SPIN_NS of looks, short sleeps between looks): a
 * sync sample's doubt is its round trip plus the wakeup, and the sync
 * policy keeps the best sample of a burst.
 *
 * Context: process context, sleeps.
 * Return: the answer's status (HMB_CTRL_OK, ...), -ENODEV without a
 * control channel, -EBUSY if the transport did not send it (an earlier
 * request is still in flight), -ETIMEDOUT.
 */
int hmb_trace_ctrl_call(struct hmb_trace_area *a, u16 op, const u64 arg[4],
			u64 val[4], struct hmb_trace_stamps *t0,
			struct hmb_trace_stamps *t1, unsigned int timeout_us)
{
	struct hmb_trace_ctrl *ctrl = &a->ctrl;
	u64 start, now, seq, timeout_ns = (u64)timeout_us * NSEC_PER_USEC;
	bool woken = false;
	u16 status;
	int ret;

	mutex_lock(&ctrl->lock);
	if (!ctrl->ops || READ_ONCE(ctrl->going)) {
		ret = -ENODEV;
		goto out;
	}
	seq = ++ctrl->seq;
	if (op < HMB_CTRL_OP_NR)
		ctrl->requests[op]++;
	start = local_clock();
	hmb_trace_clock_stamp(t0, false);
	ret = ctrl->ops->post(ctrl->priv, op, seq, arg);
	if (ret) {
		ctrl->not_sent++;
		goto out;
	}
	for (;;) {
		if (ctrl->ops->answered(ctrl->priv, seq, &status, val))
			break;
		now = local_clock();
		if (now - start >= timeout_ns || READ_ONCE(ctrl->going)) {
			ctrl->timeouts++;
			ret = -ETIMEDOUT;
			goto out;
		}
		if (ctrl->ops->wait) {
			/*
			 * Woken before with no answer: the transport is going
			 * (nvme-pci wakes us before DISABLING, then its wait
			 * returns at once) and @going is set soon: sleep, do
			 * not spin, until it is.
			 */
			if (woken)
				usleep_range(HMB_TRACE_CTRL_POLL_MIN_US,
					     HMB_TRACE_CTRL_POLL_MAX_US);
			ctrl->ops->wait(ctrl->priv, seq,
					timeout_ns - (now - start));
			woken = true;
		} else if (now - start < HMB_TRACE_CTRL_SPIN_NS) {
			cpu_relax();
		} else {
			usleep_range(HMB_TRACE_CTRL_POLL_MIN_US,
				     HMB_TRACE_CTRL_POLL_MAX_US);
		}
	}
	hmb_trace_clock_stamp(t1, true);
	if (status != HMB_CTRL_OK)
		ctrl->failed++;
	ret = status;
out:
	mutex_unlock(&ctrl->lock);
	return ret;
}

/**
 * hmb_trace_ctrl_going() - the channel is about to be unset: a request that
 * waits gives up now instead of at its timeout, and none is sent until
 * hmb_trace_set_ctrl() gives the area a channel again.
 * @a: the area
 *
 * Context: any; does not sleep. A transport with a wait of its own is
 * woken by its driver (nvme-pci wakes the waiter before DISABLING).
 */
void hmb_trace_ctrl_going(struct hmb_trace_area *a)
{
	WRITE_ONCE(a->ctrl.going, true);
}

/** hmb_trace_ctrl_init() - an area without a control channel yet. */
void hmb_trace_ctrl_init(struct hmb_trace_area *a)
{
	mutex_init(&a->ctrl.lock);
	a->ctrl.tracing = -1;
	a->ctrl.ring_mode = -1;
}

/** hmb_trace_ctrl_destroy() - the area goes; no request runs. */
void hmb_trace_ctrl_destroy(struct hmb_trace_area *a)
{
	mutex_destroy(&a->ctrl.lock);
}
