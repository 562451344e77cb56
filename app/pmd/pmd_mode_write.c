/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * `run QP write`: RDMA WRITE of fresh data per message. The peer's slots
 * are cleared first; at the end each holds what the last message through
 * it carried, which is checked.
 */

#include <inttypes.h>
#include <string.h>

#include "pmd.h"

static void
write_prepare(struct pmd_qp *q, uint32_t size, uint32_t nslots)
{
	if (q->peer != NULL)
		memset(q->peer->buf, 0, (size_t)size * nslots);
}

static void
write_before_post(struct pmd_qp *q, uint32_t size, uint64_t i, uint32_t slot)
{
	pmd_pattern(q->buf + (uint64_t)slot * size, size, pmd_seed(i));
}

static int
write_verify(struct pmd_qp *q, uint32_t size, uint64_t count,
	     uint32_t nslots, uint64_t *verified)
{
	uint32_t s;

	for (s = 0; s < nslots; s++) {
		/* the last message that went through slot s */
		uint64_t i = s + (count - 1 - s) / nslots * nslots;

		if (!pmd_pattern_ok(q->peer->buf + (uint64_t)s * size, size,
				    pmd_seed(i))) {
			pmd_fail("qp %u: message %" PRIu64 " is not in qp %u's "
				 "buffer at slot %u", q->id, i, q->peer->id, s);
			return -1;
		}
	}
	*verified = (uint64_t)nslots * size;
	return 0;
}

const struct pmd_mode pmd_mode_write = {
	.name = "write",
	.opcode = IBV_WR_RDMA_WRITE,
	.needs_rkey = true,
	.prepare = write_prepare,
	.before_post = write_before_post,
	.verify = write_verify,
};
