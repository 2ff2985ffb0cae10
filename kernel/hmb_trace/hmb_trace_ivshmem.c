// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ivshmem-plain backend: the trace area is BAR2 of a
 * QEMU ivshmem-plain device (1af4:1110), written by the firmware simulator
 * on the host. The mapping is cacheable (MEMREMAP_WB): BAR2 is host RAM,
 * coherent with the external writer. The host side never writes it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "hmb_trace_internal.h"

#define HMB_TRACE_IVSHMEM_DEVICE_ID	0x1110
#define HMB_TRACE_IVSHMEM_BAR		2

struct hmb_trace_ivshmem {
	void *base;
	struct hmb_trace_area *area;
};

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
	iv->area = hmb_trace_register_area(pci_name(pdev), dev, pages, nr,
					   PAGE_SHIFT);
	kvfree(pages);
	if (IS_ERR(iv->area)) {
		ret = PTR_ERR(iv->area);
		goto err_unmap;
	}

	pci_set_drvdata(pdev, iv);
	dev_info(dev, "trace area in BAR%d: %pa bytes\n", bar, &len);
	return 0;

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

	/* Stops every drain synchronously: nothing reads BAR2 after this. */
	hmb_trace_unregister_area(iv->area);
	devm_memunmap(&pdev->dev, iv->base);
	pci_release_region(pdev, HMB_TRACE_IVSHMEM_BAR);
	pci_disable_device(pdev);
}

static const struct pci_device_id hmb_trace_ivshmem_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET,
		     HMB_TRACE_IVSHMEM_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, hmb_trace_ivshmem_ids);

static struct pci_driver hmb_trace_ivshmem_driver = {
	.name = "hmb_trace_ivshmem",
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
	return pci_register_driver(&hmb_trace_ivshmem_driver);
}

/**
 * hmb_trace_ivshmem_exit() - unregister the driver; removes every area.
 */
void hmb_trace_ivshmem_exit(void)
{
	pci_unregister_driver(&hmb_trace_ivshmem_driver);
}
