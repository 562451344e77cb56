/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * verbs_hello: the smallest whole verbs program, as a user of an
 * installed droce writes one. Two devices of one process (droce's
 * embedded default: droce0 and droce1 back to back), an RC QP on each,
 * connected to each other; one SEND and one RDMA WRITE from the first
 * to the second, both checked byte for byte.
 *
 * Built two ways by tests/install/test_install.py, from an installed
 * tree: against libdroce with `pkg-config --cflags --libs libdroce`
 * (with -DWITH_DROCE_H it also reads droce's counters through droce.h),
 * and as any rdma-core program with -libverbs, run over droce through
 * droce-run. It prints "verbs_hello: ok" and exits 0 only if all went
 * right.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#ifdef WITH_DROCE_H
#include <droce.h>
#include <droce_cm.h>
#endif

#define BUF_LEN 4096
#define MSG_LEN 1000

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid gid;
	uint8_t buf[BUF_LEN];
};

static int
fail(const char *what, int err)
{
	fprintf(stderr, "verbs_hello: %s: %s\n", what, strerror(err));
	exit(1);
}

static void
side_open(struct side *s, struct ibv_device *dev)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->ctx = ibv_open_device(dev);
	if (s->ctx == NULL)
		fail("ibv_open_device", errno);
	s->pd = ibv_alloc_pd(s->ctx);
	if (s->pd == NULL)
		fail("ibv_alloc_pd", errno);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (s->mr == NULL)
		fail("ibv_reg_mr", errno);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	if (s->cq == NULL)
		fail("ibv_create_cq", errno);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &init);
	if (s->qp == NULL)
		fail("ibv_create_qp", errno);
	if (ibv_query_gid(s->ctx, 1, 0, &s->gid) != 0)
		fail("ibv_query_gid", errno);
}

static void
side_close(struct side *s)
{
	if (ibv_destroy_qp(s->qp) != 0 || ibv_destroy_cq(s->cq) != 0 ||
	    ibv_dereg_mr(s->mr) != 0 || ibv_dealloc_pd(s->pd) != 0 ||
	    ibv_close_device(s->ctx) != 0)
		fail("closing", errno);
}

/* RESET to RTS, towards @p peer's QP, PSNs 0, as rc_pingpong does. */
static void
side_connect(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err != 0)
		fail("INIT", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err != 0)
		fail("RTR", err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err != 0)
		fail("RTS", err);
}

/* One completion of @p s within five seconds, successful, of @p op. */
static void
side_complete(struct side *s, enum ibv_wc_opcode op)
{
	time_t end = time(NULL) + 5;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0 && time(NULL) < end)
		;
	if (n != 1)
		fail("no completion", n < 0 ? -n : ETIMEDOUT);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op) {
		fprintf(stderr, "verbs_hello: completion %s, opcode %d\n",
			ibv_wc_status_str(wc.status), wc.opcode);
		exit(1);
	}
}

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

int
main(void)
{
	struct ibv_device **list;
	static struct side a, b;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr *rbad;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n < 2) {
		fprintf(stderr, "verbs_hello: %d devices (two wanted)\n",
			list == NULL ? 0 : n);
		return 1;
	}
	printf("verbs_hello: %s and %s\n", ibv_get_device_name(list[0]),
	       ibv_get_device_name(list[1]));
	side_open(&a, list[0]);
	side_open(&b, list[1]);
	ibv_free_device_list(list);
	side_connect(&a, &b);
	side_connect(&b, &a);

	/* SEND into a posted receive */
	fill(a.buf, MSG_LEN, 1);
	sge = (struct ibv_sge){ (uintptr_t)b.buf, MSG_LEN, b.mr->lkey };
	if (ibv_post_recv(b.qp, &rwr, &rbad) != 0)
		fail("ibv_post_recv", errno);
	sge = (struct ibv_sge){ (uintptr_t)a.buf, MSG_LEN, a.mr->lkey };
	wr.opcode = IBV_WR_SEND;
	if (ibv_post_send(a.qp, &wr, &bad) != 0)
		fail("ibv_post_send", errno);
	side_complete(&a, IBV_WC_SEND);
	side_complete(&b, IBV_WC_RECV);
	if (memcmp(a.buf, b.buf, MSG_LEN) != 0)
		fail("SEND: the data differ", EIO);

	/* RDMA WRITE to the second half of b's buffer */
	fill(a.buf, MSG_LEN, 2);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf + BUF_LEN / 2;
	wr.wr.rdma.rkey = b.mr->rkey;
	if (ibv_post_send(a.qp, &wr, &bad) != 0)
		fail("ibv_post_send", errno);
	side_complete(&a, IBV_WC_RDMA_WRITE);
	if (memcmp(a.buf, b.buf + BUF_LEN / 2, MSG_LEN) != 0)
		fail("RDMA WRITE: the data differ", EIO);

#ifdef WITH_DROCE_H
	{
		struct droce_counters c;
		struct droce_cm_stats cm;

		if (droce_query_counters(a.ctx, &c) != 0)
			fail("droce_query_counters", EIO);
		printf("verbs_hello: %s sent %" PRIu64 " frames\n",
		       ibv_get_device_name(a.ctx->device), c.tx_frames);
		if (c.tx_frames < 2)
			fail("droce_query_counters: too few frames", EIO);
		/* (no rdma_cm call made: the CM has not started) */
		if (droce_cm_query_stats(&cm) != -1)
			fail("droce_cm_query_stats", EIO);
	}
#endif
	side_close(&a);
	side_close(&b);
	printf("verbs_hello: ok\n");
	return 0;
}
