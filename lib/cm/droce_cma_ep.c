/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The endpoint calls (<rdma/rdma_verbs.h>'s way of using the CM): ids made
 * without a channel, synchronous, with their QP.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "droce_cma_pvt.h"

int
rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res,
	       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cm_id *id;
	enum rdma_port_space ps;
	int err;

	if (out == NULL || res == NULL)
		return droce_cma_fail(EINVAL);
	ps = res->ai_port_space != 0 ? (enum rdma_port_space)res->ai_port_space :
		RDMA_PS_TCP;
	if (rdma_create_id(NULL, &cid, NULL, ps) != 0)
		return -1;
	id = cm_id_of(cid);
	if (qp_init_attr != NULL)
		qp_init_attr->qp_type = res->ai_qp_type != 0 ?
			(enum ibv_qp_type)res->ai_qp_type : IBV_QPT_RC;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cid, res->ai_src_addr) != 0)
			goto err;
		if (qp_init_attr != NULL) {
			id->ep_attr = malloc(sizeof(*qp_init_attr));
			if (id->ep_attr == NULL) {
				errno = ENOMEM;
				goto err;
			}
			*id->ep_attr = *qp_init_attr;
		}
		cid->pd = pd;
		*out = cid;
		return 0;
	}
	if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr,
			      2000) != 0 ||
	    rdma_resolve_route(cid, 2000) != 0)
		goto err;
	if (qp_init_attr != NULL) {
		if (rdma_create_qp(cid, pd, qp_init_attr) != 0)
			goto err;
	} else if (pd != NULL) {
		cid->pd = pd;
	}
	*out = cid;
	return 0;
err:
	err = errno;
	rdma_destroy_id(cid);
	errno = err;
	return -1;
}

void
rdma_destroy_ep(struct rdma_cm_id *cid)
{
	if (cid->qp != NULL)
		rdma_destroy_qp(cid);
	if (cid->srq != NULL)
		rdma_destroy_srq(cid);
	rdma_destroy_id(cid);
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct cm_id *l;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *cid;
	int err;

	if (listen == NULL || out == NULL)
		return droce_cma_fail(EINVAL);
	l = cm_id_of(listen);
	if (!droce_cma_is_sync(l))
		return droce_cma_fail(EINVAL);
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &ev) != 0)
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		err = ev->status != 0 ? -ev->status : EINVAL;
		rdma_ack_cm_event(ev);
		if (err > 0)
			return droce_cma_fail(err);
	}
	cid = ev->id;
	/* its own synchronous channel from now on */
	pthread_mutex_lock(&droce_cm.lock);
	err = droce_cma_migrate(cm_id_of(cid), NULL);
	pthread_mutex_unlock(&droce_cm.lock);
	if (err != 0) {
		errno = -err;
		goto err;
	}
	cid->event = ev;
	if (l->ep_attr != NULL) {
		struct ibv_qp_init_attr qa = *l->ep_attr;

		if (rdma_create_qp(cid, listen->pd, &qa) != 0)
			goto err;
	} else if (listen->pd != NULL) {
		cid->pd = listen->pd;
	}
	*out = cid;
	return 0;
err:
	err = errno;
	rdma_reject(cid, NULL, 0);
	if (cid->event == NULL)
		rdma_ack_cm_event(ev);
	rdma_destroy_id(cid);
	errno = err;
	return -1;
}
