/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The opcode table: the set of defined opcodes is exactly the RoCEv2 one,
 * and each entry's headers, offsets and kind bits are what the
 * InfiniBand specification gives.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "droce_wire.h"

static const uint8_t ext_len[DROCE_EXT_NUM] = {
	[DROCE_EXT_XRCETH] = DROCE_XRCETH_LEN,
	[DROCE_EXT_DETH] = DROCE_DETH_LEN,
	[DROCE_EXT_FETH] = DROCE_FETH_LEN,
	[DROCE_EXT_RETH] = DROCE_RETH_LEN,
	[DROCE_EXT_AETH] = DROCE_AETH_LEN,
	[DROCE_EXT_ATOMICETH] = DROCE_ATOMICETH_LEN,
	[DROCE_EXT_ATOMICACKETH] = DROCE_ATOMICACKETH_LEN,
	[DROCE_EXT_IMMDT] = DROCE_IMMDT_LEN,
	[DROCE_EXT_IETH] = DROCE_IETH_LEN,
	[DROCE_EXT_CNP] = DROCE_CNP_RESV_LEN,
};

static const struct droce_opcode_info *
op(uint8_t opcode)
{
	const struct droce_opcode_info *info = droce_opcode_get(opcode);

	assert_non_null(info);
	return info;
}

static void
test_defined_set(void **state)
{
	unsigned int i, n = 0, rc = 0, uc = 0, ud = 0, xrc = 0;

	(void)state;
	for (i = 0; i < 256; i++) {
		if (droce_opcode_get((uint8_t)i) == NULL) {
			assert_string_equal(droce_opcode_name((uint8_t)i),
					    "UNKNOWN");
			continue;
		}
		n++;
		switch (i & DROCE_TR_MASK) {
		case DROCE_TR_RC:
			rc++;
			break;
		case DROCE_TR_UC:
			uc++;
			break;
		case DROCE_TR_UD:
			ud++;
			break;
		case DROCE_TR_XRC:
			xrc++;
			break;
		default:
			assert_int_equal(i, DROCE_OPCODE_CNP);
		}
	}
	/* RC: 0x00-0x14, SEND with invalidate, FLUSH, ATOMIC WRITE */
	assert_int_equal(rc, 21 + 2 + 2);
	assert_int_equal(uc, 12);
	assert_int_equal(ud, 2);
	assert_int_equal(xrc, 21 + 2);
	assert_int_equal(n, 25 + 12 + 2 + 23 + 1);
	/* reserved and RD opcodes are not RoCEv2 */
	assert_null(droce_opcode_get(0x15));
	assert_null(droce_opcode_get(0x18));
	assert_null(droce_opcode_get(0x2c));
	assert_null(droce_opcode_get(0x40));
	assert_null(droce_opcode_get(0x53));
	assert_null(droce_opcode_get(0x66));
	assert_null(droce_opcode_get(0x80));
	assert_null(droce_opcode_get(0xb5));
	assert_null(droce_opcode_get(0xff));
}

/* Header length and offsets follow from the header list, in wire order. */
static void
test_offsets_follow_header_list(void **state)
{
	unsigned int i, e;

	(void)state;
	for (i = 0; i < 256; i++) {
		const struct droce_opcode_info *info =
			droce_opcode_get((uint8_t)i);
		unsigned int off = DROCE_BTH_LEN;

		if (info == NULL)
			continue;
		for (e = 0; e < DROCE_EXT_NUM; e++) {
			if (!(info->flags & (1u << e)))
				continue;
			assert_int_equal(info->offset[e], off);
			off += ext_len[e];
		}
		assert_int_equal(info->hdr_len, off);
	}
}

static void
test_kind_bits_consistent(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < 256; i++) {
		const struct droce_opcode_info *info =
			droce_opcode_get((uint8_t)i);
		uint32_t f, pos;

		if (info == NULL || i == DROCE_OPCODE_CNP)
			continue;
		f = info->flags;
		/* a request or a response, never both */
		assert_true(!!(f & DROCE_OPF_REQ) != !!(f & DROCE_OPF_RESP));
		/* a position: first, middle, last or only */
		pos = f & (DROCE_OPF_FIRST | DROCE_OPF_MIDDLE | DROCE_OPF_LAST);
		assert_true(pos == DROCE_OPF_FIRST || pos == DROCE_OPF_MIDDLE ||
			    pos == DROCE_OPF_LAST || pos == DROCE_OPF_ONLY);
		/* XRCETH exactly on XRC requests, DETH exactly on UD */
		assert_int_equal(!!(f & DROCE_OPF_XRCETH),
				 (i & DROCE_TR_MASK) == DROCE_TR_XRC &&
				 (f & DROCE_OPF_REQ));
		assert_int_equal(!!(f & DROCE_OPF_DETH),
				 (i & DROCE_TR_MASK) == DROCE_TR_UD);
		/* SEND and WRITE carry payload, as do READ responses */
		if (f & (DROCE_OPF_SEND | DROCE_OPF_WRITE))
			assert_true(f & DROCE_OPF_PAYLOAD);
		if ((f & DROCE_OPF_READ) && (f & DROCE_OPF_RESP))
			assert_true(f & DROCE_OPF_PAYLOAD);
		/* a RETH opens every WRITE and READ request message */
		if ((f & (DROCE_OPF_WRITE | DROCE_OPF_READ)) &&
		    (f & DROCE_OPF_REQ))
			assert_int_equal(!!(f & DROCE_OPF_RETH),
					 !!(f & DROCE_OPF_FIRST));
		/* an AETH on every response except READ response middle */
		if (f & DROCE_OPF_RESP)
			assert_int_equal(!!(f & DROCE_OPF_AETH),
					 pos != DROCE_OPF_MIDDLE);
		/* immediate data and invalidate only on a message's end */
		if (f & (DROCE_OPF_IMMDT | DROCE_OPF_IETH))
			assert_true(f & DROCE_OPF_LAST);
		/* the low five bits name the same operation everywhere */
		if ((i & DROCE_TR_MASK) != DROCE_TR_RC &&
		    droce_opcode_get((uint8_t)(i & 0x1f)) != NULL) {
			const struct droce_opcode_info *rc =
				droce_opcode_get((uint8_t)(i & 0x1f));

			assert_int_equal(f & ~(DROCE_OPF_XRCETH | DROCE_OPF_DETH),
					 rc->flags);
		}
	}
}

static void
test_known_layouts(void **state)
{
	const struct droce_opcode_info *i;

	(void)state;
	i = op(DROCE_TR_RC | DROCE_OP_SEND_ONLY);
	assert_string_equal(i->name, "RC_SEND_ONLY");
	assert_int_equal(i->hdr_len, 12);
	assert_int_equal(i->flags & DROCE_OPF_ONLY, DROCE_OPF_ONLY);

	i = op(DROCE_TR_RC | DROCE_OP_WRITE_ONLY_IMM);
	assert_string_equal(i->name, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	assert_int_equal(i->offset[DROCE_EXT_RETH], 12);
	assert_int_equal(i->offset[DROCE_EXT_IMMDT], 28);
	assert_int_equal(i->hdr_len, 32);

	i = op(DROCE_TR_RC | DROCE_OP_COMPARE_SWAP);
	assert_int_equal(i->offset[DROCE_EXT_ATOMICETH], 12);
	assert_int_equal(i->hdr_len, 40);
	assert_false(i->flags & DROCE_OPF_PAYLOAD);

	i = op(DROCE_TR_RC | DROCE_OP_ATOMIC_ACKNOWLEDGE);
	assert_int_equal(i->offset[DROCE_EXT_AETH], 12);
	assert_int_equal(i->offset[DROCE_EXT_ATOMICACKETH], 16);
	assert_int_equal(i->hdr_len, 24);

	i = op(DROCE_TR_RC | DROCE_OP_READ_RESPONSE_MIDDLE);
	assert_int_equal(i->hdr_len, 12);
	assert_true(i->flags & DROCE_OPF_RESP);

	i = op(DROCE_TR_RC | DROCE_OP_SEND_LAST_INV);
	assert_int_equal(i->offset[DROCE_EXT_IETH], 12);
	assert_int_equal(i->hdr_len, 16);

	i = op(DROCE_TR_RC | DROCE_OP_FLUSH);
	assert_int_equal(i->offset[DROCE_EXT_FETH], 12);
	assert_int_equal(i->offset[DROCE_EXT_RETH], 16);
	assert_int_equal(i->hdr_len, 32);

	i = op(DROCE_TR_UD | DROCE_OP_SEND_ONLY_IMM);
	assert_string_equal(i->name, "UD_SEND_ONLY_WITH_IMMEDIATE");
	assert_int_equal(i->offset[DROCE_EXT_DETH], 12);
	assert_int_equal(i->offset[DROCE_EXT_IMMDT], 20);
	assert_int_equal(i->hdr_len, 24);

	i = op(DROCE_TR_XRC | DROCE_OP_WRITE_FIRST);
	assert_string_equal(i->name, "XRC_RDMA_WRITE_FIRST");
	assert_int_equal(i->offset[DROCE_EXT_XRCETH], 12);
	assert_int_equal(i->offset[DROCE_EXT_RETH], 16);
	assert_int_equal(i->hdr_len, 32);

	i = op(DROCE_TR_XRC | DROCE_OP_ACKNOWLEDGE);
	assert_false(i->flags & DROCE_OPF_XRCETH);
	assert_int_equal(i->hdr_len, 16);

	i = op(DROCE_OPCODE_CNP);
	assert_string_equal(i->name, "CNP");
	assert_int_equal(i->hdr_len, 28);
	assert_false(i->flags & (DROCE_OPF_REQ | DROCE_OPF_RESP));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defined_set),
		cmocka_unit_test(test_offsets_follow_header_list),
		cmocka_unit_test(test_kind_bits_consistent),
		cmocka_unit_test(test_known_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
