/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_memif's sockets, looked at before and after DPDK uses them: a
 * server's socket file left by a process that is gone is replaced, a
 * memif port that did not come up is explained by what its socket says,
 * and a client its server refused as it was starting dials it again.
 *
 * A memif server's socket file outlives a process that is killed or
 * crashes, and the next server on it cannot bind it ("Address already in
 * use"). Whether anyone still serves it is what a connect() tells: it is
 * refused once nobody listens on the file. A socket another process
 * serves is never touched.
 */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_string_fns.h>

#include "droce_engine_pvt.h"
#include "droce_memif.h"

#define MEMIF_DRIVER "net_memif"
/* net_memif's socket when its arguments name none */
#define MEMIF_DEFAULT_SOCKET "/run/memif.sock"
/* how long a knock waits for the server's hello */
#define KNOCK_WAIT_MS 2000
/* a client's first wait for its link once it has dialed (a handshake
 * takes a few milliseconds); each next wait twice the last, up to
 * REDIAL_MAX_MS (a handshake slowed down by a busy machine is let end) */
#define REDIAL_MS 100
#define REDIAL_MAX_MS 1600

/* What a net_memif port's arguments say of its socket. */
struct memif_sock {
	bool server;
	bool abstract;                /**< in Linux's abstract namespace */
	char path[sizeof(((struct sockaddr_un *)NULL)->sun_path)];
};

/*
 * Whether @p port is a net_memif port, and its socket in @p s, read as
 * net_memif reads its arguments: a client on an abstract socket unless
 * they say otherwise.
 */
static bool
memif_sock_of(const char *eal_args, const char *port, struct memif_sock *s)
{
	char args[1024];
	struct rte_kvargs *kv = NULL;
	const char *comma, *v;

	if (strncmp(port, MEMIF_DRIVER, strlen(MEMIF_DRIVER)) != 0)
		return false;
	droce_port_devargs(eal_args, port, args, sizeof(args));
	comma = strchr(args, ',');
	if (comma != NULL) {
		kv = rte_kvargs_parse(comma + 1, NULL);
		if (kv == NULL)
			return false;
	}
	v = kv != NULL ? rte_kvargs_get(kv, "role") : NULL;
	s->server = v != NULL &&
		(strstr(v, "server") != NULL || strstr(v, "master") != NULL);
	v = kv != NULL ? rte_kvargs_get(kv, "socket-abstract") : NULL;
	s->abstract = v == NULL || strstr(v, "yes") != NULL ||
		strstr(v, "no") == NULL;
	v = kv != NULL ? rte_kvargs_get(kv, "socket") : NULL;
	strlcpy(s->path, v != NULL ? v : MEMIF_DEFAULT_SOCKET,
		sizeof(s->path));
	rte_kvargs_free(kv);
	return true;
}

bool
droce_memif_server(const char *eal_args, const char *port)
{
	struct memif_sock s;

	return memif_sock_of(eal_args, port, &s) && s.server;
}

/*
 * Knock on socket @p s as a memif client would, and hang up once the
 * server has said hello: a memif server takes that for a client that
 * left before it said hello in turn. (Not before: a memif server whose
 * hello finds the connection closed already frees it with its callback
 * still registered, and DPDK's interrupt thread then panics, "Error
 * adding fd ... epoll_ctl, Bad file descriptor": seen with DPDK 22.11.)
 * @return 0 if a process serves it, its pid in *pid where the kernel
 *   says (else 0); -ENOTSOCK if something else is at its path; or the
 *   error of stat() or connect(): -ENOENT no such file, -ECONNREFUSED a
 *   file nobody listens on (or no such abstract socket), -EACCES.
 */
static int
sock_knock(const struct memif_sock *s, pid_t *pid)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(un);
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	char hello[512];
	struct stat st;
	int fd, ret = 0;

	*pid = 0;
	if (s->abstract) {
		/* as net_memif binds it: a NUL, then the name, unterminated */
		strlcpy(un.sun_path + 1, s->path, sizeof(un.sun_path) - 1);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				  strlen(un.sun_path + 1));
	} else {
		if (stat(s->path, &st) != 0)
			return -errno;
		/* (a connect() to a file that is no socket is refused too) */
		if (!S_ISSOCK(st.st_mode))
			return -ENOTSOCK;
		strlcpy(un.sun_path, s->path, sizeof(un.sun_path));
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&un, len) == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
			*pid = cred.pid;
		if (poll(&p, 1, KNOCK_WAIT_MS) == 1)
			recv(fd, hello, sizeof(hello), 0);
	} else if (errno != EAGAIN && errno != EPROTOTYPE) {
		/* (a server whose backlog is full, or one of another socket
		 * type, serves it all the same) */
		ret = -errno;
	}
	close(fd);
	return ret;
}

/* "socket PATH" or "abstract socket @NAME", as it is written in @p why */
static const char *
sock_kind(const struct memif_sock *s)
{
	return s->abstract ? "abstract socket @" : "socket ";
}

/* That another process serves @p s, into @p why. */
static int
served(const struct memif_sock *s, pid_t pid, char *why, size_t len)
{
	if (pid > 0)
		snprintf(why, len, "memif %s%s is served by another live "
			 "process (pid %d)", sock_kind(s), s->path, (int)pid);
	else
		snprintf(why, len, "memif %s%s is served by another live "
			 "process", sock_kind(s), s->path);
	return -EADDRINUSE;
}

int
droce_memif_claim(const char *name, const char *eal_args, const char *port,
		  char *why, size_t len)
{
	struct memif_sock s;
	pid_t pid;
	int ret;

	if (!memif_sock_of(eal_args, port, &s) || !s.server)
		return 0;
	ret = sock_knock(&s, &pid);
	if (ret == 0)
		return served(&s, pid, why, len);
	/* no file, or something that is no socket (left for DPDK to
	 * refuse and droce_memif_why() to explain); an abstract socket
	 * goes with the last process that has it */
	if (ret != -ECONNREFUSED || s.abstract)
		return 0;
	/* (a server of another process between its bind() and its
	 * listen() is refused too: a window of a few instructions) */
	if (unlink(s.path) != 0) {
		DROCE_LOG(WARNING, "%s: port %s: memif socket %s was left by "
			  "a process that is gone, and cannot be removed: %s",
			  name, port, s.path, strerror(errno));
		return 0;
	}
	DROCE_LOG(WARNING, "%s: port %s: memif socket %s was left by a "
		  "process that is gone (nobody serves it): replaced", name,
		  port, s.path);
	return 0;
}

/* @p ret in words: net_memif fails with a bare -1, which is no EPERM */
static const char *
err_text(int ret)
{
	return ret == -EPERM ? "net_memif gives no reason" : strerror(-ret);
}

/*
 * What net_memif asks of a socket file's path before it uses it: that
 * it be absolute, in a directory it may read and write. Why @p s's is
 * not, into @p why. @return 0 if it is, else the cause.
 */
static int
path_why(const struct memif_sock *s, char *why, size_t len)
{
	char dir[sizeof(s->path)];
	const char *slash = strrchr(s->path, '/');

	if (s->abstract)
		return 0;
	if (s->path[0] != '/') {
		snprintf(why, len, "memif socket %s: net_memif takes an "
			 "absolute path only", s->path);
		return -EINVAL;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - s->path), s->path);
	if (slash != s->path && access(dir, F_OK) != 0) {
		snprintf(why, len, "memif socket %s: no directory %s",
			 s->path, dir);
		return -ENOENT;
	}
	if (slash != s->path && access(dir, R_OK | W_OK) != 0) {
		snprintf(why, len, "memif socket %s: directory %s is not "
			 "readable and writable", s->path, dir);
		return -EACCES;
	}
	return 0;
}

/* Why memif server @p s did not come up with @p ret; @p knock what its
 * socket said (sock_knock()). */
static int
server_why(const struct memif_sock *s, int ret, int knock, pid_t pid,
	   char *why, size_t len)
{
	const char *k = sock_kind(s);
	int cause = path_why(s, why, len);

	if (cause != 0)
		return cause;
	if (knock == 0 && pid != getpid())
		return served(s, pid, why, len);
	if (knock == -ENOTSOCK) {
		snprintf(why, len, "address in use: %s is there and is not a "
			 "socket", s->path);
		return -EADDRINUSE;
	}
	if (knock == -ECONNREFUSED && !s->abstract) {
		snprintf(why, len, "address in use: memif %s%s, left by a "
			 "process that is gone, cannot be removed", k, s->path);
		return -EADDRINUSE;
	}
	if (knock == -EACCES || ret == -EACCES) {
		snprintf(why, len, "memif %s%s: permission denied", k,
			 s->path);
		return -EACCES;
	}
	snprintf(why, len, "memif server on %s%s did not start: %s", k,
		 s->path, err_text(ret));
	return ret;
}

/* Why memif client @p s did not come up with @p ret; @p knock what its
 * socket said. */
static int
client_why(const struct memif_sock *s, int ret, int knock, char *why,
	   size_t len)
{
	const char *k = sock_kind(s);
	int cause = path_why(s, why, len);

	if (cause != 0)
		return cause;
	switch (knock) {
	case 0:
		snprintf(why, len, "memif %s%s is served, yet the port did "
			 "not start: %s", k, s->path, err_text(ret));
		return ret;
	case -ENOENT:
		snprintf(why, len, "nobody serves memif %s%s (no such file): "
			 "no server has started on it", k, s->path);
		return -ECONNREFUSED;
	case -ECONNREFUSED:
		snprintf(why, len, "nobody serves memif %s%s%s", k, s->path,
			 s->abstract ? "" : " (a file left by a server that "
			 "is gone)");
		return -ECONNREFUSED;
	case -ENOTSOCK:
		snprintf(why, len, "%s is not a socket", s->path);
		return -ENOTSOCK;
	case -EACCES:
		snprintf(why, len, "memif %s%s: permission denied", k,
			 s->path);
		return -EACCES;
	default:
		snprintf(why, len, "memif %s%s: %s", k, s->path,
			 strerror(-knock));
		return knock;
	}
}

int
droce_memif_why(const char *eal_args, const char *port, int ret, char *why,
		size_t len)
{
	struct memif_sock s;
	pid_t pid;
	int knock;

	why[0] = '\0';
	if (!memif_sock_of(eal_args, port, &s))
		return ret;
	knock = sock_knock(&s, &pid);
	return s.server ? server_why(&s, ret, knock, pid, why, len) :
		client_why(&s, ret, knock, why, len);
}

/* ------------------------------------------------------------------------
 * A client its server refused as it was starting.
 *
 * A memif server's socket listens from the moment DPDK probes the port,
 * but net_memif registers the port's interface id for its clients only
 * when the port starts (memif_connect_server() clears the port's
 * ETH_MEMIF_FLAG_DISABLED): in between, while the server's process sets
 * up its EAL, mbuf pool and queues, memif_msg_receive_init() answers a
 * client with "ID 0 not found" and a disconnect. The client's link goes
 * down, and nothing in net_memif dials again: it connects only as its
 * port starts (memif_connect_client()). Two processes started at once
 * (mpirun, ucx_perftest) meet that window often. So a client whose link
 * stays down once it has dialed is stopped and started again, the waits
 * growing, until its link is up.
 */

/* A stop and a start of a port, run on DPDK's interrupt thread. */
struct redial {
	uint16_t port_id;
	bool started;                 /**< the port is started (in and out) */
	int ret;
	uint32_t done;
};

/*
 * On DPDK's interrupt thread, where net_memif runs its side of the
 * handshake: a stop run from another thread as a message of the server
 * is handled there would tear down the same connection twice.
 */
static void
redial_alarm(void *arg)
{
	struct redial *r = arg;
	int ret = 0;

	/* (a port whose last start failed is stopped already) */
	if (r->started)
		ret = rte_eth_dev_stop(r->port_id);
	if (ret == 0) {
		ret = rte_eth_dev_start(r->port_id);
		r->started = ret == 0;
	}
	r->ret = ret;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

/*
 * Stop and start port r->port_id on DPDK's interrupt thread, waited for
 * up to REDIAL_MAX_MS.
 * @return 0, or why not: the start's error (the server has gone: the
 *   port is stopped, r->started false), the stop's, the alarm's, or
 *   -ETIMEDOUT if the interrupt thread did not come (the port as it was).
 */
static int
redial(struct redial *r)
{
	uint64_t deadline = rte_get_timer_cycles() +
		rte_get_timer_hz() / 1000 * REDIAL_MAX_MS;
	int ret;

	r->done = 0;
	ret = rte_eal_alarm_set(1, redial_alarm, r);
	if (ret < 0)
		return ret;
	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) &&
	       rte_get_timer_cycles() < deadline)
		rte_delay_us_sleep(1000);
	/* (one running is waited for: r is ours again either way) */
	rte_eal_alarm_cancel(redial_alarm, r);
	if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
		return -ETIMEDOUT;
	return r->ret;
}

/* Whether the link of @p port_id is up. */
static bool
link_up(uint16_t port_id)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port_id, &link) == 0 &&
		link.link_status == RTE_ETH_LINK_UP;
}

/*
 * Wait up to @p ms for the link of @p port_id, or until TSC @p deadline.
 * @return whether it is up.
 */
static bool
link_wait(uint16_t port_id, unsigned int ms, uint64_t deadline)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() / 1000 * ms;

	end = RTE_MIN(end, deadline);
	while (!link_up(port_id)) {
		if (rte_get_timer_cycles() >= end)
			return false;
		rte_delay_us_sleep(1000);
	}
	return true;
}

int
droce_memif_connect(const char *name, const char *eal_args,
		    const char *port, uint16_t port_id, unsigned int wait_ms)
{
	struct redial r = { .port_id = port_id, .started = true };
	uint64_t deadline = rte_get_timer_cycles() +
		rte_get_timer_hz() / 1000 * wait_ms;
	unsigned int ms = REDIAL_MS, dials = 1;
	struct memif_sock s;
	int ret;

	if (!memif_sock_of(eal_args, port, &s) || s.server)
		return 0;
	while (!link_wait(port_id, ms, deadline)) {
		if (rte_get_timer_cycles() >= deadline) {
			if (!r.started)
				return r.ret;
			DROCE_LOG(WARNING, "%s: port %u (%s): memif link still "
				  "down after %u dials in %u s: the server "
				  "refuses it (another id or secret, or a "
				  "client of its own already?)", name, port_id,
				  port, dials, wait_ms / 1000);
			return 0;
		}
		if (dials == 1)
			DROCE_LOG(NOTICE, "%s: port %u (%s): memif link still "
				  "down %u ms after dialing %s%s (a server "
				  "whose port has not started yet refuses its "
				  "clients): dialing again until it is up",
				  name, port_id, port, ms, sock_kind(&s),
				  s.path);
		ret = redial(&r);
		if (ret < 0 && r.started) {
			/* (the port left started, its link down) */
			DROCE_LOG(WARNING, "%s: port %u: cannot dial memif "
				  "%s%s again: %s", name, port_id,
				  sock_kind(&s), s.path, strerror(-ret));
			return 0;
		}
		dials++;
		ms = RTE_MIN(ms * 2, (unsigned int)REDIAL_MAX_MS);
	}
	if (dials > 1)
		DROCE_LOG(NOTICE, "%s: port %u: memif link up after %u dials",
			  name, port_id, dials);
	return 0;
}
