/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * QPs as rc_pingpong makes them: each RC QP has its own PD, a registered
 * buffer of PMD_BUF_LEN bytes, and one CQ for both of its queues. A QP is
 * in INIT after `create qp`, in RTS after `connect qp`; one the CM makes
 * (pmd_cm.c) has the same PD, buffer, MR and CQ, and rdma_create_qp its
 * QP. When its peer is a QP of this process, droce-pmd knows the peer's
 * buffer and checks the data `run` moves.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce.h>

#include "pmd.h"

struct pmd_qp pmd_qps[PMD_MAX_QPS];

struct pmd_qp *
pmd_qp_get(unsigned int id)
{
	if (id >= PMD_MAX_QPS || !pmd_qps[id].used) {
		pmd_fail("no qp %u", id);
		return NULL;
	}
	return &pmd_qps[id];
}

static int
qp_to_init(struct pmd_qp *q)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC;
	return ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void
gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

struct pmd_qp *
pmd_qp_alloc(struct pmd_port *p, unsigned int depth)
{
	struct pmd_qp *q = NULL;
	unsigned int i;

	if (p->ctx == NULL) {
		pmd_fail("%s: stopped", p->name);
		return NULL;
	}
	if (depth == 0 || depth > PMD_MAX_DEPTH) {
		pmd_fail("depth %u: 1 to %u", depth, PMD_MAX_DEPTH);
		return NULL;
	}
	for (i = 0; i < PMD_MAX_QPS && q == NULL; i++)
		if (!pmd_qps[i].used)
			q = &pmd_qps[i];
	if (q == NULL) {
		pmd_fail("%u QPs already", PMD_MAX_QPS);
		return NULL;
	}
	memset(q, 0, sizeof(*q));
	q->id = (unsigned int)(q - pmd_qps);
	q->port = p;
	q->depth = depth;
	q->used = true;
	q->pd = ibv_alloc_pd(p->ctx);
	q->buf = aligned_alloc(4096, PMD_BUF_LEN);
	if (q->pd == NULL || q->buf == NULL)
		goto fail;
	memset(q->buf, 0, PMD_BUF_LEN);
	q->mr = ibv_reg_mr(q->pd, q->buf, PMD_BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	q->cq = ibv_create_cq(p->ctx, (int)(2 * depth), NULL, NULL, 0);
	if (q->mr == NULL || q->cq == NULL)
		goto fail;
	return q;
fail:
	pmd_fail("%s: cannot create a QP: %s", p->name, strerror(errno));
	pmd_qp_destroy(q);
	return NULL;
}

void
pmd_qp_init_attr(const struct pmd_qp *q, struct ibv_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = q->cq;
	qa->recv_cq = q->cq;
	qa->qp_type = IBV_QPT_RC;
	qa->cap.max_send_wr = q->depth;
	qa->cap.max_recv_wr = q->depth;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

void
pmd_qp_print(const struct pmd_qp *q)
{
	char gid[INET6_ADDRSTRLEN];

	gid_str(&q->gid, gid, sizeof(gid));
	printf("qp %u on %s: gid %s qpn 0x%06x psn 0x%06x rkey 0x%08x "
	       "addr 0x%" PRIx64 " depth %u\n", q->id, q->port->name, gid,
	       q->qp->qp_num, q->psn, q->mr->rkey, (uint64_t)(uintptr_t)q->buf,
	       q->depth);
}

struct pmd_qp *
pmd_qp_create(struct pmd_port *p, unsigned int depth)
{
	struct ibv_qp_init_attr qa;
	struct pmd_qp *q;
	int ret;

	q = pmd_qp_alloc(p, depth);
	if (q == NULL)
		return NULL;
	pmd_qp_init_attr(q, &qa);
	q->qp = ibv_create_qp(q->pd, &qa);
	if (q->qp == NULL)
		goto fail;
	ret = qp_to_init(q);
	if (ret == 0)
		ret = ibv_query_gid(p->ctx, 1, 0, &q->gid);
	if (ret != 0)
		goto fail;
	q->psn = (uint32_t)lrand48() & 0xffffff;
	pmd_qp_print(q);
	return q;
fail:
	pmd_fail("%s: cannot create a QP: %s", p->name, strerror(errno));
	pmd_qp_destroy(q);
	return NULL;
}

/* The QP of this process with @p gid and @p qpn, if there is one. */
static struct pmd_qp *
local_qp(const union ibv_gid *gid, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < PMD_MAX_QPS; i++) {
		struct pmd_qp *q = &pmd_qps[i];

		if (q->used && q->qp != NULL && q->qp->qp_num == qpn &&
		    memcmp(q->gid.raw, gid->raw, sizeof(gid->raw)) == 0)
			return q;
	}
	return NULL;
}

int
pmd_qp_connect(struct pmd_qp *q, const union ibv_gid *gid, uint32_t qpn,
	       uint32_t psn, uint32_t rkey, uint64_t addr)
{
	struct ibv_qp_init_attr ia;
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	int ret;

	if (qpn > 0xffffff || psn > 0xffffff) {
		pmd_fail("QPN and PSN are 24-bit numbers");
		return -1;
	}
	if (q->cm_id != NULL) {
		pmd_fail("qp %u is connected through the CM (cm disconnect %u)",
			 q->id, q->id);
		return -1;
	}
	memset(&pa, 0, sizeof(pa));
	/* a QP connected before (or in ERR) starts over from RESET */
	ret = ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia);
	if (ret == 0 && a.qp_state != IBV_QPS_INIT) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RESET;
		ret = ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
		if (ret == 0)
			ret = qp_to_init(q);
	}
	if (ret == 0)
		ret = ibv_query_port(q->port->ctx, 1, &pa);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = qpn;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ret == 0)
		ret = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = q->psn;
	a.max_rd_atomic = 16;
	if (ret == 0)
		ret = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret != 0) {
		q->connected = false;
		pmd_fail("qp %u: cannot connect: %s", q->id, strerror(ret));
		return -1;
	}
	q->connected = true;
	pmd_qp_set_peer(q, gid, qpn, psn, rkey, addr);
	return 0;
}

void
pmd_qp_set_peer(struct pmd_qp *q, const union ibv_gid *gid, uint32_t qpn,
		uint32_t psn, uint32_t rkey, uint64_t addr)
{
	char buf[INET6_ADDRSTRLEN];

	q->peer_gid = *gid;
	q->peer_qpn = qpn;
	q->peer_psn = psn;
	q->peer_rkey = rkey;
	q->peer_addr = addr;
	q->peer = local_qp(gid, qpn);
	if (q->peer != NULL && rkey == 0) {
		q->peer_rkey = q->peer->mr->rkey;
		q->peer_addr = (uint64_t)(uintptr_t)q->peer->buf;
	}
	gid_str(gid, buf, sizeof(buf));
	printf("qp %u: RTS to %s qpn 0x%06x psn 0x%06x", q->id, buf, qpn, psn);
	if (q->peer != NULL)
		printf(" (qp %u of this process)", q->peer->id);
	printf("\n");
}

int
pmd_qp_connect_local(struct pmd_qp *q, struct pmd_qp *peer)
{
	return pmd_qp_connect(q, &peer->gid, peer->qp->qp_num, peer->psn,
			      peer->mr->rkey, (uint64_t)(uintptr_t)peer->buf);
}

void
pmd_qp_destroy(struct pmd_qp *q)
{
	unsigned int i, id = q->id;

	for (i = 0; i < PMD_MAX_QPS; i++)
		if (pmd_qps[i].peer == q)
			pmd_qps[i].peer = NULL;
	if (q->cm_id != NULL)
		pmd_cm_release(q);
	if (q->qp != NULL && ibv_destroy_qp(q->qp) != 0)
		pmd_fail("qp %u: ibv_destroy_qp failed", id);
	if (q->cq != NULL && ibv_destroy_cq(q->cq) != 0)
		pmd_fail("qp %u: ibv_destroy_cq failed", id);
	if (q->mr != NULL && ibv_dereg_mr(q->mr) != 0)
		pmd_fail("qp %u: ibv_dereg_mr failed", id);
	if (q->pd != NULL && ibv_dealloc_pd(q->pd) != 0)
		pmd_fail("qp %u: ibv_dealloc_pd failed", id);
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

void
pmd_qp_show(struct pmd_qp *q)
{
	struct droce_qp_counters c;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	char buf[INET6_ADDRSTRLEN];

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) != 0) {
		pmd_fail("qp %u: cannot query", q->id);
		return;
	}
	printf("qp %u on %s: qpn 0x%06x state %s psn 0x%06x depth %u\n",
	       q->id, q->port->name, q->qp->qp_num,
	       droce_qp_state_str(a.qp_state), q->psn, q->depth);
	if (q->connected) {
		gid_str(&q->peer_gid, buf, sizeof(buf));
		printf("  peer %s qpn 0x%06x psn 0x%06x", buf, q->peer_qpn,
		       q->peer_psn);
		if (q->peer != NULL)
			printf(" (qp %u)", q->peer->id);
		printf("\n");
	} else {
		printf("  peer none\n");
	}
	droce_query_qp_counters(q->qp, &c);
#define SHOW_COUNTER(name, desc) pmd_counter(#name, c.name);
	DROCE_QP_COUNTERS(SHOW_COUNTER)
#undef SHOW_COUNTER
}

void
pmd_cq_show(struct pmd_qp *q)
{
	printf("cq of qp %u on %s: depth %d polled %" PRIu64 "\n", q->id,
	       q->port->name, q->cq->cqe, q->cq_polled);
}
