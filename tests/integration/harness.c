/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#include <endian.h>
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_malloc.h>

#include "harness.h"

void
ep_opts_default(struct ep_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_send_wr = 256;
	o->max_recv_wr = 256;
	o->max_sge = 4;
	o->max_inline = 64;
	o->cqe = 1024;
	o->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	o->qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC;
	o->mtu = IBV_MTU_1024;
	o->timeout = 14;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;
	o->gid_index = 0;
	o->qp_type = IBV_QPT_RC;
}

struct ibv_context *
ep_open_device(int dev)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	/* loopback: every endpoint on the first device, talking to its
	 * own GID */
	if (getenv("DROCE_TEST_LOOPBACK") != NULL)
		dev = 0;
	list = ibv_get_device_list(&n);
	if (list == NULL || dev >= n) {
		ibv_free_device_list(list);
		return NULL;
	}
	ctx = ibv_open_device(list[dev]);
	ibv_free_device_list(list);
	return ctx;
}

int
ep_open(struct ep *e, int dev, size_t len, const struct ep_opts *o)
{
	struct ibv_qp_init_attr qa;

	memset(e, 0, sizeof(*e));
	e->ctx = ep_open_device(dev);
	if (e->ctx == NULL)
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->len = len;
	e->buf = aligned_alloc(64, (len + 63) & ~(size_t)63);
	if (e->pd == NULL || e->buf == NULL)
		return -1;
	memset(e->buf, 0, len);
	e->mr = ibv_reg_mr(e->pd, e->buf, len, o->access);
	e->scq = ibv_create_cq(e->ctx, o->cqe, NULL, NULL, 0);
	if (o->recv_cq_ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = (uint32_t)o->cqe,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
		};
		struct ibv_cq_ex *cqx = ibv_create_cq_ex(e->ctx, &ca);

		e->rcq = cqx != NULL ? ibv_cq_ex_to_cq(cqx) : NULL;
	} else {
		e->rcq = ibv_create_cq(e->ctx, o->cqe, NULL, NULL, 0);
	}
	if (e->mr == NULL || e->scq == NULL || e->rcq == NULL)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.qp_type = o->qp_type;
	qa.sq_sig_all = o->sq_sig_all;
	qa.cap.max_send_wr = o->max_send_wr;
	qa.cap.max_recv_wr = o->max_recv_wr;
	qa.cap.max_send_sge = o->max_sge;
	qa.cap.max_recv_sge = o->max_sge;
	qa.cap.max_inline_data = o->max_inline;
	if (o->max_tso_header != 0) {
		struct ibv_qp_init_attr_ex qx = {
			.qp_context = qa.qp_context, .send_cq = qa.send_cq,
			.recv_cq = qa.recv_cq, .cap = qa.cap,
			.qp_type = qa.qp_type, .sq_sig_all = qa.sq_sig_all,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
			.pd = e->pd,
			.max_tso_header = o->max_tso_header,
		};

		e->qp = ibv_create_qp_ex(e->ctx, &qx);
	} else {
		e->qp = ibv_create_qp(e->pd, &qa);
	}
	if (e->qp == NULL)
		return -1;
	/* near the top of the 24-bit space: every test crosses the wrap */
	e->psn = 0xfff000 + ((uint32_t)rand() & 0xfff);
	if (ibv_query_gid(e->ctx, 1, o->gid_index, &e->gid) != 0)
		return -1;
	return 0;
}

int
ep_connect(struct ep *a, struct ep *b, const struct ep_opts *o)
{
	return ep_connect_remote(a, b->qp->qp_num, b->psn, &b->gid, o);
}

int
ep_connect_remote(struct ep *a, uint32_t qpn, uint32_t psn,
		  const union ibv_gid *gid, const struct ep_opts *o)
{
	struct ibv_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qp_access_flags = (unsigned int)o->qp_access;
	ret = ibv_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret != 0)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = o->mtu;
	attr.dest_qp_num = qpn;
	attr.rq_psn = psn;
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = o->min_rnr_timer;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = *gid;
	attr.ah_attr.grh.sgid_index = (uint8_t)o->gid_index;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.grh.traffic_class = o->traffic_class;
	attr.ah_attr.port_num = 1;
	ret = ibv_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (o->qp_type == IBV_QPT_RC ?
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER :
			     0));
	if (ret != 0)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = o->timeout;
	attr.retry_cnt = o->retry_cnt;
	attr.rnr_retry = o->rnr_retry;
	attr.sq_psn = a->psn;
	attr.max_rd_atomic = 16;
	return ibv_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (o->qp_type == IBV_QPT_RC ?
			      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

int
ep_pair(struct ep *a, struct ep *b, size_t len, const struct ep_opts *o)
{
	if (ep_open(a, 0, len, o) != 0 || ep_open(b, 1, len, o) != 0)
		return -1;
	return ep_pair_up(a, b, o);
}

int
ep_pair_up(struct ep *a, struct ep *b, const struct ep_opts *o)
{
	bool up;

	switch (o->qp_type) {
	case IBV_QPT_UD:
		up = ep_ud_up(a, o->qkey) == 0 && ep_ud_up(b, o->qkey) == 0;
		break;
	case IBV_QPT_RAW_PACKET:
		up = ep_raw_up(a) == 0 && ep_raw_up(b) == 0;
		break;
	default:
		up = ep_connect(a, b, o) == 0 && ep_connect(b, a, o) == 0;
		break;
	}
	return up ? 0 : -1;
}

/* An XRC QP's RTR attributes: path MTU 1024, to @p qpn at @p gid. */
static void
xrc_rtr_attr(struct ibv_qp_attr *attr, const union ibv_gid *gid,
	     uint32_t qpn, uint32_t rq_psn)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = IBV_QPS_RTR;
	attr->path_mtu = IBV_MTU_1024;
	attr->ah_attr.is_global = 1;
	attr->ah_attr.port_num = 1;
	attr->ah_attr.grh.hop_limit = 64;
	attr->ah_attr.grh.dgid = *gid;
	attr->dest_qp_num = qpn;
	attr->rq_psn = rq_psn;
}

int
ep_xrc_target_up(struct ibv_qp *t, const union ibv_gid *gid, uint32_t qpn,
		 uint32_t rq_psn)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(t, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	xrc_rtr_attr(&attr, gid, qpn, rq_psn);
	attr.max_dest_rd_atomic = 16;
	attr.min_rnr_timer = 1;
	if (ibv_modify_qp(t, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	return ibv_modify_qp(t, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_SQ_PSN);
}

int
ep_xrc_join(struct ibv_qp *i, const union ibv_gid *igid, struct ibv_qp *t,
	    const union ibv_gid *tgid, uint32_t psn, uint8_t timeout)
{
	struct ibv_qp_attr attr;

	if (ep_xrc_target_up(t, igid, i->qp_num, psn) != 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	if (ibv_modify_qp(i, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	xrc_rtr_attr(&attr, tgid, t->qp_num, psn);
	if (ibv_modify_qp(i, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN) != 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = timeout;
	attr.sq_psn = psn;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	return ibv_modify_qp(i, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

int
ud_qp_up(struct ibv_qp *qp, uint32_t qkey, uint32_t sq_psn)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = qkey;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) != 0)
		return -1;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE) != 0)
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = sq_psn;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int
ep_ud_up(struct ep *e, uint32_t qkey)
{
	return ud_qp_up(e->qp, qkey, e->psn);
}

int
ep_raw_up(struct ep *e)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(e->qp, &attr, IBV_QP_STATE | IBV_QP_PORT) != 0)
		return -1;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(e->qp, &attr, IBV_QP_STATE) != 0)
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(e->qp, &attr, IBV_QP_STATE);
}

struct ibv_ah *
ep_ah(struct ep *e, const struct ep *to, const struct ep_opts *o)
{
	struct ibv_ah_attr ah;

	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.grh.dgid = to->gid;
	ah.grh.sgid_index = (uint8_t)o->gid_index;
	ah.grh.hop_limit = 64;
	ah.port_num = 1;
	return ibv_create_ah(e->pd, &ah);
}

/* A send WR of e->buf[off, off + len) in @p wr, its SGE in @p sge. */
static void
wr_init(struct ep *e, struct ibv_send_wr *wr, struct ibv_sge *sge,
	enum ibv_wr_opcode op, uint64_t wr_id, size_t off, uint32_t len,
	unsigned int flags, uint32_t imm)
{
	*sge = (struct ibv_sge) {
		.addr = (uintptr_t)(e->buf + off),
		.length = len,
		.lkey = e->mr->lkey,
	};
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = flags;
	wr->imm_data = htobe32(imm);
}

int
ep_post_ud(struct ep *e, uint64_t wr_id, size_t off, uint32_t len,
	   struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, bool with_imm,
	   uint32_t imm, unsigned int flags)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	wr_init(e, &wr, &sge, with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		wr_id, off, len, flags, imm);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

void
ep_close(struct ep *e)
{
	if (e->qp != NULL)
		ibv_destroy_qp(e->qp);
	if (e->scq != NULL)
		ibv_destroy_cq(e->scq);
	if (e->rcq != NULL)
		ibv_destroy_cq(e->rcq);
	if (e->mr != NULL)
		ibv_dereg_mr(e->mr);
	if (e->pd != NULL)
		ibv_dealloc_pd(e->pd);
	if (e->ctx != NULL)
		ibv_close_device(e->ctx);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

int
pair_setup(void **state)
{
	const struct ep_pair_fixture *f = *state;

	ep_opts_default(f->opts);
	if (f->tweak != NULL)
		f->tweak(f->opts);
	if (ep_open(f->a, 0, f->len, f->opts) != 0 ||
	    ep_open(f->b, 1, f->len, f->opts) != 0)
		return -1;
	if ((f->up != NULL ? f->up() : ep_pair_up(f->a, f->b, f->opts)) != 0)
		return -1;
	return f->ready != NULL ? f->ready() : 0;
}

int
pair_teardown(void **state)
{
	const struct ep_pair_fixture *f = *state;

	if (f->release != NULL)
		f->release();
	ep_close(f->a);
	ep_close(f->b);
	return 0;
}

/* The fixture of the group pair_run_group() runs (cmocka gives a group's
 * setup no state of the caller's). */
static struct ep_pair_fixture *group_fixture;

static int
pair_group_setup(void **state)
{
	*state = group_fixture;
	return pair_setup(state);
}

int
pair_run_group(const char *name, const struct CMUnitTest *tests, size_t n,
	       struct ep_pair_fixture *f)
{
	group_fixture = f;
	return _cmocka_run_group_tests(name, tests, n, pair_group_setup,
				       pair_teardown);
}

uint64_t
ep_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
ep_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) != 0)
		return -1;
	return (int)attr.qp_state;
}

int
ep_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int timeout_ms)
{
	uint64_t end = ep_now_ms() + (uint64_t)timeout_ms;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (r == 0 && ep_now_ms() > end)
			break;
	}
	return got;
}

int
ep_post_recv(struct ep *e, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + off),
		.length = len,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

int
ep_post(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id, size_t off,
	uint32_t len, const struct ep *remote, size_t roff, unsigned int flags)
{
	return ep_post_imm(e, op, wr_id, off, len, remote, roff, flags, 0);
}

int
ep_post_imm(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id, size_t off,
	    uint32_t len, const struct ep *remote, size_t roff,
	    unsigned int flags, uint32_t imm)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	wr_init(e, &wr, &sge, op, wr_id, off, len, flags, imm);
	if (remote != NULL) {
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr =
				(uintptr_t)(remote->buf + roff);
			wr.wr.atomic.rkey = remote->mr->rkey;
		} else {
			wr.wr.rdma.remote_addr = (uintptr_t)(remote->buf + roff);
			wr.wr.rdma.rkey = remote->mr->rkey;
		}
	}
	return ibv_post_send(e->qp, &wr, &bad);
}

/*
 * With DROCE_TEST_LCORES=N in the environment: N engine cores, on the
 * CPUs this process may use in turn (4 on 2 CPUs: two on each), written
 * to @p f; @p dev says them for a device section. Else nothing.
 */
static void
lcores_config(FILE *f, char *dev, size_t len)
{
	const char *v = getenv("DROCE_TEST_LCORES");
	unsigned int n = v != NULL ? (unsigned int)atoi(v) : 0, i, k = 0;
	size_t off = 0;
	cpu_set_t set;
	int cpu = -1;

	dev[0] = '\0';
	if (n < 2 || sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	fprintf(f, "cores = ");
	off = (size_t)snprintf(dev, len, "lcores = ");
	for (i = 0; i < n; i++) {
		/* the next CPU this process may use, round */
		do
			cpu = (cpu + 1) % CPU_SETSIZE;
		while (!CPU_ISSET(cpu, &set) && ++k < CPU_SETSIZE * 2);
		fprintf(f, "%s%d", i ? "," : "", cpu);
		off += (size_t)snprintf(dev + off, len - off, "%s%u",
					i ? "," : "", i);
	}
	fprintf(f, "\n");
	snprintf(dev + off, len - off, "\n");
}

static char lcores_ini[64];

static void
lcores_ini_remove(void)
{
	char *slash = strrchr(lcores_ini, '/');

	unlink(lcores_ini);
	*slash = '\0';
	rmdir(lcores_ini);
}

/*
 * With DROCE_TEST_LCORES=N and no DROCE_CONFIG: the embedded default
 * (droce0 and droce1 over a net_ring pair), N engine lcores for each
 * device, written to a directory of this run's before the engine starts.
 */
__attribute__((constructor)) static void
lcores_default(void)
{
	char lcores[128];
	FILE *f;

	if (getenv("DROCE_TEST_LCORES") == NULL ||
	    getenv("DROCE_CONFIG") != NULL)
		return;
	strcpy(lcores_ini, "/tmp/droce-lcores-XXXXXX");
	if (mkdtemp(lcores_ini) == NULL)
		abort();
	strcat(lcores_ini, "/droce.ini");
	f = fopen(lcores_ini, "w");
	if (f == NULL)
		abort();
	fprintf(f, "[eal]\nargs = --no-huge -m 512 --no-pci --no-shconf\n"
		"[engine]\n");
	lcores_config(f, lcores, sizeof(lcores));
	fprintf(f, "[device droce0]\nport = ring:droce:0\n"
		"mac = 02:d7:0c:e0:00:01\nipv4 = 10.0.0.1/24\n%s"
		"[device droce1]\nport = ring:droce:1\n"
		"mac = 02:d7:0c:e0:00:02\nipv4 = 10.0.0.2/24\n%s",
		lcores, lcores);
	if (fclose(f) != 0 || setenv("DROCE_CONFIG", lcores_ini, 1) != 0)
		abort();
	atexit(lcores_ini_remove);
}

int
ep_config(const char *dir, const char *name, unsigned int subnet,
	  const char *engine, const char *device, const char *fault,
	  unsigned int seed)
{
	char path[512], lcores[128], port[128];
	bool sw = strncmp(name, "switch:", 7) == 0;
	FILE *f;
	unsigned int i;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s.ini", dir, sw ? name + 7 : name);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "[eal]\nargs = --no-huge -m 512 --no-pci --no-shconf\n"
		"[engine]\nidle_sleep_us = 20\n%s", engine != NULL ? engine :
		"");
	if (getenv("LOSS_PCAP") != NULL)
		fprintf(f, "pcap = %s/%s.pcap\n", dir, name);
	lcores_config(f, lcores, sizeof(lcores));
	for (i = 0; i < 2; i++) {
		if (sw)
			snprintf(port, sizeof(port), "%s", name);
		else
			snprintf(port, sizeof(port), "ring:%s:%u", name, i);
		fprintf(f, "[device droce%u]\nport = %s\n"
			"mac = 02:d7:0c:e0:%02x:%02x\nipv4 = 10.0.%u.%u/24\n"
			"ipv6 = fd00:0:0:%x::%u/64\n%s%s", i, port, subnet,
			i + 1, subnet, i + 1, subnet, i + 1, lcores,
			device != NULL ? device : "");
		if (fault != NULL)
			fprintf(f, "fault = %s,seed=%u\n", fault, seed + i);
	}
	if (fclose(f) != 0)
		return -1;
	return setenv("DROCE_CONFIG", path, 1);
}

int
ep_fault_config(const char *dir, const char *name, unsigned int subnet,
		const char *fault, unsigned int seed)
{
	return ep_config(dir, name, subnet, NULL, NULL, fault, seed);
}

static uint16_t
csum16(const uint8_t *p, size_t n, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

bool
frame_csums_ok(const uint8_t *f, bool *tcp)
{
	const uint8_t *ip = f + 14, *l4;
	uint32_t l4len, pseudo;
	uint8_t proto;

	if ((ip[0] >> 4) == 6) {
		l4 = ip + 40;
		l4len = (uint32_t)ip[4] << 8 | ip[5];
		proto = ip[6];
		pseudo = csum16(ip + 8, 32, 0) + l4len + proto;
	} else {
		if (csum16(ip, 20, 0) != 0xffff)
			return false;
		l4 = ip + 20;
		l4len = ((uint32_t)ip[2] << 8 | ip[3]) - 20;
		proto = ip[9];
		pseudo = csum16(ip + 12, 8, 0) + l4len + proto;
	}
	*tcp = proto == 6;
	return csum16(l4, l4len, pseudo) == 0xffff;
}

uint32_t
ip_l4_header(uint8_t *ip, bool v6, bool tcp, const uint8_t *src,
	     const uint8_t *dst, uint16_t dport, uint32_t payload)
{
	uint32_t alen = v6 ? 16 : 4, l3len = v6 ? 40 : 20;
	uint32_t l4len = (tcp ? 20 : 8) + payload;
	uint8_t *l4 = ip + l3len;

	memset(ip, 0, l3len + (tcp ? 20 : 8));
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(l4len >> 8);
		ip[5] = (uint8_t)l4len;
		ip[6] = tcp ? 6 : 17;
		ip[7] = 64;
	} else {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + l4len) >> 8);
		ip[3] = (uint8_t)(20 + l4len);
		ip[8] = 64;
		ip[9] = tcp ? 6 : 17;
	}
	if (src != NULL)
		memcpy(ip + l3len - 2 * alen, src, alen);
	if (dst != NULL)
		memcpy(ip + l3len - alen, dst, alen);
	l4[0] = 4000 >> 8;
	l4[1] = 4000 & 0xff;
	l4[2] = (uint8_t)(dport >> 8);
	l4[3] = (uint8_t)dport;
	if (tcp) {
		l4[12] = 5 << 4;
		l4[13] = 0x18;
	} else {
		l4[4] = (uint8_t)(l4len >> 8);
		l4[5] = (uint8_t)l4len;
	}
	return l3len + (tcp ? 20 : 8);
}

int
ep_drop_net_raw(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) != 0)
		return -1;
	data[CAP_TO_INDEX(CAP_NET_RAW)].effective &= ~CAP_TO_MASK(CAP_NET_RAW);
	return syscall(SYS_capset, &hdr, data) == 0 ? 0 : -1;
}

void
fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (uint8_t)(seed >> 24);
	}
}

size_t
ep_heap_allocated(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;
	int i;

	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (rte_malloc_get_socket_stats(i, &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

long
ep_rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, rss = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &pages, &rss), 2);
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}
