// SPDX-License-Identifier: GPL-2.0-only
/*
 * The nvme-pci backend: trace areas that a patched nvme-pci
 * (kernel/patches, include/linux/nvme-hmb-trace.h) carves out of the Host
 * Memory Buffer of a controller with the HMB trace capability, and the
 * control channel carried by its vendor control command.
 *
 * nvme never imports from this module. How we subscribe depends on the
 * series the kernel carries (the one place that differs is marked "The
 * series' interface" below):
 *
 *  - Linux 6.1 (kernel/patches/000[1-7]): nvme-pci exports a notifier,
 *    the control command's functions (nvme_hmb_trace_register_notifier(),
 *    nvme_hmb_trace_ctrl_post/answered/wait()) and, from 0007, the walk of
 *    the commands in flight (nvme_hmb_trace_walk_inflight()), for all
 *    controllers;
 *  - Linux 6.12 and 7.2 (kernel/patches/6.12, 7.2: no exports):
 *    nvme-pci adds an auxiliary device "nvme.hmb_trace.N" per controller
 *    with a trace area; we bind an auxiliary driver to it and subscribe
 *    through its operations, which carry the same events, the same
 *    control command and, from 0006, the same walk (walk_inflight). The
 *    header says which (NVME_HMB_TRACE_AUXDEV_NAME; Kbuild probes the
 *    walk: HMB_TRACE_NVME_INFLIGHT).
 *
 *   nvme-pci                           this backend
 *   ENABLED (after HMB enable) ------> queue the registration (work), or
 *                                      resume the area if suspended on the
 *                                      same memory
 *   DISABLING (reset, suspend, sysfs,  suspend it: every drain and
 *     removal; before HMB disable) --> control request has stopped when
 *                                      the callback returns; then take
 *                                      the crash dump (hmb_trace_dump.c)
 *   FREEING (before the free) -------> forget it; the work unregisters it
 *
 * The rule for the callbacks. nvme-pci sends DISABLING and FREEING from
 * nvme_reset_work() and nvme_timeout() (nvme_dev_disable()), which run on
 * WQ_MEM_RECLAIM workqueues because memory reclaim may be waiting for the
 * disk they reset, and ENABLED from the reset work too. So no callback
 * may wait for anything that reclaim or that reset may be waiting for:
 *
 *  - no allocation that may do I/O: ENABLED allocates only this small
 *    record, in a no-I/O scope; everything heavy (the area's allocations,
 *    its status device, debugfs, the CPU hotplug instance, the per-CPU
 *    drain contexts) is done by hmb_trace_nvme_work(), which holds no lock
 *    a callback takes while it allocates;
 *  - no wait for work of a workqueue without WQ_MEM_RECLAIM: DISABLING
 *    cancels drains and clock bursts, which run on hmb_trace_wq
 *    (WQ_MEM_RECLAIM), allocate in a no-I/O scope, and a control request
 *    under way gives up at once (nvme-pci wakes it before DISABLING);
 *  - FREEING only forgets the area (its drains stopped at DISABLING) and
 *    leaves the unregistration, which removes a device and so allocates
 *    for its uevent, to the work.
 *
 * An area kept across a reset (Memory Return) comes back as an ENABLED on
 * the same memory: the suspended registration resumes, and its consumers,
 * which kept their positions, see the producer's new generation as a
 * reset: what the device wrote after the last drain before DISABLING is
 * charged as lost to "reset" from the new generation's prev_next_seq,
 * exactly. An ENABLED on other memory forgets the old area first.
 *
 * nvme-pci serialises its callbacks (6.1: one lock for all controllers,
 * also around the replay of enabled areas when we subscribe; the auxiliary
 * device: one lock per controller, also around the replay on subscribe
 * and the DISABLING unsubscribe sends). Our own lock
 * orders them with the work and the module's exit, which stops every area
 * while still subscribed (an area nvme-pci frees must never be read after
 * its DISABLING); ENABLED is refused from then on.
 *
 * Built only against headers that have the series (Kbuild); without an
 * HMB-capable controller nothing is registered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/auxiliary_bus.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/nvme.h>
#include <linux/nvme-hmb-trace.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "hmb_trace_compat.h"
#include "hmb_trace_dump_abi.h"
#include "hmb_trace_internal.h"

/*
 * One controller's area, from its ENABLED to the work's teardown after
 * FREEING. Under hmb_trace_nvme_lock except where said.
 */
struct hmb_trace_nvme {
	struct list_head node;		/* in hmb_trace_nvme_areas until freed */
	void *trace;			/* nvme-pci's handle: the key */
	struct device *dev;		/* a reference on the controller's */
	struct hmb_trace_area *area;	/* NULL until the work registered it */
	struct work_struct work;	/* registration, resume, teardown */
	const void *virt;		/* the memory registered */
	size_t size;
	u64 gen;			/* nvme-pci's generation of it (or 0) */
	bool has_ctrl;
	bool enabled;			/* between ENABLED and DISABLING */
	bool suspended;			/* @area is not read */
	bool freed;			/* FREEING came: the work tears down */
	bool removing;			/* our remove: DISABLING is the last */
	bool busy;			/* @work queued or running */
	char name[32];
};

/* An ENABLED, from either interface of the series. */
struct hmb_trace_nvme_info {
	void *trace;			/* the key */
	struct device *dev;		/* the controller's PCI device */
	const char *name;		/* "nvme0" */
	void *virt;
	size_t size;
	u64 hmb_offset;
	u64 gen;			/* 0 where nvme-pci has none (6.1) */
	bool has_ctrl;
};

/* The series' interface: the control command (see below). */
static int hmb_trace_nvme_ctrl_post(void *trace, u64 seq, u16 op, u64 arg0,
				    u64 arg1);
static bool hmb_trace_nvme_ctrl_answered(void *trace, u64 seq, u16 *status,
					 u64 *result);
static void hmb_trace_nvme_ctrl_wait(void *trace, u64 seq, u64 timeout_ns);
/*
 * The host's commands in flight, for a crash dump; NULL where the series
 * cannot list them.
 */
static const struct hmb_trace_inflight *
hmb_trace_nvme_inflight(void *trace, struct hmb_trace_inflight *buf);
#ifdef HMB_TRACE_NVME_INFLIGHT
/* The series' interface: @w->fn for each of @trace's commands in flight. */
static void hmb_trace_nvme_walk_inflight(void *trace,
					 struct nvme_hmb_trace_walker *w);
#endif

static DEFINE_MUTEX(hmb_trace_nvme_lock);
static LIST_HEAD(hmb_trace_nvme_areas);		/* under hmb_trace_nvme_lock */
static bool hmb_trace_nvme_stopping;		/* under hmb_trace_nvme_lock */
/* Registrations and teardowns; flushed at init (replay) and exit. */
static struct workqueue_struct *hmb_trace_nvme_wq;

/*
 * The control transport: one vendor admin command per request. nvme-pci
 * carries two arguments (every operation of include/hmb_trace_ctrl_abi.h
 * version 1 uses at most two) and one 64-bit answer, val[0].
 */
static int hmb_trace_nvme_post(void *priv, u16 op, u64 seq, const u64 arg[4])
{
	struct hmb_trace_nvme *n = priv;
	int ret;

	/*
	 * -EBUSY: the previous command has not completed (it timed out
	 * here, and lives until it completes, a reset cancels it, or the
	 * admin timeout resets the controller): nothing more is sent.
	 */
	ret = hmb_trace_nvme_ctrl_post(n->trace, seq, op, arg[0], arg[1]);
	if (ret)
		pr_debug("%s: control request %llu (op %u) not sent: %d\n",
			 n->name, seq, op, ret);
	return ret;
}

/* Sleep until the command completes, or DISABLING wakes us. */
static void hmb_trace_nvme_wait(void *priv, u64 seq, u64 timeout_ns)
{
	struct hmb_trace_nvme *n = priv;

	hmb_trace_nvme_ctrl_wait(n->trace, seq, timeout_ns);
}

/* NVMe completion status (SCT, SC) to the control channel's status. */
static u16 hmb_trace_nvme_status(const struct hmb_trace_nvme *n, u16 status)
{
	u16 sct = (status >> 8) & 0x7;
	u16 sc = status & 0xff;

	if (!sct && !sc)
		return HMB_CTRL_OK;
	if ((sct == NVME_HMB_TRACE_SCT_VS &&
	     sc == NVME_HMB_TRACE_SC_UNSUPPORTED) ||
	    (!sct && sc == NVME_SC_INVALID_OPCODE))
		return HMB_CTRL_UNSUPPORTED;
	if (status == NVME_SC_HOST_PATH_ERROR ||
	    status == NVME_SC_HOST_ABORTED_CMD)
		/* Never reached the controller, or cancelled: a reset. */
		pr_debug("%s: control command not delivered: NVMe status %#x\n",
			 n->name, status);
	else if (!(sct == NVME_HMB_TRACE_SCT_VS &&
		   sc == NVME_HMB_TRACE_SC_INVALID))
		pr_notice_ratelimited("%s: control command failed: NVMe status %#x\n",
				      n->name, status);
	return HMB_CTRL_INVALID;
}

static bool hmb_trace_nvme_answered(void *priv, u64 seq, u16 *status,
				    u64 val[4])
{
	struct hmb_trace_nvme *n = priv;
	u16 nvme_status;
	u64 result;

	if (!hmb_trace_nvme_ctrl_answered(n->trace, seq, &nvme_status, &result))
		return false;
	*status = hmb_trace_nvme_status(n, nvme_status & 0x7ff);
	val[0] = result;
	val[1] = 0;
	val[2] = 0;
	val[3] = 0;
	return true;
}

static const struct hmb_trace_ctrl_ops hmb_trace_nvme_ctrl_ops = {
	.post = hmb_trace_nvme_post,
	.answered = hmb_trace_nvme_answered,
	.wait = hmb_trace_nvme_wait,
};

static struct hmb_trace_nvme *hmb_trace_nvme_find(void *t)
{
	struct hmb_trace_nvme *n;

	lockdep_assert_held(&hmb_trace_nvme_lock);
	list_for_each_entry(n, &hmb_trace_nvme_areas, node)
		if (n->trace == t)
			return n;
	return NULL;
}

static struct hmb_trace_area *hmb_trace_nvme_register(struct hmb_trace_nvme *n);

/* Start reading a registered, suspended area that is enabled. */
static void hmb_trace_nvme_resume(struct hmb_trace_nvme *n)
{
	lockdep_assert_held(&hmb_trace_nvme_lock);
	hmb_trace_resume_area(n->area);
	if (n->has_ctrl)
		hmb_trace_set_ctrl(n->area, &hmb_trace_nvme_ctrl_ops, n);
	n->suspended = false;
}

/* Stop reading it: nothing reads the area when this returns. */
static void hmb_trace_nvme_suspend(struct hmb_trace_nvme *n)
{
	lockdep_assert_held(&hmb_trace_nvme_lock);
	if (n->area && !n->suspended)
		hmb_trace_suspend_area(n->area);
	n->suspended = true;
}

/* Have the work look at @n (it re-reads every flag under the lock). */
static void hmb_trace_nvme_queue(struct hmb_trace_nvme *n)
{
	lockdep_assert_held(&hmb_trace_nvme_lock);
	if (!n->busy) {
		n->busy = true;
		queue_work(hmb_trace_nvme_wq, &n->work);
	}
}

/* FREEING, or ENABLED on other memory: the memory goes; forget @n. */
static void hmb_trace_nvme_forget(struct hmb_trace_nvme *n)
{
	lockdep_assert_held(&hmb_trace_nvme_lock);
	hmb_trace_nvme_suspend(n);
	n->enabled = false;
	n->freed = true;
	list_del(&n->node);
	hmb_trace_nvme_queue(n);
}

/*
 * Registration, resume and teardown, away from nvme-pci's reset path. The
 * lock is dropped while registering (it allocates) and unregistering; the
 * area is registered suspended, and read only if it is still enabled when
 * the lock is taken again. Loops until nothing is left to do, then clears
 * @busy, so every flag a callback set meanwhile is seen.
 */
static void hmb_trace_nvme_work(struct work_struct *work)
{
	struct hmb_trace_nvme *n = container_of(work, struct hmb_trace_nvme,
						work);
	struct hmb_trace_area *area;

	mutex_lock(&hmb_trace_nvme_lock);
	while (!n->freed && !n->area) {
		mutex_unlock(&hmb_trace_nvme_lock);
		area = hmb_trace_nvme_register(n);
		mutex_lock(&hmb_trace_nvme_lock);
		if (IS_ERR(area)) {
			pr_warn("%s: cannot register the trace area: %ld\n",
				n->name, PTR_ERR(area));
			if (n->freed)
				break;
			/*
			 * Stays unregistered: an ENABLED on the same memory
			 * tries again, FREEING tears @n down.
			 */
			n->busy = false;
			mutex_unlock(&hmb_trace_nvme_lock);
			return;
		}
		n->area = area;
		n->suspended = true;
	}
	if (n->freed) {
		mutex_unlock(&hmb_trace_nvme_lock);
		/* Stops what DISABLING left (nothing) and frees everything. */
		hmb_trace_unregister_area(n->area);
		put_device(n->dev);
		kfree(n);
		return;
	}
	if (n->enabled && n->suspended)
		hmb_trace_nvme_resume(n);
	n->busy = false;
	mutex_unlock(&hmb_trace_nvme_lock);
}

/*
 * The registration proper: the area suspended (hmb_trace_nvme_work()
 * resumes it). Process context, no lock held.
 */
static struct hmb_trace_area *hmb_trace_nvme_register(struct hmb_trace_nvme *n)
{
	struct hmb_trace_area *area;
	unsigned long i, nr = n->size >> PAGE_SHIFT;
	const void **pages;

	pages = kvmalloc_array(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < nr; i++)
		pages[i] = n->virt + (i << PAGE_SHIFT);
	area = hmb_trace_register_area_suspended(n->name, n->dev, pages, nr,
						 PAGE_SHIFT);
	kvfree(pages);
	return area;
}

static void hmb_trace_nvme_enabled(const struct hmb_trace_nvme_info *info)
{
	struct hmb_trace_nvme *n;
	unsigned int noio;

	lockdep_assert_held(&hmb_trace_nvme_lock);
	n = hmb_trace_nvme_find(info->trace);
	if (n && n->enabled) {
		pr_warn("%s: trace area enabled twice: ignored\n", info->name);
		return;
	}
	if (n && n->virt == info->virt && n->size == info->size &&
	    n->gen == info->gen) {
		n->enabled = true;
		/*
		 * Cheap (flags, queued work); else the work resumes it, or
		 * registers it if that failed before.
		 */
		if (n->area && !n->busy)
			hmb_trace_nvme_resume(n);
		else
			hmb_trace_nvme_queue(n);
		pr_info("%s: HMB trace area enabled again on the same memory: resumed\n",
			n->name);
		return;
	}
	if (n)
		hmb_trace_nvme_forget(n);
	/* The area is contiguous and page aligned (nvme-pci allocates it). */
	if (!info->virt || !PAGE_ALIGNED(info->virt) || !info->size ||
	    !PAGE_ALIGNED(info->size) || (info->size >> PAGE_SHIFT) > UINT_MAX) {
		pr_warn("%s: unusable trace area (%zu bytes at %p): ignored\n",
			info->name, info->size, info->virt);
		return;
	}
	/* Possibly in nvme-pci's reset work: no I/O from reclaim. */
	noio = memalloc_noio_save();
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	memalloc_noio_restore(noio);
	if (!n)
		return;
	n->trace = info->trace;
	n->dev = get_device(info->dev);
	n->virt = info->virt;
	n->size = info->size;
	n->gen = info->gen;
	n->has_ctrl = info->has_ctrl;
	n->enabled = true;
	n->suspended = true;
	strscpy(n->name, info->name, sizeof(n->name));
	INIT_WORK(&n->work, hmb_trace_nvme_work);
	list_add_tail(&n->node, &hmb_trace_nvme_areas);
	hmb_trace_nvme_queue(n);
	pr_info("%s: HMB trace area of %zu KiB at HMB offset %llu KiB%s\n",
		n->name, info->size >> 10, info->hmb_offset >> 10,
		info->has_ctrl ? ", with control channel" : "");
}

/* An event of nvme-pci's for the area @trace; @info for ENABLED only. */
static void hmb_trace_nvme_event(unsigned long event, void *trace,
				 const struct hmb_trace_nvme_info *info)
{
	struct hmb_trace_inflight walk;
	struct hmb_trace_nvme *n;

	mutex_lock(&hmb_trace_nvme_lock);
	switch (event) {
	case NVME_HMB_TRACE_ENABLED:
		if (!hmb_trace_nvme_stopping)
			hmb_trace_nvme_enabled(info);
		break;
	case NVME_HMB_TRACE_DISABLING:
		n = hmb_trace_nvme_find(trace);
		if (n) {
			n->enabled = false;
			hmb_trace_nvme_suspend(n);
			/*
			 * What the ring held, before the device overwrites
			 * it, and the commands the reset is about to cancel.
			 */
			if (n->area)
				hmb_trace_dump_take(n->area, n->removing ?
						    HMB_DUMP_REASON_REMOVED :
						    HMB_DUMP_REASON_DISABLING,
						    hmb_trace_nvme_inflight(trace,
									    &walk));
		}
		break;
	case NVME_HMB_TRACE_FREEING:
		n = hmb_trace_nvme_find(trace);
		if (n)
			hmb_trace_nvme_forget(n);
		break;
	}
	mutex_unlock(&hmb_trace_nvme_lock);
}

/*
 * The crash dump's commands in flight (INFLIGHT), through the series'
 * walker: called from DISABLING, so nothing here sleeps or allocates.
 */
#ifdef HMB_TRACE_NVME_INFLIGHT
struct hmb_trace_nvme_walk {
	struct nvme_hmb_trace_walker walker;
	bool (*add)(void *dump, const struct hmb_dump_cmd *cmd);
	void *dump;
};

static bool hmb_trace_nvme_inflight_one(struct nvme_hmb_trace_walker *walker,
					const struct nvme_hmb_trace_cmd *c)
{
	struct hmb_trace_nvme_walk *w =
		container_of(walker, struct hmb_trace_nvme_walk, walker);
	struct hmb_dump_cmd cmd = {
		.qid = c->qid,
		.cid = c->cid,
		.opcode = c->opcode,
		.nsid = c->nsid,
		.nlb = c->nlb,
		.slba = c->slba,
		.submit_ns = c->start_ns,
	};

	return w->add(w->dump, &cmd);
}

static void hmb_trace_nvme_walk(void *trace,
				bool (*add)(void *dump,
					    const struct hmb_dump_cmd *cmd),
				void *dump)
{
	struct hmb_trace_nvme_walk w = {
		.walker.fn = hmb_trace_nvme_inflight_one,
		.add = add,
		.dump = dump,
	};

	hmb_trace_nvme_walk_inflight(trace, &w.walker);
}

static const struct hmb_trace_inflight *
hmb_trace_nvme_inflight(void *trace, struct hmb_trace_inflight *buf)
{
	buf->walk = hmb_trace_nvme_walk;
	buf->ctx = trace;
	return buf;
}
#else /* the series cannot list them (before 6.1's 0007, 6.12/7.2's 0006) */
static const struct hmb_trace_inflight *
hmb_trace_nvme_inflight(void *trace, struct hmb_trace_inflight *buf)
{
	return NULL;
}
#endif

/*
 * The series' interface: everything that differs between the 6.1 series
 * (exported notifier and control command) and the 6.12/7.2 series (an
 * auxiliary device with operations) is in this block.
 */
#ifdef NVME_HMB_TRACE_AUXDEV_NAME

/* Stop reading @trace and unregister it before this returns. */
static void hmb_trace_nvme_forget_sync(void *trace)
{
	struct hmb_trace_nvme *n;

	mutex_lock(&hmb_trace_nvme_lock);
	n = hmb_trace_nvme_find(trace);
	if (n)
		hmb_trace_nvme_forget(n);
	mutex_unlock(&hmb_trace_nvme_lock);
	flush_workqueue(hmb_trace_nvme_wq);
}

static int hmb_trace_nvme_ctrl_post(void *trace, u64 seq, u16 op, u64 arg0,
				    u64 arg1)
{
	struct nvme_hmb_trace_device *tdev = trace;

	return tdev->host->ctrl_post(tdev, seq, op, arg0, arg1);
}

static bool hmb_trace_nvme_ctrl_answered(void *trace, u64 seq, u16 *status,
					 u64 *result)
{
	struct nvme_hmb_trace_device *tdev = trace;

	return tdev->host->ctrl_answered(tdev, seq, status, result);
}

static void hmb_trace_nvme_ctrl_wait(void *trace, u64 seq, u64 timeout_ns)
{
	struct nvme_hmb_trace_device *tdev = trace;

	tdev->host->ctrl_wait(tdev, seq, timeout_ns);
}

#ifdef HMB_TRACE_NVME_INFLIGHT
static void hmb_trace_nvme_walk_inflight(void *trace,
					 struct nvme_hmb_trace_walker *w)
{
	struct nvme_hmb_trace_device *tdev = trace;

	tdev->host->walk_inflight(tdev, w);
}
#endif

/* nvme-pci's notice, under its controller's lock (the rule above). */
static void hmb_trace_nvme_notify(void *priv, enum nvme_hmb_trace_event event,
				  const struct nvme_hmb_trace_area *area)
{
	struct nvme_hmb_trace_device *tdev = priv;
	struct hmb_trace_nvme_info info = {
		.trace = tdev,
		.dev = tdev->adev.dev.parent,
		.name = tdev->name,
		.virt = area->virt,
		.size = area->size,
		.hmb_offset = area->hmb_offset,
		.gen = area->gen,
		.has_ctrl = area->has_ctrl,
	};

	hmb_trace_nvme_event(event, tdev, &info);
}

static const struct nvme_hmb_trace_ops hmb_trace_nvme_ops = {
	.notify = hmb_trace_nvme_notify,
};

static int hmb_trace_nvme_probe(struct auxiliary_device *adev,
				const struct auxiliary_device_id *id)
{
	struct nvme_hmb_trace_device *tdev = to_nvme_hmb_trace_device(adev);

	/* An enabled area comes as ENABLED before this returns. */
	return tdev->host->subscribe(tdev, &hmb_trace_nvme_ops, tdev);
}

/*
 * The controller goes (nvme-pci's remove), or we do: unsubscribing sends
 * DISABLING (the drains stop), and the area is unregistered before nvme-pci
 * may free it.
 */
static void hmb_trace_nvme_remove(struct auxiliary_device *adev)
{
	struct nvme_hmb_trace_device *tdev = to_nvme_hmb_trace_device(adev);
	struct hmb_trace_nvme *n;

	mutex_lock(&hmb_trace_nvme_lock);
	n = hmb_trace_nvme_find(tdev);
	if (n)
		n->removing = true;
	mutex_unlock(&hmb_trace_nvme_lock);
	tdev->host->unsubscribe(tdev);
	hmb_trace_nvme_forget_sync(tdev);
}

static const struct auxiliary_device_id hmb_trace_nvme_ids[] = {
	{ .name = "nvme." NVME_HMB_TRACE_AUXDEV_NAME },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, hmb_trace_nvme_ids);

static struct auxiliary_driver hmb_trace_nvme_driver = {
	.name = "nvme",
	.probe = hmb_trace_nvme_probe,
	.remove = hmb_trace_nvme_remove,
	.id_table = hmb_trace_nvme_ids,
};

static int hmb_trace_nvme_subscribe(void)
{
	return auxiliary_driver_register(&hmb_trace_nvme_driver);
}

static void hmb_trace_nvme_unsubscribe(void)
{
	auxiliary_driver_unregister(&hmb_trace_nvme_driver);
}

#else /* the 6.1 series: nvme-pci's exports */

static int hmb_trace_nvme_ctrl_post(void *trace, u64 seq, u16 op, u64 arg0,
				    u64 arg1)
{
	return nvme_hmb_trace_ctrl_post(trace, seq, op, arg0, arg1);
}

static bool hmb_trace_nvme_ctrl_answered(void *trace, u64 seq, u16 *status,
					 u64 *result)
{
	return nvme_hmb_trace_ctrl_answered(trace, seq, status, result);
}

static void hmb_trace_nvme_ctrl_wait(void *trace, u64 seq, u64 timeout_ns)
{
	nvme_hmb_trace_ctrl_wait(trace, seq, timeout_ns);
}

#ifdef HMB_TRACE_NVME_INFLIGHT
static void hmb_trace_nvme_walk_inflight(void *trace,
					 struct nvme_hmb_trace_walker *w)
{
	nvme_hmb_trace_walk_inflight(trace, w);
}
#endif

static int hmb_trace_nvme_notifier(struct notifier_block *nb,
				   unsigned long event, void *data)
{
	const struct nvme_hmb_trace_info *ni = data;
	struct hmb_trace_nvme_info info = {
		.trace = ni->trace,
		.dev = ni->dev,
		.name = ni->name,
		.virt = ni->virt,
		.size = ni->size,
		.hmb_offset = ni->hmb_offset,
		.has_ctrl = ni->has_ctrl,
	};

	hmb_trace_nvme_event(event, ni->trace, &info);
	return NOTIFY_DONE;
}

static struct notifier_block hmb_trace_nvme_nb = {
	.notifier_call = hmb_trace_nvme_notifier,
};

static int hmb_trace_nvme_subscribe(void)
{
	return nvme_hmb_trace_register_notifier(&hmb_trace_nvme_nb);
}

/*
 * Every area is stopped and removed first (hmb_trace_nvme_exit()): 6.1's
 * notifier sends nothing on unsubscribe.
 */
static void hmb_trace_nvme_unsubscribe(void)
{
	nvme_hmb_trace_unregister_notifier(&hmb_trace_nvme_nb);
}

#endif /* NVME_HMB_TRACE_AUXDEV_NAME */

/**
 * hmb_trace_nvme_init() - subscribe to nvme-pci's trace areas; the ones
 * enabled already are registered before this returns.
 *
 * Return: 0 or a negative errno.
 */
int hmb_trace_nvme_init(void)
{
	int ret;

	hmb_trace_nvme_wq = alloc_workqueue("hmb_trace_nvme", HMB_TRACE_WQ_PERCPU,
					    0);
	if (!hmb_trace_nvme_wq)
		return -ENOMEM;
	ret = hmb_trace_nvme_subscribe();
	if (ret) {
		destroy_workqueue(hmb_trace_nvme_wq);
		return ret;
	}
	/* The replayed areas: registered when insmod returns. */
	flush_workqueue(hmb_trace_nvme_wq);
	return 0;
}

/**
 * hmb_trace_nvme_exit() - stop every area while still subscribed, remove
 * them, and unsubscribe.
 */
void hmb_trace_nvme_exit(void)
{
	struct hmb_trace_nvme *n, *tmp;

	mutex_lock(&hmb_trace_nvme_lock);
	hmb_trace_nvme_stopping = true;
	list_for_each_entry_safe(n, tmp, &hmb_trace_nvme_areas, node)
		hmb_trace_nvme_forget(n);
	mutex_unlock(&hmb_trace_nvme_lock);
	/* Every teardown, including those FREEING queued before. */
	flush_workqueue(hmb_trace_nvme_wq);
	hmb_trace_nvme_unsubscribe();
	destroy_workqueue(hmb_trace_nvme_wq);
}
