/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Registered memory mapped for a port's DMA, so that zero copy can send
 * from it on a port that reads only mapped memory: a PCI NIC, whose DMA
 * goes through the IOMMU (VFIO), or net_fault with dma=1, which behaves
 * so. DPDK's own memory is mapped for every device already; memory of
 * the application's is registered with DPDK as external memory
 * (rte_extmem_register(), whole pages) and mapped for the device
 * (rte_dev_dma_map()) at its virtual address as IO address (IOVA as VA,
 * which droce's zero copy asks for).
 *
 * DPDK refuses to register a page twice, and regions may share pages,
 * so the process keeps the chunks it registered: each a run of whole
 * pages, with the regions that use it counted, and per port whether it
 * is mapped there and for how many regions. A region takes the chunks
 * that cover its pages, registering the gaps between them as new ones;
 * chunks never change while in use, so deregistration lets go of
 * exactly the chunks its pages meet. A chunk no region uses is unmapped
 * and unregistered. Each chunk takes one of DPDK's memory segment lists
 * (RTE_MAX_MEMSEG_LISTS in all): when they run out, a region is not
 * mapped and its packets are copied, as on a port without chains.
 */

/* rte_dev_dma_map() and rte_dev_dma_unmap() are experimental in DPDK */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "droce_engine_pvt.h"

/* Chunks the process keeps at most (fewer memseg lists than that). */
#define DMA_CHUNKS 128

struct dma_chunk {
	uintptr_t start, end;         /**< whole pages */
	unsigned int regions;         /**< using it, over all ports */
	uint16_t mapped[RTE_MAX_ETHPORTS]; /**< regions using it, per port */
};

static pthread_mutex_t dma_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dma_chunk dma_chunks[DMA_CHUNKS];
static unsigned int dma_nchunks;

/* The chunk that has @p a, or NULL. */
static struct dma_chunk *
chunk_at(uintptr_t a)
{
	unsigned int i;

	for (i = 0; i < dma_nchunks; i++)
		if (a >= dma_chunks[i].start && a < dma_chunks[i].end)
			return &dma_chunks[i];
	return NULL;
}

/* The start of the first chunk after @p a, below @p end; else end. */
static uintptr_t
next_chunk(uintptr_t a, uintptr_t end)
{
	unsigned int i;

	for (i = 0; i < dma_nchunks; i++)
		if (dma_chunks[i].start > a && dma_chunks[i].start < end)
			end = dma_chunks[i].start;
	return end;
}

static void
chunk_drop(struct dma_chunk *c)
{
	if (rte_extmem_unregister((void *)c->start, c->end - c->start) != 0)
		DROCE_LOG(WARNING, "external memory at %#" PRIxPTR
			  " not unregistered: %s", c->start,
			  rte_strerror(rte_errno));
	*c = dma_chunks[--dma_nchunks];
}

/* Let go of the chunks over [start, end) for @p port. */
static void
release(struct rte_device *dev, uint16_t port, uintptr_t start,
	uintptr_t end)
{
	uintptr_t a = start;

	while (a < end) {
		struct dma_chunk *c = chunk_at(a);

		a = c->end;
		if (--c->mapped[port] == 0 &&
		    rte_dev_dma_unmap(dev, (void *)c->start, c->start,
				      c->end - c->start) != 0)
			DROCE_LOG(WARNING, "port %u: %#" PRIxPTR " not "
				  "unmapped: %s", port, c->start,
				  rte_strerror(rte_errno));
		if (--c->regions == 0)
			chunk_drop(c);
	}
}

/* The pages of [addr, addr + len). */
static void
pages(uint64_t addr, uint64_t len, uintptr_t *start, uintptr_t *end)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

	*start = (uintptr_t)addr & ~(pg - 1);
	*end = ((uintptr_t)(addr + len) + pg - 1) & ~(pg - 1);
}

/* Is [addr, addr + len) DPDK's own memory, which EAL maps itself? */
static bool
dpdk_memory(uint64_t addr, uint64_t len)
{
	const struct rte_memseg_list *a, *b;

	a = rte_mem_virt2memseg_list((void *)(uintptr_t)addr);
	b = rte_mem_virt2memseg_list((void *)(uintptr_t)(addr + len - 1));
	return a != NULL && a == b && !a->external;
}

int
droce_dma_map(struct droce_dev *dev, uint64_t addr, uint64_t len)
{
	uint16_t port = dev->port_id;
	uintptr_t start, end, a;
	int ret = 0;

	if (len == 0 || dpdk_memory(addr, len))
		return 0;
	pages(addr, len, &start, &end);
	pthread_mutex_lock(&dma_lock);
	for (a = start; a < end && ret == 0; ) {
		struct dma_chunk *c = chunk_at(a);

		if (c == NULL) {
			uintptr_t to = next_chunk(a, end);

			if (dma_nchunks == DMA_CHUNKS) {
				ret = -ENOSPC;
				break;
			}
			if (rte_extmem_register((void *)a, to - a, NULL, 0,
					(size_t)sysconf(_SC_PAGESIZE)) != 0) {
				ret = -rte_errno;
				break;
			}
			c = &dma_chunks[dma_nchunks++];
			memset(c, 0, sizeof(*c));
			c->start = a;
			c->end = to;
		}
		if (c->mapped[port] == 0 &&
		    rte_dev_dma_map(dev->dma_dev, (void *)c->start, c->start,
				    c->end - c->start) != 0) {
			ret = -rte_errno;
			if (c->regions == 0)
				chunk_drop(c);
			break;
		}
		c->mapped[port]++;
		c->regions++;
		a = c->end;
	}
	/* (a chunk may reach beyond end: so may its hold) */
	if (ret != 0 && a > start)
		release(dev->dma_dev, port, start, a);
	pthread_mutex_unlock(&dma_lock);
	if (ret != 0)
		DROCE_LOG(INFO, "%s: %" PRIu64 " bytes at %#" PRIx64 " not "
			  "mapped for the port's DMA (%s): sent by copy",
			  dev->name, len, addr, strerror(-ret));
	return ret;
}

void
droce_dma_unmap(struct droce_dev *dev, uint64_t addr, uint64_t len)
{
	uintptr_t start, end;

	if (len == 0 || dpdk_memory(addr, len))
		return;
	pages(addr, len, &start, &end);
	pthread_mutex_lock(&dma_lock);
	release(dev->dma_dev, dev->port_id, start, end);
	pthread_mutex_unlock(&dma_lock);
}
