/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * `run QP send`: SEND of fresh data per message to a peer QP of this
 * process, which keeps receives posted; every message is checked as its
 * receive completes (length and bytes).
 */

#include <inttypes.h>

#include "pmd.h"

static void
send_before_post(struct pmd_qp *q, uint32_t size, uint64_t i, uint32_t slot)
{
	pmd_pattern(q->buf + (uint64_t)slot * size, size, pmd_seed(i));
}

static int
send_on_recv(struct pmd_qp *rx, const struct ibv_wc *wc, uint32_t size,
	     uint64_t i, uint32_t slot)
{
	if (wc->byte_len != size) {
		pmd_fail("qp %u: message %" PRIu64 " arrived with %u bytes, "
			 "not %u", rx->id, i, wc->byte_len, size);
		return -1;
	}
	if (!pmd_pattern_ok(rx->buf + (uint64_t)slot * size, size,
			    pmd_seed(i))) {
		pmd_fail("qp %u: message %" PRIu64 " arrived with other data",
			 rx->id, i);
		return -1;
	}
	return 0;
}

const struct pmd_mode pmd_mode_send = {
	.name = "send",
	.opcode = IBV_WR_SEND,
	.needs_local_peer = true,
	.before_post = send_before_post,
	.on_recv = send_on_recv,
};
