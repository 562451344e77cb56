/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Shared receive queues and asynchronous events through the verbs API,
 * droce0 to droce1 of the embedded default:
 *
 *  - three RC QPs on droce1 share one SRQ: messages from three peers, some
 *    longer than the MTU, take its WQEs in posting order, each lands
 *    whole in the buffer of the WQE its completion names, with the QP it
 *    came through;
 *  - the SRQ limit: armed with ibv_modify_srq, IBV_EVENT_SRQ_LIMIT_REACHED
 *    through ibv_get_async_event once fewer WQEs are left, disarmed then;
 *  - an SRQ QP in ERR raises IBV_EVENT_QP_LAST_WQE_REACHED, and the SRQ
 *    goes on serving the other QPs;
 *  - a QP the responder fails (a WRITE with a bad rkey) raises
 *    IBV_EVENT_QP_FATAL;
 *  - droce1's port set down and up again: IBV_EVENT_PORT_ERR, then
 *    IBV_EVENT_PORT_ACTIVE, and ibv_query_port follows;
 *  - a CQ too small for what completes in it: IBV_EVENT_CQ_ERR once;
 *    with IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, no event;
 *  - with WORKDIR FAULT_ARGS, both ports behind net_fault: three peers'
 *    streams through the SRQ, every message once, in order, whole.
 *  - a resize (IBV_SRQ_MAX_WR) with WQEs posted: they stay, in order,
 *    the SRQ takes as many more as it now holds, and a size below what
 *    is posted, or the limit, is refused;
 *  - the rules: ibv_post_recv on an SRQ QP, too many SGEs, a full SRQ,
 *    a limit above max_wr, destroying an SRQ in use, XRC and
 *    tag matching types, what ibv_query_device says.
 */

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <droce.h>
#include <rte_ethdev.h>

#include "harness.h"

#define NQP 3
#define SLOT 4096
#define MSGS 8
#define LEN (2u << 20)

static struct ep_opts opts;
static struct ep cli[NQP];      /* droce0: one QP each */
static struct ep srv;           /* droce1: PD, MR, CQs (its own QP unused) */
static struct ep srvq[NQP];     /* droce1: the SRQ QPs, srv's resources */
static struct ibv_srq *srq;

static struct ibv_qp *
srq_qp(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = srv.scq,
		.recv_cq = srv.rcq,
		.srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};

	return ibv_create_qp(srv.pd, &qa);
}

static int
setup(void **state)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};
	int i;

	(void)state;
	ep_opts_default(&opts);
	if (ep_open(&srv, 1, LEN, &opts) != 0)
		return -1;
	srq = ibv_create_srq(srv.pd, &sa);
	if (srq == NULL)
		return -1;
	for (i = 0; i < NQP; i++) {
		if (ep_open(&cli[i], 0, LEN, &opts) != 0)
			return -1;
		srvq[i] = srv;
		srvq[i].qp = srq_qp();
		if (srvq[i].qp == NULL)
			return -1;
		srvq[i].psn = 0x100 * (uint32_t)(i + 1);
		if (ep_connect(&cli[i], &srvq[i], &opts) != 0 ||
		    ep_connect(&srvq[i], &cli[i], &opts) != 0)
			return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < NQP; i++) {
		if (srvq[i].qp != NULL)
			ibv_destroy_qp(srvq[i].qp);
		ep_close(&cli[i]);
	}
	if (srq != NULL)
		ibv_destroy_srq(srq);
	ep_close(&srv);
	return 0;
}

/* Post one receive of srv's buffer [off, off + len) to @p s. */
static int
post_to(struct ibv_srq *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(srv.buf + off),
		.length = len,
		.lkey = srv.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(s, &wr, &bad);
}

static int
post_srq(uint64_t wr_id, size_t off, uint32_t len)
{
	return post_to(srq, wr_id, off, len);
}

/* The next asynchronous event of @p ctx within @p ms, or -1. */
static int
next_event(struct ibv_context *ctx, struct ibv_async_event *ev, int ms)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return ibv_get_async_event(ctx, ev);
}

/* A message's length: below, at and above the 1024-byte MTU. */
static uint32_t
msg_len(int qp, int j)
{
	static const uint32_t lens[] = { 1, 100, 1024, 1025, 3000, 4096, 64,
					 2048 };

	return lens[(j + qp) % MSGS];
}

static int
qp_index(uint32_t qp_num)
{
	int i;

	for (i = 0; i < NQP; i++)
		if (srvq[i].qp->qp_num == qp_num)
			return i;
	return -1;
}

static void
test_srq_shared(void **state)
{
	struct ibv_wc wc[NQP * MSGS];
	bool seen[NQP * MSGS] = { false };
	int64_t last[NQP];
	int next[NQP] = { 0 };
	int i, j, k, got = 0;

	(void)state;
	for (i = 0; i < NQP; i++)
		last[i] = -1;
	for (k = 0; k < NQP * MSGS; k++)
		assert_int_equal(post_srq((uint64_t)k, (size_t)k * SLOT, SLOT),
				 0);
	/* the three peers interleave their messages */
	for (j = 0; j < MSGS; j++)
		for (i = 0; i < NQP; i++) {
			size_t off = ((size_t)i * MSGS + (size_t)j) * SLOT;

			fill_pattern(cli[i].buf + off, msg_len(i, j),
				     (uint32_t)(i * 100 + j));
			assert_int_equal(ep_post(&cli[i], IBV_WR_SEND,
						 (uint64_t)j, off,
						 msg_len(i, j), NULL, 0,
						 IBV_SEND_SIGNALED), 0);
		}
	while (got < NQP * MSGS) {
		int n = ep_poll(srv.rcq, wc + got, NQP * MSGS - got, 5000);

		assert_true(n > 0);
		got += n;
	}
	for (k = 0; k < NQP * MSGS; k++) {
		uint64_t id = wc[k].wr_id;

		assert_int_equal(wc[k].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[k].opcode, IBV_WC_RECV);
		/* every WQE once */
		assert_true(id < NQP * MSGS);
		assert_false(seen[id]);
		seen[id] = true;
		i = qp_index(wc[k].qp_num);
		assert_true(i >= 0);
		/* a QP takes the SRQ's WQEs in posting order; another QP's
		 * message may complete in between (one of several packets,
		 * its peer's interleaved with others' on several engine
		 * lcores, ends after a shorter one that began later) */
		assert_true(last[i] < 0 || (int64_t)id > last[i]);
		last[i] = (int64_t)id;
		/* each QP's messages in its order, whole */
		j = next[i]++;
		assert_int_equal(wc[k].byte_len, msg_len(i, j));
		assert_memory_equal(srv.buf + (size_t)id * SLOT,
				    cli[i].buf + ((size_t)i * MSGS +
						  (size_t)j) * SLOT,
				    msg_len(i, j));
	}
	for (i = 0; i < NQP; i++) {
		assert_int_equal(next[i], MSGS);
		assert_int_equal(ep_poll(cli[i].scq, wc, MSGS, 5000), MSGS);
	}
}

static void
test_srq_limit(void **state)
{
	struct ibv_srq_attr attr = { .srq_limit = 5 };
	struct ibv_async_event ev;
	struct ibv_wc wc[8];
	int k;

	(void)state;
	for (k = 0; k < 10; k++)
		assert_int_equal(post_srq(100 + (uint64_t)k, (size_t)k * SLOT,
					  SLOT), 0);
	assert_int_equal(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	memset(&attr, 0, sizeof(attr));
	assert_int_equal(ibv_query_srq(srq, &attr), 0);
	assert_int_equal(attr.srq_limit, 5);
	assert_int_equal(attr.max_wr, 64);
	assert_int_equal(attr.max_sge, 2);

	/* five taken, five left: not below the limit */
	for (k = 0; k < 5; k++)
		assert_int_equal(ep_post(&cli[0], IBV_WR_SEND, 0, 0, 8, NULL, 0,
					 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(srv.rcq, wc, 5, 5000), 5);
	assert_int_equal(next_event(srv.ctx, &ev, 200), -1);
	/* one more: four left */
	assert_int_equal(ep_post(&cli[1], IBV_WR_SEND, 0, 0, 8, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(srv.rcq, wc, 1, 5000), 1);
	assert_int_equal(next_event(srv.ctx, &ev, 5000), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	assert_ptr_equal(ev.element.srq, srq);
	ibv_ack_async_event(&ev);
	/* it disarmed itself */
	assert_int_equal(ibv_query_srq(srq, &attr), 0);
	assert_int_equal(attr.srq_limit, 0);
	assert_int_equal(ep_post(&cli[2], IBV_WR_SEND, 0, 0, 8, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(srv.rcq, wc, 1, 5000), 1);
	assert_int_equal(next_event(srv.ctx, &ev, 200), -1);
	assert_int_equal(ep_poll(cli[0].scq, wc, 5, 5000), 5);
	assert_int_equal(ep_poll(cli[1].scq, wc, 1, 5000), 1);
	assert_int_equal(ep_poll(cli[2].scq, wc, 1, 5000), 1);
}

static void
test_srq_last_wqe(void **state)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_wc wc;

	(void)state;
	assert_int_equal(ibv_modify_qp(srvq[2].qp, &attr, IBV_QP_STATE), 0);
	assert_int_equal(next_event(srv.ctx, &ev, 5000), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	assert_ptr_equal(ev.element.qp, srvq[2].qp);
	ibv_ack_async_event(&ev);
	/* the SRQ's WQEs stay for the others */
	assert_int_equal(ep_post(&cli[0], IBV_WR_SEND, 7, 0, 100, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	assert_int_equal(ep_poll(srv.rcq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.qp_num, srvq[0].qp->qp_num);
	assert_int_equal(ep_poll(cli[0].scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
}

static void
test_qp_fatal(void **state)
{
	struct ibv_async_event ev;
	struct ep a, b;
	struct ibv_wc wc;
	uint32_t rkey;

	(void)state;
	assert_int_equal(ep_pair(&a, &b, 4096, &opts), 0);
	rkey = b.mr->rkey;
	b.mr->rkey = rkey ^ 0x5a5a;     /* a key b never gave out */
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 1, 0, 64, &b, 0,
				 IBV_SEND_SIGNALED), 0);
	b.mr->rkey = rkey;
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(next_event(b.ctx, &ev, 5000), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_QP_FATAL);
	assert_ptr_equal(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	assert_int_equal(ep_qp_state(b.qp), IBV_QPS_ERR);
	ep_close(&a);
	ep_close(&b);
}

static void
test_srq_rules(void **state)
{
	struct ibv_srq_init_attr_ex sx;
	struct ibv_srq_init_attr sa;
	struct ibv_device_attr da;
	struct ibv_srq_attr attr;
	struct ibv_recv_wr wr[70], *bad;
	struct ibv_sge sge[3];
	struct ibv_srq *small;
	int i;

	(void)state;
	assert_int_equal(ibv_query_device(srv.ctx, &da), 0);
	assert_true(da.max_srq > 0);
	assert_true(da.max_srq_wr >= 64);
	assert_true(da.max_srq_sge >= 2);

	/* an SRQ QP has no receive queue of its own */
	memset(wr, 0, sizeof(wr));
	assert_int_equal(ibv_post_recv(srvq[0].qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[0]);

	/* too many SGEs: that WR and those after it are not posted */
	memset(sge, 0, sizeof(sge));
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 2;
	small = ibv_create_srq(srv.pd, &sa);
	assert_non_null(small);
	wr[0].next = &wr[1];
	wr[1].sg_list = sge;
	wr[1].num_sge = 3;
	assert_int_equal(ibv_post_srq_recv(small, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	/* one posted; four more than fit */
	for (i = 0; i < 4; i++) {
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
		wr[i].num_sge = 0;
	}
	assert_int_equal(ibv_post_srq_recv(small, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[3]);

	/* a limit within max_wr */
	memset(&attr, 0, sizeof(attr));
	attr.srq_limit = 5;
	assert_int_equal(ibv_modify_srq(small, &attr, IBV_SRQ_LIMIT), EINVAL);
	attr.srq_limit = 4;
	assert_int_equal(ibv_modify_srq(small, &attr, IBV_SRQ_LIMIT), 0);
	assert_int_equal(ibv_destroy_srq(small), 0);

	/* in use by QPs: busy; and its PD too */
	assert_int_equal(ibv_destroy_srq(srq), EBUSY);

	sa.attr.max_wr = 0;
	assert_null(ibv_create_srq(srv.pd, &sa));
	assert_int_equal(errno, EINVAL);
	sa.attr.max_wr = da.max_srq_wr + 1;
	assert_null(ibv_create_srq(srv.pd, &sa));
	assert_int_equal(errno, EINVAL);

	/* basic through _ex works (XRC and tag matching SRQs have tests of
	 * their own); a type that does not exist does not */
	memset(&sx, 0, sizeof(sx));
	sx.attr.max_wr = 4;
	sx.attr.max_sge = 1;
	sx.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
	sx.pd = srv.pd;
	sx.srq_type = IBV_SRQT_BASIC;
	small = ibv_create_srq_ex(srv.ctx, &sx);
	assert_non_null(small);
	assert_int_equal(ibv_destroy_srq(small), 0);
	sx.srq_type = (enum ibv_srq_type)77;
	assert_null(ibv_create_srq_ex(srv.ctx, &sx));
	assert_int_equal(errno, EOPNOTSUPP);
}

static uint16_t
droce1_port(void)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p)
		if (rte_eth_dev_get_name_by_port(p, name) == 0 &&
		    strstr(name, "droce_ring_droce_1") != NULL)
			return p;
	fail_msg("no port for droce1");
	return 0;
}

static void
test_port_events(void **state)
{
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	uint16_t port;

	(void)state;
	/* droce1's port of the embedded default's net_ring pair */
	port = droce1_port();
	assert_int_equal(rte_eth_dev_set_link_down(port), 0);
	assert_int_equal(next_event(srv.ctx, &ev, 5000), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_PORT_ERR);
	assert_int_equal(ev.element.port_num, 1);
	ibv_ack_async_event(&ev);
	assert_int_equal(ibv_query_port(srv.ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_DOWN);
	/* the other device's contexts hear nothing */
	assert_int_equal(next_event(cli[0].ctx, &ev, 300), -1);

	assert_int_equal(rte_eth_dev_set_link_up(port), 0);
	assert_int_equal(next_event(srv.ctx, &ev, 5000), 0);
	assert_int_equal(ev.event_type, IBV_EVENT_PORT_ACTIVE);
	ibv_ack_async_event(&ev);
	assert_int_equal(ibv_query_port(srv.ctx, 1, &pa), 0);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
}

/*
 * A pair whose sender's send CQ holds 4 completions, from
 * ibv_create_cq_ex with @p flags; 8 signalled WRITEs go unpolled.
 * @return whether IBV_EVENT_CQ_ERR came, for that CQ.
 */
static bool
overrun(uint32_t flags)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = flags,
	};
	struct ibv_qp_init_attr qa;
	struct ibv_async_event ev;
	struct ibv_cq_ex *cqx;
	struct ibv_wc wc[4];
	struct ep a, b;
	bool got;
	int i;

	assert_int_equal(ep_open(&a, 0, 4096, &opts), 0);
	assert_int_equal(ep_open(&b, 1, 4096, &opts), 0);
	cqx = ibv_create_cq_ex(a.ctx, &ca);
	assert_non_null(cqx);
	ibv_destroy_qp(a.qp);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibv_cq_ex_to_cq(cqx);
	qa.recv_cq = a.rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	a.qp = ibv_create_qp(a.pd, &qa);
	assert_non_null(a.qp);
	assert_int_equal(ep_connect(&a, &b, &opts), 0);
	assert_int_equal(ep_connect(&b, &a, &opts), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, (uint64_t)i,
					 0, 64, &b, 0, IBV_SEND_SIGNALED), 0);
	got = next_event(a.ctx, &ev, 1000) == 0;
	if (got) {
		assert_int_equal(ev.event_type, IBV_EVENT_CQ_ERR);
		assert_ptr_equal(ev.element.cq, ibv_cq_ex_to_cq(cqx));
		ibv_ack_async_event(&ev);
		/* once */
		assert_int_equal(next_event(a.ctx, &ev, 200), -1);
	}
	/* the first four are there, in order */
	assert_int_equal(ep_poll(ibv_cq_ex_to_cq(cqx), wc, 4, 5000), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(wc[i].wr_id, (uint64_t)i);
	ibv_destroy_qp(a.qp);
	a.qp = NULL;
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	ep_close(&a);
	ep_close(&b);
	return got;
}

static void
test_cq_overrun(void **state)
{
	(void)state;
	assert_true(overrun(0));
	assert_false(overrun(IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN));
}

/*
 * Under loss: each peer sends LOSS_MSGS messages of 1 to 5000 bytes; the
 * SRQ's WQEs are given back as they complete. RC resends what is lost:
 * every message arrives once, in its QP's order, right to the byte.
 */
#define LOSS_MSGS 150
#define LOSS_WQES 48

static uint32_t
loss_len(int qp, int j)
{
	return 1 + (uint32_t)(j * 2731 + qp * 977) % 5000u;
}

static void
test_srq_loss(void **state)
{
	int next[NQP] = { 0 }, sent[NQP] = { 0 }, done[NQP] = { 0 };
	struct ibv_wc wc[16];
	int i, k, got = 0;

	(void)state;
	for (k = 0; k < LOSS_WQES; k++)
		assert_int_equal(post_srq((uint64_t)k, (size_t)k * 8192, 8192),
				 0);
	for (i = 0; i < NQP; i++)
		for (k = 0; k < LOSS_MSGS; k++)
			fill_pattern(cli[i].buf + (size_t)k * 8192,
				     loss_len(i, k), (uint32_t)(i * 1000 + k));
	while (got < NQP * LOSS_MSGS) {
		int n;

		/* up to 16 of each peer's messages in flight */
		for (i = 0; i < NQP; i++)
			while (sent[i] < LOSS_MSGS && sent[i] - done[i] < 16) {
				assert_int_equal(ep_post(&cli[i], IBV_WR_SEND,
						(uint64_t)sent[i],
						(size_t)sent[i] * 8192,
						loss_len(i, sent[i]), NULL, 0,
						IBV_SEND_SIGNALED), 0);
				sent[i]++;
			}
		for (i = 0; i < NQP; i++) {
			n = ibv_poll_cq(cli[i].scq, 16, wc);
			assert_true(n >= 0);
			for (k = 0; k < n; k++) {
				assert_int_equal(wc[k].status, IBV_WC_SUCCESS);
				assert_int_equal(wc[k].wr_id,
						 (uint64_t)done[i]);
				done[i]++;
			}
		}
		n = ep_poll(srv.rcq, wc, 1, 10000);
		assert_int_equal(n, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		i = qp_index(wc[0].qp_num);
		assert_true(i >= 0);
		k = next[i]++;
		assert_true(k < LOSS_MSGS);
		assert_int_equal(wc[0].byte_len, loss_len(i, k));
		assert_memory_equal(srv.buf + wc[0].wr_id * 8192,
				    cli[i].buf + (size_t)k * 8192,
				    loss_len(i, k));
		assert_int_equal(post_srq(wc[0].wr_id, wc[0].wr_id * 8192,
					  8192), 0);
		got++;
	}
	for (i = 0; i < NQP; i++) {
		while (done[i] < LOSS_MSGS) {
			assert_int_equal(ep_poll(cli[i].scq, wc, 1, 10000), 1);
			assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
			done[i]++;
		}
		assert_int_equal(next[i], LOSS_MSGS);
	}
	/* and the faults were there: packets were sent again */
	for (i = 0, k = 0; i < NQP; i++) {
		struct droce_qp_counters c;

		assert_int_equal(droce_query_qp_counters(cli[i].qp, &c), 0);
		k += (int)c.retransmits;
	}
	print_message("%d messages through the SRQ, %d packets resent\n",
		      NQP * LOSS_MSGS, k);
	assert_true(k > 0);
}

/* Resizing an SRQ with WQEs in it. */
static void
test_srq_resize(void **state)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr attr;
	struct ibv_srq *s = ibv_create_srq(srv.pd, &sa);
	struct ibv_qp_init_attr qa = {
		.send_cq = srv.scq, .recv_cq = srv.rcq, .srq = s,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ibv_device_attr da;
	struct ibv_wc wc;
	struct ep c, q;
	uint64_t i;

	(void)state;
	assert_int_equal(ibv_query_device(srv.ctx, &da), 0);
	assert_true(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE);
	assert_non_null(s);
	assert_int_equal(ep_open(&c, 0, LEN, &opts), 0);
	q = srv;
	q.qp = ibv_create_qp(srv.pd, &qa);
	assert_non_null(q.qp);
	q.psn = 0x777;
	assert_int_equal(ep_connect(&c, &q, &opts), 0);
	assert_int_equal(ep_connect(&q, &c, &opts), 0);

	for (i = 0; i < 4; i++)
		assert_int_equal(post_to(s, i, i * 1024, 1024), 0);
	assert_int_equal(post_to(s, 4, 4 * 1024, 1024), ENOMEM);
	/* smaller than what is posted: no */
	memset(&attr, 0, sizeof(attr));
	attr.max_wr = 3;
	assert_int_equal(ibv_modify_srq(s, &attr, IBV_SRQ_MAX_WR), EINVAL);
	attr.max_wr = 20;
	assert_int_equal(ibv_modify_srq(s, &attr, IBV_SRQ_MAX_WR), 0);
	assert_int_equal(ibv_query_srq(s, &attr), 0);
	assert_int_equal(attr.max_wr, 20);
	for (i = 4; i < 20; i++)
		assert_int_equal(post_to(s, i, i * 1024, 1024), 0);
	assert_int_equal(post_to(s, 20, 20 * 1024, 1024), ENOMEM);
	/* a limit of 15, then a size below it: no */
	attr.srq_limit = 15;
	assert_int_equal(ibv_modify_srq(s, &attr, IBV_SRQ_LIMIT), 0);
	attr.max_wr = 10;
	assert_int_equal(ibv_modify_srq(s, &attr, IBV_SRQ_MAX_WR), EINVAL);
	attr.srq_limit = 0;
	assert_int_equal(ibv_modify_srq(s, &attr, IBV_SRQ_LIMIT), 0);

	/* every WQE, those from before the resize first, in order */
	for (i = 0; i < 20; i++) {
		fill_pattern(c.buf, 1000, (uint32_t)i);
		assert_int_equal(ep_post(&c, IBV_WR_SEND, i, 0, 1000, NULL, 0,
					 IBV_SEND_SIGNALED), 0);
		assert_int_equal(ep_poll(c.scq, &wc, 1, 5000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(ep_poll(srv.rcq, &wc, 1, 5000), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(wc.wr_id, i);
		assert_memory_equal(srv.buf + i * 1024, c.buf, 1000);
	}
	assert_int_equal(ibv_destroy_qp(q.qp), 0);
	assert_int_equal(ibv_destroy_srq(s), 0);
	ep_close(&c);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest loss_tests[] = {
		cmocka_unit_test(test_srq_loss),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srq_shared),
		cmocka_unit_test(test_srq_limit),
		cmocka_unit_test(test_srq_rules),
		cmocka_unit_test(test_srq_resize),
		cmocka_unit_test(test_srq_last_wqe),
		cmocka_unit_test(test_qp_fatal),
		cmocka_unit_test(test_port_events),
		cmocka_unit_test(test_cq_overrun),
	};

	if (argc == 3) {
		if (ep_fault_config(argv[1], "srq", 4, argv[2], 3) != 0) {
			perror("test_srq: config");
			return 1;
		}
		/* 4.096 us * 2^10: a lost tail costs about 4 ms */
		return cmocka_run_group_tests_name(argv[2], loss_tests,
						   setup, teardown);
	}
	if (argc != 1) {
		fprintf(stderr, "usage: test_srq [WORKDIR FAULT_ARGS]\n");
		return 2;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
