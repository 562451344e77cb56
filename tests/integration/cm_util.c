/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* What the CM's integration tests share (cm_util.h). */

#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "cm_util.h"

const char *server_ip = "10.0.0.2";
const char *client_ip = "10.0.0.1";

struct sockaddr_in
addr4(const char *ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* What the CM holds and has done: where a test waited in vain, its
 * log (DROCE_CM_DEBUG) says the rest. */
static void
cm_state_print(void)
{
	struct droce_cm_stats st;
	struct timespec ts;
	unsigned int i;

	if (droce_cm_query_stats(&st) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	print_error("CM at %lld.%03ld: %" PRIu64 " ids, %" PRIu64
		    " events queued, %" PRIu64 " connections:",
		    (long long)ts.tv_sec, ts.tv_nsec / 1000000, st.ids,
		    st.events_queued, st.conns);
	for (i = 0; i < DROCE_CM_STATES; i++)
		if (st.conns_by_state[i] != 0)
			print_error(" %s %" PRIu64, droce_cm_conn_state_name(i),
				    st.conns_by_state[i]);
	print_error("; MADs sent %" PRIu64 ", received %" PRIu64
		    ", sent again %" PRIu64 ", dropped %" PRIu64
		    ", duplicates %" PRIu64 ", not posted %" PRIu64 "\n",
		    st.mads_sent, st.mads_received, st.mads_resent,
		    st.mads_dropped, st.dup_received, st.send_failed);
}

struct rdma_cm_event *
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, WAIT_MS) != 1) {
		print_error("no event, waiting for %s\n", rdma_event_str(type));
		cm_state_print();
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev) != 0)
		return NULL;
	if (ev->event != type) {
		print_error("%s (status %d), waiting for %s\n",
			    rdma_event_str(ev->event), ev->status,
			    rdma_event_str(type));
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

void
expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = expect(ch, type);

	assert_non_null(ev);
	rdma_ack_cm_event(ev);
}

uint16_t
listen_on(struct side *s, int backlog)
{
	struct sockaddr_in a = addr4(server_ip, 0);

	s->ch = rdma_create_event_channel();
	assert_non_null(s->ch);
	assert_int_equal(rdma_create_id(s->ch, &s->listen, s, RDMA_PS_TCP),
			 0);
	assert_int_equal(rdma_bind_addr(s->listen, (struct sockaddr *)&a),
			 0);
	assert_int_equal(rdma_listen(s->listen, backlog), 0);
	assert_int_not_equal(rdma_get_src_port(s->listen), 0);
	return ntohs(rdma_get_src_port(s->listen));
}

void
qp_on(struct side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	assert_int_equal(rdma_create_qp(id, NULL, &qa), 0);
	assert_non_null(id->qp);
	assert_non_null(id->send_cq);
	assert_non_null(id->pd);
	s->mr = ibv_reg_mr(id->pd, s->buf, sizeof(s->buf),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	assert_non_null(s->mr);
}

void
client_to(struct side *c, uint16_t port)
{
	/* from the client's device: the server's address is droce1's own,
	 * and an id bound to none would loop back on droce1 */
	client_from_to(c, client_ip, server_ip, port);
}

void
client_from_to(struct side *c, const char *from, const char *to,
	       uint16_t port)
{
	struct sockaddr_in a = addr4(to, port);
	struct sockaddr_in src = addr4(from, 0);

	c->ch = rdma_create_event_channel();
	assert_non_null(c->ch);
	assert_int_equal(rdma_create_id(c->ch, &c->id, c, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(c->id, (struct sockaddr *)&src,
					   (struct sockaddr *)&a, 2000), 0);
	expect_ack(c->ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_non_null(c->id->verbs);
	assert_int_equal(rdma_resolve_route(c->id, 2000), 0);
	expect_ack(c->ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(c->id->route.num_paths, 1);
}

void
side_free(struct side *s)
{
	if (s->id != NULL) {
		if (s->id->qp != NULL)
			rdma_destroy_qp(s->id);
		if (s->mr != NULL)
			ibv_dereg_mr(s->mr);
		assert_int_equal(rdma_destroy_id(s->id), 0);
	}
	if (s->listen != NULL)
		assert_int_equal(rdma_destroy_id(s->listen), 0);
	if (s->ch != NULL)
		rdma_destroy_event_channel(s->ch);
	memset(s, 0, sizeof(*s));
}

int
poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < WAIT_MS * 10; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
		usleep(100);
	}
	return 0;
}

void
send_checked(struct side *from, struct side *to, const char *text)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, 32, from->mr->lkey };
	struct ibv_sge rsge = { (uintptr_t)to->buf, 32, to->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr rw = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	assert_true(strlen(text) < 32);
	strcpy(from->buf, text);
	assert_int_equal(ibv_post_recv(to->id->qp, &rw, &rbad), 0);
	assert_int_equal(ibv_post_send(from->id->qp, &wr, &bad), 0);
	assert_int_equal(poll_one(to->id->recv_cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(to->buf, text);
}

struct droce_cm_stats
cm_stats(void)
{
	struct droce_cm_stats st;

	assert_int_equal(droce_cm_query_stats(&st), 0);
	return st;
}

void
cm_request(struct side *c, struct side *s, struct rdma_conn_param *cp)
{
	struct rdma_cm_event *ev;

	qp_on(c, c->id);
	assert_int_equal(rdma_connect(c->id, cp), 0);
	ev = expect(s->ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	s->id = ev->id;
	rdma_ack_cm_event(ev);
}

void
cm_establish(struct side *c, struct side *s, struct rdma_conn_param *cp)
{
	qp_on(s, s->id);
	assert_int_equal(rdma_accept(s->id, cp), 0);
	expect_ack(c->ch, RDMA_CM_EVENT_ESTABLISHED);
	expect_ack(s->ch, RDMA_CM_EVENT_ESTABLISHED);
}
