/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_cm's addresses and routes: binding, address and route resolution
 * from the devices' own GIDs and neighbour tables, ports, devices,
 * options.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "droce_cma_pvt.h"

int
rdma_bind_addr(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	int ret;

	if (cid == NULL || addr == NULL)
		return droce_cma_fail(EINVAL);
	pthread_mutex_lock(&droce_cm.lock);
	ret = droce_cma_bind(cm_id_of(cid), addr);
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

void
droce_cma_any_of(int family, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = (sa_family_t)family;
}

int
rdma_resolve_addr(struct rdma_cm_id *cid, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	struct cm_id *id;
	struct cm_dev *dev;
	struct cm_event *e;
	struct sockaddr_storage any;
	union ibv_gid dgid;
	struct ibv_ah *ah;
	int index = 0, ret = 0;
	bool own;

	CM_LOG("call rdma_resolve_addr");
	(void)timeout_ms;
	if (cid == NULL || dst_addr == NULL)
		return droce_cma_fail(EINVAL);
	if (dst_addr->sa_family != AF_INET && dst_addr->sa_family != AF_INET6)
		return droce_cma_fail(EAFNOSUPPORT);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (!id->bound) {
		if (src_addr == NULL || src_addr->sa_family == 0) {
			droce_cma_any_of(dst_addr->sa_family, &any);
			src_addr = (struct sockaddr *)&any;
		}
		ret = droce_cma_bind(id, src_addr);
	}
	if (ret == 0 && id->state != ID_ADDR_BOUND &&
	    id->state != ID_ADDR_RESOLVED)
		ret = -EINVAL;
	if (ret != 0) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(-ret);
	}
	if (droce_cma_addr_loopback(dst_addr)) {
		/* as Linux's rdma_cm: to the id's own device, or the one a
		 * loopback address stands for, from and to its address */
		if (id->dev != NULL)
			dgid = cid->route.addr.addr.ibaddr.sgid;
		else if ((dev = droce_cma_loopback_dev(dst_addr->sa_family,
						       &index)) != NULL)
			dgid = dev->gid[index];
		else
			memset(&dgid, 0, sizeof(dgid));
	} else {
		droce_cma_addr_to_gid(dst_addr, &dgid);
	}
	dev = droce_cma_route_dev(id, &dgid, &index);
	own = dev != NULL && droce_cm_dev_by_gid(&dgid, NULL) == dev;
	memset(&cid->route.addr.dst_storage, 0,
	       sizeof(cid->route.addr.dst_storage));
	memcpy(&cid->route.addr.dst_addr, dst_addr,
	       droce_cma_addr_len(dst_addr));
	pthread_mutex_unlock(&droce_cm.lock);

	/* the neighbour, resolved out of the lock: ARP or ND may take
	 * seconds, and the CM's thread must go on meanwhile; a device's
	 * own address has none (its frames loop back inside it) */
	if (dev == NULL) {
		ret = -ENETUNREACH;
	} else if (own) {
		ret = 0;
	} else {
		struct ibv_ah_attr aa;

		droce_cm_ah_attr(&aa, &dgid, (uint8_t)index, 0);
		ah = ibv_create_ah(dev->pd, &aa);
		if (ah == NULL)
			ret = -(errno ? errno : EHOSTUNREACH);
		else
			ibv_destroy_ah(ah);
	}

	pthread_mutex_lock(&droce_cm.lock);
	if (ret == 0) {
		id->dev = dev;
		cid->verbs = dev->ctx;
		cid->port_num = 1;
		cid->route.addr.addr.ibaddr.sgid = dev->gid[index];
		cid->route.addr.addr.ibaddr.dgid = dgid;
		cid->route.addr.addr.ibaddr.pkey = htobe16(0xffff);
		if (id->any_addr) {
			/* the wildcard is now this device's address */
			uint16_t port = droce_cma_port(
				&cid->route.addr.src_addr);

			droce_cma_gid_to_addr(&dev->gid[index], port,
					      &cid->route.addr.src_storage);
		}
		id->state = ID_ADDR_RESOLVED;
		e = droce_cma_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	} else {
		e = droce_cma_event(id, RDMA_CM_EVENT_ADDR_ERROR, ret);
	}
	if (e != NULL)
		droce_cma_post(e);
	pthread_mutex_unlock(&droce_cm.lock);
	if (e == NULL)
		return droce_cma_fail(ENOMEM);
	return droce_cma_sync_wait(id, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int
rdma_resolve_route(struct rdma_cm_id *cid, int timeout_ms)
{
	struct cm_id *id;
	struct ibv_port_attr pa;
	struct cm_event *e;
	struct ibv_sa_path_rec *p;

	CM_LOG("call rdma_resolve_route");
	(void)timeout_ms;
	if (cid == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (id->state != ID_ADDR_RESOLVED) {
		pthread_mutex_unlock(&droce_cm.lock);
		return droce_cma_fail(EINVAL);
	}
	if (ibv_query_port(id->dev->ctx, 1, &pa) != 0 ||
	    pa.state != IBV_PORT_ACTIVE) {
		/* no route while the port is down: the id stays resolved
		 * to its address, to be asked again */
		e = droce_cma_event(id, RDMA_CM_EVENT_ROUTE_ERROR,
				    -ENETUNREACH);
		if (e != NULL)
			droce_cma_post(e);
		pthread_mutex_unlock(&droce_cm.lock);
		if (e == NULL)
			return droce_cma_fail(ENOMEM);
		return droce_cma_sync_wait(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	}
	/* RoCE's path is the device's: its GIDs, MTU and hop limit */
	p = &id->path;
	memset(p, 0, sizeof(*p));
	p->dgid = cid->route.addr.addr.ibaddr.dgid;
	p->sgid = cid->route.addr.addr.ibaddr.sgid;
	p->hop_limit = CM_HOP_LIMIT;
	p->traffic_class = id->tos;
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htobe16(0xffff);
	p->mtu_selector = 2;
	p->mtu = (uint8_t)id->dev->mtu;
	p->rate_selector = 2;
	p->rate = IBV_RATE_10_GBPS;
	p->packet_life_time_selector = 2;
	p->packet_life_time = CM_PACKET_LIFETIME;
	cid->route.path_rec = p;
	cid->route.num_paths = 1;
	id->state = ID_ROUTE_RESOLVED;
	e = droce_cma_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	if (e != NULL)
		droce_cma_post(e);
	pthread_mutex_unlock(&droce_cm.lock);
	if (e == NULL)
		return droce_cma_fail(ENOMEM);
	return droce_cma_sync_wait(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

__be16
rdma_get_src_port(struct rdma_cm_id *cid)
{
	return htons(droce_cma_port(&cid->route.addr.src_addr));
}

__be16
rdma_get_dst_port(struct rdma_cm_id *cid)
{
	return htons(droce_cma_port(&cid->route.addr.dst_addr));
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int i;

	if (droce_cma_init() != 0)
		return NULL;
	list = calloc((size_t)droce_cm.ndevs + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < droce_cm.ndevs; i++)
		list[i] = droce_cm.dev_list[i];
	if (num_devices != NULL)
		*num_devices = droce_cm.ndevs;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

int
rdma_set_option(struct rdma_cm_id *cid, int level, int optname,
		void *optval, size_t optlen)
{
	struct cm_id *id;

	if (cid == NULL || optval == NULL)
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	if (level == RDMA_OPTION_IB)
		/* path records are InfiniBand's; RoCE's path is the
		 * device's own */
		return droce_cma_fail(optname == RDMA_OPTION_IB_PATH ?
				      EINVAL : ENOSYS);
	if (level != RDMA_OPTION_ID)
		return droce_cma_fail(EINVAL);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return droce_cma_fail(EINVAL);
		id->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int))
			return droce_cma_fail(EINVAL);
		id->reuseaddr = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return droce_cma_fail(EINVAL);
		id->afonly = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return droce_cma_fail(EINVAL);
		id->ack_timeout = *(uint8_t *)optval & 31;
		return 0;
	default:
		return droce_cma_fail(ENOSYS);
	}
}
