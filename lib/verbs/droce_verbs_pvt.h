/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_VERBS_PVT_H
#define DROCE_VERBS_PVT_H

/*
 * The verbs objects droce hands to applications. Each embeds the
 * rdma-core structure the application sees as its first member, so the
 * inline wrappers of <infiniband/verbs.h> work on it, and converts back
 * with container_of.
 */

#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include <rte_log.h>
#include <rte_rwlock.h>
#include <rte_spinlock.h>

#include <droce_engine.h>

/* The verbs layer's log type, lib.droce.verbs: what it refuses and why,
 * at DEBUG (--log-level=lib.droce.verbs:debug in the EAL arguments). */
extern int droce_verbs_logtype;
#define DROCE_VERBS_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, droce_verbs_logtype, \
		RTE_FMT("droce verbs: " RTE_FMT_HEAD(__VA_ARGS__, ) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__, )))

/** An ibv_device for each engine device. */
struct droce_ibdev {
	struct ibv_device ibdev;
	struct droce_dev *dev;
	unsigned int index;
};

/** An open device. */
struct droce_context {
	struct verbs_context vctx;      /* ends with struct ibv_context */
	struct droce_ibdev *ibdev;
	struct droce_dev *dev;
	struct droce_dev_attr attr;
	pthread_mutex_t async_lock;
	uint32_t async_head;
	uint32_t async_tail;
	struct ibv_async_event async_ring[64];
	struct droce_context *next;     /**< the list of open contexts */
};

struct droce_pd {
	struct ibv_pd pd;
	struct droce_pd_eng eng;
	uint32_t users;		/**< MRs and QPs on it: dealloc waits for 0 */
	/** a parent domain (ibv_alloc_parent_domain()): the PD it stands
	 * for, whose eng its objects take (it holds a use of it); and its
	 * thread domain and allocators, as given. NULL for a PD. */
	struct droce_pd *protection;
	struct ibv_td *td;
	void *pd_context;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
};

/** The engine's record of @p pd, a PD or a parent domain's PD. */
static inline struct droce_pd_eng *
pd_eng(struct ibv_pd *pd)
{
	struct droce_pd *p = container_of(pd, struct droce_pd, pd);

	return p->protection != NULL ? &p->protection->eng : &p->eng;
}

struct droce_mr {
	struct ibv_mr mr;
	struct droce_mr_eng eng;
};

/** A completion channel: an eventfd and the CQs that fired on it. */
struct droce_channel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	uint32_t head;
	uint32_t tail;
	uint32_t size;
	struct droce_cq **fired;        /* ring of CQs with an event */
	unsigned int refcnt;            /* CQs using it */
};

/** A completion queue; ibv_cq_ex extends ibv_cq at the same address. */
struct droce_cq {
	struct ibv_cq_ex cqx;
	struct droce_cq_ring ring;
	struct droce_context *ctx;
	bool single_threaded;
	rte_spinlock_t lock;
	uint64_t wc_flags;              /* ibv_cq_init_attr_ex.wc_flags */
	/* the completion the extended poll API is on */
	struct droce_cqe cur;
	bool polling;
	unsigned int nqps;              /* QPs using it */
	uint32_t events;                /* handed out by ibv_get_cq_event */
};

/** A queue pair; ibv_qp_ex extends ibv_qp at the same address. */
/** A shared receive queue: its WQ is filled here, emptied by the engine. */
struct droce_srq {
	struct ibv_srq srq;
	struct droce_srq_eng eng;
	struct droce_context *ctx;
	uint32_t users;                 /**< QPs attached: destroy waits */
	struct droce_xrcd *xrcd;        /**< XRC: its domain */
	struct droce_cq *cq;            /**< XRC, TM: its CQ */
	rte_rwlock_t post_lock;         /**< posts read, a resize writes */
};

/** An XRC domain: opens of one file share its id. */
struct droce_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t id;
	uint32_t users;                 /**< SRQs and target QPs in it */
	struct shared_xrcd *shared;     /**< NULL: opened with fd -1 */
};

static inline struct droce_xrcd *
to_xrcd(struct ibv_xrcd *x)
{
	return container_of(x, struct droce_xrcd, xrcd);
}

/** Install the flow rule operations in @p ctx. */
void droce_verbs_set_flow_ops(struct droce_context *ctx);

/** Install the XRC domain operations in @p ctx. */
void droce_verbs_set_xrc_ops(struct droce_context *ctx);

/** A memory window: a key of the engine's MR table. */
struct droce_mw {
	struct ibv_mw mw;
	struct droce_mr_eng eng;
};

static inline struct droce_mw *
to_mw(struct ibv_mw *m)
{
	return container_of(m, struct droce_mw, mw);
}

/** An address handle. */
struct droce_ah {
	struct ibv_ah ah;
	struct droce_ah_eng *eng;
};

struct droce_qp {
	struct ibv_qp_ex qpx;
	struct droce_qp_eng *eng;
	struct droce_context *ctx;
	struct droce_cq *send_cq;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;          /**< or the QP's own rq */
	struct droce_wq sq;
	struct droce_wq rq;
	struct ibv_qp_cap cap;
	bool sq_sig_all;
	pthread_mutex_t modify_lock;
	struct droce_qpx_batch *batch;  /**< with send_ops_flags: ibv_wr_* */
	struct droce_xrcd *xrcd;        /**< XRC_RECV: its domain */
	uint32_t flows;                 /**< raw: rules steering to it */
	/** the largest TSO header its WQEs hold (raw: DROCE_TSO_HDR at
	 * least; UD: what ibv_create_qp_ex asked, 0 for no TSO) */
	uint16_t max_tso_header;
	struct droce_rss *rss;          /**< an RSS QP: its spreading */
};

/** A receive work queue (ibv_create_wq): a raw packet QP's receive queue,
 * the QP droce's own. */
struct droce_rwq {
	struct ibv_wq wq;
	struct ibv_qp *qp;
	uint32_t tables;                /**< indirection tables holding it */
};

/** An indirection table of work queues (ibv_create_rwq_ind_table). */
struct droce_ind_table {
	struct ibv_rwq_ind_table table;
	uint32_t size;
	uint32_t users;                 /**< RSS QPs on it: destroy waits */
	struct droce_rwq **wqs;
	struct droce_qp_eng **eng;      /**< each work queue's QP */
};

/** An RSS QP's hash and table. */
struct droce_rss {
	struct droce_rss_eng eng;
	struct droce_ind_table *table;
};

/**
 * Check the RSS attributes of @p attr (a raw packet QP, a Toeplitz hash
 * of fields droce has, a key of at most DROCE_RSS_QP_KEY_LEN bytes, a
 * table of @p context's) and make *rss of them.
 * @return 0, EINVAL or EOPNOTSUPP (a hash or field droce has not got),
 * ENOMEM.
 */
int droce_rss_qp_check(struct ibv_context *context,
		       const struct ibv_qp_init_attr_ex *attr,
		       struct droce_rss **rss);

/** Free @p rss (NULL: nothing), letting its table go. */
void droce_rss_free(struct droce_rss *rss);

/** Install the work queue and indirection table operations in @p ctx. */
void droce_verbs_set_wq_ops(struct droce_context *ctx);

/** Does this process have CAP_NET_RAW (raw QPs, privileged Q_Keys)? */
bool droce_has_net_raw(void);

static inline struct droce_context *
to_ctx(struct ibv_context *c)
{
	return container_of(c, struct droce_context, vctx.context);
}

static inline struct droce_cq *
to_cq(struct ibv_cq *c)
{
	return container_of((struct ibv_cq_ex *)c, struct droce_cq, cqx);
}

static inline struct droce_cq *
to_cqx(struct ibv_cq_ex *c)
{
	return container_of(c, struct droce_cq, cqx);
}

static inline struct droce_qp *
to_qp(struct ibv_qp *q)
{
	return container_of((struct ibv_qp_ex *)q, struct droce_qp, qpx);
}

static inline struct droce_pd *
to_pd(struct ibv_pd *p)
{
	return container_of(p, struct droce_pd, pd);
}

static inline struct droce_mr *
to_mr(struct ibv_mr *m)
{
	return container_of(m, struct droce_mr, mr);
}

static inline struct droce_ah *
to_ah(struct ibv_ah *a)
{
	return container_of(a, struct droce_ah, ah);
}

static inline struct droce_srq *
to_srq(struct ibv_srq *s)
{
	return container_of(s, struct droce_srq, srq);
}

static inline struct droce_channel *
to_channel(struct ibv_comp_channel *c)
{
	return container_of(c, struct droce_channel, ch);
}

/* Device capabilities droce reports and enforces. */
#define DROCE_MAX_QP_WR 16384
#define DROCE_MAX_INLINE 512
#define DROCE_MAX_CQE ((1 << 20) - 1)  /* 32 for each QP of a full device */
#define DROCE_MAX_MR_SIZE (1ull << 40)
#define DROCE_MAX_AH 65536
#define DROCE_MAX_SRQ_WR 16384

/** Fill the context operations of a new context. */
void droce_verbs_set_ops(struct droce_context *ctx);

/** The poll function installed in context ops. */
int droce_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int droce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int droce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);

/**
 * ibv_post_send() on @p qp; @p type1_bind lets a BIND_MW WR bind a type 1
 * window (ibv_bind_mw() posts it so; an application's may not).
 */
int droce_post_send_wr(struct droce_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr, bool type1_bind);

/** Install the memory window operations in @p ctx. */
void droce_verbs_set_mw_ops(struct droce_context *ctx);
/** Install the thread and parent domain and memory advice operations
 * (droce_verbs_mem.c). */
void droce_verbs_set_mem_ops(struct droce_context *ctx);
int droce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int droce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
struct ibv_srq *droce_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int droce_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op,
		       struct ibv_ops_wr **bad_op);

/**
 * Give @p qp the extended post API (ibv_wr_*) for the operations of
 * @p send_ops (IBV_QP_EX_WITH_*).
 * @return 0, EOPNOTSUPP for an operation droce or the QP type has not
 * got, or ENOMEM.
 */
int droce_qpx_init(struct droce_qp *qp, uint64_t send_ops);

/** Free what droce_qpx_init() took. */
void droce_qpx_free(struct droce_qp *qp);

/**
 * Post @p wr into the receive queue @p wq (a QP's or an SRQ's): as
 * ibv_post_recv(), *bad_wr set to the first WR not posted.
 */
int droce_wq_post_recv(struct droce_wq *wq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/**
 * Set up @p wq for @p max_wr WRs of @p stride bytes each.
 * @return 0 or -ENOMEM.
 */
int droce_wq_init(struct droce_wq *wq, uint32_t max_wr, uint32_t stride,
		  uint32_t max_sge, uint32_t max_inline);
struct ibv_cq_ex *droce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *droce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int droce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int droce_query_port_ex(struct ibv_context *context, uint8_t port_num,
			struct ibv_port_attr *attr, size_t attr_len);
int droce_query_rt_values(struct ibv_context *context,
			  struct ibv_values_ex *values);

/**
 * Check a modify_qp request against the QP state table: the transition is
 * allowed and the attribute mask holds every required and only allowed
 * attributes.
 * @return 0 or EINVAL.
 */
int droce_qp_attr_check(enum ibv_qp_type type, enum ibv_qp_state cur,
			enum ibv_qp_state next, int mask);

/** Queue an asynchronous event on @p ctx. */
void droce_async_event(struct droce_context *ctx,
		       const struct ibv_async_event *ev);

#endif /* DROCE_VERBS_PVT_H */
