/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The rdma_cm API (<rdma/rdma_cma.h>, librdmacm's man pages) over
 * droce's CM: event channels whose fd is an eventfd readable while
 * events wait, ids and their states, address and route resolution from
 * the devices' own GIDs and neighbour tables, QPs made and moved through
 * INIT, RTR and RTS with what REQ and REP negotiated, and the
 * synchronous mode of ids made without a channel (rdma_create_ep,
 * rdma_get_request).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/rdma_verbs.h>

#include "droce_cm_pvt.h"

/* Default and largest listen backlog (Linux's rdma_cm's). */
#define CMA_MAX_BACKLOG 1024

static int
fail(int err)
{
	errno = err;
	return -1;
}

static struct cm_channel *
chan_of(struct rdma_event_channel *ch)
{
	return (struct cm_channel *)((char *)ch -
				     offsetof(struct cm_channel, ch));
}

/* ------------------------------------------------------------------------
 * Event channels and events.
 */

static struct cm_channel *
channel_new(bool sync)
{
	struct cm_channel *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ch.fd = eventfd(0, EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	TAILQ_INIT(&c->events);
	c->sync = sync;
	return c;
}

static void
channel_free(struct cm_channel *c)
{
	close(c->ch.fd);
	free(c);
}

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cm_channel *c;

	if (droce_cm_init() != 0)
		return NULL;
	c = channel_new(false);
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	return &c->ch;
}

/*
 * A thread still waiting in rdma_get_cm_event() keeps the channel: it
 * waits on, as a read of the fd of Linux's channel does once another
 * thread closed it (rping's CM thread does, while its main thread ends).
 */
void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *c = chan_of(channel);
	uint64_t one = 1;

	pthread_mutex_lock(&droce_cm.lock);
	if (c->waiters > 0) {
		c->dead = true;
		if (write(c->ch.fd, &one, sizeof(one)) < 0)
			CM_LOG("event fd: %s", strerror(errno));
		pthread_mutex_unlock(&droce_cm.lock);
		return;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	channel_free(c);
}

/* The fd is readable exactly while events wait: written when the first
 * comes, read when the last goes, under the lock. */
static void
channel_push(struct cm_channel *c, struct cm_event *e)
{
	uint64_t one = 1;

	TAILQ_INSERT_TAIL(&c->events, e, next);
	droce_cm.events_queued++;
	if (c->nevents++ == 0 && write(c->ch.fd, &one, sizeof(one)) < 0)
		CM_LOG("event fd: %s", strerror(errno));
}

static void
channel_remove(struct cm_channel *c, struct cm_event *e)
{
	uint64_t v;

	TAILQ_REMOVE(&c->events, e, next);
	droce_cm.events_queued--;
	if (--c->nevents == 0 && read(c->ch.fd, &v, sizeof(v)) < 0)
		CM_LOG("event fd: %s", strerror(errno));
}

struct cm_event *
droce_cma_event(struct cm_id *id, enum rdma_cm_event_type type, int status)
{
	struct cm_event *e;

	if (id->state == ID_DESTROYING)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->id = id;
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	return e;
}

void
droce_cma_post(struct cm_event *e)
{
	CM_LOG("event %s status %d", rdma_event_str(e->ev.event),
	       e->ev.status);
	channel_push(chan_of(e->id->id.channel), e);
}

int
rdma_get_cm_event(struct rdma_event_channel *channel,
		  struct rdma_cm_event **event)
{
	struct cm_channel *c;
	struct cm_event *e;
	struct pollfd pfd;
	int ret, err;

	if (channel == NULL || event == NULL)
		return fail(EINVAL);
	c = chan_of(channel);
	pthread_mutex_lock(&droce_cm.lock);
	for (;;) {
		int flags;

		if (c->dead) {
			/* destroyed under us: wait for ever, as Linux's does */
			pthread_mutex_unlock(&droce_cm.lock);
			for (;;)
				pause();
		}
		e = TAILQ_FIRST(&c->events);
		if (e != NULL) {
			channel_remove(c, e);
			e->id->events_out++;
			/* a rejected connect's QP ends in the error state,
			 * moved here as librdmacm moves it, by the thread
			 * that takes the event: the CM's thread never
			 * touches an application's QP it may have freed */
			if (e->ev.event == RDMA_CM_EVENT_REJECTED &&
			    e->id->id.qp != NULL)
				droce_cma_modify_qp(e->id, IBV_QPS_ERR);
			pthread_mutex_unlock(&droce_cm.lock);
			*event = &e->ev;
			return 0;
		}
		flags = fcntl(channel->fd, F_GETFL);
		if (flags >= 0 && (flags & O_NONBLOCK)) {
			pthread_mutex_unlock(&droce_cm.lock);
			return fail(EAGAIN);
		}
		c->waiters++;
		pthread_mutex_unlock(&droce_cm.lock);
		pfd.fd = channel->fd;
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, -1);
		err = errno;
		pthread_mutex_lock(&droce_cm.lock);
		c->waiters--;
		if (ret < 0 && err != EINTR) {
			pthread_mutex_unlock(&droce_cm.lock);
			return fail(err);
		}
	}
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_event *e;

	if (event == NULL)
		return fail(EINVAL);
	e = (struct cm_event *)((char *)event - offsetof(struct cm_event, ev));
	pthread_mutex_lock(&droce_cm.lock);
	e->id->events_out--;
	pthread_cond_broadcast(&e->id->acked);
	pthread_mutex_unlock(&droce_cm.lock);
	free(e);
	return 0;
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] =
			"RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] =
			"RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] =
			"RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] =
			"RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] =
			"RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] =
			"RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned int)event < sizeof(names) / sizeof(*names) ?
		names[event] : "UNKNOWN EVENT";
}

/*
 * A synchronous id's operation: wait for its event, take it and say how
 * it went (0, or -1 with errno as librdmacm sets it).
 */
static int
sync_wait(struct cm_id *id, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	int status;

	for (;;) {
		if (rdma_get_cm_event(id->id.channel, &ev) != 0)
			return -1;
		type = ev->event;
		status = ev->status;
		rdma_ack_cm_event(ev);
		if (type == want ||
		    (want == RDMA_CM_EVENT_ESTABLISHED &&
		     type == RDMA_CM_EVENT_CONNECT_RESPONSE))
			return 0;
		switch (type) {
		case RDMA_CM_EVENT_REJECTED:
			return fail(ECONNREFUSED);
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
			return fail(status < 0 ? -status : EHOSTUNREACH);
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			return fail(ECONNRESET);
		default:
			continue;
		}
	}
}

static bool
is_sync(const struct cm_id *id)
{
	return chan_of(id->id.channel)->sync;
}

/* ------------------------------------------------------------------------
 * Ids.
 */

static struct cm_id *
id_new(struct rdma_event_channel *channel, void *context,
       enum rdma_port_space ps)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	if (channel == NULL) {
		struct cm_channel *c = channel_new(true);

		if (c == NULL) {
			free(id);
			return NULL;
		}
		channel = &c->ch;
		id->own_channel = true;
	}
	pthread_cond_init(&id->acked, NULL);
	id->id.channel = channel;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ?
		IBV_QPT_UD : IBV_QPT_RC;
	id->id.route.path_rec = &id->path;
	id->ack_timeout = CM_ACK_TIMEOUT;
	id->state = ID_IDLE;
	LIST_INSERT_HEAD(&droce_cm.ids, id, all);
	return id;
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	struct cm_id *c;

	if (id == NULL)
		return fail(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB &&
	    ps != RDMA_PS_IPOIB)
		return fail(EPROTONOSUPPORT);
	if (droce_cm_init() != 0)
		return -1;
	pthread_mutex_lock(&droce_cm.lock);
	c = id_new(channel, context, ps);
	pthread_mutex_unlock(&droce_cm.lock);
	if (c == NULL)
		return fail(ENOMEM);
	*id = &c->id;
	return 0;
}

struct cm_id *
droce_cma_child(struct cm_id *listener, struct cm_dev *dev)
{
	struct cm_id *id = id_new(listener->id.channel, listener->id.context,
				  listener->id.ps);

	if (id == NULL)
		return NULL;
	id->listener = listener;
	id->child = true;
	id->dev = dev;
	id->bound = true;
	id->id.verbs = dev->ctx;
	id->id.port_num = 1;
	id->id.route.num_paths = 1;
	id->tos = listener->tos;
	id->ack_timeout = listener->ack_timeout;
	return id;
}

struct cm_id *
droce_cma_listener(struct cm_dev *dev, uint16_t ps, uint16_t port,
		   const uint8_t ip[16])
{
	struct cm_id *id;
	union ibv_gid gid;
	bool v4;

	memcpy(gid.raw, ip, 16);
	v4 = memcmp(ip, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;
	LIST_FOREACH(id, &droce_cm.ids, all) {
		const struct sockaddr *sa = &id->id.route.addr.src_addr;

		if (id->state != ID_LISTEN || id->id.ps != ps ||
		    droce_cma_port(sa) != port)
			continue;
		if (id->any_addr) {
			if (sa->sa_family == AF_INET && !v4)
				continue;
			if (sa->sa_family == AF_INET6 && v4 && id->afonly)
				continue;
			return id;
		}
		if (id->dev == dev &&
		    memcmp(&id->id.route.addr.addr.ibaddr.sgid, &gid,
			   sizeof(gid)) == 0)
			return id;
	}
	return NULL;
}

/* A child's request is answered (or it goes): the listener may take
 * another. */
static void
child_answered(struct cm_id *id)
{
	if (id->listener != NULL) {
		id->listener->pending--;
		id->listener = NULL;
	}
}

static void id_destroy_locked(struct cm_id *id);

static void
drop_queued(struct cm_id *id)
{
	struct cm_channel *c = chan_of(id->id.channel);
	struct cm_event *e, *next;

	for (e = TAILQ_FIRST(&c->events); e != NULL; e = next) {
		next = TAILQ_NEXT(e, next);
		if (e->id == id) {
			channel_remove(c, e);
			free(e);
		}
	}
}

/* Children of @p l whose connect request nobody has taken yet go with it;
 * the rest are the application's. */
static void
orphan_children(struct cm_id *l)
{
	struct cm_channel *c = chan_of(l->id.channel);
	struct cm_event *e, *next;
	struct cm_id *id, *idn;

	for (e = TAILQ_FIRST(&c->events); e != NULL; e = next) {
		next = TAILQ_NEXT(e, next);
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    e->id->listener == l) {
			struct cm_id *child = e->id;

			channel_remove(c, e);
			free(e);
			id_destroy_locked(child);
		}
	}
	for (id = LIST_FIRST(&droce_cm.ids); id != NULL; id = idn) {
		idn = LIST_NEXT(id, all);
		if (id->listener == l)
			id->listener = NULL;
	}
}

static void
id_destroy_locked(struct cm_id *id)
{
	child_answered(id);
	if (id->state == ID_LISTEN)
		orphan_children(id);
	id->state = ID_DESTROYING;
	droce_cm_conn_detach(id);
	drop_queued(id);
	while (id->events_out > 0)
		pthread_cond_wait(&id->acked, &droce_cm.lock);
	LIST_REMOVE(id, all);
	if (id->own_channel)
		channel_free(chan_of(id->id.channel));
	pthread_cond_destroy(&id->acked);
	free(id->ep_attr);
	free(id);
}

int
rdma_destroy_id(struct rdma_cm_id *cid)
{
	struct cm_id *id;

	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	if (cid->event != NULL) {
		rdma_ack_cm_event(cid->event);
		cid->event = NULL;
	}
	pthread_mutex_lock(&droce_cm.lock);
	id_destroy_locked(id);
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	return 0;
}

/* Move @p id's events to @p channel (a new synchronous one if NULL);
 * under the lock. */
static int
migrate(struct cm_id *id, struct rdma_event_channel *channel)
{
	struct cm_channel *from = chan_of(id->id.channel), *to;
	struct cm_event *e, *next;

	if (channel == NULL) {
		to = channel_new(true);
		if (to == NULL)
			return -ENOMEM;
	} else {
		to = chan_of(channel);
	}
	for (e = TAILQ_FIRST(&from->events); e != NULL; e = next) {
		next = TAILQ_NEXT(e, next);
		if (e->id == id) {
			channel_remove(from, e);
			channel_push(to, e);
		}
	}
	id->id.channel = &to->ch;
	if (id->own_channel)
		channel_free(from);
	id->own_channel = channel == NULL;
	return 0;
}

int
rdma_migrate_id(struct rdma_cm_id *cid, struct rdma_event_channel *channel)
{
	struct cm_id *id;
	int ret;

	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	/* what it was told and has not acknowledged must be first */
	while (id->events_out > 0)
		pthread_cond_wait(&id->acked, &droce_cm.lock);
	ret = migrate(id, channel);
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : fail(-ret);
}

/* ------------------------------------------------------------------------
 * Addresses and routes.
 */

int
rdma_bind_addr(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	int ret;

	if (cid == NULL || addr == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&droce_cm.lock);
	ret = droce_cma_bind(cm_id_of(cid), addr);
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : fail(-ret);
}

static void
any_of(int family, struct sockaddr_storage *ss)
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

	(void)timeout_ms;
	if (cid == NULL || dst_addr == NULL)
		return fail(EINVAL);
	if (dst_addr->sa_family != AF_INET && dst_addr->sa_family != AF_INET6)
		return fail(EAFNOSUPPORT);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (!id->bound) {
		if (src_addr == NULL || src_addr->sa_family == 0) {
			any_of(dst_addr->sa_family, &any);
			src_addr = (struct sockaddr *)&any;
		}
		ret = droce_cma_bind(id, src_addr);
	}
	if (ret == 0 && id->state != ID_ADDR_BOUND &&
	    id->state != ID_ADDR_RESOLVED)
		ret = -EINVAL;
	if (ret != 0) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(-ret);
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
		return fail(ENOMEM);
	return is_sync(id) ? sync_wait(id, RDMA_CM_EVENT_ADDR_RESOLVED) : 0;
}

int
rdma_resolve_route(struct rdma_cm_id *cid, int timeout_ms)
{
	struct cm_id *id;
	struct ibv_port_attr pa;
	struct cm_event *e;
	struct ibv_sa_path_rec *p;

	(void)timeout_ms;
	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (id->state != ID_ADDR_RESOLVED) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(EINVAL);
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
			return fail(ENOMEM);
		return is_sync(id) ? sync_wait(id, RDMA_CM_EVENT_ROUTE_RESOLVED)
			: 0;
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
		return fail(ENOMEM);
	return is_sync(id) ? sync_wait(id, RDMA_CM_EVENT_ROUTE_RESOLVED) : 0;
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

	if (droce_cm_init() != 0)
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
		return fail(EINVAL);
	id = cm_id_of(cid);
	if (level == RDMA_OPTION_IB)
		/* path records are InfiniBand's; RoCE's path is the
		 * device's own */
		return fail(optname == RDMA_OPTION_IB_PATH ? EINVAL : ENOSYS);
	if (level != RDMA_OPTION_ID)
		return fail(EINVAL);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return fail(EINVAL);
		id->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int))
			return fail(EINVAL);
		id->reuseaddr = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return fail(EINVAL);
		id->afonly = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return fail(EINVAL);
		id->ack_timeout = *(uint8_t *)optval & 31;
		return 0;
	default:
		return fail(ENOSYS);
	}
}

/* ------------------------------------------------------------------------
 * QPs.
 */

int
droce_cma_qp_attr(struct cm_id *id, struct ibv_qp_attr *a, int *mask)
{
	struct cm_conn *c = id->conn;
	enum ibv_qp_type t = id->id.qp ? id->id.qp->qp_type : id->id.qp_type;
	enum ibv_qp_state s = a->qp_state;

	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (t == IBV_QPT_UD) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			if (t == IBV_QPT_RC)
				a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_ATOMIC;
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		*mask = IBV_QP_STATE;
		if (t == IBV_QPT_UD)
			return 0;
		if (c == NULL)
			return -EINVAL;
		droce_cm_ah_attr(&a->ah_attr, &c->dgid, c->sgid_index,
				 id->tos);
		a->path_mtu = c->mtu;
		a->dest_qp_num = c->remote_qpn;
		a->rq_psn = c->rq_psn;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC) {
			a->max_dest_rd_atomic = c->responder_resources;
			a->min_rnr_timer = CM_MIN_RNR_TIMER;
			*mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		}
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = t == IBV_QPT_UD ? 0 : c != NULL ? c->sq_psn : 0;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC) {
			if (c == NULL)
				return -EINVAL;
			a->timeout = id->ack_timeout;
			a->retry_cnt = c->retry_count;
			a->rnr_retry = c->peer_rnr_retry;
			a->max_rd_atomic = c->initiator_depth;
			*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		}
		return 0;
	case IBV_QPS_ERR:
		*mask = IBV_QP_STATE;
		return 0;
	default:
		return -EINVAL;
	}
}

int
droce_cma_modify_qp(struct cm_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask, ret;

	ret = droce_cma_qp_attr(id, &a, &mask);
	if (ret != 0)
		return ret;
	ret = ibv_modify_qp(id->id.qp, &a, mask);
	return ret > 0 ? -ret : ret;
}

void
droce_cma_ah_attr(const struct cm_id *id, struct ibv_ah_attr *ah)
{
	int index = 0;

	if (droce_cm_dev_by_gid(&id->id.route.addr.addr.ibaddr.sgid,
				&index) != id->dev)
		index = 0;
	droce_cm_ah_attr(ah, &id->id.route.addr.addr.ibaddr.dgid,
			 (uint8_t)index, id->tos);
}

int
rdma_init_qp_attr(struct rdma_cm_id *cid, struct ibv_qp_attr *qp_attr,
		  int *qp_attr_mask)
{
	int ret;

	if (cid == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&droce_cm.lock);
	ret = droce_cma_qp_attr(cm_id_of(cid), qp_attr, qp_attr_mask);
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : fail(-ret);
}

/* CQs (and their channels) for a QP the application gave none. */
static int
own_cqs(struct cm_id *id, struct ibv_qp_init_attr_ex *qa)
{
	struct rdma_cm_id *c = &id->id;
	int n;

	if (qa->send_cq == NULL) {
		n = qa->cap.max_send_wr > 0 ? (int)qa->cap.max_send_wr : 1;
		c->send_cq_channel = ibv_create_comp_channel(c->verbs);
		if (c->send_cq_channel == NULL)
			return -1;
		c->send_cq = ibv_create_cq(c->verbs, n, c, c->send_cq_channel,
					   0);
		if (c->send_cq == NULL)
			return -1;
		qa->send_cq = c->send_cq;
		id->own_cqs = true;
	}
	if (qa->recv_cq == NULL) {
		n = qa->cap.max_recv_wr > 0 ? (int)qa->cap.max_recv_wr : 1;
		c->recv_cq_channel = ibv_create_comp_channel(c->verbs);
		if (c->recv_cq_channel == NULL)
			return -1;
		c->recv_cq = ibv_create_cq(c->verbs, n, c, c->recv_cq_channel,
					   0);
		if (c->recv_cq == NULL)
			return -1;
		qa->recv_cq = c->recv_cq;
		id->own_cqs = true;
	}
	return 0;
}

static void
free_own_cqs(struct cm_id *id)
{
	struct rdma_cm_id *c = &id->id;

	if (!id->own_cqs)
		return;
	if (c->send_cq != NULL)
		ibv_destroy_cq(c->send_cq);
	if (c->recv_cq != NULL)
		ibv_destroy_cq(c->recv_cq);
	if (c->send_cq_channel != NULL)
		ibv_destroy_comp_channel(c->send_cq_channel);
	if (c->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(c->recv_cq_channel);
	c->send_cq = c->recv_cq = NULL;
	c->send_cq_channel = c->recv_cq_channel = NULL;
	id->own_cqs = false;
}

int
rdma_create_qp_ex(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *id;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *qp;
	int ret, err;

	if (cid == NULL || attr == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	if (cid->verbs == NULL || id->dev == NULL || cid->qp != NULL)
		return fail(EINVAL);
	qa = *attr;
	if (!(qa.comp_mask & IBV_QP_INIT_ATTR_PD) || qa.pd == NULL) {
		qa.pd = cid->pd != NULL ? cid->pd : id->dev->pd;
		qa.comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (qa.pd->context->device != cid->verbs->device)
		return fail(EINVAL);
	if (qa.srq == NULL)
		qa.srq = cid->srq;
	if (own_cqs(id, &qa) != 0) {
		err = errno;
		free_own_cqs(id);
		return fail(err);
	}
	qp = ibv_create_qp_ex(cid->verbs, &qa);
	if (qp == NULL) {
		err = errno;
		free_own_cqs(id);
		return fail(err);
	}
	pthread_mutex_lock(&droce_cm.lock);
	cid->qp = qp;
	cid->pd = qa.pd;
	cid->qp_type = qp->qp_type;
	ret = droce_cma_modify_qp(id, IBV_QPS_INIT);
	if (ret == 0 && qp->qp_type == IBV_QPT_UD) {
		ret = droce_cma_modify_qp(id, IBV_QPS_RTR);
		if (ret == 0)
			ret = droce_cma_modify_qp(id, IBV_QPS_RTS);
	}
	if (ret != 0)
		cid->qp = NULL;
	pthread_mutex_unlock(&droce_cm.lock);
	if (ret != 0) {
		ibv_destroy_qp(qp);
		free_own_cqs(id);
		return fail(-ret);
	}
	attr->cap = qa.cap;
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *cid, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex qa = {0};
	int ret;

	if (attr == NULL)
		return fail(EINVAL);
	qa.qp_context = attr->qp_context;
	qa.send_cq = attr->send_cq;
	qa.recv_cq = attr->recv_cq;
	qa.srq = attr->srq;
	qa.cap = attr->cap;
	qa.qp_type = attr->qp_type;
	qa.sq_sig_all = attr->sq_sig_all;
	qa.pd = pd;
	qa.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	ret = rdma_create_qp_ex(cid, &qa);
	if (ret == 0) {
		attr->cap = qa.cap;
		attr->send_cq = cid->qp->send_cq;
		attr->recv_cq = cid->qp->recv_cq;
	}
	return ret;
}

void
rdma_destroy_qp(struct rdma_cm_id *cid)
{
	struct cm_id *id = cm_id_of(cid);
	struct ibv_qp *qp;

	/* out of the id first: the CM's thread may be about to move it to
	 * the error state (a DREQ coming in) */
	pthread_mutex_lock(&droce_cm.lock);
	qp = cid->qp;
	cid->qp = NULL;
	pthread_mutex_unlock(&droce_cm.lock);
	if (qp != NULL)
		ibv_destroy_qp(qp);
	free_own_cqs(id);
}

int
rdma_create_srq_ex(struct rdma_cm_id *cid, struct ibv_srq_init_attr_ex *attr)
{
	struct cm_id *id;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *srq;

	if (cid == NULL || attr == NULL || cid->verbs == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	sa = *attr;
	if (!(sa.comp_mask & IBV_SRQ_INIT_ATTR_PD) || sa.pd == NULL) {
		sa.pd = cid->pd != NULL ? cid->pd : id->dev->pd;
		sa.comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(cid->verbs, &sa);
	if (srq == NULL)
		return -1;
	cid->srq = srq;
	cid->pd = sa.pd;
	attr->attr = sa.attr;
	return 0;
}

int
rdma_create_srq(struct rdma_cm_id *cid, struct ibv_pd *pd,
		struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex sa = {0};
	int ret;

	if (attr == NULL)
		return fail(EINVAL);
	sa.srq_context = attr->srq_context;
	sa.attr = attr->attr;
	sa.pd = pd;
	sa.comp_mask = pd != NULL ? IBV_SRQ_INIT_ATTR_PD : 0;
	ret = rdma_create_srq_ex(cid, &sa);
	if (ret == 0)
		attr->attr = sa.attr;
	return ret;
}

void
rdma_destroy_srq(struct rdma_cm_id *cid)
{
	if (cid->srq != NULL)
		ibv_destroy_srq(cid->srq);
	cid->srq = NULL;
}

/* ------------------------------------------------------------------------
 * Connecting.
 */

static uint8_t
cap8(unsigned int v, unsigned int max)
{
	return (uint8_t)(v < max ? v : max);
}

int
rdma_connect(struct rdma_cm_id *cid, struct rdma_conn_param *param)
{
	struct rdma_conn_param none = {0};
	struct cm_id *id;
	struct cm_conn *c;
	int ret;

	if (cid == NULL)
		return fail(EINVAL);
	if (param == NULL)
		param = &none;
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (id->state != ID_ROUTE_RESOLVED || id->conn != NULL) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(EINVAL);
	}
	c = droce_cm_conn_new(id, id->dev);
	if (c == NULL) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(ENOMEM);
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
	if (c->qp_type == IBV_QPT_UD)
		ret = droce_cm_send_sidr_req(id, param);
	else
		ret = droce_cm_send_req(id, param);
	if (ret != 0) {
		droce_cm_conn_free(c);
		id->conn = NULL;
		id->state = ID_ROUTE_RESOLVED;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	if (ret != 0)
		return fail(-ret);
	return is_sync(id) ? sync_wait(id, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int
rdma_listen(struct rdma_cm_id *cid, int backlog)
{
	struct cm_id *id;
	struct sockaddr_storage any;
	int ret = 0;

	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	if (!id->bound) {
		any_of(AF_INET, &any);
		ret = droce_cma_bind(id, (struct sockaddr *)&any);
	}
	if (ret == 0 && id->state != ID_ADDR_BOUND)
		ret = -EINVAL;
	if (ret == 0) {
		/* no other listener on the port */
		struct cm_id *o;

		LIST_FOREACH(o, &droce_cm.ids, all)
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
	return ret == 0 ? 0 : fail(-ret);
}

int
rdma_accept(struct rdma_cm_id *cid, struct rdma_conn_param *param)
{
	struct rdma_conn_param def = {0};
	struct cm_id *id;
	struct cm_conn *c;
	int ret;

	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c != NULL && c->state == CM_SIDR_REQ_RCVD) {
		/* UD: the QP and Q_Key to send to, in a SIDR_REP */
		child_answered(id);
		ret = droce_cm_send_sidr_rep(id, DROCE_CM_SIDR_SUCCESS,
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
		return ret == 0 ? 0 : fail(-ret);
	}
	if (c == NULL || (c->state != CM_REQ_RCVD &&
			  c->state != CM_MRA_SENT)) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(EINVAL);
	}
	if (param == NULL) {
		def.responder_resources = id->req.initiator_depth;
		def.initiator_depth = id->req.responder_resources;
		def.rnr_retry_count = 7;
		param = &def;
	}
	child_answered(id);
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
			return fail(-ret);
		}
	} else {
		c->srq = param->srq != 0;
	}
	ret = droce_cm_send_rep(id, param);
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	if (cid->event != NULL) {
		rdma_ack_cm_event(cid->event);
		cid->event = NULL;
	}
	if (ret != 0)
		return fail(-ret);
	return is_sync(id) ? sync_wait(id, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int
rdma_reject(struct rdma_cm_id *cid, const void *private_data,
	    uint8_t private_data_len)
{
	struct cm_id *id;
	struct cm_conn *c;
	int ret;

	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c != NULL && c->state == CM_SIDR_REQ_RCVD) {
		child_answered(id);
		ret = droce_cm_send_sidr_rep(id, DROCE_CM_SIDR_REJECT, 0, 0,
					     private_data, private_data_len);
		id->state = ID_DISCONNECTED;
		pthread_mutex_unlock(&droce_cm.lock);
		return ret == 0 ? 0 : fail(-ret);
	}
	if (c == NULL || (c->state != CM_REQ_RCVD &&
			  c->state != CM_MRA_SENT)) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(EINVAL);
	}
	child_answered(id);
	ret = droce_cm_send_rej(id, DROCE_CM_REJ_CONSUMER_DEFINED,
				private_data, private_data_len);
	if (ret == 0) {
		/* the connection lives on alone, its REJ kept for a REQ
		 * asked again, until its TimeWait ends */
		c->id = NULL;
		id->conn = NULL;
		id->state = ID_DISCONNECTED;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : fail(-ret);
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
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	ret = droce_cm_send_rtu(id);
	if (ret == 0)
		id->state = ID_ESTABLISHED;
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : fail(-ret);
}

int
rdma_notify(struct rdma_cm_id *cid, enum ibv_event_type event)
{
	struct cm_id *id;
	struct cm_conn *c;
	struct cm_event *e;

	if (cid == NULL)
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c == NULL) {
		pthread_mutex_unlock(&droce_cm.lock);
		return fail(EINVAL);
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
		return fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	c = id->conn;
	if (c == NULL && id->state != ID_DISCONNECTED) {
		ret = -EINVAL;
	} else if (c != NULL) {
		if (cid->qp != NULL)
			droce_cma_modify_qp(id, IBV_QPS_ERR);
		if (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT)
			droce_cm_send_dreq(id);
		else if (c->state == CM_REQ_SENT || c->state == CM_MRA_RCVD ||
			 c->state == CM_REP_RCVD)
			ret = -EINVAL;
	}
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	return ret == 0 ? 0 : fail(-ret);
}

int
rdma_set_local_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	if (cid == NULL || ece == NULL)
		return fail(EINVAL);
	cm_id_of(cid)->local_ece = *ece;
	return 0;
}

int
rdma_get_remote_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	/* droce's CM negotiates no vendor options: the peer's are none */
	if (cid == NULL || ece == NULL)
		return fail(EINVAL);
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
		return fail(EINVAL);
	if ((attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) &&
	    attr->join_flags > RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return fail(EINVAL);
	if (attr->addr->sa_family != AF_INET &&
	    attr->addr->sa_family != AF_INET6)
		return fail(EAFNOSUPPORT);
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
	return ret == 0 ? 0 : fail(-ret);
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
		return fail(EINVAL);
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
	return ret == 0 ? 0 : fail(-ret);
}

/* ------------------------------------------------------------------------
 * The endpoint calls (rdma_verbs.h's way of using the CM).
 */

int
rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res,
	       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cm_id *id;
	enum rdma_port_space ps;
	int err;

	if (out == NULL || res == NULL)
		return fail(EINVAL);
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
		return fail(EINVAL);
	l = cm_id_of(listen);
	if (!is_sync(l))
		return fail(EINVAL);
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &ev) != 0)
			return -1;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		err = ev->status != 0 ? -ev->status : EINVAL;
		rdma_ack_cm_event(ev);
		if (err > 0)
			return fail(err);
	}
	cid = ev->id;
	/* its own synchronous channel from now on */
	pthread_mutex_lock(&droce_cm.lock);
	err = migrate(cm_id_of(cid), NULL);
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
