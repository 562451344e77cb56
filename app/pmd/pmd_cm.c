/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * QPs through the RDMA CM (the rdma_cm API of <rdma/rdma_cma.h>, which
 * libdroce implements): `cm listen` accepts every request to a device's
 * address and port, `cm connect` resolves the peer's address and route
 * and connects, `cm disconnect` ends a connection. Each connection's QP
 * is a QP of droce-pmd like those `create qp` makes, with its own PD,
 * buffer, MR and CQ; rdma_create_qp makes it on that PD, and the CM moves
 * it to RTS.
 *
 * One event channel serves every id. Its events are taken on the command
 * thread only: while a cm command waits for its own, before each command
 * of a script, during `sleep`, and at the prompt while it waits for
 * input. An event is copied and acknowledged before it is acted on (an
 * id is destroyed only once its events are acknowledged).
 *
 * WRITE and READ need the peer's buffer: each side sends its own in the
 * private data of its REQ or REP, as droce-pmd's own 20 bytes (integers
 * big-endian):
 *
 *   offset 0   4 bytes  'P' 'M' 'D' 1 (the format's version)
 *   offset 4   4 bytes  rkey of the buffer
 *   offset 8   8 bytes  its address
 *   offset 16  4 bytes  its length
 *
 * A peer that sends anything else is connected all the same, for SEND.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include <droce_cm.h>
#include <droce_cm_mad.h>

#include "pmd.h"

#define PMD_CM_LISTENERS 16
#define PDATA_LEN 20
/* what a connection asks: as many READs in flight as `connect qp` */
#define PMD_CM_RD_ATOMIC 16

static const uint8_t pdata_tag[4] = { 'P', 'M', 'D', 1 };

/* A listening id, on one device's address and port. */
struct pmd_cm_listener {
	struct rdma_cm_id *id;          /* NULL: free */
	struct pmd_port *port;
	uint16_t port_num;
};

/* An event, copied (with its private data) before it is acknowledged. */
struct pmd_cm_event {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	struct rdma_conn_param conn;
	uint8_t pdata[256];
};

static struct rdma_event_channel *channel;
static struct pmd_cm_listener listeners[PMD_CM_LISTENERS];

int
pmd_cm_fd(void)
{
	return channel != NULL ? channel->fd : -1;
}

/* The channel, made at the first cm command (which starts droce's CM). */
static int
cm_init(void)
{
	int flags;

	if (channel != NULL)
		return 0;
	channel = rdma_create_event_channel();
	if (channel == NULL) {
		pmd_fail("cannot start the CM: %s", strerror(errno));
		return -1;
	}
	/* rdma_get_cm_event() takes what is there and does not wait */
	flags = fcntl(channel->fd, F_GETFL);
	if (flags < 0 ||
	    fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		pmd_fail("CM event channel: %s", strerror(errno));
		rdma_destroy_event_channel(channel);
		channel = NULL;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Addresses.
 */

static int
parse_addr(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return 0;
	}
	return -1;
}

/* "10.0.0.1 port 7471" */
static const char *
addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	uint16_t port;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 =
			(const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		port = ntohs(in6->sin6_port);
	} else {
		snprintf(buf, len, "(no address)");
		return buf;
	}
	snprintf(buf, len, "%s port %u", ip, port);
	return buf;
}

/*
 * @p p's address to bind to: with @p dst, the one of dst's family that
 * shares the longest prefix with it (as the CM routes); without, GID 0.
 */
static int
port_addr(struct pmd_port *p, const struct sockaddr_storage *dst,
	  uint16_t port, struct sockaddr_storage *ss)
{
	static const union ibv_gid unset;
	struct ibv_port_attr pa;
	union ibv_gid gid, best, want;
	int i, bits, best_bits = -1;

	memset(&want, 0, sizeof(want));
	if (dst != NULL && dst->ss_family == AF_INET) {
		want.raw[10] = 0xff;
		want.raw[11] = 0xff;
		memcpy(want.raw + 12,
		       &((const struct sockaddr_in *)dst)->sin_addr, 4);
	} else if (dst != NULL) {
		memcpy(want.raw, &((const struct sockaddr_in6 *)dst)->sin6_addr,
		       16);
	}
	if (ibv_query_port(p->ctx, 1, &pa) != 0)
		pa.gid_tbl_len = 0;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(p->ctx, 1, i, &gid) != 0)
			break;
		if (memcmp(&gid, &unset, sizeof(gid)) == 0)
			continue;
		if (dst == NULL) {
			best = gid;
			best_bits = 0;
			break;
		}
		if (droce_cma_gid_is_v4(&gid) != droce_cma_gid_is_v4(&want))
			continue;
		for (bits = 0; bits < 128; bits++)
			if ((gid.raw[bits / 8] ^ want.raw[bits / 8]) &
			    (0x80 >> (bits % 8)))
				break;
		if (bits > best_bits) {
			best = gid;
			best_bits = bits;
		}
	}
	if (best_bits < 0) {
		pmd_fail("%s: no %saddress", p->name, dst == NULL ? "" :
			 dst->ss_family == AF_INET ? "IPv4 " : "IPv6 ");
		return -1;
	}
	droce_cma_gid_to_addr(&best, port, ss);
	return 0;
}

/* ------------------------------------------------------------------------
 * Private data and peers.
 */

static void
pdata_put(const struct pmd_qp *q, uint8_t pdata[PDATA_LEN])
{
	uint32_t rkey = htobe32(q->mr->rkey);
	uint64_t addr = htobe64((uint64_t)(uintptr_t)q->buf);
	uint32_t len = htobe32(PMD_BUF_LEN);

	memcpy(pdata, pdata_tag, 4);
	memcpy(pdata + 4, &rkey, 4);
	memcpy(pdata + 8, &addr, 8);
	memcpy(pdata + 16, &len, 4);
}

/* The peer's buffer from its private data; rkey 0 if it sent none. */
static void
pdata_get(const struct rdma_conn_param *conn, uint32_t *rkey,
	  uint64_t *addr)
{
	const uint8_t *p = conn->private_data;
	uint32_t k;
	uint64_t a;

	*rkey = 0;
	*addr = 0;
	if (p == NULL || conn->private_data_len < PDATA_LEN ||
	    memcmp(p, pdata_tag, 4) != 0)
		return;
	memcpy(&k, p + 4, 4);
	memcpy(&a, p + 8, 8);
	*rkey = be32toh(k);
	*addr = be64toh(a);
}

/* @p q is in RTS, moved there by the CM: what it sends, its peer. */
static int
note_peer(struct pmd_qp *q, const struct rdma_conn_param *conn)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	uint32_t rkey;
	uint64_t addr;

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			 IBV_QP_RQ_PSN | IBV_QP_DEST_QPN | IBV_QP_AV,
			 &ia) != 0) {
		pmd_fail("qp %u: cannot query", q->id);
		return -1;
	}
	/* nothing sent or received yet: the first PSNs */
	q->psn = a.sq_psn;
	pdata_get(conn, &rkey, &addr);
	pmd_qp_print(q);
	pmd_qp_set_peer(q, &a.ah_attr.grh.dgid, a.dest_qp_num, a.rq_psn,
			rkey, addr);
	return 0;
}

static struct pmd_qp *
qp_of(const struct rdma_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < PMD_MAX_QPS; i++)
		if (pmd_qps[i].used && pmd_qps[i].cm_id == id)
			return &pmd_qps[i];
	return NULL;
}

static struct pmd_cm_listener *
listener_of(const struct rdma_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < PMD_CM_LISTENERS; i++)
		if (id != NULL && listeners[i].id == id)
			return &listeners[i];
	return NULL;
}

/* " (INVALID_SERVICE_ID)" for a REJ's reason, " (Connection timed out)"
 * for an errno. */
static const char *
status_str(enum rdma_cm_event_type type, int status, char *buf, size_t len)
{
	if (type == RDMA_CM_EVENT_REJECTED)
		snprintf(buf, len, " (%s)",
			 droce_cm_rej_reason_name((uint16_t)status));
	else if (status < 0)
		snprintf(buf, len, " (%s)", strerror(-status));
	else
		buf[0] = '\0';
	return buf;
}

/* ------------------------------------------------------------------------
 * Events.
 */

static bool
take_event(struct pmd_cm_event *e)
{
	struct rdma_cm_event *ev;
	size_t n;

	if (channel == NULL || rdma_get_cm_event(channel, &ev) != 0)
		return false;
	memset(e, 0, sizeof(*e));
	e->type = ev->event;
	e->status = ev->status;
	e->id = ev->id;
	e->listen_id = ev->listen_id;
	if (ev->id->qp_type != IBV_QPT_UD) {
		e->conn = ev->param.conn;
		n = ev->param.conn.private_data != NULL ?
			ev->param.conn.private_data_len : 0;
		if (n > sizeof(e->pdata))
			n = sizeof(e->pdata);
		if (n > 0)
			memcpy(e->pdata, ev->param.conn.private_data, n);
		e->conn.private_data = n > 0 ? e->pdata : NULL;
		e->conn.private_data_len = (uint8_t)n;
	}
	rdma_ack_cm_event(ev);
	return true;
}

/* Wait up to @p secs (a second at most) for the channel's fd, or just
 * wait without one. */
static void
fd_wait(double secs)
{
	struct pollfd pfd = { .fd = pmd_cm_fd(), .events = POLLIN };

	if (secs > 0)
		poll(&pfd, 1, secs < 1.0 ? (int)(secs * 1000) + 1 : 1000);
}

/* A listener's request: a QP for it, accepted with our buffer. */
static void
accept_request(const struct pmd_cm_event *e)
{
	struct pmd_cm_listener *l = listener_of(e->listen_id);
	struct rdma_cm_id *id = e->id;
	struct rdma_conn_param param;
	struct ibv_qp_init_attr qa;
	struct pmd_qp *q = NULL;
	uint8_t pdata[PDATA_LEN];
	char from[80], at[80];

	addr_str(rdma_get_peer_addr(id), from, sizeof(from));
	if (l == NULL || l->port->ctx == NULL ||
	    strcmp(ibv_get_device_name(id->verbs->device),
		   l->port->name) != 0) {
		printf("cm: a request from %s refused: no listener of ours "
		       "on its device\n", from);
		goto reject;
	}
	q = pmd_qp_alloc(l->port, PMD_DEFAULT_DEPTH);
	if (q == NULL)
		goto reject;
	q->cm_id = id;
	q->cm_accepted = true;
	pmd_qp_init_attr(q, &qa);
	if (rdma_create_qp(id, q->pd, &qa) != 0) {
		pmd_fail("cm: qp %u: rdma_create_qp: %s", q->id,
			 strerror(errno));
		goto reject;
	}
	q->qp = id->qp;
	q->gid = id->route.addr.addr.ibaddr.sgid;
	pdata_put(q, pdata);
	memset(&param, 0, sizeof(param));
	param.responder_resources = e->conn.responder_resources;
	param.initiator_depth = e->conn.initiator_depth;
	param.rnr_retry_count = 7;
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	if (rdma_accept(id, &param) != 0) {
		pmd_fail("cm: qp %u: rdma_accept: %s", q->id, strerror(errno));
		goto reject;
	}
	if (note_peer(q, &e->conn) < 0)
		goto reject;
	printf("cm: qp %u on %s accepts %s at %s\n", q->id, q->port->name,
	       from, addr_str(rdma_get_local_addr(id), at, sizeof(at)));
	return;
reject:
	rdma_reject(id, NULL, 0);
	/* the QP's id goes with it */
	if (q != NULL)
		pmd_qp_destroy(q);
	else
		rdma_destroy_id(id);
}

/* An event nobody waits for: requests, and what befalls connections. */
static void
dispatch(const struct pmd_cm_event *e)
{
	struct pmd_qp *q;
	char buf[80];

	if (e->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		accept_request(e);
		return;
	}
	q = qp_of(e->id);
	if (q == NULL)
		return;
	switch (e->type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (q->connected)
			break;
		q->connected = true;
		printf("cm: qp %u established with %s\n", q->id,
		       addr_str(rdma_get_peer_addr(q->cm_id), buf,
				sizeof(buf)));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		q->connected = false;
		printf("cm: qp %u disconnected by its peer, destroyed\n",
		       q->id);
		pmd_qp_destroy(q);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		/* a connection that failed, or a device that went */
		q->connected = false;
		printf("cm: qp %u: %s, status %d%s; destroyed\n", q->id,
		       rdma_event_str(e->type), e->status,
		       status_str(e->type, e->status, buf, sizeof(buf)));
		pmd_qp_destroy(q);
		break;
	}
}

void
pmd_cm_poll(unsigned int ms)
{
	double end = pmd_now() + ms / 1000.0;
	struct pmd_cm_event e;

	for (;;) {
		while (take_event(&e))
			dispatch(&e);
		if (pmd_now() >= end)
			return;
		fd_wait(end - pmd_now());
	}
}

/* The next event of @p id, the others dispatched meanwhile; -1 if none
 * comes in PMD_CM_WAIT_S. */
static int
wait_event(const struct rdma_cm_id *id, struct pmd_cm_event *e)
{
	double end = pmd_now() + PMD_CM_WAIT_S;

	for (;;) {
		while (take_event(e)) {
			if (e->id == id)
				return 0;
			dispatch(e);
		}
		if (pmd_now() >= end)
			return -1;
		fd_wait(end - pmd_now());
	}
}

/* Events dispatched until QP @p q no longer holds @p id or, with @p up,
 * is established: the other end of a connection in this process. */
static void
wait_peer(const struct pmd_qp *q, const struct rdma_cm_id *id, bool up)
{
	double end = pmd_now() + PMD_CM_WAIT_S;
	struct pmd_cm_event e;

	for (;;) {
		if (!q->used || q->cm_id != id || (up && q->connected))
			return;
		if (take_event(&e)) {
			dispatch(&e);
			continue;
		}
		if (pmd_now() >= end) {
			printf("cm: qp %u: still %s after %.0f s\n", q->id,
			       up ? "not established" : "there", PMD_CM_WAIT_S);
			return;
		}
		fd_wait(end - pmd_now());
	}
}

/* ------------------------------------------------------------------------
 * Commands.
 */

int
pmd_cm_listen(struct pmd_port *p, uint16_t port)
{
	struct pmd_cm_listener *l = NULL;
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	unsigned int i;
	char buf[80];
	int err;

	if (p->ctx == NULL) {
		pmd_fail("%s: stopped", p->name);
		return -1;
	}
	if (port == 0) {
		pmd_fail("port 1 to 65535");
		return -1;
	}
	for (i = 0; i < PMD_CM_LISTENERS && l == NULL; i++)
		if (listeners[i].id == NULL)
			l = &listeners[i];
	if (l == NULL) {
		pmd_fail("%u listeners already", PMD_CM_LISTENERS);
		return -1;
	}
	if (cm_init() < 0 || port_addr(p, NULL, port, &ss) < 0)
		return -1;
	if (rdma_create_id(channel, &id, NULL, RDMA_PS_TCP) != 0) {
		pmd_fail("cm listen: rdma_create_id: %s", strerror(errno));
		return -1;
	}
	if (rdma_bind_addr(id, (struct sockaddr *)&ss) != 0 ||
	    rdma_listen(id, 0) != 0) {
		err = errno;
		rdma_destroy_id(id);
		pmd_fail("cm listen %s %u: %s", p->name, port, strerror(err));
		return -1;
	}
	l->id = id;
	l->port = p;
	l->port_num = port;
	printf("cm: %s listening on %s\n", p->name,
	       addr_str(rdma_get_local_addr(id), buf, sizeof(buf)));
	return 0;
}

/* Stop @p p's listeners (on @p port, or all if it is -1): how many. */
static unsigned int
stop_listeners(struct pmd_port *p, int port)
{
	unsigned int i, n = 0;
	char buf[80];

	for (i = 0; i < PMD_CM_LISTENERS; i++) {
		struct pmd_cm_listener *l = &listeners[i];

		if (l->id == NULL || l->port != p ||
		    (port >= 0 && l->port_num != port))
			continue;
		printf("cm: %s no longer listening on %s\n", p->name,
		       addr_str(rdma_get_local_addr(l->id), buf, sizeof(buf)));
		rdma_destroy_id(l->id);
		memset(l, 0, sizeof(*l));
		n++;
	}
	return n;
}

int
pmd_cm_stop(struct pmd_port *p, int port)
{
	if (stop_listeners(p, port) > 0)
		return 0;
	if (port >= 0)
		pmd_fail("cm: %s is not listening on port %d", p->name, port);
	else
		pmd_fail("cm: %s is not listening", p->name);
	return -1;
}

void
pmd_cm_port_stop(struct pmd_port *p)
{
	stop_listeners(p, -1);
}

/* The next event of the id @p what waits for must be @p want. */
static int
expect(const struct rdma_cm_id *id, enum rdma_cm_event_type want,
       const char *what, struct pmd_cm_event *e)
{
	char buf[80];

	if (wait_event(id, e) < 0) {
		pmd_fail("%s: no %s in %.0f s", what, rdma_event_str(want),
			 PMD_CM_WAIT_S);
		return -1;
	}
	if (e->type != want) {
		pmd_fail("%s: %s, status %d%s", what, rdma_event_str(e->type),
			 e->status,
			 status_str(e->type, e->status, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

struct pmd_qp *
pmd_cm_connect(struct pmd_port *p, const char *ip, uint16_t port)
{
	struct sockaddr_storage src, dst;
	struct rdma_conn_param param;
	struct ibv_qp_init_attr qa;
	struct rdma_cm_id *id = NULL;
	struct pmd_cm_event e;
	struct pmd_qp *q = NULL;
	uint8_t pdata[PDATA_LEN];
	char what[128], buf[80];

	if (p->ctx == NULL) {
		pmd_fail("%s: stopped", p->name);
		return NULL;
	}
	if (parse_addr(ip, port, &dst) < 0) {
		pmd_fail("%s: not an IPv4 or IPv6 address", ip);
		return NULL;
	}
	snprintf(what, sizeof(what), "cm connect %s %s",
		 p->name, addr_str((struct sockaddr *)&dst, buf, sizeof(buf)));
	if (cm_init() < 0 || port_addr(p, &dst, 0, &src) < 0)
		return NULL;
	if (rdma_create_id(channel, &id, NULL, RDMA_PS_TCP) != 0) {
		pmd_fail("%s: rdma_create_id: %s", what, strerror(errno));
		return NULL;
	}
	if (rdma_resolve_addr(id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, 2000) != 0) {
		pmd_fail("%s: rdma_resolve_addr: %s", what, strerror(errno));
		goto fail;
	}
	if (expect(id, RDMA_CM_EVENT_ADDR_RESOLVED, what, &e) < 0)
		goto fail;
	if (rdma_resolve_route(id, 2000) != 0) {
		pmd_fail("%s: rdma_resolve_route: %s", what, strerror(errno));
		goto fail;
	}
	if (expect(id, RDMA_CM_EVENT_ROUTE_RESOLVED, what, &e) < 0)
		goto fail;
	q = pmd_qp_alloc(p, PMD_DEFAULT_DEPTH);
	if (q == NULL)
		goto fail;
	/* from here the id goes with the QP */
	q->cm_id = id;
	pmd_qp_init_attr(q, &qa);
	if (rdma_create_qp(id, q->pd, &qa) != 0) {
		pmd_fail("%s: rdma_create_qp: %s", what, strerror(errno));
		goto fail;
	}
	q->qp = id->qp;
	q->gid = id->route.addr.addr.ibaddr.sgid;
	pdata_put(q, pdata);
	memset(&param, 0, sizeof(param));
	param.responder_resources = PMD_CM_RD_ATOMIC;
	param.initiator_depth = PMD_CM_RD_ATOMIC;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	if (rdma_connect(id, &param) != 0) {
		pmd_fail("%s: rdma_connect: %s", what, strerror(errno));
		goto fail;
	}
	if (expect(id, RDMA_CM_EVENT_ESTABLISHED, what, &e) < 0)
		goto fail;
	q->connected = true;
	if (note_peer(q, &e.conn) < 0)
		goto fail;
	printf("cm: qp %u established with %s\n", q->id,
	       addr_str(rdma_get_peer_addr(id), buf, sizeof(buf)));
	/* the listener is ours too: its side established as well */
	if (q->peer != NULL && q->peer->cm_id != NULL)
		wait_peer(q->peer, q->peer->cm_id, true);
	return q;
fail:
	if (q != NULL)
		pmd_qp_destroy(q);
	else
		rdma_destroy_id(id);
	return NULL;
}

int
pmd_cm_disconnect(struct pmd_qp *q)
{
	struct rdma_cm_id *id = q->cm_id, *peer_id = NULL;
	struct pmd_qp *peer = q->peer;
	struct pmd_cm_event e;
	unsigned int qid = q->id;
	int ret = 0;

	if (id == NULL) {
		pmd_fail("qp %u was not made by the CM (destroy qp %u)", qid,
			 qid);
		return -1;
	}
	if (peer != NULL)
		peer_id = peer->cm_id;
	if (rdma_disconnect(id) != 0) {
		pmd_fail("qp %u: rdma_disconnect: %s", qid, strerror(errno));
		return -1;
	}
	/* a late ESTABLISHED of a listener's side may come first */
	do {
		ret = wait_event(id, &e);
	} while (ret == 0 && e.type != RDMA_CM_EVENT_DISCONNECTED);
	q->connected = false;
	pmd_qp_destroy(q);
	if (ret < 0) {
		pmd_fail("qp %u: no %s in %.0f s; destroyed", qid,
			 rdma_event_str(RDMA_CM_EVENT_DISCONNECTED),
			 PMD_CM_WAIT_S);
		return -1;
	}
	printf("cm: qp %u disconnected, destroyed\n", qid);
	/* the other end is ours too: it hears of it and goes */
	if (peer_id != NULL)
		wait_peer(peer, peer_id, false);
	return 0;
}

void
pmd_cm_release(struct pmd_qp *q)
{
	struct rdma_cm_id *id = q->cm_id;

	/* a connection still up (or accepted, not yet established) ends
	 * with a DREQ, so its peer hears of it; an id with none refuses,
	 * or has nothing to send, which is as well */
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	q->qp = NULL;
	q->cm_id = NULL;
	q->connected = false;
}

/* A counter line as pmd_counter() prints it, with room for the CM's
 * longer names. */
static void
counter(const char *name, uint64_t v)
{
	printf("  %-20s %" PRIu64 "\n", name, v);
}

/* "ESTABLISHED" as "conns_established" */
static void
counter_lower(const char *prefix, const char *name, uint64_t v)
{
	char buf[64];
	size_t i, n;

	n = (size_t)snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	for (i = 0; i < n && i < sizeof(buf); i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	counter(buf, v);
}

static void
rej_counters(const char *prefix, const uint64_t *by_reason)
{
	char name[32];
	unsigned int r;

	for (r = 0; r < DROCE_CM_REJ_REASONS; r++) {
		const char *s = droce_cm_rej_reason_name((uint16_t)r);

		if (by_reason[r] == 0)
			continue;
		if (strcmp(s, "?") == 0) {
			snprintf(name, sizeof(name), "%u", r);
			s = name;
		}
		counter_lower(prefix, s, by_reason[r]);
	}
}

void
pmd_cm_show(void)
{
	struct droce_cm_stats s;
	unsigned int i;
	char a[80], b[80];

	if (channel == NULL || droce_cm_query_stats(&s) != 0) {
		printf("cm: not started (no cm command yet)\n");
		return;
	}
	for (i = 0; i < PMD_CM_LISTENERS; i++)
		if (listeners[i].id != NULL)
			printf("cm: %s listening on %s\n",
			       listeners[i].port->name,
			       addr_str(rdma_get_local_addr(listeners[i].id),
					a, sizeof(a)));
	for (i = 0; i < PMD_MAX_QPS; i++) {
		struct pmd_qp *q = &pmd_qps[i];

		if (!q->used || q->cm_id == NULL)
			continue;
		printf("cm: qp %u on %s: %s %s %s, %s\n", q->id, q->port->name,
		       addr_str(rdma_get_local_addr(q->cm_id), a, sizeof(a)),
		       q->cm_accepted ? "from" : "to",
		       addr_str(rdma_get_peer_addr(q->cm_id), b, sizeof(b)),
		       q->connected ? "established" : "connecting");
	}
	counter("ids", s.ids);
	counter("listeners", s.listeners);
	counter("events_queued", s.events_queued);
	counter("conns", s.conns);
	for (i = 0; i < DROCE_CM_STATES; i++)
		counter_lower("conns_", droce_cm_conn_state_name(i),
			      s.conns_by_state[i]);
	counter("mads_sent", s.mads_sent);
	counter("mads_received", s.mads_received);
	counter("mads_resent", s.mads_resent);
	counter("mads_dropped", s.mads_dropped);
	counter("dup_received", s.dup_received);
	counter("send_failed", s.send_failed);
	counter("listen_overflow", s.listen_overflow);
	rej_counters("rej_sent_", s.rej_sent);
	rej_counters("rej_received_", s.rej_received);
}

void
pmd_cm_fini(void)
{
	unsigned int i;

	for (i = 0; i < PMD_CM_LISTENERS; i++)
		if (listeners[i].id != NULL)
			stop_listeners(listeners[i].port, -1);
	if (channel != NULL)
		rdma_destroy_event_channel(channel);
	channel = NULL;
}
