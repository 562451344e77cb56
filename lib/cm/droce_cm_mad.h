/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_CM_MAD_H
#define DROCE_CM_MAD_H

/**
 * @file
 * Communication management MADs (InfiniBand vol. 1 ch. 12 and its RoCEv2
 * annex) and the IP addressing rdma_cm puts on top of them.
 *
 *  - The 256-byte MAD of the CM class: its 24-byte common header and the
 *    232 bytes of each attribute (REQ, MRA, REJ, REP, RTU, DREQ, DREP,
 *    SIDR_REQ, SIDR_REP, LAP, APR), converted between network order and
 *    host-order structures by one parse and one build function.
 *  - rdma_cm's service IDs (the RDMA IP CM service space: port space and
 *    port) and the 36-byte IP header it puts first in a REQ's or
 *    SIDR_REQ's private data.
 *
 * Like lib/wire, it holds no state, takes no locks and allocates nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Size of every MAD. */
#define DROCE_MAD_LEN 256
/** Size of the common MAD header. */
#define DROCE_MAD_HDR_LEN 24
/** Size of the attribute data that follows it. */
#define DROCE_CM_DATA_LEN (DROCE_MAD_LEN - DROCE_MAD_HDR_LEN)

/** The Q_Key of the GSI (QP1). */
#define DROCE_GSI_QKEY 0x80010000u
/** The QPN of the GSI (spelt as droce_engine.h spells it, which a
 * file may include beside this one). */
#define DROCE_GSI_QPN 1u

#define DROCE_MAD_BASE_VERSION 1
/** Management class of communication management. */
#define DROCE_MAD_CLASS_CM 0x07
/** Class version of the CM class. */
#define DROCE_MAD_CM_VERSION 2

/** MAD methods the CM uses. */
#define DROCE_MAD_METHOD_GET 0x01
#define DROCE_MAD_METHOD_SET 0x02
#define DROCE_MAD_METHOD_SEND 0x03
#define DROCE_MAD_METHOD_GET_RESP 0x81

/** MAD status: class or version not supported. */
#define DROCE_MAD_STATUS_BAD_VERSION 0x0004
/** MAD status: method not supported. */
#define DROCE_MAD_STATUS_UNSUP_METHOD 0x0008
/** MAD status: method/attribute combination not supported. */
#define DROCE_MAD_STATUS_UNSUP_ATTR 0x000c

/** CM attribute IDs. */
enum droce_cm_attr {
	DROCE_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	DROCE_CM_ATTR_REQ = 0x0010,
	DROCE_CM_ATTR_MRA = 0x0011,
	DROCE_CM_ATTR_REJ = 0x0012,
	DROCE_CM_ATTR_REP = 0x0013,
	DROCE_CM_ATTR_RTU = 0x0014,
	DROCE_CM_ATTR_DREQ = 0x0015,
	DROCE_CM_ATTR_DREP = 0x0016,
	DROCE_CM_ATTR_SIDR_REQ = 0x0017,
	DROCE_CM_ATTR_SIDR_REP = 0x0018,
	DROCE_CM_ATTR_LAP = 0x0019,
	DROCE_CM_ATTR_APR = 0x001a,
};

/** Private data each attribute carries. */
#define DROCE_CM_REQ_PRIV_LEN 92
#define DROCE_CM_MRA_PRIV_LEN 222
#define DROCE_CM_REJ_PRIV_LEN 148
#define DROCE_CM_REJ_ARI_LEN 72
#define DROCE_CM_REP_PRIV_LEN 196
#define DROCE_CM_RTU_PRIV_LEN 224
#define DROCE_CM_DREQ_PRIV_LEN 220
#define DROCE_CM_DREP_PRIV_LEN 224
#define DROCE_CM_SIDR_REQ_PRIV_LEN 216
#define DROCE_CM_SIDR_REP_PRIV_LEN 136
#define DROCE_CM_SIDR_REP_INFO_LEN 72
#define DROCE_CM_LAP_PRIV_LEN 168
#define DROCE_CM_APR_PRIV_LEN 148
#define DROCE_CM_APR_INFO_LEN 72

/** What an MRA or a REJ is about (its "Message MRAed/REJected" field). */
enum droce_cm_msg_ref {
	DROCE_CM_REF_REQ = 0,
	DROCE_CM_REF_REP = 1,
	DROCE_CM_REF_LAP = 2,   /**< MRA only */
	DROCE_CM_REF_OTHER = 2, /**< REJ only: none of them */
};

/** REJ reasons (table 112 of vol. 1) droce sends or takes. */
enum droce_cm_rej_reason {
	DROCE_CM_REJ_NO_QP = 1,
	DROCE_CM_REJ_NO_EEC = 2,
	DROCE_CM_REJ_NO_RESOURCES = 3,
	DROCE_CM_REJ_TIMEOUT = 4,
	DROCE_CM_REJ_UNSUPPORTED = 5,
	DROCE_CM_REJ_INVALID_COMM_ID = 6,
	DROCE_CM_REJ_INVALID_COMM_INSTANCE = 7,
	DROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	DROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	DROCE_CM_REJ_STALE_CONN = 10,
	DROCE_CM_REJ_RDC_NOT_EXIST = 11,
	DROCE_CM_REJ_INVALID_GID = 12,
	DROCE_CM_REJ_INVALID_LID = 13,
	DROCE_CM_REJ_INVALID_SL = 14,
	DROCE_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	DROCE_CM_REJ_INVALID_HOP_LIMIT = 16,
	DROCE_CM_REJ_INVALID_PACKET_RATE = 17,
	DROCE_CM_REJ_INVALID_ALT_GID = 18,
	DROCE_CM_REJ_INVALID_ALT_LID = 19,
	DROCE_CM_REJ_INVALID_ALT_SL = 20,
	DROCE_CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	DROCE_CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	DROCE_CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	DROCE_CM_REJ_PORT_CM_REDIRECT = 24,
	DROCE_CM_REJ_PORT_REDIRECT = 25,
	DROCE_CM_REJ_INVALID_MTU = 26,
	DROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	DROCE_CM_REJ_CONSUMER_DEFINED = 28,
	DROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	DROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	DROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	DROCE_CM_REJ_INVALID_FLOW_LABEL = 32,
	DROCE_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
};

/** SIDR_REP status (table 119 of vol. 1). */
enum droce_cm_sidr_status {
	DROCE_CM_SIDR_SUCCESS = 0,
	DROCE_CM_SIDR_UNSUPPORTED = 1,
	DROCE_CM_SIDR_REJECT = 2,
	DROCE_CM_SIDR_NO_QP = 3,
	DROCE_CM_SIDR_REDIRECT = 4,
	DROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/** APR status (table 123 of vol. 1). */
enum droce_cm_apr_status {
	DROCE_CM_APR_SUCCESS = 0,
	DROCE_CM_APR_INVALID_COMM_ID = 1,
	DROCE_CM_APR_UNSUPPORTED = 2,
	DROCE_CM_APR_REJECT = 3,
};

/** The common MAD header, in host order. */
struct droce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;          /**< with the R (response) bit, 0x80 */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/** A path of a REQ (primary or alternate). */
struct droce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;     /**< 20 bits */
	uint8_t packet_rate;     /**< 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;              /**< 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout; /**< 5 bits */
};

struct droce_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;              /**< 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;             /**< 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;            /**< 24 bits */
	uint8_t remote_cm_response_timeout; /**< 5 bits */
	uint8_t transport_type;          /**< 2 bits: 0 RC, 1 UC, 3 XRC... */
	bool flow_control;
	uint32_t starting_psn;           /**< 24 bits */
	uint8_t local_cm_response_timeout; /**< 5 bits */
	uint8_t retry_count;             /**< 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;                /**< 4 bits, enum ibv_mtu */
	bool rdc_exists;
	uint8_t rnr_retry_count;         /**< 3 bits */
	uint8_t max_cm_retries;          /**< 4 bits */
	bool srq;
	uint8_t ext_transport_type;      /**< 3 bits */
	struct droce_cm_path primary;
	struct droce_cm_path alternate;
	uint8_t private_data[DROCE_CM_REQ_PRIV_LEN];
};

struct droce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;               /**< enum droce_cm_msg_ref */
	uint8_t service_timeout;         /**< 5 bits */
	uint8_t private_data[DROCE_CM_MRA_PRIV_LEN];
};

struct droce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;            /**< enum droce_cm_msg_ref */
	uint8_t ari_len;                 /**< 7 bits */
	uint16_t reason;                 /**< enum droce_cm_rej_reason */
	uint8_t ari[DROCE_CM_REJ_ARI_LEN];
	uint8_t private_data[DROCE_CM_REJ_PRIV_LEN];
};

struct droce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;              /**< 24 bits */
	uint32_t local_eecn;             /**< 24 bits */
	uint32_t starting_psn;           /**< 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;        /**< 5 bits */
	uint8_t failover_accepted;       /**< 2 bits */
	bool flow_control;
	uint8_t rnr_retry_count;         /**< 3 bits */
	bool srq;
	uint64_t local_ca_guid;
	uint8_t private_data[DROCE_CM_REP_PRIV_LEN];
};

struct droce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DROCE_CM_RTU_PRIV_LEN];
};

struct droce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;             /**< 24 bits: QPN or EECN */
	uint8_t private_data[DROCE_CM_DREQ_PRIV_LEN];
};

struct droce_cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DROCE_CM_DREP_PRIV_LEN];
};

struct droce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[DROCE_CM_SIDR_REQ_PRIV_LEN];
};

struct droce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;                  /**< enum droce_cm_sidr_status */
	uint8_t info_len;
	uint32_t qpn;                    /**< 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[DROCE_CM_SIDR_REP_INFO_LEN]; /**< ClassPortInfo */
	uint8_t private_data[DROCE_CM_SIDR_REP_PRIV_LEN];
};

/** LAP: only what a refusal needs; the rest is kept as it came. */
struct droce_cm_lap {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;             /**< 24 bits */
	uint8_t remote_cm_response_timeout; /**< 5 bits */
	uint8_t rest[DROCE_CM_DATA_LEN - 16]; /**< bytes 16.. as on the wire */
};

struct droce_cm_apr {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t info_len;
	uint8_t status;                  /**< enum droce_cm_apr_status */
	uint8_t info[DROCE_CM_APR_INFO_LEN];
	uint8_t private_data[DROCE_CM_APR_PRIV_LEN];
};

/** A CM MAD in host order: its header, and its attribute by hdr.attr_id. */
struct droce_cm_msg {
	struct droce_mad_hdr hdr;
	union {
		struct droce_cm_req req;
		struct droce_cm_mra mra;
		struct droce_cm_rej rej;
		struct droce_cm_rep rep;
		struct droce_cm_rtu rtu;
		struct droce_cm_dreq dreq;
		struct droce_cm_drep drep;
		struct droce_cm_sidr_req sidr_req;
		struct droce_cm_sidr_rep sidr_rep;
		struct droce_cm_lap lap;
		struct droce_cm_apr apr;
		uint8_t raw[DROCE_CM_DATA_LEN]; /**< any other attribute */
	};
};

/** What droce_cm_mad_parse() can find wrong. */
enum droce_cm_mad_err {
	DROCE_CM_MAD_OK = 0,
	DROCE_CM_MAD_TRUNCATED,      /**< shorter than DROCE_MAD_LEN */
	DROCE_CM_MAD_BAD_BASE_VERSION,
	DROCE_CM_MAD_BAD_CLASS,      /**< not the CM class */
	DROCE_CM_MAD_BAD_CLASS_VERSION,
	DROCE_CM_MAD_BAD_METHOD,     /**< not SEND (nor GET/SET/GET_RESP of
				      *   ClassPortInfo) */
	DROCE_CM_MAD_BAD_ATTR,       /**< an attribute ID the CM has not */
};

/** Name of an attribute ID ("REQ", "REP", ...; "?" if unknown). */
const char *droce_cm_attr_name(uint16_t attr_id);

/* (a REJ reason's name: droce_cm_rej_reason_name(), droce_cm.h) */

/** Name of a droce_cm_mad_err. */
const char *droce_cm_mad_err_name(enum droce_cm_mad_err err);

/**
 * Decode a CM MAD.
 *
 * @param buf  the MAD (what follows the DETH of a datagram to QP1)
 * @param len  bytes at @p buf; those past DROCE_MAD_LEN are ignored
 * @param msg  filled in: the header always when @p len allows, the
 *             attribute when the result is DROCE_CM_MAD_OK (msg->raw when
 *             the attribute is ClassPortInfo)
 * @return DROCE_CM_MAD_OK, or what is wrong (checked in the enum's order)
 */
enum droce_cm_mad_err droce_cm_mad_parse(const uint8_t *buf, size_t len,
					 struct droce_cm_msg *msg);

/**
 * Encode a CM MAD: header and the attribute named by msg->hdr.attr_id.
 * Reserved bits are written as zeros; fields wider than their bits are
 * truncated to them.
 *
 * @param msg  what to encode
 * @param buf  DROCE_MAD_LEN bytes, all written
 * @return DROCE_MAD_LEN, or 0 if the attribute ID is not one of
 *         enum droce_cm_attr (buf is then untouched)
 */
size_t droce_cm_mad_build(const struct droce_cm_msg *msg,
			  uint8_t buf[DROCE_MAD_LEN]);

/**
 * Fill @p hdr as a CM SEND MAD of @p attr_id with @p tid (base version 1,
 * class 0x07, class version 2, method SEND, status 0, modifier 0).
 */
void droce_cm_mad_hdr_init(struct droce_mad_hdr *hdr, uint16_t attr_id,
			   uint64_t tid);

/* ------------------------------------------------------------------------
 * rdma_cm's IP addressing.
 */

/** rdma_cm port spaces (enum rdma_port_space's values). */
#define DROCE_CMA_PS_IPOIB 0x0002
#define DROCE_CMA_PS_IB 0x013f
#define DROCE_CMA_PS_TCP 0x0106
#define DROCE_CMA_PS_UDP 0x0111

/** Size of the IP header rdma_cm puts first in REQ/SIDR_REQ private data. */
#define DROCE_CMA_HDR_LEN 36

/**
 * The service ID of @p port in port space @p ps: ps << 16 | port, as
 * Linux's rdma_cm makes it (for TCP, UDP and IB, the RDMA IP CM service
 * IDs 0x00000000010Xpppp of the annex; IPoIB's 0x000000000002pppp).
 */
uint64_t droce_cma_service_id(uint16_t ps, uint16_t port);

/**
 * Split an rdma_cm service ID.
 * @return true, with *ps and *port set, if @p sid is one (upper 32 bits
 *         zero, a port space of TCP, UDP, IPOIB or IB); false if not
 */
bool droce_cma_service_split(uint64_t sid, uint16_t *ps, uint16_t *port);

/**
 * The IP header of rdma_cm's private data. Addresses are 16 bytes; an
 * IPv4 address is ::ffff:a.b.c.d (the GID form), written on the wire in
 * the last 4 bytes of its 16 with 12 zero bytes before it.
 */
struct droce_cma_hdr {
	uint8_t cma_version;     /**< 0 */
	uint8_t ip_version;      /**< 4 or 6 */
	uint16_t src_port;
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
};

/**
 * Decode the header at the start of @p priv.
 * @return 0, or -EPROTO if the cma version is not 0 or the IP version is
 *         neither 4 nor 6, -EINVAL if @p len < DROCE_CMA_HDR_LEN
 */
int droce_cma_hdr_parse(const uint8_t *priv, size_t len,
			struct droce_cma_hdr *hdr);

/** Encode @p hdr into the first DROCE_CMA_HDR_LEN bytes of @p priv. */
void droce_cma_hdr_build(const struct droce_cma_hdr *hdr,
			 uint8_t priv[DROCE_CMA_HDR_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_CM_MAD_H */
