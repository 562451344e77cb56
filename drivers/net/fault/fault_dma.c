/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * dma=1: the port sends only what a NIC behind an IOMMU could read. A
 * NIC's DMA reaches DPDK's own memory (EAL maps it for every device) and
 * memory an application registered with rte_extmem_register() and mapped
 * for that device with rte_dev_dma_map(), at the IO address it was
 * mapped at; anything else faults in the IOMMU and the frame is lost.
 * Here each segment of a frame to be sent is looked up so, when it
 * leaves (after any delay, as a NIC reads when it sends), and a frame
 * that could not be read is freed and counted (tx_fault_unmapped).
 */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_memory.h>

#include "fault_pvt.h"

/* Is [va, va + len) at IO address iova within one range of @p dma? */
static bool
fault_dma_mapped(struct fault_dma *dma, uintptr_t va, uint64_t iova,
		 size_t len)
{
	unsigned int i;
	bool ok = false;

	rte_rwlock_read_lock(&dma->lock);
	for (i = 0; i < dma->n && !ok; i++)
		ok = va >= dma->map[i].va &&
		     va - dma->map[i].va <= dma->map[i].len &&
		     len <= dma->map[i].len - (va - dma->map[i].va) &&
		     iova == dma->map[i].iova + (va - dma->map[i].va);
	rte_rwlock_read_unlock(&dma->lock);
	return ok;
}

bool
droce_fault_dma_ok(struct fault_dma *dma, const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next) {
		const struct rte_memseg_list *msl;
		uintptr_t va = rte_pktmbuf_mtod(m, uintptr_t);

		if (m->data_len == 0)
			continue;
		msl = rte_mem_virt2memseg_list((void *)va);
		if (msl != NULL && !msl->external)
			continue;	/* DPDK's own: mapped for every device */
		if (!fault_dma_mapped(dma, va, rte_pktmbuf_iova(m),
				      m->data_len))
			return false;
	}
	return true;
}

static struct fault_port *
fault_dma_port(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev = rte_eth_dev_allocated(vdev->device.name);

	return dev != NULL ? dev->data->dev_private : NULL;
}

int
droce_fault_dma_map(struct rte_vdev_device *vdev, void *addr, uint64_t iova,
		    size_t len)
{
	struct fault_port *fp = fault_dma_port(vdev);
	struct fault_dma *dma;
	int ret = 0;

	if (fp == NULL || !fp->params.dma)
		return 0;	/* a port that reads any memory needs none */
	dma = &fp->dma;
	rte_rwlock_write_lock(&dma->lock);
	if (dma->n == FAULT_DMA_MAPS) {
		rte_errno = ENOSPC;
		ret = -1;
	} else {
		dma->map[dma->n].va = (uintptr_t)addr;
		dma->map[dma->n].iova = iova;
		dma->map[dma->n].len = len;
		dma->n++;
	}
	rte_rwlock_write_unlock(&dma->lock);
	FAULT_LOG(DEBUG, "%s: %zu bytes at %p mapped for DMA: %s",
		  vdev->device.name, len, addr, ret == 0 ? "ok" : "no room");
	return ret;
}

int
droce_fault_dma_unmap(struct rte_vdev_device *vdev, void *addr,
		      uint64_t iova, size_t len)
{
	struct fault_port *fp = fault_dma_port(vdev);
	struct fault_dma *dma;
	unsigned int i;
	int ret = -1;

	if (fp == NULL || !fp->params.dma)
		return 0;
	dma = &fp->dma;
	rte_rwlock_write_lock(&dma->lock);
	for (i = 0; i < dma->n; i++)
		if (dma->map[i].va == (uintptr_t)addr &&
		    dma->map[i].iova == iova && dma->map[i].len == len) {
			dma->map[i] = dma->map[--dma->n];
			ret = 0;
			break;
		}
	rte_rwlock_write_unlock(&dma->lock);
	if (ret != 0)
		rte_errno = EINVAL;	/* not mapped so */
	return ret;
}
