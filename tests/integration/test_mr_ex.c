/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Regions reregistered, on-demand paging, and parent domains, between
 * droce0 (a) and droce1 (b) of the embedded default.
 *
 * - ibv_rereg_mr: a region moved to another buffer keeps its keys, as
 *   RoCE NICs keep them, and takes WRITEs there, while its old place is
 *   refused (remote access error); its access changed to local only
 *   refuses remote WRITEs; its
 *   PD changed moves its use to the new PD (which then cannot be freed
 *   while it holds it); no flag, an unknown flag, or a region droce
 *   cannot have: IBV_REREG_MR_ERR_INPUT with EINVAL, the region as it
 *   was.
 * - ODP: ibv_query_device_ex reports explicit ODP for every RC, UC, UD
 *   and XRC operation, and no implicit ODP; a region registered
 *   IBV_ACCESS_ON_DEMAND over memory never touched (fresh anonymous
 *   pages) takes a 1 MiB WRITE and answers a READ of it;
 *   ibv_advise_mr's prefetch is taken, an unknown advice refused; the
 *   whole address space (implicit ODP) is refused.
 * - Parent domains: ibv_alloc_td and ibv_alloc_parent_domain over a PD,
 *   with allocators; the PD cannot be freed under it; a CQ made on it
 *   (IBV_CQ_INIT_ATTR_MASK_PD) and one naming a plain PD refused; a QP
 *   and a region on the parent domain, and a region on the PD under it,
 *   both reached through that QP (one protection domain), a region of
 *   another PD refused.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include <infiniband/verbs.h>

#include "harness.h"

#define LEN (256 * 1024)
#define ODP_LEN (1024 * 1024)

static struct ep a, b;
static struct ep_opts opts;

/* One WRITE of a.buf[0, len) to @p raddr under @p rkey: its status. */
static enum ibv_wc_status
write_to(struct ep *from, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)from->buf, .length = len,
			       .lkey = from->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(from->qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(from->scq, &wc, 1, 5000), 1);
	return wc.status;
}

static void
pair_up(void)
{
	ep_opts_default(&opts);
	assert_int_equal(ep_open(&a, 0, LEN, &opts), 0);
	assert_int_equal(ep_open(&b, 1, LEN, &opts), 0);
	assert_int_equal(ep_pair_up(&a, &b, &opts), 0);
}

static void
test_rereg_mr(void **state)
{
	struct ibv_pd *pd2;
	uint32_t old_rkey;

	(void)state;
	pair_up();
	fill_pattern(a.buf, 4096, 1);
	assert_int_equal(write_to(&a, (uintptr_t)b.buf, b.mr->rkey, 4096),
			 IBV_WC_SUCCESS);
	assert_memory_equal(b.buf, a.buf, 4096);

	/* refused, the region as it was */
	old_rkey = b.mr->rkey;
	errno = 0;
	assert_int_equal(ibv_rereg_mr(b.mr, 0, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_rereg_mr(b.mr, 1 << 7, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				      NULL, 0, IBV_ACCESS_REMOTE_WRITE),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(b.mr->rkey, old_rkey);

	/* to the buffer's second half */
	assert_int_equal(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				      NULL, b.buf + LEN / 2, LEN / 2, 0), 0);
	assert_ptr_equal(b.mr->addr, b.buf + LEN / 2);
	assert_int_equal(b.mr->length, LEN / 2);
	assert_int_equal(b.mr->rkey, old_rkey);
	fill_pattern(a.buf, 4096, 2);
	assert_int_equal(write_to(&a, (uintptr_t)b.buf + LEN / 2, b.mr->rkey,
				  4096), IBV_WC_SUCCESS);
	assert_memory_equal(b.buf + LEN / 2, a.buf, 4096);

	/* to another PD and back: the use moves with it */
	pd2 = ibv_alloc_pd(b.ctx);
	assert_non_null(pd2);
	assert_int_equal(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL,
				      0, 0), 0);
	assert_ptr_equal(b.mr->pd, pd2);
	assert_int_equal(ibv_dealloc_pd(pd2), EBUSY);
	/* (b's QP is on b.pd: a region of another PD is not its to grant) */
	assert_int_equal(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, b.pd, NULL,
				      0, 0), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);

	/* local access only: remote WRITEs refused (a's QP then in
	 * error) */
	assert_int_equal(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				      NULL, 0, IBV_ACCESS_LOCAL_WRITE), 0);
	assert_int_equal(write_to(&a, (uintptr_t)b.buf + LEN / 2, b.mr->rkey,
				  64), IBV_WC_REM_ACCESS_ERR);
	ep_close(&a);
	ep_close(&b);
}

/* Moved, a region no longer covers its old place. */
static void
test_rereg_old_place_refused(void **state)
{
	(void)state;
	pair_up();
	assert_int_equal(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				      NULL, b.buf + 4096, 4096, 0), 0);
	assert_int_equal(write_to(&a, (uintptr_t)b.buf, b.mr->rkey, 64),
			 IBV_WC_REM_ACCESS_ERR);
	ep_close(&a);
	ep_close(&b);
}

static void
test_odp(void **state)
{
	struct ibv_device_attr_ex dx;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	uint8_t *mem;
	uint32_t want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_wc wc;
	size_t i;

	(void)state;
	pair_up();
	assert_int_equal(ibv_query_device_ex(b.ctx, NULL, &dx), 0);
	assert_int_equal(dx.odp_caps.general_caps, IBV_ODP_SUPPORT);
	assert_int_equal(dx.odp_caps.per_transport_caps.rc_odp_caps, want);
	assert_int_equal(dx.xrc_odp_caps, want);
	assert_true(dx.odp_caps.per_transport_caps.ud_odp_caps &
		    IBV_ODP_SUPPORT_RECV);

	/* implicit ODP: not offered */
	errno = 0;
	assert_null(ibv_reg_mr(b.pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
			       IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EINVAL);

	/* pages never touched */
	mem = mmap(NULL, ODP_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mem != MAP_FAILED);
	mr = ibv_reg_mr(b.pd, mem, ODP_LEN, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	sge = (struct ibv_sge){ .addr = (uintptr_t)mem, .length = 4096,
				.lkey = mr->lkey };
	assert_int_equal(ibv_advise_mr(b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
	assert_int_equal(ibv_advise_mr(b.pd, (enum ibv_advise_mr_advice)77, 0,
				       &sge, 1), EOPNOTSUPP);

	/* 1 MiB WRITE into it, in pieces of a.buf, then READ back */
	for (i = 0; i < ODP_LEN; i += LEN / 2) {
		fill_pattern(a.buf, LEN / 2, (uint32_t)(10 + i / (LEN / 2)));
		assert_int_equal(write_to(&a, (uintptr_t)mem + i, mr->rkey,
					  LEN / 2), IBV_WC_SUCCESS);
		assert_memory_equal(mem + i, a.buf, LEN / 2);
	}
	memset(a.buf + LEN / 2, 0, LEN / 2);
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf + LEN / 2,
				.length = LEN / 2, .lkey = a.mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)mem + ODP_LEN - LEN / 2;
	wr.wr.rdma.rkey = mr->rkey;
	assert_int_equal(ibv_post_send(a.qp, &wr, &bad), 0);
	assert_int_equal(ep_poll(a.scq, &wc, 1, 5000), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_memory_equal(a.buf + LEN / 2, mem + ODP_LEN - LEN / 2, LEN / 2);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(munmap(mem, ODP_LEN), 0);
	ep_close(&a);
	ep_close(&b);
}

static int allocs;

static void *
pd_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
	 uint64_t resource_type)
{
	(void)pd;
	(void)size;
	(void)alignment;
	(void)resource_type;
	allocs += pd_context == &allocs;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void
pd_free(struct ibv_pd *pd, void *pd_context, void *ptr,
	uint64_t resource_type)
{
	(void)pd;
	(void)pd_context;
	(void)ptr;
	(void)resource_type;
}

static void
test_parent_domain(void **state)
{
	struct ibv_td_init_attr ta = {0};
	struct ibv_parent_domain_init_attr pa = {0};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_pd *under, *pdom, *other;
	struct ibv_mr *on_under, *on_other;
	struct ibv_cq_ex *cqx;
	struct ibv_td *td;
	struct ep c;

	(void)state;
	ep_opts_default(&opts);
	assert_int_equal(ep_open(&b, 1, LEN, &opts), 0);
	/* c: droce0, its PD a parent domain */
	memset(&c, 0, sizeof(c));
	c.ctx = ep_open_device(0);
	assert_non_null(c.ctx);
	under = ibv_alloc_pd(c.ctx);
	assert_non_null(under);
	td = ibv_alloc_td(c.ctx, &ta);
	assert_non_null(td);
	pa.pd = under;
	pa.td = td;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
		IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.alloc = pd_alloc;
	pa.free = pd_free;
	pa.pd_context = &allocs;
	pdom = ibv_alloc_parent_domain(c.ctx, &pa);
	assert_non_null(pdom);
	assert_int_equal(ibv_dealloc_pd(under), EBUSY);
	/* a parent domain of a parent domain, or of no PD: refused */
	pa.pd = pdom;
	assert_null(ibv_alloc_parent_domain(c.ctx, &pa));
	pa.pd = NULL;
	assert_null(ibv_alloc_parent_domain(c.ctx, &pa));

	/* its CQ; a CQ naming a plain PD is refused */
	ca.parent_domain = pdom;
	cqx = ibv_create_cq_ex(c.ctx, &ca);
	assert_non_null(cqx);
	c.scq = ibv_cq_ex_to_cq(cqx);
	ca.parent_domain = under;
	assert_null(ibv_create_cq_ex(c.ctx, &ca));
	c.rcq = ibv_create_cq(c.ctx, 64, NULL, NULL, 0);
	assert_non_null(c.rcq);

	/* a QP and a region on it, a region on the PD under it */
	c.pd = pdom;
	c.len = LEN;
	c.buf = aligned_alloc(64, LEN);
	assert_non_null(c.buf);
	memset(c.buf, 0, LEN);
	c.mr = ibv_reg_mr(pdom, c.buf, LEN / 2, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(c.mr);
	on_under = ibv_reg_mr(under, c.buf + LEN / 2, LEN / 4,
			      IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(on_under);
	other = ibv_alloc_pd(c.ctx);
	assert_non_null(other);
	on_other = ibv_reg_mr(other, c.buf + 3 * LEN / 4, LEN / 4,
			      IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE);
	assert_non_null(on_other);
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = c.scq, .recv_cq = c.rcq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		c.qp = ibv_create_qp(pdom, &qa);
		assert_non_null(c.qp);
		assert_ptr_equal(c.qp->pd, pdom);
	}
	c.psn = 0x123;
	assert_int_equal(ibv_query_gid(c.ctx, 1, 0, &c.gid), 0);
	assert_int_equal(ep_connect(&c, &b, &opts), 0);
	assert_int_equal(ep_connect(&b, &c, &opts), 0);

	/* b WRITEs to both regions of the one protection domain */
	fill_pattern(b.buf, 4096, 3);
	assert_int_equal(write_to(&b, (uintptr_t)c.buf, c.mr->rkey, 4096),
			 IBV_WC_SUCCESS);
	assert_memory_equal(c.buf, b.buf, 4096);
	assert_int_equal(write_to(&b, (uintptr_t)c.buf + LEN / 2,
				  on_under->rkey, 4096), IBV_WC_SUCCESS);
	assert_memory_equal(c.buf + LEN / 2, b.buf, 4096);
	/* c WRITEs out of the parent domain's region */
	fill_pattern(c.buf, 512, 4);
	assert_int_equal(write_to(&c, (uintptr_t)b.buf + 8192, b.mr->rkey,
				  512), IBV_WC_SUCCESS);
	assert_memory_equal(b.buf + 8192, c.buf, 512);
	/* a region of another PD: not the QP's to reach */
	assert_int_equal(write_to(&b, (uintptr_t)c.buf + 3 * LEN / 4,
				  on_other->rkey, 64), IBV_WC_REM_ACCESS_ERR);

	assert_int_equal(ibv_dereg_mr(on_other), 0);
	assert_int_equal(ibv_dealloc_pd(other), 0);
	assert_int_equal(ibv_dereg_mr(on_under), 0);
	assert_int_equal(ibv_destroy_qp(c.qp), 0);
	assert_int_equal(ibv_dereg_mr(c.mr), 0);
	assert_int_equal(ibv_destroy_cq(c.scq), 0);
	assert_int_equal(ibv_destroy_cq(c.rcq), 0);
	/* the PD under the parent domain is free once the domain is */
	assert_int_equal(ibv_dealloc_pd(pdom), 0);
	assert_int_equal(ibv_dealloc_pd(under), 0);
	assert_int_equal(ibv_dealloc_td(td), 0);
	assert_int_equal(ibv_close_device(c.ctx), 0);
	free(c.buf);
	ep_close(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rereg_mr),
		cmocka_unit_test(test_rereg_old_place_refused),
		cmocka_unit_test(test_odp),
		cmocka_unit_test(test_parent_domain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
