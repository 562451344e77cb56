/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Memory windows. A window is a key of its own over part of a region:
 * type 1 is bound with ibv_bind_mw() (a BIND_MW work request droce posts
 * for the application, the window's new rkey known at once), type 2 with
 * an IBV_WR_BIND_MW work request naming the new rkey, and invalidated by
 * IBV_WR_LOCAL_INV or by the peer's SEND with invalidate. The engine binds
 * when the requester comes to the work request, in send queue order.
 */

#include <stdlib.h>

#include "droce_verbs_pvt.h"

static struct ibv_mw *
alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct droce_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mw->eng.pd = pd_eng(pd);
	mw->eng.mw_type = (uint8_t)type;
	ret = droce_mr_register(to_ctx(pd->context)->dev, &mw->eng);
	if (ret < 0) {
		free(mw);
		errno = -ret;
		return NULL;
	}
	__atomic_add_fetch(&to_pd(pd)->users, 1, __ATOMIC_RELAXED);
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.rkey = mw->eng.rkey;
	mw->mw.handle = mw->eng.rkey;
	mw->mw.type = type;
	return &mw->mw;
}

static int
dealloc_mw(struct ibv_mw *ibmw)
{
	struct droce_mw *mw = to_mw(ibmw);

	/* a bound window lets go of its region */
	droce_mr_unregister(to_ctx(ibmw->context)->dev, &mw->eng);
	__atomic_sub_fetch(&to_pd(ibmw->pd)->users, 1, __ATOMIC_RELEASE);
	free(mw);
	return 0;
}

/*
 * Type 1: post the bind for the application. The window's rkey changes
 * with every bind (its low 8 bits, as ibv_inc_rkey() does), and the
 * application reads the new one in mw->rkey when this returns.
 */
static int
bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	if (mw->context != qp->context)
		return EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = droce_post_send_wr(to_qp(qp), &wr, &bad, true);
	if (ret == 0)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

void
droce_verbs_set_mw_ops(struct droce_context *ctx)
{
	struct ibv_context_ops *ops = &ctx->vctx.context.ops;

	ops->alloc_mw = alloc_mw;
	ops->dealloc_mw = dealloc_mw;
	ops->bind_mw = bind_mw;
}
