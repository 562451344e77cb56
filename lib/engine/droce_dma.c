/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Moving payload between registered memory and packets. Keys and ranges
 * are checked before any byte moves; the copies themselves trust them.
 */

#include <rte_memcpy.h>

#include "droce_engine_pvt.h"
#include "droce_dma.h"

int
droce_sge_check(const struct droce_shard *sh, const struct droce_pd_eng *pd,
		const struct ibv_sge *sge, uint32_t nsge, bool write)
{
	uint32_t i;

	for (i = 0; i < nsge; i++) {
		const struct droce_mr_eng *mr;

		if (sge[i].length == 0)
			continue;
		mr = droce_mr_lookup(sh, sge[i].lkey, false);
		if (mr == NULL || mr->pd != pd || sge[i].addr < mr->addr ||
		    sge[i].addr - mr->addr > mr->length ||
		    sge[i].length > mr->length - (sge[i].addr - mr->addr))
			return -EACCES;
		if (write && !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			return -EACCES;
	}
	return 0;
}

void
droce_sge_read(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
	       void *dst, uint32_t len)
{
	uint8_t *d = dst;
	uint32_t i;

	for (i = 0; i < nsge && len > 0; i++) {
		uint32_t n;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = RTE_MIN(len, sge[i].length - off);
		rte_memcpy(d, (const void *)(uintptr_t)(sge[i].addr + off), n);
		d += n;
		len -= n;
		off = 0;
	}
}

void
droce_sge_write(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		const void *src, uint32_t len)
{
	const uint8_t *s = src;
	uint32_t i;

	for (i = 0; i < nsge && len > 0; i++) {
		uint32_t n;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = RTE_MIN(len, sge[i].length - off);
		rte_memcpy((void *)(uintptr_t)(sge[i].addr + off), s, n);
		s += n;
		len -= n;
		off = 0;
	}
}

void *
droce_sge_span(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
	       uint32_t len)
{
	uint32_t i;

	for (i = 0; i < nsge; i++) {
		if (off < sge[i].length)
			return len <= sge[i].length - off ?
				(void *)(uintptr_t)(sge[i].addr + off) : NULL;
		off -= sge[i].length;
	}
	return NULL;
}

/* Does region or window @p mr grant @p access to [va, va + len)? */
static bool
rkey_range(const struct droce_qp_eng *qp, const struct droce_pd_eng *pd,
	   const struct droce_mr_eng *mr, uint64_t va, uint64_t len,
	   uint32_t access, uint64_t *addr)
{
	uint64_t base;

	if (mr->pd != pd || (mr->access & access) != access ||
	    (mr->mw_type == IBV_MW_TYPE_2 && mr->qp != qp))
		return false;
	base = (mr->access & IBV_ACCESS_ZERO_BASED) ? 0 : mr->addr;
	if (va < base || va - base > mr->length ||
	    len > mr->length - (va - base))
		return false;
	*addr = mr->addr + (va - base);
	return true;
}

bool
droce_rkey_check(const struct droce_qp_eng *qp, uint32_t rkey,
		 uint64_t va, uint64_t len, uint32_t access, uint64_t *addr)
{
	return droce_rkey_check_pd(qp, qp->cfg.pd, rkey, va, len, access,
				   addr);
}

bool
droce_rkey_check_pd(const struct droce_qp_eng *qp,
		    const struct droce_pd_eng *pd, uint32_t rkey, uint64_t va,
		    uint64_t len, uint32_t access, uint64_t *addr)
{
	const struct droce_mr_eng *mr = droce_mr_lookup(qp->shard, rkey, true);
	rte_spinlock_t *lock;
	bool ok;

	if (mr == NULL)
		return false;
	if (likely(mr->mw_type == 0))
		return rkey_range(qp, pd, mr, va, len, access, addr);
	/* a window: bound and unbound by every shard's QPs */
	lock = &qp->shard->dev->mw_lock;
	rte_spinlock_lock(lock);
	mr = droce_mr_lookup(qp->shard, rkey, true);
	ok = mr != NULL && rkey_range(qp, pd, mr, va, len, access, addr);
	rte_spinlock_unlock(lock);
	return ok;
}
