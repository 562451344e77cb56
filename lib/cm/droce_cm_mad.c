/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * CM MADs. Each attribute is declared once, as the list of its fields:
 * where a field lies in the 232 bytes of attribute data (the big-endian
 * word it shares with its neighbours, its shift and width in bits) and
 * which member of the attribute's structure holds it. One loop decodes a
 * list, another encodes it; reserved bits are the bits no field claims,
 * so the encoder leaves them zero.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_common.h>

#include "droce_cm.h"
#include "droce_cm_mad.h"

/* The cma version rdma_cm puts in its private data header. */
#define CMA_VERSION 0

/* One field of an attribute. */
struct cm_field {
	uint16_t member;        /* offset of the member in its structure */
	uint8_t size;           /* bytes of the member */
	uint8_t off;            /* byte offset in the attribute data */
	uint8_t word;           /* bytes of the big-endian word that holds
				 * the field; 0: a byte array of size bytes */
	uint8_t shift;          /* of the field's lowest bit in the word */
	uint8_t bits;
};

/* An attribute: its name and its fields, in wire order. */
struct cm_attr {
	const char *name;
	const struct cm_field *fields;
	unsigned int nb_fields;
};

/* A number of `bits` bits, `shift` bits up a `word`-byte word at `off`. */
#define NUM(type, m, o, w, s, b) { \
	.member = offsetof(type, m), \
	.size = RTE_SIZEOF_FIELD(type, m), \
	.off = (o), .word = (w), .shift = (s), .bits = (b), \
}

/* Bytes copied as they are, as many as the member holds. */
#define BYTES(type, m, o) { \
	.member = offsetof(type, m), \
	.size = RTE_SIZEOF_FIELD(type, m), \
	.off = (o), \
}

/* The 44 bytes of a REQ's path @p p at @p o. */
#define PATH(p, o) \
	NUM(struct droce_cm_req, p.local_lid, (o), 2, 0, 16), \
	NUM(struct droce_cm_req, p.remote_lid, (o) + 2, 2, 0, 16), \
	BYTES(struct droce_cm_req, p.local_gid, (o) + 4), \
	BYTES(struct droce_cm_req, p.remote_gid, (o) + 20), \
	NUM(struct droce_cm_req, p.flow_label, (o) + 36, 4, 12, 20), \
	NUM(struct droce_cm_req, p.packet_rate, (o) + 36, 4, 0, 6), \
	NUM(struct droce_cm_req, p.traffic_class, (o) + 40, 1, 0, 8), \
	NUM(struct droce_cm_req, p.hop_limit, (o) + 41, 1, 0, 8), \
	NUM(struct droce_cm_req, p.sl, (o) + 42, 1, 4, 4), \
	NUM(struct droce_cm_req, p.subnet_local, (o) + 42, 1, 3, 1), \
	NUM(struct droce_cm_req, p.local_ack_timeout, (o) + 43, 1, 3, 5)

#define PATH_LEN 44

/* Every attribute ends with its private data (or LAP's rest). */
#define ENDS_AT_DATA_END(o, len) \
	_Static_assert((o) + (len) == DROCE_CM_DATA_LEN, \
		       "attribute layout does not fill the MAD")

#define T struct droce_cm_req
static const struct cm_field req_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, service_id, 8, 8, 0, 64),
	NUM(T, local_ca_guid, 16, 8, 0, 64),
	NUM(T, local_qkey, 28, 4, 0, 32),
	NUM(T, local_qpn, 32, 4, 8, 24),
	NUM(T, responder_resources, 32, 4, 0, 8),
	NUM(T, local_eecn, 36, 4, 8, 24),
	NUM(T, initiator_depth, 36, 4, 0, 8),
	NUM(T, remote_eecn, 40, 4, 8, 24),
	NUM(T, remote_cm_response_timeout, 40, 4, 3, 5),
	NUM(T, transport_type, 40, 4, 1, 2),
	NUM(T, flow_control, 40, 4, 0, 1),
	NUM(T, starting_psn, 44, 4, 8, 24),
	NUM(T, local_cm_response_timeout, 44, 4, 3, 5),
	NUM(T, retry_count, 44, 4, 0, 3),
	NUM(T, pkey, 48, 2, 0, 16),
	NUM(T, path_mtu, 50, 1, 4, 4),
	NUM(T, rdc_exists, 50, 1, 3, 1),
	NUM(T, rnr_retry_count, 50, 1, 0, 3),
	NUM(T, max_cm_retries, 51, 1, 4, 4),
	NUM(T, srq, 51, 1, 3, 1),
	NUM(T, ext_transport_type, 51, 1, 0, 3),
	PATH(primary, 52),
	PATH(alternate, 52 + PATH_LEN),
	BYTES(T, private_data, 52 + 2 * PATH_LEN),
};
ENDS_AT_DATA_END(52 + 2 * PATH_LEN, DROCE_CM_REQ_PRIV_LEN);
#undef T

#define T struct droce_cm_mra
static const struct cm_field mra_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	NUM(T, msg_mraed, 8, 1, 6, 2),
	NUM(T, service_timeout, 9, 1, 3, 5),
	BYTES(T, private_data, 10),
};
ENDS_AT_DATA_END(10, DROCE_CM_MRA_PRIV_LEN);
#undef T

#define T struct droce_cm_rej
static const struct cm_field rej_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	NUM(T, msg_rejected, 8, 1, 6, 2),
	NUM(T, ari_len, 9, 1, 1, 7),
	NUM(T, reason, 10, 2, 0, 16),
	BYTES(T, ari, 12),
	BYTES(T, private_data, 12 + DROCE_CM_REJ_ARI_LEN),
};
ENDS_AT_DATA_END(12 + DROCE_CM_REJ_ARI_LEN, DROCE_CM_REJ_PRIV_LEN);
#undef T

#define T struct droce_cm_rep
static const struct cm_field rep_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	NUM(T, local_qkey, 8, 4, 0, 32),
	NUM(T, local_qpn, 12, 4, 8, 24),
	NUM(T, local_eecn, 16, 4, 8, 24),
	NUM(T, starting_psn, 20, 4, 8, 24),
	NUM(T, responder_resources, 24, 1, 0, 8),
	NUM(T, initiator_depth, 25, 1, 0, 8),
	NUM(T, target_ack_delay, 26, 1, 3, 5),
	NUM(T, failover_accepted, 26, 1, 1, 2),
	NUM(T, flow_control, 26, 1, 0, 1),
	NUM(T, rnr_retry_count, 27, 1, 5, 3),
	NUM(T, srq, 27, 1, 4, 1),
	NUM(T, local_ca_guid, 28, 8, 0, 64),
	BYTES(T, private_data, 36),
};
ENDS_AT_DATA_END(36, DROCE_CM_REP_PRIV_LEN);
#undef T

#define T struct droce_cm_rtu
static const struct cm_field rtu_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	BYTES(T, private_data, 8),
};
ENDS_AT_DATA_END(8, DROCE_CM_RTU_PRIV_LEN);
#undef T

#define T struct droce_cm_dreq
static const struct cm_field dreq_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	NUM(T, remote_qpn, 8, 4, 8, 24),
	BYTES(T, private_data, 12),
};
ENDS_AT_DATA_END(12, DROCE_CM_DREQ_PRIV_LEN);
#undef T

#define T struct droce_cm_drep
static const struct cm_field drep_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	BYTES(T, private_data, 8),
};
ENDS_AT_DATA_END(8, DROCE_CM_DREP_PRIV_LEN);
#undef T

#define T struct droce_cm_sidr_req
static const struct cm_field sidr_req_fields[] = {
	NUM(T, request_id, 0, 4, 0, 32),
	NUM(T, pkey, 4, 2, 0, 16),
	NUM(T, service_id, 8, 8, 0, 64),
	BYTES(T, private_data, 16),
};
ENDS_AT_DATA_END(16, DROCE_CM_SIDR_REQ_PRIV_LEN);
#undef T

#define T struct droce_cm_sidr_rep
static const struct cm_field sidr_rep_fields[] = {
	NUM(T, request_id, 0, 4, 0, 32),
	NUM(T, status, 4, 1, 0, 8),
	NUM(T, info_len, 5, 1, 0, 8),
	NUM(T, qpn, 8, 4, 8, 24),
	NUM(T, service_id, 12, 8, 0, 64),
	NUM(T, qkey, 20, 4, 0, 32),
	BYTES(T, info, 24),
	BYTES(T, private_data, 24 + DROCE_CM_SIDR_REP_INFO_LEN),
};
ENDS_AT_DATA_END(24 + DROCE_CM_SIDR_REP_INFO_LEN, DROCE_CM_SIDR_REP_PRIV_LEN);
#undef T

#define T struct droce_cm_lap
static const struct cm_field lap_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	NUM(T, remote_qpn, 12, 4, 8, 24),
	NUM(T, remote_cm_response_timeout, 12, 4, 3, 5),
	BYTES(T, rest, 16),
};
ENDS_AT_DATA_END(16, RTE_SIZEOF_FIELD(T, rest));
#undef T

#define T struct droce_cm_apr
static const struct cm_field apr_fields[] = {
	NUM(T, local_comm_id, 0, 4, 0, 32),
	NUM(T, remote_comm_id, 4, 4, 0, 32),
	NUM(T, info_len, 8, 1, 0, 8),
	NUM(T, status, 9, 1, 0, 8),
	BYTES(T, info, 12),
	BYTES(T, private_data, 12 + DROCE_CM_APR_INFO_LEN),
};
ENDS_AT_DATA_END(12 + DROCE_CM_APR_INFO_LEN, DROCE_CM_APR_PRIV_LEN);
#undef T

/* ClassPortInfo is kept whole, as it came. */
static const struct cm_field raw_fields[] = {
	{ .member = 0, .size = DROCE_CM_DATA_LEN, .off = 0 },
};

#define ATTR(n, f) { .name = (n), .fields = (f), .nb_fields = RTE_DIM(f) }

static const struct cm_attr class_port_info = ATTR("CLASS_PORT_INFO",
						   raw_fields);

/* The connection attributes, indexed by attribute ID - REQ. */
#define IDX(a) [DROCE_CM_ATTR_##a - DROCE_CM_ATTR_REQ]
static const struct cm_attr cm_attrs[] = {
	IDX(REQ) = ATTR("REQ", req_fields),
	IDX(MRA) = ATTR("MRA", mra_fields),
	IDX(REJ) = ATTR("REJ", rej_fields),
	IDX(REP) = ATTR("REP", rep_fields),
	IDX(RTU) = ATTR("RTU", rtu_fields),
	IDX(DREQ) = ATTR("DREQ", dreq_fields),
	IDX(DREP) = ATTR("DREP", drep_fields),
	IDX(SIDR_REQ) = ATTR("SIDR_REQ", sidr_req_fields),
	IDX(SIDR_REP) = ATTR("SIDR_REP", sidr_rep_fields),
	IDX(LAP) = ATTR("LAP", lap_fields),
	IDX(APR) = ATTR("APR", apr_fields),
};
_Static_assert(RTE_DIM(cm_attrs) ==
	       DROCE_CM_ATTR_APR - DROCE_CM_ATTR_REQ + 1,
	       "one entry per connection attribute");

static const struct cm_attr *
attr_lookup(uint16_t attr_id)
{
	if (attr_id == DROCE_CM_ATTR_CLASS_PORT_INFO)
		return &class_port_info;
	if (attr_id >= DROCE_CM_ATTR_REQ && attr_id <= DROCE_CM_ATTR_APR)
		return &cm_attrs[attr_id - DROCE_CM_ATTR_REQ];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Big-endian words of 1 to 8 bytes, and members of 1, 2, 4 or 8 bytes.
 */

static uint64_t
get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void
put_be(uint8_t *p, unsigned int n, uint64_t v)
{
	while (n-- > 0) {
		p[n] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t
member_load(const uint8_t *p, unsigned int size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static void
member_store(uint8_t *p, unsigned int size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static uint64_t
bit_mask(unsigned int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* Decode the fields of @p a from @p data into the structure at @p s. */
static void
attr_decode(const struct cm_attr *a, const uint8_t *data, uint8_t *s)
{
	const struct cm_field *f;
	uint64_t v;

	for (f = a->fields; f < a->fields + a->nb_fields; f++) {
		if (f->word == 0) {
			memcpy(s + f->member, data + f->off, f->size);
			continue;
		}
		v = get_be(data + f->off, f->word) >> f->shift;
		member_store(s + f->member, f->size, v & bit_mask(f->bits));
	}
}

/* Encode the fields of @p a from the structure at @p s into @p data,
 * which is zero on entry. */
static void
attr_encode(const struct cm_attr *a, const uint8_t *s, uint8_t *data)
{
	const struct cm_field *f;
	uint64_t v, w;

	for (f = a->fields; f < a->fields + a->nb_fields; f++) {
		if (f->word == 0) {
			memcpy(data + f->off, s + f->member, f->size);
			continue;
		}
		v = member_load(s + f->member, f->size) & bit_mask(f->bits);
		w = get_be(data + f->off, f->word) | v << f->shift;
		put_be(data + f->off, f->word, w);
	}
}

/* ------------------------------------------------------------------------
 * The MAD.
 */

static void
hdr_decode(const uint8_t *b, struct droce_mad_hdr *h)
{
	h->base_version = b[0];
	h->mgmt_class = b[1];
	h->class_version = b[2];
	h->method = b[3];
	h->status = (uint16_t)get_be(b + 4, 2);
	h->class_specific = (uint16_t)get_be(b + 6, 2);
	h->tid = get_be(b + 8, 8);
	h->attr_id = (uint16_t)get_be(b + 16, 2);
	/* bytes 18-19 reserved */
	h->attr_mod = (uint32_t)get_be(b + 20, 4);
}

static void
hdr_encode(const struct droce_mad_hdr *h, uint8_t *b)
{
	b[0] = h->base_version;
	b[1] = h->mgmt_class;
	b[2] = h->class_version;
	b[3] = h->method;
	put_be(b + 4, 2, h->status);
	put_be(b + 6, 2, h->class_specific);
	put_be(b + 8, 8, h->tid);
	put_be(b + 16, 2, h->attr_id);
	put_be(b + 18, 2, 0);
	put_be(b + 20, 4, h->attr_mod);
}

/* SEND carries every CM attribute; ClassPortInfo is also read and
 * written (GET, SET and their response). */
static bool
method_ok(uint8_t method, uint16_t attr_id)
{
	if (method == DROCE_MAD_METHOD_SEND)
		return true;
	return attr_id == DROCE_CM_ATTR_CLASS_PORT_INFO &&
		(method == DROCE_MAD_METHOD_GET ||
		 method == DROCE_MAD_METHOD_SET ||
		 method == DROCE_MAD_METHOD_GET_RESP);
}

enum droce_cm_mad_err
droce_cm_mad_parse(const uint8_t *buf, size_t len, struct droce_cm_msg *msg)
{
	struct droce_mad_hdr *h = &msg->hdr;
	const struct cm_attr *a;

	if (len < DROCE_MAD_HDR_LEN)
		return DROCE_CM_MAD_TRUNCATED;
	hdr_decode(buf, h);
	if (len < DROCE_MAD_LEN)
		return DROCE_CM_MAD_TRUNCATED;
	if (h->base_version != DROCE_MAD_BASE_VERSION)
		return DROCE_CM_MAD_BAD_BASE_VERSION;
	if (h->mgmt_class != DROCE_MAD_CLASS_CM)
		return DROCE_CM_MAD_BAD_CLASS;
	if (h->class_version != DROCE_MAD_CM_VERSION)
		return DROCE_CM_MAD_BAD_CLASS_VERSION;
	if (!method_ok(h->method, h->attr_id))
		return DROCE_CM_MAD_BAD_METHOD;
	a = attr_lookup(h->attr_id);
	if (a == NULL)
		return DROCE_CM_MAD_BAD_ATTR;
	/* every attribute structure starts at msg->raw; zero its padding
	 * too, so that two parses of one MAD compare equal */
	memset(msg->raw, 0, sizeof(*msg) - offsetof(struct droce_cm_msg, raw));
	attr_decode(a, buf + DROCE_MAD_HDR_LEN, msg->raw);
	return DROCE_CM_MAD_OK;
}

size_t
droce_cm_mad_build(const struct droce_cm_msg *msg, uint8_t buf[DROCE_MAD_LEN])
{
	const struct cm_attr *a = attr_lookup(msg->hdr.attr_id);

	if (a == NULL)
		return 0;
	hdr_encode(&msg->hdr, buf);
	memset(buf + DROCE_MAD_HDR_LEN, 0, DROCE_CM_DATA_LEN);
	attr_encode(a, msg->raw, buf + DROCE_MAD_HDR_LEN);
	return DROCE_MAD_LEN;
}

void
droce_cm_mad_hdr_init(struct droce_mad_hdr *hdr, uint16_t attr_id,
		      uint64_t tid)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->base_version = DROCE_MAD_BASE_VERSION;
	hdr->mgmt_class = DROCE_MAD_CLASS_CM;
	hdr->class_version = DROCE_MAD_CM_VERSION;
	hdr->method = DROCE_MAD_METHOD_SEND;
	hdr->tid = tid;
	hdr->attr_id = attr_id;
}

/* ------------------------------------------------------------------------
 * Names.
 */

const char *
droce_cm_attr_name(uint16_t attr_id)
{
	const struct cm_attr *a = attr_lookup(attr_id);

	return a != NULL ? a->name : "?";
}

const char *
droce_cm_rej_reason_name(uint16_t reason)
{
	static const char *const names[] = {
		[DROCE_CM_REJ_NO_QP] = "NO_QP",
		[DROCE_CM_REJ_NO_EEC] = "NO_EEC",
		[DROCE_CM_REJ_NO_RESOURCES] = "NO_RESOURCES",
		[DROCE_CM_REJ_TIMEOUT] = "TIMEOUT",
		[DROCE_CM_REJ_UNSUPPORTED] = "UNSUPPORTED",
		[DROCE_CM_REJ_INVALID_COMM_ID] = "INVALID_COMM_ID",
		[DROCE_CM_REJ_INVALID_COMM_INSTANCE] = "INVALID_COMM_INSTANCE",
		[DROCE_CM_REJ_INVALID_SERVICE_ID] = "INVALID_SERVICE_ID",
		[DROCE_CM_REJ_INVALID_TRANSPORT_TYPE] =
			"INVALID_TRANSPORT_TYPE",
		[DROCE_CM_REJ_STALE_CONN] = "STALE_CONN",
		[DROCE_CM_REJ_RDC_NOT_EXIST] = "RDC_NOT_EXIST",
		[DROCE_CM_REJ_INVALID_GID] = "INVALID_GID",
		[DROCE_CM_REJ_INVALID_LID] = "INVALID_LID",
		[DROCE_CM_REJ_INVALID_SL] = "INVALID_SL",
		[DROCE_CM_REJ_INVALID_TRAFFIC_CLASS] = "INVALID_TRAFFIC_CLASS",
		[DROCE_CM_REJ_INVALID_HOP_LIMIT] = "INVALID_HOP_LIMIT",
		[DROCE_CM_REJ_INVALID_PACKET_RATE] = "INVALID_PACKET_RATE",
		[DROCE_CM_REJ_INVALID_ALT_GID] = "INVALID_ALT_GID",
		[DROCE_CM_REJ_INVALID_ALT_LID] = "INVALID_ALT_LID",
		[DROCE_CM_REJ_INVALID_ALT_SL] = "INVALID_ALT_SL",
		[DROCE_CM_REJ_INVALID_ALT_TRAFFIC_CLASS] =
			"INVALID_ALT_TRAFFIC_CLASS",
		[DROCE_CM_REJ_INVALID_ALT_HOP_LIMIT] = "INVALID_ALT_HOP_LIMIT",
		[DROCE_CM_REJ_INVALID_ALT_PACKET_RATE] =
			"INVALID_ALT_PACKET_RATE",
		[DROCE_CM_REJ_PORT_CM_REDIRECT] = "PORT_CM_REDIRECT",
		[DROCE_CM_REJ_PORT_REDIRECT] = "PORT_REDIRECT",
		[DROCE_CM_REJ_INVALID_MTU] = "INVALID_MTU",
		[DROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES] =
			"INSUFFICIENT_RESP_RESOURCES",
		[DROCE_CM_REJ_CONSUMER_DEFINED] = "CONSUMER_DEFINED",
		[DROCE_CM_REJ_INVALID_RNR_RETRY] = "INVALID_RNR_RETRY",
		[DROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID] =
			"DUPLICATE_LOCAL_COMM_ID",
		[DROCE_CM_REJ_INVALID_CLASS_VERSION] = "INVALID_CLASS_VERSION",
		[DROCE_CM_REJ_INVALID_FLOW_LABEL] = "INVALID_FLOW_LABEL",
		[DROCE_CM_REJ_INVALID_ALT_FLOW_LABEL] =
			"INVALID_ALT_FLOW_LABEL",
	};

	if (reason < RTE_DIM(names) && names[reason] != NULL)
		return names[reason];
	return "?";
}

const char *
droce_cm_mad_err_name(enum droce_cm_mad_err err)
{
	static const char *const names[] = {
		[DROCE_CM_MAD_OK] = "OK",
		[DROCE_CM_MAD_TRUNCATED] = "TRUNCATED",
		[DROCE_CM_MAD_BAD_BASE_VERSION] = "BAD_BASE_VERSION",
		[DROCE_CM_MAD_BAD_CLASS] = "BAD_CLASS",
		[DROCE_CM_MAD_BAD_CLASS_VERSION] = "BAD_CLASS_VERSION",
		[DROCE_CM_MAD_BAD_METHOD] = "BAD_METHOD",
		[DROCE_CM_MAD_BAD_ATTR] = "BAD_ATTR",
	};

	if ((unsigned int)err < RTE_DIM(names))
		return names[err];
	return "?";
}

/* ------------------------------------------------------------------------
 * rdma_cm's IP addressing.
 */

uint64_t
droce_cma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

bool
droce_cma_service_split(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	static const uint16_t spaces[] = {
		DROCE_CMA_PS_TCP, DROCE_CMA_PS_UDP,
		DROCE_CMA_PS_IPOIB, DROCE_CMA_PS_IB,
	};
	unsigned int i;

	if (sid >> 32 != 0)
		return false;
	for (i = 0; i < RTE_DIM(spaces); i++) {
		if ((uint16_t)(sid >> 16) == spaces[i]) {
			*ps = spaces[i];
			*port = (uint16_t)sid;
			return true;
		}
	}
	return false;
}

/* Offsets in the header. */
#define CMA_OFF_VERSION 0
#define CMA_OFF_IP_VERSION 1
#define CMA_OFF_SRC_PORT 2
#define CMA_OFF_SRC_ADDR 4
#define CMA_OFF_DST_ADDR 20
#define IPV4_PAD 12

static void
cma_addr_decode(const uint8_t *p, uint8_t ip_version, uint8_t addr[16])
{
	if (ip_version == 4) {
		/* ::ffff:a.b.c.d */
		memset(addr, 0, 10);
		addr[10] = 0xff;
		addr[11] = 0xff;
		memcpy(addr + IPV4_PAD, p + IPV4_PAD, 4);
	} else {
		memcpy(addr, p, 16);
	}
}

static void
cma_addr_encode(uint8_t *p, uint8_t ip_version, const uint8_t addr[16])
{
	if (ip_version == 4) {
		memset(p, 0, IPV4_PAD);
		memcpy(p + IPV4_PAD, addr + IPV4_PAD, 4);
	} else {
		memcpy(p, addr, 16);
	}
}

int
droce_cma_hdr_parse(const uint8_t *priv, size_t len,
		    struct droce_cma_hdr *hdr)
{
	if (len < DROCE_CMA_HDR_LEN)
		return -EINVAL;
	hdr->cma_version = priv[CMA_OFF_VERSION];
	hdr->ip_version = priv[CMA_OFF_IP_VERSION] >> 4;
	hdr->src_port = (uint16_t)get_be(priv + CMA_OFF_SRC_PORT, 2);
	if (hdr->cma_version != CMA_VERSION ||
	    (hdr->ip_version != 4 && hdr->ip_version != 6))
		return -EPROTO;
	cma_addr_decode(priv + CMA_OFF_SRC_ADDR, hdr->ip_version,
			hdr->src_addr);
	cma_addr_decode(priv + CMA_OFF_DST_ADDR, hdr->ip_version,
			hdr->dst_addr);
	return 0;
}

void
droce_cma_hdr_build(const struct droce_cma_hdr *hdr,
		    uint8_t priv[DROCE_CMA_HDR_LEN])
{
	priv[CMA_OFF_VERSION] = hdr->cma_version;
	priv[CMA_OFF_IP_VERSION] = (uint8_t)(hdr->ip_version << 4);
	put_be(priv + CMA_OFF_SRC_PORT, 2, hdr->src_port);
	cma_addr_encode(priv + CMA_OFF_SRC_ADDR, hdr->ip_version,
			hdr->src_addr);
	cma_addr_encode(priv + CMA_OFF_DST_ADDR, hdr->ip_version,
			hdr->dst_addr);
}
