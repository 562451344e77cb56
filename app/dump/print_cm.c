/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * CM MADs in the UD SENDs to QP1, decoded by lib/cm: the attribute, its
 * transaction ID and the fields that say which connection it is about
 * (comm IDs, service ID, QPN, starting PSN, rdma_cm's IP header, REJ
 * reason, SIDR status).
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <droce_cm.h>
#include <droce_cm_mad.h>

#include "dump.h"

bool
dump_is_mad(const struct droce_wire_pkt *pkt)
{
	return pkt->bth.opcode == (DROCE_TR_UD | DROCE_OP_SEND_ONLY) &&
		pkt->bth.dqpn == DROCE_GSI_QPN;
}

/* The fields a line shows, whatever the attribute. */
struct cm_view {
	bool has_local_comm_id;
	uint32_t local_comm_id;
	bool has_remote_comm_id;
	uint32_t remote_comm_id;
	bool has_request_id;
	uint32_t request_id;
	bool has_sid;
	uint64_t service_id;
	bool has_qpn;
	uint32_t qpn;
	bool has_psn;
	uint32_t starting_psn;
	bool has_reason;
	uint16_t reason;
	bool has_status;
	uint8_t status;
	bool has_qkey;
	uint32_t qkey;
	const uint8_t *priv;        /* private data with rdma_cm's header */
	size_t priv_len;
};

static void
cm_view(const struct droce_cm_msg *m, struct cm_view *v)
{
	memset(v, 0, sizeof(*v));
	switch (m->hdr.attr_id) {
	case DROCE_CM_ATTR_REQ:
		v->has_local_comm_id = true;
		v->local_comm_id = m->req.local_comm_id;
		v->has_sid = true;
		v->service_id = m->req.service_id;
		v->has_qpn = true;
		v->qpn = m->req.local_qpn;
		v->has_psn = true;
		v->starting_psn = m->req.starting_psn;
		v->priv = m->req.private_data;
		v->priv_len = sizeof(m->req.private_data);
		break;
	case DROCE_CM_ATTR_MRA:
		v->has_local_comm_id = true;
		v->local_comm_id = m->mra.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->mra.remote_comm_id;
		break;
	case DROCE_CM_ATTR_REJ:
		v->has_local_comm_id = true;
		v->local_comm_id = m->rej.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->rej.remote_comm_id;
		v->has_reason = true;
		v->reason = m->rej.reason;
		break;
	case DROCE_CM_ATTR_REP:
		v->has_local_comm_id = true;
		v->local_comm_id = m->rep.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->rep.remote_comm_id;
		v->has_qpn = true;
		v->qpn = m->rep.local_qpn;
		v->has_psn = true;
		v->starting_psn = m->rep.starting_psn;
		break;
	case DROCE_CM_ATTR_RTU:
		v->has_local_comm_id = true;
		v->local_comm_id = m->rtu.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->rtu.remote_comm_id;
		break;
	case DROCE_CM_ATTR_DREQ:
		v->has_local_comm_id = true;
		v->local_comm_id = m->dreq.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->dreq.remote_comm_id;
		v->has_qpn = true;
		v->qpn = m->dreq.remote_qpn;
		break;
	case DROCE_CM_ATTR_DREP:
		v->has_local_comm_id = true;
		v->local_comm_id = m->drep.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->drep.remote_comm_id;
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		v->has_request_id = true;
		v->request_id = m->sidr_req.request_id;
		v->has_sid = true;
		v->service_id = m->sidr_req.service_id;
		v->priv = m->sidr_req.private_data;
		v->priv_len = sizeof(m->sidr_req.private_data);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		v->has_request_id = true;
		v->request_id = m->sidr_rep.request_id;
		v->has_status = true;
		v->status = m->sidr_rep.status;
		v->has_qpn = true;
		v->qpn = m->sidr_rep.qpn;
		v->has_qkey = true;
		v->qkey = m->sidr_rep.qkey;
		v->has_sid = true;
		v->service_id = m->sidr_rep.service_id;
		break;
	case DROCE_CM_ATTR_LAP:
		v->has_local_comm_id = true;
		v->local_comm_id = m->lap.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->lap.remote_comm_id;
		v->has_qpn = true;
		v->qpn = m->lap.remote_qpn;
		break;
	case DROCE_CM_ATTR_APR:
		v->has_local_comm_id = true;
		v->local_comm_id = m->apr.local_comm_id;
		v->has_remote_comm_id = true;
		v->remote_comm_id = m->apr.remote_comm_id;
		v->has_status = true;
		v->status = m->apr.status;
		break;
	default:
		/* ClassPortInfo: the header says it all */
		break;
	}
}

static const char *
port_space_name(uint16_t ps)
{
	switch (ps) {
	case DROCE_CMA_PS_TCP:
		return "tcp";
	case DROCE_CMA_PS_UDP:
		return "udp";
	case DROCE_CMA_PS_IB:
		return "ib";
	default:
		return "ipoib";
	}
}

/* rdma_cm's header, if the private data of a REQ/SIDR_REQ to an RDMA IP
 * CM service ID has one. */
static bool
cma_hdr(const struct cm_view *v, struct droce_cma_hdr *h,
	char src[INET6_ADDRSTRLEN], char dst[INET6_ADDRSTRLEN])
{
	uint16_t ps, port;

	if (v->priv == NULL ||
	    !droce_cma_service_split(v->service_id, &ps, &port) ||
	    droce_cma_hdr_parse(v->priv, v->priv_len, h) != 0)
		return false;
	if (h->ip_version == 4) {
		inet_ntop(AF_INET, h->src_addr + 12, src, INET6_ADDRSTRLEN);
		inet_ntop(AF_INET, h->dst_addr + 12, dst, INET6_ADDRSTRLEN);
	} else {
		inet_ntop(AF_INET6, h->src_addr, src, INET6_ADDRSTRLEN);
		inet_ntop(AF_INET6, h->dst_addr, dst, INET6_ADDRSTRLEN);
	}
	return true;
}

void
dump_cm_text(FILE *out, const struct droce_wire_pkt *pkt)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct droce_cm_msg msg;
	enum droce_cm_mad_err err;
	struct droce_cma_hdr cma;
	struct cm_view v;
	uint16_t ps, port;

	err = droce_cm_mad_parse(pkt->payload, pkt->payload_len, &msg);
	if (err != DROCE_CM_MAD_OK) {
		fprintf(out, " MAD %s", droce_cm_mad_err_name(err));
		return;
	}
	fprintf(out, " CM %s", droce_cm_attr_name(msg.hdr.attr_id));
	if (msg.hdr.method != DROCE_MAD_METHOD_SEND)
		fprintf(out, " method 0x%02x", msg.hdr.method);
	fprintf(out, " tid 0x%" PRIx64, msg.hdr.tid);
	cm_view(&msg, &v);
	if (v.has_local_comm_id)
		fprintf(out, " comm 0x%08x", v.local_comm_id);
	if (v.has_remote_comm_id)
		fprintf(out, " remote 0x%08x", v.remote_comm_id);
	if (v.has_request_id)
		fprintf(out, " request 0x%08x", v.request_id);
	if (v.has_status)
		fprintf(out, " status %u", v.status);
	if (v.has_reason)
		fprintf(out, " reason %s (%u)",
			droce_cm_rej_reason_name(v.reason), v.reason);
	if (v.has_sid) {
		fprintf(out, " sid 0x%016" PRIx64, v.service_id);
		if (droce_cma_service_split(v.service_id, &ps, &port))
			fprintf(out, " (%s port %u)", port_space_name(ps),
				port);
	}
	if (v.has_qpn)
		fprintf(out, " qpn 0x%06x", v.qpn);
	if (v.has_qkey)
		fprintf(out, " qkey 0x%08x", v.qkey);
	if (v.has_psn)
		fprintf(out, " start_psn 0x%06x", v.starting_psn);
	if (cma_hdr(&v, &cma, src, dst)) {
		/* the destination port is the service ID's */
		droce_cma_service_split(v.service_id, &ps, &port);
		if (cma.ip_version == 6)
			fprintf(out, " ipv6 [%s]:%u > [%s]:%u", src,
				cma.src_port, dst, port);
		else
			fprintf(out, " ipv4 %s:%u > %s:%u", src, cma.src_port,
				dst, port);
	}
}

void
dump_cm_json(FILE *out, const struct droce_wire_pkt *pkt)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct droce_cm_msg msg;
	enum droce_cm_mad_err err;
	struct droce_cma_hdr cma;
	struct cm_view v;
	uint16_t ps, port;

	err = droce_cm_mad_parse(pkt->payload, pkt->payload_len, &msg);
	if (err != DROCE_CM_MAD_OK) {
		fprintf(out, ",\"mad_error\":\"%s\"",
			droce_cm_mad_err_name(err));
		return;
	}
	fprintf(out, ",\"cm\":{\"attr_id\":%u,\"attr\":\"%s\",\"method\":%u,"
		"\"tid\":%" PRIu64, msg.hdr.attr_id,
		droce_cm_attr_name(msg.hdr.attr_id), msg.hdr.method,
		msg.hdr.tid);
	cm_view(&msg, &v);
	if (v.has_local_comm_id)
		fprintf(out, ",\"local_comm_id\":%u", v.local_comm_id);
	if (v.has_remote_comm_id)
		fprintf(out, ",\"remote_comm_id\":%u", v.remote_comm_id);
	if (v.has_request_id)
		fprintf(out, ",\"request_id\":%u", v.request_id);
	if (v.has_status)
		fprintf(out, ",\"status\":%u", v.status);
	if (v.has_reason)
		fprintf(out, ",\"reason\":%u,\"reason_name\":\"%s\"", v.reason,
			droce_cm_rej_reason_name(v.reason));
	if (v.has_sid) {
		fprintf(out, ",\"service_id\":%" PRIu64, v.service_id);
		if (droce_cma_service_split(v.service_id, &ps, &port))
			fprintf(out, ",\"port_space\":%u,\"port\":%u", ps,
				port);
	}
	if (v.has_qpn)
		fprintf(out, ",\"qpn\":%u", v.qpn);
	if (v.has_qkey)
		fprintf(out, ",\"qkey\":%u", v.qkey);
	if (v.has_psn)
		fprintf(out, ",\"starting_psn\":%u", v.starting_psn);
	if (cma_hdr(&v, &cma, src, dst))
		fprintf(out, ",\"cma_ip_version\":%u,\"cma_src_port\":%u,"
			"\"cma_src\":\"%s\",\"cma_dst\":\"%s\"",
			cma.ip_version, cma.src_port, src, dst);
	fprintf(out, "}");
}
