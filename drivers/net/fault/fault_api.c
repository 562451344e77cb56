/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_fault's application interface (droce_eth_fault.h): fault ports
 * made from a program rather than from --vdev.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "droce_eth_fault.h"
#include "fault_pvt.h"

/* Make vdev "net_fault_<name>" with @p args; @return its port or -errno. */
static int
fault_make(const char *name, const char *args)
{
	char vname[RTE_ETH_NAME_MAX_LEN];
	uint16_t port;
	int ret;

	snprintf(vname, sizeof(vname), "net_fault_%.53s", name);
	if (rte_eth_dev_get_port_by_name(vname, &port) == 0)
		return -EEXIST;
	ret = rte_vdev_init(vname, args);
	if (ret < 0)
		return ret;
	if (rte_eth_dev_get_port_by_name(vname, &port) != 0)
		return -ENODEV;
	return port;
}

int
droce_eth_fault_wrap(const char *name, uint16_t port, const char *args)
{
	char pname[RTE_ETH_NAME_MAX_LEN];
	char vargs[sizeof(pname) + 1024];
	int n;

	if (rte_eth_dev_get_name_by_port(port, pname) != 0)
		return -ENODEV;
	n = snprintf(vargs, sizeof(vargs), "port=%s%s%s", pname,
		     args[0] != '\0' ? "," : "", args);
	if (n < 0 || (size_t)n >= sizeof(vargs))
		return -EINVAL;
	return fault_make(name, vargs);
}

/*
 * A switch's port wraps a port that carries no frames, only the
 * settings it starts with: a net_ring port on one ring that is never
 * written, shared by every such port, and numbered (net_ring takes
 * short names only).
 */
int
droce_eth_fault_switch_port(const char *name, const char *sw,
			    uint16_t nb_queues, unsigned int socket,
			    const char *args)
{
	static const char rname[] = "net_fault_sw";
	static unsigned int made;
	char pname[RTE_ETH_NAME_MAX_LEN];
	struct rte_ring *r[FAULT_SWITCH_RXQ];
	char vargs[1024];
	uint16_t q;
	int port, n;

	if (nb_queues == 0 || nb_queues > FAULT_SWITCH_RXQ ||
	    strlen(sw) >= FAULT_SWITCH_NAMESIZE)
		return -EINVAL;
	r[0] = rte_ring_lookup(rname);
	if (r[0] == NULL)
		r[0] = rte_ring_create(rname, 64, (int)socket,
				       RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r[0] == NULL)
		return -rte_errno;
	for (q = 1; q < nb_queues; q++)
		r[q] = r[0];
	snprintf(pname, sizeof(pname), "fault_sw%u",
		 __atomic_fetch_add(&made, 1, __ATOMIC_RELAXED));
	port = rte_eth_from_rings(pname, r, nb_queues, r, nb_queues, socket);
	if (port < 0)
		return -rte_errno;
	n = snprintf(vargs, sizeof(vargs), "switch=%s%s%s", sw,
		     args[0] != '\0' ? "," : "", args);
	if (n < 0 || (size_t)n >= sizeof(vargs)) {
		rte_eth_dev_close((uint16_t)port);
		return -EINVAL;
	}
	n = droce_eth_fault_wrap(name, (uint16_t)port, vargs);
	if (n < 0)
		rte_eth_dev_close((uint16_t)port);
	return n;
}

bool
droce_eth_fault_dma_only(uint16_t port)
{
	const struct fault_port *fp = droce_fault_port_of(port);

	return fp != NULL && fp->params.dma;
}

bool
droce_eth_fault_loopback(uint16_t port)
{
	return droce_fault_port_of(port) != NULL;
}
