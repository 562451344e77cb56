/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * `run QP MODE SIZE COUNT`: COUNT messages of SIZE bytes, every one
 * signalled, up to the QP's depth in flight. Message i goes from slot
 * i % nslots of the QP's buffer (nslots = how many messages of SIZE fit
 * in it) to the same slot of the peer's, so no slot is reused while a
 * message is in flight from it. The mode (pmd_mode_*.c) says what goes
 * in the slots and how the result is checked.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pmd.h"

#define POLL_BATCH 32

static uint64_t run_no;

/* Seed of the data of message (or slot) @p i in this run. */
uint64_t
pmd_seed(uint64_t i)
{
	return (run_no << 40) ^ i;
}

static uint64_t
xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void
pmd_pattern(uint8_t *p, uint32_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	uint32_t i;
	uint64_t v;

	for (i = 0; i + 8 <= len; i += 8) {
		v = xorshift(&x);
		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		v = xorshift(&x);
		memcpy(p + i, &v, len - i);
	}
}

bool
pmd_pattern_ok(const uint8_t *p, uint32_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	uint32_t i;
	uint64_t v;

	for (i = 0; i + 8 <= len; i += 8) {
		v = xorshift(&x);
		if (memcmp(p + i, &v, 8) != 0)
			return false;
	}
	if (i < len) {
		v = xorshift(&x);
		if (memcmp(p + i, &v, len - i) != 0)
			return false;
	}
	return true;
}

/* Take what is left in @p q's CQ (a failed run's flushed WRs). */
static void
drain(struct pmd_qp *q)
{
	struct ibv_wc wc[POLL_BATCH];
	int n;

	while ((n = ibv_poll_cq(q->cq, POLL_BATCH, wc)) > 0)
		q->cq_polled += (uint64_t)n;
}

static int
post_send(struct pmd_qp *q, const struct pmd_mode *m, uint32_t size,
	  uint64_t i, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)q->buf + (uint64_t)slot * size,
		.length = size,
		.lkey = q->mr->lkey,
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = m->opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	/* a peer of another process: its buffer is taken from offset 0 */
	wr.wr.rdma.remote_addr = q->peer_addr +
		(q->peer != NULL ? (uint64_t)slot * size : 0);
	wr.wr.rdma.rkey = q->peer_rkey;
	return ibv_post_send(q->qp, &wr, &bad);
}

static int
post_recv(struct pmd_qp *rx, uint32_t size, uint64_t i, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rx->buf + (uint64_t)slot * size,
		.length = size,
		.lkey = rx->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(rx->qp, &wr, &bad);
}

static int
run_checks(struct pmd_qp *q, const struct pmd_mode *m, uint32_t size,
	   uint64_t count)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (size == 0 || size > PMD_MAX_MSG || count == 0) {
		pmd_fail("size 1 to %u bytes, count at least 1", PMD_MAX_MSG);
		return -1;
	}
	if (!q->connected || ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) != 0 ||
	    a.qp_state != IBV_QPS_RTS) {
		pmd_fail("qp %u is not connected (connect qp first)", q->id);
		return -1;
	}
	if (m->needs_local_peer && q->peer == NULL) {
		pmd_fail("%s needs the peer QP in this process, which posts "
			 "the receives", m->name);
		return -1;
	}
	if (m->needs_rkey && q->peer_rkey == 0) {
		pmd_fail("%s needs the peer's rkey and address (connect qp "
			 "... RKEY ADDR)", m->name);
		return -1;
	}
	return 0;
}

/* Poll the receiver's CQ: check each message, post the next receive. */
static int
poll_recv(struct pmd_qp *rx, const struct pmd_mode *m, uint32_t size,
	  uint64_t count, uint32_t nslots, uint32_t inflight, uint64_t *rcvd)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, k;

	n = ibv_poll_cq(rx->cq, POLL_BATCH, wc);
	if (n <= 0)
		return n;
	rx->cq_polled += (uint64_t)n;
	for (k = 0; k < n; k++) {
		uint64_t i = wc[k].wr_id;

		if (wc[k].status != IBV_WC_SUCCESS || i != *rcvd) {
			pmd_fail("qp %u: receive %" PRIu64 ": %s", rx->id, i,
				 ibv_wc_status_str(wc[k].status));
			return -1;
		}
		if (m->on_recv(rx, &wc[k], size, i,
			       (uint32_t)(i % nslots)) < 0)
			return -1;
		(*rcvd)++;
		if (i + inflight < count &&
		    post_recv(rx, size, i + inflight,
			      (uint32_t)((i + inflight) % nslots)) != 0) {
			pmd_fail("qp %u: ibv_post_recv failed", rx->id);
			return -1;
		}
	}
	return n;
}

static void
report(const struct pmd_qp *q, const struct pmd_mode *m, uint32_t size,
       const struct pmd_result *r)
{
	double secs = r->secs > 0 ? r->secs : 1e-9;

	printf("run qp %u %s %u x %" PRIu64 ": %" PRIu64 " bytes in %.4f s, "
	       "%.3f Gb/s, %.0f msg/s, ", q->id, m->name, size, r->msgs,
	       r->bytes, r->secs, (double)r->bytes * 8 / secs / 1e9,
	       (double)r->msgs / secs);
	if (q->peer != NULL)
		printf("data checked (%" PRIu64 " bytes)\n", r->verified);
	else
		printf("data not checked (peer not in this process)\n");
}

int
pmd_run(struct pmd_qp *q, const struct pmd_mode *m, uint32_t size,
	uint64_t count)
{
	struct pmd_qp *rx = m->on_recv != NULL ? q->peer : NULL;
	uint64_t posted = 0, done = 0, rcvd = 0, i;
	struct pmd_result r = { 0 };
	struct ibv_wc wc[POLL_BATCH];
	uint32_t nslots, inflight;
	double start, last;

	if (run_checks(q, m, size, count) < 0)
		return -1;
	nslots = PMD_BUF_LEN / size;
	if (nslots > count)
		nslots = (uint32_t)count;
	inflight = q->depth < nslots ? q->depth : nslots;
	if (rx != NULL && rx->depth < inflight)
		inflight = rx->depth;
	run_no++;
	drain(q);
	if (rx != NULL)
		drain(rx);
	if (m->prepare != NULL)
		m->prepare(q, size, nslots);
	for (i = 0; rx != NULL && i < inflight && i < count; i++)
		if (post_recv(rx, size, i, (uint32_t)(i % nslots)) != 0) {
			pmd_fail("qp %u: ibv_post_recv failed", rx->id);
			return -1;
		}

	start = pmd_now();
	last = start;
	while (done < count || (rx != NULL && rcvd < count)) {
		/* a SEND waits for its receive as well: no RNR NAKs */
		uint64_t base = rx != NULL && rcvd < done ? rcvd : done;
		int n, nr = 0, k;

		while (posted < count && posted - base < inflight) {
			uint32_t slot = (uint32_t)(posted % nslots);

			if (m->before_post != NULL)
				m->before_post(q, size, posted, slot);
			if (post_send(q, m, size, posted, slot) != 0) {
				pmd_fail("qp %u: ibv_post_send failed", q->id);
				goto fail;
			}
			posted++;
		}
		n = ibv_poll_cq(q->cq, POLL_BATCH, wc);
		if (n < 0) {
			pmd_fail("qp %u: ibv_poll_cq failed", q->id);
			goto fail;
		}
		q->cq_polled += (uint64_t)n;
		for (k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				pmd_fail("qp %u: message %" PRIu64 ": %s",
					 q->id, wc[k].wr_id,
					 ibv_wc_status_str(wc[k].status));
				goto fail;
			}
			done++;
		}
		if (rx != NULL) {
			nr = poll_recv(rx, m, size, count, nslots, inflight,
				       &rcvd);
			if (nr < 0)
				goto fail;
		}
		if (n + nr > 0) {
			last = pmd_now();
		} else if (pmd_now() - last > PMD_STALL_S) {
			pmd_fail("qp %u: no completion for %.0f s (%" PRIu64
				 " of %" PRIu64 " done)", q->id, PMD_STALL_S,
				 done, count);
			goto fail;
		}
	}
	r.secs = pmd_now() - start;
	r.msgs = count;
	r.bytes = count * size;
	if (m->verify != NULL && q->peer != NULL &&
	    m->verify(q, size, count, nslots, &r.verified) < 0)
		return -1;
	if (rx != NULL)
		r.verified = count * size;
	report(q, m, size, &r);
	return 0;
fail:
	drain(q);
	if (rx != NULL)
		drain(rx);
	return -1;
}
