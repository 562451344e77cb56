/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_DMA_H
#define DROCE_DMA_H

#include "droce_engine_pvt.h"

/*
 * Local memory through SGE lists (lib/engine/droce_dma.c).
 */

/**
 * Check every SGE of a list: a live lkey of @p pd covering the range, with
 * LOCAL_WRITE if @p write.
 * @return 0 or -EACCES.
 */
int droce_sge_check(const struct droce_shard *sh, const struct droce_pd_eng *pd,
		    const struct ibv_sge *sge, uint32_t nsge, bool write);

/** Copy @p len bytes from byte @p off of an SGE list (checked) to @p dst. */
void droce_sge_read(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		    void *dst, uint32_t len);

/**
 * Where bytes @p off to @p off + @p len of an SGE list (checked) are, if
 * one SGE holds them all; else NULL.
 */
void *droce_sge_span(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		     uint32_t len);

/** Copy @p len bytes from @p src to byte @p off of an SGE list (checked). */
void droce_sge_write(const struct ibv_sge *sge, uint32_t nsge, uint32_t off,
		     const void *src, uint32_t len);

/**
 * The remote range [va, va + len) through @p rkey for a request to
 * @p qp: a region or window of the QP's PD that covers the range and
 * grants @p access (a type 2 window: bound to @p qp).
 * @return true with *addr set to where va is in memory (a zero-based
 * window counts va from its start), or false.
 */
bool droce_rkey_check(const struct droce_qp_eng *qp, uint32_t rkey,
		      uint64_t va, uint64_t len, uint32_t access,
		      uint64_t *addr);

/** droce_rkey_check() in PD @p pd rather than the QP's own (an XRC
 * target's changes with the SRQ each request names). */
bool droce_rkey_check_pd(const struct droce_qp_eng *qp,
			 const struct droce_pd_eng *pd, uint32_t rkey,
			 uint64_t va, uint64_t len, uint32_t access,
			 uint64_t *addr);

#endif /* DROCE_DMA_H */
