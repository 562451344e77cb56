/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The opcode table. Each opcode is declared once by what it is (request or
 * response, position in the message, operation, extension headers); the
 * header length and the offset of every extension header are computed
 * from that list, in the order the headers follow the BTH.
 */

#include "droce_wire.h"

/* Size of extension header e if flags f say it is present. */
#define EXT_SZ(f, e, n) (((f) & (1u << (e))) ? (n) : 0)

/* Offset from the BTH of the first byte after extension headers 0..e-1. */
#define OFF(f, e) (DROCE_BTH_LEN + \
	((e) > DROCE_EXT_XRCETH ? EXT_SZ(f, DROCE_EXT_XRCETH, DROCE_XRCETH_LEN) : 0) + \
	((e) > DROCE_EXT_DETH ? EXT_SZ(f, DROCE_EXT_DETH, DROCE_DETH_LEN) : 0) + \
	((e) > DROCE_EXT_FETH ? EXT_SZ(f, DROCE_EXT_FETH, DROCE_FETH_LEN) : 0) + \
	((e) > DROCE_EXT_RETH ? EXT_SZ(f, DROCE_EXT_RETH, DROCE_RETH_LEN) : 0) + \
	((e) > DROCE_EXT_AETH ? EXT_SZ(f, DROCE_EXT_AETH, DROCE_AETH_LEN) : 0) + \
	((e) > DROCE_EXT_ATOMICETH ? \
	 EXT_SZ(f, DROCE_EXT_ATOMICETH, DROCE_ATOMICETH_LEN) : 0) + \
	((e) > DROCE_EXT_ATOMICACKETH ? \
	 EXT_SZ(f, DROCE_EXT_ATOMICACKETH, DROCE_ATOMICACKETH_LEN) : 0) + \
	((e) > DROCE_EXT_IMMDT ? EXT_SZ(f, DROCE_EXT_IMMDT, DROCE_IMMDT_LEN) : 0) + \
	((e) > DROCE_EXT_IETH ? EXT_SZ(f, DROCE_EXT_IETH, DROCE_IETH_LEN) : 0) + \
	((e) > DROCE_EXT_CNP ? EXT_SZ(f, DROCE_EXT_CNP, DROCE_CNP_RESV_LEN) : 0))

#define OPI(str, f) { \
	.name = (str), \
	.flags = (f), \
	.hdr_len = OFF(f, DROCE_EXT_NUM), \
	.offset = { \
		[DROCE_EXT_XRCETH] = OFF(f, DROCE_EXT_XRCETH), \
		[DROCE_EXT_DETH] = OFF(f, DROCE_EXT_DETH), \
		[DROCE_EXT_FETH] = OFF(f, DROCE_EXT_FETH), \
		[DROCE_EXT_RETH] = OFF(f, DROCE_EXT_RETH), \
		[DROCE_EXT_AETH] = OFF(f, DROCE_EXT_AETH), \
		[DROCE_EXT_ATOMICETH] = OFF(f, DROCE_EXT_ATOMICETH), \
		[DROCE_EXT_ATOMICACKETH] = OFF(f, DROCE_EXT_ATOMICACKETH), \
		[DROCE_EXT_IMMDT] = OFF(f, DROCE_EXT_IMMDT), \
		[DROCE_EXT_IETH] = OFF(f, DROCE_EXT_IETH), \
		[DROCE_EXT_CNP] = OFF(f, DROCE_EXT_CNP), \
	}, \
}

#define REQ DROCE_OPF_REQ
#define RESP DROCE_OPF_RESP
#define PAY DROCE_OPF_PAYLOAD
#define FIRST DROCE_OPF_FIRST
#define MIDDLE DROCE_OPF_MIDDLE
#define LAST DROCE_OPF_LAST
#define ONLY DROCE_OPF_ONLY
#define SEND (REQ | DROCE_OPF_SEND | PAY)
#define WRITE (REQ | DROCE_OPF_WRITE | PAY)
#define READ_RESP (RESP | DROCE_OPF_READ | PAY)
#define RETH DROCE_OPF_RETH
#define AETH DROCE_OPF_AETH
#define IMMDT DROCE_OPF_IMMDT

/* SEND and RDMA WRITE: every connected transport has them. */
#define SEND_WRITE_OPS(T) \
	T(SEND_FIRST, "SEND_FIRST", SEND | FIRST) \
	T(SEND_MIDDLE, "SEND_MIDDLE", SEND | MIDDLE) \
	T(SEND_LAST, "SEND_LAST", SEND | LAST) \
	T(SEND_LAST_IMM, "SEND_LAST_WITH_IMMEDIATE", SEND | LAST | IMMDT) \
	T(SEND_ONLY, "SEND_ONLY", SEND | ONLY) \
	T(SEND_ONLY_IMM, "SEND_ONLY_WITH_IMMEDIATE", SEND | ONLY | IMMDT) \
	T(WRITE_FIRST, "RDMA_WRITE_FIRST", WRITE | FIRST | RETH) \
	T(WRITE_MIDDLE, "RDMA_WRITE_MIDDLE", WRITE | MIDDLE) \
	T(WRITE_LAST, "RDMA_WRITE_LAST", WRITE | LAST) \
	T(WRITE_LAST_IMM, "RDMA_WRITE_LAST_WITH_IMMEDIATE", \
	  WRITE | LAST | IMMDT) \
	T(WRITE_ONLY, "RDMA_WRITE_ONLY", WRITE | ONLY | RETH) \
	T(WRITE_ONLY_IMM, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", \
	  WRITE | ONLY | RETH | IMMDT)

/* What only the reliable transports (RC, XRC) have. */
#define RELIABLE_OPS(T) \
	T(READ_REQUEST, "RDMA_READ_REQUEST", \
	  REQ | DROCE_OPF_READ | ONLY | RETH) \
	T(READ_RESPONSE_FIRST, "RDMA_READ_RESPONSE_FIRST", \
	  READ_RESP | FIRST | AETH) \
	T(READ_RESPONSE_MIDDLE, "RDMA_READ_RESPONSE_MIDDLE", \
	  READ_RESP | MIDDLE) \
	T(READ_RESPONSE_LAST, "RDMA_READ_RESPONSE_LAST", \
	  READ_RESP | LAST | AETH) \
	T(READ_RESPONSE_ONLY, "RDMA_READ_RESPONSE_ONLY", \
	  READ_RESP | ONLY | AETH) \
	T(ACKNOWLEDGE, "ACKNOWLEDGE", RESP | DROCE_OPF_ACK | ONLY | AETH) \
	T(ATOMIC_ACKNOWLEDGE, "ATOMIC_ACKNOWLEDGE", \
	  RESP | DROCE_OPF_ATOMIC | ONLY | AETH | DROCE_OPF_ATOMICACKETH) \
	T(COMPARE_SWAP, "COMPARE_SWAP", \
	  REQ | DROCE_OPF_ATOMIC | ONLY | DROCE_OPF_ATOMICETH) \
	T(FETCH_ADD, "FETCH_ADD", \
	  REQ | DROCE_OPF_ATOMIC | ONLY | DROCE_OPF_ATOMICETH) \
	T(SEND_LAST_INV, "SEND_LAST_WITH_INVALIDATE", \
	  SEND | LAST | DROCE_OPF_IETH) \
	T(SEND_ONLY_INV, "SEND_ONLY_WITH_INVALIDATE", \
	  SEND | ONLY | DROCE_OPF_IETH)

/* Memory placement extensions (IBA 1.5), RC only as in Linux. */
#define MPE_OPS(T) \
	T(FLUSH, "FLUSH", \
	  REQ | DROCE_OPF_FLUSH | ONLY | DROCE_OPF_FETH | RETH) \
	T(ATOMIC_WRITE, "ATOMIC_WRITE", \
	  REQ | DROCE_OPF_ATOMIC_WRITE | ONLY | RETH | PAY)

#define RC_OP(op, str, f) [DROCE_TR_RC | DROCE_OP_##op] = OPI("RC_" str, f),
#define UC_OP(op, str, f) [DROCE_TR_UC | DROCE_OP_##op] = OPI("UC_" str, f),
#define UD_OP(op, str, f) \
	[DROCE_TR_UD | DROCE_OP_##op] = OPI("UD_" str, (f) | DROCE_OPF_DETH),
/* XRC requests carry the XRCETH; XRC responses are RC's. */
#define XRC_OP(op, str, f) [DROCE_TR_XRC | DROCE_OP_##op] = \
	OPI("XRC_" str, ((f) & REQ) ? ((f) | DROCE_OPF_XRCETH) : (f)),

const struct droce_opcode_info droce_opcode_table[256] = {
	SEND_WRITE_OPS(RC_OP)
	RELIABLE_OPS(RC_OP)
	MPE_OPS(RC_OP)
	SEND_WRITE_OPS(UC_OP)
	UD_OP(SEND_ONLY, "SEND_ONLY", SEND | ONLY)
	UD_OP(SEND_ONLY_IMM, "SEND_ONLY_WITH_IMMEDIATE", SEND | ONLY | IMMDT)
	SEND_WRITE_OPS(XRC_OP)
	RELIABLE_OPS(XRC_OP)
	[DROCE_OPCODE_CNP] = OPI("CNP", DROCE_OPF_CNP),
};

const char *
droce_opcode_name(uint8_t opcode)
{
	const char *name = droce_opcode_table[opcode].name;

	return name != NULL ? name : "UNKNOWN";
}
