// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ivshmem-plain backend: the trace area is BAR2 of a
 * QEMU ivshmem-plain device (1af4:1110), written by the firmware simulator
 * on the host. The mapping is cacheable (MEMREMAP_WB): BAR2 is host RAM,
 * coherent with the external writer. The host side never writes it.
 *
 * On a real VM host an ivshmem device may share memory for anything, so
 * the driver binds none by default: only a device named in the module
 * parameter ivshmem= (PCI names, comma separated), or one whose
 * driver_override is "hmb_trace" (the PCI core then offers it to this
 * driver only). The probe refuses every other with -ENODEV.
 *
 * The control channel of the mock (include/hmb_trace_ctrl_abi.h) is a
 * mailbox in BAR2 of another ivshmem-plain device, named after the area's
 * in the parameter: ivshmem=AREA+MAILBOX (e.g. 0000:00:04.0+0000:00:05.0).
 * The mailbox device is bound to this driver too, as a mailbox: its probe
 * enables and maps it (it is the only memory of the mock the host
 * writes; the trace area never). The area's probe waits for it
 * (-EPROBE_DEFER) and links itself to it as a consumer (device link), so
 * unbinding the mailbox unbinds the area first, and nothing uses a device
 * that no driver owns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "hmb_trace_compat.h"
#include "hmb_trace_internal.h"

#define HMB_TRACE_IVSHMEM_DEVICE_ID	0x1110
#define HMB_TRACE_IVSHMEM_BAR		2
#define HMB_TRACE_IVSHMEM_MAX_NAMED	16

/* Read-only: the set of devices to bind is fixed at load. */
static char *hmb_trace_ivshmem_names[HMB_TRACE_IVSHMEM_MAX_NAMED];
static unsigned int hmb_trace_ivshmem_nr_names;
module_param_array_named(ivshmem, hmb_trace_ivshmem_names, charp,
			 &hmb_trace_ivshmem_nr_names, 0444);
MODULE_PARM_DESC(ivshmem,
		 "ivshmem-plain devices to bind, by PCI name (0000:00:04.0,...), each optionally +MAILBOX (the PCI name of its control channel's device); others only with driver_override=hmb_trace");

/*
 * drvdata of a bound device: an area, or a mailbox (@mailbox set, only
 * @mb valid).
 */
struct hmb_trace_ivshmem {
	bool mailbox;
	void *base;
	struct hmb_trace_area *area;
	struct pci_dev *mb_dev;		/* area: the mailbox's device, or NULL */
	void *mb;			/* its BAR2, HMB_CTRL_MAILBOX_SIZE bytes */
};

static struct pci_driver hmb_trace_ivshmem_driver;

/* The parameter entry naming @pdev ("NAME" or "NAME+MAILBOX"), or NULL. */
static const char *hmb_trace_ivshmem_entry(struct pci_dev *pdev)
{
	size_t n = strlen(pci_name(pdev));
	unsigned int i;

	for (i = 0; i < hmb_trace_ivshmem_nr_names; i++) {
		const char *e = hmb_trace_ivshmem_names[i];

		if (!strncasecmp(e, pci_name(pdev), n) &&
		    (e[n] == '\0' || e[n] == '+'))
			return e;
	}
	return NULL;
}

static bool hmb_trace_ivshmem_named(struct pci_dev *pdev)
{
	return hmb_trace_ivshmem_entry(pdev);
}

/* Is @pdev named as an area's mailbox ("AREA+MAILBOX")? */
static bool hmb_trace_ivshmem_is_mailbox(struct pci_dev *pdev)
{
	const char *name = pci_name(pdev), *e;
	unsigned int i;

	for (i = 0; i < hmb_trace_ivshmem_nr_names; i++) {
		e = strchr(hmb_trace_ivshmem_names[i], '+');
		if (e && !strcasecmp(e + 1, name))
			return true;
	}
	return false;
}

/*
 * The mailbox transport: the request half is ours, the response half the
 * device's (hmb-fwsim polls the request's seq).
 */
static int hmb_trace_mb_post(void *priv, u16 op, u64 seq, const u64 arg[4])
{
	struct hmb_ctrl_request *req = priv;
	unsigned int i;

	/*
	 * seq 0 first: a device still copying a request that timed out sees
	 * seq change under it and drops the copy, instead of acting on old
	 * and new arguments mixed.
	 */
	WRITE_ONCE(req->seq, 0);
	/*
	 * seq 0 before the new arguments; paired with the device's re-read
	 * of seq. virt_wmb(), not smp_wmb(): the device is a process on
	 * the VM host, on another CPU even when this kernel is not SMP
	 * (where smp_wmb() is only a compiler barrier).
	 */
	virt_wmb();
	WRITE_ONCE(req->magic, HMB_CTRL_MAGIC);
	WRITE_ONCE(req->version, HMB_CTRL_VERSION);
	WRITE_ONCE(req->op, op);
	for (i = 0; i < ARRAY_SIZE(req->arg); i++)
		WRITE_ONCE(req->arg[i], arg[i]);
	/* Paired with the device's acquire after it reads a new seq. */
	virt_wmb();
	WRITE_ONCE(req->seq, seq);
	return 0;
}

static bool hmb_trace_mb_answered(void *priv, u64 seq, u16 *status,
				  u64 val[4])
{
	const struct hmb_ctrl_response *rsp = priv + HMB_CTRL_RSP_OFFSET;
	unsigned int i;

	if (READ_ONCE(rsp->seq) != seq ||
	    READ_ONCE(rsp->magic) != HMB_CTRL_MAGIC)
		return false;
	/* Paired with the device's release before it writes rsp.seq. */
	virt_rmb();
	*status = READ_ONCE(rsp->status);
	for (i = 0; i < ARRAY_SIZE(rsp->val); i++)
		val[i] = READ_ONCE(rsp->val[i]);
	return true;
}

static const struct hmb_trace_ctrl_ops hmb_trace_mb_ops = {
	.post = hmb_trace_mb_post,
	.answered = hmb_trace_mb_answered,
};

/* Bind a mailbox device: enable it and map its BAR2. */
static int hmb_trace_ivshmem_mb_probe(struct pci_dev *pdev)
{
	const int bar = HMB_TRACE_IVSHMEM_BAR;
	struct hmb_trace_ivshmem *iv;
	int ret;

	iv = devm_kzalloc(&pdev->dev, sizeof(*iv), GFP_KERNEL);
	if (!iv)
		return -ENOMEM;
	iv->mailbox = true;
	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;
	if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, bar) < HMB_CTRL_MAILBOX_SIZE) {
		dev_err(&pdev->dev, "control mailbox: BAR%d smaller than %u bytes\n",
			bar, HMB_CTRL_MAILBOX_SIZE);
		ret = -ENODEV;
		goto err_disable;
	}
	ret = pci_request_region(pdev, bar, KBUILD_MODNAME "_ctrl");
	if (ret)
		goto err_disable;
	iv->mb = memremap(pci_resource_start(pdev, bar), HMB_CTRL_MAILBOX_SIZE,
			  MEMREMAP_WB);
	if (!iv->mb) {
		ret = -ENOMEM;
		goto err_release;
	}
	pci_set_drvdata(pdev, iv);
	dev_info(&pdev->dev, "control mailbox bound\n");
	return 0;

err_release:
	pci_release_region(pdev, bar);
err_disable:
	pci_disable_device(pdev);
	return ret;
}

/* The area's consumers were unbound first (device link). */
static void hmb_trace_ivshmem_mb_remove(struct pci_dev *pdev)
{
	struct hmb_trace_ivshmem *iv = pci_get_drvdata(pdev);

	memunmap(iv->mb);
	pci_release_region(pdev, HMB_TRACE_IVSHMEM_BAR);
	pci_disable_device(pdev);
}

/*
 * The mailbox named after '+' in @pdev's entry, if any: bound to this
 * driver (else -EPROBE_DEFER: its probe has not run yet), and linked as
 * our supplier.
 */
static int hmb_trace_ivshmem_mailbox(struct pci_dev *pdev,
				     struct hmb_trace_ivshmem *iv)
{
	const char *e = hmb_trace_ivshmem_entry(pdev);
	unsigned int dom, bus, slot, fn;
	struct hmb_trace_ivshmem *mbv;
	struct pci_dev *mb;
	int ret = 0;

	e = e ? strchr(e, '+') : NULL;
	if (!e)
		return 0;
	if (sscanf(e + 1, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4) {
		dev_err(&pdev->dev, "ivshmem=...+%s: not a PCI name\n", e + 1);
		return -EINVAL;
	}
	mb = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, fn));
	if (!mb) {
		dev_err(&pdev->dev, "control mailbox %s: no such device\n",
			e + 1);
		return -ENODEV;
	}
	device_lock(&mb->dev);
	mbv = mb->dev.driver == &hmb_trace_ivshmem_driver.driver ?
	      pci_get_drvdata(mb) : NULL;
	if (!mbv || !mbv->mailbox) {
		ret = -EPROBE_DEFER;
	} else if (!device_link_add(&pdev->dev, &mb->dev,
				    DL_FLAG_AUTOREMOVE_CONSUMER)) {
		ret = -EINVAL;
	} else {
		iv->mb_dev = mb;
		iv->mb = mbv->mb;
	}
	device_unlock(&mb->dev);
	if (ret) {
		pci_dev_put(mb);
		return dev_err_probe(&pdev->dev, ret,
				     "control mailbox %s not usable\n", e + 1);
	}
	dev_info(&pdev->dev, "control channel: mailbox in %s\n", pci_name(mb));
	return 0;
}

static void hmb_trace_ivshmem_mailbox_put(struct hmb_trace_ivshmem *iv)
{
	if (!iv->mb_dev)
		return;
	pci_dev_put(iv->mb_dev);
	iv->mb_dev = NULL;
	iv->mb = NULL;
}

/*
 * True when this device was handed to us. The PCI core offers a device
 * whose driver_override is set only to the driver of that name, so a
 * non-NULL driver_override here is "hmb_trace" (read under the device
 * lock, which the driver core holds around probe).
 */
static bool hmb_trace_ivshmem_wanted(struct pci_dev *pdev)
{
	if (pdev->vendor != PCI_VENDOR_ID_REDHAT_QUMRANET ||
	    pdev->device != HMB_TRACE_IVSHMEM_DEVICE_ID) {
		dev_info(&pdev->dev,
			 "not an ivshmem-plain device (%04x:%04x): not binding\n",
			 pdev->vendor, pdev->device);
		return false;
	}
	if (hmb_trace_pci_has_driver_override(pdev) ||
	    hmb_trace_ivshmem_named(pdev) ||
	    hmb_trace_ivshmem_is_mailbox(pdev))
		return true;
	dev_info(&pdev->dev,
		 "ivshmem device not bound (it may not be a trace area): load with ivshmem=%s, or echo %s > /sys/bus/pci/devices/%s/driver_override; echo %s > /sys/bus/pci/drivers_probe\n",
		 pci_name(pdev), KBUILD_MODNAME, pci_name(pdev),
		 pci_name(pdev));
	return false;
}

static int hmb_trace_ivshmem_probe(struct pci_dev *pdev,
				   const struct pci_device_id *id)
{
	const int bar = HMB_TRACE_IVSHMEM_BAR;
	struct device *dev = &pdev->dev;
	struct hmb_trace_ivshmem *iv;
	resource_size_t start, len;
	const void **pages;
	unsigned long i, nr;
	int ret;

	if (!hmb_trace_ivshmem_wanted(pdev))
		return -ENODEV;
	if (hmb_trace_ivshmem_is_mailbox(pdev))
		return hmb_trace_ivshmem_mb_probe(pdev);

	iv = devm_kzalloc(dev, sizeof(*iv), GFP_KERNEL);
	if (!iv)
		return -ENOMEM;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;

	start = pci_resource_start(pdev, bar);
	len = pci_resource_len(pdev, bar);
	if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
	    len < PAGE_SIZE || !PAGE_ALIGNED(start) || !PAGE_ALIGNED(len) ||
	    (len >> PAGE_SHIFT) > UINT_MAX) {
		dev_err(dev, "BAR%d unusable: %pa bytes at %pa\n", bar, &len,
			&start);
		ret = -ENODEV;
		goto err_disable;
	}

	ret = pci_request_region(pdev, bar, KBUILD_MODNAME);
	if (ret)
		goto err_disable;

	iv->base = devm_memremap(dev, start, len, MEMREMAP_WB);
	if (IS_ERR(iv->base)) {
		ret = PTR_ERR(iv->base);
		goto err_release;
	}

	nr = len >> PAGE_SHIFT;
	pages = kvmalloc_array(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		ret = -ENOMEM;
		goto err_unmap;
	}
	for (i = 0; i < nr; i++)
		pages[i] = iv->base + (i << PAGE_SHIFT);
	ret = hmb_trace_ivshmem_mailbox(pdev, iv);
	if (ret) {
		kvfree(pages);
		goto err_unmap;
	}
	iv->area = hmb_trace_register_area(pci_name(pdev), dev, pages, nr,
					   PAGE_SHIFT);
	kvfree(pages);
	if (IS_ERR(iv->area)) {
		ret = PTR_ERR(iv->area);
		goto err_mailbox;
	}
	if (iv->mb)
		hmb_trace_set_ctrl(iv->area, &hmb_trace_mb_ops, iv->mb);

	pci_set_drvdata(pdev, iv);
	dev_info(dev, "trace area in BAR%d: %pa bytes\n", bar, &len);
	return 0;

err_mailbox:
	hmb_trace_ivshmem_mailbox_put(iv);
err_unmap:
	devm_memunmap(dev, iv->base);
err_release:
	pci_release_region(pdev, bar);
err_disable:
	pci_disable_device(pdev);
	return ret;
}

static void hmb_trace_ivshmem_remove(struct pci_dev *pdev)
{
	struct hmb_trace_ivshmem *iv = pci_get_drvdata(pdev);

	if (iv->mailbox) {
		hmb_trace_ivshmem_mb_remove(pdev);
		return;
	}
	/*
	 * Stops every drain and request synchronously: nothing reads BAR2 or
	 * the mailbox after this.
	 */
	hmb_trace_unregister_area(iv->area);
	hmb_trace_ivshmem_mailbox_put(iv);
	devm_memunmap(&pdev->dev, iv->base);
	pci_release_region(pdev, HMB_TRACE_IVSHMEM_BAR);
	pci_disable_device(pdev);
}

/*
 * No MODULE_DEVICE_TABLE: an ivshmem device is no reason to load the
 * module, which would bind nothing unless told to.
 */
static const struct pci_device_id hmb_trace_ivshmem_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET,
		     HMB_TRACE_IVSHMEM_DEVICE_ID) },
	{ }
};

/* Named after the module: driver_override names a driver. */
static struct pci_driver hmb_trace_ivshmem_driver = {
	.name = KBUILD_MODNAME,
	.id_table = hmb_trace_ivshmem_ids,
	.probe = hmb_trace_ivshmem_probe,
	.remove = hmb_trace_ivshmem_remove,
};

/**
 * hmb_trace_ivshmem_init() - register the ivshmem-plain PCI driver.
 *
 * Return: 0 or a negative errno.
 */
int hmb_trace_ivshmem_init(void)
{
	int ret;

	ret = pci_register_driver(&hmb_trace_ivshmem_driver);
	/*
	 * An area probed before its mailbox was deferred; the deferred
	 * probe runs from a work item: have every area bound when insmod
	 * returns.
	 */
	if (!ret)
		wait_for_device_probe();
	return ret;
}

/**
 * hmb_trace_ivshmem_exit() - unregister the driver; removes every area.
 */
void hmb_trace_ivshmem_exit(void)
{
	pci_unregister_driver(&hmb_trace_ivshmem_driver);
}
