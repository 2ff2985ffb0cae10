// SPDX-License-Identifier: GPL-2.0-only
/*
 * hmb_trace.ko: NVMe SSD firmware trace records from an
 * HMB trace area, republished as events of the "hmb" trace instance.
 *
 * Module entry: parameters, the workqueue, the trace instance, backends.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/time64.h>
#include <linux/trace.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>

#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

#define HMB_TRACE_INSTANCE	"hmb"
#define HMB_TRACE_SYSTEM	"hmb"

unsigned int hmb_trace_poll_interval_us = 1000;
unsigned int hmb_trace_budget = 4096;
unsigned int hmb_trace_dict_interval_ms = 1000;
struct workqueue_struct *hmb_trace_wq;

static struct trace_array *hmb_trace_tr;

static int hmb_trace_set_poll_interval(const char *val,
				       const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 10, USEC_PER_SEC);
}

static const struct kernel_param_ops hmb_trace_poll_interval_ops = {
	.set = hmb_trace_set_poll_interval,
	.get = param_get_uint,
};
module_param_cb(poll_interval_us, &hmb_trace_poll_interval_ops,
		&hmb_trace_poll_interval_us, 0644);
MODULE_PARM_DESC(poll_interval_us,
		 "Poll interval in microseconds, 10..1000000 (default 1000); idle areas back off to 10x");

static int hmb_trace_set_budget(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 1u << 20);
}

static const struct kernel_param_ops hmb_trace_budget_ops = {
	.set = hmb_trace_set_budget,
	.get = param_get_uint,
};
module_param_cb(budget, &hmb_trace_budget_ops, &hmb_trace_budget, 0644);
MODULE_PARM_DESC(budget,
		 "Records drained per firmware core per pass before yielding, 1..1048576 (default 4096)");

static int hmb_trace_set_dict_interval(const char *val,
				       const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 3600 * MSEC_PER_SEC);
}

static const struct kernel_param_ops hmb_trace_dict_interval_ops = {
	.set = hmb_trace_set_dict_interval,
	.get = param_get_uint,
};
module_param_cb(dict_interval_ms, &hmb_trace_dict_interval_ops,
		&hmb_trace_dict_interval_ms, 0644);
MODULE_PARM_DESC(dict_interval_ms,
		 "Re-emit hmb_state + the dictionary on every CPU that carries records this often, in ms; 0 = only on attach/reset (default 1000)");

static struct trace_array *hmb_trace_instance_get(void)
{
#ifdef HMB_TRACE_GET_BY_NAME_SYSTEMS
	/* NULL: every event system, so other events can join the timeline. */
	return trace_array_get_by_name(HMB_TRACE_INSTANCE, NULL);
#else
	return trace_array_get_by_name(HMB_TRACE_INSTANCE);
#endif
}

/*
 * A capture keeps what the module is only while it is loaded: trace-cmd
 * writes the event formats into trace.dat when recording ends, and the
 * tracing core removes a module's events when it unloads, so an rmmod
 * during "trace-cmd record -B hmb -e hmb" left every hmb event of the
 * capture UNKNOWN. So a tracer that enables hmb_record (its first probe
 * registered while the module is live) takes a module reference, given
 * back when the last probe goes: rmmod then fails with "Module hmb_trace
 * is in use" until the recording ends (trace-cmd disables the events it
 * enabled) or the events are disabled. The module's own enabling in
 * hmb_trace_init() (module not yet live) pins nothing, so the default
 * state unloads as before. Called under tracepoints_mutex, which
 * serialises them.
 */
static bool hmb_trace_pinned;

/**
 * hmb_trace_record_reg() - hmb_record got its first probe.
 * Return: 0 (enabling never fails here).
 */
int hmb_trace_record_reg(void)
{
	if (THIS_MODULE->state == MODULE_STATE_LIVE &&
	    !hmb_trace_pinned) {
		__module_get(THIS_MODULE);
		hmb_trace_pinned = true;
		pr_info("hmb_record enabled by a tracer: unloading waits until it is disabled\n");
	}
	return 0;
}

/** hmb_trace_record_unreg() - hmb_record lost its last probe. */
void hmb_trace_record_unreg(void)
{
	if (hmb_trace_pinned) {
		hmb_trace_pinned = false;
		module_put(THIS_MODULE);
	}
}

/*
 * Drop our reference and remove the instance. A reader holding it open
 * (trace_pipe_raw, trace-cmd record) makes trace_array_destroy() return
 * -EBUSY: the instance is then left in place, without our events (the
 * tracing core removes a module's events when it unloads); "rmdir
 * /sys/kernel/tracing/instances/hmb" removes it later, and loading the
 * module again adopts it.
 */
static void hmb_trace_instance_put(struct trace_array *tr)
{
	int ret;

	trace_array_set_clr_event(tr, HMB_TRACE_SYSTEM, NULL, false);
	trace_array_put(tr);
	ret = trace_array_destroy(tr);
	if (ret == -EBUSY)
		pr_notice("instance %s is busy (open by a reader): left in place\n",
			  HMB_TRACE_INSTANCE);
	else if (ret && ret != -ENODEV)
		pr_warn("cannot remove instance %s: %d\n", HMB_TRACE_INSTANCE,
			ret);
}

static int __init hmb_trace_init(void)
{
	int ret;

	hmb_trace_wq = alloc_workqueue("hmb_trace", WQ_HIGHPRI, 0);
	if (!hmb_trace_wq)
		return -ENOMEM;

	hmb_trace_tr = hmb_trace_instance_get();
	if (!hmb_trace_tr) {
		ret = -ENOMEM;
		goto err_destroy_wq;
	}
	/* Our events exist in every instance; enable them in "hmb" only. */
	ret = trace_array_set_clr_event(hmb_trace_tr, HMB_TRACE_SYSTEM, NULL,
					true);
	if (ret) {
		pr_err("cannot enable events in instance %s: %d\n",
		       HMB_TRACE_INSTANCE, ret);
		goto err_put_instance;
	}

	ret = hmb_trace_status_init();
	if (ret)
		goto err_put_instance;

	ret = hmb_trace_ivshmem_init();
	if (ret)
		goto err_status_exit;
	hmb_trace_bench_init();
	return 0;

err_status_exit:
	hmb_trace_status_exit();
err_put_instance:
	hmb_trace_instance_put(hmb_trace_tr);
err_destroy_wq:
	destroy_workqueue(hmb_trace_wq);
	return ret;
}
module_init(hmb_trace_init);

static void __exit hmb_trace_exit(void)
{
	hmb_trace_bench_exit();
	/* Stops and frees every ivshmem area; no drain runs after this. */
	hmb_trace_ivshmem_exit();
	/* Other users hold a reference on this module while registered. */
	WARN_ON(!hmb_trace_areas_empty());
	hmb_trace_status_exit();
	hmb_trace_instance_put(hmb_trace_tr);
	destroy_workqueue(hmb_trace_wq);
}
module_exit(hmb_trace_exit);

MODULE_DESCRIPTION("NVMe SSD firmware trace from the Host Memory Buffer into the hmb trace instance");
MODULE_AUTHOR("hmbtrace developers");
MODULE_LICENSE("GPL");
