/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The CM protocol (InfiniBand vol. 1 ch. 12): connections keyed by their
 * local communication ID, the messages each state takes, the MAD each
 * state waits to have answered (sent again until it is, then given up),
 * duplicates answered again rather than acted on twice, and TimeWait.
 * Runs under droce_cm.lock, on the control thread or in an rdma_cm call.
 * What the layer above must hear of (a request for a listener, a REP, a
 * REJ, a disconnection, ...) goes up through droce_cm.up, to the ctx of
 * each connection: the CM reads nothing of rdma_cm's ids.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "droce_cm_pvt.h"

static const char *const state_names[] = {
	[CM_IDLE] = "IDLE",
	[CM_REQ_SENT] = "REQ_SENT",
	[CM_MRA_RCVD] = "MRA_RCVD",
	[CM_REQ_RCVD] = "REQ_RCVD",
	[CM_MRA_SENT] = "MRA_SENT",
	[CM_REP_SENT] = "REP_SENT",
	[CM_REP_RCVD] = "REP_RCVD",
	[CM_ESTABLISHED] = "ESTABLISHED",
	[CM_DREQ_SENT] = "DREQ_SENT",
	[CM_TIMEWAIT] = "TIMEWAIT",
	[CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
};

const char *
droce_cm_state_name(enum cm_state s)
{
	return (unsigned int)s < sizeof(state_names) / sizeof(*state_names) ?
		state_names[s] : "?";
}

const char *
droce_cm_conn_state_name(enum droce_cm_conn_state s)
{
	return droce_cm_state_name((enum cm_state)s);
}

/* 4.096 us * 2^t, in ms (at least 1). */
uint32_t
droce_cm_timeout_ms(uint8_t t)
{
	uint64_t ns = 4096ull << (t > 31 ? 31 : t);

	return ns < 1000000 ? 1 : (uint32_t)(ns / 1000000);
}

static uint32_t
rand32(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)rand();
	return v;
}

static LIST_HEAD(, cm_conn) *
bucket(uint32_t local_id)
{
	return (void *)&droce_cm.by_local[local_id % CM_CONN_HASH];
}

static struct cm_conn *
conn_find(uint32_t local_id)
{
	struct cm_conn *c;

	LIST_FOREACH(c, bucket(local_id), hash)
		if (c->local_id == local_id)
			return c;
	return NULL;
}

struct cm_conn *
droce_cm_conn_new(void *ctx, struct cm_dev *dev)
{
	struct cm_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	do
		c->local_id = rand32();
	while (c->local_id == 0 || conn_find(c->local_id) != NULL);
	c->ctx = ctx;
	c->dev = dev;
	c->state = CM_IDLE;
	/* a CM message's starting PSN is the one its sender expects to
	 * receive (as Linux's CM has it): ours is drawn here */
	c->rq_psn = rand32() & 0xffffff;
	c->ack_timeout = CM_ACK_TIMEOUT;
	LIST_INSERT_HEAD(bucket(c->local_id), c, hash);
	LIST_INSERT_HEAD(&droce_cm.conns, c, all);
	droce_cm.stats.conns++;
	return c;
}

void
droce_cm_conn_free(struct cm_conn *c)
{
	LIST_REMOVE(c, hash);
	LIST_REMOVE(c, all);
	droce_cm.stats.conns--;
	free(c);
}

static void
set_state(struct cm_conn *c, enum cm_state s)
{
	CM_LOG("conn %08x: %s -> %s", c->local_id,
	       droce_cm_state_name(c->state), droce_cm_state_name(s));
	c->state = s;
}

/* Send @p mad on @p c's path; keep it as the last MAD sent. */
static int
conn_send(struct cm_conn *c, const struct droce_cm_msg *msg)
{
	if (droce_cm_mad_build(msg, c->mad) == 0)
		return -EINVAL;
	return droce_cm_send(c->dev, &c->dgid, c->sgid_index, c->mad);
}

/* Send it and wait for an answer: again every @p wait_ms, @p tries times. */
static int
conn_send_wait(struct cm_conn *c, const struct droce_cm_msg *msg,
	       uint64_t wait_ms, unsigned int tries)
{
	int ret = conn_send(c, msg);

	/* a MAD that could not be posted is sent again like a lost one */
	c->mad_valid = true;
	c->wait_ms = wait_ms;
	c->retries_left = tries;
	c->deadline_ms = droce_cm_now_ms() + wait_ms;
	return ret == -EINVAL ? ret : 0;
}

static void
conn_stop_timer(struct cm_conn *c)
{
	c->mad_valid = false;
	c->deadline_ms = 0;
}

/* How long the peer has to answer a MAD of ours: 2 packet lifetimes and
 * its response timeout. */
static uint64_t
answer_wait(uint8_t resp_timeout)
{
	return 2ull * droce_cm_timeout_ms(CM_PACKET_LIFETIME) +
		droce_cm_timeout_ms(resp_timeout);
}

/* TimeWait lasts two ACK timeouts, the peer's REQ's, but no longer than
 * CM_TIMEWAIT_MAX_MS: a REQ asking for 2^31 * 4 us would otherwise keep
 * its connection for hours. */
static void
timewait(struct cm_conn *c)
{
	uint64_t ms = 2ull * droce_cm_timeout_ms(c->ack_timeout);

	conn_stop_timer(c);
	set_state(c, CM_TIMEWAIT);
	c->deadline_ms = droce_cm_now_ms() +
		(ms < CM_TIMEWAIT_MAX_MS ? ms : CM_TIMEWAIT_MAX_MS);
}

static void
hdr(struct droce_cm_msg *m, uint16_t attr, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	droce_cm_mad_hdr_init(&m->hdr, attr, tid);
}

/* A MAD that belongs to no connection's retries: built and sent once. */
static int
send_once(struct cm_dev *dev, const union ibv_gid *dgid, uint8_t sgid_index,
	  const struct droce_cm_msg *m)
{
	uint8_t mad[DROCE_MAD_LEN];

	if (droce_cm_mad_build(m, mad) == 0)
		return -EINVAL;
	return droce_cm_send(dev, dgid, sgid_index, mad);
}

/* A REJ that belongs to no connection of ours (or to one we keep out of
 * it): to @p dgid, naming the peer's @p remote_id. */
static void
rej_stranger(struct cm_dev *dev, const union ibv_gid *dgid, uint8_t sgid_index,
	     uint64_t tid, uint32_t remote_id, uint8_t what, uint16_t reason)
{
	struct droce_cm_msg m;

	hdr(&m, DROCE_CM_ATTR_REJ, tid);
	m.rej.remote_comm_id = remote_id;
	m.rej.msg_rejected = what;
	m.rej.reason = reason;
	if (send_once(dev, dgid, sgid_index, &m) == 0 &&
	    reason < CM_REJ_REASONS)
		droce_cm.stats.rej_sent[reason]++;
}

/* ------------------------------------------------------------------------
 * Sending, for the rdma_cm calls.
 */

int
droce_cm_send_req(struct cm_conn *c, const struct cm_req_param *p)
{
	struct droce_cm_msg m;
	struct droce_cm_req *r = &m.req;

	if (p->private_data_len > DROCE_CM_REQ_PRIV_LEN)
		return -EINVAL;
	c->tid = droce_cm_next_tid();
	hdr(&m, DROCE_CM_ATTR_REQ, c->tid);
	r->local_comm_id = c->local_id;
	r->service_id = p->service_id;
	r->local_ca_guid = be64toh(c->dev->guid);
	r->local_qkey = c->qkey;
	r->local_qpn = c->local_qpn;
	r->responder_resources = c->responder_resources;
	r->initiator_depth = c->initiator_depth;
	r->remote_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	r->transport_type = c->qp_type == IBV_QPT_UC ? 1 : 0;
	r->flow_control = c->flow_control;
	r->starting_psn = c->rq_psn;
	r->local_cm_response_timeout = CM_RESPONSE_TIMEOUT;
	r->retry_count = c->retry_count;
	r->pkey = 0xffff;
	r->path_mtu = (uint8_t)c->mtu;
	r->rnr_retry_count = c->rnr_retry_count;
	r->max_cm_retries = CM_MAX_RETRIES;
	r->srq = c->srq;
	r->primary.local_lid = 0xffff;
	r->primary.remote_lid = 0xffff;
	memcpy(r->primary.local_gid, c->sgid.raw, 16);
	memcpy(r->primary.remote_gid, c->dgid.raw, 16);
	r->primary.packet_rate = p->rate;
	r->primary.traffic_class = p->traffic_class;
	r->primary.hop_limit = CM_HOP_LIMIT;
	r->primary.local_ack_timeout = c->ack_timeout;
	if (p->private_data_len > 0)
		memcpy(r->private_data, p->private_data, p->private_data_len);
	set_state(c, CM_REQ_SENT);
	return conn_send_wait(c, &m, answer_wait(CM_RESPONSE_TIMEOUT),
			      CM_MAX_RETRIES);
}

int
droce_cm_send_rep(struct cm_conn *c, const void *priv, uint8_t len)
{
	struct droce_cm_msg m;
	struct droce_cm_rep *r = &m.rep;

	if (c == NULL || (c->state != CM_REQ_RCVD && c->state != CM_MRA_SENT))
		return -EINVAL;
	if (len > DROCE_CM_REP_PRIV_LEN)
		return -EINVAL;
	hdr(&m, DROCE_CM_ATTR_REP, c->tid);
	r->local_comm_id = c->local_id;
	r->remote_comm_id = c->remote_id;
	r->local_qkey = c->qkey;
	r->local_qpn = c->local_qpn;
	r->starting_psn = c->rq_psn;
	r->responder_resources = c->responder_resources;
	r->initiator_depth = c->initiator_depth;
	r->flow_control = c->flow_control;
	r->rnr_retry_count = c->rnr_retry_count;
	r->srq = c->srq;
	r->local_ca_guid = be64toh(c->dev->guid);
	if (len > 0)
		memcpy(r->private_data, priv, len);
	set_state(c, CM_REP_SENT);
	return conn_send_wait(c, &m, answer_wait(c->remote_resp_timeout),
			      c->retries_left);
}

int
droce_cm_send_rtu(struct cm_conn *c)
{
	struct droce_cm_msg m;

	if (c == NULL || c->state != CM_REP_RCVD)
		return -EINVAL;
	hdr(&m, DROCE_CM_ATTR_RTU, c->tid);
	m.rtu.local_comm_id = c->local_id;
	m.rtu.remote_comm_id = c->remote_id;
	conn_stop_timer(c);
	set_state(c, CM_ESTABLISHED);
	return conn_send(c, &m);
}

int
droce_cm_send_rej(struct cm_conn *c, uint16_t reason, const void *priv,
		  uint8_t len)
{
	struct droce_cm_msg m;
	int ret;

	if (c == NULL)
		return -EINVAL;
	if (len > DROCE_CM_REJ_PRIV_LEN)
		return -EINVAL;
	hdr(&m, DROCE_CM_ATTR_REJ, c->tid);
	m.rej.local_comm_id = c->local_id;
	m.rej.remote_comm_id = c->remote_id;
	switch (c->state) {
	case CM_REQ_RCVD:
	case CM_MRA_SENT:
		m.rej.msg_rejected = DROCE_CM_REF_REQ;
		break;
	case CM_REP_RCVD:
		m.rej.msg_rejected = DROCE_CM_REF_REP;
		break;
	case CM_REQ_SENT:
	case CM_MRA_RCVD:
	case CM_REP_SENT:       /* its RTU never came: a REJ "timeout" */
		m.rej.msg_rejected = DROCE_CM_REF_OTHER;
		break;
	default:
		return -EINVAL;
	}
	m.rej.reason = reason;
	if (len > 0)
		memcpy(m.rej.private_data, priv, len);
	ret = conn_send(c, &m);
	if (ret == 0 && reason < CM_REJ_REASONS)
		droce_cm.stats.rej_sent[reason]++;
	if (m.rej.msg_rejected == DROCE_CM_REF_REQ) {
		/* a REJ is not answered: should it be lost, the peer asks
		 * again, and gets it again, for three of its waits */
		uint64_t hold = 3 * c->peer_wait_ms;

		c->rejected = true;
		timewait(c);
		c->deadline_ms = droce_cm_now_ms() +
			(hold < CM_REJ_HOLD_MAX_MS ? hold : CM_REJ_HOLD_MAX_MS);
	} else {
		conn_stop_timer(c);
		set_state(c, CM_IDLE);
	}
	return ret;
}

int
droce_cm_send_dreq(struct cm_conn *c)
{
	struct droce_cm_msg m;

	if (c == NULL || (c->state != CM_ESTABLISHED &&
			  c->state != CM_REP_SENT))
		return -EINVAL;
	c->tid = droce_cm_next_tid();
	hdr(&m, DROCE_CM_ATTR_DREQ, c->tid);
	m.dreq.local_comm_id = c->local_id;
	m.dreq.remote_comm_id = c->remote_id;
	m.dreq.remote_qpn = c->remote_qpn;
	set_state(c, CM_DREQ_SENT);
	return conn_send_wait(c, &m, answer_wait(c->remote_resp_timeout),
			      CM_MAX_RETRIES);
}

int
droce_cm_send_sidr_req(struct cm_conn *c, const struct cm_req_param *p)
{
	struct droce_cm_msg m;
	struct droce_cm_sidr_req *r = &m.sidr_req;

	if (p->private_data_len > DROCE_CM_SIDR_REQ_PRIV_LEN)
		return -EINVAL;
	c->tid = droce_cm_next_tid();
	hdr(&m, DROCE_CM_ATTR_SIDR_REQ, c->tid);
	r->request_id = c->local_id;
	r->pkey = 0xffff;
	r->service_id = p->service_id;
	if (p->private_data_len > 0)
		memcpy(r->private_data, p->private_data, p->private_data_len);
	set_state(c, CM_SIDR_REQ_SENT);
	return conn_send_wait(c, &m, answer_wait(CM_RESPONSE_TIMEOUT),
			      CM_MAX_RETRIES);
}

/* Answer a SIDR_REQ: @p status, and the QP and Q_Key if it is success.
 * The answer is kept a while for a REQ sent again. */
int
droce_cm_send_sidr_rep(struct cm_conn *c, uint8_t status, uint32_t qpn,
		       uint32_t qkey, const void *priv, uint8_t len)
{
	struct droce_cm_msg m;
	int ret;

	if (c == NULL || c->state != CM_SIDR_REQ_RCVD)
		return -EINVAL;
	if (len > DROCE_CM_SIDR_REP_PRIV_LEN)
		return -EINVAL;
	hdr(&m, DROCE_CM_ATTR_SIDR_REP, c->tid);
	m.sidr_rep.request_id = c->remote_id;
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = status == DROCE_CM_SIDR_SUCCESS ? qpn : 0;
	m.sidr_rep.service_id = c->service_id;
	m.sidr_rep.qkey = status == DROCE_CM_SIDR_SUCCESS ? qkey : 0;
	if (len > 0)
		memcpy(m.sidr_rep.private_data, priv, len);
	ret = conn_send(c, &m);
	timewait(c);
	return ret;
}

/*
 * Its user is going (the caller forgets @p c): the connection lives on
 * alone. One that was connected is disconnected first (a DREQ, answered
 * or not, then TimeWait); one being set up is rejected; the rest end
 * now.
 */
void
droce_cm_conn_detach(struct cm_conn *c)
{
	if (c == NULL)
		return;
	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
		droce_cm_send_dreq(c);
		break;
	case CM_REQ_RCVD:
	case CM_MRA_SENT:
		/* the REJ stays a while for the request asked again */
		droce_cm_send_rej(c, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CM_REP_RCVD:
		droce_cm_send_rej(c, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		droce_cm_conn_free(c);
		return;
	case CM_REQ_SENT:
	case CM_MRA_RCVD:
		droce_cm_send_rej(c, DROCE_CM_REJ_TIMEOUT, NULL, 0);
		droce_cm_conn_free(c);
		return;
	case CM_SIDR_REQ_RCVD:
		droce_cm_send_sidr_rep(c, DROCE_CM_SIDR_REJECT, 0, 0, NULL,
				       0);
		break;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		break;
	default:
		droce_cm_conn_free(c);
		return;
	}
	c->ctx = NULL;
}

/* ------------------------------------------------------------------------
 * Events to the user of a connection, if it still has one.
 */

static void
conn_event(struct cm_conn *c, enum cm_conn_event_type type, int status,
	   const struct droce_cm_msg *m)
{
	struct cm_conn_event ev = {
		.type = type,
		.status = status,
		.msg = m,
	};

	if (c->ctx != NULL)
		droce_cm.up->event(c->ctx, &ev);
}

/* The peer ended the connection (or did not answer our DREQ). */
static void
disconnected(struct cm_conn *c, const struct droce_cm_msg *m)
{
	conn_event(c, CM_EV_DISCONNECTED, 0, m);
	timewait(c);
}

/* ------------------------------------------------------------------------
 * Timers.
 */

static void
expired(struct cm_conn *c)
{
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_RCVD:
	case CM_SIDR_REQ_SENT:
		conn_stop_timer(c);
		set_state(c, CM_IDLE);
		conn_event(c, CM_EV_REQ_ERROR, -ETIMEDOUT, NULL);
		break;
	case CM_REP_SENT:
		if (c->ctx != NULL) {
			droce_cm_send_rej(c, DROCE_CM_REJ_TIMEOUT, NULL, 0);
			conn_event(c, CM_EV_REP_ERROR, -ETIMEDOUT, NULL);
		}
		conn_stop_timer(c);
		set_state(c, CM_IDLE);
		break;
	case CM_DREQ_SENT:
		disconnected(c, NULL);
		break;
	case CM_TIMEWAIT:
		c->deadline_ms = 0;
		set_state(c, CM_IDLE);
		if (c->qp_type != IBV_QPT_UD)
			conn_event(c, CM_EV_TIMEWAIT_EXIT, 0, NULL);
		break;
	default:
		conn_stop_timer(c);
		break;
	}
	if (c->ctx == NULL && c->deadline_ms == 0)
		droce_cm_conn_free(c);
}

uint64_t
droce_cm_timers(uint64_t now)
{
	struct cm_conn *c, *next;
	uint64_t first = 0;

	for (c = LIST_FIRST(&droce_cm.conns); c != NULL; c = next) {
		next = LIST_NEXT(c, all);
		if (c->deadline_ms == 0)
			continue;
		if (c->deadline_ms <= now) {
			if (c->mad_valid && c->retries_left > 0) {
				c->retries_left--;
				droce_cm.stats.mads_resent++;
				droce_cm_send(c->dev, &c->dgid, c->sgid_index,
					      c->mad);
				c->deadline_ms = now + c->wait_ms;
			} else {
				expired(c);
				/* c may be gone */
				continue;
			}
		}
		if (first == 0 || c->deadline_ms < first)
			first = c->deadline_ms;
	}
	return first;
}

/* ------------------------------------------------------------------------
 * MADs in.
 */

static void
resend_last(struct cm_conn *c)
{
	droce_cm.stats.dup_received++;
	droce_cm_send(c->dev, &c->dgid, c->sgid_index, c->mad);
}

static void
send_mra(struct cm_conn *c, uint8_t what)
{
	struct droce_cm_msg m;

	hdr(&m, DROCE_CM_ATTR_MRA, c->tid);
	m.mra.local_comm_id = c->local_id;
	m.mra.remote_comm_id = c->remote_id;
	m.mra.msg_mraed = what;
	m.mra.service_timeout = CM_MRA_TIMEOUT;
	send_once(c->dev, &c->dgid, c->sgid_index, &m);
}

static struct cm_conn *
conn_by_remote(const union ibv_gid *gid, uint32_t remote_id,
	       uint64_t remote_guid)
{
	struct cm_conn *c;

	LIST_FOREACH(c, &droce_cm.conns, all)
		if (c->remote_id == remote_id &&
		    c->remote_guid == remote_guid &&
		    memcmp(&c->dgid, gid, sizeof(*gid)) == 0)
			return c;
	return NULL;
}

static struct cm_conn *
conn_by_remote_qpn(const union ibv_gid *gid, uint32_t qpn)
{
	struct cm_conn *c;

	LIST_FOREACH(c, &droce_cm.conns, all)
		if (c->remote_qpn == qpn &&
		    (c->state == CM_ESTABLISHED || c->state == CM_TIMEWAIT ||
		     c->state == CM_DREQ_SENT) &&
		    memcmp(&c->dgid, gid, sizeof(*gid)) == 0)
			return c;
	return NULL;
}

/* Why a new REQ is refused before the layer above sees it (a REJ
 * reason), or 0. */
static uint16_t
req_refusal(const union ibv_gid *sgid, const struct droce_cm_req *r)
{
	if (conn_by_remote_qpn(sgid, r->local_qpn) != NULL)
		/* its QPN still names a connection of ours, or did so
		 * less than a TimeWait ago */
		return DROCE_CM_REJ_STALE_CONN;
	if (r->transport_type > 1)
		return DROCE_CM_REJ_INVALID_TRANSPORT_TYPE;
	return 0;
}

/*
 * A new REQ or SIDR_REQ to the layer above, which finds its listener and
 * gives it a connection (@p conn); or why it is refused: a REJ reason, or
 * for a SIDR_REQ a SIDR status.
 */
static uint16_t
req_up(struct cm_dev *dev, const struct droce_cm_msg *m, bool sidr,
       struct cm_conn **conn)
{
	switch (droce_cm.up->req(dev, m, conn)) {
	case 0:
		return 0;
	case -EINVAL:
	case -ENOENT:
		return sidr ? DROCE_CM_SIDR_UNSUPPORTED :
			DROCE_CM_REJ_INVALID_SERVICE_ID;
	case -EBUSY:
		droce_cm.stats.listen_overflow++;
		return sidr ? DROCE_CM_SIDR_REJECT :
			DROCE_CM_REJ_CONSUMER_DEFINED;
	default:
		return sidr ? DROCE_CM_SIDR_NO_QP : DROCE_CM_REJ_NO_RESOURCES;
	}
}

static void
rx_req(struct cm_dev *dev, const union ibv_gid *sgid, uint8_t sgid_index,
       const struct droce_cm_msg *m)
{
	const struct droce_cm_req *r = &m->req;
	struct cm_conn_event ev = {
		.type = CM_EV_REQ_RECEIVED,
		.msg = m,
	};
	struct cm_conn *c;
	uint16_t reason;

	c = conn_by_remote(sgid, r->local_comm_id, r->local_ca_guid);
	if (c != NULL) {
		/* the peer has not heard our answer yet */
		switch (c->state) {
		case CM_REQ_RCVD:
			droce_cm.stats.dup_received++;
			send_mra(c, DROCE_CM_REF_REQ);
			set_state(c, CM_MRA_SENT);
			break;
		case CM_MRA_SENT:
			droce_cm.stats.dup_received++;
			send_mra(c, DROCE_CM_REF_REQ);
			break;
		case CM_REP_SENT:
			resend_last(c);
			break;
		case CM_TIMEWAIT:
			if (c->rejected) {
				resend_last(c);     /* the REJ */
				break;
			}
			/* fall through */
		default:
			droce_cm.stats.mads_dropped++;
			break;
		}
		return;
	}
	reason = req_refusal(sgid, r);
	if (reason == 0)
		reason = req_up(dev, m, false, &c);
	if (reason != 0) {
		rej_stranger(dev, sgid, sgid_index, m->hdr.tid,
			     r->local_comm_id, DROCE_CM_REF_REQ, reason);
		return;
	}
	c->tid = m->hdr.tid;
	c->remote_id = r->local_comm_id;
	c->remote_guid = r->local_ca_guid;
	c->sgid_index = sgid_index;
	c->sgid = dev->gid[sgid_index];
	c->dgid = *sgid;
	c->remote_qpn = r->local_qpn;
	c->sq_psn = r->starting_psn;
	c->qkey = r->local_qkey;
	c->mtu = r->path_mtu < dev->mtu ? r->path_mtu : dev->mtu;
	c->retry_count = r->retry_count;
	c->peer_rnr_retry = r->rnr_retry_count;
	c->flow_control = r->flow_control;
	c->srq = r->srq;
	c->qp_type = r->transport_type == 1 ? IBV_QPT_UC : IBV_QPT_RC;
	c->remote_resp_timeout = r->local_cm_response_timeout;
	c->peer_wait_ms = answer_wait(r->remote_cm_response_timeout);
	c->retries_left = r->max_cm_retries;
	c->ack_timeout = r->primary.local_ack_timeout ?
		r->primary.local_ack_timeout : CM_ACK_TIMEOUT;
	set_state(c, CM_REQ_RCVD);
	droce_cm.up->event(c->ctx, &ev);
}

static void
rx_rep(struct cm_dev *dev, const union ibv_gid *sgid, uint8_t sgid_index,
       const struct droce_cm_msg *m)
{
	const struct droce_cm_rep *r = &m->rep;
	struct cm_conn *c = conn_find(r->remote_comm_id);

	if (c == NULL || c->dev != dev) {
		rej_stranger(dev, sgid, sgid_index, m->hdr.tid,
			     r->local_comm_id, DROCE_CM_REF_REP,
			     DROCE_CM_REJ_INVALID_COMM_ID);
		return;
	}
	if (c->state == CM_ESTABLISHED && c->remote_id == r->local_comm_id) {
		resend_last(c);         /* our RTU was lost */
		return;
	}
	if (c->state != CM_REQ_SENT && c->state != CM_MRA_RCVD) {
		droce_cm.stats.mads_dropped++;
		return;
	}
	conn_stop_timer(c);
	c->remote_id = r->local_comm_id;
	c->remote_guid = r->local_ca_guid;
	c->remote_qpn = r->local_qpn;
	c->sq_psn = r->starting_psn;
	if (r->initiator_depth < c->responder_resources)
		c->responder_resources = r->initiator_depth;
	if (r->responder_resources < c->initiator_depth)
		c->initiator_depth = r->responder_resources;
	c->peer_rnr_retry = r->rnr_retry_count;
	c->srq = r->srq;
	set_state(c, CM_REP_RCVD);
	/* its user sends the RTU, or a REJ if its QP cannot follow */
	conn_event(c, CM_EV_REP_RECEIVED, 0, m);
}

static void
rx_rtu(const struct droce_cm_msg *m)
{
	struct cm_conn *c = conn_find(m->rtu.remote_comm_id);

	if (c == NULL || c->remote_id != m->rtu.local_comm_id ||
	    (c->state != CM_REP_SENT)) {
		droce_cm.stats.mads_dropped++;
		return;
	}
	conn_stop_timer(c);
	set_state(c, CM_ESTABLISHED);
	conn_event(c, CM_EV_RTU_RECEIVED, 0, m);
}

static void
rx_rej(const struct droce_cm_msg *m)
{
	const struct droce_cm_rej *r = &m->rej;
	struct cm_conn *c = conn_find(r->remote_comm_id);

	if (r->reason < CM_REJ_REASONS)
		droce_cm.stats.rej_received[r->reason]++;
	if (c == NULL) {
		droce_cm.stats.mads_dropped++;
		return;
	}
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_RCVD:
		/* a REJ of our REQ can only name its TID */
		if (m->hdr.tid != c->tid) {
			droce_cm.stats.mads_dropped++;
			return;
		}
		break;
	case CM_REP_SENT:
	case CM_MRA_SENT:
	case CM_REQ_RCVD:
	case CM_REP_RCVD:
		if (r->local_comm_id != c->remote_id) {
			droce_cm.stats.mads_dropped++;
			return;
		}
		break;
	default:
		droce_cm.stats.mads_dropped++;
		return;
	}
	conn_stop_timer(c);
	set_state(c, CM_IDLE);
	if (c->ctx == NULL) {
		droce_cm_conn_free(c);
		return;
	}
	conn_event(c, CM_EV_REJ_RECEIVED, r->reason, m);
}

static void
rx_mra(const struct droce_cm_msg *m)
{
	struct cm_conn *c = conn_find(m->mra.remote_comm_id);

	if (c == NULL) {
		droce_cm.stats.mads_dropped++;
		return;
	}
	if ((c->state == CM_REQ_SENT || c->state == CM_MRA_RCVD) &&
	    m->mra.msg_mraed == DROCE_CM_REF_REQ) {
		c->remote_id = m->mra.local_comm_id;
		set_state(c, CM_MRA_RCVD);
	} else if (c->state == CM_REP_SENT &&
		   m->mra.msg_mraed == DROCE_CM_REF_REP &&
		   m->mra.local_comm_id == c->remote_id) {
		/* stays REP_SENT, with more time */
	} else {
		droce_cm.stats.mads_dropped++;
		return;
	}
	/* the peer needs its service timeout: wait that long again */
	c->deadline_ms = droce_cm_now_ms() + c->wait_ms +
		droce_cm_timeout_ms(m->mra.service_timeout);
}

static void
send_drep(struct cm_dev *dev, const union ibv_gid *dgid, uint8_t sgid_index,
	  uint64_t tid, uint32_t local_id, uint32_t remote_id)
{
	struct droce_cm_msg m;

	hdr(&m, DROCE_CM_ATTR_DREP, tid);
	m.drep.local_comm_id = local_id;
	m.drep.remote_comm_id = remote_id;
	send_once(dev, dgid, sgid_index, &m);
}

static void
rx_dreq(struct cm_dev *dev, const union ibv_gid *sgid, uint8_t sgid_index,
	const struct droce_cm_msg *m)
{
	const struct droce_cm_dreq *r = &m->dreq;
	struct cm_conn *c = conn_find(r->remote_comm_id);

	if (c == NULL || c->remote_id != r->local_comm_id ||
	    c->local_qpn != r->remote_qpn ||
	    memcmp(&c->dgid, sgid, sizeof(*sgid)) != 0) {
		/* a stranger's: answered, and nothing else touched */
		droce_cm.stats.mads_dropped++;
		send_drep(dev, sgid, sgid_index, m->hdr.tid,
			  r->remote_comm_id, r->local_comm_id);
		return;
	}
	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
	case CM_DREQ_SENT:
		c->tid = m->hdr.tid;
		send_drep(dev, sgid, sgid_index, m->hdr.tid, c->local_id,
			  c->remote_id);
		disconnected(c, m);
		break;
	case CM_TIMEWAIT:
		droce_cm.stats.dup_received++;
		send_drep(dev, sgid, sgid_index, m->hdr.tid, c->local_id,
			  c->remote_id);
		break;
	default:
		droce_cm.stats.mads_dropped++;
		break;
	}
}

static void
rx_drep(const struct droce_cm_msg *m)
{
	struct cm_conn *c = conn_find(m->drep.remote_comm_id);

	if (c == NULL || c->state != CM_DREQ_SENT ||
	    c->remote_id != m->drep.local_comm_id) {
		droce_cm.stats.mads_dropped++;
		return;
	}
	disconnected(c, m);
	if (c->ctx == NULL && c->deadline_ms == 0)
		droce_cm_conn_free(c);
}

static void
rx_lap(struct cm_dev *dev, const union ibv_gid *sgid, uint8_t sgid_index,
       const struct droce_cm_msg *m)
{
	struct cm_conn *c = conn_find(m->lap.remote_comm_id);
	struct droce_cm_msg a;

	/* droce has one path: alternate paths are refused */
	hdr(&a, DROCE_CM_ATTR_APR, m->hdr.tid);
	a.apr.remote_comm_id = m->lap.local_comm_id;
	if (c != NULL && c->remote_id == m->lap.local_comm_id) {
		a.apr.local_comm_id = c->local_id;
		a.apr.status = DROCE_CM_APR_UNSUPPORTED;
	} else {
		a.apr.status = DROCE_CM_APR_INVALID_COMM_ID;
	}
	send_once(dev, sgid, sgid_index, &a);
}

static void
sidr_stranger(struct cm_dev *dev, const union ibv_gid *sgid,
	      uint8_t sgid_index, const struct droce_cm_msg *m, uint8_t status)
{
	struct droce_cm_msg a;

	hdr(&a, DROCE_CM_ATTR_SIDR_REP, m->hdr.tid);
	a.sidr_rep.request_id = m->sidr_req.request_id;
	a.sidr_rep.status = status;
	a.sidr_rep.service_id = m->sidr_req.service_id;
	send_once(dev, sgid, sgid_index, &a);
}

static void
rx_sidr_req(struct cm_dev *dev, const union ibv_gid *sgid, uint8_t sgid_index,
	    const struct droce_cm_msg *m)
{
	const struct droce_cm_sidr_req *r = &m->sidr_req;
	struct cm_conn_event ev = {
		.type = CM_EV_REQ_RECEIVED,
		.msg = m,
	};
	struct cm_conn *c;
	uint16_t status;

	LIST_FOREACH(c, &droce_cm.conns, all)
		if ((c->state == CM_SIDR_REQ_RCVD ||
		     (c->state == CM_TIMEWAIT && c->qp_type == IBV_QPT_UD)) &&
		    c->remote_id == r->request_id &&
		    memcmp(&c->dgid, sgid, sizeof(*sgid)) == 0) {
			/* asked again: answered again, or still thought of */
			if (c->state == CM_TIMEWAIT)
				resend_last(c);
			else
				droce_cm.stats.dup_received++;
			return;
		}
	status = req_up(dev, m, true, &c);
	if (status != 0) {
		sidr_stranger(dev, sgid, sgid_index, m, (uint8_t)status);
		return;
	}
	c->tid = m->hdr.tid;
	c->remote_id = r->request_id;
	c->service_id = r->service_id;
	c->sgid_index = sgid_index;
	c->sgid = dev->gid[sgid_index];
	c->dgid = *sgid;
	c->qp_type = IBV_QPT_UD;
	set_state(c, CM_SIDR_REQ_RCVD);
	droce_cm.up->event(c->ctx, &ev);
}

static void
rx_sidr_rep(const struct droce_cm_msg *m)
{
	const struct droce_cm_sidr_rep *r = &m->sidr_rep;
	struct cm_conn *c = conn_find(r->request_id);

	if (c == NULL || c->state != CM_SIDR_REQ_SENT || m->hdr.tid != c->tid) {
		droce_cm.stats.mads_dropped++;
		return;
	}
	conn_stop_timer(c);
	set_state(c, CM_IDLE);
	conn_event(c, CM_EV_SIDR_REP_RECEIVED, r->status, m);
	droce_cm_conn_free(c);
}

void
droce_cm_rx(struct cm_dev *dev, const union ibv_gid *sgid, uint8_t sgid_index,
	    const uint8_t *mad, size_t len)
{
	struct droce_cm_msg m;
	enum droce_cm_mad_err err;

	err = droce_cm_mad_parse(mad, len, &m);
	if (err != DROCE_CM_MAD_OK) {
		CM_LOG("MAD dropped: %s", droce_cm_mad_err_name(err));
		droce_cm.stats.mads_dropped++;
		return;
	}
	CM_LOG("%s in, TID %016llx", droce_cm_attr_name(m.hdr.attr_id),
	       (unsigned long long)m.hdr.tid);
	switch (m.hdr.attr_id) {
	case DROCE_CM_ATTR_REQ:
		rx_req(dev, sgid, sgid_index, &m);
		break;
	case DROCE_CM_ATTR_MRA:
		rx_mra(&m);
		break;
	case DROCE_CM_ATTR_REJ:
		rx_rej(&m);
		break;
	case DROCE_CM_ATTR_REP:
		rx_rep(dev, sgid, sgid_index, &m);
		break;
	case DROCE_CM_ATTR_RTU:
		rx_rtu(&m);
		break;
	case DROCE_CM_ATTR_DREQ:
		rx_dreq(dev, sgid, sgid_index, &m);
		break;
	case DROCE_CM_ATTR_DREP:
		rx_drep(&m);
		break;
	case DROCE_CM_ATTR_LAP:
		rx_lap(dev, sgid, sgid_index, &m);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		rx_sidr_req(dev, sgid, sgid_index, &m);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		rx_sidr_rep(&m);
		break;
	default:
		droce_cm.stats.mads_dropped++;
		break;
	}
}
