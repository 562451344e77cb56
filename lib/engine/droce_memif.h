/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_MEMIF_H
#define DROCE_MEMIF_H

#include "droce_engine_pvt.h"

/*
 * Ports' arguments (lib/engine/droce_port.c) and net_memif's sockets
 * (lib/engine/droce_memif.c).
 */

/**
 * The devargs of @p port, a device's port, into @p buf (@p len bytes):
 * @p port itself if it has arguments ("net_memif0,role=server,..."),
 * else those of the --vdev of @p eal_args that names it, else its name.
 * @return true if they are a --vdev's of @p eal_args.
 */
bool droce_port_devargs(const char *eal_args, const char *port, char *buf,
			size_t len);

/**
 * Before DPDK binds it: if @p port, the port of device @p name (its
 * arguments in the spec or in a --vdev of @p eal_args), is a net_memif
 * server whose socket file was left by a process that is gone (a
 * connect() to it is refused), remove the file, with a warning. A socket
 * another process serves is left as it is.
 *
 * @return 0 (also for a port that is no memif server), or -EADDRINUSE if
 *   another process serves the socket: @p why (@p len bytes) then names
 *   the socket and the process.
 */
int droce_memif_claim(const char *name, const char *eal_args,
		      const char *port, char *why, size_t len);

/**
 * Why @p port did not probe or start with @p ret, if it is a net_memif
 * port: what its socket says (nobody serves it, another live process
 * does, something else is at its path, ...), in words into @p why.
 *
 * @return the cause as a negative errno (-EADDRINUSE, -ECONNREFUSED,
 *   -EACCES, -ENOENT, ...), or @p ret with @p why empty if @p port is
 *   no memif port.
 */
int droce_memif_why(const char *eal_args, const char *port, int ret,
		    char *why, size_t len);

/**
 * Once port @p port_id of device @p name has started: if @p port (its
 * arguments as for droce_memif_claim()) is a net_memif client, wait for
 * its link, and while it stays down (a server refuses its clients until
 * its own port has started) stop and start the port, dialing the server
 * again, waits growing, for up to @p wait_ms. Run before any burst on
 * the port.
 *
 * @return 0 (the port started, its link up, or down with a warning if
 *   the server refused it all along), or the error of the last start if
 *   the server went away meanwhile: the port is stopped then.
 */
int droce_memif_connect(const char *name, const char *eal_args,
			const char *port, uint16_t port_id,
			unsigned int wait_ms);

/** Whether @p port (with @p eal_args) is a net_memif server. */
bool droce_memif_server(const char *eal_args, const char *port);

/* The Ethernet type of the frames a memif peer's leave is told with
 * (lib/engine/droce_memif_leave.c): IEEE 802's local experimental 2. */
#define DROCE_MEMIF_LEAVE_TYPE 0x88b6

/**
 * On the primary shard's lcore: if @p m, received on a memif port, is a
 * leave frame, take it (and free it): a peer that leaves has the device's
 * shards stop their bursts on the port, then is told they did.
 * @return whether it was one.
 */
bool droce_memif_leave_rx(struct droce_shard *sh, struct rte_mbuf *m);

/**
 * On the primary shard's lcore, while the memif peer of @p dev is not
 * DROCE_MEMIF_PEER_HERE: its link was seen @p up (or down). Once it went
 * down and came up again, a new peer is there and the shards' bursts
 * start again.
 */
void droce_memif_link(struct droce_dev *dev, bool up);

/**
 * As the process exits, its lcores stopped, before its ports close: each
 * memif peer whose link is up is told this one leaves, and its answer
 * (or its close) waited for a while (LEAVE_WAIT_MS), on DPDK's interrupt
 * thread, where net_memif unmaps a connection's rings as the peer closes
 * it.
 */
void droce_memif_leave_all(void);

#endif /* DROCE_MEMIF_H */
