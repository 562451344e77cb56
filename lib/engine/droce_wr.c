/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The work request opcodes: for each, what it is, the QP types it may be
 * posted on (ibv_post_send(3)'s table, and ATOMIC_WRITE, newer than the
 * page), its completion and the packets that carry it. The verbs layer
 * checks posts against it, the requester builds packets and the
 * completer completions from it, and the opcodes test walks it.
 */

#include "droce_engine.h"
#include "droce_wire.h"

#define QPT DROCE_QPT
#define CONNECTED (QPT(IBV_QPT_RC) | QPT(IBV_QPT_UC) | QPT(IBV_QPT_XRC_SEND))
#define RELIABLE (QPT(IBV_QPT_RC) | QPT(IBV_QPT_XRC_SEND))

/* A message cut into packets: ONLY, FIRST, MIDDLE, LAST. */
#define MSG(only, last) { DROCE_OP_##only, DROCE_OP_SEND_FIRST, \
	DROCE_OP_SEND_MIDDLE, DROCE_OP_##last }
#define WRITE_MSG(only, last) { DROCE_OP_##only, DROCE_OP_WRITE_FIRST, \
	DROCE_OP_WRITE_MIDDLE, DROCE_OP_##last }
/* A request of one packet. */
#define ONE(op) { DROCE_OP_##op }

const struct droce_wr_info droce_wr_table[DROCE_WR_NUM] = {
	[IBV_WR_SEND] = {
		.name = "SEND",
		.flags = DROCE_WR_SEND | DROCE_WR_DATA | DROCE_WR_INLINE,
		.qp_types = CONNECTED | QPT(IBV_QPT_UD) |
			QPT(IBV_QPT_RAW_PACKET),
		.wc_opcode = IBV_WC_SEND,
		.wire = MSG(SEND_ONLY, SEND_LAST),
		.qpx_op = IBV_QP_EX_WITH_SEND,
	},
	[IBV_WR_SEND_WITH_IMM] = {
		.name = "SEND_WITH_IMM",
		.flags = DROCE_WR_SEND | DROCE_WR_IMM | DROCE_WR_DATA |
			DROCE_WR_INLINE,
		.qp_types = CONNECTED | QPT(IBV_QPT_UD),
		.wc_opcode = IBV_WC_SEND,
		.wire = MSG(SEND_ONLY_IMM, SEND_LAST_IMM),
		.qpx_op = IBV_QP_EX_WITH_SEND_WITH_IMM,
	},
	/* InfiniBand gives UC no opcode with an IETH: nothing could carry
	 * it there, though ibv_post_send(3) lists it */
	[IBV_WR_SEND_WITH_INV] = {
		.name = "SEND_WITH_INV",
		.flags = DROCE_WR_SEND | DROCE_WR_INV | DROCE_WR_DATA |
			DROCE_WR_INLINE,
		.qp_types = CONNECTED,
		.missing = QPT(IBV_QPT_UC),
		.wc_opcode = IBV_WC_SEND,
		.wire = MSG(SEND_ONLY_INV, SEND_LAST_INV),
		.qpx_op = IBV_QP_EX_WITH_SEND_WITH_INV,
	},
	[IBV_WR_RDMA_WRITE] = {
		.name = "RDMA_WRITE",
		.flags = DROCE_WR_WRITE | DROCE_WR_DATA | DROCE_WR_INLINE,
		.qp_types = CONNECTED,
		.wc_opcode = IBV_WC_RDMA_WRITE,
		.wire = WRITE_MSG(WRITE_ONLY, WRITE_LAST),
		.qpx_op = IBV_QP_EX_WITH_RDMA_WRITE,
	},
	[IBV_WR_RDMA_WRITE_WITH_IMM] = {
		.name = "RDMA_WRITE_WITH_IMM",
		.flags = DROCE_WR_WRITE | DROCE_WR_IMM | DROCE_WR_DATA |
			DROCE_WR_INLINE,
		.qp_types = CONNECTED,
		.wc_opcode = IBV_WC_RDMA_WRITE,
		.wire = WRITE_MSG(WRITE_ONLY_IMM, WRITE_LAST_IMM),
		.qpx_op = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	},
	[IBV_WR_RDMA_READ] = {
		.name = "RDMA_READ",
		.flags = DROCE_WR_READ,
		.qp_types = RELIABLE,
		.wc_opcode = IBV_WC_RDMA_READ,
		.wire = ONE(READ_REQUEST),
		.qpx_op = IBV_QP_EX_WITH_RDMA_READ,
	},
	[IBV_WR_ATOMIC_CMP_AND_SWP] = {
		.name = "ATOMIC_CMP_AND_SWP",
		.flags = DROCE_WR_ATOMIC | DROCE_WR_COMPARE | DROCE_WR_WORD,
		.qp_types = RELIABLE,
		.wc_opcode = IBV_WC_COMP_SWAP,
		.cqe_len = DROCE_WR_LEN_WORD,
		.wire = ONE(COMPARE_SWAP),
		.qpx_op = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
	},
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = {
		.name = "ATOMIC_FETCH_AND_ADD",
		.flags = DROCE_WR_ATOMIC | DROCE_WR_WORD,
		.qp_types = RELIABLE,
		.wc_opcode = IBV_WC_FETCH_ADD,
		.cqe_len = DROCE_WR_LEN_WORD,
		.wire = ONE(FETCH_ADD),
		.qpx_op = IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	},
	/* droce's XRC has no ATOMIC_WRITE opcode on the wire */
	[IBV_WR_ATOMIC_WRITE] = {
		.name = "ATOMIC_WRITE",
		.flags = DROCE_WR_WRITE | DROCE_WR_DATA | DROCE_WR_INLINE |
			DROCE_WR_WORD,
		.qp_types = RELIABLE,
		.missing = QPT(IBV_QPT_XRC_SEND),
		.wc_opcode = IBV_WC_ATOMIC_WRITE,
		.wire = ONE(ATOMIC_WRITE),
		.qpx_op = IBV_QP_EX_WITH_ATOMIC_WRITE,
	},
	[IBV_WR_LOCAL_INV] = {
		.name = "LOCAL_INV",
		.flags = DROCE_WR_LOCAL | DROCE_WR_INV,
		.qp_types = CONNECTED,
		.wc_opcode = IBV_WC_LOCAL_INV,
		.cqe_len = DROCE_WR_LEN_NONE,
		.qpx_op = IBV_QP_EX_WITH_LOCAL_INV,
	},
	[IBV_WR_BIND_MW] = {
		.name = "BIND_MW",
		.flags = DROCE_WR_LOCAL,
		.qp_types = CONNECTED,
		.wc_opcode = IBV_WC_BIND_MW,
		.cqe_len = DROCE_WR_LEN_NONE,
		.qpx_op = IBV_QP_EX_WITH_BIND_MW,
	},
	[IBV_WR_TSO] = {
		.name = "TSO",
		.flags = DROCE_WR_SEND | DROCE_WR_TSO | DROCE_WR_DATA,
		.qp_types = QPT(IBV_QPT_UD) | QPT(IBV_QPT_RAW_PACKET),
		.wc_opcode = IBV_WC_TSO,
		.wire = ONE(SEND_ONLY),
		.qpx_op = IBV_QP_EX_WITH_TSO,
	},
};
