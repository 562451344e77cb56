/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * What the CM's integration tests share: the embedded default's two
 * addresses (droce0 the client's, droce1 the server's), waiting for an
 * event, and a side of a connection made through the rdma_cm API with
 * a QP and a registered buffer.
 */

#ifndef DROCE_TEST_CM_UTIL_H
#define DROCE_TEST_CM_UTIL_H

#include <stdint.h>

#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include "droce_cm.h"

/* the server's and the client's addresses (a test may move them) */
extern const char *server_ip;
extern const char *client_ip;
/* how long an event may take */
#define WAIT_MS 5000

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;          /* the client's, the server's child */
	struct rdma_cm_id *listen;
	struct ibv_mr *mr;
	char buf[4096];
};

struct sockaddr_in addr4(const char *ip, uint16_t port);

/* The next event of @p ch, which must be @p type; NULL after WAIT_MS. */
struct rdma_cm_event *expect(struct rdma_event_channel *ch,
			     enum rdma_cm_event_type type);
/* The same, acknowledged at once. */
void expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type);

/* @p s listens on the server's address with @p backlog; its port. */
uint16_t listen_on(struct side *s, int backlog);
/* An RC QP on @p id and s->buf registered for every remote access. */
void qp_on(struct side *s, struct rdma_cm_id *id);
/* @p c's id resolved from the client's address to the server's @p port,
 * address and route. */
void client_to(struct side *c, uint16_t port);
/* The same from address @p from to address @p to. */
void client_from_to(struct side *c, const char *from, const char *to,
		    uint16_t port);
/* @p c (resolved: client_to()) given a QP and connecting with @p cp
 * (NULL: the defaults); @p s, listening, takes the request: s->id. */
void cm_request(struct side *c, struct side *s,
		struct rdma_conn_param *cp);
/* @p s (after cm_request()) given a QP and accepting with @p cp:
 * ESTABLISHED on both sides. */
void cm_establish(struct side *c, struct side *s,
		  struct rdma_conn_param *cp);
/* Everything of @p s destroyed. */
void side_free(struct side *s);

/* One completion of @p cq within WAIT_MS. @return 1, or 0 if none. */
int poll_one(struct ibv_cq *cq, struct ibv_wc *wc);
/* The CM's counters now. */
struct droce_cm_stats cm_stats(void);
/* @p text SENT from @p from's QP and found in @p to's buffer. */
void send_checked(struct side *from, struct side *to, const char *text);

#endif
