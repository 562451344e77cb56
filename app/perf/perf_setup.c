/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Endpoints as perftest makes them: a device, a PD, one CQ, N RC QPs and
 * one registered buffer; connected either inside one process (droce0 to
 * droce1) or across two, after swapping QPNs, PSNs, GIDs and the buffer's
 * rkey and address over TCP.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <droce.h>

#include "perf.h"

static int sock = -1;

double
perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned int
max_inline(const struct perf_opts *o)
{
	if (o->test == PERF_READ_BW || o->test == PERF_ATOMIC_BW)
		return 0;
	return o->size <= 220 ? 220 : 0;
}

int
perf_port_mtu(struct perf_opts *o)
{
	struct ibv_port_attr port;
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n, ret;

	list = ibv_get_device_list(&n);
	if (list == NULL || o->dev >= n) {
		fprintf(stderr, "droce-perf: no device %d (%d found)\n", o->dev,
			list ? n : 0);
		if (list != NULL)
			ibv_free_device_list(list);
		return -1;
	}
	ctx = ibv_open_device(list[o->dev]);
	ibv_free_device_list(list);
	if (ctx == NULL)
		return -1;
	ret = ibv_query_port(ctx, 1, &port);
	ibv_close_device(ctx);
	if (ret != 0)
		return -1;
	o->mtu = port.active_mtu;
	return 0;
}

/*
 * CQEs one CQ of a side needs: the signalled sends in flight (one in
 * every tx_depth / 4 and a tail: 5 a QP) or, for SENDs, the receives
 * posted too; no more than the device has.
 */
static int
cq_size(struct ibv_context *ctx, const struct perf_opts *o)
{
	struct ibv_device_attr da;
	uint64_t n = (uint64_t)o->qps * (o->tx_depth < 5 ? o->tx_depth : 5);

	if (o->test == PERF_SEND_BW || o->test == PERF_SEND_LAT)
		n += (uint64_t)o->qps * o->tx_depth * PERF_RX_FACTOR;
	n += 256;
	if (ibv_query_device(ctx, &da) == 0 && n > (uint64_t)da.max_cqe)
		n = (uint64_t)da.max_cqe;
	return (int)n;
}

int
perf_side_open(struct perf_side *s, int dev, const struct perf_opts *o)
{
	struct ibv_device **list;
	struct ibv_qp_init_attr qa;
	union ibv_gid gid;
	unsigned int i;
	int n;

	memset(s, 0, sizeof(*s));
	list = ibv_get_device_list(&n);
	if (list == NULL || dev >= n) {
		fprintf(stderr, "droce-perf: no device %d (%d found)\n", dev,
			list ? n : 0);
		return -1;
	}
	s->ctx = ibv_open_device(list[dev]);
	ibv_free_device_list(list);
	if (s->ctx == NULL)
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	/* a multiple of the alignment, as aligned_alloc() wants */
	s->buf_len = ((uint64_t)(o->size < 64 ? 64 : o->size) * 2 + 8191) &
		~(uint64_t)4095;
	s->buf = aligned_alloc(4096, s->buf_len);
	if (s->pd == NULL || s->buf == NULL)
		return -1;
	memset(s->buf, 0, s->buf_len);
	s->mr = ibv_reg_mr(s->pd, s->buf, s->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	s->cq = ibv_create_cq(s->ctx, cq_size(s->ctx, o), NULL, NULL, 0);
	s->qp = calloc(o->qps, sizeof(*s->qp));
	s->me.qpn = calloc(o->qps, sizeof(*s->me.qpn));
	s->me.psn = calloc(o->qps, sizeof(*s->me.psn));
	s->me.nqps = o->qps;
	if (s->mr == NULL || s->cq == NULL || s->qp == NULL ||
	    s->me.qpn == NULL || s->me.psn == NULL)
		return -1;
	for (i = 0; i < o->qps; i++) {
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = s->cq;
		qa.recv_cq = s->cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = o->tx_depth;
		/* receives outnumber sends in flight, or RNR waits; the
		 * other tests take none */
		qa.cap.max_recv_wr = o->test == PERF_SEND_BW ||
			o->test == PERF_SEND_LAT ?
			o->tx_depth * PERF_RX_FACTOR : 1;
		qa.cap.max_send_sge = 1;
		qa.cap.max_recv_sge = 1;
		qa.cap.max_inline_data = max_inline(o);
		s->qp[i] = ibv_create_qp(s->pd, &qa);
		if (s->qp[i] == NULL) {
			perror("droce-perf: ibv_create_qp");
			return -1;
		}
		s->me.qpn[i] = s->qp[i]->qp_num;
		s->me.psn[i] = (uint32_t)rand() & 0xffffff;
	}
	if (ibv_query_gid(s->ctx, 1, o->gid_index, &gid) != 0)
		return -1;
	memcpy(s->me.gid, gid.raw, 16);
	droce_query_mac(s->ctx, s->me.mac);
	s->me.rkey = s->mr->rkey;
	s->me.addr = (uintptr_t)s->buf;
	s->me.len = s->buf_len;
	return 0;
}

int
perf_side_connect(struct perf_side *s, const struct perf_opts *o)
{
	unsigned int i;

	for (i = 0; i < o->qps; i++) {
		struct ibv_qp_attr a;
		int ret;

		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		ret = ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE |
				    IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = o->mtu;
		a.dest_qp_num = s->peer.qpn[i];
		a.rq_psn = s->peer.psn[i];
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, s->peer.gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)o->gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		if (ret == 0)
			ret = ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE |
					    IBV_QP_AV | IBV_QP_PATH_MTU |
					    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					    IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_MIN_RNR_TIMER);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = s->me.psn[i];
		a.max_rd_atomic = 16;
		if (ret == 0)
			ret = ibv_modify_qp(s->qp[i], &a, IBV_QP_STATE |
					    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					    IBV_QP_MAX_QP_RD_ATOMIC);
		if (ret != 0) {
			fprintf(stderr, "droce-perf: ibv_modify_qp: %s\n",
				strerror(ret));
			return -1;
		}
	}
	return 0;
}

void
perf_side_close(struct perf_side *s)
{
	unsigned int i;

	for (i = 0; s->qp != NULL && i < s->me.nqps; i++)
		if (s->qp[i] != NULL)
			ibv_destroy_qp(s->qp[i]);
	free(s->qp);
	free(s->me.qpn);
	free(s->me.psn);
	free(s->peer_arrays);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static int
full_io(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
tcp_open(const struct perf_opts *o)
{
	int one = 1;

	if (o->server) {
		struct sockaddr_in a = {
			.sin_family = AF_INET,
			.sin_port = htons(o->port),
			.sin_addr.s_addr = htonl(INADDR_ANY),
		};
		int l = socket(AF_INET, SOCK_STREAM, 0);
		int fd;

		if (l < 0)
			return -1;
		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    listen(l, 1) < 0) {
			perror("droce-perf: listen");
			close(l);
			return -1;
		}
		fd = accept(l, NULL, NULL);
		close(l);
		return fd;
	} else {
		struct addrinfo hints = { .ai_family = AF_INET,
					  .ai_socktype = SOCK_STREAM };
		struct addrinfo *res;
		char port[8];
		double end = perf_now() + 30;

		snprintf(port, sizeof(port), "%u", o->port);
		if (getaddrinfo(o->host, port, &hints, &res) != 0)
			return -1;
		while (perf_now() < end) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);

			if (fd >= 0 &&
			    connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
				freeaddrinfo(res);
				return fd;
			}
			if (fd >= 0)
				close(fd);
			usleep(100000);
		}
		freeaddrinfo(res);
		fprintf(stderr, "droce-perf: cannot reach %s:%u\n", o->host,
			o->port);
		return -1;
	}
}

int
perf_exchange(const struct perf_opts *o, struct perf_side *s)
{
	sock = tcp_open(o);
	if (sock < 0)
		return -1;
	if (full_io(sock, &s->me, offsetof(struct perf_info, qpn), true) < 0 ||
	    full_io(sock, s->me.qpn, s->me.nqps * sizeof(uint32_t), true) < 0 ||
	    full_io(sock, s->me.psn, s->me.nqps * sizeof(uint32_t), true) < 0 ||
	    full_io(sock, &s->peer, offsetof(struct perf_info, qpn), false) < 0)
		return -1;
	if (s->peer.nqps != s->me.nqps) {
		fprintf(stderr, "droce-perf: %u QPs here, %u there\n",
			s->me.nqps, s->peer.nqps);
		return -1;
	}
	s->peer_arrays = calloc(2 * (size_t)s->peer.nqps, sizeof(uint32_t));
	if (s->peer_arrays == NULL)
		return -1;
	s->peer.qpn = s->peer_arrays;
	s->peer.psn = s->peer_arrays + s->peer.nqps;
	if (full_io(sock, s->peer.qpn, s->peer.nqps * sizeof(uint32_t),
		    false) < 0 ||
	    full_io(sock, s->peer.psn, s->peer.nqps * sizeof(uint32_t),
		    false) < 0)
		return -1;
	return 0;
}

/* A barrier between the two processes. */
int
perf_sync(const struct perf_opts *o)
{
	char c = 'x';

	(void)o;
	if (sock < 0)
		return 0;
	if (full_io(sock, &c, 1, true) < 0 || full_io(sock, &c, 1, false) < 0)
		return -1;
	return 0;
}

/* true once the other process has written to the barrier */
bool
perf_sync_ready(void)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };

	return sock < 0 || poll(&pfd, 1, 0) > 0;
}

void
perf_sync_close(void)
{
	if (sock >= 0)
		close(sock);
	sock = -1;
}
