/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The CM's control context: at the first rdma_cm call it opens every
 * device, makes its GSI (a UD QP sending and receiving as QP1, through
 * the verbs API's IBV_QP_CREATE_SOURCE_QPN) and starts one thread that
 * sleeps in epoll on the GSI CQs' completion channels and a wake-up
 * eventfd, with the next CM timer as its timeout. MADs come off the
 * engine's lcores through the GSI's receive queue and CQ, like any
 * datagram: the engine knows nothing of the CM.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "droce_cm_pvt.h"

struct cm droce_cm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.epfd = -1,
	.wakefd = -1,
};

static pthread_once_t cm_once = PTHREAD_ONCE_INIT;
static int cm_init_err;
/* the calls up into the layer above, as droce_cm_init() was first given */
static const struct cm_upcalls *cm_up;

void
droce_cm_log(const char *fmt, ...)
{
	static int level = -1;
	va_list ap;

	if (level < 0) {
		const char *v = getenv("DROCE_CM_DEBUG");

		level = v != NULL && *v != '\0' && *v != '0';
	}
	if (!level)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "droce cm %llu.%03llu: ",
		(unsigned long long)(droce_cm_now_ms() / 1000),
		(unsigned long long)(droce_cm_now_ms() % 1000));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

uint64_t
droce_cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
droce_cm_wake(void)
{
	uint64_t one = 1;

	if (droce_cm.wakefd >= 0 &&
	    write(droce_cm.wakefd, &one, sizeof(one)) < 0)
		CM_LOG("wake: %s", strerror(errno));
}

uint64_t
droce_cm_next_tid(void)
{
	return (uint64_t)droce_cm.tid_hi << 32 | droce_cm.tid_lo++;
}

/* ------------------------------------------------------------------------
 * Devices.
 */

struct cm_dev *
droce_cm_dev_by_gid(const union ibv_gid *gid, int *index)
{
	int d, i;

	for (d = 0; d < droce_cm.ndevs; d++) {
		struct cm_dev *dev = &droce_cm.devs[d];

		for (i = 0; i < dev->ngid; i++)
			if (memcmp(&dev->gid[i], gid, sizeof(*gid)) == 0) {
				if (index != NULL)
					*index = i;
				return dev;
			}
	}
	return NULL;
}

static uint8_t *
slot(struct cm_dev *dev, unsigned int i)
{
	return dev->slots + (size_t)i * CM_SLOT_LEN;
}

static int
post_recv(struct cm_dev *dev, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(dev, i),
		.length = CM_SLOT_LEN,
		.lkey = dev->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(dev->gsi, &wr, &bad);
}

static int
gsi_open(struct cm_dev *dev)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = CM_GSI_SEND,
			.max_recv_wr = CM_GSI_RECV,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_SOURCE_QPN,
		.source_qpn = DROCE_GSI_QPN,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = DROCE_GSI_QKEY,
	};
	unsigned int i;

	dev->cc = ibv_create_comp_channel(dev->ctx);
	if (dev->cc == NULL)
		return -errno;
	dev->cq = ibv_create_cq(dev->ctx, CM_GSI_SEND + CM_GSI_RECV, dev,
				dev->cc, 0);
	if (dev->cq == NULL)
		return -errno;
	qa.pd = dev->pd;
	qa.send_cq = dev->cq;
	qa.recv_cq = dev->cq;
	dev->gsi = ibv_create_qp_ex(dev->ctx, &qa);
	if (dev->gsi == NULL)
		return -errno;
	if (ibv_modify_qp(dev->gsi, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) != 0)
		return -errno;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(dev->gsi, &a, IBV_QP_STATE) != 0)
		return -errno;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(dev->gsi, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
		return -errno;
	dev->slots = aligned_alloc(64, (size_t)CM_SLOT_LEN *
				   (CM_GSI_RECV + CM_GSI_SEND));
	if (dev->slots == NULL)
		return -ENOMEM;
	dev->mr = ibv_reg_mr(dev->pd, dev->slots, (size_t)CM_SLOT_LEN *
			     (CM_GSI_RECV + CM_GSI_SEND),
			     IBV_ACCESS_LOCAL_WRITE);
	if (dev->mr == NULL)
		return -errno;
	for (i = 0; i < CM_GSI_RECV; i++)
		if (post_recv(dev, i) != 0)
			return -EIO;
	for (i = 0; i < CM_GSI_SEND; i++)
		dev->send_free[i] = (uint16_t)(CM_GSI_RECV + i);
	dev->nsend_free = CM_GSI_SEND;
	if (ibv_req_notify_cq(dev->cq, 0) != 0)
		return -errno;
	return 0;
}

static int
dev_open(struct cm_dev *dev, struct ibv_device *ibdev)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int i, ret;

	dev->ctx = ibv_open_device(ibdev);
	if (dev->ctx == NULL)
		return -errno;
	if (ibv_query_device(dev->ctx, &da) != 0 ||
	    ibv_query_port(dev->ctx, 1, &pa) != 0)
		return -EIO;
	dev->guid = da.node_guid;
	dev->mtu = pa.active_mtu;
	dev->max_rd_atom = (uint8_t)(da.max_qp_rd_atom > 255 ? 255 :
				     da.max_qp_rd_atom);
	dev->max_init_rd_atom = (uint8_t)(da.max_qp_init_rd_atom > 255 ?
					  255 : da.max_qp_init_rd_atom);
	for (i = 0; i < 4 && i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		static const union ibv_gid zero;

		if (ibv_query_gid(dev->ctx, 1, i, &g) != 0 ||
		    memcmp(&g, &zero, sizeof(g)) == 0)
			break;
		dev->gid[dev->ngid++] = g;
	}
	dev->pd = ibv_alloc_pd(dev->ctx);
	if (dev->pd == NULL)
		return -errno;
	ret = gsi_open(dev);
	if (ret != 0)
		return ret;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = dev };

	if (fcntl(dev->cc->fd, F_SETFL,
		  fcntl(dev->cc->fd, F_GETFL) | O_NONBLOCK) != 0 ||
	    epoll_ctl(droce_cm.epfd, EPOLL_CTL_ADD, dev->cc->fd, &ev) != 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------------
 * MADs out.
 */

void
droce_cm_ah_attr(struct ibv_ah_attr *aa, const union ibv_gid *dgid,
		 uint8_t sgid_index, uint8_t traffic_class)
{
	memset(aa, 0, sizeof(*aa));
	aa->is_global = 1;
	aa->port_num = 1;
	aa->grh.dgid = *dgid;
	aa->grh.sgid_index = sgid_index;
	aa->grh.hop_limit = CM_HOP_LIMIT;
	aa->grh.traffic_class = traffic_class;
}

struct ibv_ah *
droce_cm_ah(struct cm_dev *dev, const union ibv_gid *dgid,
	    uint8_t sgid_index)
{
	struct ibv_ah_attr aa;
	struct cm_ah *c;
	unsigned int i;

	for (i = 0; i < dev->nahs; i++)
		if (memcmp(&dev->ahs[i].dgid, dgid, sizeof(*dgid)) == 0)
			return dev->ahs[i].ah;
	if (dev->nahs < CM_AH_CACHE) {
		c = &dev->ahs[dev->nahs++];
	} else {
		c = &dev->ahs[dev->ah_next++ % CM_AH_CACHE];
		ibv_destroy_ah(c->ah);
	}
	c->dgid = *dgid;
	droce_cm_ah_attr(&aa, dgid, sgid_index, 0);
	c->ah = ibv_create_ah(dev->pd, &aa);
	if (c->ah == NULL) {
		int err = errno;

		*c = dev->ahs[--dev->nahs];
		errno = err;
		return NULL;
	}
	return c->ah;
}

int
droce_cm_send(struct cm_dev *dev, const union ibv_gid *dgid,
	      uint8_t sgid_index, const uint8_t mad[DROCE_MAD_LEN])
{
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_sge sge;
	struct ibv_ah *ah;
	unsigned int i;

	ah = droce_cm_ah(dev, dgid, sgid_index);
	if (ah == NULL || dev->nsend_free == 0) {
		droce_cm.stats.send_failed++;
		return ah == NULL ? -errno : -ENOBUFS;
	}
	i = dev->send_free[--dev->nsend_free];
	memcpy(slot(dev, i), mad, DROCE_MAD_LEN);
	sge.addr = (uintptr_t)slot(dev, i);
	sge.length = DROCE_MAD_LEN;
	sge.lkey = dev->mr->lkey;
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = DROCE_GSI_QPN;
	wr.wr.ud.remote_qkey = DROCE_GSI_QKEY;
	if (ibv_post_send(dev->gsi, &wr, &bad) != 0) {
		dev->send_free[dev->nsend_free++] = (uint16_t)i;
		droce_cm.stats.send_failed++;
		return -EIO;
	}
	droce_cm.stats.mads_sent++;
	return 0;
}

/* ------------------------------------------------------------------------
 * MADs in, and the thread.
 */

/* The sender's GID and the GID it sent to, from the GRH of a datagram. */
static void
grh_gids(const uint8_t *grh, union ibv_gid *sgid, union ibv_gid *dgid)
{
	if (grh[20] == 0x45) {
		/* IPv4: its header in the last 20 bytes of the 40 */
		memset(sgid, 0, sizeof(*sgid));
		memset(dgid, 0, sizeof(*dgid));
		sgid->raw[10] = sgid->raw[11] = 0xff;
		dgid->raw[10] = dgid->raw[11] = 0xff;
		memcpy(&sgid->raw[12], grh + 20 + 12, 4);
		memcpy(&dgid->raw[12], grh + 20 + 16, 4);
	} else {
		memcpy(sgid->raw, grh + 8, 16);
		memcpy(dgid->raw, grh + 24, 16);
	}
}

static void
dev_poll(struct cm_dev *dev)
{
	struct ibv_wc wc[32];
	int n, i;

	do {
		n = ibv_poll_cq(dev->cq, 32, wc);
		for (i = 0; i < n; i++) {
			unsigned int s = (unsigned int)wc[i].wr_id;

			if (s >= CM_GSI_RECV) {
				dev->send_free[dev->nsend_free++] =
					(uint16_t)s;
				continue;
			}
			if (wc[i].status == IBV_WC_SUCCESS &&
			    wc[i].byte_len >= CM_GRH_LEN) {
				union ibv_gid sgid, dgid;
				int index = 0;

				grh_gids(slot(dev, s), &sgid, &dgid);
				droce_cm.stats.mads_received++;
				if (droce_cm_dev_by_gid(&dgid, &index) != dev)
					index = 0;
				droce_cm_rx(dev, &sgid, (uint8_t)index,
					    slot(dev, s) + CM_GRH_LEN,
					    wc[i].byte_len - CM_GRH_LEN);
			}
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				post_recv(dev, s);
		}
	} while (n > 0);
}

static void *
cm_thread(void *arg)
{
	struct epoll_event ev[CM_MAX_DEVS + 1];
	uint64_t next = 0;

	(void)arg;
	for (;;) {
		uint64_t now = droce_cm_now_ms();
		int timeout = next == 0 ? -1 :
			next <= now ? 0 : (int)(next - now);
		int n, i;

		n = epoll_wait(droce_cm.epfd, ev, CM_MAX_DEVS + 1, timeout);
		pthread_mutex_lock(&droce_cm.lock);
		if (!droce_cm.running) {
			pthread_mutex_unlock(&droce_cm.lock);
			break;
		}
		for (i = 0; i < n; i++) {
			struct cm_dev *dev = ev[i].data.ptr;
			struct ibv_cq *cq;
			void *ctx;

			if (dev == NULL) {
				uint64_t v;

				if (read(droce_cm.wakefd, &v, sizeof(v)) < 0)
					CM_LOG("wake read: %s",
					       strerror(errno));
				continue;
			}
			while (ibv_get_cq_event(dev->cc, &cq, &ctx) == 0)
				ibv_ack_cq_events(cq, 1);
			ibv_req_notify_cq(dev->cq, 0);
			dev_poll(dev);
		}
		next = droce_cm_timers(droce_cm_now_ms());
		pthread_mutex_unlock(&droce_cm.lock);
	}
	return NULL;
}

/* Connections still waiting for a DREP. */
static bool
dreps_due(void)
{
	struct cm_conn *c;

	LIST_FOREACH(c, &droce_cm.conns, all)
		if (c->state == CM_DREQ_SENT)
			return true;
	return false;
}

/*
 * The process exits: as the kernel does for one that exits with rdma_cm
 * ids left, each id's connection is ended on the wire (a DREQ for one
 * connected, a REJ for one being set up: the layer above detaches each
 * of its connections), and the DREPs are waited for a little while the
 * CM's thread still runs.
 */
static void
cm_fini(void)
{
	uint64_t end;

	pthread_mutex_lock(&droce_cm.lock);
	droce_cm.up->exit();
	end = droce_cm_now_ms() + CM_EXIT_WAIT_MS;
	while (dreps_due() && droce_cm_now_ms() < end) {
		pthread_mutex_unlock(&droce_cm.lock);
		usleep(1000);
		pthread_mutex_lock(&droce_cm.lock);
	}
	droce_cm.running = false;
	pthread_mutex_unlock(&droce_cm.lock);
	droce_cm_wake();
	pthread_join(droce_cm.thread, NULL);
}

static void
cm_start(void)
{
	struct ibv_device **list;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int n, i, ret;

	droce_cm.up = __atomic_load_n(&cm_up, __ATOMIC_RELAXED);
	if (getrandom(&droce_cm.tid_hi, sizeof(droce_cm.tid_hi), 0) < 0)
		droce_cm.tid_hi = (uint32_t)time(NULL);
	droce_cm.epfd = epoll_create1(EPOLL_CLOEXEC);
	droce_cm.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (droce_cm.epfd < 0 || droce_cm.wakefd < 0 ||
	    epoll_ctl(droce_cm.epfd, EPOLL_CTL_ADD, droce_cm.wakefd,
		      &ev) != 0) {
		cm_init_err = errno;
		return;
	}
	list = ibv_get_device_list(&n);
	if (list == NULL) {
		cm_init_err = errno ? errno : ENODEV;
		return;
	}
	for (i = 0; i < n && droce_cm.ndevs < CM_MAX_DEVS; i++) {
		struct cm_dev *dev = &droce_cm.devs[droce_cm.ndevs];

		ret = dev_open(dev, list[i]);
		if (ret != 0) {
			CM_LOG("%s: no GSI: %s",
			       ibv_get_device_name(list[i]), strerror(-ret));
			continue;
		}
		droce_cm.dev_list[droce_cm.ndevs++] = dev->ctx;
	}
	ibv_free_device_list(list);
	if (droce_cm.ndevs == 0) {
		cm_init_err = ENODEV;
		return;
	}
	droce_cm.running = true;
	ret = pthread_create(&droce_cm.thread, NULL, cm_thread, NULL);
	if (ret != 0) {
		droce_cm.running = false;
		cm_init_err = ret;
		return;
	}
	atexit(cm_fini);
	droce_cm_telemetry_register();
}

int
droce_cm_init(const struct cm_upcalls *up)
{
	const struct cm_upcalls *none = NULL;

	/* the one layer above gives the same calls each time: the first
	 * are the CM's, set before its thread can make any */
	__atomic_compare_exchange_n(&cm_up, &none, up, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	pthread_once(&cm_once, cm_start);
	if (cm_init_err != 0) {
		errno = cm_init_err;
		return -1;
	}
	return 0;
}
