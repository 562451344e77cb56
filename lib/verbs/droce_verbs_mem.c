/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* Protection domains and memory regions. */

#include <stdlib.h>

#include "droce_verbs_pvt.h"

/* Access flags droce understands (the rest are refused). */
#define SUPPORTED_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	IBV_ACCESS_MW_BIND | IBV_ACCESS_RELAXED_ORDERING)

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

	/* as rdma-core: a PD still holding MRs or QPs stays */
	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	free(pd);
	return 0;
}

static struct ibv_mr *
reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
       unsigned int access)
{
	struct droce_context *ctx = to_ctx(pd->context);
	struct droce_mr *mr;
	int ret;

	/* optional flags may be ignored (verbs rule); others must be known */
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE |
		IBV_ACCESS_RELAXED_ORDERING;
	if ((access & ~(unsigned int)SUPPORTED_ACCESS) != 0 ||
	    length > DROCE_MAX_MR_SIZE ||
	    (uintptr_t)addr != iova ||
	    /* remote write and atomic need local write (verbs rule) */
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr->eng.addr = (uintptr_t)addr;
	mr->eng.length = length;
	mr->eng.access = access;
	mr->eng.pd = &to_pd(pd)->eng;
	ret = droce_mr_register(ctx->dev, &mr->eng);
	if (ret < 0) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	__atomic_add_fetch(&to_pd(pd)->users, 1, __ATOMIC_RELAXED);
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = mr->eng.lkey;
	mr->mr.lkey = mr->eng.lkey;
	mr->mr.rkey = mr->eng.rkey;
	return &mr->mr;
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

	/* as the kernel: not while windows are bound to it */
	if (droce_mr_unregister(to_ctx(ibmr->context)->dev, &mr->eng) != 0)
		return EBUSY;
	__atomic_sub_fetch(&to_pd(ibmr->pd)->users, 1, __ATOMIC_RELEASE);
	free(mr);
	return 0;
}
