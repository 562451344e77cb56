/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The control path through the verbs API, held to what rdma-core
 * documents: devices, ports and GIDs; protection domains and memory
 * regions; CQs, their extended attributes and resizing; completion
 * channels with solicited and non-blocking waits; the limits of QP
 * creation and the QP state machine with its attribute masks; and the
 * checks a post makes before anything reaches the wire (state, opcode,
 * SGE count, inline size, a full send or receive queue); and the raw
 * frames of droce_raw_send(), plain and RoCE, as the receiver counts them.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <droce.h>

#include "harness.h"

#define BUF (64u << 10)
#define TIMEOUT_MS 5000
#define QUIET_MS 100            /* how long "nothing happens" is watched */

#define INIT_MASK (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RTR_MASK (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
	IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK (IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | \
	IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT)

static struct ep a, b;
static struct ep_opts opts;
static struct ibv_comp_channel *chan;
static int chan_tag;            /* the cq_context of the channel's CQ */

/* ------------------------------------------------------------------------
 * Helpers.
 */

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	nanosleep(&ts, NULL);
}

/*
 * A device of a test's own: droce0 or droce1 open and, if asked for, a
 * PD and a page-aligned buffer. dev_close() checks each step.
 */
struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t *buf;
};

/* Open device @p idx; with a PD and @p len bytes of buffer if not 0. */
static void
dev_open(struct dev *d, int idx, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->ctx = ep_open_device(idx);
	assert_non_null(d->ctx);
	if (len == 0)
		return;
	d->pd = ibv_alloc_pd(d->ctx);
	assert_non_null(d->pd);
	d->buf = aligned_alloc(4096, len);
	assert_non_null(d->buf);
}

static void
dev_close(struct dev *d)
{
	if (d->pd != NULL)
		assert_int_equal(ibv_dealloc_pd(d->pd), 0);
	free(d->buf);
	assert_int_equal(ibv_close_device(d->ctx), 0);
}

/* a on droce0 and b on droce1, both in RTS towards each other. */
static struct ep_pair_fixture connected = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF,
};

static int
stay_in_reset(void)
{
	return 0;
}

/* Both endpoints open, QPs left in RESET. */
static struct ep_pair_fixture unconnected = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .up = stay_in_reset,
};

/* Give @p e a new QP whose receive CQ is @p rcq (its old one goes). */
static int
ep_requeue(struct ep *e, struct ibv_cq *rcq, const struct ep_opts *o)
{
	struct ibv_qp_init_attr qa;

	if (ibv_destroy_qp(e->qp) != 0)
		return -1;
	e->qp = NULL;
	if (ibv_destroy_cq(e->rcq) != 0)
		return -1;
	e->rcq = rcq;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = o->max_send_wr;
	qa.cap.max_recv_wr = o->max_recv_wr;
	qa.cap.max_send_sge = o->max_sge;
	qa.cap.max_recv_sge = o->max_sge;
	qa.cap.max_inline_data = o->max_inline;
	e->qp = ibv_create_qp(e->pd, &qa);
	return e->qp != NULL ? 0 : -1;
}

/* The caps the QP of @p e really has (at least what was asked). */
static struct ibv_qp_cap
qp_caps(struct ep *e)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	assert_int_equal(ibv_query_qp(e->qp, &attr, IBV_QP_CAP, &init), 0);
	return init.cap;
}

/*
 * Move @p e's QP to @p state with the attributes of @p mask (IBV_QP_STATE
 * is added); every attribute is filled for a path to @p peer.
 */
static int
qp_modify(struct ep *e, enum ibv_qp_state state, int mask,
	  const struct ep *peer)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qp_access_flags = (unsigned int)opts.qp_access;
	attr.path_mtu = opts.mtu;
	attr.dest_qp_num = peer->qp->qp_num;
	attr.rq_psn = peer->psn;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = opts.min_rnr_timer;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = peer->gid;
	attr.ah_attr.grh.sgid_index = 0;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.port_num = 1;
	attr.timeout = opts.timeout;
	attr.retry_cnt = opts.retry_cnt;
	attr.rnr_retry = opts.rnr_retry;
	attr.sq_psn = e->psn;
	attr.max_rd_atomic = 16;
	return ibv_modify_qp(e->qp, &attr, mask | IBV_QP_STATE);
}

/* From RESET up to @p target (INIT, RTR or RTS) towards @p peer. */
static void
qp_bring_up(struct ep *e, const struct ep *peer, enum ibv_qp_state target)
{
	assert_int_equal(qp_modify(e, IBV_QPS_INIT, INIT_MASK, peer), 0);
	if (target == IBV_QPS_INIT)
		return;
	assert_int_equal(qp_modify(e, IBV_QPS_RTR, RTR_MASK, peer), 0);
	if (target == IBV_QPS_RTR)
		return;
	assert_int_equal(qp_modify(e, IBV_QPS_RTS, RTS_MASK, peer), 0);
}

/* One send-queue WR on e->buf[off, off + len), remote side @p r at roff. */
static void
wr_fill(struct ibv_send_wr *wr, struct ibv_sge *sge, const struct ep *e,
	enum ibv_wr_opcode op, uint64_t wr_id, size_t off, uint32_t len,
	const struct ep *r, size_t roff, unsigned int flags)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)(e->buf + off);
	sge->length = len;
	sge->lkey = e->mr->lkey;
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = flags;
	if (r != NULL) {
		wr->wr.rdma.remote_addr = (uintptr_t)(r->buf + roff);
		wr->wr.rdma.rkey = r->mr->rkey;
	}
}

static void
expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
	  enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(cq, &wc, 1, TIMEOUT_MS), 1);
	assert_int_equal(wc.wr_id, wr_id);
	assert_int_equal(wc.status, status);
	if (status == IBV_WC_SUCCESS)
		assert_int_equal(wc.opcode, op);
}

static void
expect_no_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	assert_int_equal(ep_poll(cq, &wc, 1, QUIET_MS), 0);
}

/* A signalled SEND of @p len bytes from a to a receive posted on b. */
static void
send_a_to_b(uint64_t wr_id, uint32_t len, unsigned int flags)
{
	assert_int_equal(ep_post_recv(&b, wr_id, 0, len), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, wr_id, 0, len, NULL, 0,
				 IBV_SEND_SIGNALED | flags), 0);
	expect_wc(a.scq, wr_id, IBV_WC_SUCCESS, IBV_WC_SEND);
}

/* @return 1 if @p fd becomes readable within @p ms, else 0. */
static int
fd_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, ms);

	return r > 0 && (p.revents & POLLIN) ? 1 : 0;
}

/* Read one channel event, acknowledge it at once, and check it is b's. */
static void
expect_cq_event(void)
{
	struct ibv_cq *cq = NULL;
	void *cq_ctx = NULL;
	int ret;

	ret = ibv_get_cq_event(chan, &cq, &cq_ctx);
	if (ret == 0)
		ibv_ack_cq_events(cq, 1);
	assert_int_equal(ret, 0);
	assert_ptr_equal(cq, b.rcq);
	assert_ptr_equal(cq_ctx, &chan_tag);
}

/* ------------------------------------------------------------------------
 * Devices, ports, GIDs.
 */

static void
test_device_list(void **state)
{
	struct ibv_device **list;
	uint64_t guid0, guid1;
	int n = -1;

	(void)state;
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 2);
	assert_null(list[2]);
	assert_string_equal(ibv_get_device_name(list[0]), "droce0");
	assert_string_equal(ibv_get_device_name(list[1]), "droce1");
	guid0 = ibv_get_device_guid(list[0]);
	guid1 = ibv_get_device_guid(list[1]);
	assert_true(guid0 != 0);
	assert_true(guid1 != 0);
	assert_true(guid0 != guid1);
	ibv_free_device_list(list);
}

static void
test_device_open_close(void **state)
{
	struct ibv_device **list;
	struct ibv_context *c0, *c1;
	int n, fd;

	(void)state;
	list = ibv_get_device_list(&n);
	assert_non_null(list);
	assert_int_equal(n, 2);
	c0 = ibv_open_device(list[0]);
	c1 = ibv_open_device(list[1]);
	assert_non_null(c0);
	assert_non_null(c1);
	assert_ptr_equal(c0->device, list[0]);
	assert_ptr_equal(c1->device, list[1]);
	assert_true(c0->num_comp_vectors >= 1);
	/* a file of the context's own, which another context cannot be
	 * imported from: EOPNOTSUPP, as the tests that dup() it skip on */
	assert_true(c0->cmd_fd >= 0);
	assert_int_not_equal(c0->cmd_fd, c1->cmd_fd);
	fd = dup(c0->cmd_fd);
	assert_true(fd >= 0);
	errno = 0;
	assert_null(ibv_import_device(fd));
	assert_int_equal(errno, EOPNOTSUPP);
	close(fd);
	ibv_free_device_list(list);
	assert_int_equal(ibv_close_device(c0), 0);
	assert_int_equal(ibv_close_device(c1), 0);
}

/*
 * The old entry points of the context ops lead where libibverbs' do (the
 * operations themselves), and the ops verbs.h's inline wrappers call
 * without checking are there, failing cleanly.
 */
static void
test_context_compat_ops(void **state)
{
	struct ibv_device **list;
	struct ibv_context *c;
	struct ibv_device_attr da;
	struct ibv_pd *pd;

	(void)state;
	list = ibv_get_device_list(NULL);
	assert_non_null(list);
	c = ibv_open_device(list[0]);
	assert_non_null(c);
	memset(&da, 0, sizeof(da));
	assert_int_equal(c->ops._compat_query_device(c, &da), 0);
	assert_true(da.max_qp > 0);
	pd = ((struct ibv_pd *(*)(struct ibv_context *))
	      (void (*)(void))c->ops._compat_alloc_pd)(c);
	assert_non_null(pd);
	assert_ptr_equal(pd->context, c);
	assert_int_equal(((int (*)(struct ibv_pd *))
			  (void (*)(void))c->ops._compat_dealloc_pd)(pd), 0);
	assert_non_null(c->ops._compat_query_port);
	assert_non_null(c->ops._compat_create_qp);
	assert_non_null(c->ops.alloc_mw);
	assert_non_null(c->ops.bind_mw);
	assert_non_null(c->ops.dealloc_mw);
	assert_non_null(c->ops.post_srq_recv);
	ibv_free_device_list(list);
	assert_int_equal(ibv_close_device(c), 0);
}

static void
test_query_device(void **state)
{
	struct ibv_device_attr da;
	struct dev d;

	(void)state;
	dev_open(&d, 0, 0);
	memset(&da, 0xa5, sizeof(da));
	assert_int_equal(ibv_query_device(d.ctx, &da), 0);
	assert_true(da.node_guid == ibv_get_device_guid(d.ctx->device));
	assert_int_equal(da.phys_port_cnt, 1);
	/* droce's own company ID: locally administered, never 0 */
	assert_int_equal(da.vendor_id, 0x02d70c);
	assert_true(da.max_qp >= 64);
	assert_true(da.max_qp_wr >= 256);
	assert_true(da.max_sge >= 4);
	assert_true(da.max_sge_rd >= 1);
	assert_true(da.max_cq >= 64);
	assert_true(da.max_cqe >= 1024);
	assert_true(da.max_mr >= 64);
	assert_true(da.max_pd >= 64);
	assert_true(da.max_mr_size >= (1u << 30));
	assert_true(da.max_qp_rd_atom >= 1);
	assert_true(da.max_qp_init_rd_atom >= 1);
	assert_true(da.max_res_rd_atom >= da.max_qp_rd_atom);
	assert_int_not_equal(da.atomic_cap, IBV_ATOMIC_NONE);
	assert_true(da.max_pkeys >= 1);
	assert_true(da.fw_ver[0] != '\0');
	dev_close(&d);
}

static void
test_query_device_ex(void **state)
{
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct dev d;

	(void)state;
	dev_open(&d, 0, 0);
	memset(&dx, 0, sizeof(dx));
	assert_int_equal(ibv_query_device_ex(d.ctx, NULL, &dx), 0);
	assert_int_equal(ibv_query_device(d.ctx, &da), 0);
	assert_memory_equal(&dx.orig_attr, &da, sizeof(da));
	assert_int_equal(dx.phys_port_cnt_ex, da.phys_port_cnt);
	assert_true(dx.hca_core_clock != 0);
	dev_close(&d);
}

static void
test_query_port(void **state)
{
	struct ibv_port_attr pa;
	struct dev d;
	int i;

	(void)state;
	dev_open(&d, 0, 0);
	memset(&pa, 0, sizeof(pa));
	/* the link may still be coming up right after the engine started */
	for (i = 0; i < 100; i++) {
		assert_int_equal(ibv_query_port(d.ctx, 1, &pa), 0);
		if (pa.state == IBV_PORT_ACTIVE)
			break;
		sleep_ms(20);
	}
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_true(pa.active_mtu >= IBV_MTU_256);
	assert_true(pa.active_mtu <= IBV_MTU_4096);
	assert_true(pa.active_mtu <= pa.max_mtu);
	assert_true(pa.gid_tbl_len >= 1);
	assert_true(pa.pkey_tbl_len >= 1);
	assert_true(pa.max_msg_sz >= (1u << 20));
	/* droce has one port, numbered 1 */
	assert_int_not_equal(ibv_query_port(d.ctx, 0, &pa), 0);
	assert_int_not_equal(ibv_query_port(d.ctx, 2, &pa), 0);
	dev_close(&d);
}

static void
test_query_gid(void **state)
{
	static const uint8_t want[2][16] = {
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2 },
	};
	union ibv_gid gid;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct dev d;

		dev_open(&d, i, 0);
		assert_int_equal(ibv_query_gid(d.ctx, 1, 0, &gid), 0);
		assert_memory_equal(gid.raw, want[i], 16);
		dev_close(&d);
	}
}

/* droce1's counters once they stop moving (frames still in flight). */
static void
settled_counters(struct ibv_context *ctx, struct droce_counters *c)
{
	struct droce_counters prev;
	int waited = 0;

	assert_int_equal(droce_query_counters(ctx, c), 0);
	do {
		prev = *c;
		sleep_ms(20);
		waited += 20;
		assert_int_equal(droce_query_counters(ctx, c), 0);
	} while (c->rx_frames != prev.rx_frames && waited < TIMEOUT_MS);
}

/*
 * droce_raw_send(): plain frames reach droce1 and are dropped as not
 * RoCE; with DROCE_RAW_ROCE they are RoCE frames with good ICRCs (the
 * receiver checks each) that no QP takes; lengths no frame (or no SEND)
 * has and unknown flags are refused.
 */
static void
test_raw_send(void **state)
{
	struct droce_counters before, after;
	struct dev d0, d1;
	uint8_t mac1[6];
	uint64_t sent = 0;

	(void)state;
	dev_open(&d0, 0, 0);
	dev_open(&d1, 1, 0);
	assert_int_equal(droce_query_mac(d1.ctx, mac1), 0);

	settled_counters(d1.ctx, &before);
	assert_int_equal(droce_raw_send(d0.ctx, mac1, 138, 50, 0, &sent), 0);
	assert_true(sent > 0);
	settled_counters(d1.ctx, &after);
	assert_int_equal(after.rx_frames - before.rx_frames, sent);
	assert_int_equal(after.rx_not_ours - before.rx_not_ours, sent);
	assert_int_equal(after.rx_roce, before.rx_roce);

	before = after;
	sent = 0;
	assert_int_equal(droce_raw_send(d0.ctx, mac1, 138, 50, DROCE_RAW_ROCE,
					&sent), 0);
	assert_true(sent > 0);
	settled_counters(d1.ctx, &after);
	assert_int_equal(after.rx_frames - before.rx_frames, sent);
	assert_int_equal(after.rx_roce - before.rx_roce, sent);
	assert_int_equal(after.rx_not_ours - before.rx_not_ours, sent);
	assert_int_equal(after.rx_icrc_err, before.rx_icrc_err);
	assert_int_equal(after.rx_malformed, before.rx_malformed);

	/* 58 bytes of headers and ICRC, then whole words of payload */
	assert_int_equal(droce_raw_send(d0.ctx, mac1, 60, 10, DROCE_RAW_ROCE,
					&sent), EINVAL);
	assert_int_equal(droce_raw_send(d0.ctx, mac1, 20, 10, 0, &sent),
			 EINVAL);
	assert_int_equal(droce_raw_send(d0.ctx, mac1, 138, 10, 2, &sent),
			 EINVAL);
	dev_close(&d0);
	dev_close(&d1);
}

/*
 * droce_raw_pingpong(): round trips between droce0 and droce1, which
 * echoes on the engine lcore the two share (in one process), each timed;
 * droce1 sent one echo a ping, and nothing went to its receive path;
 * lengths no frame has are refused.
 */
static void
test_raw_pingpong(void **state)
{
	enum { N = 1000 };
	struct droce_counters b0, a0, b1, a1;
	static uint32_t rtt[N];
	struct dev d0, d1;
	uint32_t done = 0, i;
	uint8_t mac1[6];

	(void)state;
	dev_open(&d0, 0, 0);
	dev_open(&d1, 1, 0);
	assert_int_equal(droce_query_mac(d1.ctx, mac1), 0);
	settled_counters(d0.ctx, &b0);
	settled_counters(d1.ctx, &b1);
	memset(rtt, 0, sizeof(rtt));
	assert_int_equal(droce_raw_pingpong(d0.ctx, mac1, 64, N, rtt, &done),
			 0);
	assert_int_equal(done, N);
	for (i = 0; i < N; i++)
		assert_true(rtt[i] > 0 && rtt[i] < 10000000);
	settled_counters(d0.ctx, &a0);
	settled_counters(d1.ctx, &a1);
	assert_int_equal(a0.tx_frames - b0.tx_frames, N);
	assert_int_equal(a1.rx_frames - b1.rx_frames, N);
	assert_int_equal(a1.tx_frames - b1.tx_frames, N);
	assert_int_equal(a0.rx_frames - b0.rx_frames, N);
	assert_int_equal(a1.rx_not_ours, b1.rx_not_ours);

	assert_int_equal(droce_raw_pingpong(d0.ctx, mac1, 20, 1, rtt, &done),
			 EINVAL);
	assert_int_equal(droce_raw_pingpong(d0.ctx, mac1, 65536, 1, rtt,
					    &done), EINVAL);
	dev_close(&d0);
	dev_close(&d1);
}

static void
test_query_gid_type(void **state)
{
	struct ibv_gid_entry entry;
	struct dev d;
	union ibv_gid gid;

	(void)state;
	dev_open(&d, 0, 0);
	assert_int_equal(ibv_query_gid(d.ctx, 1, 0, &gid), 0);
	memset(&entry, 0, sizeof(entry));
	assert_int_equal(ibv_query_gid_ex(d.ctx, 1, 0, &entry, 0), 0);
	assert_int_equal(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(entry.gid_index, 0);
	assert_int_equal(entry.port_num, 1);
	assert_memory_equal(entry.gid.raw, gid.raw, 16);
	dev_close(&d);
}

static void
test_query_gid_out_of_range(void **state)
{
	struct ibv_port_attr pa;
	struct dev d;
	union ibv_gid gid;

	(void)state;
	dev_open(&d, 0, 0);
	assert_int_equal(ibv_query_port(d.ctx, 1, &pa), 0);
	assert_int_equal(ibv_query_gid(d.ctx, 1, pa.gid_tbl_len, &gid), -1);
	assert_int_equal(ibv_query_gid(d.ctx, 1, -1, &gid), -1);
	assert_int_equal(ibv_query_gid(d.ctx, 2, 0, &gid), -1);
	dev_close(&d);
}

/* ------------------------------------------------------------------------
 * Protection domains and memory regions.
 */

#define NMR 8

static void
test_mr_keys(void **state)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *mr[NMR];
	uint32_t keys[2 * NMR];
	struct dev d;
	int i, j;

	(void)state;
	dev_open(&d, 0, NMR * 4096);
	assert_ptr_equal(d.pd->context, d.ctx);
	for (i = 0; i < NMR; i++) {
		mr[i] = ibv_reg_mr(d.pd, d.buf + i * 4096, 4096, access);
		assert_non_null(mr[i]);
		assert_ptr_equal(mr[i]->addr, d.buf + i * 4096);
		assert_int_equal(mr[i]->length, 4096);
		assert_ptr_equal(mr[i]->pd, d.pd);
		assert_ptr_equal(mr[i]->context, d.ctx);
		keys[2 * i] = mr[i]->lkey;
		keys[2 * i + 1] = mr[i]->rkey;
	}
	for (i = 0; i < 2 * NMR; i++)
		for (j = i + 1; j < 2 * NMR; j++)
			assert_int_not_equal(keys[i], keys[j]);
	/* one key does not give away the next */
	for (i = 1; i < NMR; i++) {
		assert_int_not_equal(mr[i]->lkey, mr[i - 1]->lkey + 1);
		assert_int_not_equal(mr[i]->rkey, mr[i - 1]->rkey + 1);
		assert_int_not_equal(mr[i]->rkey, mr[i]->lkey + 1);
	}
	for (i = 0; i < NMR; i++)
		assert_int_equal(ibv_dereg_mr(mr[i]), 0);
	dev_close(&d);
}

static void
test_mr_access_rules(void **state)
{
	struct ibv_mr *mr;
	struct dev d;

	(void)state;
	dev_open(&d, 0, 4096);

	/* remote write and remote atomic need local write */
	errno = 0;
	assert_null(ibv_reg_mr(d.pd, d.buf, 4096, IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_reg_mr(d.pd, d.buf, 4096, IBV_ACCESS_REMOTE_ATOMIC));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_reg_mr(d.pd, d.buf, 4096, IBV_ACCESS_REMOTE_READ |
			       IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);

	/* remote read alone is fine, and so is write with local write */
	mr = ibv_reg_mr(d.pd, d.buf, 4096, IBV_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr(d.pd, d.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);

	dev_close(&d);
}

static void
test_dealloc_pd_busy(void **state)
{
	struct ibv_mr *mr;
	struct dev d;

	(void)state;
	dev_open(&d, 0, 4096);
	mr = ibv_reg_mr(d.pd, d.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);

	/* a PD in use by an MR stays */
	assert_int_equal(ibv_dealloc_pd(d.pd), EBUSY);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(d.pd), 0);
	d.pd = NULL;
	dev_close(&d);
}

/* ------------------------------------------------------------------------
 * Completion queues.
 */

static void
test_cq_too_big(void **state)
{
	struct ibv_device_attr da;
	struct dev d;
	struct ibv_cq *cq;

	(void)state;
	dev_open(&d, 0, 0);
	assert_int_equal(ibv_query_device(d.ctx, &da), 0);
	errno = 0;
	assert_null(ibv_create_cq(d.ctx, da.max_cqe + 1, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	cq = ibv_create_cq(d.ctx, da.max_cqe, NULL, NULL, 0);
	assert_non_null(cq);
	assert_true(cq->cqe >= da.max_cqe);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	dev_close(&d);
}

static void
test_cq_ex_unsupported_wc_flags(void **state)
{
	static const uint64_t flags[] = {
		IBV_WC_EX_WITH_FLOW_TAG,
		IBV_WC_EX_WITH_CVLAN,
		IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG,
	};
	struct ibv_cq_init_attr_ex ca;
	struct dev d;
	size_t i;

	(void)state;
	dev_open(&d, 0, 0);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&ca, 0, sizeof(ca));
		ca.cqe = 64;
		ca.wc_flags = flags[i];
		errno = 0;
		assert_null(ibv_create_cq_ex(d.ctx, &ca));
		assert_int_equal(errno, EOPNOTSUPP);
	}
	dev_close(&d);
}

static void
test_cq_ex_supported_wc_flags(void **state)
{
	struct ibv_cq_init_attr_ex ca;
	struct dev d;
	struct ibv_cq_ex *cqx;

	(void)state;
	dev_open(&d, 0, 0);
	memset(&ca, 0, sizeof(ca));
	ca.cqe = 64;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
		IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cqx = ibv_create_cq_ex(d.ctx, &ca);
	assert_non_null(cqx);
	assert_true(cqx->cqe >= 64);
	assert_non_null(cqx->start_poll);
	assert_non_null(cqx->next_poll);
	assert_non_null(cqx->end_poll);
	assert_non_null(cqx->read_opcode);
	assert_non_null(cqx->read_byte_len);
	assert_non_null(cqx->read_imm_data);
	assert_non_null(cqx->read_qp_num);
	assert_non_null(cqx->read_src_qp);
	assert_non_null(cqx->read_completion_ts);
	assert_int_equal(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	dev_close(&d);
}

/*
 * Completions waiting in a CQ survive a resize; the new size holds. A
 * size below the completions it holds and those its QPs' signalled
 * sends still owe it is refused (EINVAL) whether they have been written
 * yet or not, the CQ left as it was.
 */
static void
test_resize_cq(void **state)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_device_attr da;
	struct ibv_wc wc[40];
	struct ibv_sge sge;
	int i;

	(void)state;
	ep_opts_default(&opts);
	opts.cqe = 16;
	assert_int_equal(ep_pair(&a, &b, BUF, &opts), 0);
	assert_int_equal(ibv_query_device(a.ctx, &da), 0);

	for (i = 0; i < 8; i++) {
		wr_fill(&wr, &sge, &a, IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 8, &b,
			0, IBV_SEND_SIGNALED);
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	}
	assert_int_equal(ibv_resize_cq(a.scq, 4), EINVAL);
	assert_true(a.scq->cqe >= 16);
	assert_int_equal(ibv_resize_cq(a.scq, 64), 0);
	assert_true(a.scq->cqe >= 64);
	assert_int_equal(ep_poll(a.scq, wc, 8, TIMEOUT_MS), 8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, (uint64_t)i);
	}

	/* 40 completions wait at once: more than the old 16 */
	for (i = 0; i < 40; i++) {
		wr_fill(&wr, &sge, &a, IBV_WR_RDMA_WRITE, 100 + (uint64_t)i, 0,
			8, &b, 0, IBV_SEND_SIGNALED);
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	}
	sleep_ms(QUIET_MS);
	assert_int_equal(ep_poll(a.scq, wc, 40, TIMEOUT_MS), 40);
	for (i = 0; i < 40; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 100 + (uint64_t)i);
	}

	assert_int_not_equal(ibv_resize_cq(a.scq, (int)da.max_cqe + 1), 0);
	assert_true(a.scq->cqe >= 64);
}

/* ------------------------------------------------------------------------
 * Completion channels: b's receive CQ reports on one.
 */

static int
chan_up(void)
{
	struct ibv_cq *cq;

	chan = ibv_create_comp_channel(b.ctx);
	if (chan == NULL)
		return -1;
	cq = ibv_create_cq(b.ctx, opts.cqe, &chan_tag, chan, 0);
	if (cq == NULL || ep_requeue(&b, cq, &opts) != 0)
		return -1;
	return ep_pair_up(&a, &b, &opts);
}

static void
chan_release(void)
{
	ep_close(&b);           /* the CQ on the channel first */
	if (chan != NULL)
		ibv_destroy_comp_channel(chan);
	chan = NULL;
}

static struct ep_pair_fixture with_chan = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .up = chan_up,
	.release = chan_release,
};

static void
test_channel_event(void **state)
{
	(void)state;
	assert_ptr_equal(b.rcq->channel, chan);
	assert_ptr_equal(chan->context, b.ctx);
	/* a channel with a CQ on it stays */
	assert_int_equal(ibv_destroy_comp_channel(chan), EBUSY);
	assert_int_equal(fd_readable(chan->fd, 0), 0);

	assert_int_equal(ibv_req_notify_cq(b.rcq, 0), 0);
	send_a_to_b(1, 64, 0);
	assert_int_equal(fd_readable(chan->fd, TIMEOUT_MS), 1);
	expect_cq_event();
	expect_wc(b.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	/* the event was consumed */
	assert_int_equal(fd_readable(chan->fd, 0), 0);
}

static void
test_channel_no_rearm(void **state)
{
	(void)state;
	assert_int_equal(ibv_req_notify_cq(b.rcq, 0), 0);
	send_a_to_b(1, 64, 0);
	assert_int_equal(fd_readable(chan->fd, TIMEOUT_MS), 1);
	expect_cq_event();
	expect_wc(b.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);

	/* not armed again: a completion, no event */
	send_a_to_b(2, 64, 0);
	expect_wc(b.rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_int_equal(fd_readable(chan->fd, QUIET_MS), 0);

	/* armed again: the next one wakes */
	assert_int_equal(ibv_req_notify_cq(b.rcq, 0), 0);
	send_a_to_b(3, 64, 0);
	assert_int_equal(fd_readable(chan->fd, TIMEOUT_MS), 1);
	expect_cq_event();
	expect_wc(b.rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV);
}

static void
test_channel_solicited(void **state)
{
	(void)state;
	assert_int_equal(ibv_req_notify_cq(b.rcq, 1), 0);

	/* an unsolicited SEND completes without waking */
	send_a_to_b(1, 64, 0);
	expect_wc(b.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_int_equal(fd_readable(chan->fd, QUIET_MS), 0);

	/* a solicited one wakes */
	send_a_to_b(2, 64, IBV_SEND_SOLICITED);
	assert_int_equal(fd_readable(chan->fd, TIMEOUT_MS), 1);
	expect_cq_event();
	expect_wc(b.rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
}

/* SENDs the arming race test streams from a to b. */
#define RACE_SENDS 20000
#define RACE_RECVS 64

/* a's side of the race: SENDs one after another, each waited for. */
static void *
race_sender(void *arg)
{
	struct ibv_wc wc;
	uint64_t i;

	(void)arg;
	for (i = 0; i < RACE_SENDS; i++)
		if (ep_post(&a, IBV_WR_SEND, i, 0, 8, NULL, 0,
			    IBV_SEND_SIGNALED) != 0 ||
		    ep_poll(a.scq, &wc, 1, TIMEOUT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			return (void *)1;
	return NULL;
}

/*
 * Completions arriving while the application arms the CQ: the usual
 * loop (arm, drain by polling, wait for the event) never waits for an
 * event while a completion sits in the CQ, whichever of the two comes
 * first: the engine sees the arming, or the poll sees the completion.
 */
static void
test_channel_arm_race(void **state)
{
	struct ibv_wc wc[16];
	uint64_t got = 0;
	pthread_t sender;
	void *ret;
	int i, n;

	(void)state;
	for (i = 0; i < RACE_RECVS; i++)
		assert_int_equal(ep_post_recv(&b, (uint64_t)i, 0, 8), 0);
	assert_int_equal(pthread_create(&sender, NULL, race_sender, NULL), 0);
	assert_int_equal(ibv_req_notify_cq(b.rcq, 0), 0);
	while (got < RACE_SENDS) {
		while ((n = ibv_poll_cq(b.rcq, 16, wc)) > 0) {
			for (i = 0; i < n; i++) {
				assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
				assert_int_equal(ep_post_recv(&b, wc[i].wr_id,
							      0, 8), 0);
			}
			got += (uint64_t)n;
		}
		assert_true(n == 0);
		if (got == RACE_SENDS)
			break;
		assert_int_equal(fd_readable(chan->fd, TIMEOUT_MS), 1);
		expect_cq_event();
		assert_int_equal(ibv_req_notify_cq(b.rcq, 0), 0);
	}
	assert_int_equal(pthread_join(sender, &ret), 0);
	assert_null(ret);
}

static void
test_channel_nonblock(void **state)
{
	struct ibv_cq *cq;
	void *cq_ctx;
	int flags;

	(void)state;
	flags = fcntl(chan->fd, F_GETFL);
	assert_true(flags >= 0);
	assert_int_equal(fcntl(chan->fd, F_SETFL, flags | O_NONBLOCK), 0);

	errno = 0;
	assert_int_equal(ibv_get_cq_event(chan, &cq, &cq_ctx), -1);
	assert_int_equal(errno, EAGAIN);

	/* events still come through a non-blocking channel */
	assert_int_equal(ibv_req_notify_cq(b.rcq, 0), 0);
	send_a_to_b(1, 64, 0);
	assert_int_equal(fd_readable(chan->fd, TIMEOUT_MS), 1);
	expect_cq_event();
	expect_wc(b.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	errno = 0;
	assert_int_equal(ibv_get_cq_event(chan, &cq, &cq_ctx), -1);
	assert_int_equal(errno, EAGAIN);
}

/* ------------------------------------------------------------------------
 * QP creation and the state machine.
 */

static void
test_qp_caps_beyond_limits(void **state)
{
	struct ibv_qp_init_attr qa, base;
	struct ibv_device_attr da;
	struct ibv_qp *qp;
	int i;

	(void)state;
	ep_opts_default(&opts);
	assert_int_equal(ep_open(&a, 0, BUF, &opts), 0);
	assert_int_equal(ibv_query_device(a.ctx, &da), 0);
	memset(&base, 0, sizeof(base));
	base.send_cq = a.scq;
	base.recv_cq = a.rcq;
	base.qp_type = IBV_QPT_RC;
	base.cap.max_send_wr = 16;
	base.cap.max_recv_wr = 16;
	base.cap.max_send_sge = 1;
	base.cap.max_recv_sge = 1;
	base.cap.max_inline_data = 0;

	for (i = 0; i < 5; i++) {
		qa = base;
		switch (i) {
		case 0:
			qa.cap.max_send_wr = (uint32_t)da.max_qp_wr + 1;
			break;
		case 1:
			qa.cap.max_recv_wr = (uint32_t)da.max_qp_wr + 1;
			break;
		case 2:
			qa.cap.max_send_sge = (uint32_t)da.max_sge + 1;
			break;
		case 3:
			qa.cap.max_recv_sge = (uint32_t)da.max_sge + 1;
			break;
		default:
			qa.cap.max_inline_data = 1u << 20;
			break;
		}
		errno = 0;
		qp = ibv_create_qp(a.pd, &qa);
		if (qp != NULL)
			ibv_destroy_qp(qp);
		assert_null(qp);
		assert_int_equal(errno, EINVAL);
	}

	/* the base is fine, and the caps it got are at least those asked */
	qa = base;
	qp = ibv_create_qp(a.pd, &qa);
	assert_non_null(qp);
	assert_true(qa.cap.max_send_wr >= base.cap.max_send_wr);
	assert_true(qa.cap.max_recv_wr >= base.cap.max_recv_wr);
	assert_true(qa.cap.max_send_sge >= base.cap.max_send_sge);
	assert_true(qa.cap.max_recv_sge >= base.cap.max_recv_sge);
	assert_int_equal(qp->state, IBV_QPS_RESET);
	assert_int_equal(qp->qp_type, IBV_QPT_RC);
	assert_int_not_equal(qp->qp_num, a.qp->qp_num);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

static void
test_qp_types_unsupported(void **state)
{
	/* every type verbs.h names has its own test now: these are a
	 * provider's own and one that does not exist */
	static const enum ibv_qp_type types[] = {
		IBV_QPT_DRIVER, (enum ibv_qp_type)77,
	};
	struct ibv_qp_init_attr qa;
	struct ibv_qp *qp;
	size_t i;

	(void)state;
	ep_opts_default(&opts);
	assert_int_equal(ep_open(&a, 0, BUF, &opts), 0);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = a.scq;
		qa.recv_cq = a.rcq;
		qa.qp_type = types[i];
		qa.cap.max_send_wr = 16;
		qa.cap.max_recv_wr = 16;
		qa.cap.max_send_sge = 1;
		qa.cap.max_recv_sge = 1;
		errno = 0;
		qp = ibv_create_qp(a.pd, &qa);
		if (qp != NULL)
			ibv_destroy_qp(qp);
		assert_null(qp);
		assert_int_equal(errno, EOPNOTSUPP);
	}
}

/* Each attribute a transition requires is required. */
static void
test_qp_missing_mask(void **state)
{
	static const int init_req[] = {
		IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_ACCESS_FLAGS,
	};
	static const int rtr_req[] = {
		IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN,
		IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MIN_RNR_TIMER,
	};
	static const int rts_req[] = {
		IBV_QP_SQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_RETRY_CNT,
		IBV_QP_RNR_RETRY, IBV_QP_TIMEOUT,
	};
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < sizeof(init_req) / sizeof(init_req[0]); i++) {
		ret = qp_modify(&a, IBV_QPS_INIT, INIT_MASK & ~init_req[i], &b);
		assert_int_equal(ret, EINVAL);
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RESET);
		assert_int_equal(a.qp->state, IBV_QPS_RESET);
	}
	assert_int_equal(qp_modify(&a, IBV_QPS_INIT, INIT_MASK, &b), 0);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_INIT);
	assert_int_equal(a.qp->state, IBV_QPS_INIT);

	for (i = 0; i < sizeof(rtr_req) / sizeof(rtr_req[0]); i++) {
		ret = qp_modify(&a, IBV_QPS_RTR, RTR_MASK & ~rtr_req[i], &b);
		assert_int_equal(ret, EINVAL);
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_INIT);
	}
	assert_int_equal(qp_modify(&a, IBV_QPS_RTR, RTR_MASK, &b), 0);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTR);

	for (i = 0; i < sizeof(rts_req) / sizeof(rts_req[0]); i++) {
		ret = qp_modify(&a, IBV_QPS_RTS, RTS_MASK & ~rts_req[i], &b);
		assert_int_equal(ret, EINVAL);
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTR);
	}
	assert_int_equal(qp_modify(&a, IBV_QPS_RTS, RTS_MASK, &b), 0);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
	assert_int_equal(a.qp->state, IBV_QPS_RTS);
}

static void
test_qp_illegal_transition(void **state)
{
	const int all = INIT_MASK | RTR_MASK | RTS_MASK;

	(void)state;
	/* RESET goes to INIT only */
	assert_int_equal(qp_modify(&a, IBV_QPS_RTS, RTS_MASK, &b), EINVAL);
	assert_int_equal(qp_modify(&a, IBV_QPS_RTS, all, &b), EINVAL);
	assert_int_equal(qp_modify(&a, IBV_QPS_RTR, RTR_MASK, &b), EINVAL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RESET);
	assert_int_equal(a.qp->state, IBV_QPS_RESET);

	/* INIT does not skip RTR */
	qp_bring_up(&a, &b, IBV_QPS_INIT);
	assert_int_equal(qp_modify(&a, IBV_QPS_RTS, RTS_MASK, &b), EINVAL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_INIT);

	/* no way back but to RESET or ERR */
	assert_int_equal(qp_modify(&a, IBV_QPS_RTR, RTR_MASK, &b), 0);
	assert_int_equal(qp_modify(&a, IBV_QPS_INIT, INIT_MASK, &b), EINVAL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTR);
	assert_int_equal(qp_modify(&a, IBV_QPS_RTS, RTS_MASK, &b), 0);
	assert_int_equal(qp_modify(&a, IBV_QPS_RTR, RTR_MASK, &b), EINVAL);
	assert_int_equal(qp_modify(&a, IBV_QPS_INIT, INIT_MASK, &b), EINVAL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);

	/* an attribute RTS->RTS does not take */
	assert_int_equal(qp_modify(&a, IBV_QPS_RTS, IBV_QP_DEST_QPN, &b),
			 EINVAL);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RTS);
}

/* ibv_query_qp gives back what the transitions set. */
static void
test_qp_query(void **state)
{
	const int mask = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_CAP |
		INIT_MASK | RTR_MASK | RTS_MASK;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	(void)state;
	ep_opts_default(&opts);
	opts.max_send_wr = 100;
	opts.max_recv_wr = 50;
	opts.max_sge = 3;
	opts.max_inline = 48;
	opts.timeout = 12;
	opts.retry_cnt = 5;
	opts.rnr_retry = 6;
	opts.min_rnr_timer = 3;
	opts.mtu = IBV_MTU_1024;
	assert_int_equal(ep_pair(&a, &b, BUF, &opts), 0);

	memset(&attr, 0xa5, sizeof(attr));
	assert_int_equal(ibv_query_qp(a.qp, &attr, mask, &init), 0);
	assert_int_equal(attr.qp_state, IBV_QPS_RTS);
	assert_int_equal(attr.path_mtu, IBV_MTU_1024);
	assert_int_equal(attr.dest_qp_num, b.qp->qp_num);
	assert_int_equal(attr.rq_psn, b.psn);
	assert_int_equal(attr.sq_psn, a.psn);
	assert_int_equal(attr.timeout, 12);
	assert_int_equal(attr.retry_cnt, 5);
	assert_int_equal(attr.rnr_retry, 6);
	assert_int_equal(attr.min_rnr_timer, 3);
	assert_int_equal(attr.max_rd_atomic, 16);
	assert_int_equal(attr.max_dest_rd_atomic, 16);
	assert_int_equal(attr.qp_access_flags, opts.qp_access);
	assert_int_equal(attr.port_num, 1);
	assert_int_equal(attr.pkey_index, 0);
	assert_int_equal(attr.ah_attr.is_global, 1);
	assert_memory_equal(attr.ah_attr.grh.dgid.raw, b.gid.raw, 16);
	assert_int_equal(attr.ah_attr.grh.sgid_index, 0);
	assert_true(attr.cap.max_send_wr >= 100);
	assert_true(attr.cap.max_recv_wr >= 50);
	assert_true(attr.cap.max_send_sge >= 3);
	assert_true(attr.cap.max_recv_sge >= 3);
	assert_true(attr.cap.max_inline_data >= 48);

	assert_int_equal(init.qp_type, IBV_QPT_RC);
	assert_ptr_equal(init.send_cq, a.scq);
	assert_ptr_equal(init.recv_cq, a.rcq);
	assert_null(init.srq);
	assert_int_equal(init.sq_sig_all, 0);
	assert_true(init.cap.max_send_wr >= 100);
	assert_true(init.cap.max_recv_wr >= 50);
	assert_true(init.cap.max_inline_data >= 48);

	/* and the other side's view matches */
	assert_int_equal(ibv_query_qp(b.qp, &attr, IBV_QP_STATE |
				      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				      IBV_QP_SQ_PSN, &init), 0);
	assert_int_equal(attr.qp_state, IBV_QPS_RTS);
	assert_int_equal(attr.dest_qp_num, a.qp->qp_num);
	assert_int_equal(attr.rq_psn, a.psn);
	assert_int_equal(attr.sq_psn, b.psn);
}

/* INIT, RTR and RTS all go to ERR and to RESET. */
static void
test_qp_to_err_and_reset(void **state)
{
	static const enum ibv_qp_state from[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		qp_bring_up(&a, &b, from[i]);
		assert_int_equal(ep_qp_state(a.qp), from[i]);
		/* a receive waiting when the QP fails is flushed */
		assert_int_equal(ep_post_recv(&a, 10 + i, 0, 64), 0);
		assert_int_equal(qp_modify(&a, IBV_QPS_ERR, 0, &b), 0);
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_ERR);
		assert_int_equal(a.qp->state, IBV_QPS_ERR);
		expect_wc(a.rcq, 10 + i, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV);
		assert_int_equal(qp_modify(&a, IBV_QPS_RESET, 0, &b), 0);
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RESET);
		assert_int_equal(a.qp->state, IBV_QPS_RESET);

		qp_bring_up(&a, &b, from[i]);
		assert_int_equal(qp_modify(&a, IBV_QPS_RESET, 0, &b), 0);
		assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RESET);
		assert_int_equal(a.qp->state, IBV_QPS_RESET);
	}

	/* a send posted in ERR completes flushed */
	qp_bring_up(&a, &b, IBV_QPS_RTS);
	assert_int_equal(qp_modify(&a, IBV_QPS_ERR, 0, &b), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 77, 0, 64, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, 77, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND);
	assert_int_equal(qp_modify(&a, IBV_QPS_RESET, 0, &b), 0);
	assert_int_equal(ep_qp_state(a.qp), IBV_QPS_RESET);
}

/* After RESET a QP comes up again as new and carries traffic. */
static void
test_qp_reuse_after_reset(void **state)
{
	uint32_t qpn_a = a.qp->qp_num, qpn_b = b.qp->qp_num;
	int round;

	(void)state;
	for (round = 0; round < 3; round++) {
		memset(b.buf, 0, 256);
		fill_pattern(a.buf, 256, (uint32_t)round);
		send_a_to_b((uint64_t)round, 256, 0);
		expect_wc(b.rcq, (uint64_t)round, IBV_WC_SUCCESS, IBV_WC_RECV);
		assert_memory_equal(a.buf, b.buf, 256);

		if (round == 1) {
			/* through ERR this time */
			assert_int_equal(qp_modify(&a, IBV_QPS_ERR, 0, &b), 0);
			assert_int_equal(qp_modify(&b, IBV_QPS_ERR, 0, &a), 0);
		}
		assert_int_equal(qp_modify(&a, IBV_QPS_RESET, 0, &b), 0);
		assert_int_equal(qp_modify(&b, IBV_QPS_RESET, 0, &a), 0);
		expect_no_wc(a.scq);
		expect_no_wc(b.rcq);
		a.psn = (a.psn + 0x10000) & 0xffffff;
		b.psn = (b.psn + 0x23456) & 0xffffff;
		assert_int_equal(ep_connect(&a, &b, &opts), 0);
		assert_int_equal(ep_connect(&b, &a, &opts), 0);
		assert_int_equal(a.qp->qp_num, qpn_a);
		assert_int_equal(b.qp->qp_num, qpn_b);
	}
	/* and the other way */
	fill_pattern(b.buf + 1024, 512, 99);
	assert_int_equal(ep_post_recv(&a, 5, 1024, 512), 0);
	assert_int_equal(ep_post(&b, IBV_WR_SEND, 6, 1024, 512, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(b.scq, 6, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(a.rcq, 5, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_memory_equal(a.buf + 1024, b.buf + 1024, 512);
}

/* Drain @p cq: whatever is left must be flushed work of @p lo..@p hi. */
static void
drain_flushed(struct ibv_cq *cq, uint64_t lo, uint64_t hi)
{
	struct ibv_wc wc;

	while (ep_poll(cq, &wc, 1, QUIET_MS) == 1) {
		assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
		assert_in_range(wc.wr_id, lo, hi);
	}
}

/*
 * Work flushed by ERR and not yet polled when the QP goes to RESET does
 * not hold the reborn QP's queues: whether the provider drops those
 * completions or hands them out, posting works again afterwards.
 */
static void
test_qp_reset_unpolled_flush(void **state)
{
	(void)state;
	assert_int_equal(ep_post_recv(&b, 1, 0, 64), 0);
	assert_int_equal(ep_post_recv(&b, 2, 64, 64), 0);
	assert_int_equal(qp_modify(&a, IBV_QPS_ERR, 0, &b), 0);
	assert_int_equal(qp_modify(&b, IBV_QPS_ERR, 0, &a), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 3, 0, 64, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	sleep_ms(QUIET_MS);             /* the engine flushes meanwhile */

	assert_int_equal(qp_modify(&a, IBV_QPS_RESET, 0, &b), 0);
	assert_int_equal(qp_modify(&b, IBV_QPS_RESET, 0, &a), 0);
	a.psn = (a.psn + 0x1000) & 0xffffff;
	b.psn = (b.psn + 0x2000) & 0xffffff;
	assert_int_equal(ep_connect(&a, &b, &opts), 0);
	assert_int_equal(ep_connect(&b, &a, &opts), 0);
	drain_flushed(a.scq, 3, 3);
	drain_flushed(b.rcq, 1, 2);

	fill_pattern(a.buf, 128, 5);
	memset(b.buf, 0, 128);
	assert_int_equal(ep_post(&a, IBV_WR_RDMA_WRITE, 10, 0, 128, &b, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	assert_memory_equal(a.buf, b.buf, 128);

	memset(b.buf, 0, 128);
	assert_int_equal(ep_post_recv(&b, 11, 0, 128), 0);
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 12, 0, 128, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, 12, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(b.rcq, 11, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_memory_equal(a.buf, b.buf, 128);
}

/* ------------------------------------------------------------------------
 * What a post checks.
 */

static void
test_post_not_ready(void **state)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	(void)state;
	/* RESET */
	wr_fill(&wr, &sge, &a, IBV_WR_SEND, 1, 0, 64, NULL, 0,
		IBV_SEND_SIGNALED);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);

	/* INIT and RTR cannot send either */
	qp_bring_up(&a, &b, IBV_QPS_INIT);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(qp_modify(&a, IBV_QPS_RTR, RTR_MASK, &b), 0);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	expect_no_wc(a.scq);
}

static void
test_post_bad_opcode(void **state)
{
	static const int ops[] = { IBV_WR_TSO, IBV_WR_DRIVER1, 0x77 };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		wr_fill(&wr, &sge, &a, IBV_WR_SEND, 1, 0, 64, NULL, 0,
			IBV_SEND_SIGNALED);
		wr.opcode = (enum ibv_wr_opcode)ops[i];
		bad = NULL;
		assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
		assert_ptr_equal(bad, &wr);
	}
	expect_no_wc(a.scq);
	/* the QP is none the worse */
	send_a_to_b(2, 64, 0);
	expect_wc(b.rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
}

static void
test_post_chain_bad_third(void **state)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	struct ibv_wc wc[2];
	int i;

	(void)state;
	fill_pattern(a.buf, 2048, 7);
	memset(b.buf, 0, 4096);
	for (i = 0; i < 3; i++) {
		wr_fill(&wr[i], &sge[i], &a, IBV_WR_RDMA_WRITE,
			1 + (uint64_t)i, (size_t)i * 1024, 1024, &b,
			(size_t)i * 1024, IBV_SEND_SIGNALED);
		if (i > 0)
			wr[i - 1].next = &wr[i];
	}
	wr[2].opcode = (enum ibv_wr_opcode)0x77;
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr[0], &bad), EINVAL);
	assert_ptr_equal(bad, &wr[2]);

	/* the two before it went */
	assert_int_equal(ep_poll(a.scq, wc, 2, TIMEOUT_MS), 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 1 + (uint64_t)i);
		assert_int_equal(wc[i].opcode, IBV_WC_RDMA_WRITE);
	}
	assert_memory_equal(a.buf, b.buf, 2048);
	expect_no_wc(a.scq);
	/* the bad one wrote nothing */
	for (i = 2048; i < 3072; i++)
		assert_int_equal(b.buf[i], 0);
}

static void
test_post_too_many_sge(void **state)
{
	struct ibv_qp_cap sc = qp_caps(&a), rc = qp_caps(&b);
	uint32_t n = sc.max_send_sge, i;
	uint32_t most = n > rc.max_recv_sge ? n : rc.max_recv_sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge *sge;

	(void)state;
	assert_true(n >= 1);
	sge = calloc(most + 1, sizeof(*sge));
	assert_non_null(sge);
	for (i = 0; i <= most; i++) {
		sge[i].addr = (uintptr_t)(a.buf + i * 100);
		sge[i].length = 100;
		sge[i].lkey = a.mr->lkey;
	}

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = sge;
	wr.num_sge = (int)n + 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	expect_no_wc(a.scq);

	/* exactly max_send_sge gathers into one message */
	fill_pattern(a.buf, n * 100, 3);
	memset(b.buf, 0, n * 100 + 16);
	assert_int_equal(ep_post_recv(&b, 2, 0, n * 100 + 16), 0);
	wr.wr_id = 2;
	wr.num_sge = (int)n;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	expect_wc(a.scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(b.rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_memory_equal(a.buf, b.buf, n * 100);

	/* the receive side checks its own limit */
	for (i = 0; i <= rc.max_recv_sge; i++) {
		sge[i].addr = (uintptr_t)(b.buf + i * 100);
		sge[i].lkey = b.mr->lkey;
	}
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 3;
	rwr.sg_list = sge;
	rwr.num_sge = (int)rc.max_recv_sge + 1;
	rbad = NULL;
	assert_int_equal(ibv_post_recv(b.qp, &rwr, &rbad), EINVAL);
	assert_ptr_equal(rbad, &rwr);
	free(sge);
}

static void
test_post_inline_limit(void **state)
{
	struct ibv_qp_cap cap = qp_caps(&a);
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	(void)state;
	assert_true(cap.max_inline_data >= 1);
	assert_true(cap.max_inline_data + 1 < BUF);
	wr_fill(&wr, &sge, &a, IBV_WR_SEND, 1, 0, cap.max_inline_data + 1,
		NULL, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	wr_fill(&wr, &sge, &a, IBV_WR_RDMA_WRITE, 2, 0,
		cap.max_inline_data + 1, &b, 0,
		IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	expect_no_wc(a.scq);
}

/*
 * Inline data is taken at the post: the buffer (here on the stack, not
 * registered, and given no lkey) may be reused as soon as the call
 * returns.
 */
static void
test_post_inline_reuse(void **state)
{
	struct ibv_qp_cap cap = qp_caps(&a);
	uint32_t len = cap.max_inline_data < 512 ? cap.max_inline_data : 512;
	struct ibv_send_wr wr, *bad;
	uint8_t src[512], want[512];
	struct ibv_sge sge;

	(void)state;
	assert_true(len >= 1);
	fill_pattern(want, len, 11);
	memcpy(src, want, len);
	memset(b.buf, 0, 2 * len + 16);
	assert_int_equal(ep_post_recv(&b, 1, 0, len + 16), 0);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)src;
	sge.length = len;
	sge.lkey = 0;
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(src, 0xee, len);
	expect_wc(a.scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(b.rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_memory_equal(b.buf, want, len);

	/* RDMA WRITE inline likewise */
	fill_pattern(want, len, 12);
	memcpy(src, want, len);
	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + len + 16);
	wr.wr.rdma.rkey = b.mr->rkey;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	memset(src, 0xdd, len);
	expect_wc(a.scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	assert_memory_equal(b.buf + len + 16, want, len);
}

/* Signalled WRITEs of 8 bytes, chained: wr[i] has wr_id base + i. */
static struct ibv_send_wr *
write_chain(uint32_t n, uint64_t base, unsigned int last_flags,
	    unsigned int flags)
{
	struct ibv_send_wr *wr = calloc(n, sizeof(*wr));
	struct ibv_sge *sge = calloc(n, sizeof(*sge));
	uint32_t i;

	assert_non_null(wr);
	assert_non_null(sge);
	for (i = 0; i < n; i++) {
		wr_fill(&wr[i], &sge[i], &a, IBV_WR_RDMA_WRITE, base + i,
			(size_t)(i % 512) * 8, 8, &b, (size_t)(i % 512) * 8,
			i + 1 == n ? last_flags : flags);
		if (i > 0)
			wr[i - 1].next = &wr[i];
	}
	return wr;
}

static void
chain_free(struct ibv_send_wr *wr)
{
	free(wr->sg_list);
	free(wr);
}

static void
expect_wcs(struct ibv_cq *cq, uint32_t n, uint64_t base)
{
	struct ibv_wc *wc = calloc(n, sizeof(*wc));
	uint32_t i;

	assert_non_null(wc);
	assert_int_equal(ep_poll(cq, wc, (int)n, TIMEOUT_MS), (int)n);
	for (i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, base + i);
	}
	free(wc);
}

static void
small_queues(struct ep_opts *o)
{
	o->max_send_wr = 16;
	o->max_recv_wr = 16;
}

static struct ep_pair_fixture sq_small = {
	.a = &a, .b = &b, .opts = &opts, .len = BUF, .tweak = small_queues,
};

/* max_send_wr WRs fit; one more is ENOMEM until a completion is polled. */
static void
test_sq_full(void **state)
{
	uint32_t n = qp_caps(&a).max_send_wr;
	struct ibv_send_wr *wr, *bad, one;
	struct ibv_sge sge;

	(void)state;
	assert_true(n >= 16 && n <= 1024);
	wr = write_chain(n + 1, 0, IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[n]);

	/* still full, however long the engine has had */
	sleep_ms(QUIET_MS);
	wr_fill(&one, &sge, &a, IBV_WR_RDMA_WRITE, 1000, 0, 8, &b, 0,
		IBV_SEND_SIGNALED);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &one, &bad), ENOMEM);
	assert_ptr_equal(bad, &one);

	/* the first n were posted and complete */
	expect_wcs(a.scq, n, 0);
	expect_no_wc(a.scq);
	chain_free(wr);

	/* polled, the slots are free again */
	wr = write_chain(n, 2000, IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);
	expect_wcs(a.scq, n, 2000);
	chain_free(wr);
}

/*
 * Unsignalled WRs keep their slots until a later signalled completion
 * is polled, and then free them all at once.
 */
static void
test_sq_unsignalled_slots(void **state)
{
	uint32_t n = qp_caps(&a).max_send_wr;
	struct ibv_send_wr *wr, *bad, one;
	struct ibv_sge sge;

	(void)state;
	assert_true(n >= 16 && n <= 1024);
	wr = write_chain(n, 0, IBV_SEND_SIGNALED, 0);
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);
	chain_free(wr);

	/* the work is done but nothing is polled: the queue is full */
	sleep_ms(QUIET_MS);
	wr_fill(&one, &sge, &a, IBV_WR_RDMA_WRITE, 1000, 0, 8, &b, 0,
		IBV_SEND_SIGNALED);
	bad = NULL;
	assert_int_equal(ibv_post_send(a.qp, &one, &bad), ENOMEM);
	assert_ptr_equal(bad, &one);

	/* one completion, for the signalled last WR */
	expect_wc(a.scq, n - 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	expect_no_wc(a.scq);

	/* it retired all n */
	wr = write_chain(n, 2000, IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
	assert_int_equal(ibv_post_send(a.qp, wr, &bad), 0);
	expect_wcs(a.scq, n, 2000);
	chain_free(wr);
}

static void
test_rq_full(void **state)
{
	uint32_t n = qp_caps(&b).max_recv_wr, i;
	struct ibv_recv_wr *wr, *bad;
	struct ibv_sge *sge;

	(void)state;
	assert_true(n >= 16 && n <= 1024);
	wr = calloc(n + 1, sizeof(*wr));
	sge = calloc(n + 1, sizeof(*sge));
	assert_non_null(wr);
	assert_non_null(sge);
	for (i = 0; i <= n; i++) {
		sge[i].addr = (uintptr_t)(b.buf + i * 64);
		sge[i].length = 64;
		sge[i].lkey = b.mr->lkey;
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i < n ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	assert_int_equal(ibv_post_recv(b.qp, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[n]);
	wr[n].next = NULL;
	bad = NULL;
	assert_int_equal(ibv_post_recv(b.qp, &wr[n], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[n]);

	/* a SEND takes the first receive; once polled, one slot is free */
	assert_int_equal(ep_post(&a, IBV_WR_SEND, 1, 0, 64, NULL, 0,
				 IBV_SEND_SIGNALED), 0);
	expect_wc(a.scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	expect_wc(b.rcq, 0, IBV_WC_SUCCESS, IBV_WC_RECV);
	assert_int_equal(ibv_post_recv(b.qp, &wr[n], &bad), 0);
	bad = NULL;
	assert_int_equal(ibv_post_recv(b.qp, &wr[n], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[n]);
	free(wr);
	free(sge);
}

/* A test on a pair of its own from fixture @p f; OWN_PAIR: a test that
 * opens a (and b) itself, closed after it. */
#define PAIR_TEST(test, f) pair_test(test, &f)
#define OWN_PAIR(test) pair_test_teardown(test, &connected)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_list),
		cmocka_unit_test(test_device_open_close),
		cmocka_unit_test(test_context_compat_ops),
		cmocka_unit_test(test_query_device),
		cmocka_unit_test(test_query_device_ex),
		cmocka_unit_test(test_query_port),
		cmocka_unit_test(test_query_gid),
		cmocka_unit_test(test_query_gid_type),
		cmocka_unit_test(test_query_gid_out_of_range),
		cmocka_unit_test(test_mr_keys),
		cmocka_unit_test(test_mr_access_rules),
		cmocka_unit_test(test_dealloc_pd_busy),
		cmocka_unit_test(test_raw_send),
		cmocka_unit_test(test_raw_pingpong),
		cmocka_unit_test(test_cq_too_big),
		cmocka_unit_test(test_cq_ex_unsupported_wc_flags),
		cmocka_unit_test(test_cq_ex_supported_wc_flags),
		OWN_PAIR(test_resize_cq),
		PAIR_TEST(test_channel_event, with_chan),
		PAIR_TEST(test_channel_no_rearm, with_chan),
		PAIR_TEST(test_channel_solicited, with_chan),
		PAIR_TEST(test_channel_nonblock, with_chan),
		PAIR_TEST(test_channel_arm_race, with_chan),
		OWN_PAIR(test_qp_caps_beyond_limits),
		OWN_PAIR(test_qp_types_unsupported),
		PAIR_TEST(test_qp_missing_mask, unconnected),
		PAIR_TEST(test_qp_illegal_transition, unconnected),
		OWN_PAIR(test_qp_query),
		PAIR_TEST(test_qp_to_err_and_reset, unconnected),
		PAIR_TEST(test_qp_reuse_after_reset, connected),
		PAIR_TEST(test_qp_reset_unpolled_flush, connected),
		PAIR_TEST(test_post_not_ready, unconnected),
		PAIR_TEST(test_post_bad_opcode, connected),
		PAIR_TEST(test_post_chain_bad_third, connected),
		PAIR_TEST(test_post_too_many_sge, connected),
		PAIR_TEST(test_post_inline_limit, connected),
		PAIR_TEST(test_post_inline_reuse, connected),
		PAIR_TEST(test_sq_full, sq_small),
		PAIR_TEST(test_sq_unsignalled_slots, sq_small),
		PAIR_TEST(test_rq_full, sq_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
