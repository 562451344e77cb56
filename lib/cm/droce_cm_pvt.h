/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_CM_PVT_H
#define DROCE_CM_PVT_H

/*
 * The connection manager's insides: one CM per process, with a control
 * thread that owns the GSI QP of every device, the timers and the
 * retries; the CM protocol (droce_cm_conn.c) and the rdma_cm API above
 * it (droce_cma*.c, droce_cma_pvt.h) share one mutex, taken by the
 * control thread for each MAD and each expired timer and by the API
 * for each call. Nothing here runs on an engine lcore.
 *
 * The CM is the lower layer, as Linux's cm.c is below its cma.c: it
 * knows nothing of rdma_cm's ids (this header declares none of them).
 * rdma_cm calls down into it (droce_cm_send_req() and the rest), and
 * what comes from the wire reaches rdma_cm through the calls it
 * registers with the CM (struct cm_upcalls, given to droce_cm_init()).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "droce_cm.h"
#include "droce_cm_mad.h"

#define CM_MAX_DEVS 16
/** Receive slots of a GSI QP (GRH + MAD each). */
#define CM_GSI_RECV 2048
/** Send slots of a GSI QP. */
#define CM_GSI_SEND 2048
#define CM_GRH_LEN 40
#define CM_SLOT_LEN (CM_GRH_LEN + DROCE_MAD_LEN)
/** Address handles a device keeps to the peers it sends MADs to. */
#define CM_AH_CACHE 256
/** Connections hashed by local communication ID. */
#define CM_CONN_HASH 4096
/** Hop limit of every path the CM makes (Linux rdma_cm's). */
#define CM_HOP_LIMIT 64

/*
 * droce's own REQ timing, each as 4.096 us * 2^value: the CM response
 * timeouts it asks for and gives (268 ms: Linux's rdma_cm asks for 4.3 s,
 * but a CM that answers at once loses nothing by a shorter wait and a
 * lost MAD costs a third of a second instead of seconds), the packet
 * lifetime (34 ms), and how many times a MAD is sent again.
 */
#define CM_RESPONSE_TIMEOUT 16
#define CM_PACKET_LIFETIME 13
#define CM_MAX_RETRIES 15
/** ACK timeout droce's connected QPs get (4.096 us * 2^14: 67 ms). */
#define CM_ACK_TIMEOUT 14
/** The RNR timer a CM-made QP asks its peer to wait (code 12: 0.64 ms). */
#define CM_MIN_RNR_TIMER 12
/** The longest TimeWait (a peer's ACK timeout sets it). */
#define CM_TIMEWAIT_MAX_MS 4000
/** How long a REJ of a REQ is kept, at most, for the REQ asked again. */
#define CM_REJ_HOLD_MAX_MS 10000
/** How long a process that exits waits for the DREPs of its DREQs. */
#define CM_EXIT_WAIT_MS 500
/** Service timeout an MRA asks for (2^(20-8) ms, about 4 s). */
#define CM_MRA_TIMEOUT 20

#define CM_REJ_REASONS DROCE_CM_REJ_REASONS

#define CM_LOG(fmt, ...) droce_cm_log(fmt, ##__VA_ARGS__)

struct cm_ah {
	union ibv_gid dgid;
	struct ibv_ah *ah;
};

/** A device as the CM sees it. */
struct cm_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;              /**< the CM's, and rdma_create_qp's
					 *   when it is given none */
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_qp *gsi;
	struct ibv_mr *mr;
	uint8_t *slots;                 /**< CM_GSI_RECV then CM_GSI_SEND */
	uint16_t send_free[CM_GSI_SEND];
	unsigned int nsend_free;
	uint64_t guid;                  /**< node GUID, network order */
	union ibv_gid gid[4];
	int ngid;
	enum ibv_mtu mtu;
	uint8_t max_rd_atom;
	uint8_t max_init_rd_atom;
	struct cm_ah ahs[CM_AH_CACHE];
	unsigned int nahs;
	unsigned int ah_next;
};

/* the public enum's states (droce_cm.h), by shorter names */
enum cm_state {
	CM_IDLE = DROCE_CM_STATE_IDLE,
	CM_REQ_SENT = DROCE_CM_STATE_REQ_SENT,
	CM_MRA_RCVD = DROCE_CM_STATE_MRA_RCVD,  /**< REQ_SENT, MRA taken */
	CM_REQ_RCVD = DROCE_CM_STATE_REQ_RCVD,  /**< REQ reported */
	CM_MRA_SENT = DROCE_CM_STATE_MRA_SENT,  /**< REQ_RCVD, MRA sent */
	CM_REP_SENT = DROCE_CM_STATE_REP_SENT,
	CM_REP_RCVD = DROCE_CM_STATE_REP_RCVD,  /**< CONNECT_RESPONSE
						 *   reported, no RTU yet */
	CM_ESTABLISHED = DROCE_CM_STATE_ESTABLISHED,
	CM_DREQ_SENT = DROCE_CM_STATE_DREQ_SENT,
	CM_TIMEWAIT = DROCE_CM_STATE_TIMEWAIT,
	CM_SIDR_REQ_SENT = DROCE_CM_STATE_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD = DROCE_CM_STATE_SIDR_REQ_RCVD,
};

/** A connection of the CM protocol: IB CM state under an rdma_cm id. */
struct cm_conn {
	LIST_ENTRY(cm_conn) hash;       /**< by local_id */
	LIST_ENTRY(cm_conn) all;
	void *ctx;                      /**< its user's (rdma_cm's id), told
					 *   its events; NULL once gone */
	struct cm_dev *dev;
	enum cm_state state;
	uint32_t local_id;
	uint32_t remote_id;
	uint64_t remote_guid;
	uint64_t tid;                   /**< of the exchange in progress */
	union ibv_gid sgid;
	union ibv_gid dgid;
	uint8_t sgid_index;
	/* what was negotiated */
	uint32_t local_qpn;
	uint32_t remote_qpn;
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint32_t qkey;
	enum ibv_mtu mtu;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;        /**< ours, asked of the peer */
	uint8_t peer_rnr_retry;         /**< what the peer asked of us */
	uint8_t ack_timeout;
	uint8_t remote_resp_timeout;    /**< the peer's, for its answers */
	uint64_t peer_wait_ms;          /**< how long the peer waits for
					 *   our answer before it asks again */
	bool flow_control;
	bool srq;
	bool rejected;                  /**< its REQ was: mad is the REJ */
	enum ibv_qp_type qp_type;
	uint64_t service_id;            /**< a SIDR_REQ's, for its SIDR_REP */
	/* the MAD to send again while waiting for its answer */
	uint8_t mad[DROCE_MAD_LEN];
	bool mad_valid;
	unsigned int retries_left;
	uint64_t deadline_ms;           /**< 0: no timer */
	uint64_t wait_ms;               /**< between tries */
};

/** What happened to a connection, as the CM tells the layer above. */
enum cm_conn_event_type {
	CM_EV_REQ_RECEIVED,     /**< a REQ or SIDR_REQ (msg): the
				 *   connection is the one the req upcall
				 *   gave, its fields filled */
	CM_EV_REP_RECEIVED,     /**< a REP to our REQ: the connection is
				 *   in REP_RCVD, for an RTU or a REJ */
	CM_EV_RTU_RECEIVED,     /**< an RTU to our REP: established */
	CM_EV_REJ_RECEIVED,     /**< status: the REJ's reason */
	CM_EV_SIDR_REP_RECEIVED, /**< status: the SIDR_REP's; the CM
				  *   frees the connection on return */
	CM_EV_REQ_ERROR,        /**< our REQ or SIDR_REQ was not answered */
	CM_EV_REP_ERROR,        /**< our REP was not answered */
	CM_EV_DISCONNECTED,     /**< a DREQ or a DREP came, or our DREQ
				 *   was not answered */
	CM_EV_TIMEWAIT_EXIT,    /**< the connection's TimeWait is over */
};

/** An event of a connection, for the layer above. */
struct cm_conn_event {
	enum cm_conn_event_type type;
	int status;                     /**< a REJ reason, a SIDR status,
					 *   or a negative errno */
	const struct droce_cm_msg *msg; /**< the MAD that brought it, if
					 *   one did */
};

/**
 * The calls the CM makes up into the layer above it (rdma_cm's, given
 * to droce_cm_init()): always under droce_cm.lock, on the control
 * thread or in a call of that layer down into the CM.
 */
struct cm_upcalls {
	/**
	 * REQ or SIDR_REQ @p msg came to @p dev: find who listens to its
	 * service ID and private data (the CM reads neither) and give the
	 * request a connection of its own (droce_cm_conn_new()), whose
	 * fields the CM then fills before it reports CM_EV_REQ_RECEIVED.
	 * @param conn set to the new connection on success
	 * @return 0, -EINVAL (a service ID or private data not the layer's
	 *         own), -ENOENT (nobody listens), -EBUSY (the listener has
	 *         its backlog of requests) or -ENOMEM
	 */
	int (*req)(struct cm_dev *dev, const struct droce_cm_msg *msg,
		   struct cm_conn **conn);
	/** Tell the user of a connection (its ctx) what happened to it. */
	void (*event)(void *ctx, const struct cm_conn_event *ev);
	/**
	 * The process exits: end every connection the layer above holds
	 * (droce_cm_conn_detach()).
	 */
	void (*exit)(void);
};

/** What a REQ or SIDR_REQ says beyond its connection's fields. */
struct cm_req_param {
	uint64_t service_id;
	uint8_t rate;                   /**< the path's packet rate */
	uint8_t traffic_class;
	const void *private_data;       /**< all of it: the CM adds none */
	uint8_t private_data_len;
};

/** The process's CM. */
struct cm {
	pthread_mutex_t lock;
	pthread_t thread;
	bool running;
	int epfd;
	int wakefd;
	struct cm_dev devs[CM_MAX_DEVS];
	int ndevs;
	struct ibv_context *dev_list[CM_MAX_DEVS + 1];
	LIST_HEAD(, cm_conn) conns;
	LIST_HEAD(, cm_conn) by_local[CM_CONN_HASH];
	const struct cm_upcalls *up;   /**< the layer above's */
	uint32_t tid_hi;
	uint32_t tid_lo;
	struct droce_cm_stats stats;   /**< the counters kept as they go */
};

extern struct cm droce_cm;

void droce_cm_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* droce_cm.c: the control thread, the devices, MADs in and out */
/* Start the CM (once), with the calls it makes up into @p up's layer. */
int droce_cm_init(const struct cm_upcalls *up);
void droce_cm_telemetry_register(void);
uint64_t droce_cm_now_ms(void);
void droce_cm_wake(void);
struct cm_dev *droce_cm_dev_by_gid(const union ibv_gid *gid, int *index);
/* A global AH's attributes on port 1, as every CM path has them. */
void droce_cm_ah_attr(struct ibv_ah_attr *aa, const union ibv_gid *dgid,
		      uint8_t sgid_index, uint8_t traffic_class);
struct ibv_ah *droce_cm_ah(struct cm_dev *dev, const union ibv_gid *dgid,
			   uint8_t sgid_index);
int droce_cm_send(struct cm_dev *dev, const union ibv_gid *dgid,
		  uint8_t sgid_index, const uint8_t mad[DROCE_MAD_LEN]);
uint64_t droce_cm_next_tid(void);

/* droce_cm_conn.c: the CM protocol; a conn is the layer above's (@p
 * ctx's) until droce_cm_conn_detach() */
struct cm_conn *droce_cm_conn_new(void *ctx, struct cm_dev *dev);
void droce_cm_conn_free(struct cm_conn *conn);
void droce_cm_rx(struct cm_dev *dev, const union ibv_gid *sgid,
		 uint8_t sgid_index, const uint8_t *mad, size_t len);
uint64_t droce_cm_timers(uint64_t now);
int droce_cm_send_req(struct cm_conn *c, const struct cm_req_param *p);
int droce_cm_send_rep(struct cm_conn *c, const void *priv, uint8_t len);
int droce_cm_send_rtu(struct cm_conn *c);
int droce_cm_send_rej(struct cm_conn *c, uint16_t reason, const void *priv,
		      uint8_t len);
int droce_cm_send_dreq(struct cm_conn *c);
int droce_cm_send_sidr_req(struct cm_conn *c, const struct cm_req_param *p);
int droce_cm_send_sidr_rep(struct cm_conn *c, uint8_t status, uint32_t qpn,
			   uint32_t qkey, const void *priv, uint8_t len);
/* its user forgets @p c */
void droce_cm_conn_detach(struct cm_conn *c);
uint32_t droce_cm_timeout_ms(uint8_t t);
const char *droce_cm_state_name(enum cm_state s);

#endif /* DROCE_CM_PVT_H */
