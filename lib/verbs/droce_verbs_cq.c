/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Completion queues and channels. The engine writes completions into a
 * ring; ibv_poll_cq and the ibv_cq_ex iterator read them, and each
 * completion read frees the work queue slots it retires. A channel is an
 * eventfd the engine writes when an armed CQ gets a completion.
 */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_malloc.h>

#include "droce_verbs_pvt.h"

/* Work completion fields droce fills (RoCE has no LIDs: those read 0). */
#define SUPPORTED_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
	IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | \
	IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS | \
	IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK | IBV_WC_EX_WITH_TM_INFO)

/* ------------------------------------------------------------------------
 * Channels.
 */

#define CHANNEL_RING 1024

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct droce_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->size = CHANNEL_RING;
	ch->fired = calloc(ch->size, sizeof(*ch->fired));
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->fired == NULL || ch->ch.fd < 0) {
		free(ch->fired);
		free(ch);
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.context = context;
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ch;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct droce_channel *ch = to_channel(channel);

	if (__atomic_load_n(&ch->refcnt, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	close(channel->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch->fired);
	free(ch);
	return 0;
}

/* Engine side: the CQ overran. */
static void
cq_event(struct droce_cq_ring *ring, enum ibv_event_type type)
{
	struct droce_cq *cq = container_of(ring, struct droce_cq, ring);
	struct ibv_async_event ev = {
		.element.cq = ibv_cq_ex_to_cq(&cq->cqx),
		.event_type = type,
	};

	droce_async_event(cq->ctx, &ev);
}

/* Engine side: an armed CQ got a completion. */
static void
cq_notify(struct droce_cq_ring *ring)
{
	struct droce_cq *cq = container_of(ring, struct droce_cq, ring);
	struct droce_channel *ch = to_channel(cq->cqx.channel);
	uint64_t one = 1;

	pthread_mutex_lock(&ch->lock);
	if (ch->head - ch->tail < ch->size) {
		ch->fired[ch->head++ % ch->size] = cq;
		if (write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
			ch->head--;
		else
			droce_engine_woke();
	}
	pthread_mutex_unlock(&ch->lock);
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		 void **cq_context)
{
	struct droce_channel *ch = to_channel(channel);
	struct droce_cq *c;
	uint64_t n;

	if (read(channel->fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	pthread_mutex_lock(&ch->lock);
	c = ch->fired[ch->tail++ % ch->size];
	pthread_mutex_unlock(&ch->lock);
	pthread_mutex_lock(&c->cqx.mutex);
	c->events++;
	pthread_mutex_unlock(&c->cqx.mutex);
	*cq = ibv_cq_ex_to_cq(&c->cqx);
	*cq_context = c->cqx.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

int
droce_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct droce_cq *c = to_cq(cq);

	__atomic_store_n(&c->ring.armed, solicited_only ?
			 DROCE_CQ_ARMED_SOLICITED : DROCE_CQ_ARMED_ANY,
			 __ATOMIC_RELEASE);
	/* the arming seen before the polls that follow read the CQ (see
	 * droce_cq_push()) */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* ------------------------------------------------------------------------
 * Polling.
 */

static inline void
cq_lock(struct droce_cq *cq)
{
	if (!cq->single_threaded)
		rte_spinlock_lock(&cq->lock);
}

static inline void
cq_unlock(struct droce_cq *cq)
{
	if (!cq->single_threaded)
		rte_spinlock_unlock(&cq->lock);
}

/*
 * Nothing to poll, seen without the lock: a poll of an empty CQ (most of
 * them) then costs no atomic operation. cons only grows up to prod, so a
 * cons equal to a later read of prod was the end when it was read.
 */
static inline bool
cq_empty(const struct droce_cq *cq)
{
	uint32_t cons = __atomic_load_n(&cq->ring.cons, __ATOMIC_RELAXED);

	return cons == __atomic_load_n(&cq->ring.prod, __ATOMIC_ACQUIRE);
}

/* Whether @p cq holds fewer than @p n completions. */
static inline bool
cq_short(const struct droce_cq *cq, int n)
{
	uint32_t cons = __atomic_load_n(&cq->ring.cons, __ATOMIC_RELAXED);

	return __atomic_load_n(&cq->ring.prod, __ATOMIC_ACQUIRE) - cons <
		(uint32_t)n;
}

/*
 * A poller that would empty its CQ may be on the CPU of the engine lcore
 * that fills it, keeping it from running: it runs a pass itself
 * (droce_dev_drive()) first, so what the pass completes comes with this
 * poll, and the lcore, finding its passes run, sleeps longer.
 * @return true if the CQ is no longer empty.
 */
static inline bool
cq_drive(struct droce_cq *cq)
{
	droce_dev_drive(cq->ctx->dev);
	return !cq_empty(cq);
}

/* The completion at cons, skipping those of destroyed QPs; NULL if none. */
static inline struct droce_cqe *
cq_peek(struct droce_cq *cq, uint32_t *cons)
{
	uint32_t prod = __atomic_load_n(&cq->ring.prod, __ATOMIC_ACQUIRE);

	while (*cons != prod) {
		struct droce_cqe *cqe = &cq->ring.cqes[*cons & cq->ring.mask];

		if (cqe->wq != NULL)
			return cqe;
		(*cons)++;
	}
	return NULL;
}

/* The slots a completion retires are free for posting again. */
static inline void
cq_retire(const struct droce_cqe *cqe)
{
	if (!(cqe->flags & DROCE_CQE_SRQ))
		droce_wq_retire(cqe->wq, cqe->wqe_idx + 1);
}

int
droce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct droce_cq *cq = to_cq(ibcq);
	struct droce_wq *wq = NULL;     /* slots to free, up to next */
	uint32_t cons, next = 0;
	int n = 0;

	if (cq_short(cq, num_entries) && !cq_drive(cq))
		return 0;
	cq_lock(cq);
	cons = cq->ring.cons;
	while (n < num_entries) {
		struct droce_cqe *cqe = cq_peek(cq, &cons);
		struct ibv_wc *w = &wc[n];

		if (cqe == NULL)
			break;
		w->wr_id = cqe->wr_id;
		w->status = cqe->status;
		w->opcode = cqe->opcode;
		w->byte_len = cqe->byte_len;
		w->imm_data = cqe->imm;
		w->qp_num = cqe->qp_num;
		/* a tag matching completion keeps its tag there */
		w->vendor_err = (cqe->flags & DROCE_CQE_TM) ? 0 :
			cqe->vendor_err;
		w->src_qp = (cqe->flags & DROCE_CQE_TM) ? 0 : cqe->src_qp;
		w->wc_flags = cqe->wc_flags;
		w->pkey_index = 0;
		w->slid = 0;
		w->sl = cqe->sl;
		w->dlid_path_bits = 0;
		/* a queue's slots are freed once a call, up to its last
		 * completion here (one atomic operation, not one each) */
		if (!(cqe->flags & DROCE_CQE_SRQ)) {
			if (wq != NULL && wq != cqe->wq)
				droce_wq_retire(wq, next);
			wq = cqe->wq;
			next = cqe->wqe_idx + 1;
		}
		cons++;
		n++;
	}
	if (wq != NULL)
		droce_wq_retire(wq, next);
	__atomic_store_n(&cq->ring.cons, cons, __ATOMIC_RELEASE);
	cq_unlock(cq);
	return n;
}

/* The ibv_cq_ex iterator: start_poll takes the lock, end_poll drops it. */

static inline struct droce_cq *
cur_cq(struct ibv_cq_ex *cqx)
{
	return to_cqx(cqx);
}

/*
 * The completion the iterator is on. Its WQE slot is free from here, as a
 * hardware provider frees it when it reads the CQE: a program may post
 * again before it moves on (ibv_rc_pingpong -t refills its receive queue
 * between start_poll and next_poll).
 */
static void
load_current(struct droce_cq *cq, const struct droce_cqe *cqe)
{
	cq_retire(cqe);
	cq->cur = *cqe;
	cq->cqx.status = cqe->status;
	cq->cqx.wr_id = cqe->wr_id;
}

static int
cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct droce_cq *cq = cur_cq(cqx);
	struct droce_cqe *cqe;
	uint32_t cons;

	if (attr->comp_mask != 0)
		return EINVAL;
	if (cq_empty(cq) && !cq_drive(cq))
		return ENOENT;
	cq_lock(cq);
	cons = cq->ring.cons;
	cqe = cq_peek(cq, &cons);
	__atomic_store_n(&cq->ring.cons, cons, __ATOMIC_RELEASE);
	if (cqe == NULL) {
		cq_unlock(cq);
		return ENOENT;
	}
	load_current(cq, cqe);
	cq->polling = true;
	return 0;
}

/* Consume the current completion. */
static void
consume_current(struct droce_cq *cq)
{
	__atomic_store_n(&cq->ring.cons, cq->ring.cons + 1, __ATOMIC_RELEASE);
	cq->polling = false;
}

static int
cq_next_poll(struct ibv_cq_ex *cqx)
{
	struct droce_cq *cq = cur_cq(cqx);
	struct droce_cqe *cqe;
	uint32_t cons;

	if (cq->polling)
		consume_current(cq);
	cons = cq->ring.cons;
	cqe = cq_peek(cq, &cons);
	__atomic_store_n(&cq->ring.cons, cons, __ATOMIC_RELEASE);
	if (cqe == NULL)
		return ENOENT;
	load_current(cq, cqe);
	cq->polling = true;
	return 0;
}

static void
cq_end_poll(struct ibv_cq_ex *cqx)
{
	struct droce_cq *cq = cur_cq(cqx);

	if (cq->polling)
		consume_current(cq);
	cq_unlock(cq);
}

static enum ibv_wc_opcode
cq_read_opcode(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.opcode;
}

static uint32_t
cq_read_vendor_err(struct ibv_cq_ex *cqx)
{
	const struct droce_cqe *c = &cur_cq(cqx)->cur;

	return (c->flags & DROCE_CQE_TM) ? 0 : c->vendor_err;
}

static uint32_t
cq_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.byte_len;
}

static __be32
cq_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.imm;
}

static uint32_t
cq_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.qp_num;
}

static uint32_t
cq_read_src_qp(struct ibv_cq_ex *cqx)
{
	const struct droce_cqe *c = &cur_cq(cqx)->cur;

	return (c->flags & DROCE_CQE_TM) ? 0 : c->src_qp;
}

/* The TMH's tag and app_ctx of a tag matching completion. */
static void
cq_read_tm_info(struct ibv_cq_ex *cqx, struct ibv_wc_tm_info *tm_info)
{
	const struct droce_cqe *c = &cur_cq(cqx)->cur;

	tm_info->tag = (c->flags & DROCE_CQE_TM) ? c->tm_tag : 0;
	tm_info->priv = (c->flags & DROCE_CQE_TM) ? c->imm : 0;
}

static unsigned int
cq_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.wc_flags;
}

static uint32_t
cq_read_zero32(struct ibv_cq_ex *cqx)
{
	RTE_SET_USED(cqx);
	return 0;
}

static uint8_t
cq_read_zero8(struct ibv_cq_ex *cqx)
{
	RTE_SET_USED(cqx);
	return 0;
}

/* A UD receive's network header type (droce_cqe.sl). */
static uint8_t
cq_read_sl(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.sl;
}

static uint64_t
cq_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return cur_cq(cqx)->cur.ts;
}

/* One reading of both clocks relates TSC values to the wall clock. */
static uint64_t base_tsc, base_ns;
static pthread_once_t base_once = PTHREAD_ONCE_INIT;

static void
wallclock_base(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	base_tsc = droce_clock();
	base_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t
tsc_to_wallclock_ns(uint64_t ts)
{
	int64_t delta_ns;

	pthread_once(&base_once, wallclock_base);
	/* ts may precede the base reading: a signed difference */
	delta_ns = (int64_t)((double)(int64_t)(ts - base_tsc) * 1e9 /
			     (double)droce_clock_hz());
	return base_ns + (uint64_t)delta_ns;
}

static uint64_t
cq_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return tsc_to_wallclock_ns(cur_cq(cqx)->cur.ts);
}

/* ------------------------------------------------------------------------
 * Creation.
 */

static struct droce_cq *
cq_alloc(struct ibv_context *context, unsigned int cqe,
	 struct ibv_comp_channel *channel, void *cq_context)
{
	struct droce_cq *cq;
	uint32_t size;

	if (cqe == 0 || cqe > DROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	cq = rte_zmalloc("droce_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE);
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	size = rte_align32pow2(cqe);
	cq->ring.cqes = rte_zmalloc("droce_cqes", size * sizeof(struct droce_cqe),
				    RTE_CACHE_LINE_SIZE);
	if (cq->ring.cqes == NULL) {
		rte_free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->ring.mask = size - 1;
	cq->ring.depth = cqe;
	cq->ring.notify = channel != NULL ? cq_notify : NULL;
	cq->ring.event = cq_event;
	cq->ctx = to_ctx(context);
	rte_spinlock_init(&cq->lock);
	cq->cqx.context = context;
	cq->cqx.channel = channel;
	cq->cqx.cq_context = cq_context;
	cq->cqx.cqe = (int)cqe;
	pthread_mutex_init(&cq->cqx.mutex, NULL);
	pthread_cond_init(&cq->cqx.cond, NULL);
	if (channel != NULL)
		__atomic_add_fetch(&to_channel(channel)->refcnt, 1,
				   __ATOMIC_RELEASE);
	return cq;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct droce_cq *cq;

	if (cqe <= 0 || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_alloc(context, (unsigned int)cqe, channel, cq_context);
	return cq != NULL ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
}

struct ibv_cq_ex *
droce_create_cq_ex(struct ibv_context *context,
		   struct ibv_cq_init_attr_ex *attr)
{
	struct droce_cq *cq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* a parent domain's CQ: its thread domain and allocators are hints
	 * droce's CQ rings need not take (droce_verbs_mem.c) */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (attr->parent_domain == NULL ||
	     attr->parent_domain->context != context ||
	     to_pd(attr->parent_domain)->protection == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				       IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)SUPPORTED_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_vector >= (uint32_t)context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_alloc(context, attr->cqe, attr->channel, attr->cq_context);
	if (cq == NULL)
		return NULL;
	cq->wc_flags = attr->wc_flags;
	cq->ring.timestamps = (attr->wc_flags &
			       (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) != 0;
	cq->single_threaded = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		(attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	cq->ring.ignore_overrun =
		(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		(attr->flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN);
	cq->cqx.comp_mask = 0;
	cq->cqx.start_poll = cq_start_poll;
	cq->cqx.next_poll = cq_next_poll;
	cq->cqx.end_poll = cq_end_poll;
	cq->cqx.read_opcode = cq_read_opcode;
	cq->cqx.read_vendor_err = cq_read_vendor_err;
	cq->cqx.read_wc_flags = cq_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq->cqx.read_byte_len = cq_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cq->cqx.read_imm_data = cq_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq->cqx.read_qp_num = cq_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_TM_INFO)
		cq->cqx.read_tm_info = cq_read_tm_info;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cq->cqx.read_src_qp = cq_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cq->cqx.read_slid = cq_read_zero32;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cq->cqx.read_sl = cq_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cq->cqx.read_dlid_path_bits = cq_read_zero8;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq->cqx.read_completion_ts = cq_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq->cqx.read_completion_wallclock_ns =
			cq_read_completion_wallclock_ns;
	return &cq->cqx;
}

struct resize_args {
	struct droce_cq *cq;
	struct droce_cqe *cqes;
	uint32_t size;
	uint32_t depth;
	uint32_t owed;          /**< completions its QPs still owe it */
};

/* On the engine lcore, so that no completion is written meanwhile. */
static int
cq_resize(struct droce_dev *dev, void *arg)
{
	struct resize_args *a = arg;
	struct droce_cq_ring *ring = &a->cq->ring;
	uint32_t cons = ring->cons, n, i;
	struct droce_cqe *old = ring->cqes;

	RTE_SET_USED(dev);
	/* the CQ's QPs on the device's other engine lcores push under it */
	rte_spinlock_lock(&ring->lock);
	n = ring->prod - cons;
	if (n > a->depth || a->owed > a->depth - n) {
		rte_spinlock_unlock(&ring->lock);
		return EINVAL;
	}
	for (i = 0; i < n; i++)
		a->cqes[i] = old[(cons + i) & ring->mask];
	ring->cqes = a->cqes;
	ring->mask = a->size - 1;
	ring->depth = a->depth;
	ring->cons = 0;
	ring->cons_seen = 0;
	ring->prod = n;
	rte_spinlock_unlock(&ring->lock);
	a->cqes = old;
	return 0;
}

int
ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct droce_cq *cq = to_cq(ibcq);
	struct resize_args a = { .cq = cq };
	int ret;

	if (cqe <= 0 || cqe > DROCE_MAX_CQE)
		return EINVAL;
	a.depth = (uint32_t)cqe;
	a.size = rte_align32pow2(a.depth);
	a.cqes = rte_zmalloc("droce_cqes", a.size * sizeof(*a.cqes),
			     RTE_CACHE_LINE_SIZE);
	if (a.cqes == NULL)
		return ENOMEM;
	cq_lock(cq);
	/* what it holds and what its QPs' sends will still write must fit,
	 * as on a device whose sends complete as they are posted */
	ret = droce_cq_owed(cq->ctx->dev, &cq->ring, &a.owed);
	if (ret == 0)
		ret = droce_dev_call(cq->ctx->dev, cq_resize, &a);
	if (ret == 0)
		ibcq->cqe = cqe;
	cq_unlock(cq);
	rte_free(a.cqes);       /* the old ring, or the unused new one */
	return ret;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct droce_cq *cq = to_cq(ibcq);

	if (__atomic_load_n(&cq->nqps, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	/* every event handed out must have been acknowledged */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != cq->events)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	if (ibcq->channel != NULL)
		__atomic_sub_fetch(&to_channel(ibcq->channel)->refcnt, 1,
				   __ATOMIC_RELEASE);
	rte_free(cq->ring.cqes);
	rte_free(cq);
	return 0;
}
