/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_cm's connections: connect, listen, accept, reject, establish,
 * disconnect, ECE, and multicast groups; and what the CM tells of them
 * (the calls rdma_cm registers with it: a request for a listener, and
 * each connection's events, made rdma_cm events).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "droce_cma_pvt.h"

/* Default and largest listen backlog (Linux's rdma_cm's). */
#define CMA_MAX_BACKLOG 1024

static uint8_t
cap8(unsigned int v, unsigned int max)
{
	return (uint8_t)(v < max ? v : max);
}

/*
 * What a REQ or SIDR_REQ of @p cid says: the service ID of its port space
 * and port, and rdma_cm's header (the addresses and the source port)
 * before @p param's private data, in @p priv.
 * @return false if that private data is too long.
 */
static bool
req_param(const struct rdma_cm_id *cid, const struct cm_id *id,
	  const struct rdma_conn_param *param, bool sidr,
	  uint8_t priv[DROCE_CM_SIDR_REQ_PRIV_LEN], struct cm_req_param *rp)
{
	size_t max = (sidr ? DROCE_CM_SIDR_REQ_PRIV_LEN :
		      DROCE_CM_REQ_PRIV_LEN) - DROCE_CMA_HDR_LEN;
	struct droce_cma_hdr ch = {
		.ip_version = cid->route.addr.src_addr.sa_family == AF_INET6 ?
			6 : 4,
		.src_port = droce_cma_port(&cid->route.addr.src_addr),
	};

	if (param->private_data_len > max)
		return false;
	memcpy(ch.src_addr, cid->route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(ch.dst_addr, cid->route.addr.addr.ibaddr.dgid.raw, 16);
	droce_cma_hdr_build(&ch, priv);
	if (param->private_data_len > 0)
		memcpy(priv + DROCE_CMA_HDR_LEN, param->private_data,
		       param->private_data_len);
	*rp = (struct cm_req_param){
		.service_id = droce_cma_service_id((uint16_t)cid->ps,
			droce_cma_port(&cid->route.addr.dst_addr)),
		.rate = id->path.rate,
		.traffic_class = id->tos,
		.private_data = priv,
		.private_data_len = (uint8_t)(DROCE_CMA_HDR_LEN +
					      param->private_data_len),
	};
	return true;
}

int
rdma_connect(struct rdma_cm_id *cid, struct rdma_conn_param *param)
{
	struct rdma_conn_param none = {0};
	uint8_t priv[DROCE_CM_SIDR_REQ_PRIV_LEN];
	struct cm_req_param rp;
	struct cm_id *id;
	struct cm_conn *c;
	int ret;

	CM_LOG("call rdma_connect");
	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	if (param == NULL)
		param = &none;
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (id->state != ID_ROUTE_RESOLVED || id->conn != NULL) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(EINVAL);
	}
	c = droce_cm_conn_new(id, id->dev);
	if (c == NULL) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(ENOMEM);
	}
	id->conn = c;
	c->sgid = cid->route.addr.addr.ibaddr.sgid;
	c->dgid = cid->route.addr.addr.ibaddr.dgid;
	if (droce_cm_dev_by_gid(&c->sgid, &ret) == id->dev)
		c->sgid_index = (uint8_t)ret;
	c->local_qpn = cid->qp != NULL ? cid->qp->qp_num : param->qp_num;
	c->qp_type = cid->qp != NULL ? cid->qp->qp_type : cid->qp_type;
	c->responder_resources = cap8(param->responder_resources,
				      id->dev->max_rd_atom);
	c->initiator_depth = cap8(param->initiator_depth,
				  id->dev->max_init_rd_atom);
	c->retry_count = cap8(param->retry_count, 7);
	c->rnr_retry_count = cap8(param->rnr_retry_count, 7);
	c->flow_control = param->flow_control != 0;
	c->srq = cid->qp != NULL ? cid->qp->srq != NULL : param->srq != 0;
	c->mtu = id->dev->mtu;
	c->ack_timeout = id->ack_timeout;
	id->state = ID_CONNECT;
	if (!req_param(cid, id, param, c->qp_type == IBV_QPT_UD, priv, &rp))
		ret = -EINVAL;
	else if (c->qp_type == IBV_QPT_UD)
		ret = droce_cm_send_sidr_req(c, &rp);
	else
		ret = droce_cm_send_req(c, &rp);
	if (ret != 0) {
		droce_cm_conn_free(c);
		id->conn = NULL;
		id->state = ID_ROUTE_RESOLVED;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	if (ret != 0)
		return droce_cma_fail(-ret);
	return droce_cma_sync_wait(id, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_listen(struct rdma_cm_id *cid, int backlog)
{
	struct cm_id *id;
	struct sockaddr_storage any;
	int ret = 0;

	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (!id->bound) {
		droce_cma_any_of(AF_INET, &any);
		ret = droce_cma_bind(id, (struct sockaddr *)&any);
	}
	if (ret == 0 && id->state != ID_ADDR_BOUND)
		ret = -EINVAL;
	if (ret == 0) {
		/* no other listener on the port */
		struct cm_id *o;

		LIST_FOREACH(o, &droce_cma.ids, all)
			if (o != id && o->state == ID_LISTEN &&
			    o->id.ps == cid->ps &&
			    droce_cma_port(&o->id.route.addr.src_addr) ==
			    droce_cma_port(&cid->route.addr.src_addr) &&
			    (o->any_addr || id->any_addr ||
			     memcmp(&o->id.route.addr.addr.ibaddr.sgid,
				    &cid->route.addr.addr.ibaddr.sgid,
				    16) == 0))
				ret = -EADDRINUSE;
	}
	if (ret == 0) {
		id->backlog = backlog > 0 && backlog < CMA_MAX_BACKLOG ?
			backlog : CMA_MAX_BACKLOG;
		id->state = ID_LISTEN;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

int
rdma_accept(struct rdma_cm_id *cid, struct rdma_conn_param *param)
{
	struct rdma_conn_param def = {0};
	struct cm_id *id;
	struct cm_conn *c;
	int ret;

	CM_LOG("call rdma_accept");
	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c != NULL && c->state == CM_SIDR_REQ_RCVD) {
		/* UD: the QP and Q_Key to send to, in a SIDR_REP */
		droce_cma_child_answered(id);
		ret = droce_cm_send_sidr_rep(c, DROCE_CM_SIDR_SUCCESS,
			cid->qp != NULL ? cid->qp->qp_num :
			param != NULL ? param->qp_num : 0, RDMA_UDP_QKEY,
			param != NULL ? param->private_data : NULL,
			param != NULL ? param->private_data_len : 0);
		if (ret == 0)
			id->state = ID_ESTABLISHED;
		pthread_mutex_unlock(&droce_cm.lock);
		if (cid->event != NULL) {
			rdma_ack_cm_event(cid->event);
			cid->event = NULL;
		}
		return ret == 0 ? 0 : droce_cma_fail(-ret);
	}
	if (c == NULL || (c->state != CM_REQ_RCVD &&
			  c->state != CM_MRA_SENT)) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(EINVAL);
	}
	if (param == NULL) {
		def.responder_resources = id->req.initiator_depth;
		def.initiator_depth = id->req.responder_resources;
		def.rnr_retry_count = 7;
		param = &def;
	}
	droce_cma_child_answered(id);
	c->local_qpn = cid->qp != NULL ? cid->qp->qp_num : param->qp_num;
	c->responder_resources = cap8(param->responder_resources,
				      id->dev->max_rd_atom);
	c->initiator_depth = cap8(param->initiator_depth,
				  id->dev->max_init_rd_atom);
	/* it may not ask for more READs than the peer answers */
	if (c->initiator_depth > id->req.responder_resources)
		c->initiator_depth = id->req.responder_resources;
	c->rnr_retry_count = cap8(param->rnr_retry_count, 7);
	c->flow_control = param->flow_control != 0;
	if (cid->qp != NULL) {
		c->srq = cid->qp->srq != NULL;
		ret = droce_cma_modify_qp(id, IBV_QPS_RTR);
		if (ret == 0)
			ret = droce_cma_modify_qp(id, IBV_QPS_RTS);
		if (ret != 0) {
			pthread_mutex_unlock(&droce_cm.lock);
			return droce_cma_fail(-ret);
		}
	} else {
		c->srq = param->srq != 0;
	}
	ret = droce_cm_send_rep(c, param->private_data,
				param->private_data_len);
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	if (cid->event != NULL) {
		rdma_ack_cm_event(cid->event);
		cid->event = NULL;
	}
	if (ret != 0)
		return droce_cma_fail(-ret);
	return droce_cma_sync_wait(id, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_reject(struct rdma_cm_id *cid, const void *private_data,
	    uint8_t private_data_len)
{
	struct cm_id *id;
	struct cm_conn *c;
	int ret;

	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c != NULL && c->state == CM_SIDR_REQ_RCVD) {
		droce_cma_child_answered(id);
		ret = droce_cm_send_sidr_rep(c, DROCE_CM_SIDR_REJECT, 0, 0,
					     private_data, private_data_len);
		id->state = ID_DISCONNECTED;
		pthread_mutex_unlock(&droce_cm.lock);
		return ret == 0 ? 0 : droce_cma_fail(-ret);
	}
	if (c == NULL || (c->state != CM_REQ_RCVD &&
			  c->state != CM_MRA_SENT)) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(EINVAL);
	}
	droce_cma_child_answered(id);
	ret = droce_cm_send_rej(c, DROCE_CM_REJ_CONSUMER_DEFINED,
				private_data, private_data_len);
	if (ret == 0) {
		/* the connection lives on alone, its REJ kept for a REQ
		 * asked again, until its TimeWait ends */
		c->ctx = NULL;
		id->conn = NULL;
		id->state = ID_DISCONNECTED;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

int
rdma_reject_ece(struct rdma_cm_id *cid, const void *private_data,
		uint8_t private_data_len)
{
	return rdma_reject(cid, private_data, private_data_len);
}

int
rdma_establish(struct rdma_cm_id *cid)
{
	struct cm_id *id;
	int ret;

	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	ret = droce_cm_send_rtu(id->conn);
	if (ret == 0)
		id->state = ID_ESTABLISHED;
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

int
rdma_notify(struct rdma_cm_id *cid, enum ibv_event_type event)
{
	struct cm_id *id;
	struct cm_conn *c;
	struct cm_event *e;

	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c == NULL) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(EINVAL);
	}
	if (event == IBV_EVENT_COMM_EST && c->state == CM_REP_SENT) {
		/* data came before the RTU: the connection is up */
		c->mad_valid = false;
		c->deadline_ms = 0;
		c->state = CM_ESTABLISHED;
		id->state = ID_ESTABLISHED;
		e = droce_cma_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		if (e != NULL)
			droce_cma_post(e);
	}
	pthread_mutex_unlock(&droce_cm.lock);
	return 0;
}

int
rdma_disconnect(struct rdma_cm_id *cid)
{
	struct cm_id *id;
	struct cm_conn *c;
	int ret = 0;

	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c == NULL && id->state != ID_DISCONNECTED) {
		ret = -EINVAL;
	} else if (c != NULL) {
		if (cid->qp != NULL)
			droce_cma_modify_qp(id, IBV_QPS_ERR);
		if (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT)
			droce_cm_send_dreq(c);
		else if (c->state == CM_REQ_SENT || c->state == CM_MRA_RCVD ||
			 c->state == CM_REP_RCVD)
			ret = -EINVAL;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

int
rdma_set_local_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	if (cid == NULL || ece == NULL)
		return droce_cma_fail(EINVAL);
	cm_id_of(cid)->local_ece = *ece;
	return 0;
}

int
rdma_get_remote_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	/* droce's CM negotiates no vendor options: the peer's are none */
	if (cid == NULL || ece == NULL)
		return droce_cma_fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

/*
 * RoCE multicast needs no MADs: the group's GID is its IP address (the
 * IPv4-mapped form for IPv4), the join is the QP's attachment, and the
 * event gives what a sender needs: the group's address handle, QPN
 * 0xffffff and rdma_cm's UD Q_Key.
 */
int
rdma_join_multicast_ex(struct rdma_cm_id *cid,
		       struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	struct cm_id *id;
	struct cm_event *e;
	union ibv_gid mgid;
	bool send_only;
	unsigned int i;
	int ret = 0;

	if (cid == NULL || attr == NULL || attr->addr == NULL ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    (attr->comp_mask & ~(RDMA_CM_JOIN_MC_ATTR_ADDRESS |
				 RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)))
		return droce_cma_fail(EINVAL);
	if ((attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) &&
	    attr->join_flags > RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return droce_cma_fail(EINVAL);
	if (attr->addr->sa_family != AF_INET &&
	    attr->addr->sa_family != AF_INET6)
		return droce_cma_fail(EAFNOSUPPORT);
	send_only = (attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) &&
		attr->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	droce_cma_addr_to_gid(attr->addr, &mgid);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (id->dev == NULL || cid->qp_type != IBV_QPT_UD) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < id->nmc; i++)
		if (memcmp(&id->mc[i].mgid, &mgid, sizeof(mgid)) == 0) {
			ret = -EADDRINUSE;
			goto out;
		}
	if (id->nmc == CM_MAX_MC) {
		ret = -ENOMEM;
		goto out;
	}
	if (cid->qp != NULL && !send_only) {
		ret = ibv_attach_mcast(cid->qp, &mgid, 0);
		if (ret != 0) {
			ret = -ret;
			goto out;
		}
	}
	id->mc[id->nmc].mgid = mgid;
	id->mc[id->nmc].attached = cid->qp != NULL && !send_only;
	id->nmc++;
	e = droce_cma_event(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	if (e != NULL) {
		droce_cma_ah_attr(id, &e->ev.param.ud.ah_attr);
		e->ev.param.ud.ah_attr.grh.dgid = mgid;
		e->ev.param.ud.qp_num = 0xffffff;
		e->ev.param.ud.qkey = RDMA_UDP_QKEY;
		e->ev.param.ud.private_data = context;
		droce_cma_post(e);
	}
out:
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

int
rdma_join_multicast(struct rdma_cm_id *cid, struct sockaddr *addr,
		    void *context)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
			RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = addr,
	};

	return rdma_join_multicast_ex(cid, &attr, context);
}

int
rdma_leave_multicast(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	struct cm_id *id;
	union ibv_gid mgid;
	unsigned int i;
	int ret = -EADDRNOTAVAIL;

	if (cid == NULL || addr == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	droce_cma_addr_to_gid(addr, &mgid);
	pthread_mutex_lock(&droce_cm.lock);
	for (i = 0; i < id->nmc; i++) {
		if (memcmp(&id->mc[i].mgid, &mgid, sizeof(mgid)) != 0)
			continue;
		if (id->mc[i].attached && cid->qp != NULL)
			ibv_detach_mcast(cid->qp, &mgid, 0);
		id->mc[i] = id->mc[--id->nmc];
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

/* ------------------------------------------------------------------------
 * What the CM tells rdma_cm of its connections.
 */

/*
 * The port space and port REQ or SIDR_REQ @p m asks for, from its service
 * ID, and rdma_cm's header at the start of its private data.
 * @return false if either is not rdma_cm's.
 */
static bool
req_addr(const struct droce_cm_msg *m, uint16_t *ps, uint16_t *port,
	 struct droce_cma_hdr *hdr)
{
	if (m->hdr.attr_id == DROCE_CM_ATTR_SIDR_REQ)
		return droce_cma_service_split(m->sidr_req.service_id, ps,
					       port) &&
			droce_cma_hdr_parse(m->sidr_req.private_data,
					    DROCE_CM_SIDR_REQ_PRIV_LEN,
					    hdr) == 0;
	return droce_cma_service_split(m->req.service_id, ps, port) &&
		droce_cma_hdr_parse(m->req.private_data,
				    DROCE_CM_REQ_PRIV_LEN, hdr) == 0;
}

/* A REQ or SIDR_REQ for @p dev: its listener's child, and the child's
 * connection. */
static int
cma_req(struct cm_dev *dev, const struct droce_cm_msg *m,
	struct cm_conn **conn)
{
	struct cm_id *listener, *child;
	struct droce_cma_hdr hdr;
	uint16_t ps, port;
	struct cm_conn *c;

	if (!req_addr(m, &ps, &port, &hdr))
		return -EINVAL;
	listener = droce_cma_listener(dev, ps, port, hdr.dst_addr);
	if (listener == NULL)
		return -ENOENT;
	if (listener->pending >= listener->backlog)
		return -EBUSY;
	child = droce_cma_child(listener, dev);
	c = child != NULL ? droce_cm_conn_new(child, dev) : NULL;
	if (c == NULL) {
		if (child != NULL)
			droce_cma_child_drop(child);
		return -ENOMEM;
	}
	child->conn = c;
	*conn = c;
	return 0;
}

static void
post(struct cm_event *e)
{
	if (e != NULL)
		droce_cma_post(e);
}

static void
ev_priv(struct cm_event *e, const uint8_t *priv, size_t len)
{
	memcpy(e->priv, priv, len);
	e->ev.param.conn.private_data = e->priv;
	e->ev.param.conn.private_data_len = (uint8_t)len;
}

/* The addresses and the path of a listener's child, from its request. */
static void
child_route(struct cm_id *child, const struct cm_conn *c, uint16_t port,
	    uint16_t peer_port, enum ibv_mtu mtu)
{
	struct rdma_route *r = &child->id.route;

	droce_cma_gid_to_addr(&c->sgid, port, &r->addr.src_storage);
	droce_cma_gid_to_addr(&c->dgid, peer_port, &r->addr.dst_storage);
	r->addr.addr.ibaddr.sgid = c->sgid;
	r->addr.addr.ibaddr.dgid = c->dgid;
	r->addr.addr.ibaddr.pkey = htobe16(0xffff);
	child->path.sgid = c->sgid;
	child->path.dgid = c->dgid;
	child->path.mtu = (uint8_t)mtu;
	child->path.pkey = htobe16(0xffff);
	child->path.hop_limit = CM_HOP_LIMIT;
	child->path.packet_life_time = CM_PACKET_LIFETIME;
}

/* The child's connect request, to its listener's channel. */
static void
req_received(struct cm_id *child, const struct droce_cm_msg *m)
{
	bool sidr = m->hdr.attr_id == DROCE_CM_ATTR_SIDR_REQ;
	struct cm_id *listener = child->listener;
	struct cm_conn *c = child->conn;
	struct droce_cma_hdr hdr;
	uint16_t ps, port;
	struct cm_event *e;

	if (sidr) {
		memset(&child->req, 0, sizeof(child->req));
		child->req.service_id = m->sidr_req.service_id;
	} else {
		child->req = m->req;
	}
	child->state = ID_CONNECT;
	/* (as cma_req() found them) */
	req_addr(m, &ps, &port, &hdr);
	child_route(child, c, port, hdr.src_port,
		    sidr ? child->dev->mtu : c->mtu);
	listener->pending++;
	e = droce_cma_event(child, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (e == NULL)
		return;
	e->ev.listen_id = &listener->id;
	if (sidr) {
		memcpy(e->priv, m->sidr_req.private_data + DROCE_CMA_HDR_LEN,
		       DROCE_CM_SIDR_REQ_PRIV_LEN - DROCE_CMA_HDR_LEN);
		e->ev.param.ud.private_data = e->priv;
		e->ev.param.ud.private_data_len =
			DROCE_CM_SIDR_REQ_PRIV_LEN - DROCE_CMA_HDR_LEN;
		droce_cma_ah_attr(child, &e->ev.param.ud.ah_attr);
	} else {
		ev_priv(e, m->req.private_data + DROCE_CMA_HDR_LEN,
			DROCE_CM_REQ_PRIV_LEN - DROCE_CMA_HDR_LEN);
		/* from the listener's side: what the peer offers to answer
		 * is what it may ask, and the other way round */
		e->ev.param.conn.responder_resources = m->req.initiator_depth;
		e->ev.param.conn.initiator_depth = m->req.responder_resources;
		e->ev.param.conn.flow_control = m->req.flow_control;
		e->ev.param.conn.retry_count = m->req.retry_count;
		e->ev.param.conn.rnr_retry_count = m->req.rnr_retry_count;
		e->ev.param.conn.srq = m->req.srq;
		e->ev.param.conn.qp_num = m->req.local_qpn;
	}
	droce_cma_post(e);
}

/* The REP to our REQ: an id with a QP moves it to RTR and RTS and
 * answers with the RTU at once; one without leaves both to the
 * application (rdma_establish). */
static void
rep_received(struct cm_id *id, const struct droce_cm_rep *r)
{
	struct cm_event *e;
	int ret;

	if (id->id.qp != NULL) {
		ret = droce_cma_modify_qp(id, IBV_QPS_RTR);
		if (ret == 0)
			ret = droce_cma_modify_qp(id, IBV_QPS_RTS);
		if (ret != 0) {
			droce_cm_send_rej(id->conn, DROCE_CM_REJ_NO_QP, NULL,
					  0);
			id->state = ID_ROUTE_RESOLVED;
			post(droce_cma_event(id, RDMA_CM_EVENT_CONNECT_ERROR,
					     ret));
			return;
		}
		droce_cm_send_rtu(id->conn);
		id->state = ID_ESTABLISHED;
		e = droce_cma_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	} else {
		e = droce_cma_event(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	}
	if (e == NULL)
		return;
	ev_priv(e, r->private_data, DROCE_CM_REP_PRIV_LEN);
	e->ev.param.conn.responder_resources = r->initiator_depth;
	e->ev.param.conn.initiator_depth = r->responder_resources;
	e->ev.param.conn.flow_control = r->flow_control;
	e->ev.param.conn.rnr_retry_count = r->rnr_retry_count;
	e->ev.param.conn.srq = r->srq;
	e->ev.param.conn.qp_num = r->local_qpn;
	droce_cma_post(e);
}

/* The answer to our SIDR_REQ: the connection ends with it. */
static void
sidr_rep_received(struct cm_id *id, const struct droce_cm_sidr_rep *r)
{
	struct cm_event *e;

	if (r->status == DROCE_CM_SIDR_SUCCESS) {
		id->state = ID_ESTABLISHED;
		e = droce_cma_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
	} else {
		id->state = ID_ROUTE_RESOLVED;
		e = droce_cma_event(id, RDMA_CM_EVENT_UNREACHABLE, r->status);
	}
	if (e != NULL) {
		memcpy(e->priv, r->private_data, DROCE_CM_SIDR_REP_PRIV_LEN);
		e->ev.param.ud.private_data = e->priv;
		e->ev.param.ud.private_data_len = DROCE_CM_SIDR_REP_PRIV_LEN;
		droce_cma_ah_attr(id, &e->ev.param.ud.ah_attr);
		e->ev.param.ud.qp_num = r->qpn;
		e->ev.param.ud.qkey = r->qkey;
		droce_cma_post(e);
	}
	id->conn = NULL;        /* the CM frees it */
}

static void
cma_conn_event(void *ctx, const struct cm_conn_event *ev)
{
	struct cm_id *id = ctx;
	struct cm_event *e;

	switch (ev->type) {
	case CM_EV_REQ_RECEIVED:
		req_received(id, ev->msg);
		break;
	case CM_EV_REP_RECEIVED:
		rep_received(id, &ev->msg->rep);
		break;
	case CM_EV_RTU_RECEIVED:
		id->state = ID_ESTABLISHED;
		post(droce_cma_event(id, RDMA_CM_EVENT_ESTABLISHED, 0));
		break;
	case CM_EV_REJ_RECEIVED:
		/* (its QP goes to the error state as the event is taken, in
		 * the application's thread: rdma_get_cm_event) */
		id->state = ID_DISCONNECTED;
		e = droce_cma_event(id, RDMA_CM_EVENT_REJECTED, ev->status);
		if (e != NULL) {
			ev_priv(e, ev->msg->rej.private_data,
				DROCE_CM_REJ_PRIV_LEN);
			droce_cma_post(e);
		}
		break;
	case CM_EV_SIDR_REP_RECEIVED:
		sidr_rep_received(id, &ev->msg->sidr_rep);
		break;
	case CM_EV_REQ_ERROR:
		id->state = ID_ROUTE_RESOLVED;
		post(droce_cma_event(id, RDMA_CM_EVENT_UNREACHABLE,
				     ev->status));
		break;
	case CM_EV_REP_ERROR:
		id->state = ID_DISCONNECTED;
		post(droce_cma_event(id, RDMA_CM_EVENT_CONNECT_ERROR,
				     ev->status));
		break;
	case CM_EV_DISCONNECTED:
		/* Its QP is left alone, as librdmacm leaves it: the
		 * application may have destroyed it already (perftest
		 * destroys its QPs with ibv_destroy_qp and exits, leaving
		 * the id to the CM), and rdma_disconnect() moves it to the
		 * error state. */
		id->state = ID_DISCONNECTED;
		post(droce_cma_event(id, RDMA_CM_EVENT_DISCONNECTED, 0));
		break;
	case CM_EV_TIMEWAIT_EXIT:
		post(droce_cma_event(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0));
		break;
	}
}

/* The process exits: each id's connection is ended on the wire. */
static void
cma_exit(void)
{
	struct cm_id *id;

	LIST_FOREACH(id, &droce_cma.ids, all) {
		droce_cm_conn_detach(id->conn);
		id->conn = NULL;
	}
}

static const struct cm_upcalls cma_upcalls = {
	.req = cma_req,
	.event = cma_conn_event,
	.exit = cma_exit,
};

int
droce_cma_init(void)
{
	return droce_cm_init(&cma_upcalls);
}
