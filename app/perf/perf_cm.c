/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The connection manager under load (droce-perf cm): within one process,
 * a stream of -s byte WRITEs runs from droce0 to droce1 on a QP pair of
 * its own while N RC connections (-n, default 1000) are made through the
 * rdma_cm API between the same two devices, all in flight at once, and
 * then all disconnected. Reported: connections established and torn down
 * per second, and the stream's rate while that happens as a ratio of its
 * rate in the quiet seconds (-D) before and after (and for -D seconds
 * while the connections' QPs, disconnected, are still there: what the
 * engine's pass over every live QP costs). The yardstick, taken
 * in the same run: the kernel's TCP connections per second over loopback,
 * N of them made and closed the same way.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include <droce_cm.h>

#include "perf.h"

#define CM_MAX_CONNS 4096
#define CM_TIMEOUT_S 60.0
/* WRs of the stream signalled: one in every STREAM_SIG */
#define STREAM_SIG 16u

static atomic_bool stream_stop;
static atomic_uint_fast64_t stream_done;

struct stream_args {
	const struct perf_opts *o;
	struct perf_side *cl;
	struct perf_side *sv;
	int err;
};

/* -s byte WRITEs, tx_depth in flight, until told to stop. */
static void *
stream(void *arg)
{
	struct stream_args *a = arg;
	struct ibv_sge sge = { (uintptr_t)a->cl->buf, a->o->size,
			       a->cl->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
	}, *bad;
	uint64_t posted = 0, done = 0;
	struct ibv_wc wc[16];
	int n, i;

	wr.wr.rdma.remote_addr = a->sv->me.addr;
	wr.wr.rdma.rkey = a->sv->me.rkey;
	while (!atomic_load(&stream_stop) || done < posted) {
		while (!atomic_load(&stream_stop) &&
		       posted - done + STREAM_SIG <= a->o->tx_depth) {
			unsigned int k;

			for (k = 0; k < STREAM_SIG; k++) {
				wr.wr_id = posted + k + 1;
				wr.send_flags = k + 1 == STREAM_SIG ?
					IBV_SEND_SIGNALED : 0;
				if (ibv_post_send(a->cl->qp[0], &wr, &bad)) {
					a->err = -1;
					return NULL;
				}
			}
			posted += STREAM_SIG;
		}
		n = ibv_poll_cq(a->cl->cq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				a->err = -1;
				return NULL;
			}
			done = wc[i].wr_id;
		}
		if (n < 0) {
			a->err = -1;
			return NULL;
		}
		atomic_store(&stream_done, done);
	}
	return NULL;
}

/* WRITEs the stream completed per second over @p secs. */
static double
stream_rate(double secs)
{
	uint64_t n0 = atomic_load(&stream_done);
	double t0 = perf_now();

	usleep((useconds_t)(secs * 1e6));
	return (double)(atomic_load(&stream_done) - n0) / (perf_now() - t0);
}

/* ------------------------------------------------------------------------
 * Connections through the CM.
 */

struct cm_side {
	struct rdma_event_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	unsigned int established, disconnected;
};

struct cm_run {
	unsigned int n;
	struct cm_side cli, srv;
	struct rdma_cm_id *listen;
	struct rdma_cm_id *cids[CM_MAX_CONNS], *sids[CM_MAX_CONNS];
	unsigned int nsids;
	union ibv_gid dgid;            /* the server's */
	struct sockaddr_storage src, dst;
	int err;
};

/* An RC QP on @p id, on @p s's PD and CQ (made with the first id). */
static int
cm_qp(struct cm_side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (s->pd == NULL) {
		s->pd = ibv_alloc_pd(id->verbs);
		s->cq = ibv_create_cq(id->verbs, 64, NULL, NULL, 0);
		if (s->pd == NULL || s->cq == NULL)
			return -1;
	}
	qa.send_cq = qa.recv_cq = s->cq;
	return rdma_create_qp(id, s->pd, &qa);
}

static void
cm_fail(struct cm_run *r, const struct rdma_cm_event *ev)
{
	fprintf(stderr, "droce-perf: cm: %s, status %d\n",
		rdma_event_str(ev->event), ev->status);
	r->err = -1;
}

/* Take and act on what events there are on @p s's channel. */
static void
cm_events(struct cm_run *r, struct cm_side *s)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(s->ch, &ev) == 0) {
		struct rdma_cm_id *id = ev->id;

		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(id, 2000) != 0)
				r->err = -1;
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			if (cm_qp(s, id) != 0 || rdma_connect(id, &cp) != 0)
				r->err = -1;
			break;
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			r->sids[r->nsids++] = id;
			if (cm_qp(s, id) != 0 || rdma_accept(id, &cp) != 0)
				r->err = -1;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			s->established++;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			s->disconnected++;
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			cm_fail(r, ev);
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/* Events of both sides until @p done says so, or CM_TIMEOUT_S. */
static int
cm_pump(struct cm_run *r, bool (*done)(const struct cm_run *))
{
	struct pollfd p[2] = { { .fd = r->cli.ch->fd, .events = POLLIN },
			       { .fd = r->srv.ch->fd, .events = POLLIN } };
	double end = perf_now() + CM_TIMEOUT_S;

	while (!done(r) && r->err == 0) {
		if (perf_now() > end) {
			fprintf(stderr, "droce-perf: cm: timed out\n");
			return -1;
		}
		if (poll(p, 2, 100) < 0)
			return -1;
		cm_events(r, &r->cli);
		cm_events(r, &r->srv);
	}
	return r->err;
}

static bool
all_established(const struct cm_run *r)
{
	return r->cli.established == r->n && r->srv.established == r->n;
}

static bool
all_disconnected(const struct cm_run *r)
{
	return r->cli.disconnected == r->n && r->srv.disconnected == r->n;
}

static int
nonblocking(struct rdma_event_channel *ch)
{
	int fl = fcntl(ch->fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
}

/* N connections made (*conn_s) and torn down (*disc_s), in seconds. */
static int
cm_churn(struct cm_run *r, double *conn_s, double *disc_s)
{
	unsigned int i;
	double t0;

	r->cli.ch = rdma_create_event_channel();
	r->srv.ch = rdma_create_event_channel();
	if (r->cli.ch == NULL || r->srv.ch == NULL ||
	    nonblocking(r->cli.ch) != 0 || nonblocking(r->srv.ch) != 0 ||
	    rdma_create_id(r->srv.ch, &r->listen, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(r->listen, (struct sockaddr *)&r->dst) != 0 ||
	    rdma_listen(r->listen, (int)r->n) != 0)
		return -1;
	droce_cma_gid_to_addr(&r->dgid, ntohs(rdma_get_src_port(r->listen)),
			      &r->dst);

	t0 = perf_now();
	for (i = 0; i < r->n; i++)
		if (rdma_create_id(r->cli.ch, &r->cids[i], NULL,
				   RDMA_PS_TCP) != 0 ||
		    rdma_resolve_addr(r->cids[i], (struct sockaddr *)&r->src,
				      (struct sockaddr *)&r->dst, 2000) != 0)
			return -1;
	if (cm_pump(r, all_established) != 0)
		return -1;
	*conn_s = perf_now() - t0;

	t0 = perf_now();
	for (i = 0; i < r->n; i++)
		if (rdma_disconnect(r->cids[i]) != 0)
			return -1;
	if (cm_pump(r, all_disconnected) != 0)
		return -1;
	*disc_s = perf_now() - t0;
	return 0;
}

static void
cm_close(struct cm_run *r)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (r->cids[i] != NULL) {
			if (r->cids[i]->qp != NULL)
				rdma_destroy_qp(r->cids[i]);
			rdma_destroy_id(r->cids[i]);
		}
	for (i = 0; i < r->nsids; i++) {
		if (r->sids[i]->qp != NULL)
			rdma_destroy_qp(r->sids[i]);
		rdma_destroy_id(r->sids[i]);
	}
	if (r->listen != NULL)
		rdma_destroy_id(r->listen);
	if (r->cli.cq != NULL)
		ibv_destroy_cq(r->cli.cq);
	if (r->srv.cq != NULL)
		ibv_destroy_cq(r->srv.cq);
	if (r->cli.pd != NULL)
		ibv_dealloc_pd(r->cli.pd);
	if (r->srv.pd != NULL)
		ibv_dealloc_pd(r->srv.pd);
	if (r->cli.ch != NULL)
		rdma_destroy_event_channel(r->cli.ch);
	if (r->srv.ch != NULL)
		rdma_destroy_event_channel(r->srv.ch);
}

/* ------------------------------------------------------------------------
 * The yardstick: the kernel's TCP over loopback.
 */

static int
tcp_churn(unsigned int n, double *conn_s, double *disc_s)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	static int c[CM_MAX_CONNS], s[CM_MAX_CONNS];
	unsigned int i;
	double t0;
	int l, ret = -1;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(l, (int)n) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) != 0)
		goto out;
	t0 = perf_now();
	for (i = 0; i < n; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (c[i] < 0 ||
		    connect(c[i], (struct sockaddr *)&a, sizeof(a)) != 0)
			goto out;
		s[i] = accept(l, NULL, NULL);
		if (s[i] < 0)
			goto out;
	}
	*conn_s = perf_now() - t0;
	t0 = perf_now();
	for (i = 0; i < n; i++) {
		close(c[i]);
		close(s[i]);
	}
	*disc_s = perf_now() - t0;
	ret = 0;
out:
	if (l >= 0)
		close(l);
	return ret;
}

int
perf_cm(const struct perf_opts *o, struct perf_side *cl, struct perf_side *sv)
{
	static struct cm_run r;
	struct stream_args sa = { o, cl, sv, 0 };
	double quiet0, quiet1, idle, churn, conn_s = 0, disc_s = 0;
	double tconn_s, tdisc_s;
	union ibv_gid gid;             /* the client's */
	uint64_t n0;
	double t0;
	pthread_t th;
	int ret;

	memset(&r, 0, sizeof(r));
	r.n = o->iters != 0 ? (unsigned int)o->iters : 1000;
	if (r.n > CM_MAX_CONNS) {
		fprintf(stderr, "droce-perf: cm: at most %d connections\n",
			CM_MAX_CONNS);
		return -1;
	}
	memcpy(gid.raw, cl->me.gid, 16);
	droce_cma_gid_to_addr(&gid, 0, &r.src);
	memcpy(r.dgid.raw, sv->me.gid, 16);
	droce_cma_gid_to_addr(&r.dgid, 0, &r.dst);
	if (tcp_churn(r.n, &tconn_s, &tdisc_s) != 0) {
		perror("droce-perf: cm: the TCP yardstick");
		return -1;
	}

	atomic_store(&stream_stop, false);
	if (pthread_create(&th, NULL, stream, &sa) != 0)
		return -1;
	quiet0 = stream_rate(o->duration);
	n0 = atomic_load(&stream_done);
	t0 = perf_now();
	ret = cm_churn(&r, &conn_s, &disc_s);
	churn = (double)(atomic_load(&stream_done) - n0) / (perf_now() - t0);
	idle = ret == 0 ? stream_rate(o->duration) : 0;
	cm_close(&r);
	quiet1 = ret == 0 ? stream_rate(o->duration) : 0;
	atomic_store(&stream_stop, true);
	pthread_join(th, NULL);
	if (ret != 0 || sa.err != 0) {
		fprintf(stderr, "droce-perf: cm: failed\n");
		return -1;
	}
	printf("%u RC connections through the CM, droce0 -> droce1, all in "
	       "flight:\n", r.n);
	printf("  established in %8.3f s  %8.0f /s\n", conn_s, r.n / conn_s);
	printf("  torn down in   %8.3f s  %8.0f /s\n", disc_s, r.n / disc_s);
	printf("the kernel's TCP over loopback, the same %u:\n", r.n);
	printf("  established in %8.3f s  %8.0f /s  (droce's CM: %.2f of "
	       "it)\n", tconn_s, r.n / tconn_s, tconn_s / conn_s);
	printf("  closed in      %8.3f s  %8.0f /s\n", tdisc_s, r.n / tdisc_s);
	printf("%u B WRITE stream on droce0 -> droce1, its own QPs:\n",
	       o->size);
	printf("  quiet before %10.0f /s, after %10.0f /s\n", quiet0, quiet1);
	printf("  during the connections %10.0f /s  (ratio %.2f)\n", churn,
	       churn * 2 / (quiet0 + quiet1));
	printf("  beside their %u QPs, disconnected, not yet destroyed "
	       "%10.0f /s  (ratio %.2f)\n", 2 * r.n, idle,
	       idle * 2 / (quiet0 + quiet1));
	return 0;
}
