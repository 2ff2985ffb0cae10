// SPDX-License-Identifier: GPL-2.0-only
/*
 * nvme_hmb_fake.ko - TEST ONLY. A stand-in for the patched nvme-pci's HMB
 * trace API (include/linux/nvme-hmb-trace.h), so that hmb_trace.ko's nvme
 * backend can be run in the QEMU guest, where no controller has an HMB.
 *
 * It exports the five functions of the series (the patched nvme must not be
 * loaded at the same time) and plays a controller "fake0" whose trace area
 * is a vmalloc'ed buffer written by the reference producer: 2 cores, 100
 * records each at load. The events follow the series' rules: ENABLED
 * replayed to a late subscriber, DISABLING before FREEING, all under one
 * lock. The control command is answered at once, as the series documents
 * (Documentation/nvme-hmb-trace.rst): SYNC with the host's clock in ns,
 * RING_MODE stop with SCT 7h SC 01h, ECHO with Invalid Opcode.
 *
 * Driven by the write-only parameter "action", run like nvme-pci's reset
 * work: from a work item on a WQ_MEM_RECLAIM workqueue (the writer waits
 * for it), so that a subscriber that waits there for work of a workqueue
 * without WQ_MEM_RECLAIM trips check_flush_dependency()'s warning:
 *   reset    DISABLING, the producer re-initialised (a new generation) and
 *            50 records per core, ENABLED (a controller reset with Memory
 *            Return)
 *   resets   20 times: 2000 records per core (the drains are busy), then
 *            a reset as above
 *   free     DISABLING and FREEING (the sysfs hmb attribute cleared)
 * and by "silent" (bool): a firmware that stops answering control
 * commands. The first one posted stays in flight, unanswered; every later
 * post is -EBUSY, as nvme-pci refuses one while its command is in flight;
 * clearing it completes the one in flight with a host path error.
 * Unloading: DISABLING and FREEING if still there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/nvme-hmb-trace.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "hmb_trace_producer.h"

#define FAKE_AREA_SIZE		(256 * 1024)
#define FAKE_CORES		2
#define FAKE_EVENT		1
#define FAKE_SC_VS_UNSUPPORTED	0x701	/* SCT 7h, SC 01h */
#define FAKE_SC_INVALID_OPCODE	0x001

struct nvme_hmb_trace {
	spinlock_t lock;	/* the answer below */
	bool busy;		/* silent: a command in flight */
	bool done;
	u64 seq;
	u16 status;
	u64 result;
};

static struct nvme_hmb_trace fake_trace;
static struct hmb_trace_producer *fake_producer;
static void *fake_area;
static bool fake_enabled;
static u64 fake_records;	/* records emitted, for the next timestamps */
static bool fake_silent;
module_param_named(silent, fake_silent, bool, 0644);
MODULE_PARM_DESC(silent, "Leave control commands unanswered (a firmware that stopped answering)");

static DEFINE_MUTEX(fake_lock);
static RAW_NOTIFIER_HEAD(fake_chain);

static const struct hmb_trace_field_desc fake_fields[] = {
	{ .name = "n", .offset = 0, .size = 8, .type = HMB_TRACE_TYPE_U64,
	  .display = HMB_TRACE_DISPLAY_DEC },
};

static const struct hmb_trace_event_desc fake_events[] = {
	{ .id = FAKE_EVENT, .role = HMB_TRACE_ROLE_INSTANT,
	  .key_field = HMB_TRACE_NO_FIELD, .latency_field = HMB_TRACE_NO_FIELD,
	  .qid_field = HMB_TRACE_NO_FIELD, .cid_field = HMB_TRACE_NO_FIELD,
	  .value_field = HMB_TRACE_NO_FIELD, .name = "fake", .format = "n=%llu",
	  .nr_fields = 1, .fields = fake_fields },
};

static const struct hmb_trace_producer_config fake_config = {
	.page_size = 4096,
	.nr_cores = FAKE_CORES,
	.dict_len = 4096,
	.clock_hz = 1000000000,
	.build_id = "nvme_hmb_fake",
	.nr_events = ARRAY_SIZE(fake_events),
	.events = fake_events,
};

static void fake_info(struct nvme_hmb_trace_info *info)
{
	memset(info, 0, sizeof(*info));
	info->trace = &fake_trace;
	info->dev = NULL;
	info->name = "fake0";
	info->virt = fake_area;
	info->dma = 0;
	info->size = FAKE_AREA_SIZE;
	info->hmb_offset = 0;
	info->has_ctrl = true;
}

static void fake_notify(unsigned long event)
{
	struct nvme_hmb_trace_info info;

	lockdep_assert_held(&fake_lock);
	fake_info(&info);
	raw_notifier_call_chain(&fake_chain, event, &info);
}

static int fake_produce(unsigned int per_core)
{
	unsigned int i, c;
	u64 n;
	int ret;

	for (i = 0; i < per_core; i++) {
		for (c = 0; c < FAKE_CORES; c++) {
			n = fake_records++;
			ret = hmb_trace_emit(fake_producer, c, FAKE_EVENT,
					     1000000 + n * 1000, &n, sizeof(n),
					     NULL, 0);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Exported like the series' nvme.ko; see include/linux/nvme-hmb-trace.h. */
int nvme_hmb_trace_register_notifier(struct notifier_block *nb)
{
	struct nvme_hmb_trace_info info;
	int ret;

	mutex_lock(&fake_lock);
	ret = raw_notifier_chain_register(&fake_chain, nb);
	if (!ret && fake_enabled) {
		fake_info(&info);
		nb->notifier_call(nb, NVME_HMB_TRACE_ENABLED, &info);
	}
	mutex_unlock(&fake_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(nvme_hmb_trace_register_notifier);

void nvme_hmb_trace_unregister_notifier(struct notifier_block *nb)
{
	mutex_lock(&fake_lock);
	raw_notifier_chain_unregister(&fake_chain, nb);
	mutex_unlock(&fake_lock);
}
EXPORT_SYMBOL_GPL(nvme_hmb_trace_unregister_notifier);

int nvme_hmb_trace_ctrl_post(struct nvme_hmb_trace *t, u64 seq, u16 op,
			     u64 arg0, u64 arg1)
{
	unsigned long flags;

	if (!READ_ONCE(fake_enabled))
		return -ENODEV;
	spin_lock_irqsave(&t->lock, flags);
	if (READ_ONCE(fake_silent)) {
		int ret = t->busy ? -EBUSY : 0;

		if (!t->busy) {
			t->busy = true;
			t->done = false;
			t->seq = seq;
		}
		spin_unlock_irqrestore(&t->lock, flags);
		return ret;
	}
	t->busy = false;
	t->seq = seq;
	t->done = true;
	t->result = 0;
	switch (op) {
	case 0: case 1: case 2: case 3:		/* NOP, START, STOP, EVENT_MASK */
		t->status = 0;
		break;
	case 4:					/* RING_MODE */
		t->status = arg0 ? FAKE_SC_VS_UNSUPPORTED : 0;
		break;
	case 5:					/* SYNC: ticks are ns */
		t->status = 0;
		t->result = local_clock();
		break;
	case 6:					/* ECHO: not implemented */
		t->status = FAKE_SC_INVALID_OPCODE;
		break;
	default:
		t->status = FAKE_SC_VS_UNSUPPORTED;
	}
	spin_unlock_irqrestore(&t->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(nvme_hmb_trace_ctrl_post);

bool nvme_hmb_trace_ctrl_answered(struct nvme_hmb_trace *t, u64 seq,
				  u16 *status, u64 *result)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&t->lock, flags);
	done = t->done && t->seq == seq;
	if (done) {
		*status = t->status;
		*result = t->result;
	}
	spin_unlock_irqrestore(&t->lock, flags);
	return done;
}
EXPORT_SYMBOL_GPL(nvme_hmb_trace_ctrl_answered);

/* Answered at once, unless silent: then sleep a little (no spinning). */
void nvme_hmb_trace_ctrl_wait(struct nvme_hmb_trace *t, u64 seq,
			      u64 timeout_ns)
{
	if (READ_ONCE(fake_silent))
		usleep_range(100, 200);
}
EXPORT_SYMBOL_GPL(nvme_hmb_trace_ctrl_wait);

/*
 * Two commands always in flight, as a controller that hangs would leave
 * them: an admin Get Log Page and a read of 8 blocks at 4096 on queue 1
 * (verify.sh finds them in the crash dump).
 */
void nvme_hmb_trace_walk_inflight(struct nvme_hmb_trace *t,
				  struct nvme_hmb_trace_walker *w)
{
	static const struct nvme_hmb_trace_cmd cmds[] = {
		{ .qid = 0, .cid = 0x1003, .opcode = 0x02, .nsid = 0xffffffff,
		  .start_ns = 1 },
		{ .qid = 1, .cid = 0x2007, .opcode = 0x02, .nsid = 1,
		  .nlb = 8, .slba = 4096, .start_ns = 2 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!w->fn(w, &cmds[i]))
			break;
}
EXPORT_SYMBOL_GPL(nvme_hmb_trace_walk_inflight);

static void fake_disabling(void)
{
	if (fake_enabled) {
		fake_notify(NVME_HMB_TRACE_DISABLING);
		WRITE_ONCE(fake_enabled, false);
	}
}

/* Like nvme-pci's nvme_reset_wq. */
static struct workqueue_struct *fake_wq;

struct fake_action {
	struct work_struct work;
	const char *val;
	int ret;
};

static int fake_reset(void)
{
	int ret;

	fake_disabling();
	ret = hmb_trace_producer_init(fake_producer, fake_area,
				      FAKE_AREA_SIZE, &fake_config);
	if (!ret)
		ret = fake_produce(50);
	if (!ret) {
		WRITE_ONCE(fake_enabled, true);
		fake_notify(NVME_HMB_TRACE_ENABLED);
	}
	return ret;
}

static int fake_action_run(const char *val)
{
	int ret = 0, i;

	mutex_lock(&fake_lock);
	if (sysfs_streq(val, "reset") && fake_area) {
		ret = fake_reset();
	} else if (sysfs_streq(val, "resets") && fake_area) {
		for (i = 0; !ret && i < 20; i++) {
			ret = fake_produce(2000);
			if (!ret)
				ret = fake_reset();
		}
	} else if (sysfs_streq(val, "free") && fake_area) {
		fake_disabling();
		fake_notify(NVME_HMB_TRACE_FREEING);
		vfree(fake_area);
		fake_area = NULL;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&fake_lock);
	return ret ? -EINVAL : 0;
}

static void fake_action_work(struct work_struct *work)
{
	struct fake_action *a = container_of(work, struct fake_action, work);

	a->ret = fake_action_run(a->val);
}

static int fake_action_set(const char *val, const struct kernel_param *kp)
{
	struct fake_action a = { .val = val };

	INIT_WORK_ONSTACK(&a.work, fake_action_work);
	queue_work(fake_wq, &a.work);
	flush_work(&a.work);
	destroy_work_on_stack(&a.work);
	return a.ret;
}

static const struct kernel_param_ops fake_action_ops = {
	.set = fake_action_set,
};
module_param_cb(action, &fake_action_ops, NULL, 0200);
MODULE_PARM_DESC(action, "reset | resets | free");

static int __init fake_init(void)
{
	int ret;

	spin_lock_init(&fake_trace.lock);
	fake_wq = alloc_workqueue("nvme_hmb_fake_reset", WQ_MEM_RECLAIM, 0);
	fake_producer = kzalloc(sizeof(*fake_producer), GFP_KERNEL);
	fake_area = vzalloc(FAKE_AREA_SIZE);
	if (!fake_wq || !fake_producer || !fake_area) {
		ret = -ENOMEM;
		goto err;
	}
	ret = hmb_trace_producer_init(fake_producer, fake_area, FAKE_AREA_SIZE,
				      &fake_config);
	if (!ret)
		ret = fake_produce(100);
	if (ret) {
		pr_err("producer: %d\n", ret);
		ret = -EINVAL;
		goto err;
	}
	mutex_lock(&fake_lock);
	WRITE_ONCE(fake_enabled, true);
	fake_notify(NVME_HMB_TRACE_ENABLED);
	mutex_unlock(&fake_lock);
	pr_info("fake0: %d KiB trace area, %d cores, 100 records each\n",
		FAKE_AREA_SIZE >> 10, FAKE_CORES);
	return 0;
err:
	vfree(fake_area);
	kfree(fake_producer);
	if (fake_wq)
		destroy_workqueue(fake_wq);
	return ret;
}
module_init(fake_init);

static void __exit fake_exit(void)
{
	mutex_lock(&fake_lock);
	if (fake_area) {
		fake_disabling();
		fake_notify(NVME_HMB_TRACE_FREEING);
	}
	mutex_unlock(&fake_lock);
	vfree(fake_area);
	kfree(fake_producer);
	destroy_workqueue(fake_wq);
}
module_exit(fake_exit);

MODULE_DESCRIPTION("TEST ONLY: stand-in for the nvme-pci HMB trace API");
MODULE_LICENSE("GPL");
