/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The connection manager through the rdma_cm API, on the embedded
 * default (droce0 10.0.0.1 and droce1 10.0.0.2, back to back): a server
 * listens on droce1's address, a client on droce0 connects, and what
 * the CM negotiated is proven by traffic on the connected QPs. Rejects
 * (by the consumer, for an unknown service, by a full backlog), the
 * event channel's fd in non-blocking mode, the synchronous endpoint
 * calls, and disconnection from either side.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include <droce.h>

#include "droce_cm.h"
#include "droce_cma_pvt.h"
#include "droce_neigh.h"
#include "droce_verbs_pvt.h"
#include "cm_util.h"
#include "harness.h"

/* A connection both sides see as established, with private data both
 * ways; SEND, WRITE and READ prove the QPs were brought up as agreed. */
static void
test_cm_connect_rc(void **state)
{
	struct side srv = {0}, cli = {0};
	struct rdma_conn_param cp = {0};
	struct rdma_cm_event *ev;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_recv_wr rw = {0}, *rbad;
	struct ibv_wc wc;
	uint16_t port;

	(void)state;
	port = listen_on(&srv, 8);
	client_to(&cli, port);
	qp_on(&cli, cli.id);
	cp.private_data = "from the client";
	cp.private_data_len = 16;
	cp.responder_resources = 4;
	cp.initiator_depth = 2;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	assert_int_equal(rdma_connect(cli.id, &cp), 0);

	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	assert_ptr_equal(ev->listen_id, srv.listen);
	assert_ptr_equal(ev->id->context, &srv);
	assert_int_equal(ev->param.conn.private_data_len, 56);
	assert_string_equal(ev->param.conn.private_data, "from the client");
	assert_int_equal(ev->param.conn.qp_num, cli.id->qp->qp_num);
	/* the listener's view: it may ask 2 READs, answer 4 */
	assert_int_equal(ev->param.conn.responder_resources, 2);
	assert_int_equal(ev->param.conn.initiator_depth, 4);
	assert_int_equal(ev->param.conn.retry_count, 7);
	srv.id = ev->id;
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_get_peer_addr(srv.id)->sa_family, AF_INET);
	assert_int_equal(((struct sockaddr_in *)rdma_get_peer_addr(srv.id))->
			 sin_addr.s_addr, inet_addr(client_ip));
	assert_int_equal(rdma_get_dst_port(srv.id),
			 rdma_get_src_port(cli.id));
	qp_on(&srv, srv.id);

	sge.addr = (uintptr_t)srv.buf;
	sge.length = 64;
	sge.lkey = srv.mr->lkey;
	rw.sg_list = &sge;
	rw.num_sge = 1;
	assert_int_equal(ibv_post_recv(srv.id->qp, &rw, &rbad), 0);

	memset(&cp, 0, sizeof(cp));
	cp.private_data = "from the server";
	cp.private_data_len = 16;
	cp.responder_resources = 2;
	cp.initiator_depth = 4;
	cp.rnr_retry_count = 7;
	assert_int_equal(rdma_accept(srv.id, &cp), 0);
	ev = expect(cli.ch, RDMA_CM_EVENT_ESTABLISHED);
	assert_non_null(ev);
	assert_string_equal(ev->param.conn.private_data, "from the server");
	assert_int_equal(ev->param.conn.qp_num, srv.id->qp->qp_num);
	rdma_ack_cm_event(ev);
	expect_ack(srv.ch, RDMA_CM_EVENT_ESTABLISHED);

	/* SEND, client to server */
	strcpy(cli.buf, "a message over the CM's QPs");
	sge.addr = (uintptr_t)cli.buf;
	sge.length = 64;
	sge.lkey = cli.mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	assert_int_equal(ibv_post_send(cli.id->qp, &wr, &bad), 0);
	assert_int_equal(poll_one(cli.id->send_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(poll_one(srv.id->recv_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(srv.buf, "a message over the CM's QPs");

	/* READ, server from client: the client answers READs */
	sge.addr = (uintptr_t)srv.buf + 1024;
	sge.lkey = srv.mr->lkey;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)cli.buf;
	wr.wr.rdma.rkey = cli.mr->rkey;
	assert_int_equal(ibv_post_send(srv.id->qp, &wr, &bad), 0);
	assert_int_equal(poll_one(srv.id->send_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(srv.buf + 1024, "a message over the CM's QPs");

	/* the client disconnects: both sides hear of it */
	assert_int_equal(rdma_disconnect(cli.id), 0);
	expect_ack(srv.ch, RDMA_CM_EVENT_DISCONNECTED);
	expect_ack(cli.ch, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(rdma_disconnect(srv.id), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	side_free(&cli);
	side_free(&srv);
}

/* The consumer's reject reaches the client with its private data. */
static void
test_cm_reject(void **state)
{
	struct side srv = {0}, cli = {0};
	struct rdma_cm_event *ev;
	uint16_t port;

	(void)state;
	port = listen_on(&srv, 8);
	client_to(&cli, port);
	cm_request(&cli, &srv, NULL);
	assert_int_equal(rdma_reject(srv.id, "no thanks", 10), 0);
	ev = expect(cli.ch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	assert_int_equal(ev->status, 28);       /* consumer defined */
	assert_string_equal(ev->param.conn.private_data, "no thanks");
	rdma_ack_cm_event(ev);
	/* a second answer to the same request is refused */
	assert_int_equal(rdma_accept(srv.id, NULL), -1);
	assert_int_equal(errno, EINVAL);
	side_free(&cli);
	side_free(&srv);
}

/* No listener on the port: REJ "invalid service ID". */
static void
test_cm_no_listener(void **state)
{
	struct side srv = {0}, cli = {0};
	struct rdma_cm_event *ev;
	uint16_t port;

	(void)state;
	port = listen_on(&srv, 8);
	client_to(&cli, (uint16_t)(port + 1 == 0 ? 1 : port + 1));
	qp_on(&cli, cli.id);
	assert_int_equal(rdma_connect(cli.id, NULL), 0);
	ev = expect(cli.ch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	assert_int_equal(ev->status, 8);
	rdma_ack_cm_event(ev);
	side_free(&cli);
	side_free(&srv);
}

/* A backlog of 1: the second request is refused while the first waits;
 * once the first is answered, a third is taken. */
static void
test_cm_backlog(void **state)
{
	struct side srv = {0}, c1 = {0}, c2 = {0}, c3 = {0};
	struct rdma_cm_event *ev;
	uint16_t port;

	(void)state;
	port = listen_on(&srv, 1);
	client_to(&c1, port);
	client_to(&c2, port);
	client_to(&c3, port);
	qp_on(&c1, c1.id);
	qp_on(&c2, c2.id);
	qp_on(&c3, c3.id);
	assert_int_equal(rdma_connect(c1.id, NULL), 0);
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	srv.id = ev->id;
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_connect(c2.id, NULL), 0);
	ev = expect(c2.ch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	assert_int_equal(ev->status, 28);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_reject(srv.id, NULL, 0), 0);
	expect_ack(c1.ch, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(rdma_destroy_id(srv.id), 0);
	srv.id = NULL;
	assert_int_equal(rdma_connect(c3.id, NULL), 0);
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	rdma_ack_cm_event(ev);
	side_free(&c1);
	side_free(&c2);
	side_free(&c3);
	side_free(&srv);
}

/* The channel's fd: O_NONBLOCK gives EAGAIN when nothing waits; poll
 * says readable exactly while an event waits. */
static void
test_cm_channel_fd(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct pollfd p;
	struct sockaddr_in a = addr4(server_ip, 0), src = addr4(client_ip, 0);

	(void)state;
	assert_non_null(ch);
	assert_int_equal(fcntl(ch->fd, F_SETFL,
			       fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	p.fd = ch->fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(rdma_resolve_addr(id, (struct sockaddr *)&src,
					   (struct sockaddr *)&a, 1000), 0);
	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(poll(&p, 1, 0), 0);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	/* routes need a resolved address; an unknown family is refused */
	assert_int_equal(rdma_destroy_id(id), 0);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_route(id, 1000), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rdma_create_id(ch, &id, NULL, 0x4242), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	rdma_destroy_event_channel(ch);
}

/* The synchronous endpoint calls: rdma_create_ep, rdma_get_request,
 * rdma_accept and rdma_connect waiting for their own events, and the
 * rdma_verbs.h helpers on the QPs they made. */
struct ep_server {
	struct rdma_cm_id *listen;
	char msg[64];
	int ret;
};

static void *
ep_server_run(void *arg)
{
	struct ep_server *s = arg;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	s->ret = -1;
	if (rdma_get_request(s->listen, &id) != 0)
		return NULL;
	mr = rdma_reg_msgs(id, s->msg, sizeof(s->msg));
	if (mr == NULL ||
	    rdma_post_recv(id, NULL, s->msg, sizeof(s->msg), mr) != 0 ||
	    rdma_accept(id, NULL) != 0 ||
	    rdma_get_recv_comp(id, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
		return NULL;
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	s->ret = 0;
	return NULL;
}

static void
test_cm_endpoint(void **state)
{
	struct rdma_addrinfo hints = {0}, *res;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ep_server s = {0};
	struct sockaddr_in src = addr4(client_ip, 0);
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	pthread_t t;
	char port[8], msg[64] = "through rdma_post_send";

	(void)state;
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	assert_int_equal(rdma_getaddrinfo(server_ip, "0", &hints, &res), 0);
	assert_non_null(res->ai_src_addr);
	assert_int_equal(rdma_create_ep(&s.listen, res, NULL, &qa), 0);
	rdma_freeaddrinfo(res);
	assert_int_equal(rdma_listen(s.listen, 4), 0);
	snprintf(port, sizeof(port), "%u",
		 ntohs(rdma_get_src_port(s.listen)));
	assert_int_equal(pthread_create(&t, NULL, ep_server_run, &s), 0);

	/* from the client's device (the hints' source is the answer's) */
	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	assert_int_equal(rdma_getaddrinfo(server_ip, port, &hints, &res), 0);
	assert_non_null(res->ai_dst_addr);
	assert_non_null(res->ai_src_addr);
	assert_int_equal(rdma_create_ep(&id, res, NULL, &qa), 0);
	rdma_freeaddrinfo(res);
	if (rdma_connect(id, NULL) != 0)
		fail_msg("rdma_connect: %s", strerror(errno));
	mr = rdma_reg_msgs(id, msg, sizeof(msg));
	assert_non_null(mr);
	assert_int_equal(rdma_post_send(id, NULL, msg, sizeof(msg), mr,
					IBV_SEND_SIGNALED), 0);
	assert_int_equal(rdma_get_send_comp(id, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	pthread_join(t, NULL);
	assert_int_equal(s.ret, 0);
	assert_string_equal(s.msg, "through rdma_post_send");
	rdma_dereg_mr(mr);
	rdma_disconnect(id);
	rdma_destroy_ep(id);
	rdma_destroy_ep(s.listen);
}

/* Addresses droce has no device for, or no peer answers at. */
static void
test_cm_addr_errors(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct sockaddr_in a = addr4("10.9.9.9", 1);
	struct sockaddr_in6 six = { .sin6_family = AF_INET6 };
	struct rdma_cm_event *ev;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&a), -1);
	assert_int_equal(errno, EADDRNOTAVAIL);
	/* nobody has 10.0.0.77: ARP gets no answer */
	a = addr4("10.0.0.77", 1);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&a,
					   500), 0);
	ev = expect(ch, RDMA_CM_EVENT_ADDR_ERROR);
	assert_non_null(ev);
	assert_true(ev->status < 0);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_destroy_id(id), 0);
	/* a family without a device address */
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	six.sin6_addr.s6_addr[15] = 9;
	six.sin6_addr.s6_addr[0] = 0xfd;
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&six), -1);
	assert_int_equal(errno, EADDRNOTAVAIL);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

/* A route asked for while the device's port is down: ROUTE_ERROR, and the
 * id may ask again once the port is up. */
static void
test_cm_route_error(void **state)
{
	struct side cli = {0};
	struct sockaddr_in a = addr4(server_ip, 4791);
	struct sockaddr_in src = addr4(client_ip, 0);
	struct ibv_port_attr pa;
	struct rdma_cm_event *ev;
	uint64_t end;

	(void)state;
	cli.ch = rdma_create_event_channel();
	assert_non_null(cli.ch);
	assert_int_equal(rdma_create_id(cli.ch, &cli.id, NULL, RDMA_PS_TCP),
			 0);
	assert_int_equal(rdma_resolve_addr(cli.id, (struct sockaddr *)&src,
					   (struct sockaddr *)&a, 2000), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(droce_port_stop(cli.id->verbs), 0);
	assert_int_equal(rdma_resolve_route(cli.id, 2000), 0);
	ev = expect(cli.ch, RDMA_CM_EVENT_ROUTE_ERROR);
	assert_non_null(ev);
	assert_int_equal(ev->status, -ENETUNREACH);
	rdma_ack_cm_event(ev);
	assert_int_equal(droce_port_start(cli.id->verbs), 0);
	end = ep_now_ms() + WAIT_MS;
	do {
		assert_int_equal(ibv_query_port(cli.id->verbs, 1, &pa), 0);
		if (pa.state == IBV_PORT_ACTIVE)
			break;
		usleep(10000);
	} while (ep_now_ms() < end);
	assert_int_equal(pa.state, IBV_PORT_ACTIVE);
	assert_int_equal(rdma_resolve_route(cli.id, 2000), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	side_free(&cli);
}

/* ------------------------------------------------------------------------
 * Addresses as rdma-core's librdmacm and Linux's rdma_cm take them.
 */

/* The name of the device @p id is on ("" if none). */
static const char *
dev_of(const struct rdma_cm_id *id)
{
	return id->verbs != NULL ? ibv_get_device_name(id->verbs->device) :
		"";
}

/* @p gid is address @p ip's (IPv4). */
static void
assert_gid_is(const union ibv_gid *gid, const char *ip)
{
	struct sockaddr_in a = addr4(ip, 0);
	union ibv_gid want;

	droce_cma_addr_to_gid((struct sockaddr *)&a, &want);
	assert_memory_equal(gid, &want, sizeof(want));
}

/* @p sa is IPv4 address @p ip (any port if @p port is 0). */
static void
assert_addr_is(const struct sockaddr *sa, const char *ip, uint16_t port)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

	assert_int_equal(sa->sa_family, AF_INET);
	assert_int_equal(in->sin_addr.s_addr, inet_addr(ip));
	if (port != 0)
		assert_int_equal(ntohs(in->sin_port), port);
	else
		assert_int_not_equal(in->sin_port, 0);
}

/*
 * rdma_bind_addr of a loopback address (libfabric's verbs provider binds
 * localhost to find its device): no EADDRNOTAVAIL, but the first device
 * whose port is active, droce0, as Linux's rdma_cm takes it for
 * loopback; the id's local address is that device's, with the port
 * asked for or a free one, for any address of 127.0.0.0/8. A listener
 * so bound takes a connection to droce0's address, which droce1 makes
 * over the wire.
 */
static void
test_cm_bind_loopback(void **state)
{
	struct side srv = {0}, cli = {0};
	struct sockaddr_in lo = addr4("127.0.0.1", 0);
	struct rdma_cm_id *id;
	uint16_t port;

	(void)state;
	srv.ch = rdma_create_event_channel();
	assert_non_null(srv.ch);
	assert_int_equal(rdma_create_id(srv.ch, &srv.listen, &srv,
					RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(srv.listen, (struct sockaddr *)&lo),
			 0);
	assert_string_equal(dev_of(srv.listen), "droce0");
	assert_int_equal(srv.listen->port_num, 1);
	assert_addr_is(rdma_get_local_addr(srv.listen), client_ip, 0);
	assert_gid_is(&srv.listen->route.addr.addr.ibaddr.sgid, client_ip);
	assert_int_equal(rdma_listen(srv.listen, 4), 0);
	port = ntohs(rdma_get_src_port(srv.listen));

	/* another loopback address, a port asked for */
	assert_int_equal(rdma_create_id(srv.ch, &id, NULL, RDMA_PS_TCP), 0);
	lo = addr4("127.1.2.3", (uint16_t)(port == 7471 ? 7472 : 7471));
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&lo), 0);
	assert_string_equal(dev_of(id), "droce0");
	assert_addr_is(rdma_get_local_addr(id), client_ip,
		       ntohs(lo.sin_port));
	assert_int_equal(rdma_destroy_id(id), 0);

	/* droce1 connects to droce0's address and port */
	client_from_to(&cli, server_ip, client_ip, port);
	assert_string_equal(dev_of(cli.id), "droce1");
	cm_request(&cli, &srv, NULL);
	assert_ptr_equal(srv.id->context, &srv);
	assert_addr_is(rdma_get_peer_addr(srv.id), server_ip, 0);
	assert_string_equal(dev_of(srv.id), "droce0");
	cm_establish(&cli, &srv, NULL);
	send_checked(&cli, &srv, "to localhost's device");
	assert_int_equal(rdma_disconnect(cli.id), 0);
	expect_ack(srv.ch, RDMA_CM_EVENT_DISCONNECTED);
	expect_ack(cli.ch, RDMA_CM_EVENT_DISCONNECTED);
	side_free(&cli);
	side_free(&srv);
}

/*
 * rdma_resolve_addr from an id bound to no device, to a device's own
 * address: as Linux routes a local address, through that device, from
 * that address to itself (the engine loops its frames back inside it),
 * with no neighbour to ask; and to 127.0.0.1, through the device
 * loopback stands for, droce0, from and to its address. An id bound to
 * droce0's address still goes to droce1's over the wire.
 */
static void
test_cm_resolve_own(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = addr4(server_ip, 4791);
	struct sockaddr_in lo = addr4("127.0.0.1", 4791);
	struct sockaddr_in src = addr4(client_ip, 0);
	struct rdma_cm_id *id;
	struct rdma_addr *ra;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
					   2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ra = &id->route.addr;
	assert_string_equal(dev_of(id), "droce1");
	assert_gid_is(&ra->addr.ibaddr.sgid, server_ip);
	assert_gid_is(&ra->addr.ibaddr.dgid, server_ip);
	assert_addr_is(rdma_get_local_addr(id), server_ip, 0);
	assert_addr_is(rdma_get_peer_addr(id), server_ip, 4791);
	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(id->route.num_paths, 1);
	assert_gid_is(&id->route.path_rec->sgid, server_ip);
	assert_gid_is(&id->route.path_rec->dgid, server_ip);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* loopback: droce0 to itself; the peer's address as given */
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&lo,
					   2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ra = &id->route.addr;
	assert_string_equal(dev_of(id), "droce0");
	assert_gid_is(&ra->addr.ibaddr.sgid, client_ip);
	assert_gid_is(&ra->addr.ibaddr.dgid, client_ip);
	assert_addr_is(rdma_get_local_addr(id), client_ip, 0);
	assert_addr_is(rdma_get_peer_addr(id), "127.0.0.1", 4791);
	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* bound to droce0's address: to droce1 over the wire */
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, (struct sockaddr *)&src,
					   (struct sockaddr *)&dst, 2000), 0);
	expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ra = &id->route.addr;
	assert_string_equal(dev_of(id), "droce0");
	assert_gid_is(&ra->addr.ibaddr.sgid, client_ip);
	assert_gid_is(&ra->addr.ibaddr.dgid, server_ip);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

/*
 * A connection to the device's own address, as on any RoCE NIC: the
 * client, bound to nothing, resolves droce1's address and goes through
 * droce1 itself; the CM's MADs and the QPs' packets loop back inside it,
 * a SEND and a READ complete, both sides hear the disconnection, and
 * droce0 at the wire's other end receives nothing all along.
 */
static void
test_cm_connect_self(void **state)
{
	struct sockaddr_in dst;
	struct side srv = {0}, cli = {0};
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_recv_wr rw = {0}, *rbad;
	struct droce_counters c0, c1;
	struct ibv_context *d0;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint16_t port;

	(void)state;
	d0 = ep_open_device(0);
	assert_non_null(d0);
	assert_int_equal(droce_query_counters(d0, &c0), 0);
	port = listen_on(&srv, 8);
	dst = addr4(server_ip, port);
	cli.ch = rdma_create_event_channel();
	assert_non_null(cli.ch);
	assert_int_equal(rdma_create_id(cli.ch, &cli.id, &cli, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(cli.id, NULL,
					   (struct sockaddr *)&dst, 2000), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_string_equal(dev_of(cli.id), "droce1");
	assert_int_equal(rdma_resolve_route(cli.id, 2000), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	cm_request(&cli, &srv, NULL);
	assert_addr_is(rdma_get_peer_addr(srv.id), server_ip,
		       ntohs(rdma_get_src_port(cli.id)));
	cm_establish(&cli, &srv, NULL);

	strcpy(cli.buf, "to myself");
	sge.addr = (uintptr_t)srv.buf;
	sge.length = 64;
	sge.lkey = srv.mr->lkey;
	rw.sg_list = &sge;
	rw.num_sge = 1;
	assert_int_equal(ibv_post_recv(srv.id->qp, &rw, &rbad), 0);
	sge.addr = (uintptr_t)cli.buf;
	sge.lkey = cli.mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	assert_int_equal(ibv_post_send(cli.id->qp, &wr, &bad), 0);
	assert_int_equal(poll_one(cli.id->send_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(poll_one(srv.id->recv_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(srv.buf, "to myself");
	sge.addr = (uintptr_t)srv.buf + 1024;
	sge.lkey = srv.mr->lkey;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)cli.buf;
	wr.wr.rdma.rkey = cli.mr->rkey;
	assert_int_equal(ibv_post_send(srv.id->qp, &wr, &bad), 0);
	assert_int_equal(poll_one(srv.id->send_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(srv.buf + 1024, "to myself");

	assert_int_equal(rdma_disconnect(cli.id), 0);
	expect_ack(srv.ch, RDMA_CM_EVENT_DISCONNECTED);
	expect_ack(cli.ch, RDMA_CM_EVENT_DISCONNECTED);
	side_free(&cli);
	side_free(&srv);
	assert_int_equal(droce_query_counters(d0, &c1), 0);
	assert_int_equal(c1.rx_frames, c0.rx_frames);
	assert_int_equal(ibv_close_device(d0), 0);
}

/*
 * rdma_getaddrinfo with neither node nor service: as rdma-core's, the
 * hints are the answer (libfabric's verbs provider asks so for the
 * addresses it already has): their flags, family, QP type, port space,
 * destination and source, copied; without addresses, the same fields
 * and none; without hints either, EINVAL. And an active endpoint made
 * from such an answer goes from its source's device.
 */
static void
test_cm_getaddrinfo_hints(void **state)
{
	struct sockaddr_in dst = addr4(server_ip, 7471);
	struct sockaddr_in src = addr4(client_ip, 0);
	struct rdma_addrinfo hints = {0}, *res;
	struct rdma_cm_id *id;

	(void)state;
	hints.ai_family = AF_INET;
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_dst_addr = (struct sockaddr *)&dst;
	hints.ai_dst_len = sizeof(dst);
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
	assert_int_equal(res->ai_flags, 0);
	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(res->ai_dst_len, sizeof(dst));
	assert_memory_equal(res->ai_dst_addr, &dst, sizeof(dst));
	assert_int_equal(res->ai_src_len, sizeof(src));
	assert_memory_equal(res->ai_src_addr, &src, sizeof(src));
	assert_null(res->ai_next);
	/* as libfabric's endpoints use it: resolved from droce0 */
	assert_int_equal(rdma_create_ep(&id, res, NULL, NULL), 0);
	assert_string_equal(dev_of(id), "droce0");
	assert_gid_is(&id->route.addr.addr.ibaddr.dgid, server_ip);
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);

	/* passive, the source alone */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_src_addr = (struct sockaddr *)&dst;
	hints.ai_src_len = sizeof(dst);
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
	assert_int_equal(res->ai_flags, RAI_PASSIVE);
	assert_null(res->ai_dst_addr);
	assert_int_equal(res->ai_dst_len, 0);
	assert_memory_equal(res->ai_src_addr, &dst, sizeof(dst));
	rdma_freeaddrinfo(res);

	/* no address at all: the hints' fields alone */
	memset(&hints, 0, sizeof(hints));
	hints.ai_qp_type = IBV_QPT_UD;
	hints.ai_port_space = RDMA_PS_UDP;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
	assert_int_equal(res->ai_qp_type, IBV_QPT_UD);
	assert_int_equal(res->ai_port_space, RDMA_PS_UDP);
	assert_null(res->ai_src_addr);
	assert_null(res->ai_dst_addr);
	rdma_freeaddrinfo(res);

	/* and nothing to go by */
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	assert_int_equal(errno, EINVAL);
}

/* ------------------------------------------------------------------------
 * Bad input: MADs a stranger or a broken peer could send, given to the
 * CM of droce1 as its GSI hands them over, from droce0's address.
 */

/* The GID of IPv4 address @p ip. */
static union ibv_gid
gid_of(const char *ip)
{
	struct sockaddr_in a = addr4(ip, 0);
	union ibv_gid g;

	droce_cma_addr_to_gid((struct sockaddr *)&a, &g);
	return g;
}

/*
 * @p mad from @p from, as droce1's GSI hands it to its CM; with @p mac,
 * from that MAC, as the engine notes a datagram's (a MAD in a frame
 * comes with the address its answer goes to).
 */
static void
inject_from(const char *from, const struct rte_ether_addr *mac,
	    const uint8_t *mad, size_t len)
{
	union ibv_gid srv = gid_of(server_ip), src = gid_of(from);
	struct cm_dev *dev;
	int index = 0;

	pthread_mutex_lock(&droce_cm.lock);
	dev = droce_cm_dev_by_gid(&srv, &index);
	assert_non_null(dev);
	if (mac != NULL)
		droce_neigh_heard(to_ctx(dev->ctx)->dev, src.raw, mac);
	droce_cm_rx(dev, &src, (uint8_t)index, mad, len);
	pthread_mutex_unlock(&droce_cm.lock);
}

static void
inject(const uint8_t *mad, size_t len)
{
	inject_from(client_ip, NULL, mad, len);
}

static void
inject_msg(const struct droce_cm_msg *m)
{
	uint8_t mad[DROCE_MAD_LEN];

	assert_int_equal(droce_cm_mad_build(m, mad), DROCE_MAD_LEN);
	inject(mad, sizeof(mad));
}

static void
msg_init(struct droce_cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	droce_cm_mad_hdr_init(&m->hdr, attr, 0x1234);
}

/* No event on @p ch within @p ms. */
static void
expect_none(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, ms), 0);
}

/*
 * A REQ from a peer that then says nothing, its RTU never sent (an
 * address on the client's subnet that nobody has): the server, having
 * accepted, sends its REP (to the MAC the REQ came from) again
 * max_cm_retries times as the REQ asks,
 * each after the peer's response timeout and two packet lifetimes, then
 * gives up as the IBTA asks: a REJ "timeout", and to the application
 * RDMA_CM_EVENT_CONNECT_ERROR with -ETIMEDOUT, librdmacm's event for a
 * passive side whose REP went unanswered.
 */
#define NOBODY_IP_HOST 77

static void
test_cm_rep_timeout(void **state)
{
	struct side srv = {0}, cli = {0};
	struct droce_cm_stats s0, s1;
	struct rdma_cm_event *ev;
	uint8_t mad[DROCE_MAD_LEN];
	struct droce_cm_msg m;
	union ibv_gid nobody;
	uint64_t t0, wait_ms;
	/* a MAC nobody on the ring has: what goes to it is lost */
	const struct rte_ether_addr nobody_mac = {
		.addr_bytes = { 0x02, 0, 0, 0, 0, NOBODY_IP_HOST },
	};
	char nobody_ip[INET_ADDRSTRLEN];
	struct in_addr in;
	uint16_t port;

	(void)state;
	/* a REQ as the client's, then taken back: its copy is forged */
	port = listen_on(&srv, 8);
	client_to(&cli, port);
	cm_request(&cli, &srv, NULL);
	msg_init(&m, DROCE_CM_ATTR_REQ);
	m.req = cm_id_of(srv.id)->req;
	assert_int_equal(rdma_reject(srv.id, NULL, 0), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_REJECTED);
	assert_int_equal(rdma_destroy_id(srv.id), 0);
	srv.id = NULL;

	in.s_addr = inet_addr(client_ip);
	((uint8_t *)&in.s_addr)[3] = NOBODY_IP_HOST;
	assert_non_null(inet_ntop(AF_INET, &in, nobody_ip, sizeof(nobody_ip)));
	nobody = gid_of(nobody_ip);
	m.req.local_comm_id = 0x5a5a5a5a;
	memcpy(m.req.primary.local_gid, nobody.raw, 16);
	/* one REP again, each after 2 x 33.6 ms + 1.0 ms (4.096 us x 2^13
	 * twice, x 2^8) */
	m.req.max_cm_retries = 1;
	m.req.local_cm_response_timeout = 8;
	wait_ms = 2 * 33 + 1;
	assert_int_equal(droce_cm_mad_build(&m, mad), DROCE_MAD_LEN);
	s0 = cm_stats();
	inject_from(nobody_ip, &nobody_mac, mad, sizeof(mad));
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	srv.id = ev->id;
	rdma_ack_cm_event(ev);
	qp_on(&srv, srv.id);
	t0 = ep_now_ms();
	assert_int_equal(rdma_accept(srv.id, NULL), 0);
	ev = expect(srv.ch, RDMA_CM_EVENT_CONNECT_ERROR);
	assert_non_null(ev);
	assert_int_equal(ev->status, -ETIMEDOUT);
	rdma_ack_cm_event(ev);
	/* not before the two waits */
	assert_true(ep_now_ms() - t0 >= 2 * wait_ms);
	s1 = cm_stats();
	assert_int_equal(s1.mads_resent - s0.mads_resent, 1);
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_TIMEOUT] -
			 s0.rej_sent[DROCE_CM_REJ_TIMEOUT], 1);
	/* nothing more for either side */
	expect_none(srv.ch, 200);
	expect_none(cli.ch, 0);
	side_free(&srv);
	side_free(&cli);
}

/*
 * With a connection up: truncated MADs, another class, another version,
 * an attribute the CM has not, a REP for no REQ, an RTU of no
 * connection, a DREQ from a stranger, a REQ naming the connected QPN,
 * the connection's own REQ again: each is counted and dropped or
 * answered as the spec says (the answers, to droce0's CM, which knows
 * none of those connections, are dropped there), and the connection
 * carries on. Once it is
 * disconnected, a REQ naming its QPN in TimeWait is refused as stale.
 */
static void
test_cm_bad_input(void **state)
{
	struct side srv = {0}, cli = {0};
	struct droce_cm_stats s0, s1;
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_LEN];
	struct droce_cm_req live;
	uint64_t deadline;
	uint16_t port;

	(void)state;
	port = listen_on(&srv, 8);
	client_to(&cli, port);
	cm_request(&cli, &srv, NULL);
	live = cm_id_of(srv.id)->req;
	cm_establish(&cli, &srv, NULL);

	s0 = cm_stats();
	/* malformed: short, another class, base version, class version,
	 * method, an unknown attribute */
	msg_init(&m, DROCE_CM_ATTR_REQ);
	m.req = live;
	assert_int_equal(droce_cm_mad_build(&m, mad), DROCE_MAD_LEN);
	inject(mad, 100);
	mad[1] = 0x04;
	inject(mad, sizeof(mad));
	mad[1] = 0x07;
	mad[0] = 2;
	inject(mad, sizeof(mad));
	mad[0] = 1;
	mad[2] = 1;
	inject(mad, sizeof(mad));
	mad[2] = 2;
	mad[3] = 0x05;
	inject(mad, sizeof(mad));
	mad[3] = 0x03;
	mad[16] = 0;
	mad[17] = 0x42;
	inject(mad, sizeof(mad));
	s1 = cm_stats();
	assert_int_equal(s1.mads_dropped - s0.mads_dropped, 6);

	/* a REP for no REQ of ours: REJ "invalid communication ID" */
	msg_init(&m, DROCE_CM_ATTR_REP);
	m.rep.local_comm_id = 0x11111111;
	m.rep.remote_comm_id = 0x22222222;
	inject_msg(&m);
	/* an RTU of no connection: dropped */
	msg_init(&m, DROCE_CM_ATTR_RTU);
	m.rtu.local_comm_id = 0x33333333;
	m.rtu.remote_comm_id = 0x44444444;
	inject_msg(&m);
	/* a DREQ from a stranger: a DREP, nothing else */
	msg_init(&m, DROCE_CM_ATTR_DREQ);
	m.dreq.local_comm_id = 0x55555555;
	m.dreq.remote_comm_id = 0x66666666;
	m.dreq.remote_qpn = srv.id->qp->qp_num;
	inject_msg(&m);
	/* a new REQ naming the connected QPN: stale */
	msg_init(&m, DROCE_CM_ATTR_REQ);
	m.req = live;
	m.req.local_comm_id = 0x77777777;
	inject_msg(&m);
	/* the live connection's REQ again: nothing (it is established) */
	msg_init(&m, DROCE_CM_ATTR_REQ);
	m.req = live;
	inject_msg(&m);
	/* the three answers (two REJs, a DREP) go to droce0's CM, which
	 * has none of those connections either and drops them in turn */
	for (deadline = ep_now_ms() + 2000; ep_now_ms() < deadline;) {
		s1 = cm_stats();
		if (s1.mads_dropped - s0.mads_dropped >= 6 + 3 + 3)
			break;
		usleep(1000);
	}
	s1 = cm_stats();
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_INVALID_COMM_ID] -
			 s0.rej_sent[DROCE_CM_REJ_INVALID_COMM_ID], 1);
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_STALE_CONN] -
			 s0.rej_sent[DROCE_CM_REJ_STALE_CONN], 1);
	assert_int_equal(s1.mads_dropped - s0.mads_dropped, 6 + 3 + 3);
	/* no request reported, nobody disconnected, one connection each */
	expect_none(srv.ch, 300);
	expect_none(cli.ch, 0);
	assert_int_equal(s1.conns_by_state[DROCE_CM_STATE_ESTABLISHED],
			 s0.conns_by_state[DROCE_CM_STATE_ESTABLISHED]);

	/* the connection still works */
	send_checked(&cli, &srv, "still connected");

	/* disconnected: the QPN is in TimeWait, a REQ naming it is stale */
	assert_int_equal(rdma_disconnect(cli.id), 0);
	expect_ack(srv.ch, RDMA_CM_EVENT_DISCONNECTED);
	expect_ack(cli.ch, RDMA_CM_EVENT_DISCONNECTED);
	s0 = cm_stats();
	msg_init(&m, DROCE_CM_ATTR_REQ);
	m.req = live;
	m.req.local_comm_id = 0x88888888;
	inject_msg(&m);
	s1 = cm_stats();
	assert_int_equal(s1.rej_sent[DROCE_CM_REJ_STALE_CONN] -
			 s0.rej_sent[DROCE_CM_REJ_STALE_CONN], 1);
	expect_none(srv.ch, 100);
	side_free(&cli);
	side_free(&srv);
}

/* ------------------------------------------------------------------------
 * Under loss (test_cm WORKDIR FAULT): both ports behind net_fault.
 */

#define LOSSY_CONNS 40

struct lossy {
	struct rdma_event_channel *cch, *sch;
	struct rdma_cm_id *listen;
	struct rdma_cm_id *cli[LOSSY_CONNS];
	struct rdma_cm_id *srv[LOSSY_CONNS];
	unsigned int nsrv;
	unsigned int established[2], failed[2], disconnected[2];
};

static void
lossy_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	assert_int_equal(rdma_create_qp(id, NULL, &qa), 0);
}

/* One event of either channel, handled; false if none came in time. */
static bool
lossy_pump(struct lossy *l, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = l->cch->fd, .events = POLLIN },
		{ .fd = l->sch->fd, .events = POLLIN },
	};
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	int side;

	if (poll(p, 2, timeout_ms) <= 0)
		return false;
	side = (p[0].revents & POLLIN) ? 0 : 1;
	assert_int_equal(rdma_get_cm_event(side == 0 ? l->cch : l->sch, &ev),
			 0);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		assert_int_equal(rdma_resolve_route(ev->id, 2000), 0);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		lossy_qp(ev->id);
		assert_int_equal(rdma_connect(ev->id, &cp), 0);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		assert_true(l->nsrv < LOSSY_CONNS);
		l->srv[l->nsrv++] = ev->id;
		lossy_qp(ev->id);
		assert_int_equal(rdma_accept(ev->id, &cp), 0);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		l->established[side]++;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		l->disconnected[side]++;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		print_message("side %d: %s status %d\n", side,
			      rdma_event_str(ev->event), ev->status);
		l->failed[side]++;
		break;
	}
	rdma_ack_cm_event(ev);
	return true;
}

/*
 * Forty connections made at once, then torn down, with the MADs (and
 * the rest) lost, duplicated or reordered: each connect ends in an
 * event, every one established; each disconnect ends in DISCONNECTED on
 * both sides; once the ids are gone and TimeWait is over, the CM holds
 * nothing.
 */
static void
test_cm_lossy(void **state)
{
	struct lossy l = {0};
	struct sockaddr_in a = addr4(server_ip, 0), src = addr4(client_ip, 0);
	struct droce_cm_stats st;
	uint64_t end;
	unsigned int i;

	(void)state;
	l.cch = rdma_create_event_channel();
	l.sch = rdma_create_event_channel();
	assert_non_null(l.cch);
	assert_non_null(l.sch);
	assert_int_equal(rdma_create_id(l.sch, &l.listen, NULL, RDMA_PS_TCP),
			 0);
	assert_int_equal(rdma_bind_addr(l.listen, (struct sockaddr *)&a), 0);
	assert_int_equal(rdma_listen(l.listen, LOSSY_CONNS), 0);
	a.sin_port = rdma_get_src_port(l.listen);
	for (i = 0; i < LOSSY_CONNS; i++) {
		assert_int_equal(rdma_create_id(l.cch, &l.cli[i], NULL,
						RDMA_PS_TCP), 0);
		assert_int_equal(rdma_resolve_addr(l.cli[i],
			(struct sockaddr *)&src, (struct sockaddr *)&a, 2000),
			0);
	}
	end = ep_now_ms() + 60000;
	while ((l.established[0] + l.failed[0] < LOSSY_CONNS ||
		l.established[1] + l.failed[1] < l.nsrv) &&
	       ep_now_ms() < end)
		lossy_pump(&l, 1000);
	assert_int_equal(l.failed[0], 0);
	assert_int_equal(l.failed[1], 0);
	assert_int_equal(l.established[0], LOSSY_CONNS);
	assert_int_equal(l.established[1], LOSSY_CONNS);

	for (i = 0; i < LOSSY_CONNS; i++)
		assert_int_equal(rdma_disconnect(l.cli[i]), 0);
	end = ep_now_ms() + 60000;
	while ((l.disconnected[0] < LOSSY_CONNS ||
		l.disconnected[1] < LOSSY_CONNS) && ep_now_ms() < end)
		lossy_pump(&l, 1000);
	assert_int_equal(l.disconnected[0], LOSSY_CONNS);
	assert_int_equal(l.disconnected[1], LOSSY_CONNS);

	for (i = 0; i < LOSSY_CONNS; i++) {
		rdma_destroy_qp(l.cli[i]);
		rdma_destroy_qp(l.srv[i]);
		assert_int_equal(rdma_destroy_id(l.cli[i]), 0);
		assert_int_equal(rdma_destroy_id(l.srv[i]), 0);
	}
	assert_int_equal(rdma_destroy_id(l.listen), 0);
	rdma_destroy_event_channel(l.cch);
	rdma_destroy_event_channel(l.sch);
	/* no id left, and no connection once TimeWait is over */
	end = ep_now_ms() + 10000;
	do {
		assert_int_equal(droce_cm_query_stats(&st), 0);
		if (st.conns == 0)
			break;
		usleep(10000);
	} while (ep_now_ms() < end);
	assert_int_equal(st.ids, 0);
	assert_int_equal(st.conns, 0);
	assert_int_equal(st.events_queued, 0);
	/* and the loss was there: MADs had to be sent again */
	print_message("MADs sent %llu, sent again %llu, duplicates %llu\n",
		      (unsigned long long)st.mads_sent,
		      (unsigned long long)st.mads_resent,
		      (unsigned long long)st.dup_received);
	assert_true(st.mads_resent > 0);
}

/* Over IPv6 (the lossy configuration gives the devices IPv6 addresses
 * too): the REQ's IP header says so, the peer's address is IPv6, and the
 * QPs carry a SEND. */
static void
test_cm_connect_ipv6(void **state)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	struct sockaddr_in6 src = { .sin6_family = AF_INET6 };
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct side srv = {0}, cli = {0};
	char want[INET6_ADDRSTRLEN], got[INET6_ADDRSTRLEN];
	struct sockaddr_in6 *peer;

	(void)state;
	inet_pton(AF_INET6, "fd00:0:0:7::2", &sa.sin6_addr);
	inet_pton(AF_INET6, "fd00:0:0:7::1", &src.sin6_addr);
	srv.ch = rdma_create_event_channel();
	assert_non_null(srv.ch);
	assert_int_equal(rdma_create_id(srv.ch, &srv.listen, &srv,
					RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(srv.listen, (struct sockaddr *)&sa),
			 0);
	assert_int_equal(rdma_listen(srv.listen, 4), 0);
	sa.sin6_port = rdma_get_src_port(srv.listen);

	cli.ch = rdma_create_event_channel();
	assert_non_null(cli.ch);
	assert_int_equal(rdma_create_id(cli.ch, &cli.id, &cli, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(cli.id, (struct sockaddr *)&src,
					   (struct sockaddr *)&sa, 2000), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(rdma_get_local_addr(cli.id)->sa_family, AF_INET6);
	assert_int_equal(rdma_resolve_route(cli.id, 2000), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	/* (retries: it runs over the lossy link too) */
	cm_request(&cli, &srv, &cp);
	peer = (struct sockaddr_in6 *)rdma_get_peer_addr(srv.id);
	assert_int_equal(peer->sin6_family, AF_INET6);
	inet_ntop(AF_INET6, &peer->sin6_addr, got, sizeof(got));
	snprintf(want, sizeof(want), "fd00:0:0:7::1");
	assert_string_equal(got, want);
	assert_int_equal(rdma_get_dst_port(srv.id), rdma_get_src_port(cli.id));
	cm_establish(&cli, &srv, &cp);
	send_checked(&cli, &srv, "over IPv6");
	assert_int_equal(rdma_disconnect(srv.id), 0);
	expect_ack(cli.ch, RDMA_CM_EVENT_DISCONNECTED);
	expect_ack(srv.ch, RDMA_CM_EVENT_DISCONNECTED);
	side_free(&cli);
	side_free(&srv);
}

/* ::1 (the lossy configuration gives the devices IPv6 addresses): the
 * first active device's IPv6 address that is not link-local, droce0's
 * fd00:0:0:7::1. */
static void
test_cm_bind_loopback6(void **state)
{
	struct sockaddr_in6 lo = { .sin6_family = AF_INET6,
				   .sin6_port = htons(7471),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct rdma_cm_id *id;
	struct sockaddr_in6 *local;
	char got[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&lo), 0);
	assert_string_equal(dev_of(id), "droce0");
	local = (struct sockaddr_in6 *)rdma_get_local_addr(id);
	assert_int_equal(local->sin6_family, AF_INET6);
	assert_int_equal(ntohs(local->sin6_port), 7471);
	inet_ntop(AF_INET6, &local->sin6_addr, got, sizeof(got));
	assert_string_equal(got, "fd00:0:0:7::1");
	assert_int_equal(rdma_destroy_id(id), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_channel_fd),
		cmocka_unit_test(test_cm_connect_rc),
		cmocka_unit_test(test_cm_reject),
		cmocka_unit_test(test_cm_no_listener),
		cmocka_unit_test(test_cm_backlog),
		cmocka_unit_test(test_cm_endpoint),
		cmocka_unit_test(test_cm_addr_errors),
		cmocka_unit_test(test_cm_route_error),
		cmocka_unit_test(test_cm_bad_input),
		cmocka_unit_test(test_cm_rep_timeout),
		cmocka_unit_test(test_cm_bind_loopback),
		cmocka_unit_test(test_cm_connect_self),
		cmocka_unit_test(test_cm_resolve_own),
		cmocka_unit_test(test_cm_getaddrinfo_hints),
	};
	const struct CMUnitTest lossy[] = {
		cmocka_unit_test(test_cm_lossy),
		cmocka_unit_test(test_cm_connect_ipv6),
		cmocka_unit_test(test_cm_bind_loopback6),
		cmocka_unit_test(test_cm_connect_rc),
		cmocka_unit_test(test_cm_reject),
	};

	if (argc >= 3) {
		/* test_cm WORKDIR FAULT [SEED]: both ports behind net_fault */
		if (ep_fault_config(argv[1], "cm", 7, argv[2], argc > 3 ?
				    (unsigned int)strtoul(argv[3], NULL, 0) :
				    7) != 0) {
			perror("test_cm: config");
			return 1;
		}
		server_ip = "10.0.7.2";
		client_ip = "10.0.7.1";
		return cmocka_run_group_tests(lossy, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
