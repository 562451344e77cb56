/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/* droce's additions to the verbs API (droce.h). */

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "droce.h"
#include "droce_verbs_pvt.h"

/*
 * droce.h's counters are the engine's: both structs are made from the
 * same list, so a query is one copy. Checked member by member here, in
 * case either struct is ever written out by hand.
 */
#define SAME_DEV_COUNTER(name, desc) \
	static_assert(offsetof(struct droce_counters, name) == \
		      offsetof(struct droce_dev_stats, name), \
		      "droce_counters." #name " is not where the engine has it");
#define SAME_QP_COUNTER(name, desc) \
	static_assert(offsetof(struct droce_qp_counters, name) == \
		      offsetof(struct droce_qp_stats, name), \
		      "droce_qp_counters." #name " is not where the engine has it");
DROCE_DEV_COUNTERS(SAME_DEV_COUNTER)
DROCE_QP_COUNTERS(SAME_QP_COUNTER)
static_assert(sizeof(struct droce_counters) == sizeof(struct droce_dev_stats),
	      "droce_counters and the engine's device counters differ");
static_assert(sizeof(struct droce_qp_counters) ==
	      sizeof(struct droce_qp_stats),
	      "droce_qp_counters and the engine's QP counters differ");

int
droce_query_counters(struct ibv_context *ctx, struct droce_counters *c)
{
	struct droce_dev_stats s;

	droce_dev_stats(to_ctx(ctx)->dev, &s);
	memcpy(c, &s, sizeof(*c));
	return 0;
}

static_assert(sizeof(struct droce_resources) ==
	      sizeof(struct droce_dev_resources),
	      "droce_resources and the engine's differ");

int
droce_query_resources(struct ibv_context *ctx, struct droce_resources *r)
{
	struct droce_dev_resources s;

	droce_dev_resources(to_ctx(ctx)->dev, &s);
	memcpy(r, &s, sizeof(*r));
	return 0;
}

int
droce_query_qp_counters(struct ibv_qp *qp, struct droce_qp_counters *c)
{
	struct droce_qp_stats s;

	droce_qp_stats(to_qp(qp)->eng, &s);
	memcpy(c, &s, sizeof(*c));
	return 0;
}

int
droce_query_qp_cc(struct ibv_qp *qp, struct droce_qp_cc *cc)
{
	droce_qp_cc_read(to_qp(qp)->eng, &cc->rate_kbps, &cc->target_kbps,
			 &cc->alpha, &cc->cuts);
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
droce_raw_pingpong(struct ibv_context *ctx, const uint8_t dst_mac[6],
		   uint32_t frame_len, uint32_t count, uint32_t *rtt_ns,
		   uint32_t *done)
{
	struct rte_ether_addr dst;

	memcpy(dst.addr_bytes, dst_mac, 6);
	return -droce_dev_raw_pingpong(to_ctx(ctx)->dev, &dst, frame_len,
				       count, rtt_ns, done);
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

int
droce_port_stop(struct ibv_context *ctx)
{
	return -droce_dev_port_stop(to_ctx(ctx)->dev);
}

int
droce_port_start(struct ibv_context *ctx)
{
	return -droce_dev_port_start(to_ctx(ctx)->dev);
}

const char *
droce_qp_state_str(enum ibv_qp_state s)
{
	return droce_qp_state_name(s);
}
