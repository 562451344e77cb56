/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_CM_H
#define DROCE_CM_H

/**
 * @file
 * droce's connection manager beyond <rdma/rdma_cma.h>: its counters, the
 * same ones DPDK telemetry shows as /droce/cm. The rdma_cm API itself
 * (rdma_create_id, rdma_connect, ...) is rdma-core's, declared by
 * <rdma/rdma_cma.h> and <rdma/rdma_verbs.h>; libdroce.so and droce's
 * librdmacm.so.1 implement it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** REJ reasons counted apart (0 .. DROCE_CM_REJ_REASONS - 1). */
#define DROCE_CM_REJ_REASONS 34

/** States of the CM's connections, as counted. */
enum droce_cm_conn_state {
	DROCE_CM_STATE_IDLE,
	DROCE_CM_STATE_REQ_SENT,
	DROCE_CM_STATE_MRA_RCVD,
	DROCE_CM_STATE_REQ_RCVD,
	DROCE_CM_STATE_MRA_SENT,
	DROCE_CM_STATE_REP_SENT,
	DROCE_CM_STATE_REP_RCVD,
	DROCE_CM_STATE_ESTABLISHED,
	DROCE_CM_STATE_DREQ_SENT,
	DROCE_CM_STATE_TIMEWAIT,
	DROCE_CM_STATE_SIDR_REQ_SENT,
	DROCE_CM_STATE_SIDR_REQ_RCVD,
	DROCE_CM_STATES
};

/** The CM's counters, since the process started. */
struct droce_cm_stats {
	uint64_t ids;                   /**< rdma_cm ids that exist */
	uint64_t listeners;             /**< of them, listening */
	uint64_t events_queued;         /**< events not yet taken */
	uint64_t conns;                 /**< connections the CM holds */
	uint64_t conns_by_state[DROCE_CM_STATES];
	uint64_t mads_sent;             /**< MADs posted to a GSI */
	uint64_t mads_received;         /**< datagrams a GSI took */
	uint64_t mads_resent;           /**< sent again for want of an
					 *   answer */
	uint64_t mads_dropped;          /**< malformed, of no connection, in
					 *   no state to take them */
	uint64_t dup_received;          /**< duplicates answered again */
	uint64_t send_failed;           /**< could not be posted */
	uint64_t listen_overflow;       /**< REQs refused: backlog full */
	uint64_t rej_sent[DROCE_CM_REJ_REASONS];
	uint64_t rej_received[DROCE_CM_REJ_REASONS];
};

/**
 * Read the CM's counters.
 * @return 0, or -1 with errno ENODEV if no device has a CM (the CM
 *         starts with the first rdma_cm call)
 */
int droce_cm_query_stats(struct droce_cm_stats *stats);

/**
 * Name of REJ reason @p reason, as IBTA names it ("INVALID_SERVICE_ID",
 * "CONSUMER_REJECT", ...; "?" if there is none of that number): what
 * the rej_sent[] and rej_received[] counters count by.
 */
const char *droce_cm_rej_reason_name(uint16_t reason);

/** Name of a connection state ("ESTABLISHED", ...; "?" if none). */
const char *droce_cm_conn_state_name(enum droce_cm_conn_state s);

/** Whether @p gid is an IPv4-mapped address (::ffff:a.b.c.d). */
bool droce_cma_gid_is_v4(const union ibv_gid *gid);

/**
 * The socket address rdma_cm takes for GID @p gid of a droce device:
 * AF_INET for an IPv4-mapped GID, else AF_INET6, with @p port (host
 * order).
 */
void droce_cma_gid_to_addr(const union ibv_gid *gid, uint16_t port,
			   struct sockaddr_storage *ss);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_CM_H */
