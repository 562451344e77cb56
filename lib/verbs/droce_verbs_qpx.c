/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The extended QP post API (ibv_create_qp_ex with send_ops_flags, then
 * ibv_wr_start, ibv_wr_send, ibv_wr_rdma_write, ..., ibv_wr_set_sge,
 * ibv_wr_complete). A batch is staged as a chain of ibv_send_wr with
 * their SGEs and inline bytes in memory of the QP's own, and
 * ibv_wr_complete posts it as ibv_post_send() would: the same checks, the
 * same work queue, the same opcode table (droce_wr_table, which also
 * says what operations each QP type may be created with). A batch with a
 * mistake in it (an operation the QP was not created for, too many SGEs
 * or inline bytes, more WRs than the send queue holds) posts nothing,
 * and ibv_wr_complete says why.
 */

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "droce_verbs_pvt.h"

/** A batch being built between ibv_wr_start and ibv_wr_complete. */
struct droce_qpx_batch {
	uint64_t ops;               /**< send_ops_flags of the QP */
	uint32_t cap;               /**< WRs a batch may hold */
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t n;                 /**< WRs staged */
	int err;                    /**< the first mistake, or 0 */
	struct ibv_send_wr *wr;     /**< [cap] */
	struct ibv_sge *sge;        /**< [cap * max_sge] */
	uint8_t *inl;               /**< [cap * max_inline] */
	uint64_t *word;             /**< [cap]: ATOMIC_WRITE's values */
};

static struct droce_qpx_batch *
batch_of(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct droce_qp, qpx)->batch;
}

/* Note a mistake in the batch: ibv_wr_complete reports the first one. */
static void
mistake(struct droce_qpx_batch *b, int err)
{
	if (b->err == 0)
		b->err = err;
}

/*
 * Stage a new WR of @p opcode (which the QP's send_ops_flags must have
 * asked for) from wr_id and wr_flags.
 */
static struct ibv_send_wr *
wr_new(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct droce_qpx_batch *b = batch_of(qpx);
	struct ibv_send_wr *w;

	if (!(b->ops & droce_wr_table[opcode].qpx_op)) {
		mistake(b, EINVAL);
		return NULL;
	}
	if (b->n == b->cap) {
		mistake(b, ENOMEM);
		return NULL;
	}
	w = &b->wr[b->n];
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->send_flags = qpx->wr_flags;
	w->opcode = opcode;
	w->sg_list = &b->sge[(size_t)b->n * b->max_sge];
	if (b->n > 0)
		b->wr[b->n - 1].next = w;
	b->n++;
	return w;
}

/* The WR the data setters apply to: the last one staged. */
static struct ibv_send_wr *
wr_cur(struct ibv_qp_ex *qpx)
{
	struct droce_qpx_batch *b = batch_of(qpx);

	if (b->n == 0) {
		mistake(b, EINVAL);
		return NULL;
	}
	return &b->wr[b->n - 1];
}

/* wr_cur(), for a setter of QP type @p type only (else a mistake). */
static struct ibv_send_wr *
wr_cur_on(struct ibv_qp_ex *qpx, enum ibv_qp_type type)
{
	struct ibv_send_wr *w = wr_cur(qpx);

	if (w != NULL && qpx->qp_base.qp_type != type) {
		mistake(batch_of(qpx), EINVAL);
		return NULL;
	}
	return w;
}

static void
wr_start(struct ibv_qp_ex *qpx)
{
	struct droce_qpx_batch *b = batch_of(qpx);

	b->n = 0;
	b->err = 0;
}

static int
wr_complete(struct ibv_qp_ex *qpx)
{
	struct droce_qpx_batch *b = batch_of(qpx);
	struct ibv_send_wr *bad;
	int err = b->err;

	if (err == 0 && b->n > 0)
		err = droce_post_send(&qpx->qp_base, b->wr, &bad);
	b->n = 0;
	b->err = 0;
	return err;
}

static void
wr_abort(struct ibv_qp_ex *qpx)
{
	wr_start(qpx);
}

static void
wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, IBV_WR_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *w = wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (w != NULL)
		w->imm_data = imm;
}

static void
wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
	uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *w = wr_new(qpx, opcode);

	if (w == NULL)
		return;
	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = addr;
	w->imm_data = imm;
}

static void
wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		  __be32 imm)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void
wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void
wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode, uint32_t rkey,
	  uint64_t addr, uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *w = wr_new(qpx, opcode);

	if (w == NULL)
		return;
	w->wr.atomic.rkey = rkey;
	w->wr.atomic.remote_addr = addr;
	w->wr.atomic.compare_add = compare_add;
	w->wr.atomic.swap = swap;
}

static void
wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		  uint64_t compare, uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void
wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		    uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void
wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
	   uint32_t length)
{
	struct ibv_send_wr *w = wr_cur(qpx);
	struct ibv_sge *sge;

	if (w == NULL)
		return;
	sge = w->sg_list;
	sge[0].addr = addr;
	sge[0].length = length;
	sge[0].lkey = lkey;
	w->num_sge = 1;
}

static void
wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
		const struct ibv_sge *sg_list)
{
	struct droce_qpx_batch *b = batch_of(qpx);
	struct ibv_send_wr *w = wr_cur(qpx);

	if (w == NULL)
		return;
	if (num_sge > b->max_sge) {
		mistake(b, EINVAL);
		return;
	}
	memcpy(w->sg_list, sg_list, num_sge * sizeof(*sg_list));
	w->num_sge = (int)num_sge;
}

static void
wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
			const struct ibv_data_buf *buf_list)
{
	struct droce_qpx_batch *b = batch_of(qpx);
	struct ibv_send_wr *w = wr_cur(qpx);
	uint8_t *inl;
	size_t i, len = 0;

	if (w == NULL)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > b->max_inline) {
		mistake(b, EINVAL);
		return;
	}
	/* copied now, as the caller may reuse the buffers at once; the post
	 * copies it again into the send queue */
	inl = &b->inl[(size_t)(w - b->wr) * b->max_inline];
	for (i = 0, len = 0; i < num_buf; i++) {
		memcpy(inl + len, buf_list[i].addr, buf_list[i].length);
		len += buf_list[i].length;
	}
	w->sg_list[0] = (struct ibv_sge) {
		.addr = (uintptr_t)inl,
		.length = (uint32_t)len,
	};
	w->num_sge = 1;
	w->send_flags |= IBV_SEND_INLINE;
}

static void
wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void
wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *w = wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (w != NULL)
		w->invalidate_rkey = rkey;
}

static void
wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *w = wr_new(qpx, IBV_WR_LOCAL_INV);

	if (w != NULL)
		w->invalidate_rkey = rkey;
}

static void
wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *w = wr_new(qpx, IBV_WR_BIND_MW);

	if (w == NULL)
		return;
	w->bind_mw.mw = mw;
	w->bind_mw.rkey = rkey;
	w->bind_mw.bind_info = *info;
}

static void
wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	struct ibv_send_wr *w = wr_new(qpx, IBV_WR_TSO);

	if (w == NULL)
		return;
	w->tso.hdr = hdr;
	w->tso.hdr_sz = hdr_sz;
	w->tso.mss = mss;
}

static void
wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn,
	       uint32_t qkey)
{
	struct ibv_send_wr *w = wr_cur_on(qpx, IBV_QPT_UD);

	if (w == NULL)
		return;
	w->wr.ud.ah = ah;
	w->wr.ud.remote_qpn = qpn;
	w->wr.ud.remote_qkey = qkey;
}

static void
wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	struct ibv_send_wr *w = wr_cur_on(qpx, IBV_QPT_XRC_SEND);

	if (w == NULL)
		return;
	w->qp_type.xrc.remote_srqn = srqn;
}

/*
 * The 8 bytes at @p data, copied now (the caller may reuse them), go as
 * the WR's inline data: they fit any WQE.
 */
static void
wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		const void *data)
{
	struct droce_qpx_batch *b = batch_of(qpx);
	struct ibv_send_wr *w = wr_new(qpx, IBV_WR_ATOMIC_WRITE);
	uint64_t *word;

	if (w == NULL)
		return;
	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = addr;
	word = &b->word[w - b->wr];
	memcpy(word, data, sizeof(*word));
	w->sg_list[0] = (struct ibv_sge) {
		.addr = (uintptr_t)word,
		.length = sizeof(*word),
	};
	w->num_sge = 1;
	w->send_flags |= IBV_SEND_INLINE;
}

/* The IBV_QP_EX_WITH_* operations a QP of @p type can be created with. */
static uint64_t
allowed_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;
	unsigned int op;

	for (op = 0; op < DROCE_WR_NUM; op++)
		if (droce_wr_allowed(op, type) == 0)
			ops |= droce_wr_table[op].qpx_op;
	return ops;
}

int
droce_qpx_init(struct droce_qp *qp, uint64_t send_ops)
{
	struct droce_qpx_batch *b;
	struct ibv_qp_ex *x = &qp->qpx;

	if (send_ops & ~allowed_ops(qp->qpx.qp_base.qp_type))
		return EOPNOTSUPP;
	b = rte_zmalloc("droce_qpx", sizeof(*b), 0);
	if (b == NULL)
		return ENOMEM;
	b->ops = send_ops;
	b->cap = RTE_MAX(qp->cap.max_send_wr, 1u);
	b->max_sge = RTE_MAX(qp->cap.max_send_sge, 1u);
	b->max_inline = qp->cap.max_inline_data;
	b->wr = rte_zmalloc("droce_qpx_wr", b->cap * sizeof(*b->wr), 0);
	b->sge = rte_zmalloc("droce_qpx_sge",
			     (size_t)b->cap * b->max_sge * sizeof(*b->sge), 0);
	b->inl = rte_zmalloc("droce_qpx_inl",
			     RTE_MAX((size_t)b->cap * b->max_inline, 1u), 0);
	b->word = rte_zmalloc("droce_qpx_word", b->cap * sizeof(*b->word), 0);
	if (b->wr == NULL || b->sge == NULL || b->inl == NULL ||
	    b->word == NULL) {
		qp->batch = b;
		droce_qpx_free(qp);
		return ENOMEM;
	}
	qp->batch = b;
	x->comp_mask = 0;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_send_inv = wr_send_inv;
	x->wr_local_inv = wr_local_inv;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_atomic_write = wr_atomic_write;
	return 0;
}

void
droce_qpx_free(struct droce_qp *qp)
{
	struct droce_qpx_batch *b = qp->batch;

	if (b == NULL)
		return;
	rte_free(b->wr);
	rte_free(b->sge);
	rte_free(b->inl);
	rte_free(b->word);
	rte_free(b);
	qp->batch = NULL;
}
