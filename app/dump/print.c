/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* Text and JSON renderings of a decoded frame. */

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "dump.h"

static void
format_ip(char *buf, size_t len, const struct droce_wire_pkt *pkt,
	  const uint8_t gid[16])
{
	if (pkt->ip_version == 4)
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

/* What an AETH syndrome says, in words. */
static void
format_syndrome(char *buf, size_t len, uint8_t syndrome)
{
	static const char *const naks[] = {
		[DROCE_NAK_PSN_SEQ_ERR] = "PSN sequence error",
		[DROCE_NAK_INVALID_REQ] = "invalid request",
		[DROCE_NAK_REM_ACCESS_ERR] = "remote access error",
		[DROCE_NAK_REM_OP_ERR] = "remote operational error",
		[DROCE_NAK_INVALID_RD_REQ] = "invalid RD request",
	};
	unsigned int value = syndrome & DROCE_AETH_VALUE_MASK;

	switch (syndrome & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_ACK:
		snprintf(buf, len, "ACK credits %u", value);
		break;
	case DROCE_AETH_RNR_NAK:
		snprintf(buf, len, "RNR NAK timer %u", value);
		break;
	case DROCE_AETH_NAK:
		snprintf(buf, len, "NAK %s", value < RTE_DIM(naks) ?
			 naks[value] : "reserved");
		break;
	default:
		snprintf(buf, len, "reserved 0x%02x", syndrome);
		break;
	}
}

/* The ECN field of a TOS or traffic class, as tshark names it. */
static const char *
ecn_name(uint8_t tos)
{
	static const char *const names[] = {
		"Not-ECT", "ECT(1)", "ECT(0)", "CE",
	};

	return names[tos & DROCE_ECN_MASK];
}

void
dump_text(FILE *out, const struct dump_frame *fr)
{
	const struct droce_wire_pkt *p = fr->pkt;
	const struct droce_bth *b = &p->bth;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], syn[48];
	uint32_t f;

	fprintf(out, "%6" PRIu64 " ", fr->number);
	if (!dump_decoded(fr->err)) {
		fprintf(out, "%s (%u bytes)\n", droce_wire_strerror(fr->err),
			fr->caplen);
		return;
	}
	f = p->op->flags;
	format_ip(src, sizeof(src), p, p->src_gid);
	format_ip(dst, sizeof(dst), p, p->dst_gid);
	fprintf(out, "%s:%u > %s", src, p->udp_sport, dst);
	/* the DSCP if any, and the ECN field unless Not-ECT */
	if (p->tos >> 2 != 0)
		fprintf(out, " dscp %u", p->tos >> 2);
	if ((p->tos & DROCE_ECN_MASK) != DROCE_ECN_NOT_ECT)
		fprintf(out, " %s", ecn_name(p->tos));
	fprintf(out, " %s dqpn 0x%06x psn %u", p->op->name, b->dqpn, b->psn);
	if (b->ackreq)
		fprintf(out, " A");
	if (b->se)
		fprintf(out, " SE");
	if (b->m)
		fprintf(out, " M");
	if (b->fecn)
		fprintf(out, " FECN");
	if (b->becn)
		fprintf(out, " BECN");
	if (b->pkey != 0xffff)
		fprintf(out, " pkey 0x%04x", b->pkey);
	if (f & DROCE_OPF_XRCETH)
		fprintf(out, " xrcsrq 0x%06x", p->xrceth.xrcsrq);
	if (f & DROCE_OPF_DETH)
		fprintf(out, " qkey 0x%08x srcqp 0x%06x", p->deth.qkey,
			p->deth.srcqp);
	if (f & DROCE_OPF_FETH)
		fprintf(out, " sel %u plt %u", p->feth.sel, p->feth.plt);
	if (f & DROCE_OPF_RETH)
		fprintf(out, " va 0x%" PRIx64 " rkey 0x%08x dlen %u",
			p->reth.va, p->reth.rkey, p->reth.dlen);
	if (f & DROCE_OPF_AETH) {
		format_syndrome(syn, sizeof(syn), p->aeth.syndrome);
		fprintf(out, " %s msn %u", syn, p->aeth.msn);
	}
	if (f & DROCE_OPF_ATOMICETH)
		fprintf(out, " va 0x%" PRIx64 " rkey 0x%08x swap_add 0x%" PRIx64
			" compare 0x%" PRIx64, p->atomiceth.va,
			p->atomiceth.rkey, p->atomiceth.swap_add,
			p->atomiceth.compare);
	if (f & DROCE_OPF_ATOMICACKETH)
		fprintf(out, " orig 0x%" PRIx64, p->atomicacketh.orig);
	if (f & DROCE_OPF_IMMDT)
		fprintf(out, " imm 0x%08x", p->immdt);
	if (f & DROCE_OPF_IETH)
		fprintf(out, " inv_rkey 0x%08x", p->ieth_rkey);
	if (f & DROCE_OPF_PAYLOAD)
		fprintf(out, " len %u", p->payload_len);
	if (dump_is_mad(p))
		dump_cm_text(out, p);
	if (fr->err == 0)
		fprintf(out, " icrc ok\n");
	else
		fprintf(out, " %s\n", droce_wire_strerror(fr->err));
}

void
dump_json(FILE *out, const struct dump_frame *fr)
{
	const struct droce_wire_pkt *p = fr->pkt;
	const struct droce_bth *b = &p->bth;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	char smac[RTE_ETHER_ADDR_FMT_SIZE], dmac[RTE_ETHER_ADDR_FMT_SIZE];
	uint32_t f;

	fprintf(out, "{\"frame\":%" PRIu64 ",\"ts\":%" PRIu64 ".%09" PRIu64
		",\"caplen\":%u", fr->number, fr->ts_ns / 1000000000u,
		fr->ts_ns % 1000000000u, fr->caplen);
	if (fr->err == -DROCE_WIRE_ENOTROCE) {
		fprintf(out, ",\"status\":\"not_roce\"}\n");
		return;
	}
	if (fr->err != 0)
		fprintf(out, ",\"status\":\"malformed\",\"error\":\"%s\"",
			droce_wire_strerror(fr->err));
	else
		fprintf(out, ",\"status\":\"ok\"");
	if (!dump_decoded(fr->err)) {
		fprintf(out, "}\n");
		return;
	}

	f = p->op->flags;
	rte_ether_format_addr(smac, sizeof(smac), &p->src_mac);
	rte_ether_format_addr(dmac, sizeof(dmac), &p->dst_mac);
	format_ip(src, sizeof(src), p, p->src_gid);
	format_ip(dst, sizeof(dst), p, p->dst_gid);
	fprintf(out, ",\"src_mac\":\"%s\",\"dst_mac\":\"%s\"", smac, dmac);
	if (p->has_vlan)
		fprintf(out, ",\"vlan\":%u", p->vlan_tci);
	fprintf(out, ",\"ip_version\":%u,\"src\":\"%s\",\"dst\":\"%s\","
		"\"tos\":%u,\"dscp\":%u,\"ecn\":%u,\"ecn_name\":\"%s\","
		"\"ttl\":%u", p->ip_version, src, dst, p->tos, p->tos >> 2,
		p->tos & DROCE_ECN_MASK, ecn_name(p->tos), p->ttl);
	if (p->ip_version == 6)
		fprintf(out, ",\"flow_label\":%u", p->flow_label);
	fprintf(out, ",\"sport\":%u,\"dport\":%u", p->udp_sport, p->udp_dport);
	fprintf(out, ",\"opcode\":%u,\"opcode_name\":\"%s\",\"se\":%u,\"m\":%u,"
		"\"padcnt\":%u,\"tver\":%u,\"pkey\":%u,\"fecn\":%u,\"becn\":%u,"
		"\"dqpn\":%u,\"ackreq\":%u,\"psn\":%u",
		b->opcode, p->op->name, b->se, b->m, b->padcnt, b->tver, b->pkey,
		b->fecn, b->becn, b->dqpn, b->ackreq, b->psn);
	if (f & DROCE_OPF_XRCETH)
		fprintf(out, ",\"xrceth\":{\"xrcsrq\":%u}", p->xrceth.xrcsrq);
	if (f & DROCE_OPF_DETH)
		fprintf(out, ",\"deth\":{\"qkey\":%u,\"srcqp\":%u}",
			p->deth.qkey, p->deth.srcqp);
	if (f & DROCE_OPF_FETH)
		fprintf(out, ",\"feth\":{\"sel\":%u,\"plt\":%u}",
			p->feth.sel, p->feth.plt);
	if (f & DROCE_OPF_RETH)
		fprintf(out, ",\"reth\":{\"va\":%" PRIu64 ",\"rkey\":%u,"
			"\"dlen\":%u}", p->reth.va, p->reth.rkey, p->reth.dlen);
	if (f & DROCE_OPF_AETH)
		fprintf(out, ",\"aeth\":{\"syndrome\":%u,\"msn\":%u}",
			p->aeth.syndrome, p->aeth.msn);
	if (f & DROCE_OPF_ATOMICETH)
		fprintf(out, ",\"atomiceth\":{\"va\":%" PRIu64 ",\"rkey\":%u,"
			"\"swap_add\":%" PRIu64 ",\"compare\":%" PRIu64 "}",
			p->atomiceth.va, p->atomiceth.rkey,
			p->atomiceth.swap_add, p->atomiceth.compare);
	if (f & DROCE_OPF_ATOMICACKETH)
		fprintf(out, ",\"atomicacketh\":{\"orig\":%" PRIu64 "}",
			p->atomicacketh.orig);
	if (f & DROCE_OPF_IMMDT)
		fprintf(out, ",\"immdt\":%u", p->immdt);
	if (f & DROCE_OPF_IETH)
		fprintf(out, ",\"ieth\":{\"rkey\":%u}", p->ieth_rkey);
	if (dump_is_mad(p))
		dump_cm_json(out, p);
	fprintf(out, ",\"payload_len\":%u,\"icrc\":%u,\"icrc_ok\":%s}\n",
		p->payload_len, p->icrc, p->icrc_ok ? "true" : "false");
}
