/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The operations of a droce context, installed at open, and the small
 * helpers of the verbs API (names of states and statuses, fork support).
 */

#include "droce_verbs_pvt.h"

/* The public entry points, not verbs.h's inline wrappers of them. */
#undef ibv_query_port
#undef ibv_reg_mr
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr);
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  int access);

/*
 * The old entry points of ibv_context_ops point where libibverbs points
 * them (at the operations themselves), for binaries built against old
 * headers that call through them; the flow placeholders mirror the flow
 * ops (none yet).
 */
#define COMPAT_OP(fn) ((void *(*)(void))(void (*)(void))(fn))

static void
set_compat_ops(struct droce_context *ctx)
{
	struct ibv_context_ops *ops = &ctx->vctx.context.ops;

	ops->_compat_query_device = ibv_query_device;
	ops->_compat_query_port = ibv_query_port;
	ops->_compat_alloc_pd = COMPAT_OP(ibv_alloc_pd);
	ops->_compat_dealloc_pd = COMPAT_OP(ibv_dealloc_pd);
	ops->_compat_reg_mr = COMPAT_OP(ibv_reg_mr);
	ops->_compat_dereg_mr = COMPAT_OP(ibv_dereg_mr);
	ops->_compat_create_cq = COMPAT_OP(ibv_create_cq);
	ops->_compat_resize_cq = COMPAT_OP(ibv_resize_cq);
	ops->_compat_destroy_cq = COMPAT_OP(ibv_destroy_cq);
	ops->_compat_create_qp = COMPAT_OP(ibv_create_qp);
	ops->_compat_query_qp = COMPAT_OP(ibv_query_qp);
	ops->_compat_modify_qp = COMPAT_OP(ibv_modify_qp);
	ops->_compat_destroy_qp = COMPAT_OP(ibv_destroy_qp);
	ctx->vctx.ABI_placeholder1 = (void (*)(void))ctx->vctx.ibv_create_flow;
	ctx->vctx.ABI_placeholder2 = (void (*)(void))ctx->vctx.ibv_destroy_flow;
}

void
droce_verbs_set_ops(struct droce_context *ctx)
{
	struct ibv_context_ops *ops = &ctx->vctx.context.ops;

	ops->poll_cq = droce_poll_cq;
	ops->req_notify_cq = droce_req_notify_cq;
	ops->post_send = droce_post_send;
	ops->post_recv = droce_post_recv;
	ops->post_srq_recv = droce_post_srq_recv;
	ctx->vctx.query_port = droce_query_port_ex;
	ctx->vctx.query_device_ex = droce_query_device_ex;
	ctx->vctx.query_rt_values = droce_query_rt_values;
	ctx->vctx.create_cq_ex = droce_create_cq_ex;
	ctx->vctx.create_qp_ex = droce_create_qp_ex;
	ctx->vctx.create_srq_ex = droce_create_srq_ex;
	ctx->vctx.post_srq_ops = droce_post_srq_ops;
	droce_verbs_set_mw_ops(ctx);
	droce_verbs_set_xrc_ops(ctx);
	droce_verbs_set_flow_ops(ctx);
	droce_verbs_set_wq_ops(ctx);
	droce_verbs_set_mem_ops(ctx);
	set_compat_ops(ctx);
}

const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const str[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	if ((unsigned int)status >= RTE_DIM(str) || str[status] == NULL)
		return "unknown";
	return str[status];
}

const char *
ibv_port_state_str(enum ibv_port_state state)
{
	static const char *const str[] = {
		[IBV_PORT_NOP] = "PORT_NOP",
		[IBV_PORT_DOWN] = "PORT_DOWN",
		[IBV_PORT_INIT] = "PORT_INIT",
		[IBV_PORT_ARMED] = "PORT_ARMED",
		[IBV_PORT_ACTIVE] = "PORT_ACTIVE",
		[IBV_PORT_ACTIVE_DEFER] = "PORT_ACTIVE_DEFER",
	};

	if ((unsigned int)state >= RTE_DIM(str))
		return "unknown";
	return str[state];
}

const char *
ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA:
		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:
		return "InfiniBand switch";
	case IBV_NODE_ROUTER:
		return "InfiniBand router";
	case IBV_NODE_RNIC:
		return "iWARP NIC";
	case IBV_NODE_USNIC:
		return "usNIC";
	case IBV_NODE_USNIC_UDP:
		return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED:
		return "unspecified";
	default:
		return "unknown";
	}
}

const char *
ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const str[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	if ((unsigned int)event >= RTE_DIM(str) || str[event] == NULL)
		return "unknown";
	return str[event];
}

/* Memory registration pins nothing that fork() could break here. */
int
ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}
