/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * XRC domains. A domain opened on a file (xrcd_init_attr.fd) is the one
 * every open of that file on the same device shares, as the kernel has
 * it, within this process: droce's devices live in one process, so two
 * processes cannot share a domain. fd -1 opens a domain of its own.
 * XRC SRQs and XRC target QPs belong to a domain; an XRCETH reaches an
 * SRQ through a target QP of the same domain only.
 */

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "droce_verbs_pvt.h"

/* The domains opened on files, by device and inode. */
struct shared_xrcd {
	struct droce_dev *dev;
	dev_t fs_dev;
	ino_t ino;
	uint32_t id;
	uint32_t opens;
	struct shared_xrcd *next;
};

static pthread_mutex_t xrcd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_xrcd *shared;
static uint32_t xrcd_ids;

static struct ibv_xrcd *
open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct droce_dev *dev = to_ctx(context)->dev;
	struct shared_xrcd *s = NULL;
	struct droce_xrcd *x;
	struct stat st;

	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD |
					   IBV_XRCD_INIT_ATTR_OFLAGS))) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	x->xrcd.context = context;
	if (attr->fd < 0) {
		x->id = __atomic_add_fetch(&xrcd_ids, 1, __ATOMIC_RELAXED);
		return &x->xrcd;
	}
	if (fstat(attr->fd, &st) != 0) {
		free(x);
		return NULL;            /* errno from fstat */
	}
	pthread_mutex_lock(&xrcd_lock);
	for (s = shared; s != NULL; s = s->next)
		if (s->dev == dev && s->fs_dev == st.st_dev &&
		    s->ino == st.st_ino)
			break;
	if (s != NULL && (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) &&
	    (attr->oflags & O_CREAT) && (attr->oflags & O_EXCL)) {
		errno = EEXIST;
		goto fail;
	}
	if (s == NULL) {
		if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
		    !(attr->oflags & O_CREAT)) {
			errno = ENOENT;
			goto fail;
		}
		s = calloc(1, sizeof(*s));
		if (s == NULL) {
			errno = ENOMEM;
			goto fail;
		}
		s->dev = dev;
		s->fs_dev = st.st_dev;
		s->ino = st.st_ino;
		s->id = __atomic_add_fetch(&xrcd_ids, 1, __ATOMIC_RELAXED);
		s->next = shared;
		shared = s;
	}
	s->opens++;
	x->id = s->id;
	x->shared = s;
	pthread_mutex_unlock(&xrcd_lock);
	return &x->xrcd;
fail:
	pthread_mutex_unlock(&xrcd_lock);
	free(x);
	return NULL;
}

static int
close_xrcd(struct ibv_xrcd *ibx)
{
	struct droce_xrcd *x = to_xrcd(ibx);
	struct shared_xrcd **p;

	if (__atomic_load_n(&x->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (x->shared != NULL) {
		pthread_mutex_lock(&xrcd_lock);
		if (--x->shared->opens == 0) {
			for (p = &shared; *p != x->shared; p = &(*p)->next)
				;
			*p = x->shared->next;
			free(x->shared);
		}
		pthread_mutex_unlock(&xrcd_lock);
	}
	free(x);
	return 0;
}

static int
get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = to_srq(srq)->eng.srqn;
	return 0;
}

void
droce_verbs_set_xrc_ops(struct droce_context *ctx)
{
	ctx->vctx.open_xrcd = open_xrcd;
	ctx->vctx.close_xrcd = close_xrcd;
	ctx->vctx.get_srq_num = get_srq_num;
}
