/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_WIRE_H
#define DROCE_WIRE_H

/**
 * @file
 * RoCEv2 wire format.
 *
 * Everything droce puts on or takes off the wire goes through this library:
 *
 *  - the InfiniBand transport headers (BTH and the extension headers that
 *    follow it), converted between network and host byte order in one pair
 *    of functions per header;
 *  - the opcode table: for every RC, UC, UD and XRC opcode and for CNP,
 *    which extension headers follow the BTH and at what offset, whether a
 *    payload follows, and the request/response and first/middle/last bits;
 *  - the invariant CRC (ICRC) over the masked IPv4 or IPv6, UDP and BTH
 *    headers, on top of a seeded, chainable CRC-32;
 *  - 24-bit PSN arithmetic;
 *  - a frame parser returning a decoded view or a precise error, and the
 *    matching builder that serialises a view back into a frame.
 *
 * The library holds no state, takes no locks and allocates nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;

/** UDP destination port of RoCEv2. */
#define DROCE_UDP_PORT 4791

/** Size of the Base Transport Header. */
#define DROCE_BTH_LEN 12
/** Size of the ICRC trailer. */
#define DROCE_ICRC_LEN 4
/** Bytes of all-ones that stand for the LRH in the ICRC computation. */
#define DROCE_ICRC_LRH_LEN 8

/** Largest path MTU of RoCE (IBV_MTU_4096). */
#define DROCE_MAX_MTU 4096

/** Ethernet + 802.1Q + IPv6 + UDP + BTH + largest extension headers. */
#define DROCE_MAX_HDR_LEN (14 + 4 + 40 + 8 + DROCE_BTH_LEN + 32)

/* ------------------------------------------------------------------------
 * Byte order: the only place that knows the wire is big-endian.
 */

/** Read a 16-bit big-endian field at any alignment. */
static inline uint16_t
droce_get_be16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_16(v);
}

/** Read a 24-bit big-endian field at any alignment. */
static inline uint32_t
droce_get_be24(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

/** Read a 32-bit big-endian field at any alignment. */
static inline uint32_t
droce_get_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_32(v);
}

/** Read a 64-bit big-endian field at any alignment. */
static inline uint64_t
droce_get_be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_64(v);
}

/** Write a 16-bit big-endian field at any alignment. */
static inline void
droce_put_be16(void *p, uint16_t v)
{
	v = rte_cpu_to_be_16(v);
	memcpy(p, &v, sizeof(v));
}

/** Write a 24-bit big-endian field (low 24 bits of @p v) at any alignment. */
static inline void
droce_put_be24(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

/** Write a 32-bit big-endian field at any alignment. */
static inline void
droce_put_be32(void *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, sizeof(v));
}

/** Write a 64-bit big-endian field at any alignment. */
static inline void
droce_put_be64(void *p, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p, &v, sizeof(v));
}

/* ------------------------------------------------------------------------
 * 24-bit packet sequence numbers.
 */

/** Mask of the 24 significant bits of a PSN, a QPN or an MSN. */
#define DROCE_PSN_MASK 0xffffffu

/** @return @p psn advanced by @p n, modulo 2^24. */
static inline uint32_t
droce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DROCE_PSN_MASK;
}

/**
 * Signed distance from @p b to @p a in the 24-bit sequence space.
 *
 * @return a value in [-2^23, 2^23): positive when @p a is after @p b.
 */
static inline int32_t
droce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/** @return true if @p a comes before @p b in the 24-bit sequence space. */
static inline bool
droce_psn_before(uint32_t a, uint32_t b)
{
	return droce_psn_diff(a, b) < 0;
}

/**
 * @return true if @p psn lies in the window of @p len PSNs that starts at
 * @p start (start included, start + len excluded).
 */
static inline bool
droce_psn_in_window(uint32_t psn, uint32_t start, uint32_t len)
{
	return ((psn - start) & DROCE_PSN_MASK) < len;
}

/* ------------------------------------------------------------------------
 * Transport headers, in host byte order.
 */

/** The default partition key: full membership of the default partition,
 * what RoCE peers use. */
#define DROCE_DEFAULT_PKEY 0xffff

/** Base Transport Header. */
struct droce_bth {
	uint8_t opcode;
	uint8_t se;      /**< solicited event */
	uint8_t m;       /**< MigReq */
	uint8_t padcnt;  /**< pad bytes after the payload, 0..3 */
	uint8_t tver;    /**< transport header version, 0 */
	uint16_t pkey;
	uint8_t fecn;
	uint8_t becn;
	uint8_t resv6;   /**< 6 reserved bits after FECN/BECN */
	uint32_t dqpn;   /**< destination QP, 24 bits */
	uint8_t ackreq;  /**< A bit */
	uint8_t resv7;   /**< 7 reserved bits after the A bit */
	uint32_t psn;    /**< 24 bits */
};

/** XRC Extended Transport Header. */
struct droce_xrceth {
	uint8_t resv;
	uint32_t xrcsrq;   /**< 24 bits */
};

/** Datagram Extended Transport Header. */
struct droce_deth {
	uint32_t qkey;
	uint8_t resv;
	uint32_t srcqp;    /**< 24 bits */
};

/** Flush Extended Transport Header (FLUSH requests). */
struct droce_feth {
	uint32_t resv;     /**< upper 26 bits */
	uint8_t sel;       /**< selectivity level, 2 bits */
	uint8_t plt;       /**< placement type, 4 bits */
};

/** RDMA Extended Transport Header. */
struct droce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dlen;
};

/** ACK Extended Transport Header. */
struct droce_aeth {
	uint8_t syndrome;
	uint32_t msn;      /**< 24 bits */
};

/** Atomic Extended Transport Header. */
struct droce_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
};

/** Atomic ACK Extended Transport Header. */
struct droce_atomicacketh {
	uint64_t orig;
};

/** Length of the reserved block that follows the BTH of a CNP. */
#define DROCE_CNP_RESV_LEN 16

/** The ECN field (the two low bits of the IPv4 TOS and the IPv6 traffic
 * class, RFC 3168): not ECN-capable, ECN-capable (ECT(1), ECT(0)), and
 * Congestion Experienced. The ICRC treats them as ones. */
#define DROCE_ECN_MASK     0x03
#define DROCE_ECN_NOT_ECT  0x00
#define DROCE_ECN_ECT1     0x01
#define DROCE_ECN_ECT0     0x02
#define DROCE_ECN_CE       0x03

/** BTH byte 4: Backward Explicit Congestion Notification, set in CNPs. */
#define DROCE_BTH_BECN     0x40

/** AETH syndrome: bits 6:5 say what kind of acknowledgement it is. */
#define DROCE_AETH_TYPE_MASK  0x60
#define DROCE_AETH_ACK        0x00 /**< ACK; bits 4:0 are the credit count */
#define DROCE_AETH_RNR_NAK    0x20 /**< RNR NAK; bits 4:0 are the timer */
#define DROCE_AETH_NAK        0x60 /**< NAK; bits 4:0 are the NAK code */
#define DROCE_AETH_VALUE_MASK 0x1f
/** Credit count meaning "no credit information" (what rxe sends). */
#define DROCE_AETH_CREDIT_INVALID 0x1f

/** NAK codes (AETH syndrome bits 4:0 when the type is NAK). */
enum droce_nak_code {
	DROCE_NAK_PSN_SEQ_ERR = 0,
	DROCE_NAK_INVALID_REQ = 1,
	DROCE_NAK_REM_ACCESS_ERR = 2,
	DROCE_NAK_REM_OP_ERR = 3,
	DROCE_NAK_INVALID_RD_REQ = 4,
};

/* ------------------------------------------------------------------------
 * Opcodes.
 */

/** Transport of an opcode: its top three bits. */
enum droce_transport {
	DROCE_TR_RC = 0x00,
	DROCE_TR_UC = 0x20,
	DROCE_TR_RD = 0x40,
	DROCE_TR_UD = 0x60,
	DROCE_TR_CNP = 0x80,
	DROCE_TR_XRC = 0xa0,
};

/** Mask of the transport bits of an opcode. */
#define DROCE_TR_MASK 0xe0

/** Operation of an opcode: its low five bits, the same in every transport. */
enum droce_op {
	DROCE_OP_SEND_FIRST = 0x00,
	DROCE_OP_SEND_MIDDLE = 0x01,
	DROCE_OP_SEND_LAST = 0x02,
	DROCE_OP_SEND_LAST_IMM = 0x03,
	DROCE_OP_SEND_ONLY = 0x04,
	DROCE_OP_SEND_ONLY_IMM = 0x05,
	DROCE_OP_WRITE_FIRST = 0x06,
	DROCE_OP_WRITE_MIDDLE = 0x07,
	DROCE_OP_WRITE_LAST = 0x08,
	DROCE_OP_WRITE_LAST_IMM = 0x09,
	DROCE_OP_WRITE_ONLY = 0x0a,
	DROCE_OP_WRITE_ONLY_IMM = 0x0b,
	DROCE_OP_READ_REQUEST = 0x0c,
	DROCE_OP_READ_RESPONSE_FIRST = 0x0d,
	DROCE_OP_READ_RESPONSE_MIDDLE = 0x0e,
	DROCE_OP_READ_RESPONSE_LAST = 0x0f,
	DROCE_OP_READ_RESPONSE_ONLY = 0x10,
	DROCE_OP_ACKNOWLEDGE = 0x11,
	DROCE_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	DROCE_OP_COMPARE_SWAP = 0x13,
	DROCE_OP_FETCH_ADD = 0x14,
	DROCE_OP_SEND_LAST_INV = 0x16,
	DROCE_OP_SEND_ONLY_INV = 0x17,
	DROCE_OP_FLUSH = 0x1c,
	DROCE_OP_ATOMIC_WRITE = 0x1d,
};

/** The CNP opcode (congestion notification packet). */
#define DROCE_OPCODE_CNP 0x81

/**
 * Extension headers, in the order in which they follow the BTH.
 * DROCE_EXT_CNP stands for the 16 reserved bytes of a CNP.
 */
enum droce_ext {
	DROCE_EXT_XRCETH,
	DROCE_EXT_DETH,
	DROCE_EXT_FETH,
	DROCE_EXT_RETH,
	DROCE_EXT_AETH,
	DROCE_EXT_ATOMICETH,
	DROCE_EXT_ATOMICACKETH,
	DROCE_EXT_IMMDT,
	DROCE_EXT_IETH,
	DROCE_EXT_CNP,
	DROCE_EXT_NUM
};

/** Wire size of each extension header. */
#define DROCE_XRCETH_LEN 4
#define DROCE_DETH_LEN 8
#define DROCE_FETH_LEN 4
#define DROCE_RETH_LEN 16
#define DROCE_AETH_LEN 4
#define DROCE_ATOMICETH_LEN 28
#define DROCE_ATOMICACKETH_LEN 8
#define DROCE_IMMDT_LEN 4
#define DROCE_IETH_LEN 4

/** Opcode flags: one bit per extension header present ... */
#define DROCE_OPF_XRCETH (1u << DROCE_EXT_XRCETH)
#define DROCE_OPF_DETH (1u << DROCE_EXT_DETH)
#define DROCE_OPF_FETH (1u << DROCE_EXT_FETH)
#define DROCE_OPF_RETH (1u << DROCE_EXT_RETH)
#define DROCE_OPF_AETH (1u << DROCE_EXT_AETH)
#define DROCE_OPF_ATOMICETH (1u << DROCE_EXT_ATOMICETH)
#define DROCE_OPF_ATOMICACKETH (1u << DROCE_EXT_ATOMICACKETH)
#define DROCE_OPF_IMMDT (1u << DROCE_EXT_IMMDT)
#define DROCE_OPF_IETH (1u << DROCE_EXT_IETH)
#define DROCE_OPF_CNP (1u << DROCE_EXT_CNP)
/** Mask of all the extension header bits. */
#define DROCE_OPF_EXT_MASK ((1u << DROCE_EXT_NUM) - 1)
/** ... and what the packet is. */
#define DROCE_OPF_PAYLOAD (1u << 16)  /**< a payload follows the headers */
#define DROCE_OPF_REQ (1u << 17)      /**< sent by a requester */
#define DROCE_OPF_RESP (1u << 18)     /**< sent by a responder */
#define DROCE_OPF_FIRST (1u << 19)    /**< first packet of a message */
#define DROCE_OPF_MIDDLE (1u << 20)   /**< middle packet of a message */
#define DROCE_OPF_LAST (1u << 21)     /**< last packet of a message */
#define DROCE_OPF_ONLY (DROCE_OPF_FIRST | DROCE_OPF_LAST)
#define DROCE_OPF_SEND (1u << 22)
#define DROCE_OPF_WRITE (1u << 23)
#define DROCE_OPF_READ (1u << 24)     /**< READ request or READ response */
#define DROCE_OPF_ATOMIC (1u << 25)   /**< CmpSwap/FetchAdd or their ACK */
#define DROCE_OPF_ACK (1u << 26)      /**< Acknowledge (AETH only) */
#define DROCE_OPF_FLUSH (1u << 27)
#define DROCE_OPF_ATOMIC_WRITE (1u << 28)

/** What the opcode table knows about one opcode. */
struct droce_opcode_info {
	const char *name;       /**< e.g. "RC_SEND_ONLY"; NULL if undefined */
	uint32_t flags;         /**< DROCE_OPF_* */
	uint8_t hdr_len;        /**< BTH + extension headers, in bytes */
	/** Offset of each extension header from the start of the BTH;
	 *  meaningful only where its DROCE_OPF_ bit is set. */
	uint8_t offset[DROCE_EXT_NUM];
};

/** The opcode table, indexed by BTH opcode. */
extern const struct droce_opcode_info droce_opcode_table[256];

/** @return the table entry of @p opcode, or NULL if it is not defined. */
static inline const struct droce_opcode_info *
droce_opcode_get(uint8_t opcode)
{
	const struct droce_opcode_info *info = &droce_opcode_table[opcode];

	return info->name != NULL ? info : NULL;
}

/** @return the name of @p opcode, or "UNKNOWN". */
const char *droce_opcode_name(uint8_t opcode);


/* ------------------------------------------------------------------------
 * Header encode/decode: the only code that knows the bit layout.
 */

/** Decode the BTH at @p p. */
static inline void
droce_bth_decode(const void *p, struct droce_bth *bth)
{
	const uint8_t *b = p;

	bth->opcode = b[0];
	bth->se = b[1] >> 7;
	bth->m = (b[1] >> 6) & 1;
	bth->padcnt = (b[1] >> 4) & 3;
	bth->tver = b[1] & 0xf;
	bth->pkey = droce_get_be16(b + 2);
	bth->fecn = b[4] >> 7;
	bth->becn = (b[4] >> 6) & 1;
	bth->resv6 = b[4] & 0x3f;
	bth->dqpn = droce_get_be24(b + 5);
	bth->ackreq = b[8] >> 7;
	bth->resv7 = b[8] & 0x7f;
	bth->psn = droce_get_be24(b + 9);
}

/** Encode @p bth at @p p (12 bytes). */
static inline void
droce_bth_encode(void *p, const struct droce_bth *bth)
{
	uint8_t *b = p;

	b[0] = bth->opcode;
	b[1] = (uint8_t)((bth->se & 1) << 7 | (bth->m & 1) << 6 |
			 (bth->padcnt & 3) << 4 | (bth->tver & 0xf));
	droce_put_be16(b + 2, bth->pkey);
	b[4] = (uint8_t)((bth->fecn & 1) << 7 | (bth->becn & 1) << 6 |
			 (bth->resv6 & 0x3f));
	droce_put_be24(b + 5, bth->dqpn);
	b[8] = (uint8_t)((bth->ackreq & 1) << 7 | (bth->resv7 & 0x7f));
	droce_put_be24(b + 9, bth->psn);
}

/** BTH opcode straight from the wire. */
static inline uint8_t
droce_bth_opcode(const void *bth)
{
	return *(const uint8_t *)bth;
}

/** BTH P_Key straight from the wire. */
static inline uint16_t
droce_bth_pkey(const void *bth)
{
	return droce_get_be16((const uint8_t *)bth + 2);
}

/**
 * Does P_Key @p pkey match @p ours: the same partition (the low 15 bits),
 * and not both limited members (bit 15 clear)?
 */
static inline bool
droce_pkey_match(uint16_t pkey, uint16_t ours)
{
	return ((pkey ^ ours) & 0x7fff) == 0 && ((pkey | ours) & 0x8000) != 0;
}

/** BTH solicited event bit straight from the wire. */
static inline bool
droce_bth_se(const void *bth)
{
	return (((const uint8_t *)bth)[1] & 0x80) != 0;
}

/** BTH AckReq bit straight from the wire. */
static inline bool
droce_bth_ackreq(const void *bth)
{
	return (((const uint8_t *)bth)[8] & 0x80) != 0;
}

/** BTH destination QPN straight from the wire. */
static inline uint32_t
droce_bth_dqpn(const void *bth)
{
	return droce_get_be24((const uint8_t *)bth + 5);
}

/** BTH PSN straight from the wire. */
static inline uint32_t
droce_bth_psn(const void *bth)
{
	return droce_get_be24((const uint8_t *)bth + 9);
}

static inline void
droce_xrceth_decode(const void *p, struct droce_xrceth *h)
{
	h->resv = *(const uint8_t *)p;
	h->xrcsrq = droce_get_be24((const uint8_t *)p + 1);
}

static inline void
droce_xrceth_encode(void *p, const struct droce_xrceth *h)
{
	*(uint8_t *)p = h->resv;
	droce_put_be24((uint8_t *)p + 1, h->xrcsrq);
}

static inline void
droce_deth_decode(const void *p, struct droce_deth *h)
{
	h->qkey = droce_get_be32(p);
	h->resv = ((const uint8_t *)p)[4];
	h->srcqp = droce_get_be24((const uint8_t *)p + 5);
}

static inline void
droce_deth_encode(void *p, const struct droce_deth *h)
{
	droce_put_be32(p, h->qkey);
	((uint8_t *)p)[4] = h->resv;
	droce_put_be24((uint8_t *)p + 5, h->srcqp);
}

static inline void
droce_feth_decode(const void *p, struct droce_feth *h)
{
	uint32_t v = droce_get_be32(p);

	h->resv = v >> 6;
	h->sel = (v >> 4) & 3;
	h->plt = v & 0xf;
}

static inline void
droce_feth_encode(void *p, const struct droce_feth *h)
{
	droce_put_be32(p, h->resv << 6 | (uint32_t)(h->sel & 3) << 4 |
		       (h->plt & 0xf));
}

static inline void
droce_reth_decode(const void *p, struct droce_reth *h)
{
	h->va = droce_get_be64(p);
	h->rkey = droce_get_be32((const uint8_t *)p + 8);
	h->dlen = droce_get_be32((const uint8_t *)p + 12);
}

static inline void
droce_reth_encode(void *p, const struct droce_reth *h)
{
	droce_put_be64(p, h->va);
	droce_put_be32((uint8_t *)p + 8, h->rkey);
	droce_put_be32((uint8_t *)p + 12, h->dlen);
}

static inline void
droce_aeth_decode(const void *p, struct droce_aeth *h)
{
	h->syndrome = *(const uint8_t *)p;
	h->msn = droce_get_be24((const uint8_t *)p + 1);
}

static inline void
droce_aeth_encode(void *p, const struct droce_aeth *h)
{
	*(uint8_t *)p = h->syndrome;
	droce_put_be24((uint8_t *)p + 1, h->msn);
}

static inline void
droce_atomiceth_decode(const void *p, struct droce_atomiceth *h)
{
	h->va = droce_get_be64(p);
	h->rkey = droce_get_be32((const uint8_t *)p + 8);
	h->swap_add = droce_get_be64((const uint8_t *)p + 12);
	h->compare = droce_get_be64((const uint8_t *)p + 20);
}

static inline void
droce_atomiceth_encode(void *p, const struct droce_atomiceth *h)
{
	droce_put_be64(p, h->va);
	droce_put_be32((uint8_t *)p + 8, h->rkey);
	droce_put_be64((uint8_t *)p + 12, h->swap_add);
	droce_put_be64((uint8_t *)p + 20, h->compare);
}

static inline void
droce_atomicacketh_decode(const void *p, struct droce_atomicacketh *h)
{
	h->orig = droce_get_be64(p);
}

static inline void
droce_atomicacketh_encode(void *p, const struct droce_atomicacketh *h)
{
	droce_put_be64(p, h->orig);
}

/* ------------------------------------------------------------------------
 * CRC-32 and the ICRC.
 */

/**
 * CRC-32 of the Ethernet polynomial (0x04C11DB7, reflected), seeded and
 * chainable with zlib's convention: start with 0, and
 * droce_crc32(droce_crc32(0, a, la), b, lb) == CRC-32 of a followed by b.
 * Uses carry-less multiplication where the CPU has it.
 *
 * @param crc
 *   CRC of the data before @p buf (0 for none).
 * @param buf
 *   Data; any alignment.
 * @param len
 *   Bytes at @p buf.
 * @return
 *   CRC of everything so far.
 */
uint32_t droce_crc32(uint32_t crc, const void *buf, size_t len);

/**
 * droce_crc32() of the @p len bytes at @p src, copied to @p dst as they
 * are read: one pass over them where the CPU has 512-bit carry-less
 * multiplication, a copy and then a CRC elsewhere. The two areas must
 * not overlap.
 *
 * @return
 *   CRC of everything so far, as droce_crc32(crc, src, len).
 */
uint32_t droce_crc32_copy(uint32_t crc, void *dst, const void *src,
			  size_t len);

/**
 * droce_crc32() of @p buf with its first 64 bytes taken OR @p set: the
 * bytes where @p set has ones count as ones, without writing them.
 *
 * @param crc
 *   CRC of the data before @p buf (0 for none).
 * @param buf
 *   Data; any alignment.
 * @param len
 *   Bytes at @p buf (fewer than 64: @p set's first @p len apply).
 * @param set
 *   64 bytes: the bits that count as ones.
 * @return
 *   CRC of everything so far.
 */
uint32_t droce_crc32_masked64(uint32_t crc, const void *buf, size_t len,
			      const uint8_t set[64]);

/**
 * Start an ICRC: the CRC of the eight all-ones LRH bytes and of the masked
 * IP, UDP and BTH headers (IPv4 TOS, TTL and checksum; IPv6 traffic class,
 * flow label and hop limit; UDP checksum; BTH byte 4 all replaced by ones).
 * Chain the rest of the packet (extension headers, payload, pad) with
 * droce_crc32(); the result is the ICRC.
 *
 * @param l3
 *   The IPv4 or IPv6 header (its version nibble says which); IP, UDP and
 *   BTH must be contiguous: droce_icrc_hdr_len() bytes. An IPv4 header
 *   with options is covered whole.
 * @return
 *   The running CRC, to be continued at l3 + droce_icrc_hdr_len(l3).
 */
uint32_t droce_icrc_start(const void *l3);

/** @return bytes from @p l3 to the end of the BTH (IP + UDP + BTH). */
static inline uint32_t
droce_icrc_hdr_len(const void *l3)
{
	const uint8_t *ip = l3;

	if ((ip[0] >> 4) == 6)
		return 40 + 8 + DROCE_BTH_LEN;
	return (uint32_t)(ip[0] & 0xf) * 4 + 8 + DROCE_BTH_LEN;
}

/**
 * ICRC of a contiguous packet.
 *
 * @param l3
 *   Start of the IP header.
 * @param len
 *   Bytes from @p l3 up to (not including) the ICRC; at least
 *   droce_icrc_hdr_len(l3).
 * @return
 *   The ICRC, as a number (it goes on the wire least significant byte first).
 */
uint32_t droce_icrc_calc(const void *l3, uint32_t len);

/**
 * ICRC of a contiguous packet in a frame, read only: the eight bytes
 * before @p l3 (the end of the Ethernet header) must be readable. The
 * fastest way for a packet in an mbuf: no copy, one pass, the all-ones
 * LRH and variant fields put in as the bytes are read (IPv4 without
 * options and IPv6; IPv4 with options is copied).
 *
 * @param l3
 *   Start of the IP header; the 8 bytes before it must be readable.
 * @param len
 *   Bytes from @p l3 up to (not including) the ICRC.
 * @return
 *   The ICRC, as droce_icrc_calc() computes it.
 */
uint32_t droce_icrc_calc_frame(const void *l3, uint32_t len);

/**
 * ICRC of a packet held in an mbuf chain, segment by segment, no copy.
 *
 * @param m
 *   First segment.
 * @param l3_off
 *   Offset of the IP header in @p m; IP, UDP and BTH must be in the first
 *   segment.
 * @param len
 *   Bytes from the IP header up to (not including) the ICRC.
 * @return
 *   The ICRC, or 0 if the chain holds fewer bytes than asked (a valid
 *   ICRC can be 0 too: callers check lengths first).
 */
uint32_t droce_icrc_calc_mbuf(const struct rte_mbuf *m, uint32_t l3_off,
			      uint32_t len);

/** Read the ICRC stored at @p p (little-endian on the wire). */
static inline uint32_t
droce_icrc_get(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_le_to_cpu_32(v);
}

/** Store @p icrc at @p p in wire order. */
static inline void
droce_icrc_put(void *p, uint32_t icrc)
{
	icrc = rte_cpu_to_le_32(icrc);
	memcpy(p, &icrc, sizeof(icrc));
}

/**
 * @param l3
 *   Start of the IP header.
 * @param len
 *   Bytes from @p l3 to the end of the ICRC.
 * @return
 *   true if the ICRC at the end matches the packet; false also when @p len
 *   is too short for the headers the IP header announces.
 */
static inline bool
droce_icrc_verify(const void *l3, uint32_t len)
{
	if (len < droce_icrc_hdr_len(l3) + DROCE_ICRC_LEN)
		return false;
	return droce_icrc_calc(l3, len - DROCE_ICRC_LEN) ==
		droce_icrc_get((const uint8_t *)l3 + len - DROCE_ICRC_LEN);
}

/**
 * droce_icrc_verify() of a packet in a frame, read in place by
 * droce_icrc_calc_frame(): the eight bytes before @p l3 must be readable.
 */
static inline bool
droce_icrc_verify_frame(const void *l3, uint32_t len)
{
	if (len < droce_icrc_hdr_len(l3) + DROCE_ICRC_LEN)
		return false;
	return droce_icrc_calc_frame(l3, len - DROCE_ICRC_LEN) ==
		droce_icrc_get((const uint8_t *)l3 + len - DROCE_ICRC_LEN);
}

/* ------------------------------------------------------------------------
 * Frames: parse into a decoded view, build from one.
 */

/** Why a frame was refused. droce_wire_parse() returns them negated. */
enum droce_wire_err {
	DROCE_WIRE_ENOTROCE = 1, /**< not IPv4/IPv6 UDP to port 4791 */
	DROCE_WIRE_ETRUNC,       /**< shorter than its headers say */
	DROCE_WIRE_EVERSION,     /**< IP version or BTH TVer wrong */
	DROCE_WIRE_EOPCODE,      /**< opcode not defined for RoCEv2 */
	DROCE_WIRE_ELENGTH,      /**< lengths inconsistent */
	DROCE_WIRE_EIPCSUM,      /**< IPv4 header checksum wrong */
	DROCE_WIRE_EICRC,        /**< ICRC wrong */
};

/** @return a short description of a droce_wire_parse() result. */
const char *droce_wire_strerror(int err);

/** droce_wire_parse() flags. */
#define DROCE_WIRE_NO_ICRC   (1u << 0) /**< skip the ICRC check */
#define DROCE_WIRE_NO_IPCSUM (1u << 1) /**< skip the IPv4 checksum check */

/** A RoCEv2 frame, decoded; also the input of droce_wire_build(). */
struct droce_wire_pkt {
	/* Ethernet */
	struct rte_ether_addr dst_mac;
	struct rte_ether_addr src_mac;
	bool has_vlan;
	uint16_t vlan_tci;          /**< 802.1Q tag control, if has_vlan */
	/* IP */
	uint8_t ip_version;         /**< 4 or 6 */
	uint8_t tos;                /**< IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;                /**< IPv4 TTL / IPv6 hop limit */
	uint16_t ip_id;             /**< IPv4 identification */
	uint16_t ip_frag;           /**< IPv4 flags and fragment offset */
	uint16_t ip_cksum;          /**< IPv4 header checksum as found */
	uint32_t flow_label;        /**< IPv6 flow label */
	uint8_t src_gid[16];        /**< source address as a GID */
	uint8_t dst_gid[16];        /**< (IPv4: ::ffff:a.b.c.d) */
	/* UDP */
	uint16_t udp_sport;
	uint16_t udp_dport;
	uint16_t udp_cksum;         /**< as found; the builder writes it as
				     *   is over IPv4 and computes it over
				     *   IPv6, where 0 is not allowed */
	/* InfiniBand transport */
	const struct droce_opcode_info *op; /**< table entry of bth.opcode */
	struct droce_bth bth;
	struct droce_xrceth xrceth;
	struct droce_deth deth;
	struct droce_feth feth;
	struct droce_reth reth;
	struct droce_aeth aeth;
	struct droce_atomiceth atomiceth;
	struct droce_atomicacketh atomicacketh;
	uint32_t immdt;             /**< immediate data, as a number */
	uint32_t ieth_rkey;         /**< rkey to invalidate */
	uint8_t cnp_resv[DROCE_CNP_RESV_LEN];
	const uint8_t *payload;     /**< into the frame; builder's source */
	uint32_t payload_len;       /**< without the pad */
	uint32_t icrc;              /**< as found in the frame */
	bool icrc_ok;               /**< it matched (false if not checked) */
	/* Where things are in the frame */
	uint16_t l3_off;            /**< IP header */
	uint16_t l4_off;            /**< UDP header */
	uint16_t bth_off;           /**< BTH */
	uint32_t frame_len;         /**< up to the ICRC's end; Ethernet
				     *   padding after it is not counted */
};

/**
 * Decode a RoCEv2 frame.
 *
 * Checks, in order: Ethernet type (with one optional 802.1Q tag), IP
 * version, protocol UDP, no IP fragment, UDP port 4791, lengths (IP, UDP,
 * headers of the opcode, pad, ICRC) against each other and the frame,
 * BTH TVer 0, opcode defined, payload plus pad in whole 4-byte words and
 * none where the opcode has no payload, IPv4 header checksum, then ICRC.
 * Bytes after the IP packet (Ethernet padding) are ignored. Never reads
 * outside [frame, frame + len).
 *
 * @param frame
 *   Ethernet frame, without FCS.
 * @param len
 *   Its length.
 * @param flags
 *   DROCE_WIRE_NO_ICRC, DROCE_WIRE_NO_IPCSUM, or 0.
 * @param pkt
 *   Filled in. On -DROCE_WIRE_EICRC and -DROCE_WIRE_EIPCSUM it is complete
 *   (only the check failed); on other errors, partly.
 * @return
 *   0, or the negated enum droce_wire_err of the first check that failed.
 */
int droce_wire_parse(const void *frame, uint32_t len, unsigned int flags,
		     struct droce_wire_pkt *pkt);

/** Where the parts of a RoCEv2 frame are: the receive path's view. */
struct droce_wire_meta {
	const struct droce_opcode_info *op; /**< NULL until the BTH is read */
	uint16_t l3_off;            /**< IP header */
	uint16_t l4_off;            /**< UDP header */
	uint16_t bth_off;           /**< BTH */
	uint8_t ip_version;         /**< 4 or 6 */
	uint8_t padcnt;
	uint32_t payload_len;       /**< without the pad */
	uint32_t frame_len;         /**< up to the ICRC's end */
	/** the payload's first byte; NULL if the payload does not lie
	 * within the bytes parsed (a frame in segments: see
	 * droce_wire_parse_meta_seg()) */
	const uint8_t *payload;
	/** the receive path's: the ICRC is still to be checked, by whoever
	 * takes the payload (as it copies it) or before anything else */
	bool icrc_unchecked;
};

/**
 * Check a frame as droce_wire_parse() does, recording only where its
 * parts are: the per-packet check of the engine's receive path, which
 * then decodes just the headers it needs.
 *
 * @return 0 or the negated enum droce_wire_err; on -DROCE_WIRE_EICRC and
 * -DROCE_WIRE_EIPCSUM @p meta is complete.
 */
int droce_wire_parse_meta(const void *frame, uint32_t len, unsigned int flags,
			  struct droce_wire_meta *meta);

/**
 * droce_wire_parse_meta() of a frame of @p len bytes of which only the
 * first @p seg_len are at @p frame (a frame in segments): its headers,
 * BTH's extension headers included, must lie in them, and the ICRC is
 * not checked (DROCE_WIRE_NO_ICRC is implied when @p seg_len < @p len).
 *
 * @return as droce_wire_parse_meta(), and -DROCE_WIRE_ETRUNC if the
 * headers go beyond @p seg_len.
 */
int droce_wire_parse_meta_seg(const void *frame, uint32_t seg_len,
			      uint32_t len, unsigned int flags,
			      struct droce_wire_meta *meta);

/**
 * @return the frame length droce_wire_build() will produce for @p pkt, or 0
 * if its opcode is not defined.
 */
uint32_t droce_wire_frame_len(const struct droce_wire_pkt *pkt);

/**
 * Serialise a decoded view into a frame.
 *
 * Lengths, the BTH pad count, the IPv4 header checksum, the IPv6 UDP
 * checksum and the ICRC are computed; every other field is taken from @p pkt (the pad count is
 * derived from payload_len; pad bytes are zero). Parsing a frame and
 * building it back reproduces it bit for bit.
 *
 * @param buf
 *   Where to write.
 * @param cap
 *   Bytes available at @p buf.
 * @param pkt
 *   What to write; pkt->op may be NULL (bth.opcode is looked up).
 * @return
 *   Frame length, or -EINVAL (opcode undefined, IP version not 4 or 6,
 *   payload where the opcode has none, or too long for UDP) or -ENOSPC.
 */
int droce_wire_build(void *buf, uint32_t cap, const struct droce_wire_pkt *pkt);

/** Write the IPv4-mapped GID of IPv4 address @p addr (network order). */
static inline void
droce_gid_from_ipv4(uint8_t gid[16], rte_be32_t addr)
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &addr, 4);
}

/** @return true if @p gid is an IPv4-mapped address (::ffff:a.b.c.d). */
static inline bool
droce_gid_is_ipv4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

/**
 * UDP source port for a flow: a hash of the two QPNs folded into the
 * dynamic port range 0xc000..0xffff, as RoCEv2 senders spread flows over
 * ECMP paths.
 */
static inline uint16_t
droce_udp_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	uint32_t h = (src_qpn * 0x9e3779b1u) ^ (dst_qpn * 0x85ebca6bu);

	h ^= h >> 16;
	h ^= h >> 8;
	return (uint16_t)(0xc000 | (h & 0x3fff));
}

#ifdef __cplusplus
}
#endif

#endif /* DROCE_WIRE_H */
