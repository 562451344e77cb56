/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Protection domains, thread and parent domains, and memory regions.
 *
 * On-demand paging: droce's engine reads and writes a region's memory
 * at its virtual address in the process, through the CPU (and, zero
 * copy, a virtual port's), and pins nothing; a page not present is
 * faulted in as for any access of the process's. So a region may be
 * registered IBV_ACCESS_ON_DEMAND, on every transport and operation:
 * such a region is never mapped for a port's DMA (a PCI NIC's zero copy
 * then copies from it instead). Implicit ODP (the whole address space,
 * addr NULL and length SIZE_MAX) is not offered: a peer could then name
 * an address the process has not mapped, which a NIC answers with an
 * access error and droce's lcore would fault on.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "droce_verbs_pvt.h"

/* Access flags droce understands (the rest are refused). */
#define SUPPORTED_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	IBV_ACCESS_MW_BIND | IBV_ACCESS_RELAXED_ORDERING | \
	IBV_ACCESS_ON_DEMAND)

static uint32_t pd_handles;

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct droce_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = context;
	pd->pd.handle = __atomic_add_fetch(&pd_handles, 1, __ATOMIC_RELAXED);
	pd->eng.handle = pd->pd.handle;
	return &pd->pd;
}

int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct droce_pd *pd = to_pd(ibpd);

	/* as rdma-core: a PD still holding MRs or QPs (or parent domains)
	 * stays */
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (pd->protection != NULL)
		__atomic_sub_fetch(&pd->protection->users, 1,
				   __ATOMIC_RELEASE);
	free(pd);
	return 0;
}

/* A thread domain: a promise that one thread at a time uses what is
 * made in it, which droce's lockless queues need not be told. */
static struct ibv_td *
alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct ibv_td *td;

	if (attr == NULL || attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (td == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	td->context = context;
	return td;
}

static int
dealloc_td(struct ibv_td *td)
{
	free(td);
	return 0;
}

/*
 * A parent domain: a PD for everything made on it, standing for attr->pd
 * (its regions, windows, QPs and SRQs are attr->pd's to the engine), with
 * a thread domain and allocators. droce's queues live in DPDK memory,
 * which its engine lcores and the port read, so the allocators are kept
 * but not called: the man page leaves it to the provider.
 */
static struct ibv_pd *
alloc_parent_domain(struct ibv_context *context,
		    struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
		IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct droce_pd *pd, *of;

	if (attr == NULL || attr->pd == NULL || (attr->comp_mask & ~known) ||
	    attr->pd->context != context ||
	    to_pd(attr->pd)->protection != NULL ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (attr->alloc == NULL || attr->free == NULL))) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	of = to_pd(attr->pd);
	pd->pd.context = context;
	pd->pd.handle = of->pd.handle;
	pd->protection = of;
	pd->td = attr->td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	__atomic_add_fetch(&of->users, 1, __ATOMIC_RELAXED);
	return &pd->pd;
}

/*
 * Advice on ODP regions' pages: prefetching needs nothing of droce, whose
 * accesses fault pages in as they come (PREFETCH_NO_FAULT's "map what is
 * present" is what every access of droce's does already).
 */
static int
advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
	  struct ibv_sge *sg_list, uint32_t num_sge)
{
	RTE_SET_USED(pd);
	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || num_sge == 0 ||
	    sg_list == NULL)
		return EINVAL;
	return 0;
}

void
droce_verbs_set_mem_ops(struct droce_context *ctx)
{
	ctx->vctx.alloc_td = alloc_td;
	ctx->vctx.dealloc_td = dealloc_td;
	ctx->vctx.alloc_parent_domain = alloc_parent_domain;
	ctx->vctx.advise_mr = advise_mr;
}

/*
 * @p access as droce keeps it (the optional flags it may ignore, by the
 * verbs rule, taken out), if a region of @p length bytes at @p addr,
 * @p iova, may be registered so; else -1.
 */
static int64_t
mr_access(const void *addr, size_t length, uint64_t iova, unsigned int access)
{
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE |
		IBV_ACCESS_RELAXED_ORDERING;
	if ((access & ~(unsigned int)SUPPORTED_ACCESS) != 0 ||
	    /* (no implicit ODP: see above) */
	    (addr == NULL && length == SIZE_MAX) ||
	    length > DROCE_MAX_MR_SIZE ||
	    (uintptr_t)addr != iova ||
	    /* remote write and atomic need local write (verbs rule) */
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)))
		return -1;
	return access;
}

/* Register @p mr's engine record as @p addr, @p length, @p access on
 * @p pd (under the keys it had if @p again: ibv_rereg_mr), and show its
 * keys; 0 or a negative errno. */
static int
mr_register(struct droce_mr *mr, struct ibv_pd *pd, void *addr,
	    size_t length, unsigned int access, bool again)
{
	struct droce_dev *dev = to_ctx(pd->context)->dev;
	uint32_t lkey = mr->eng.lkey, rkey = mr->eng.rkey;
	int ret;

	memset(&mr->eng, 0, sizeof(mr->eng));
	mr->eng.addr = (uintptr_t)addr;
	mr->eng.length = length;
	mr->eng.access = access;
	mr->eng.pd = pd_eng(pd);
	if (again) {
		mr->eng.lkey = lkey;
		mr->eng.rkey = rkey;
		ret = droce_mr_reregister(dev, &mr->eng);
	} else {
		ret = droce_mr_register(dev, &mr->eng);
	}
	if (ret < 0)
		return ret;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = mr->eng.lkey;
	mr->mr.lkey = mr->eng.lkey;
	mr->mr.rkey = mr->eng.rkey;
	return 0;
}

static struct ibv_mr *
reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
       unsigned int access)
{
	int64_t acc = mr_access(addr, length, iova, access);
	struct droce_mr *mr;
	int ret;

	if (acc < 0) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = mr_register(mr, pd, addr, length, (unsigned int)acc, false);
	if (ret < 0) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	__atomic_add_fetch(&to_pd(pd)->users, 1, __ATOMIC_RELAXED);
	return &mr->mr;
}

/*
 * The region is taken out of the device (waiting, as deregistration does,
 * for ports to let go of what was sent from it) and put back with what
 * changes (its place, its PD, its access) under the keys it had, as RoCE
 * NICs keep them (rdma-core's tests use the keys they exchanged before).
 * If that fails, the region is put back as it was and
 * IBV_REREG_MR_ERR_CMD says it is not what was asked: the caller
 * deregisters it. Refused before anything changed (the old region
 * valid): IBV_REREG_MR_ERR_INPUT, errno saying why (EBUSY: windows are
 * bound to it).
 */
int
ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr,
	     size_t length, int access)
{
	const int known = IBV_REREG_MR_CHANGE_TRANSLATION |
		IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
	struct droce_mr *mr = to_mr(ibmr);
	struct ibv_pd *old_pd = ibmr->pd, *new_pd = old_pd;
	void *old_addr = ibmr->addr, *new_addr = old_addr;
	size_t old_len = ibmr->length, new_len = old_len;
	unsigned int old_access = mr->eng.access, new_access = old_access;
	int64_t acc;
	int ret;

	if (flags == 0 || (flags & ~known)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		new_addr = addr;
		new_len = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		new_pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		new_access = (unsigned int)access;
	acc = mr_access(new_addr, new_len, (uintptr_t)new_addr, new_access);
	if (acc < 0 || new_pd == NULL || new_pd->context != ibmr->context) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	ret = droce_mr_unregister(to_ctx(ibmr->context)->dev, &mr->eng);
	if (ret != 0) {
		errno = EBUSY;
		return IBV_REREG_MR_ERR_INPUT;
	}
	ret = mr_register(mr, new_pd, new_addr, new_len, (unsigned int)acc,
			  true);
	if (ret < 0) {
		errno = -ret;
		if (mr_register(mr, old_pd, old_addr, old_len, old_access,
				true) < 0)
			/* (no region: dereg frees the record alone) */
			mr->eng.lkey = 0;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (new_pd != old_pd) {
		__atomic_add_fetch(&to_pd(new_pd)->users, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&to_pd(old_pd)->users, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

#undef ibv_reg_mr
struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct droce_mr *mr = to_mr(ibmr);

	/* as the kernel: not while windows are bound to it (a record whose
	 * reregistration failed has no region: lkey 0) */
	if (mr->eng.lkey != 0 &&
	    droce_mr_unregister(to_ctx(ibmr->context)->dev, &mr->eng) != 0)
		return EBUSY;
	__atomic_sub_fetch(&to_pd(ibmr->pd)->users, 1, __ATOMIC_RELEASE);
	free(mr);
	return 0;
}
