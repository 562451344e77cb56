/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* droce's additions to the verbs API (droce.h). */

#include <string.h>

#include "droce.h"
#include "droce_verbs_pvt.h"

int
droce_query_counters(struct ibv_context *ctx, struct droce_counters *c)
{
	struct droce_dev_stats s;

	droce_dev_stats(to_ctx(ctx)->dev, &s);
	c->rx_frames = s.rx_frames;
	c->rx_bytes = s.rx_bytes;
	c->tx_frames = s.tx_frames;
	c->tx_bytes = s.tx_bytes;
	c->rx_roce = s.rx_roce;
	c->rx_icrc_err = s.rx_icrc_err;
	c->rx_malformed = s.rx_malformed;
	c->rx_not_ours = s.rx_not_ours;
	c->rx_arp = s.rx_arp;
	c->tx_drop = s.tx_drop;
	c->no_mbuf = s.no_mbuf;
	c->tx_csum_offload = s.tx_csum_offload;
	c->tx_tso_offload = s.tx_tso_offload;
	c->tx_gso = s.tx_gso;
	return 0;
}

int
droce_query_qp_counters(struct ibv_qp *qp, struct droce_qp_counters *c)
{
	struct droce_qp_stats s;

	droce_qp_stats(to_qp(qp)->eng, &s);
	c->tx_pkts = s.tx_pkts;
	c->rx_pkts = s.rx_pkts;
	c->retransmits = s.retransmits;
	c->timeouts = s.timeouts;
	c->naks_sent = s.naks_sent;
	c->naks_rcvd = s.naks_rcvd;
	c->rnr_naks_sent = s.rnr_naks_sent;
	c->rnr_naks_rcvd = s.rnr_naks_rcvd;
	c->dup_reqs = s.dup_reqs;
	c->rx_dropped = s.rx_dropped;
	return 0;
}

int
droce_query_mac(struct ibv_context *ctx, uint8_t mac[6])
{
	memcpy(mac, to_ctx(ctx)->attr.mac.addr_bytes, 6);
	return 0;
}

int
droce_raw_send(struct ibv_context *ctx, const uint8_t dst_mac[6],
	       uint32_t frame_len, uint32_t duration_ms, uint32_t flags,
	       uint64_t *sent)
{
	struct rte_ether_addr dst;

	if (flags & ~DROCE_RAW_ROCE)
		return EINVAL;
	memcpy(dst.addr_bytes, dst_mac, 6);
	return -droce_dev_raw(to_ctx(ctx)->dev, &dst, frame_len, duration_ms,
			      (flags & DROCE_RAW_ROCE) ? DROCE_DEV_RAW_ROCE : 0,
			      sent);
}

int
droce_mirror_start(struct ibv_context *ctx, const char *path)
{
	return -droce_dev_mirror_start(to_ctx(ctx)->dev, path);
}

int
droce_mirror_stop(struct ibv_context *ctx)
{
	return -droce_dev_mirror_stop(to_ctx(ctx)->dev);
}

const char *
droce_qp_state_str(enum ibv_qp_state s)
{
	return droce_qp_state_name(s);
}
