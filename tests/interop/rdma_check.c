/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_check: RDMA WRITE and READ between two RC peers, every byte
 * checked on both sides. A plain verbs program linked against
 * libibverbs.so.1: it runs over rdma-core (Linux soft-RoCE in the interop
 * guest) and over droce's drop-in library alike.
 *
 * Each side's memory region holds four areas of count * size bytes:
 *
 *   src   a pattern of its own, written into the peer's dst
 *   dst   written by the peer's WRITEs
 *   rsrc  another pattern of its own, read by the peer
 *   rdst  where its READs of the peer's rsrc land
 *
 * Both sides WRITE and READ at once (count messages of size bytes each,
 * interleaved), so each is requester and responder together. When its
 * own work requests have completed, a side says so over the TCP
 * connection the addresses were exchanged on; once both have, each
 * checks dst and rdst against the peer's patterns and the verdicts are
 * exchanged. It prints "rdma_check: ok" and exits 0 only if both sides
 * found every byte right.
 *
 * -u TIMEOUT is the QPs' local ACK timeout (4.096 us << TIMEOUT, 14 by
 * default, as perftest's -u): a peer whose responder can be held up for
 * half a second while its requester runs (soft-RoCE in a guest without
 * KVM) needs more than 14's 67 ms times seven retries.
 *
 * Usage: rdma_check -d DEV [-x GID_INDEX] [-p PORT] [-s SIZE] [-n COUNT]
 *                   [-u TIMEOUT] [SERVER]
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <sys/socket.h>

#define DEPTH 64
#define RD_ATOMIC 16
#define TIMEOUT_S 120

enum area { SRC, DST, RSRC, RDST, NAREAS };

struct peer {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct check {
	const char *dev_name;
	const char *server;
	int gid_index;
	int port;
	uint32_t size;
	uint32_t count;
	uint8_t timeout;
	bool is_server;

	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t area_len;
	int sock;
	struct peer self;
	struct peer remote;
};

/* The pattern of @p seed at byte @p i: no two areas or sides alike. */
static uint8_t
pattern(uint32_t seed, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u;

	return (uint8_t)(x >> 13 ^ x >> 24 ^ (uint32_t)(i >> 9));
}

/* Seeds: the server's areas and the client's differ. */
static uint32_t
seed(bool server, enum area a)
{
	return (server ? 100u : 200u) + (uint32_t)a;
}

static uint8_t *
area(struct check *c, enum area a)
{
	return c->buf + (size_t)a * c->area_len;
}

static int
fail(const char *what)
{
	fprintf(stderr, "rdma_check: %s: %s\n", what, strerror(errno));
	return -1;
}

static int
tcp_connect(struct check *c)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char port[16];
	int one = 1, fd, lfd;

	snprintf(port, sizeof(port), "%d", c->port);
	if (!c->is_server) {
		if (getaddrinfo(c->server, port, &hints, &res) != 0) {
			fprintf(stderr, "rdma_check: cannot resolve %s\n",
				c->server);
			return -1;
		}
		fd = socket(res->ai_family, res->ai_socktype, 0);
		if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
			freeaddrinfo(res);
			fprintf(stderr, "rdma_check: Couldn't connect to %s:%d\n",
				c->server, c->port);
			return -1;
		}
		freeaddrinfo(res);
		c->sock = fd;
		return 0;
	}
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(NULL, port, &hints, &res) != 0)
		return fail("getaddrinfo");
	lfd = socket(res->ai_family, res->ai_socktype, 0);
	if (lfd < 0)
		return fail("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(lfd, 1) != 0) {
		freeaddrinfo(res);
		close(lfd);
		return fail("listen");
	}
	freeaddrinfo(res);
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0)
		return fail("accept");
	c->sock = fd;
	return 0;
}

/* One line of at most @p len - 1 bytes from the peer, without '\n'. */
static int
tcp_line(struct check *c, char *line, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		if (read(c->sock, &line[n], 1) != 1)
			return fail("read from peer");
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	return 0;
}

static int
tcp_say(struct check *c, const char *line)
{
	size_t len = strlen(line);

	if (write(c->sock, line, len) != (ssize_t)len)
		return fail("write to peer");
	return 0;
}

static int
exchange(struct check *c)
{
	char line[128], gid[33];
	unsigned long long addr;
	unsigned int i;

	for (i = 0; i < 16; i++)
		sprintf(&gid[2 * i], "%02x", c->self.gid.raw[i]);
	snprintf(line, sizeof(line), "%06x %06x %08x %016llx %s\n",
		 c->self.qpn, c->self.psn, c->self.rkey,
		 (unsigned long long)c->self.addr, gid);
	if (tcp_say(c, line) != 0 || tcp_line(c, line, sizeof(line)) != 0)
		return -1;
	if (sscanf(line, "%x %x %x %llx %32s", &c->remote.qpn,
		   &c->remote.psn, &c->remote.rkey, &addr, gid) != 5 ||
	    strlen(gid) != 32) {
		fprintf(stderr, "rdma_check: bad address line: %s\n", line);
		return -1;
	}
	c->remote.addr = addr;
	for (i = 0; i < 16; i++) {
		unsigned int b;

		sscanf(&gid[2 * i], "%2x", &b);
		c->remote.gid.raw[i] = (uint8_t)b;
	}
	return 0;
}

static int
setup(struct check *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = { 0 };
	struct ibv_port_attr port;
	int i, access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ;

	if (list == NULL)
		return fail("ibv_get_device_list");
	for (i = 0; list[i] != NULL; i++)
		if (strcmp(ibv_get_device_name(list[i]), c->dev_name) == 0)
			break;
	if (list[i] == NULL) {
		fprintf(stderr, "rdma_check: no device %s\n", c->dev_name);
		ibv_free_device_list(list);
		return -1;
	}
	c->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (c->ctx == NULL)
		return fail("ibv_open_device");
	if (ibv_query_port(c->ctx, 1, &port) != 0)
		return fail("ibv_query_port");
	if (ibv_query_gid(c->ctx, 1, c->gid_index, &c->self.gid) != 0)
		return fail("ibv_query_gid");
	c->pd = ibv_alloc_pd(c->ctx);
	if (c->pd == NULL)
		return fail("ibv_alloc_pd");
	c->area_len = (size_t)c->size * c->count;
	c->buf = calloc(NAREAS, c->area_len);
	if (c->buf == NULL)
		return fail("calloc");
	for (size_t k = 0; k < c->area_len; k++) {
		area(c, SRC)[k] = pattern(seed(c->is_server, SRC), k);
		area(c, RSRC)[k] = pattern(seed(c->is_server, RSRC), k);
	}
	c->mr = ibv_reg_mr(c->pd, c->buf, NAREAS * c->area_len, access);
	if (c->mr == NULL)
		return fail("ibv_reg_mr");
	c->cq = ibv_create_cq(c->ctx, 2 * DEPTH, NULL, NULL, 0);
	if (c->cq == NULL)
		return fail("ibv_create_cq");
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = DEPTH;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	c->qp = ibv_create_qp(c->pd, &init);
	if (c->qp == NULL)
		return fail("ibv_create_qp");
	srand48(getpid() * time(NULL));
	c->self.qpn = c->qp->qp_num;
	c->self.psn = (uint32_t)lrand48() & 0xffffff;
	c->self.rkey = c->mr->rkey;
	c->self.addr = (uintptr_t)c->buf;
	return 0;
}

static int
connect_qp(struct check *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return fail("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = c->remote.qpn;
	a.rq_psn = c->remote.psn;
	a.max_dest_rd_atomic = RD_ATOMIC;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = c->remote.gid;
	a.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		return fail("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->self.psn;
	a.timeout = c->timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = RD_ATOMIC;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		return fail("modify to RTS");
	return 0;
}

/* Work request @p k: WRITE message k/2 for even k, READ for odd. */
static int
post(struct check *c, uint32_t k)
{
	size_t off = (size_t)(k / 2) * c->size;
	bool write = (k & 1) == 0;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(area(c, write ? SRC : RDST) + off),
		.length = c->size,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = k,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = c->remote.addr +
		(size_t)(write ? DST : RSRC) * c->area_len + off;
	wr.wr.rdma.rkey = c->remote.rkey;
	if (ibv_post_send(c->qp, &wr, &bad) != 0)
		return fail("ibv_post_send");
	return 0;
}

static int
run(struct check *c)
{
	uint32_t total = 2 * c->count, posted = 0, done = 0;
	time_t deadline = time(NULL) + TIMEOUT_S;

	while (done < total) {
		struct ibv_wc wc[16];
		int n, i;

		while (posted < total && posted - done < DEPTH)
			if (post(c, posted++) != 0)
				return -1;
		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0)
			return fail("ibv_poll_cq");
		for (i = 0; i < n; i++, done++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rdma_check: wr %llu: %s\n",
					(unsigned long long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
			if (wc[i].wr_id != done) {
				fprintf(stderr, "rdma_check: wr %llu completed "
					"as number %u\n",
					(unsigned long long)wc[i].wr_id, done);
				return -1;
			}
		}
		if (time(NULL) > deadline) {
			fprintf(stderr, "rdma_check: stuck: %u of %u done\n",
				done, total);
			return -1;
		}
	}
	return 0;
}

/* Bytes of @p a that differ from the peer's pattern of @p peer_area. */
static size_t
mismatches(struct check *c, enum area a, enum area peer_area)
{
	uint32_t s = seed(!c->is_server, peer_area);
	size_t k, bad = 0, first = 0;

	for (k = 0; k < c->area_len; k++)
		if (area(c, a)[k] != pattern(s, k) && bad++ == 0)
			first = k;
	if (bad != 0)
		fprintf(stderr, "rdma_check: %s: %zu bytes wrong, the first "
			"at offset %zu (message %zu)\n",
			a == DST ? "written data" : "read data", bad, first,
			first / c->size);
	return bad;
}

int
main(int argc, char **argv)
{
	struct check c = { .gid_index = 0, .port = 18515, .size = 4096,
			   .count = 100, .timeout = 14, .sock = -1 };
	char line[64], verdict[64];
	size_t bad;
	int opt;

	while ((opt = getopt(argc, argv, "d:x:p:s:n:u:")) != -1) {
		switch (opt) {
		case 'd':
			c.dev_name = optarg;
			break;
		case 'x':
			c.gid_index = atoi(optarg);
			break;
		case 'p':
			c.port = atoi(optarg);
			break;
		case 's':
			c.size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			c.count = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'u':
			c.timeout = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (c.dev_name == NULL || c.size == 0 || c.count == 0 ||
	    argc - optind > 1)
		goto usage;
	c.is_server = optind == argc;
	c.server = c.is_server ? NULL : argv[optind];

	if (setup(&c) != 0 || tcp_connect(&c) != 0 || exchange(&c) != 0 ||
	    connect_qp(&c) != 0)
		return 1;
	/* both QPs are ready before either side sends */
	if (tcp_say(&c, "ready\n") != 0 ||
	    tcp_line(&c, line, sizeof(line)) != 0)
		return 1;
	if (run(&c) != 0)
		return 1;
	if (tcp_say(&c, "done\n") != 0 ||
	    tcp_line(&c, line, sizeof(line)) != 0 || strcmp(line, "done") != 0)
		return 1;
	bad = mismatches(&c, DST, SRC) + mismatches(&c, RDST, RSRC);
	snprintf(verdict, sizeof(verdict), "%s\n", bad == 0 ? "ok" : "bad");
	if (tcp_say(&c, verdict) != 0 ||
	    tcp_line(&c, line, sizeof(line)) != 0)
		return 1;
	printf("rdma_check: %u WRITEs and %u READs of %u bytes each way; "
	       "here %s, peer %s\n", c.count, c.count, c.size,
	       bad == 0 ? "every byte right" : "WRONG DATA", line);
	if (bad != 0 || strcmp(line, "ok") != 0)
		return 1;
	printf("rdma_check: ok\n");
	ibv_destroy_qp(c.qp);
	ibv_destroy_cq(c.cq);
	ibv_dereg_mr(c.mr);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.ctx);
	free(c.buf);
	close(c.sock);
	return 0;

usage:
	fprintf(stderr, "usage: rdma_check -d DEV [-x GID_INDEX] [-p PORT] "
		"[-s SIZE] [-n COUNT] [-u TIMEOUT] [SERVER]\n");
	return 2;
}
