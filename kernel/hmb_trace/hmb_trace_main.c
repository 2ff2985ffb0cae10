// SPDX-License-Identifier: GPL-2.0-only
/*
 * hmb_trace.ko: NVMe SSD firmware trace records from an
 * HMB trace area, republished as events of the "hmb" trace instance.
 *
 * Module entry: parameters, the workqueue, the trace instance, backends.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/trace.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>

#include "hmb_trace_compat.h"
#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

#define HMB_TRACE_INSTANCE	"hmb"
#define HMB_TRACE_SYSTEM	"hmb"

struct workqueue_struct *hmb_trace_wq;

static struct trace_array *hmb_trace_tr;
/* The instance existed before the module loaded: the user's; never removed. */
static bool hmb_trace_adopted;

/*
 * Defaults of every new area's tunables; each area's own are in
 * /sys/class/hmb_trace/<area>/ (hmb_trace_status.c), where they are
 * changed at run time. The parameters are read-only once loaded.
 */
struct hmb_trace_tunables hmb_trace_default_tunables = {
	.max_rate = 100000000,
	.clock_tolerance_ppm = 200,
	.poll_interval_us = 200,
	.idle_interval_us = 50000,
	.budget = 512,
	.dict_interval_ms = 0,
	.consume = HMB_TRACE_CONSUME_TRACED,
};

module_param_named(poll_interval_us,
		   hmb_trace_default_tunables.poll_interval_us, uint, 0444);
MODULE_PARM_DESC(poll_interval_us,
		 "Default pause between drain passes while records flow, in us (default 200)");
module_param_named(idle_interval_us,
		   hmb_trace_default_tunables.idle_interval_us, uint, 0444);
MODULE_PARM_DESC(idle_interval_us,
		 "Default longest pause while an area is idle, in us (default 50000)");
module_param_named(budget, hmb_trace_default_tunables.budget, uint, 0444);
MODULE_PARM_DESC(budget,
		 "Default records drained per firmware core per pass (default 512)");
module_param_named(dict_interval_ms,
		   hmb_trace_default_tunables.dict_interval_ms, uint, 0444);
MODULE_PARM_DESC(dict_interval_ms,
		 "Default period of hmb_state + dictionary re-emission in ms; 0 = only when it changes, when tracing starts and after a quiet spell (default 0)");
module_param_named(max_rate, hmb_trace_default_tunables.max_rate, uint, 0444);
MODULE_PARM_DESC(max_rate,
		 "Default most records per second a firmware core can produce; a claimed loss beyond a ring plus this rate since the core was last confirmed is counted implausible, not charged; 0 = no time bound (default 100000000)");
module_param_named(clock_tolerance_ppm,
		   hmb_trace_default_tunables.clock_tolerance_ppm, uint, 0444);
MODULE_PARM_DESC(clock_tolerance_ppm,
		 "Default bound on how far a firmware clock's rate moves between sync samples, in ppm: part of every stated conversion bound (default 200)");
static bool hmb_trace_always_consume;
module_param_named(always_consume, hmb_trace_always_consume, bool, 0444);
MODULE_PARM_DESC(always_consume,
		 "Drain new areas from registration on, not only while hmb_record is enabled in the hmb instance (default N: the firmware ring keeps its newest records while nobody traces)");

/*
 * A capture keeps what the module is only while it is loaded: trace-cmd
 * writes the event formats into trace.dat when recording ends, and the
 * tracing core removes a module's events when it unloads, so an rmmod
 * during "trace-cmd record -B hmb -e hmb" left every hmb event of the
 * capture UNKNOWN. So a tracer that enables hmb_record (its first probe
 * registered while the module is live) takes a module reference, given
 * back when the last probe goes: rmmod then fails with "Module hmb_trace
 * is in use" until the recording ends (trace-cmd disables the events it
 * enabled) or the events are disabled. The module enables nothing itself.
 * Called under tracepoints_mutex (and event_mutex), which serialises them.
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
	/* Every drain asks the gate again (hmb_trace_drain.c). */
	hmb_trace_record_generation_next();
	/* Drain what the firmware rings hold, now rather than at the next check. */
	hmb_trace_drains_kick_all();
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
 * Does the instance exist already (made by the user with mkdir, or left
 * busy by an earlier load)? Our events exist in every instance from the
 * module's load on, so looking up one of them finds the instance without
 * creating it (trace_array_get_by_name() would).
 */
static bool hmb_trace_instance_exists(void)
{
	struct trace_event_file *file;

	file = trace_get_event_file(HMB_TRACE_INSTANCE, HMB_TRACE_SYSTEM,
				    "hmb_record");
	if (IS_ERR(file))
		return false;
	trace_put_event_file(file);
	return true;
}

/*
 * Drop our reference and remove the instance, unless it was there before
 * us (adopted: the user's, left with its settings). A reader holding it
 * open (trace_pipe_raw, trace-cmd record) makes trace_array_destroy()
 * return -EBUSY: the instance is then left in place, without our events
 * (the tracing core removes a module's events when it unloads); "rmdir
 * /sys/kernel/tracing/instances/hmb" removes it later, and loading the
 * module again adopts it.
 */
static void hmb_trace_instance_put(struct trace_array *tr)
{
	int ret;

	trace_array_set_clr_event(tr, HMB_TRACE_SYSTEM, NULL, false);
	trace_array_put(tr);
	if (hmb_trace_adopted) {
		pr_info("instance %s was there before the module: left in place\n",
			HMB_TRACE_INSTANCE);
		return;
	}
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

	if (hmb_trace_always_consume)
		hmb_trace_default_tunables.consume = HMB_TRACE_CONSUME_ALWAYS;
	ret = hmb_trace_tunables_check(&hmb_trace_default_tunables);
	if (!ret)
		ret = hmb_trace_dump_check_params();
	if (ret) {
		pr_err("module parameters out of range (see modinfo hmb_trace)\n");
		return ret;
	}

	/*
	 * WQ_MEM_RECLAIM: nvme-pci's reset work (itself on a reclaim
	 * workqueue, since reclaim may wait for the disk) waits for our
	 * drain passes and clock bursts when it says DISABLING; they must
	 * be able to run without a new worker (hmb_trace_nvme.c).
	 */
	hmb_trace_wq = alloc_workqueue("hmb_trace",
				       WQ_HIGHPRI | WQ_MEM_RECLAIM |
				       HMB_TRACE_WQ_PERCPU, 0);
	if (!hmb_trace_wq)
		return -ENOMEM;

	hmb_trace_adopted = hmb_trace_instance_exists();
	hmb_trace_tr = hmb_trace_array_get_by_name(HMB_TRACE_INSTANCE);
	if (!hmb_trace_tr) {
		ret = -ENOMEM;
		goto err_destroy_wq;
	}
	/*
	 * Our events exist in every instance, disabled: a tracer enables
	 * them (trace-cmd record -B hmb -e hmb; perf, BPF and other
	 * instances too), and that is what starts the draining of the
	 * firmware rings; the "hmb" instance is the drain's gate.
	 */
	hmb_trace_events_init(hmb_trace_tr);

	ret = hmb_trace_cpuhp_init();
	if (ret)
		goto err_put_instance;

	ret = hmb_trace_status_init();
	if (ret)
		goto err_cpuhp_exit;

	hmb_trace_areas_init();
	ret = hmb_trace_ivshmem_init();
	if (ret)
		goto err_status_exit;
	ret = hmb_trace_nvme_init();
	if (ret)
		goto err_ivshmem_exit;
	return 0;

err_ivshmem_exit:
	hmb_trace_ivshmem_exit();
err_status_exit:
	hmb_trace_areas_exit();
	hmb_trace_status_exit();
err_cpuhp_exit:
	hmb_trace_cpuhp_exit();
err_put_instance:
	hmb_trace_instance_put(hmb_trace_tr);
err_destroy_wq:
	destroy_workqueue(hmb_trace_wq);
	return ret;
}
module_init(hmb_trace_init);

static void __exit hmb_trace_exit(void)
{
	/* Stop and free every nvme and ivshmem area; no drain runs after this. */
	hmb_trace_nvme_exit();
	hmb_trace_ivshmem_exit();
	/* Other users hold a reference on this module while registered. */
	WARN_ON(!hmb_trace_areas_empty());
	hmb_trace_areas_exit();
	hmb_trace_status_exit();
	hmb_trace_cpuhp_exit();
	hmb_trace_instance_put(hmb_trace_tr);
	destroy_workqueue(hmb_trace_wq);
}
module_exit(hmb_trace_exit);

MODULE_DESCRIPTION("NVMe SSD firmware trace from the Host Memory Buffer into the hmb trace instance");
MODULE_AUTHOR("hmbtrace developers");
MODULE_LICENSE("GPL");
