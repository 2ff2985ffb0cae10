// SPDX-License-Identifier: GPL-2.0-only
/*
 * The nvme-pci backend: trace areas that a patched nvme-pci
 * (kernel/patches, include/linux/nvme-hmb-trace.h) carves out of the Host
 * Memory Buffer of a controller with the HMB trace capability, and the
 * control channel carried by its vendor control command.
 *
 * nvme never imports from this module: it offers a notifier, we subscribe.
 *
 *   nvme-pci                           this backend
 *   ENABLED (after HMB enable) ------> register the area (+ control channel),
 *                                      or resume it if suspended on the
 *                                      same memory
 *   DISABLING (reset, suspend, sysfs,  suspend it: every drain and
 *     removal; before HMB disable) --> control request has stopped when
 *                                      the callback returns
 *   FREEING (before the free) -------> unregister it; an area never
 *                                      enabled is not ours
 *
 * An area kept across a reset (Memory Return) comes back as an ENABLED on
 * the same memory: the suspended registration resumes, and its consumers,
 * which kept their positions, see the producer's new generation as a
 * reset: what the device wrote after the last drain before DISABLING is
 * charged as lost to "reset" from the new generation's prev_next_seq,
 * exactly. An ENABLED on other memory unregisters the old area first.
 *
 * nvme-pci serialises its callbacks (one lock for all controllers, also
 * around the replay of enabled areas when we subscribe). Our own lock is
 * for the module's exit: it removes every area while still subscribed
 * (an area nvme-pci frees must never be read after its DISABLING), and
 * ENABLED is refused from then on.
 *
 * Built only against headers that have the series (Kbuild); without an
 * HMB-capable controller nothing is registered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/nvme.h>
#include <linux/nvme-hmb-trace.h>
#include <linux/slab.h>

#include "hmb_trace_internal.h"

/* One controller's area while its HMB is enabled. */
struct hmb_trace_nvme {
	struct list_head node;
	struct nvme_hmb_trace *trace;	/* nvme-pci's handle: the key */
	struct hmb_trace_area *area;
	const void *virt;		/* the memory registered */
	size_t size;
	bool suspended;			/* between DISABLING and ENABLED */
	char name[32];
};

static DEFINE_MUTEX(hmb_trace_nvme_lock);
static LIST_HEAD(hmb_trace_nvme_areas);		/* under hmb_trace_nvme_lock */
static bool hmb_trace_nvme_stopping;		/* under hmb_trace_nvme_lock */

/*
 * The control transport: one vendor admin command per request. nvme-pci
 * carries two arguments (every operation of include/hmb_trace_ctrl_abi.h
 * version 1 uses at most two) and one 64-bit answer, val[0].
 */
static void hmb_trace_nvme_post(void *priv, u16 op, u64 seq, const u64 arg[4])
{
	struct hmb_trace_nvme *n = priv;
	int ret;

	ret = nvme_hmb_trace_ctrl_post(n->trace, seq, op, arg[0], arg[1]);
	/* Not sent: never answered, counted as a timeout by the caller. */
	if (ret)
		pr_debug("%s: control request %llu (op %u) not sent: %d\n",
			 n->name, seq, op, ret);
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

	if (!nvme_hmb_trace_ctrl_answered(n->trace, seq, &nvme_status, &result))
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
};

static struct hmb_trace_nvme *hmb_trace_nvme_find(struct nvme_hmb_trace *t)
{
	struct hmb_trace_nvme *n;

	lockdep_assert_held(&hmb_trace_nvme_lock);
	list_for_each_entry(n, &hmb_trace_nvme_areas, node)
		if (n->trace == t)
			return n;
	return NULL;
}

/* Stops every drain and control request before it returns. */
static void hmb_trace_nvme_remove(struct hmb_trace_nvme *n)
{
	list_del(&n->node);
	hmb_trace_unregister_area(n->area);
	kfree(n);
}

static int hmb_trace_nvme_enabled(const struct nvme_hmb_trace_info *info)
{
	struct hmb_trace_nvme *n;
	const void **pages;
	unsigned long i, nr;
	int ret;

	n = hmb_trace_nvme_find(info->trace);
	if (n && !n->suspended) {
		pr_warn("%s: trace area enabled twice: ignored\n", info->name);
		return -EEXIST;
	}
	if (n && n->virt == info->virt && n->size == info->size) {
		hmb_trace_resume_area(n->area);
		if (info->has_ctrl)
			hmb_trace_set_ctrl(n->area, &hmb_trace_nvme_ctrl_ops, n);
		n->suspended = false;
		pr_info("%s: HMB trace area enabled again on the same memory: resumed\n",
			n->name);
		return 0;
	}
	if (n)
		hmb_trace_nvme_remove(n);
	/* The area is contiguous and page aligned (nvme-pci allocates it). */
	if (!info->virt || !PAGE_ALIGNED(info->virt) || !info->size ||
	    !PAGE_ALIGNED(info->size) || (info->size >> PAGE_SHIFT) > UINT_MAX) {
		pr_warn("%s: unusable trace area (%zu bytes at %p): ignored\n",
			info->name, info->size, info->virt);
		return -EINVAL;
	}
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	n->trace = info->trace;
	n->virt = info->virt;
	n->size = info->size;
	strscpy(n->name, info->name, sizeof(n->name));

	nr = info->size >> PAGE_SHIFT;
	pages = kvmalloc_array(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < nr; i++)
		pages[i] = info->virt + (i << PAGE_SHIFT);
	n->area = hmb_trace_register_area(n->name, info->dev, pages, nr,
					  PAGE_SHIFT);
	kvfree(pages);
	if (IS_ERR(n->area)) {
		ret = PTR_ERR(n->area);
		goto err_free;
	}
	if (info->has_ctrl)
		hmb_trace_set_ctrl(n->area, &hmb_trace_nvme_ctrl_ops, n);
	list_add_tail(&n->node, &hmb_trace_nvme_areas);
	pr_info("%s: HMB trace area of %zu KiB at HMB offset %llu KiB%s\n",
		n->name, info->size >> 10, info->hmb_offset >> 10,
		info->has_ctrl ? ", with control channel" : "");
	return 0;

err_free:
	pr_warn("%s: cannot register the trace area: %d\n", info->name, ret);
	kfree(n);
	return ret;
}

static int hmb_trace_nvme_event(struct notifier_block *nb,
				unsigned long event, void *data)
{
	const struct nvme_hmb_trace_info *info = data;
	struct hmb_trace_nvme *n;

	mutex_lock(&hmb_trace_nvme_lock);
	switch (event) {
	case NVME_HMB_TRACE_ENABLED:
		if (!hmb_trace_nvme_stopping)
			hmb_trace_nvme_enabled(info);
		break;
	case NVME_HMB_TRACE_DISABLING:
		n = hmb_trace_nvme_find(info->trace);
		if (n && !n->suspended) {
			hmb_trace_suspend_area(n->area);
			n->suspended = true;
		}
		break;
	case NVME_HMB_TRACE_FREEING:
		n = hmb_trace_nvme_find(info->trace);
		if (n)
			hmb_trace_nvme_remove(n);
		break;
	}
	mutex_unlock(&hmb_trace_nvme_lock);
	return NOTIFY_DONE;
}

static struct notifier_block hmb_trace_nvme_nb = {
	.notifier_call = hmb_trace_nvme_event,
};

/**
 * hmb_trace_nvme_init() - subscribe to nvme-pci's trace areas; the ones
 * enabled already are registered before this returns.
 *
 * Return: 0 or a negative errno.
 */
int hmb_trace_nvme_init(void)
{
	return nvme_hmb_trace_register_notifier(&hmb_trace_nvme_nb);
}

/**
 * hmb_trace_nvme_exit() - unsubscribe, and remove every area.
 */
void hmb_trace_nvme_exit(void)
{
	struct hmb_trace_nvme *n, *tmp;

	mutex_lock(&hmb_trace_nvme_lock);
	hmb_trace_nvme_stopping = true;
	list_for_each_entry_safe(n, tmp, &hmb_trace_nvme_areas, node)
		hmb_trace_nvme_remove(n);
	mutex_unlock(&hmb_trace_nvme_lock);
	nvme_hmb_trace_unregister_notifier(&hmb_trace_nvme_nb);
}
