/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_CMA_PVT_H
#define DROCE_CMA_PVT_H

/*
 * The rdma_cm API's insides (droce_cma*.c): its ids, event channels and
 * events, above the CM (droce_cm_pvt.h), whose lock they are under.
 */

#include <errno.h>
#include <stddef.h>

#include "droce_cm_pvt.h"

/** Multicast groups an id may join. */
#define CM_MAX_MC 16

/** An event on its way to the application. */
struct cm_event {
	struct rdma_cm_event ev;        /**< what rdma_get_cm_event returns */
	TAILQ_ENTRY(cm_event) next;
	struct cm_id *id;
	uint8_t priv[DROCE_CM_DATA_LEN];
};

struct cm_channel {
	struct rdma_event_channel ch;
	TAILQ_HEAD(, cm_event) events;
	unsigned int nevents;
	bool sync;                      /**< made for an id without one */
	unsigned int waiters;           /**< threads in rdma_get_cm_event */
	bool dead;                      /**< destroyed while they waited */
};

enum cm_id_state {
	ID_IDLE,
	ID_ADDR_BOUND,
	ID_ADDR_RESOLVED,
	ID_ROUTE_RESOLVED,
	ID_LISTEN,
	ID_CONNECT,         /**< REQ sent or received, not yet established */
	ID_ESTABLISHED,
	ID_DISCONNECTED,
	ID_DESTROYING,
};

/** An rdma_cm id. */
struct cm_id {
	struct rdma_cm_id id;           /**< what the application holds */
	LIST_ENTRY(cm_id) all;
	enum cm_id_state state;
	struct cm_dev *dev;             /**< once bound to one */
	struct cm_conn *conn;
	struct cm_id *listener;         /**< of a connect request's id,
					 *   until it is answered */
	bool child;                     /**< made by a listener: it holds
					 *   no port of its own */
	bool own_channel;               /**< a synchronous id's, made for it */
	bool bound;
	bool any_addr;                  /**< bound to the wildcard address */
	bool reuseaddr;
	bool afonly;
	int backlog;
	int pending;                    /**< requests not yet answered */
	uint8_t tos;
	uint8_t ack_timeout;
	struct ibv_sa_path_rec path;
	/* the connect request reported on a listener's child */
	struct droce_cm_req req;
	/* rdma_create_ep's */
	struct ibv_qp_init_attr *ep_attr;
	bool own_cqs;
	/* events reported and not acknowledged */
	unsigned int events_out;
	pthread_cond_t acked;
	struct ibv_ece local_ece;
	/* multicast groups joined (UD) */
	struct {
		union ibv_gid mgid;
		bool attached;
	} mc[CM_MAX_MC];
	unsigned int nmc;
	int sync_error;
};

/** rdma_cm's state in the process, under droce_cm.lock. */
struct cma {
	LIST_HEAD(, cm_id) ids;
	uint64_t events_queued;        /**< on every channel */
};

extern struct cma droce_cma;

/* droce_cma.c (events, ids), droce_cma_route.c, droce_cma_addr.c,
 * droce_cma_qp.c, droce_cma_conn.c (with what the CM tells it),
 * droce_cma_ep.c */
/* droce_cm_init() with rdma_cm's calls for the CM to make */
int droce_cma_init(void);
int droce_cma_sync_wait(struct cm_id *id, enum rdma_cm_event_type want);
bool droce_cma_is_sync(const struct cm_id *id);
void droce_cma_child_answered(struct cm_id *id);
int droce_cma_migrate(struct cm_id *id, struct rdma_event_channel *channel);
void droce_cma_any_of(int family, struct sockaddr_storage *ss);
struct cm_event *droce_cma_event(struct cm_id *id,
				 enum rdma_cm_event_type type, int status);
void droce_cma_post(struct cm_event *e);
struct cm_id *droce_cma_listener(struct cm_dev *dev, uint16_t ps,
				 uint16_t port, const uint8_t ip[16]);
struct cm_id *droce_cma_child(struct cm_id *listener, struct cm_dev *dev);

/** Free @p child, made by droce_cma_child() and not yet given a connection
 * or posted to its listener's channel. The CM's lock is held. */
void droce_cma_child_drop(struct cm_id *child);
int droce_cma_qp_attr(struct cm_id *id, struct ibv_qp_attr *attr,
		      int *mask);
int droce_cma_modify_qp(struct cm_id *id, enum ibv_qp_state state);
void droce_cma_ah_attr(const struct cm_id *id, struct ibv_ah_attr *ah);
int droce_cma_bind(struct cm_id *id, const struct sockaddr *sa);
struct cm_dev *droce_cma_route_dev(const struct cm_id *id,
				   const union ibv_gid *dst, int *index);
uint16_t droce_cma_port(const struct sockaddr *sa);
bool droce_cma_addr_any(const struct sockaddr *sa);
/* 127.0.0.0/8 or ::1 */
bool droce_cma_addr_loopback(const struct sockaddr *sa);
struct cm_dev *droce_cma_loopback_dev(int family, int *index);
socklen_t droce_cma_addr_len(const struct sockaddr *sa);
void droce_cma_addr_to_gid(const struct sockaddr *sa, union ibv_gid *gid);

/* -1 with errno @p err, as librdmacm's calls fail */
static inline int
droce_cma_fail(int err)
{
	errno = err;
	return -1;
}

static inline struct cm_id *
cm_id_of(struct rdma_cm_id *id)
{
	return (struct cm_id *)((char *)id - offsetof(struct cm_id, id));
}

#endif /* DROCE_CMA_PVT_H */
