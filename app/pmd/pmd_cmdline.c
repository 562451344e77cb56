/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The commands: DPDK cmdline tokens and instructions, each calling into
 * pmd_port.c, pmd_qp.c, pmd_cm.c or pmd_run.c. Nothing but parsing lives
 * here.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#include "pmd.h"

static bool quit_asked;

void
pmd_help(void)
{
	printf(
		"Ports (every droce device is started at launch):\n"
		"  port start [all|DEV]        open the device(s)\n"
		"  port stop [all|DEV]         stop their CM listeners,\n"
		"                              destroy their QPs, close them\n"
		"  show port | show device [DEV]\n"
		"                              MAC, GIDs, link, MTU, counters\n"
		"  pcap start DEV FILE         mirror DEV's frames into FILE\n"
		"  pcap stop DEV               stop it and close FILE\n"
		"QPs (each with its own PD, 4 MiB MR and CQ):\n"
		"  create qp DEV [DEPTH]       RC QP in INIT; prints GID, QPN,\n"
		"                              PSN, rkey and address\n"
		"  connect qp ID qp PEER       to QP PEER of this process\n"
		"  connect qp ID GID QPN PSN [RKEY ADDR]\n"
		"                              to any peer; to RTS\n"
		"  destroy qp ID\n"
		"  show qp [ID]                state, peer, counters\n"
		"  show cq                     depth, completions polled\n"
		"RDMA CM (QPs as create qp makes them, moved by the CM):\n"
		"  cm listen DEV PORT          accept every request to DEV's\n"
		"                              address (GID 0) and PORT\n"
		"  cm stop DEV [PORT]          stop listening\n"
		"  cm connect DEV IP PORT      a QP on DEV, connected to IP\n"
		"  cm disconnect ID            DREQ, wait for DISCONNECTED,\n"
		"                              destroy the QP\n"
		"  show cm                     listeners, connections, CM\n"
		"                              counters\n"
		"Traffic:\n"
		"  run ID write|read|send SIZE COUNT\n"
		"                              COUNT messages of SIZE bytes\n"
		"Other:\n"
		"  sleep MS                    wait (for scripts), taking CM\n"
		"                              events meanwhile\n"
		"  help\n"
		"  quit                        destroy everything, exit\n");
}

bool
pmd_quit_asked(void)
{
	return quit_asked;
}

void
pmd_quit(struct cmdline *cl)
{
	quit_asked = true;
	if (cl != NULL)
		cmdline_quit(cl);
}

/* ------------------------------------------------------------------------
 * Tokens shared by several commands.
 */

struct cmd_words {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_fixed_string_t w2;
	cmdline_fixed_string_t w3;
};

#define WORD(field, words) \
	TOKEN_STRING_INITIALIZER(struct cmd_words, field, words)
#define ANY(field) TOKEN_STRING_INITIALIZER(struct cmd_words, field, NULL)

/* ------------------------------------------------------------------------
 * help, quit, sleep
 */

static void
cmd_help_parsed(void *res, struct cmdline *cl, void *data)
{
	(void)res;
	(void)cl;
	(void)data;
	pmd_help();
}

static cmdline_parse_token_string_t cmd_help_w0 = WORD(w0, "help");

static cmdline_parse_inst_t cmd_help = {
	.f = cmd_help_parsed,
	.help_str = "help: the commands",
	.tokens = { (void *)&cmd_help_w0, NULL },
};

static void
cmd_quit_parsed(void *res, struct cmdline *cl, void *data)
{
	(void)res;
	(void)data;
	pmd_quit(cl);
}

static cmdline_parse_token_string_t cmd_quit_w0 = WORD(w0, "quit");

static cmdline_parse_inst_t cmd_quit = {
	.f = cmd_quit_parsed,
	.help_str = "quit: destroy everything and exit",
	.tokens = { (void *)&cmd_quit_w0, NULL },
};

struct cmd_sleep_result {
	cmdline_fixed_string_t sleep;
	uint32_t ms;
};

static void
cmd_sleep_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_sleep_result *r = res;

	(void)cl;
	(void)data;
	pmd_cm_poll(r->ms);
}

static cmdline_parse_token_string_t cmd_sleep_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_sleep_result, sleep, "sleep");
static cmdline_parse_token_num_t cmd_sleep_ms =
	TOKEN_NUM_INITIALIZER(struct cmd_sleep_result, ms, RTE_UINT32);

static cmdline_parse_inst_t cmd_sleep = {
	.f = cmd_sleep_parsed,
	.help_str = "sleep MS: wait MS milliseconds",
	.tokens = { (void *)&cmd_sleep_w0, (void *)&cmd_sleep_ms, NULL },
};

/* ------------------------------------------------------------------------
 * port start|stop [all|DEV], show port|device [DEV], pcap start|stop
 */

static void
for_ports(const char *name, bool start)
{
	unsigned int i;

	if (strcmp(name, "all") != 0) {
		struct pmd_port *p = pmd_port_find(name);

		if (p != NULL && start)
			pmd_port_start(p);
		else if (p != NULL)
			pmd_port_stop(p);
		return;
	}
	for (i = 0; i < pmd_nports; i++)
		if (start)
			pmd_port_start(&pmd_ports[i]);
		else
			pmd_port_stop(&pmd_ports[i]);
}

static void
cmd_port_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_words *r = res;

	(void)cl;
	for_ports(data != NULL ? r->w2 : "all", strcmp(r->w1, "start") == 0);
}

static cmdline_parse_token_string_t cmd_port_w0 = WORD(w0, "port");
static cmdline_parse_token_string_t cmd_port_w1 = WORD(w1, "start#stop");
static cmdline_parse_token_string_t cmd_port_dev = ANY(w2);

static cmdline_parse_inst_t cmd_port_all = {
	.f = cmd_port_parsed,
	.data = NULL,
	.help_str = "port start|stop: every device",
	.tokens = { (void *)&cmd_port_w0, (void *)&cmd_port_w1, NULL },
};

static cmdline_parse_inst_t cmd_port_one = {
	.f = cmd_port_parsed,
	.data = (void *)1,
	.help_str = "port start|stop all|DEV",
	.tokens = { (void *)&cmd_port_w0, (void *)&cmd_port_w1,
		    (void *)&cmd_port_dev, NULL },
};

static void
cmd_show_port_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_words *r = res;
	unsigned int i;

	(void)cl;
	if (data != NULL) {
		struct pmd_port *p = pmd_port_find(r->w2);

		if (p != NULL)
			pmd_port_show(p);
		return;
	}
	for (i = 0; i < pmd_nports; i++)
		pmd_port_show(&pmd_ports[i]);
}

static cmdline_parse_token_string_t cmd_show_w0 = WORD(w0, "show");
static cmdline_parse_token_string_t cmd_show_port_w1 = WORD(w1, "port#device");
static cmdline_parse_token_string_t cmd_show_port_dev = ANY(w2);

static cmdline_parse_inst_t cmd_show_ports = {
	.f = cmd_show_port_parsed,
	.data = NULL,
	.help_str = "show port|device: every device",
	.tokens = { (void *)&cmd_show_w0, (void *)&cmd_show_port_w1, NULL },
};

static cmdline_parse_inst_t cmd_show_one_port = {
	.f = cmd_show_port_parsed,
	.data = (void *)1,
	.help_str = "show port|device DEV",
	.tokens = { (void *)&cmd_show_w0, (void *)&cmd_show_port_w1,
		    (void *)&cmd_show_port_dev, NULL },
};

static void
cmd_pcap_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_words *r = res;
	struct pmd_port *p = pmd_port_find(r->w2);

	(void)cl;
	if (p == NULL)
		return;
	if (data != NULL)
		pmd_pcap_start(p, r->w3);
	else
		pmd_pcap_stop(p);
}

static cmdline_parse_token_string_t cmd_pcap_w0 = WORD(w0, "pcap");
static cmdline_parse_token_string_t cmd_pcap_start_w1 = WORD(w1, "start");
static cmdline_parse_token_string_t cmd_pcap_stop_w1 = WORD(w1, "stop");
static cmdline_parse_token_string_t cmd_pcap_dev = ANY(w2);
static cmdline_parse_token_string_t cmd_pcap_file = ANY(w3);

static cmdline_parse_inst_t cmd_pcap_start = {
	.f = cmd_pcap_parsed,
	.data = (void *)1,
	.help_str = "pcap start DEV FILE: mirror DEV's frames into FILE",
	.tokens = { (void *)&cmd_pcap_w0, (void *)&cmd_pcap_start_w1,
		    (void *)&cmd_pcap_dev, (void *)&cmd_pcap_file, NULL },
};

static cmdline_parse_inst_t cmd_pcap_stop = {
	.f = cmd_pcap_parsed,
	.data = NULL,
	.help_str = "pcap stop DEV: stop mirroring DEV",
	.tokens = { (void *)&cmd_pcap_w0, (void *)&cmd_pcap_stop_w1,
		    (void *)&cmd_pcap_dev, NULL },
};

/* ------------------------------------------------------------------------
 * show qp [ID], show cq
 */

struct cmd_show_qp_result {
	cmdline_fixed_string_t show;
	cmdline_fixed_string_t what;
	uint32_t id;
};

static void
cmd_show_qp_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_show_qp_result *r = res;
	bool cq = strcmp(r->what, "cq") == 0;
	unsigned int i, n = 0;

	(void)cl;
	if (data != NULL) {
		struct pmd_qp *q = pmd_qp_get(r->id);

		if (q != NULL)
			pmd_qp_show(q);
		return;
	}
	for (i = 0; i < PMD_MAX_QPS; i++) {
		if (!pmd_qps[i].used)
			continue;
		if (cq)
			pmd_cq_show(&pmd_qps[i]);
		else
			pmd_qp_show(&pmd_qps[i]);
		n++;
	}
	if (n == 0)
		printf("no %s\n", cq ? "CQ" : "QP");
}

static cmdline_parse_token_string_t cmd_show_qp_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_show_qp_result, show, "show");
static cmdline_parse_token_string_t cmd_show_qp_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_show_qp_result, what, "qp");
static cmdline_parse_token_string_t cmd_show_qps_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_show_qp_result, what, "qp#cq");
static cmdline_parse_token_num_t cmd_show_qp_id =
	TOKEN_NUM_INITIALIZER(struct cmd_show_qp_result, id, RTE_UINT32);

static cmdline_parse_inst_t cmd_show_qps = {
	.f = cmd_show_qp_parsed,
	.data = NULL,
	.help_str = "show qp|cq: every QP or CQ",
	.tokens = { (void *)&cmd_show_qp_w0, (void *)&cmd_show_qps_w1, NULL },
};

static cmdline_parse_inst_t cmd_show_one_qp = {
	.f = cmd_show_qp_parsed,
	.data = (void *)1,
	.help_str = "show qp ID",
	.tokens = { (void *)&cmd_show_qp_w0, (void *)&cmd_show_qp_w1,
		    (void *)&cmd_show_qp_id, NULL },
};

/* ------------------------------------------------------------------------
 * create qp DEV [DEPTH], destroy qp ID
 */

struct cmd_create_qp_result {
	cmdline_fixed_string_t create;
	cmdline_fixed_string_t qp;
	cmdline_fixed_string_t dev;
	uint32_t depth;
};

static void
cmd_create_qp_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_create_qp_result *r = res;
	struct pmd_port *p = pmd_port_find(r->dev);

	(void)cl;
	if (p != NULL)
		pmd_qp_create(p, data != NULL ? r->depth : PMD_DEFAULT_DEPTH);
}

static cmdline_parse_token_string_t cmd_create_qp_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_create_qp_result, create, "create");
static cmdline_parse_token_string_t cmd_create_qp_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_create_qp_result, qp, "qp");
static cmdline_parse_token_string_t cmd_create_qp_dev =
	TOKEN_STRING_INITIALIZER(struct cmd_create_qp_result, dev, NULL);
static cmdline_parse_token_num_t cmd_create_qp_depth =
	TOKEN_NUM_INITIALIZER(struct cmd_create_qp_result, depth, RTE_UINT32);

static cmdline_parse_inst_t cmd_create_qp = {
	.f = cmd_create_qp_parsed,
	.data = NULL,
	.help_str = "create qp DEV: an RC QP of default depth",
	.tokens = { (void *)&cmd_create_qp_w0, (void *)&cmd_create_qp_w1,
		    (void *)&cmd_create_qp_dev, NULL },
};

static cmdline_parse_inst_t cmd_create_qp_depth_inst = {
	.f = cmd_create_qp_parsed,
	.data = (void *)1,
	.help_str = "create qp DEV DEPTH: an RC QP of DEPTH WRs each way",
	.tokens = { (void *)&cmd_create_qp_w0, (void *)&cmd_create_qp_w1,
		    (void *)&cmd_create_qp_dev, (void *)&cmd_create_qp_depth,
		    NULL },
};

struct cmd_destroy_qp_result {
	cmdline_fixed_string_t destroy;
	cmdline_fixed_string_t qp;
	uint32_t id;
};

static void
cmd_destroy_qp_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_destroy_qp_result *r = res;
	struct pmd_qp *q = pmd_qp_get(r->id);

	(void)cl;
	(void)data;
	if (q == NULL)
		return;
	pmd_qp_destroy(q);
	printf("qp %u destroyed\n", r->id);
}

static cmdline_parse_token_string_t cmd_destroy_qp_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_destroy_qp_result, destroy,
				 "destroy");
static cmdline_parse_token_string_t cmd_destroy_qp_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_destroy_qp_result, qp, "qp");
static cmdline_parse_token_num_t cmd_destroy_qp_id =
	TOKEN_NUM_INITIALIZER(struct cmd_destroy_qp_result, id, RTE_UINT32);

static cmdline_parse_inst_t cmd_destroy_qp = {
	.f = cmd_destroy_qp_parsed,
	.help_str = "destroy qp ID: the QP, its CQ, MR and PD",
	.tokens = { (void *)&cmd_destroy_qp_w0, (void *)&cmd_destroy_qp_w1,
		    (void *)&cmd_destroy_qp_id, NULL },
};

/* ------------------------------------------------------------------------
 * connect qp ID qp PEER, connect qp ID GID QPN PSN [RKEY ADDR]
 */

struct cmd_connect_local_result {
	cmdline_fixed_string_t connect;
	cmdline_fixed_string_t qp;
	uint32_t id;
	cmdline_fixed_string_t qp2;
	uint32_t peer;
};

static void
cmd_connect_local_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_connect_local_result *r = res;
	struct pmd_qp *q = pmd_qp_get(r->id);
	struct pmd_qp *peer = q != NULL ? pmd_qp_get(r->peer) : NULL;

	(void)cl;
	(void)data;
	if (peer != NULL)
		pmd_qp_connect_local(q, peer);
}

static cmdline_parse_token_string_t cmd_connect_local_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_connect_local_result, connect,
				 "connect");
static cmdline_parse_token_string_t cmd_connect_local_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_connect_local_result, qp, "qp");
static cmdline_parse_token_num_t cmd_connect_local_id =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_local_result, id, RTE_UINT32);
static cmdline_parse_token_string_t cmd_connect_local_w3 =
	TOKEN_STRING_INITIALIZER(struct cmd_connect_local_result, qp2, "qp");
static cmdline_parse_token_num_t cmd_connect_local_peer =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_local_result, peer,
			      RTE_UINT32);

static cmdline_parse_inst_t cmd_connect_local = {
	.f = cmd_connect_local_parsed,
	.help_str = "connect qp ID qp PEER: to QP PEER of this process",
	.tokens = { (void *)&cmd_connect_local_w0,
		    (void *)&cmd_connect_local_w1,
		    (void *)&cmd_connect_local_id,
		    (void *)&cmd_connect_local_w3,
		    (void *)&cmd_connect_local_peer, NULL },
};

struct cmd_connect_result {
	cmdline_fixed_string_t connect;
	cmdline_fixed_string_t qp;
	uint32_t id;
	cmdline_fixed_string_t gid;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
};

/* A GID as an IPv6 address, or an IPv4 address for its mapped GID. */
static int
parse_gid(const char *s, union ibv_gid *gid)
{
	struct in_addr v4;

	if (inet_pton(AF_INET6, s, gid->raw) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &v4) != 1)
		return -1;
	memset(gid->raw, 0, sizeof(gid->raw));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, &v4, 4);
	return 0;
}

static void
cmd_connect_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_connect_result *r = res;
	struct pmd_qp *q = pmd_qp_get(r->id);
	union ibv_gid gid;

	(void)cl;
	if (q == NULL)
		return;
	if (parse_gid(r->gid, &gid) < 0) {
		pmd_fail("%s: not a GID (IPv6 or IPv4 address)", r->gid);
		return;
	}
	if (data == NULL) {
		r->rkey = 0;
		r->addr = 0;
	}
	pmd_qp_connect(q, &gid, r->qpn, r->psn, r->rkey, r->addr);
}

static cmdline_parse_token_string_t cmd_connect_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_connect_result, connect, "connect");
static cmdline_parse_token_string_t cmd_connect_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_connect_result, qp, "qp");
static cmdline_parse_token_num_t cmd_connect_id =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_result, id, RTE_UINT32);
static cmdline_parse_token_string_t cmd_connect_gid =
	TOKEN_STRING_INITIALIZER(struct cmd_connect_result, gid, NULL);
static cmdline_parse_token_num_t cmd_connect_qpn =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_result, qpn, RTE_UINT32);
static cmdline_parse_token_num_t cmd_connect_psn =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_result, psn, RTE_UINT32);
static cmdline_parse_token_num_t cmd_connect_rkey =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_result, rkey, RTE_UINT32);
static cmdline_parse_token_num_t cmd_connect_addr =
	TOKEN_NUM_INITIALIZER(struct cmd_connect_result, addr, RTE_UINT64);

static cmdline_parse_inst_t cmd_connect = {
	.f = cmd_connect_parsed,
	.data = NULL,
	.help_str = "connect qp ID GID QPN PSN: to RTS (SEND only)",
	.tokens = { (void *)&cmd_connect_w0, (void *)&cmd_connect_w1,
		    (void *)&cmd_connect_id, (void *)&cmd_connect_gid,
		    (void *)&cmd_connect_qpn, (void *)&cmd_connect_psn, NULL },
};

static cmdline_parse_inst_t cmd_connect_mr = {
	.f = cmd_connect_parsed,
	.data = (void *)1,
	.help_str = "connect qp ID GID QPN PSN RKEY ADDR: to RTS, with the "
		"peer's buffer for WRITE and READ",
	.tokens = { (void *)&cmd_connect_w0, (void *)&cmd_connect_w1,
		    (void *)&cmd_connect_id, (void *)&cmd_connect_gid,
		    (void *)&cmd_connect_qpn, (void *)&cmd_connect_psn,
		    (void *)&cmd_connect_rkey, (void *)&cmd_connect_addr,
		    NULL },
};

/* ------------------------------------------------------------------------
 * cm listen DEV PORT, cm stop DEV [PORT], cm connect DEV IP PORT,
 * cm disconnect ID, show cm
 */

struct cmd_cm_dev_result {
	cmdline_fixed_string_t cm;
	cmdline_fixed_string_t what;
	cmdline_fixed_string_t dev;
	uint16_t port;
};

static void
cmd_cm_dev_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_cm_dev_result *r = res;
	struct pmd_port *p = pmd_port_find(r->dev);

	(void)cl;
	if (p == NULL)
		return;
	if (strcmp(r->what, "listen") == 0)
		pmd_cm_listen(p, r->port);
	else
		pmd_cm_stop(p, data != NULL ? r->port : -1);
}

static cmdline_parse_token_string_t cmd_cm_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_dev_result, cm, "cm");
static cmdline_parse_token_string_t cmd_cm_listen_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_dev_result, what, "listen");
static cmdline_parse_token_string_t cmd_cm_stop_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_dev_result, what, "stop");
static cmdline_parse_token_string_t cmd_cm_dev =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_dev_result, dev, NULL);
static cmdline_parse_token_num_t cmd_cm_port =
	TOKEN_NUM_INITIALIZER(struct cmd_cm_dev_result, port, RTE_UINT16);

static cmdline_parse_inst_t cmd_cm_listen = {
	.f = cmd_cm_dev_parsed,
	.data = (void *)1,
	.help_str = "cm listen DEV PORT: accept every request to DEV's "
		"address and PORT",
	.tokens = { (void *)&cmd_cm_w0, (void *)&cmd_cm_listen_w1,
		    (void *)&cmd_cm_dev, (void *)&cmd_cm_port, NULL },
};

static cmdline_parse_inst_t cmd_cm_stop_all = {
	.f = cmd_cm_dev_parsed,
	.data = NULL,
	.help_str = "cm stop DEV: stop DEV's listeners",
	.tokens = { (void *)&cmd_cm_w0, (void *)&cmd_cm_stop_w1,
		    (void *)&cmd_cm_dev, NULL },
};

static cmdline_parse_inst_t cmd_cm_stop_one = {
	.f = cmd_cm_dev_parsed,
	.data = (void *)1,
	.help_str = "cm stop DEV PORT: stop DEV's listener on PORT",
	.tokens = { (void *)&cmd_cm_w0, (void *)&cmd_cm_stop_w1,
		    (void *)&cmd_cm_dev, (void *)&cmd_cm_port, NULL },
};

struct cmd_cm_connect_result {
	cmdline_fixed_string_t cm;
	cmdline_fixed_string_t connect;
	cmdline_fixed_string_t dev;
	cmdline_fixed_string_t ip;
	uint16_t port;
};

static void
cmd_cm_connect_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_cm_connect_result *r = res;
	struct pmd_port *p = pmd_port_find(r->dev);

	(void)cl;
	(void)data;
	if (p != NULL)
		pmd_cm_connect(p, r->ip, r->port);
}

static cmdline_parse_token_string_t cmd_cm_connect_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_connect_result, cm, "cm");
static cmdline_parse_token_string_t cmd_cm_connect_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_connect_result, connect,
				 "connect");
static cmdline_parse_token_string_t cmd_cm_connect_dev =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_connect_result, dev, NULL);
static cmdline_parse_token_string_t cmd_cm_connect_ip =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_connect_result, ip, NULL);
static cmdline_parse_token_num_t cmd_cm_connect_port =
	TOKEN_NUM_INITIALIZER(struct cmd_cm_connect_result, port, RTE_UINT16);

static cmdline_parse_inst_t cmd_cm_connect = {
	.f = cmd_cm_connect_parsed,
	.help_str = "cm connect DEV IP PORT: a QP on DEV connected through "
		"the CM to IP and PORT",
	.tokens = { (void *)&cmd_cm_connect_w0, (void *)&cmd_cm_connect_w1,
		    (void *)&cmd_cm_connect_dev, (void *)&cmd_cm_connect_ip,
		    (void *)&cmd_cm_connect_port, NULL },
};

struct cmd_cm_disconnect_result {
	cmdline_fixed_string_t cm;
	cmdline_fixed_string_t disconnect;
	uint32_t id;
};

static void
cmd_cm_disconnect_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_cm_disconnect_result *r = res;
	struct pmd_qp *q = pmd_qp_get(r->id);

	(void)cl;
	(void)data;
	if (q != NULL)
		pmd_cm_disconnect(q);
}

static cmdline_parse_token_string_t cmd_cm_disconnect_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_disconnect_result, cm, "cm");
static cmdline_parse_token_string_t cmd_cm_disconnect_w1 =
	TOKEN_STRING_INITIALIZER(struct cmd_cm_disconnect_result, disconnect,
				 "disconnect");
static cmdline_parse_token_num_t cmd_cm_disconnect_id =
	TOKEN_NUM_INITIALIZER(struct cmd_cm_disconnect_result, id,
			      RTE_UINT32);

static cmdline_parse_inst_t cmd_cm_disconnect = {
	.f = cmd_cm_disconnect_parsed,
	.help_str = "cm disconnect ID: end QP ID's connection, destroy it",
	.tokens = { (void *)&cmd_cm_disconnect_w0,
		    (void *)&cmd_cm_disconnect_w1,
		    (void *)&cmd_cm_disconnect_id, NULL },
};

static void
cmd_show_cm_parsed(void *res, struct cmdline *cl, void *data)
{
	(void)res;
	(void)cl;
	(void)data;
	pmd_cm_show();
}

static cmdline_parse_token_string_t cmd_show_cm_w1 = WORD(w1, "cm");

static cmdline_parse_inst_t cmd_show_cm = {
	.f = cmd_show_cm_parsed,
	.help_str = "show cm: listeners, connections, the CM's counters",
	.tokens = { (void *)&cmd_show_w0, (void *)&cmd_show_cm_w1, NULL },
};

/* ------------------------------------------------------------------------
 * run ID write|read|send SIZE COUNT
 */

struct cmd_run_result {
	cmdline_fixed_string_t run;
	uint32_t id;
	cmdline_fixed_string_t mode;
	uint32_t size;
	uint64_t count;
};

static void
cmd_run_parsed(void *res, struct cmdline *cl, void *data)
{
	static const struct pmd_mode *const modes[] = {
		&pmd_mode_write, &pmd_mode_read, &pmd_mode_send,
	};
	struct cmd_run_result *r = res;
	struct pmd_qp *q = pmd_qp_get(r->id);
	unsigned int i;

	(void)cl;
	(void)data;
	if (q == NULL)
		return;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(r->mode, modes[i]->name) == 0)
			pmd_run(q, modes[i], r->size, r->count);
}

static cmdline_parse_token_string_t cmd_run_w0 =
	TOKEN_STRING_INITIALIZER(struct cmd_run_result, run, "run");
static cmdline_parse_token_num_t cmd_run_id =
	TOKEN_NUM_INITIALIZER(struct cmd_run_result, id, RTE_UINT32);
static cmdline_parse_token_string_t cmd_run_mode =
	TOKEN_STRING_INITIALIZER(struct cmd_run_result, mode,
				 "write#read#send");
static cmdline_parse_token_num_t cmd_run_size =
	TOKEN_NUM_INITIALIZER(struct cmd_run_result, size, RTE_UINT32);
static cmdline_parse_token_num_t cmd_run_count =
	TOKEN_NUM_INITIALIZER(struct cmd_run_result, count, RTE_UINT64);

static cmdline_parse_inst_t cmd_run = {
	.f = cmd_run_parsed,
	.help_str = "run ID write|read|send SIZE COUNT: COUNT messages",
	.tokens = { (void *)&cmd_run_w0, (void *)&cmd_run_id,
		    (void *)&cmd_run_mode, (void *)&cmd_run_size,
		    (void *)&cmd_run_count, NULL },
};

/* ------------------------------------------------------------------------
 * The context.
 */

cmdline_parse_ctx_t pmd_cmd_ctx[] = {
	&cmd_help,
	&cmd_quit,
	&cmd_sleep,
	&cmd_port_all,
	&cmd_port_one,
	&cmd_show_ports,
	&cmd_show_one_port,
	&cmd_show_qps,
	&cmd_show_one_qp,
	&cmd_pcap_start,
	&cmd_pcap_stop,
	&cmd_create_qp,
	&cmd_create_qp_depth_inst,
	&cmd_destroy_qp,
	&cmd_connect_local,
	&cmd_connect,
	&cmd_connect_mr,
	&cmd_cm_listen,
	&cmd_cm_stop_all,
	&cmd_cm_stop_one,
	&cmd_cm_connect,
	&cmd_cm_disconnect,
	&cmd_show_cm,
	&cmd_run,
	NULL,
};
