/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The rdma_cm API (<rdma/rdma_cma.h>, librdmacm's man pages) over
 * droce's CM: event channels whose fd is an eventfd readable while
 * events wait, ids and their states, and the synchronous mode of ids
 * made without a channel. Address and route resolution is
 * droce_cma_route.c's, QPs droce_cma_qp.c's, connecting, listening and
 * multicast droce_cma_conn.c's, the endpoint calls droce_cma_ep.c's.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/rdma_verbs.h>

#include "droce_cma_pvt.h"

struct cma droce_cma;

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

	if (droce_cma_init() != 0)
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
	droce_cma.events_queued++;
	if (c->nevents++ == 0 && write(c->ch.fd, &one, sizeof(one)) < 0)
		CM_LOG("event fd: %s", strerror(errno));
}

static void
channel_remove(struct cm_channel *c, struct cm_event *e)
{
	uint64_t v;

	TAILQ_REMOVE(&c->events, e, next);
	droce_cma.events_queued--;
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
		return droce_cma_fail(EINVAL);
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
			CM_LOG("event %s taken", rdma_event_str(e->ev.event));
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
			return droce_cma_fail(EAGAIN);
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
			return droce_cma_fail(err);
		}
	}
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_event *e;

	if (event == NULL)
		return droce_cma_fail(EINVAL);
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
 * An id's operation is under way: a synchronous id waits for its event,
 * takes it and says how it went (0, or -1 with errno as librdmacm sets
 * it); an asynchronous one leaves the event to its channel (0).
 */
int
droce_cma_sync_wait(struct cm_id *id, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	int status;

	if (!droce_cma_is_sync(id))
		return 0;
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
			return droce_cma_fail(ECONNREFUSED);
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
			return droce_cma_fail(status < 0 ? -status :
					      EHOSTUNREACH);
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			return droce_cma_fail(ECONNRESET);
		default:
			continue;
		}
	}
}

bool
droce_cma_is_sync(const struct cm_id *id)
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
	LIST_INSERT_HEAD(&droce_cma.ids, id, all);
	return id;
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	struct cm_id *c;

	if (id == NULL)
		return droce_cma_fail(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB &&
	    ps != RDMA_PS_IPOIB)
		return droce_cma_fail(EPROTONOSUPPORT);
	if (droce_cma_init() != 0)
		return -1;
	pthread_mutex_lock(&droce_cm.lock);
	c = id_new(channel, context, ps);
	pthread_mutex_unlock(&droce_cm.lock);
	if (c == NULL)
		return droce_cma_fail(ENOMEM);
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
	LIST_FOREACH(id, &droce_cma.ids, all) {
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
void
droce_cma_child_answered(struct cm_id *id)
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
	for (id = LIST_FIRST(&droce_cma.ids); id != NULL; id = idn) {
		idn = LIST_NEXT(id, all);
		if (id->listener == l)
			id->listener = NULL;
	}
}

static void
id_destroy_locked(struct cm_id *id)
{
	droce_cma_child_answered(id);
	if (id->state == ID_LISTEN)
		orphan_children(id);
	id->state = ID_DESTROYING;
	droce_cm_conn_detach(id->conn);
	id->conn = NULL;
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

void
droce_cma_child_drop(struct cm_id *child)
{
	/* (its listener has not counted it: no request was posted) */
	child->listener = NULL;
	id_destroy_locked(child);
}

int
rdma_destroy_id(struct rdma_cm_id *cid)
{
	struct cm_id *id;

	if (cid == NULL)
		return droce_cma_fail(EINVAL);
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
int
droce_cma_migrate(struct cm_id *id, struct rdma_event_channel *channel)
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
		return droce_cma_fail(EINVAL);
	id = cm_id_of(cid);
	pthread_mutex_lock(&droce_cm.lock);
	/* what it was told and has not acknowledged must be first */
	while (id->events_out > 0)
		pthread_cond_wait(&id->acked, &droce_cm.lock);
	ret = droce_cma_migrate(id, channel);
	pthread_mutex_unlock(&droce_cm.lock);
	return ret == 0 ? 0 : droce_cma_fail(-ret);
}

