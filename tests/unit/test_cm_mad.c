/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * CM MADs (lib/cm): every CM MAD of the rdma_cm golden captures (Linux
 * soft-RoCE, tests/data/pcaps) parses to the values tshark's InfiniBand
 * CM dissector shows for it and builds back to the same 256 bytes; each
 * malformed MAD is refused with its own error, in the documented order;
 * the builder refuses unknown attributes without writing, truncates
 * every field to its bits and leaves every reserved bit zero; rdma_cm's
 * service IDs and private data header go both ways.
 *
 * Usage: test_cm_mad PCAP_DIR
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <droce_cm.h>
#include <droce_cm_mad.h>
#include <droce_pcapfile.h>
#include <droce_wire.h>

#define FRAME_CAP 16384
#define MAX_MADS 32

/* A CM MAD of a golden capture. */
struct golden {
	const char *file;
	uint32_t frame;
	uint8_t mad[DROCE_MAD_LEN];
};

static const char *pcap_dir;
static struct golden mads[MAX_MADS];
static unsigned int nb_mads;

/* The captures and, in order, the attribute of each of their CM MADs. */
static const struct {
	const char *file;
	uint16_t attrs[12];
	unsigned int nb;
} captures[] = {
	{ "rdma_cm_rping.pcap", { DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_REP,
		DROCE_CM_ATTR_RTU, DROCE_CM_ATTR_DREQ, DROCE_CM_ATTR_DREP },
	  5 },
	{ "rdma_cm_send_bw.pcap", { DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_REP,
		DROCE_CM_ATTR_RTU, DROCE_CM_ATTR_REQ, DROCE_CM_ATTR_REP,
		DROCE_CM_ATTR_RTU, DROCE_CM_ATTR_DREQ, DROCE_CM_ATTR_DREP,
		DROCE_CM_ATTR_DREQ, DROCE_CM_ATTR_DREP }, 10 },
	{ "rdma_cm_udaddy.pcap", { DROCE_CM_ATTR_SIDR_REQ,
		DROCE_CM_ATTR_SIDR_REP }, 2 },
};

/* Keep the payload of every UD SEND Only to QP1 of one capture. */
static int
load_capture(const char *name)
{
	static uint8_t buf[FRAME_CAP];
	struct droce_pcapfile pf;
	struct droce_pcap_rec rec;
	struct droce_wire_pkt pkt;
	char path[4096];
	uint32_t frame = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", pcap_dir, name);
	if (droce_pcap_open_read(&pf, path) < 0) {
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	while ((ret = droce_pcap_read(&pf, &rec, buf, sizeof(buf))) > 0) {
		frame++;
		if (droce_wire_parse(buf, rec.caplen, 0, &pkt) != 0) {
			fprintf(stderr, "%s frame %u: not RoCEv2\n", name,
				frame);
			ret = -1;
			break;
		}
		if (pkt.bth.opcode != (DROCE_TR_UD | DROCE_OP_SEND_ONLY) ||
		    pkt.bth.dqpn != DROCE_GSI_QPN)
			continue;
		/* the GSI, from the GSI */
		if (pkt.deth.qkey != DROCE_GSI_QKEY ||
		    pkt.deth.srcqp != DROCE_GSI_QPN ||
		    pkt.payload_len != DROCE_MAD_LEN || nb_mads == MAX_MADS) {
			fprintf(stderr, "%s frame %u: not a MAD to the GSI\n",
				name, frame);
			ret = -1;
			break;
		}
		mads[nb_mads].file = name;
		mads[nb_mads].frame = frame;
		memcpy(mads[nb_mads].mad, pkt.payload, DROCE_MAD_LEN);
		nb_mads++;
	}
	droce_pcap_close(&pf);
	return ret;
}

static int
load_all(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(captures); i++)
		if (load_capture(captures[i].file) < 0)
			return -1;
	return 0;
}

static const struct golden *
find(const char *file, uint32_t frame)
{
	unsigned int i;

	for (i = 0; i < nb_mads; i++)
		if (strcmp(mads[i].file, file) == 0 && mads[i].frame == frame)
			return &mads[i];
	fail_msg("%s frame %u is not a CM MAD", file, frame);
	return NULL;
}

/* Parse the CM MAD of @p file frame @p frame, which must be @p attr_id. */
static void
parse_golden(const char *file, uint32_t frame, uint16_t attr_id,
	     struct droce_cm_msg *msg)
{
	const struct golden *g = find(file, frame);

	assert_int_equal(droce_cm_mad_parse(g->mad, DROCE_MAD_LEN, msg),
			 DROCE_CM_MAD_OK);
	assert_int_equal(msg->hdr.attr_id, attr_id);
}

/* ::ffff:192.168.77.x, the GIDs of the two guests */
static void
guest_gid(uint8_t gid[16], uint8_t host)
{
	droce_gid_from_ipv4(gid, rte_cpu_to_be_32(0xc0a84d00u | host));
}

#define SERVER 11
#define CLIENT 12

static void
assert_gid(const uint8_t gid[16], uint8_t host)
{
	uint8_t want[16];

	guest_gid(want, host);
	assert_memory_equal(gid, want, 16);
}

static void
assert_zero(const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != 0)
			fail_msg("byte %zu is 0x%02x, not 0", i, b[i]);
}

/* ------------------------------------------------------------------------
 * The golden captures.
 */

static void
test_golden_all_parse(void **state)
{
	struct droce_cm_msg msg;
	unsigned int c, i, k = 0;

	(void)state;
	for (c = 0; c < RTE_DIM(captures); c++) {
		for (i = 0; i < captures[c].nb; i++, k++) {
			const struct golden *g = &mads[k];
			enum droce_cm_mad_err err;

			assert_true(k < nb_mads);
			assert_string_equal(g->file, captures[c].file);
			err = droce_cm_mad_parse(g->mad, DROCE_MAD_LEN, &msg);
			if (err != DROCE_CM_MAD_OK)
				fail_msg("%s frame %u: %s", g->file, g->frame,
					 droce_cm_mad_err_name(err));
			assert_int_equal(msg.hdr.base_version, 1);
			assert_int_equal(msg.hdr.mgmt_class, 0x07);
			assert_int_equal(msg.hdr.class_version, 2);
			assert_int_equal(msg.hdr.method, DROCE_MAD_METHOD_SEND);
			assert_int_equal(msg.hdr.status, 0);
			assert_int_equal(msg.hdr.class_specific, 0);
			assert_int_equal(msg.hdr.attr_mod, 0);
			assert_int_equal(msg.hdr.attr_id, captures[c].attrs[i]);
		}
	}
	/* 5 + 10 + 2 and no more */
	assert_int_equal(nb_mads, 17);
	assert_int_equal(k, nb_mads);
}

static void
test_golden_round_trip(void **state)
{
	uint8_t out[DROCE_MAD_LEN];
	struct droce_cm_msg msg;
	unsigned int i;

	(void)state;
	assert_int_equal(nb_mads, 17);
	for (i = 0; i < nb_mads; i++) {
		const struct golden *g = &mads[i];

		assert_int_equal(droce_cm_mad_parse(g->mad, DROCE_MAD_LEN,
						    &msg), DROCE_CM_MAD_OK);
		memset(out, 0xa5, sizeof(out));
		assert_int_equal(droce_cm_mad_build(&msg, out), DROCE_MAD_LEN);
		if (memcmp(out, g->mad, DROCE_MAD_LEN) != 0)
			fail_msg("%s frame %u: rebuilt MAD differs", g->file,
				 g->frame);
	}
}

/* What tshark -V shows for each REQ (and what it gets wrong: see
 * flow_label). */
static const struct req_answer {
	const char *file;
	uint32_t frame;
	uint64_t tid;
	uint32_t comm_id;
	uint64_t service_id;
	uint16_t port;
	uint32_t qpn;
	uint32_t psn;
	uint8_t resources;      /* responder resources = initiator depth */
	uint16_t cma_sport;
	/* tshark 4.0 reads the flow label from three bytes and the packet
	 * rate from the first: 0x001cc and 0x1c here. The spec's layout
	 * gives rdma_cm's flow label of RoCEv2, (sport * 31 + dport) &
	 * 0xfffff of the ports below, and rate 0. */
	uint32_t flow_label;
} req_answers[] = {
	{ "rdma_cm_rping.pcap", 1, 0x00000002dde4211full, 0x1f21e4dd,
	  0x0000000001061c06ull, 0x1c06, 0x000011, 0x67a219, 1, 0x9217,
	  0x1cccf },
	{ "rdma_cm_send_bw.pcap", 1, 0x000000020e772ee2ull, 0xe22e770e,
	  0x0000000001064853ull, 0x4853, 0x000011, 0x55e1fd, 0, 0xe707,
	  0xc422c },
	{ "rdma_cm_send_bw.pcap", 24, 0x000000020e772ee3ull, 0xe32e770e,
	  0x0000000001064853ull, 0x4853, 0x000012, 0x87ad3c, 0, 0xd5ef,
	  0xa3044 },
};

static void
test_golden_req(void **state)
{
	struct droce_cma_hdr cma;
	struct droce_cm_msg msg;
	const struct droce_cm_req *r = &msg.req;
	uint16_t ps, port;
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(req_answers); i++) {
		const struct req_answer *a = &req_answers[i];

		parse_golden(a->file, a->frame, DROCE_CM_ATTR_REQ, &msg);
		assert_int_equal(msg.hdr.tid, a->tid);
		assert_int_equal(r->local_comm_id, a->comm_id);
		assert_int_equal(r->service_id, a->service_id);
		assert_true(droce_cma_service_split(r->service_id, &ps, &port));
		assert_int_equal(ps, DROCE_CMA_PS_TCP);
		assert_int_equal(port, a->port);
		assert_int_equal(r->local_ca_guid, 0x505400fffe770012ull);
		assert_int_equal(r->local_qkey, 0);
		assert_int_equal(r->local_qpn, a->qpn);
		assert_int_equal(r->responder_resources, a->resources);
		assert_int_equal(r->local_eecn, 0);
		assert_int_equal(r->initiator_depth, a->resources);
		assert_int_equal(r->remote_eecn, 0);
		assert_int_equal(r->remote_cm_response_timeout, 0x14);
		assert_int_equal(r->transport_type, 0);     /* RC */
		assert_false(r->flow_control);
		assert_int_equal(r->starting_psn, a->psn);
		assert_int_equal(r->local_cm_response_timeout, 0x14);
		assert_int_equal(r->retry_count, 7);
		assert_int_equal(r->pkey, 0xffff);
		assert_int_equal(r->path_mtu, 3);           /* 1024 */
		assert_false(r->rdc_exists);
		assert_int_equal(r->rnr_retry_count, 7);
		assert_int_equal(r->max_cm_retries, 15);
		assert_false(r->srq);
		assert_int_equal(r->ext_transport_type, 0);
		/* the primary path, from the client to the server */
		assert_int_equal(r->primary.local_lid, 0xffff);
		assert_int_equal(r->primary.remote_lid, 0xffff);
		assert_gid(r->primary.local_gid, CLIENT);
		assert_gid(r->primary.remote_gid, SERVER);
		assert_int_equal(r->primary.flow_label, a->flow_label);
		assert_int_equal(r->primary.flow_label,
				 (a->cma_sport * 31u + a->port) & 0xfffff);
		assert_int_equal(r->primary.packet_rate, 0);
		assert_int_equal(r->primary.traffic_class, 0);
		assert_int_equal(r->primary.hop_limit, 0x40);
		assert_int_equal(r->primary.sl, 0);
		assert_false(r->primary.subnet_local);
		assert_int_equal(r->primary.local_ack_timeout, 0x13);
		/* no alternate path */
		assert_int_equal(r->alternate.local_lid, 0);
		assert_int_equal(r->alternate.remote_lid, 0);
		assert_zero(r->alternate.local_gid, 16);
		assert_zero(r->alternate.remote_gid, 16);
		assert_int_equal(r->alternate.flow_label, 0);
		assert_int_equal(r->alternate.hop_limit, 0);
		assert_int_equal(r->alternate.local_ack_timeout, 0);
		/* rdma_cm's header: IPv4, the client's port and address */
		assert_int_equal(droce_cma_hdr_parse(r->private_data,
						     sizeof(r->private_data),
						     &cma), 0);
		assert_int_equal(cma.cma_version, 0);
		assert_int_equal(cma.ip_version, 4);
		assert_int_equal(cma.src_port, a->cma_sport);
		assert_gid(cma.src_addr, CLIENT);
		assert_gid(cma.dst_addr, SERVER);
		/* and no consumer private data after it */
		assert_zero(r->private_data + DROCE_CMA_HDR_LEN,
			    sizeof(r->private_data) - DROCE_CMA_HDR_LEN);
	}
}

/* Each REP answers the REQ above it: same TID, its comm ID as remote. */
static const struct rep_answer {
	const char *file;
	uint32_t frame;
	uint64_t tid;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t qpn;
	uint32_t psn;
	uint8_t resources;
} rep_answers[] = {
	{ "rdma_cm_rping.pcap", 2, 0x00000002dde4211full, 0x6b814bf0,
	  0x1f21e4dd, 0x000011, 0x271ed8, 1 },
	{ "rdma_cm_send_bw.pcap", 2, 0x000000020e772ee2ull, 0xfa9abecd,
	  0xe22e770e, 0x000011, 0xedcab0, 0 },
	{ "rdma_cm_send_bw.pcap", 25, 0x000000020e772ee3ull, 0xf89abecd,
	  0xe32e770e, 0x000012, 0x16c703, 0 },
};

static void
test_golden_rep(void **state)
{
	struct droce_cm_msg msg;
	const struct droce_cm_rep *r = &msg.rep;
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(rep_answers); i++) {
		const struct rep_answer *a = &rep_answers[i];

		parse_golden(a->file, a->frame, DROCE_CM_ATTR_REP, &msg);
		assert_int_equal(msg.hdr.tid, a->tid);
		assert_int_equal(r->local_comm_id, a->local_comm_id);
		assert_int_equal(r->remote_comm_id, a->remote_comm_id);
		assert_int_equal(r->local_qkey, 0);
		assert_int_equal(r->local_qpn, a->qpn);
		assert_int_equal(r->local_eecn, 0);
		assert_int_equal(r->starting_psn, a->psn);
		assert_int_equal(r->responder_resources, a->resources);
		assert_int_equal(r->initiator_depth, a->resources);
		assert_int_equal(r->target_ack_delay, 0x0f);
		assert_int_equal(r->failover_accepted, 0);
		assert_false(r->flow_control);
		assert_int_equal(r->rnr_retry_count, 7);
		assert_false(r->srq);
		assert_int_equal(r->local_ca_guid, 0x505400fffe770011ull);
		assert_zero(r->private_data, sizeof(r->private_data));
	}
}

/* RTU, DREQ and DREP: the comm IDs of the two sides, sender's first. */
static const struct conn_answer {
	const char *file;
	uint32_t frame;
	uint16_t attr_id;
	uint64_t tid;
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;            /* DREQ */
} conn_answers[] = {
	{ "rdma_cm_rping.pcap", 3, DROCE_CM_ATTR_RTU, 0x00000002dde4211full,
	  0x1f21e4dd, 0x6b814bf0, 0 },
	{ "rdma_cm_rping.pcap", 40, DROCE_CM_ATTR_DREQ, 0x00000002dde4211full,
	  0x1f21e4dd, 0x6b814bf0, 0x000011 },
	{ "rdma_cm_rping.pcap", 41, DROCE_CM_ATTR_DREP, 0x00000002dde4211full,
	  0x6b814bf0, 0x1f21e4dd, 0 },
	{ "rdma_cm_send_bw.pcap", 3, DROCE_CM_ATTR_RTU, 0x000000020e772ee2ull,
	  0xe22e770e, 0xfa9abecd, 0 },
	{ "rdma_cm_send_bw.pcap", 26, DROCE_CM_ATTR_RTU,
	  0x000000020e772ee3ull, 0xe32e770e, 0xf89abecd, 0 },
	{ "rdma_cm_send_bw.pcap", 91, DROCE_CM_ATTR_DREQ,
	  0x000000020e772ee3ull, 0xe32e770e, 0xf89abecd, 0x000012 },
	{ "rdma_cm_send_bw.pcap", 92, DROCE_CM_ATTR_DREP,
	  0x000000020e772ee3ull, 0xf89abecd, 0xe32e770e, 0 },
	{ "rdma_cm_send_bw.pcap", 93, DROCE_CM_ATTR_DREQ,
	  0x000000020e772ee2ull, 0xe22e770e, 0xfa9abecd, 0x000011 },
	{ "rdma_cm_send_bw.pcap", 94, DROCE_CM_ATTR_DREP,
	  0x000000020e772ee2ull, 0xfa9abecd, 0xe22e770e, 0 },
};

static void
test_golden_rtu_dreq_drep(void **state)
{
	struct droce_cm_msg msg;
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(conn_answers); i++) {
		const struct conn_answer *a = &conn_answers[i];

		parse_golden(a->file, a->frame, a->attr_id, &msg);
		assert_int_equal(msg.hdr.tid, a->tid);
		switch (a->attr_id) {
		case DROCE_CM_ATTR_RTU:
			assert_int_equal(msg.rtu.local_comm_id,
					 a->local_comm_id);
			assert_int_equal(msg.rtu.remote_comm_id,
					 a->remote_comm_id);
			assert_zero(msg.rtu.private_data,
				    sizeof(msg.rtu.private_data));
			break;
		case DROCE_CM_ATTR_DREQ:
			assert_int_equal(msg.dreq.local_comm_id,
					 a->local_comm_id);
			assert_int_equal(msg.dreq.remote_comm_id,
					 a->remote_comm_id);
			assert_int_equal(msg.dreq.remote_qpn, a->remote_qpn);
			assert_zero(msg.dreq.private_data,
				    sizeof(msg.dreq.private_data));
			break;
		default:
			assert_int_equal(msg.drep.local_comm_id,
					 a->local_comm_id);
			assert_int_equal(msg.drep.remote_comm_id,
					 a->remote_comm_id);
			assert_zero(msg.drep.private_data,
				    sizeof(msg.drep.private_data));
			break;
		}
	}
}

/* udaddy: tshark 4.0 does not dissect SIDR; its MAD data bytes do show
 * these values at the spec's offsets. */
static void
test_golden_sidr(void **state)
{
	struct droce_cma_hdr cma;
	struct droce_cm_msg msg;
	uint16_t ps, port;

	(void)state;
	parse_golden("rdma_cm_udaddy.pcap", 1, DROCE_CM_ATTR_SIDR_REQ, &msg);
	assert_int_equal(msg.hdr.tid, 0x00000002bb217cbaull);
	assert_int_equal(msg.sidr_req.request_id, 0xba7c21bb);
	assert_int_equal(msg.sidr_req.pkey, 0xffff);
	assert_int_equal(msg.sidr_req.service_id, 0x0000000001111c06ull);
	assert_true(droce_cma_service_split(msg.sidr_req.service_id, &ps,
					    &port));
	assert_int_equal(ps, DROCE_CMA_PS_UDP);
	assert_int_equal(port, 7174);
	assert_int_equal(droce_cma_hdr_parse(msg.sidr_req.private_data,
					     DROCE_CM_SIDR_REQ_PRIV_LEN, &cma),
			 0);
	assert_int_equal(cma.ip_version, 4);
	assert_int_equal(cma.src_port, 0xe92e);
	assert_gid(cma.src_addr, CLIENT);
	assert_gid(cma.dst_addr, SERVER);

	parse_golden("rdma_cm_udaddy.pcap", 2, DROCE_CM_ATTR_SIDR_REP, &msg);
	assert_int_equal(msg.hdr.tid, 0x00000002bb217cbaull);
	assert_int_equal(msg.sidr_rep.request_id, 0xba7c21bb);
	assert_int_equal(msg.sidr_rep.status, DROCE_CM_SIDR_SUCCESS);
	assert_int_equal(msg.sidr_rep.info_len, 0);
	assert_int_equal(msg.sidr_rep.qpn, 0x000011);
	assert_int_equal(msg.sidr_rep.service_id, 0x0000000001111c06ull);
	/* rdma_cm's Q_Key of UDP port space QPs */
	assert_int_equal(msg.sidr_rep.qkey, 0x01234567);
	assert_zero(msg.sidr_rep.info, sizeof(msg.sidr_rep.info));
	assert_zero(msg.sidr_rep.private_data,
		    sizeof(msg.sidr_rep.private_data));
}

/* ------------------------------------------------------------------------
 * Refusals.
 */

static void
test_parse_errors(void **state)
{
	const struct golden *g = find("rdma_cm_rping.pcap", 1);
	uint8_t m[DROCE_MAD_LEN];
	struct droce_cm_msg msg;

	(void)state;
	/* short: the header is still read when it is whole */
	memset(&msg, 0, sizeof(msg));
	assert_int_equal(droce_cm_mad_parse(g->mad, DROCE_MAD_LEN - 1, &msg),
			 DROCE_CM_MAD_TRUNCATED);
	assert_int_equal(msg.hdr.attr_id, DROCE_CM_ATTR_REQ);
	assert_int_equal(msg.hdr.tid, 0x00000002dde4211full);
	memset(&msg, 0, sizeof(msg));
	assert_int_equal(droce_cm_mad_parse(g->mad, DROCE_MAD_HDR_LEN - 1,
					    &msg), DROCE_CM_MAD_TRUNCATED);
	assert_int_equal(msg.hdr.attr_id, 0);
	assert_int_equal(droce_cm_mad_parse(g->mad, 0, &msg),
			 DROCE_CM_MAD_TRUNCATED);
	/* longer is fine: bytes past 256 are not the MAD's */
	{
		uint8_t longer[DROCE_MAD_LEN + 8];

		memcpy(longer, g->mad, DROCE_MAD_LEN);
		memset(longer + DROCE_MAD_LEN, 0xee, 8);
		assert_int_equal(droce_cm_mad_parse(longer, sizeof(longer),
						    &msg), DROCE_CM_MAD_OK);
	}

	memcpy(m, g->mad, sizeof(m));
	m[0] = 2;
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_BASE_VERSION);
	/* the length is checked first */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m) - 1, &msg),
			 DROCE_CM_MAD_TRUNCATED);

	memcpy(m, g->mad, sizeof(m));
	m[1] = 0x01;            /* subnet management */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_CLASS);
	m[0] = 0;               /* the base version before the class */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_BASE_VERSION);

	memcpy(m, g->mad, sizeof(m));
	m[2] = 1;
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_CLASS_VERSION);
	m[1] = 0x03;            /* the class before its version */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_CLASS);

	memcpy(m, g->mad, sizeof(m));
	m[3] = DROCE_MAD_METHOD_GET;    /* GET of a REQ */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_METHOD);
	m[3] = 0x83;                    /* a SEND with the response bit */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_METHOD);
	m[2] = 3;               /* the class version before the method */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_CLASS_VERSION);

	memcpy(m, g->mad, sizeof(m));
	m[16] = 0x00;
	m[17] = 0x1b;           /* one past APR */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_ATTR);
	m[17] = 0x0f;           /* one before REQ */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_ATTR);
	m[17] = 0x00;
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_ATTR);
	m[16] = 0x10;           /* 0x1010 */
	m[17] = 0x10;
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_ATTR);
	/* an unknown attribute with GET: the method is checked first */
	m[3] = DROCE_MAD_METHOD_GET;
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_METHOD);
}

static void
test_class_port_info(void **state)
{
	static const uint8_t methods[] = {
		DROCE_MAD_METHOD_GET, DROCE_MAD_METHOD_SET,
		DROCE_MAD_METHOD_GET_RESP, DROCE_MAD_METHOD_SEND,
	};
	uint8_t m[DROCE_MAD_LEN], out[DROCE_MAD_LEN];
	struct droce_cm_msg msg;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 7 + 3);
	m[0] = 1;
	m[1] = DROCE_MAD_CLASS_CM;
	m[2] = 2;
	m[16] = 0x00;
	m[17] = 0x01;
	m[18] = 0;              /* reserved */
	m[19] = 0;
	for (i = 0; i < RTE_DIM(methods); i++) {
		m[3] = methods[i];
		assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
				 DROCE_CM_MAD_OK);
		assert_int_equal(msg.hdr.method, methods[i]);
		assert_int_equal(msg.hdr.attr_id,
				 DROCE_CM_ATTR_CLASS_PORT_INFO);
		assert_memory_equal(msg.raw, m + DROCE_MAD_HDR_LEN,
				    DROCE_CM_DATA_LEN);
		assert_int_equal(droce_cm_mad_build(&msg, out), DROCE_MAD_LEN);
		assert_memory_equal(out, m, sizeof(m));
	}
	/* other methods are not for it */
	m[3] = 0x07;            /* TRAP_REPRESS */
	assert_int_equal(droce_cm_mad_parse(m, sizeof(m), &msg),
			 DROCE_CM_MAD_BAD_METHOD);
}

/* Never a byte beyond len: each length from 0 to 256 in a buffer of
 * exactly that size (the sanitizer build checks the reads). */
static void
test_parse_reads_only_len(void **state)
{
	const struct golden *g = find("rdma_cm_send_bw.pcap", 24);
	struct droce_cm_msg msg;
	size_t len;

	(void)state;
	for (len = 0; len <= DROCE_MAD_LEN; len++) {
		uint8_t *b = malloc(len > 0 ? len : 1);

		assert_non_null(b);
		memcpy(b, g->mad, len);
		assert_int_equal(droce_cm_mad_parse(b, len, &msg),
				 len == DROCE_MAD_LEN ? DROCE_CM_MAD_OK :
				 DROCE_CM_MAD_TRUNCATED);
		free(b);
	}
}

static void
test_build_unknown_attr(void **state)
{
	static const uint16_t unknown[] = { 0x0000, 0x0002, 0x000f, 0x001b,
					    0x0100, 0xffff };
	uint8_t buf[DROCE_MAD_LEN], before[DROCE_MAD_LEN];
	struct droce_cm_msg msg;
	unsigned int i;

	(void)state;
	memset(&msg, 0x5a, sizeof(msg));
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i ^ 0xa5);
	memcpy(before, buf, sizeof(buf));
	for (i = 0; i < RTE_DIM(unknown); i++) {
		droce_cm_mad_hdr_init(&msg.hdr, unknown[i], 42);
		assert_int_equal(droce_cm_mad_build(&msg, buf), 0);
		assert_memory_equal(buf, before, sizeof(buf));
	}
}

/* ------------------------------------------------------------------------
 * Field widths and reserved bits.
 */

/* Reserved bits of each attribute, as the spec lays it out: byte offset
 * in the attribute data and the mask of its reserved bits. */
struct resv {
	uint8_t off;
	uint8_t mask;
};

static const struct {
	uint16_t attr_id;
	struct resv resv[16];
	unsigned int nb;
} reserved[] = {
	{ DROCE_CM_ATTR_REQ, {
		{ 4, 0xff }, { 5, 0xff }, { 6, 0xff }, { 7, 0xff },
		{ 24, 0xff }, { 25, 0xff }, { 26, 0xff }, { 27, 0xff },
		/* each path: 6 bits between flow label and packet rate,
		 * 3 after subnet local, 3 after the ACK timeout */
		{ 52 + 38, 0x0f }, { 52 + 39, 0xc0 },
		{ 52 + 42, 0x07 }, { 52 + 43, 0x07 },
		{ 96 + 38, 0x0f }, { 96 + 39, 0xc0 },
		{ 96 + 42, 0x07 }, { 96 + 43, 0x07 } }, 16 },
	{ DROCE_CM_ATTR_MRA, { { 8, 0x3f }, { 9, 0x07 } }, 2 },
	{ DROCE_CM_ATTR_REJ, { { 8, 0x3f }, { 9, 0x01 } }, 2 },
	{ DROCE_CM_ATTR_REP, { { 15, 0xff }, { 19, 0xff }, { 23, 0xff },
		{ 27, 0x0f } }, 4 },
	{ DROCE_CM_ATTR_RTU, { { 0, 0 } }, 0 },
	{ DROCE_CM_ATTR_DREQ, { { 11, 0xff } }, 1 },
	{ DROCE_CM_ATTR_DREP, { { 0, 0 } }, 0 },
	{ DROCE_CM_ATTR_SIDR_REQ, { { 6, 0xff }, { 7, 0xff } }, 2 },
	{ DROCE_CM_ATTR_SIDR_REP, { { 6, 0xff }, { 7, 0xff }, { 11, 0xff } },
	  3 },
	{ DROCE_CM_ATTR_LAP, { { 8, 0xff }, { 9, 0xff }, { 10, 0xff },
		{ 11, 0xff }, { 15, 0x07 } }, 5 },
	{ DROCE_CM_ATTR_APR, { { 10, 0xff }, { 11, 0xff } }, 2 },
	{ DROCE_CM_ATTR_CLASS_PORT_INFO, { { 0, 0 } }, 0 },
};

/* A message whose every member is all ones builds to all ones but the
 * reserved bits (the header's too), and parses back to every field at
 * its widest. */
static void
test_build_all_ones(void **state)
{
	uint8_t buf[DROCE_MAD_LEN], want[DROCE_MAD_LEN];
	struct droce_cm_msg msg, back;
	const char *name;
	unsigned int i, j;

	(void)state;
	for (i = 0; i < RTE_DIM(reserved); i++) {
		memset(&msg, 0xff, sizeof(msg));
		msg.hdr.attr_id = reserved[i].attr_id;
		memset(want, 0xff, sizeof(want));
		want[16] = (uint8_t)(reserved[i].attr_id >> 8);
		want[17] = (uint8_t)reserved[i].attr_id;
		want[18] = 0;   /* the header's reserved 16 bits */
		want[19] = 0;
		for (j = 0; j < reserved[i].nb; j++)
			want[DROCE_MAD_HDR_LEN + reserved[i].resv[j].off] &=
				(uint8_t)~reserved[i].resv[j].mask;
		memset(buf, 0, sizeof(buf));
		assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
		name = droce_cm_attr_name(reserved[i].attr_id);
		for (j = 0; j < DROCE_MAD_LEN; j++)
			if (buf[j] != want[j])
				fail_msg("%s: byte %u (data %d) is 0x%02x, "
					 "not 0x%02x", name, j,
					 (int)j - DROCE_MAD_HDR_LEN, buf[j],
					 want[j]);
	}

	/* the REQ, back: every field at its widest and no wider */
	memset(&msg, 0xff, sizeof(msg));
	msg.hdr.base_version = 1;
	msg.hdr.mgmt_class = DROCE_MAD_CLASS_CM;
	msg.hdr.class_version = 2;
	msg.hdr.method = DROCE_MAD_METHOD_SEND;
	msg.hdr.attr_id = DROCE_CM_ATTR_REQ;
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(droce_cm_mad_parse(buf, sizeof(buf), &back),
			 DROCE_CM_MAD_OK);
	assert_int_equal(back.hdr.status, 0xffff);
	assert_int_equal(back.hdr.class_specific, 0xffff);
	assert_int_equal(back.hdr.tid, UINT64_MAX);
	assert_int_equal(back.hdr.attr_mod, UINT32_MAX);
	assert_int_equal(back.req.local_comm_id, UINT32_MAX);
	assert_int_equal(back.req.service_id, UINT64_MAX);
	assert_int_equal(back.req.local_qpn, 0xffffff);
	assert_int_equal(back.req.responder_resources, 0xff);
	assert_int_equal(back.req.local_eecn, 0xffffff);
	assert_int_equal(back.req.remote_eecn, 0xffffff);
	assert_int_equal(back.req.remote_cm_response_timeout, 0x1f);
	assert_int_equal(back.req.transport_type, 3);
	assert_true(back.req.flow_control);
	assert_int_equal(back.req.starting_psn, 0xffffff);
	assert_int_equal(back.req.local_cm_response_timeout, 0x1f);
	assert_int_equal(back.req.retry_count, 7);
	assert_int_equal(back.req.path_mtu, 0xf);
	assert_true(back.req.rdc_exists);
	assert_int_equal(back.req.rnr_retry_count, 7);
	assert_int_equal(back.req.max_cm_retries, 0xf);
	assert_true(back.req.srq);
	assert_int_equal(back.req.ext_transport_type, 7);
	assert_int_equal(back.req.primary.flow_label, 0xfffff);
	assert_int_equal(back.req.primary.packet_rate, 0x3f);
	assert_int_equal(back.req.primary.sl, 0xf);
	assert_true(back.req.primary.subnet_local);
	assert_int_equal(back.req.primary.local_ack_timeout, 0x1f);
	assert_int_equal(back.req.alternate.flow_label, 0xfffff);
	assert_int_equal(back.req.alternate.local_ack_timeout, 0x1f);
}

/* A field wider than its bits loses the high ones, not its neighbours. */
static void
test_build_truncates(void **state)
{
	uint8_t buf[DROCE_MAD_LEN];
	const uint8_t *d = buf + DROCE_MAD_HDR_LEN;
	struct droce_cm_msg msg;

	(void)state;
	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_REQ, 1);
	msg.req.local_qpn = 0xab123456;
	msg.req.responder_resources = 0x78;
	msg.req.remote_eecn = 0xff000000;
	msg.req.remote_cm_response_timeout = 0xe1;      /* 5 bits: 0x01 */
	msg.req.transport_type = 0xfd;                  /* 2 bits: 1 */
	msg.req.starting_psn = 0x01abcdef;
	msg.req.retry_count = 0x0a;                     /* 3 bits: 2 */
	msg.req.path_mtu = 0x35;                        /* 4 bits: 5 */
	msg.req.rnr_retry_count = 0x0c;                 /* 3 bits: 4 */
	msg.req.primary.flow_label = 0xfff12345;        /* 20 bits */
	msg.req.primary.packet_rate = 0xc7;             /* 6 bits: 7 */
	msg.req.primary.sl = 0x19;                      /* 4 bits: 9 */
	msg.req.primary.local_ack_timeout = 0x3e;       /* 5 bits: 0x1e */
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[32], 0x12);
	assert_int_equal(d[33], 0x34);
	assert_int_equal(d[34], 0x56);
	assert_int_equal(d[35], 0x78);
	assert_int_equal(d[40], 0x00);
	assert_int_equal(d[41], 0x00);
	assert_int_equal(d[42], 0x00);
	assert_int_equal(d[43], 0x01 << 3 | 1 << 1);
	assert_int_equal(d[44], 0xab);
	assert_int_equal(d[45], 0xcd);
	assert_int_equal(d[46], 0xef);
	assert_int_equal(d[47], 0x02);
	assert_int_equal(d[50], 0x5 << 4 | 0x4);
	assert_int_equal(d[52 + 36], 0x12);
	assert_int_equal(d[52 + 37], 0x34);
	assert_int_equal(d[52 + 38], 0x50);
	assert_int_equal(d[52 + 39], 0x07);
	assert_int_equal(d[52 + 42], 0x90);
	assert_int_equal(d[52 + 43], 0x1e << 3);

	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_REP, 1);
	msg.rep.target_ack_delay = 0xff;                /* 5 bits */
	msg.rep.failover_accepted = 0x06;               /* 2 bits: 2 */
	msg.rep.rnr_retry_count = 0x0d;                 /* 3 bits: 5 */
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[26], 0x1f << 3 | 2 << 1);
	assert_int_equal(d[27], 5 << 5);

	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_REJ, 1);
	msg.rej.msg_rejected = 0x07;                    /* 2 bits: 3 */
	msg.rej.ari_len = 0xff;                         /* 7 bits */
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[8], 0xc0);
	assert_int_equal(d[9], 0xfe);

	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_SIDR_REP, 1);
	msg.sidr_rep.qpn = 0xff000011;
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[8], 0x00);
	assert_int_equal(d[9], 0x00);
	assert_int_equal(d[10], 0x11);
	assert_int_equal(d[11], 0x00);
}

/* The attributes the captures lack, built then parsed back. */
static void
test_round_trip_other_attrs(void **state)
{
	uint8_t buf[DROCE_MAD_LEN], again[DROCE_MAD_LEN];
	struct droce_cm_msg msg, back;
	const uint8_t *d = buf + DROCE_MAD_HDR_LEN;
	unsigned int i;

	(void)state;
	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_MRA, 0x1122334455667788);
	msg.mra.local_comm_id = 0x01020304;
	msg.mra.remote_comm_id = 0x05060708;
	msg.mra.msg_mraed = DROCE_CM_REF_LAP;
	msg.mra.service_timeout = 0x11;
	for (i = 0; i < DROCE_CM_MRA_PRIV_LEN; i++)
		msg.mra.private_data[i] = (uint8_t)i;
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(buf[8], 0x11);
	assert_int_equal(buf[15], 0x88);
	assert_int_equal(d[8], 2 << 6);
	assert_int_equal(d[9], 0x11 << 3);
	assert_int_equal(d[10], 0);
	assert_int_equal(d[231], DROCE_CM_MRA_PRIV_LEN - 1);
	assert_int_equal(droce_cm_mad_parse(buf, sizeof(buf), &back),
			 DROCE_CM_MAD_OK);
	assert_memory_equal(&back.mra, &msg.mra, sizeof(msg.mra));

	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_REJ, 7);
	msg.rej.local_comm_id = 0xaabbccdd;
	msg.rej.remote_comm_id = 0x11223344;
	msg.rej.msg_rejected = DROCE_CM_REF_REQ;
	msg.rej.ari_len = 0;
	msg.rej.reason = DROCE_CM_REJ_INVALID_SERVICE_ID;
	msg.rej.ari[0] = 0xa1;
	msg.rej.ari[DROCE_CM_REJ_ARI_LEN - 1] = 0xa2;
	msg.rej.private_data[0] = 0xb1;
	msg.rej.private_data[DROCE_CM_REJ_PRIV_LEN - 1] = 0xb2;
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[10], 0);
	assert_int_equal(d[11], 8);
	assert_int_equal(d[12], 0xa1);
	assert_int_equal(d[83], 0xa2);
	assert_int_equal(d[84], 0xb1);
	assert_int_equal(d[231], 0xb2);
	assert_int_equal(droce_cm_mad_parse(buf, sizeof(buf), &back),
			 DROCE_CM_MAD_OK);
	assert_memory_equal(&back.rej, &msg.rej, sizeof(msg.rej));

	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_LAP, 9);
	msg.lap.local_comm_id = 1;
	msg.lap.remote_comm_id = 2;
	msg.lap.remote_qpn = 0xabcdef;
	msg.lap.remote_cm_response_timeout = 0x17;
	for (i = 0; i < sizeof(msg.lap.rest); i++)
		msg.lap.rest[i] = (uint8_t)(0xff - i);
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[12], 0xab);
	assert_int_equal(d[14], 0xef);
	assert_int_equal(d[15], 0x17 << 3);
	assert_int_equal(d[16], 0xff);
	assert_int_equal(droce_cm_mad_parse(buf, sizeof(buf), &back),
			 DROCE_CM_MAD_OK);
	assert_memory_equal(&back.lap, &msg.lap, sizeof(msg.lap));

	memset(&msg, 0, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_APR, 9);
	msg.apr.local_comm_id = 3;
	msg.apr.remote_comm_id = 4;
	msg.apr.info_len = 5;
	msg.apr.status = DROCE_CM_APR_REJECT;
	msg.apr.info[0] = 0xc1;
	msg.apr.private_data[DROCE_CM_APR_PRIV_LEN - 1] = 0xc2;
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_int_equal(d[8], 5);
	assert_int_equal(d[9], DROCE_CM_APR_REJECT);
	assert_int_equal(d[12], 0xc1);
	assert_int_equal(d[231], 0xc2);
	assert_int_equal(droce_cm_mad_parse(buf, sizeof(buf), &back),
			 DROCE_CM_MAD_OK);
	assert_memory_equal(&back.apr, &msg.apr, sizeof(msg.apr));
	/* and again, byte for byte */
	assert_int_equal(droce_cm_mad_build(&back, again), DROCE_MAD_LEN);
	assert_memory_equal(again, buf, sizeof(buf));
}

static void
test_hdr_init(void **state)
{
	uint8_t buf[DROCE_MAD_LEN];
	struct droce_cm_msg msg;
	static const uint8_t want[DROCE_MAD_HDR_LEN] = {
		1, 0x07, 2, 0x03, 0, 0, 0, 0,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0x00, 0x15, 0, 0, 0, 0, 0, 0,
	};

	(void)state;
	memset(&msg, 0xff, sizeof(msg));
	droce_cm_mad_hdr_init(&msg.hdr, DROCE_CM_ATTR_DREQ,
			      0x0123456789abcdefull);
	assert_int_equal(msg.hdr.base_version, DROCE_MAD_BASE_VERSION);
	assert_int_equal(msg.hdr.mgmt_class, DROCE_MAD_CLASS_CM);
	assert_int_equal(msg.hdr.class_version, DROCE_MAD_CM_VERSION);
	assert_int_equal(msg.hdr.method, DROCE_MAD_METHOD_SEND);
	assert_int_equal(msg.hdr.status, 0);
	assert_int_equal(msg.hdr.class_specific, 0);
	assert_int_equal(msg.hdr.attr_mod, 0);
	assert_int_equal(droce_cm_mad_build(&msg, buf), DROCE_MAD_LEN);
	assert_memory_equal(buf, want, sizeof(want));
}

/* ------------------------------------------------------------------------
 * rdma_cm.
 */

static void
test_service_id(void **state)
{
	static const struct {
		uint16_t ps;
		uint16_t port;
		uint64_t sid;
	} ids[] = {
		{ DROCE_CMA_PS_TCP, 7174, 0x0000000001061c06ull },
		{ DROCE_CMA_PS_UDP, 7174, 0x0000000001111c06ull },
		{ DROCE_CMA_PS_IB, 0x4853, 0x00000000013f4853ull },
		/* IPoIB's as Linux makes it: its port space has no 0x01 */
		{ DROCE_CMA_PS_IPOIB, 0x0001, 0x0000000000020001ull },
		{ DROCE_CMA_PS_TCP, 0, 0x0000000001060000ull },
		{ DROCE_CMA_PS_UDP, 0xffff, 0x000000000111ffffull },
	};
	static const uint64_t not_ip_cm[] = {
		0,
		0x0000000001000000ull,  /* port space 0 */
		0x0000000001050000ull,  /* port space 0x0105 */
		0x0000000001ff1234ull,
		0x0000000002061c06ull,  /* other prefixes */
		0x0000000101061c06ull,
		0x1000000001061c06ull,
		0x0000000000061c06ull,
		0x0000000001020001ull,  /* IPoIB's port space, 0x01 above */
		0x0002c90300001234ull,  /* an IB service ID */
	};
	uint16_t ps, port;
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(ids); i++) {
		assert_int_equal(droce_cma_service_id(ids[i].ps, ids[i].port),
				 ids[i].sid);
		ps = 0xdead;
		port = 0xbeef;
		assert_true(droce_cma_service_split(ids[i].sid, &ps, &port));
		assert_int_equal(ps, ids[i].ps);
		assert_int_equal(port, ids[i].port);
	}
	for (i = 0; i < RTE_DIM(not_ip_cm); i++)
		if (droce_cma_service_split(not_ip_cm[i], &ps, &port))
			fail_msg("0x%016llx split as port space 0x%04x",
				 (unsigned long long)not_ip_cm[i], ps);
}

static void
test_cma_hdr(void **state)
{
	const struct golden *g = find("rdma_cm_rping.pcap", 1);
	const uint8_t *priv = g->mad + DROCE_MAD_HDR_LEN + 140;
	uint8_t p[DROCE_CMA_HDR_LEN], q[DROCE_CMA_HDR_LEN];
	struct droce_cma_hdr h, back;
	unsigned int i;

	(void)state;
	/* the golden REQ's header builds back to its bytes */
	assert_int_equal(droce_cma_hdr_parse(priv, DROCE_CMA_HDR_LEN, &h), 0);
	memset(p, 0xee, sizeof(p));
	droce_cma_hdr_build(&h, p);
	assert_memory_equal(p, priv, sizeof(p));
	/* IPv4: the version's nibble, 12 zero bytes before each address */
	assert_int_equal(p[0], 0);
	assert_int_equal(p[1], 0x40);
	assert_int_equal(p[2], 0x92);
	assert_int_equal(p[3], 0x17);
	assert_zero(p + 4, 12);
	assert_int_equal(p[16], 192);
	assert_int_equal(p[19], CLIENT);
	assert_zero(p + 20, 12);
	assert_int_equal(p[35], SERVER);

	/* errors: short, cma version, IP version */
	assert_int_equal(droce_cma_hdr_parse(priv, DROCE_CMA_HDR_LEN - 1, &h),
			 -EINVAL);
	assert_int_equal(droce_cma_hdr_parse(priv, 0, &h), -EINVAL);
	memcpy(q, priv, sizeof(q));
	q[0] = 1;
	assert_int_equal(droce_cma_hdr_parse(q, sizeof(q), &h), -EPROTO);
	q[0] = 0x10;            /* major version 1 */
	assert_int_equal(droce_cma_hdr_parse(q, sizeof(q), &h), -EPROTO);
	memcpy(q, priv, sizeof(q));
	q[1] = 0x50;
	assert_int_equal(droce_cma_hdr_parse(q, sizeof(q), &h), -EPROTO);
	q[1] = 0x00;
	assert_int_equal(droce_cma_hdr_parse(q, sizeof(q), &h), -EPROTO);
	q[1] = 0x04;            /* the low nibble is not the version */
	assert_int_equal(droce_cma_hdr_parse(q, sizeof(q), &h), -EPROTO);
	q[1] = 0x6f;            /* nor does it matter */
	assert_int_equal(droce_cma_hdr_parse(q, sizeof(q), &h), 0);
	assert_int_equal(h.ip_version, 6);

	/* IPv6 there and back */
	memset(&h, 0, sizeof(h));
	h.cma_version = 0;
	h.ip_version = 6;
	h.src_port = 0xc001;
	for (i = 0; i < 16; i++) {
		h.src_addr[i] = (uint8_t)(0xfe - i);
		h.dst_addr[i] = (uint8_t)(0x20 + i);
	}
	droce_cma_hdr_build(&h, p);
	assert_int_equal(p[0], 0);
	assert_int_equal(p[1], 0x60);
	assert_int_equal(p[2], 0xc0);
	assert_int_equal(p[3], 0x01);
	assert_memory_equal(p + 4, h.src_addr, 16);
	assert_memory_equal(p + 20, h.dst_addr, 16);
	memset(&back, 0x77, sizeof(back));
	assert_int_equal(droce_cma_hdr_parse(p, sizeof(p), &back), 0);
	assert_int_equal(back.cma_version, 0);
	assert_int_equal(back.ip_version, 6);
	assert_int_equal(back.src_port, 0xc001);
	assert_memory_equal(back.src_addr, h.src_addr, 16);
	assert_memory_equal(back.dst_addr, h.dst_addr, 16);

	/* IPv4 there and back: ::ffff:a.b.c.d in, 12 zeros on the wire */
	memset(&h, 0, sizeof(h));
	h.ip_version = 4;
	h.src_port = 7;
	guest_gid(h.src_addr, 1);
	guest_gid(h.dst_addr, 2);
	droce_cma_hdr_build(&h, p);
	assert_zero(p + 4, 12);
	assert_zero(p + 20, 12);
	assert_int_equal(droce_cma_hdr_parse(p, sizeof(p), &back), 0);
	assert_int_equal(back.ip_version, 4);
	assert_int_equal(back.src_port, 7);
	assert_gid(back.src_addr, 1);
	assert_gid(back.dst_addr, 2);
}

/* ------------------------------------------------------------------------
 * Names.
 */

static void
test_names(void **state)
{
	static const struct {
		uint16_t id;
		const char *name;
	} attrs[] = {
		{ DROCE_CM_ATTR_CLASS_PORT_INFO, "CLASS_PORT_INFO" },
		{ DROCE_CM_ATTR_REQ, "REQ" },
		{ DROCE_CM_ATTR_MRA, "MRA" },
		{ DROCE_CM_ATTR_REJ, "REJ" },
		{ DROCE_CM_ATTR_REP, "REP" },
		{ DROCE_CM_ATTR_RTU, "RTU" },
		{ DROCE_CM_ATTR_DREQ, "DREQ" },
		{ DROCE_CM_ATTR_DREP, "DREP" },
		{ DROCE_CM_ATTR_SIDR_REQ, "SIDR_REQ" },
		{ DROCE_CM_ATTR_SIDR_REP, "SIDR_REP" },
		{ DROCE_CM_ATTR_LAP, "LAP" },
		{ DROCE_CM_ATTR_APR, "APR" },
		{ 0x0000, "?" },
		{ 0x000f, "?" },
		{ 0x001b, "?" },
		{ 0xffff, "?" },
	};
	static const struct {
		enum droce_cm_mad_err err;
		const char *name;
	} errs[] = {
		{ DROCE_CM_MAD_OK, "OK" },
		{ DROCE_CM_MAD_TRUNCATED, "TRUNCATED" },
		{ DROCE_CM_MAD_BAD_BASE_VERSION, "BAD_BASE_VERSION" },
		{ DROCE_CM_MAD_BAD_CLASS, "BAD_CLASS" },
		{ DROCE_CM_MAD_BAD_CLASS_VERSION, "BAD_CLASS_VERSION" },
		{ DROCE_CM_MAD_BAD_METHOD, "BAD_METHOD" },
		{ DROCE_CM_MAD_BAD_ATTR, "BAD_ATTR" },
		{ (enum droce_cm_mad_err)7, "?" },
		{ (enum droce_cm_mad_err)1000, "?" },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < RTE_DIM(attrs); i++)
		assert_string_equal(droce_cm_attr_name(attrs[i].id),
				    attrs[i].name);
	for (i = 0; i < RTE_DIM(errs); i++)
		assert_string_equal(droce_cm_mad_err_name(errs[i].err),
				    errs[i].name);
	/* every reason of table 112 has a name, and only those */
	for (i = DROCE_CM_REJ_NO_QP; i <= DROCE_CM_REJ_INVALID_ALT_FLOW_LABEL;
	     i++)
		assert_string_not_equal(droce_cm_rej_reason_name((uint16_t)i),
					"?");
	assert_string_equal(droce_cm_rej_reason_name(0), "?");
	assert_string_equal(droce_cm_rej_reason_name(34), "?");
	assert_string_equal(droce_cm_rej_reason_name(0xffff), "?");
	assert_string_equal(droce_cm_rej_reason_name(1), "NO_QP");
	assert_string_equal(droce_cm_rej_reason_name(8),
			    "INVALID_SERVICE_ID");
	assert_string_equal(droce_cm_rej_reason_name(28), "CONSUMER_DEFINED");
	assert_string_equal(droce_cm_rej_reason_name(33),
			    "INVALID_ALT_FLOW_LABEL");
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_all_parse),
		cmocka_unit_test(test_golden_round_trip),
		cmocka_unit_test(test_golden_req),
		cmocka_unit_test(test_golden_rep),
		cmocka_unit_test(test_golden_rtu_dreq_drep),
		cmocka_unit_test(test_golden_sidr),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_class_port_info),
		cmocka_unit_test(test_parse_reads_only_len),
		cmocka_unit_test(test_build_unknown_attr),
		cmocka_unit_test(test_build_all_ones),
		cmocka_unit_test(test_build_truncates),
		cmocka_unit_test(test_round_trip_other_attrs),
		cmocka_unit_test(test_hdr_init),
		cmocka_unit_test(test_service_id),
		cmocka_unit_test(test_cma_hdr),
		cmocka_unit_test(test_names),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s PCAP_DIR\n", argv[0]);
		return 2;
	}
	pcap_dir = argv[1];
	return cmocka_run_group_tests(tests, load_all, NULL);
}
