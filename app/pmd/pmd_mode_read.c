/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * `run QP read`: RDMA READ of the peer's slots into the QP's own. The
 * peer's slots are filled with known data and ours cleared first; at the
 * end each of ours must hold its peer slot's data.
 */

#include <string.h>

#include "pmd.h"

static void
read_prepare(struct pmd_qp *q, uint32_t size, uint32_t nslots)
{
	uint32_t s;

	memset(q->buf, 0, (size_t)size * nslots);
	if (q->peer == NULL)
		return;
	for (s = 0; s < nslots; s++)
		pmd_pattern(q->peer->buf + (uint64_t)s * size, size,
			    pmd_seed(s));
}

static int
read_verify(struct pmd_qp *q, uint32_t size, uint64_t count,
	    uint32_t nslots, uint64_t *verified)
{
	uint32_t s;

	(void)count;
	for (s = 0; s < nslots; s++)
		if (!pmd_pattern_ok(q->buf + (uint64_t)s * size, size,
				    pmd_seed(s))) {
			pmd_fail("qp %u: slot %u does not hold what qp %u's "
				 "slot %u does", q->id, s, q->peer->id, s);
			return -1;
		}
	*verified = (uint64_t)nslots * size;
	return 0;
}

const struct pmd_mode pmd_mode_read = {
	.name = "read",
	.opcode = IBV_WR_RDMA_READ,
	.needs_rkey = true,
	.prepare = read_prepare,
	.verify = read_verify,
};
