/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * rdma_cm's IP addressing over droce's devices: sockaddrs to GIDs and
 * back, binding (a device's address, a loopback address or the
 * wildcard, port 0 picking a free port), the device a destination goes
 * through, and rdma_getaddrinfo.
 */

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "droce_cma_pvt.h"

#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999

void
droce_cma_addr_to_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12],
		       &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw,
		       &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

bool
droce_cma_gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};

	return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

void
droce_cma_gid_to_addr(const union ibv_gid *gid, uint16_t port,
		      struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (droce_cma_gid_is_v4(gid)) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, &gid->raw[12], 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, gid->raw, 16);
	}
}

uint16_t
droce_cma_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

static void
set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

bool
droce_cma_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
			htonl(INADDR_ANY);
	return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
		      &in6addr_any, sizeof(in6addr_any)) == 0;
}

socklen_t
droce_cma_addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		sizeof(struct sockaddr_in);
}

bool
droce_cma_addr_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			>> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
			      &in6addr_loopback, sizeof(in6addr_loopback)) == 0;
	return false;
}

/* A GID of @p dev that is an address of @p family to bind or send from:
 * IPv4, or IPv6 and not link-local (fe80::/10, which needs a scope);
 * its index, or -1. */
static int
family_gid(const struct cm_dev *dev, int family)
{
	int i;

	for (i = 0; i < dev->ngid; i++) {
		const union ibv_gid *g = &dev->gid[i];

		if (family == AF_INET && droce_cma_gid_is_v4(g))
			return i;
		if (family == AF_INET6 && !droce_cma_gid_is_v4(g) &&
		    !(g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80))
			return i;
	}
	return -1;
}

/*
 * The device a loopback address of @p family stands for, as Linux's
 * rdma_cm takes its first device with an active port for it
 * (cma_bind_loopback): the first whose port is active and that has an
 * address of that family, else the first that has one; *index gets the
 * address's GID index. NULL if no device has one. Under the lock.
 */
struct cm_dev *
droce_cma_loopback_dev(int family, int *index)
{
	struct cm_dev *first = NULL;
	int d, i, first_i = 0;

	for (d = 0; d < droce_cm.ndevs; d++) {
		struct cm_dev *dev = &droce_cm.devs[d];
		struct ibv_port_attr pa;

		i = family_gid(dev, family);
		if (i < 0)
			continue;
		if (ibv_query_port(dev->ctx, 1, &pa) == 0 &&
		    pa.state == IBV_PORT_ACTIVE) {
			*index = i;
			return dev;
		}
		if (first == NULL) {
			first = dev;
			first_i = i;
		}
	}
	*index = first_i;
	return first;
}

/* Does bound id @p o keep @p id from binding @p port? */
static bool
port_taken(const struct cm_id *id, const struct cm_id *o, uint16_t port)
{
	const struct sockaddr *a = &id->id.route.addr.src_addr;
	const struct sockaddr *b = &o->id.route.addr.src_addr;

	if (o == id || !o->bound || o->id.ps != id->id.ps ||
	    o->state == ID_DESTROYING || o->child ||
	    droce_cma_port(b) != port)
		return false;
	if (id->reuseaddr && o->reuseaddr && o->state != ID_LISTEN &&
	    id->state != ID_LISTEN)
		return false;
	if (o->any_addr || id->any_addr)
		return true;
	return a->sa_family == b->sa_family &&
		memcmp(a, b, droce_cma_addr_len(a)) == 0;
}

static bool
port_free(const struct cm_id *id, uint16_t port)
{
	const struct cm_id *o;

	LIST_FOREACH(o, &droce_cma.ids, all)
		if (port_taken(id, o, port))
			return false;
	return true;
}

/*
 * Bind @p id to @p sa (a device's address, a loopback address or the
 * wildcard); under the lock. A loopback address binds the device
 * droce_cma_loopback_dev() gives, and the id's local address is then
 * that device's address: droce's devices have no interface of the
 * kernel's, and a program that binds localhost to find its device
 * (libfabric's verbs provider) takes the local address for the one to
 * give its peers.
 */
int
droce_cma_bind(struct cm_id *id, const struct sockaddr *sa)
{
	struct sockaddr *src = &id->id.route.addr.src_addr;
	struct sockaddr_storage local;
	struct cm_dev *dev = NULL;
	union ibv_gid gid;
	uint16_t port;
	uint32_t r;
	int index = 0, n;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (id->bound || id->state != ID_IDLE)
		return -EINVAL;
	if (droce_cma_addr_loopback(sa)) {
		dev = droce_cma_loopback_dev(sa->sa_family, &index);
		if (dev == NULL)
			return -EADDRNOTAVAIL;
		droce_cma_gid_to_addr(&dev->gid[index], droce_cma_port(sa),
				      &local);
		sa = (const struct sockaddr *)&local;
	} else if (!droce_cma_addr_any(sa)) {
		droce_cma_addr_to_gid(sa, &gid);
		dev = droce_cm_dev_by_gid(&gid, &index);
		if (dev == NULL)
			return -EADDRNOTAVAIL;
	}
	memset(&id->id.route.addr.src_storage, 0,
	       sizeof(id->id.route.addr.src_storage));
	memcpy(src, sa, droce_cma_addr_len(sa));
	id->any_addr = dev == NULL;
	port = droce_cma_port(sa);
	if (port == 0) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)rand();
		for (n = 0; n <= EPHEMERAL_HI - EPHEMERAL_LO; n++) {
			port = (uint16_t)(EPHEMERAL_LO + (r + (uint32_t)n) %
					  (EPHEMERAL_HI - EPHEMERAL_LO + 1));
			if (port_free(id, port))
				break;
		}
		if (n > EPHEMERAL_HI - EPHEMERAL_LO)
			return -EADDRINUSE;
	} else if (!port_free(id, port)) {
		return -EADDRINUSE;
	}
	set_port(src, port);
	id->bound = true;
	id->state = ID_ADDR_BOUND;
	if (dev != NULL) {
		id->dev = dev;
		id->id.verbs = dev->ctx;
		id->id.port_num = 1;
		id->id.route.addr.addr.ibaddr.sgid = dev->gid[index];
		id->id.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	}
	return 0;
}

/* Leading bits @p a and @p b have in common. */
static unsigned int
common_bits(const union ibv_gid *a, const union ibv_gid *b)
{
	unsigned int i, n = 0;

	for (i = 0; i < 16; i++) {
		uint8_t x = a->raw[i] ^ b->raw[i];

		if (x != 0)
			return n + (unsigned int)__builtin_clz(x) - 24;
		n += 8;
	}
	return n;
}

/*
 * The device and source GID that send to @p dst: of the device @p id is
 * bound to; else, as Linux routes to a local address, the device whose
 * own address dst is, from that address (it loops back to itself); else
 * of any device, a GID of dst's family that shares the longest prefix
 * with it (so fd00::1 goes from fd00::2, not from the link-local
 * address); *index gets the GID's.
 */
struct cm_dev *
droce_cma_route_dev(const struct cm_id *id, const union ibv_gid *dst,
		    int *index)
{
	struct cm_dev *best = NULL;
	unsigned int best_bits = 0;
	int d, i, best_i = 0;

	if (id->dev != NULL) {
		for (i = 0; i < id->dev->ngid; i++)
			if (memcmp(&id->dev->gid[i],
				   &id->id.route.addr.addr.ibaddr.sgid,
				   sizeof(*dst)) == 0) {
				*index = i;
				return id->dev;
			}
		return NULL;
	}
	best = droce_cm_dev_by_gid(dst, index);
	if (best != NULL)
		return best;
	for (d = 0; d < droce_cm.ndevs; d++) {
		struct cm_dev *dev = &droce_cm.devs[d];

		for (i = 0; i < dev->ngid; i++) {
			unsigned int bits;

			if (droce_cma_gid_is_v4(&dev->gid[i]) !=
			    droce_cma_gid_is_v4(dst))
				continue;
			bits = common_bits(&dev->gid[i], dst);
			if (best == NULL || bits > best_bits) {
				best = dev;
				best_i = i;
				best_bits = bits;
			}
		}
	}
	*index = best_i;
	return best;
}

/* ------------------------------------------------------------------------
 * rdma_getaddrinfo.
 */

static int
ai_error(int gai)
{
	switch (gai) {
	case EAI_NONAME:
	case EAI_NODATA:
		return ENOENT;
	case EAI_MEMORY:
		return ENOMEM;
	case EAI_FAMILY:
		return EAFNOSUPPORT;
	case EAI_SERVICE:
		return EINVAL;
	case EAI_SYSTEM:
		return errno != 0 ? errno : EINVAL;
	default:
		return EINVAL;
	}
}

static struct sockaddr *
sa_dup(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c != NULL)
		memcpy(c, sa, len);
	return c;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res != NULL; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

/* A copy of @p len bytes of @p sa in *dst, *dst_len; 0 or ENOMEM. */
static int
ai_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *sa,
	socklen_t len)
{
	*dst = sa_dup(sa, len);
	if (*dst == NULL)
		return ENOMEM;
	*dst_len = len;
	return 0;
}

/* @p rai's address of @p node and @p service, as getaddrinfo gives it;
 * 0 or an errno. */
static int
ai_lookup(const char *node, const char *service,
	  const struct rdma_addrinfo *hints, struct rdma_addrinfo *rai)
{
	struct addrinfo ai = {0}, *got = NULL;
	int flags = hints != NULL ? hints->ai_flags : 0;
	int ret;

	rai->ai_flags = flags;
	rai->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ?
		hints->ai_qp_type : IBV_QPT_RC;
	rai->ai_port_space = hints != NULL && hints->ai_port_space != 0 ?
		hints->ai_port_space : RDMA_PS_TCP;
	if (rai->ai_qp_type == IBV_QPT_UD && (hints == NULL ||
					       hints->ai_port_space == 0))
		rai->ai_port_space = RDMA_PS_UDP;
	ai.ai_family = hints != NULL ? hints->ai_family : 0;
	ai.ai_socktype = SOCK_STREAM;
	if (flags & RAI_NUMERICHOST)
		ai.ai_flags |= AI_NUMERICHOST;
	if (flags & RAI_PASSIVE)
		ai.ai_flags |= AI_PASSIVE;
	ret = getaddrinfo(node, service, &ai, &got);
	if (ret != 0)
		return ai_error(ret);
	rai->ai_family = got->ai_family;
	if (flags & RAI_PASSIVE)
		ret = ai_addr(&rai->ai_src_addr, &rai->ai_src_len,
			      got->ai_addr, got->ai_addrlen);
	else
		ret = ai_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
			      got->ai_addr, got->ai_addrlen);
	freeaddrinfo(got);
	return ret;
}

/*
 * As rdma-core's: a node or a service is looked up (getaddrinfo); with
 * neither, the hints are the answer: their flags, family, QP type, port
 * space and destination address as given (libfabric asks so for the
 * addresses it already has). The hints' source address is the answer's
 * whenever the lookup gave none.
 */
int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	int ret = 0;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (hints != NULL && hints->ai_family != 0 &&
	    hints->ai_family != AF_INET && hints->ai_family != AF_INET6) {
		/* AF_IB is InfiniBand's own: droce speaks RoCE alone */
		errno = EAFNOSUPPORT;
		return -1;
	}
	rai = calloc(1, sizeof(*rai));
	if (rai == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (node != NULL || service != NULL) {
		ret = ai_lookup(node, service, hints, rai);
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len != 0 && hints->ai_dst_addr != NULL)
			ret = ai_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
				      hints->ai_dst_addr, hints->ai_dst_len);
	}
	if (ret == 0 && rai->ai_src_len == 0 && hints != NULL &&
	    hints->ai_src_len != 0 && hints->ai_src_addr != NULL)
		ret = ai_addr(&rai->ai_src_addr, &rai->ai_src_len,
			      hints->ai_src_addr, hints->ai_src_len);
	if (ret != 0) {
		rdma_freeaddrinfo(rai);
		errno = ret;
		return -1;
	}
	*res = rai;
	return 0;
}
