/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Ports: the droce devices, opened by `port start` (every one at launch,
 * as testpmd starts its ports) and closed by `port stop`. The engine and
 * its DPDK ports run for as long as the process does, whatever is open:
 * stopping a port here stops its CM listeners, destroys the QPs
 * droce-pmd made on it and closes the device, and the engine keeps
 * answering ARP for its address and counting what arrives for QPs that
 * are gone.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <droce.h>

#include "pmd.h"

struct pmd_port pmd_ports[PMD_MAX_PORTS];
unsigned int pmd_nports;

static struct ibv_device **dev_list;

int
pmd_ports_init(void)
{
	int i, n;

	/* the first call starts droce's engine */
	dev_list = ibv_get_device_list(&n);
	if (dev_list == NULL || n == 0) {
		fprintf(stderr, "droce-pmd: no droce device: %s\n",
			dev_list == NULL ? strerror(errno) : "none configured");
		return -1;
	}
	for (i = 0; i < n && i < PMD_MAX_PORTS; i++) {
		struct pmd_port *p = &pmd_ports[i];

		snprintf(p->name, sizeof(p->name), "%s",
			 ibv_get_device_name(dev_list[i]));
		p->ibdev = dev_list[i];
	}
	pmd_nports = (unsigned int)i;
	return 0;
}

void
pmd_ports_fini(void)
{
	unsigned int i;

	for (i = 0; i < pmd_nports; i++)
		pmd_port_stop(&pmd_ports[i]);
	if (dev_list != NULL)
		ibv_free_device_list(dev_list);
	dev_list = NULL;
	pmd_nports = 0;
}

struct pmd_port *
pmd_port_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < pmd_nports; i++)
		if (strcmp(pmd_ports[i].name, name) == 0)
			return &pmd_ports[i];
	pmd_fail("no device %s", name);
	return NULL;
}

int
pmd_port_start(struct pmd_port *p)
{
	if (p->ctx != NULL) {
		printf("%s: already started\n", p->name);
		return 0;
	}
	p->ctx = ibv_open_device(p->ibdev);
	if (p->ctx == NULL) {
		pmd_fail("%s: cannot open: %s", p->name, strerror(errno));
		return -1;
	}
	printf("%s: started\n", p->name);
	return 0;
}

void
pmd_port_stop(struct pmd_port *p)
{
	unsigned int i;

	if (p->ctx == NULL)
		return;
	pmd_cm_port_stop(p);
	for (i = 0; i < PMD_MAX_QPS; i++)
		if (pmd_qps[i].used && pmd_qps[i].port == p)
			pmd_qp_destroy(&pmd_qps[i]);
	if (p->pcap)
		pmd_pcap_stop(p);
	ibv_close_device(p->ctx);
	p->ctx = NULL;
	printf("%s: stopped\n", p->name);
}

static const char *
port_state_name(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_ACTIVE:
		return "up";
	case IBV_PORT_DOWN:
		return "down";
	default:
		return "not active";
	}
}

void
pmd_counter(const char *name, uint64_t v)
{
	printf("  %-16s %" PRIu64 "\n", name, v);
}

/* Every counter of droce_counters.h's list, in its order. */
static void
port_counters(struct ibv_context *ctx)
{
	struct droce_counters c;

	droce_query_counters(ctx, &c);
#define SHOW_COUNTER(name, desc) pmd_counter(#name, c.name);
	DROCE_DEV_COUNTERS(SHOW_COUNTER)
#undef SHOW_COUNTER
}

/* A stopped port is opened for the look and closed again. */
void
pmd_port_show(struct pmd_port *p)
{
	struct ibv_context *ctx = p->ctx;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint8_t mac[6];
	char buf[INET6_ADDRSTRLEN];
	int i;

	if (ctx == NULL)
		ctx = ibv_open_device(p->ibdev);
	if (ctx == NULL || ibv_query_port(ctx, 1, &pa) != 0) {
		pmd_fail("%s: cannot query", p->name);
		if (ctx != NULL && p->ctx == NULL)
			ibv_close_device(ctx);
		return;
	}
	droce_query_mac(ctx, mac);
	printf("%s (%s)\n", p->name, p->ctx != NULL ? "started" : "stopped");
	printf("  MAC %02X:%02X:%02X:%02X:%02X:%02X  link %s  active MTU %u\n",
	       mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
	       port_state_name(pa.state), 128u << pa.active_mtu);
	for (i = 0; i < pa.gid_tbl_len; i++) {
		static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };
		static const union ibv_gid unset;

		if (ibv_query_gid(ctx, 1, i, &gid) != 0)
			break;
		if (memcmp(&gid, &unset, sizeof(gid)) == 0)
			continue;
		if (inet_ntop(AF_INET6, gid.raw, buf, sizeof(buf)) == NULL)
			continue;
		printf("  GID %d %s", i, buf);
		if (memcmp(gid.raw, v4_mapped, sizeof(v4_mapped)) == 0 &&
		    inet_ntop(AF_INET, gid.raw + 12, buf, sizeof(buf)) != NULL)
			printf("  (IPv4 %s)", buf);
		printf("\n");
	}
	printf("  pcap %s\n", p->pcap ? p->pcap_path : "off");
	port_counters(ctx);
	if (p->ctx == NULL)
		ibv_close_device(ctx);
}

int
pmd_pcap_start(struct pmd_port *p, const char *path)
{
	int ret;

	if (p->ctx == NULL) {
		pmd_fail("%s: stopped", p->name);
		return -1;
	}
	ret = droce_mirror_start(p->ctx, path);
	if (ret != 0) {
		pmd_fail("%s: cannot mirror to %s: %s", p->name, path,
			 ret == EBUSY ? "mirroring already" : strerror(ret));
		return -1;
	}
	p->pcap = true;
	snprintf(p->pcap_path, sizeof(p->pcap_path), "%s", path);
	printf("%s: mirroring to %s\n", p->name, path);
	return 0;
}

int
pmd_pcap_stop(struct pmd_port *p)
{
	int ret;

	if (p->ctx == NULL) {
		pmd_fail("%s: stopped", p->name);
		return -1;
	}
	ret = droce_mirror_stop(p->ctx);
	if (ret != 0) {
		pmd_fail("%s: %s", p->name, ret == ENOENT ? "not mirroring" :
			 strerror(ret));
		return -1;
	}
	printf("%s: mirror %s closed\n", p->name,
	       p->pcap ? p->pcap_path : "(from the configuration)");
	p->pcap = false;
	return 0;
}
