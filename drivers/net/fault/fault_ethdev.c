/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * net_fault: an ethdev that wraps another port and injects faults into
 * the frames passing through it.
 *
 *   --vdev 'net_fault0,port=NAME[,drop=P][,dup=P][,reorder=P][,reorder_us=N]
 *           [,delay=P,delay_us=N][,corrupt=P][,ce=P][,seed=N]
 *           [,dir=rx|tx|both]'
 *
 * port= names an existing ethdev port; the fault port claims it (as its
 * owner, so RTE_ETH_FOREACH_DEV skips it) and drives it: configure,
 * queue setup, start, stop, close, link, MTU, promiscuous and
 * all-multicast modes, MAC address, device info and statistics all go
 * through. Queue i of the fault port is queue i of the wrapped port.
 *
 * Each fault has its own probability and hits each frame independently,
 * on rx and tx unless dir= says otherwise (fault_rxtx.c); ce= marks
 * Congestion Experienced on IPv4 and IPv6 frames that are ECN-capable
 * (ECT(0) or ECT(1)), as a congested router's queue would. The xstats
 * count them per direction, followed by the wrapped port's own xstats
 * with a "wrapped_" prefix.
 *
 * With switch=NAME the port is one of a switch's (fault_switch.c): what
 * it sends goes to the switch's other ports by destination address, and
 * it receives what they send it, through a queue of its own that may be
 * a bottleneck (rate_mbps=, queue=, RED's kmin=, kmax=, pmax=). The
 * wrapped port then carries no frames; the fault port still takes its
 * address, MTU, link and settings from it. The faults apply on the way
 * into the switch (tx) and out of the queue (rx); the queue's counters
 * are the xstats "rx_queue_*".
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "fault_pvt.h"

RTE_LOG_REGISTER(droce_fault_logtype, pmd.net.fault, NOTICE);

static const char * const fault_dir_names[FAULT_DIR_MAX] = {
	[FAULT_RX] = "rx",
	[FAULT_TX] = "tx",
};

static const char * const fault_stat_names[FAULT_STAT_MAX] = {
	[FAULT_STAT_DROPPED] = "dropped",
	[FAULT_STAT_DUPLICATED] = "duplicated",
	[FAULT_STAT_REORDERED] = "reordered",
	[FAULT_STAT_DELAYED] = "delayed",
	[FAULT_STAT_CORRUPTED] = "corrupted",
	[FAULT_STAT_PASSED] = "passed",
	[FAULT_STAT_CE_MARKED] = "ce_marked",
	[FAULT_STAT_UNMAPPED] = "unmapped",
};

static const char * const fault_qstat_names[FAULT_QSTAT_MAX] = {
	[FAULT_QSTAT_QUEUED] = "queued",
	[FAULT_QSTAT_DROPPED] = "dropped",
	[FAULT_QSTAT_MARKED] = "ce_marked",
	[FAULT_QSTAT_SENT] = "sent",
	[FAULT_QSTAT_SENT_BYTES] = "sent_bytes",
	[FAULT_QSTAT_FLOODED] = "flooded",
	[FAULT_QSTAT_BACKLOG_MAX] = "backlog_max",
	[FAULT_QSTAT_BACKLOG_MEAN] = "backlog_mean",
};

#define FAULT_NB_XSTATS (FAULT_DIR_MAX * FAULT_STAT_MAX)

static const char fault_wrapped_prefix[] = "wrapped_";

static struct rte_vdev_driver fault_vdev_driver;

static inline struct fault_port *
fault_port(const struct rte_eth_dev *dev)
{
	return dev->data->dev_private;
}

/* ---- queues ------------------------------------------------------------ */

static void
fault_queue_release(struct rte_eth_dev *dev, enum fault_dir dir,
		    uint16_t queue_id)
{
	void **queues = dir == FAULT_RX ? dev->data->rx_queues :
					  dev->data->tx_queues;
	struct fault_port *fp = fault_port(dev);
	struct fault_queue *q = queues[queue_id];
	unsigned int s;

	if (q == NULL)
		return;
	droce_fault_queue_drain(q, FAULT_RX);	/* port stopped: free them */
	for (s = 0; s < FAULT_STAT_MAX; s++)
		fp->retired[dir][s] += q->stats[s];
	rte_free(q);
	queues[queue_id] = NULL;
}

static void
fault_rx_queue_release(struct rte_eth_dev *dev, uint16_t queue_id)
{
	fault_queue_release(dev, FAULT_RX, queue_id);
}

static void
fault_tx_queue_release(struct rte_eth_dev *dev, uint16_t queue_id)
{
	fault_queue_release(dev, FAULT_TX, queue_id);
}

static int
fault_rx_queue_setup(struct rte_eth_dev *dev, uint16_t queue_id,
		     uint16_t nb_desc, unsigned int socket_id,
		     const struct rte_eth_rxconf *rx_conf,
		     struct rte_mempool *mp)
{
	struct fault_port *fp = fault_port(dev);
	struct fault_queue *q;
	int ret;

	if (fp->swport != NULL) {
		ret = droce_fault_switch_rxq(fp, queue_id, (int)socket_id);
		if (ret != 0)
			return ret;
	}
	q = droce_fault_queue_create(fp, FAULT_RX, queue_id, mp,
				     (int)socket_id);
	if (q == NULL)
		return -ENOMEM;
	ret = rte_eth_rx_queue_setup(fp->wrapped_port, queue_id, nb_desc,
				     socket_id, rx_conf, mp);
	if (ret != 0) {
		FAULT_LOG(ERR, "%s: rx queue %u of %s: %s", dev->data->name,
			  queue_id, fp->params.port, rte_strerror(-ret));
		rte_free(q);
		return ret;
	}
	dev->data->rx_queues[queue_id] = q;
	FAULT_LOG(DEBUG, "%s: rx queue %u on %s queue %u, %s", dev->data->name,
		  queue_id, fp->params.port, queue_id,
		  fp->params.dir & FAULT_DIR_BIT(FAULT_RX) ? "faulty" : "clean");
	return 0;
}

static int
fault_tx_queue_setup(struct rte_eth_dev *dev, uint16_t queue_id,
		     uint16_t nb_desc, unsigned int socket_id,
		     const struct rte_eth_txconf *tx_conf)
{
	struct fault_port *fp = fault_port(dev);
	struct fault_queue *q;
	int ret;

	q = droce_fault_queue_create(fp, FAULT_TX, queue_id, NULL,
				     (int)socket_id);
	if (q == NULL)
		return -ENOMEM;
	ret = rte_eth_tx_queue_setup(fp->wrapped_port, queue_id, nb_desc,
				     socket_id, tx_conf);
	if (ret != 0) {
		FAULT_LOG(ERR, "%s: tx queue %u of %s: %s", dev->data->name,
			  queue_id, fp->params.port, rte_strerror(-ret));
		rte_free(q);
		return ret;
	}
	dev->data->tx_queues[queue_id] = q;
	FAULT_LOG(DEBUG, "%s: tx queue %u on %s queue %u, %s", dev->data->name,
		  queue_id, fp->params.port, queue_id,
		  fp->params.dir & FAULT_DIR_BIT(FAULT_TX) ? "faulty" : "clean");
	return 0;
}

/* ---- device ------------------------------------------------------------ */

static int
fault_dev_configure(struct rte_eth_dev *dev)
{
	struct rte_eth_dev_data *data = dev->data;
	struct fault_port *fp = fault_port(dev);
	struct rte_eth_conf conf = data->dev_conf;
	int ret;

	/* a switch's port spreads what it receives over its queues itself
	 * (RSS); what it wraps carries nothing */
	if (fp->swport != NULL) {
		ret = droce_fault_switch_rss(fp, &conf.rx_adv_conf.rss_conf,
					     conf.rxmode.mq_mode,
					     data->nb_rx_queues);
		if (ret != 0) {
			FAULT_LOG(ERR, "%s: RSS functions %#" PRIx64
				  " or key of %u bytes not had",
				  data->name, conf.rx_adv_conf.rss_conf.rss_hf,
				  conf.rx_adv_conf.rss_conf.rss_key_len);
			return ret;
		}
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
		memset(&conf.rx_adv_conf.rss_conf, 0,
		       sizeof(conf.rx_adv_conf.rss_conf));
	}
	ret = rte_eth_dev_configure(fp->wrapped_port, data->nb_rx_queues,
				    data->nb_tx_queues, &conf);
	if (ret != 0)
		FAULT_LOG(ERR, "%s: configuring %s: %s", data->name,
			  fp->params.port, rte_strerror(-ret));
	return ret;
}

static void
fault_queue_states(struct rte_eth_dev *dev, uint8_t state)
{
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = state;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = state;
}

static int
fault_dev_start(struct rte_eth_dev *dev)
{
	struct fault_port *fp = fault_port(dev);
	int ret;

	ret = rte_eth_dev_start(fp->wrapped_port);
	if (ret != 0) {
		FAULT_LOG(ERR, "%s: starting %s: %s", dev->data->name,
			  fp->params.port, rte_strerror(-ret));
		return ret;
	}
	fault_queue_states(dev, RTE_ETH_QUEUE_STATE_STARTED);
	return 0;
}

static int fault_link_update(struct rte_eth_dev *dev, int wait_to_complete);

/* What the port sent itself and did not receive yet is lost. */
static void
fault_loop_drain(struct fault_port *fp)
{
	struct rte_mbuf *m;

	while (fp->loop != NULL && rte_ring_dequeue(fp->loop, (void **)&m) == 0)
		rte_pktmbuf_free(m);
}

/*
 * Frames still held leave now: tx ones to the wrapped port while it
 * still runs, rx ones are freed. Either way none stays behind.
 */
static int
fault_dev_stop(struct rte_eth_dev *dev)
{
	struct rte_eth_dev_data *data = dev->data;
	struct fault_port *fp = fault_port(dev);
	uint16_t i;
	int ret;

	for (i = 0; i < data->nb_tx_queues; i++)
		if (data->tx_queues[i] != NULL)
			droce_fault_queue_drain(data->tx_queues[i], FAULT_TX);
	for (i = 0; i < data->nb_rx_queues; i++)
		if (data->rx_queues[i] != NULL)
			droce_fault_queue_drain(data->rx_queues[i], FAULT_RX);
	fault_loop_drain(fp);
	ret = rte_eth_dev_stop(fp->wrapped_port);
	fault_queue_states(dev, RTE_ETH_QUEUE_STATE_STOPPED);
	fault_link_update(dev, 0);
	return ret;
}

/* The wrapped port goes with us; ethdev then releases this one. */
static int
fault_dev_close(struct rte_eth_dev *dev)
{
	struct rte_eth_dev_data *data = dev->data;
	struct fault_port *fp = fault_port(dev);
	uint16_t i;
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	for (i = 0; i < data->nb_rx_queues; i++)
		fault_rx_queue_release(dev, i);
	for (i = 0; i < data->nb_tx_queues; i++)
		fault_tx_queue_release(dev, i);
	droce_fault_switch_leave(fp);
	fault_loop_drain(fp);
	rte_ring_free(fp->loop);
	fp->loop = NULL;
	/* should the close fail, the port is at least free again */
	rte_eth_dev_owner_unset(fp->wrapped_port, fp->owner_id);
	ret = rte_eth_dev_close(fp->wrapped_port);
	if (ret != 0)
		FAULT_LOG(ERR, "%s: closing %s: %s", data->name,
			  fp->params.port, rte_strerror(-ret));
	else
		FAULT_LOG(INFO, "%s: closed, and %s with it", data->name,
			  fp->params.port);
	return ret;
}

/*
 * Link down and up cut and mend the wire: while down every frame is
 * dropped both ways, whether the wrapped port can set its link or not,
 * and the link reads down.
 */
static int
fault_dev_set_link_up(struct rte_eth_dev *dev)
{
	struct fault_port *fp = fault_port(dev);
	int ret = rte_eth_dev_set_link_up(fp->wrapped_port);

	__atomic_store_n(&fp->cut, false, __ATOMIC_RELAXED);
	fault_link_update(dev, 0);
	return ret == -ENOTSUP ? 0 : ret;
}

static int
fault_dev_set_link_down(struct rte_eth_dev *dev)
{
	struct fault_port *fp = fault_port(dev);
	int ret = rte_eth_dev_set_link_down(fp->wrapped_port);

	__atomic_store_n(&fp->cut, true, __ATOMIC_RELAXED);
	fault_link_update(dev, 0);
	return ret == -ENOTSUP ? 0 : ret;
}

/* A switch's port with a line rate in Mb/s: its link is that fast. */
static void
fault_link_speed(const struct fault_port *fp, struct rte_eth_link *link)
{
	if (fp->swport != NULL && fp->params.rate != 0 &&
	    !fp->params.rate_pps)
		link->link_speed = (uint32_t)fp->params.rate;
}

/* Returns 0 if the link status changed, -1 if not (ethdev's convention). */
static int
fault_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	struct fault_port *fp = fault_port(dev);
	struct rte_eth_link link, old;
	int ret;

	memset(&link, 0, sizeof(link));
	if (wait_to_complete)
		ret = rte_eth_link_get(fp->wrapped_port, &link);
	else
		ret = rte_eth_link_get_nowait(fp->wrapped_port, &link);
	if (ret != 0)
		return ret;
	if (__atomic_load_n(&fp->cut, __ATOMIC_RELAXED))
		link.link_status = RTE_ETH_LINK_DOWN;
	fault_link_speed(fp, &link);
	/* readers load dev_link as one 64-bit word */
	__atomic_exchange(&dev->data->dev_link, &link, &old, __ATOMIC_SEQ_CST);
	return old.link_status == link.link_status ? -1 : 0;
}

static int
fault_promiscuous_enable(struct rte_eth_dev *dev)
{
	return rte_eth_promiscuous_enable(fault_port(dev)->wrapped_port);
}

static int
fault_promiscuous_disable(struct rte_eth_dev *dev)
{
	return rte_eth_promiscuous_disable(fault_port(dev)->wrapped_port);
}

static int
fault_allmulticast_enable(struct rte_eth_dev *dev)
{
	return rte_eth_allmulticast_enable(fault_port(dev)->wrapped_port);
}

static int
fault_allmulticast_disable(struct rte_eth_dev *dev)
{
	return rte_eth_allmulticast_disable(fault_port(dev)->wrapped_port);
}

/*
 * The port takes any address (its loopback turns back what is sent to
 * it): a wrapped port that cannot change its own is made promiscuous,
 * to let frames to the new one in.
 */
static int
fault_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *addr)
{
	uint16_t wrapped = fault_port(dev)->wrapped_port;
	int ret = rte_eth_dev_default_mac_addr_set(wrapped, addr);

	if (ret == -ENOTSUP)
		ret = rte_eth_promiscuous_enable(wrapped);
	return ret;
}

static int
fault_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	return rte_eth_dev_set_mtu(fault_port(dev)->wrapped_port, mtu);
}

/* Offloads that cannot pass through: no rte_security, no split buffers. */
#define FAULT_RX_OFFLOAD_NONE (RTE_ETH_RX_OFFLOAD_SECURITY | \
			       RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT)
#define FAULT_TX_OFFLOAD_NONE (RTE_ETH_TX_OFFLOAD_SECURITY)

static int
fault_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct fault_port *fp = fault_port(dev);
	struct rte_eth_dev_info w;
	int ret;

	ret = rte_eth_dev_info_get(fp->wrapped_port, &w);
	if (ret != 0)
		return ret;

	info->min_mtu = w.min_mtu;
	info->max_mtu = w.max_mtu;
	info->min_rx_bufsize = w.min_rx_bufsize;
	info->max_rx_pktlen = w.max_rx_pktlen;
	info->max_lro_pkt_size = w.max_lro_pkt_size;
	info->max_rx_queues = RTE_MIN(w.max_rx_queues, RTE_MAX_QUEUES_PER_PORT);
	info->max_tx_queues = RTE_MIN(w.max_tx_queues, RTE_MAX_QUEUES_PER_PORT);
	/* one address (mac_addr_set), no filtering tables, pools or VFs */
	info->max_mac_addrs = 1;
	info->rx_offload_capa = w.rx_offload_capa & ~FAULT_RX_OFFLOAD_NONE;
	info->tx_offload_capa = w.tx_offload_capa & ~FAULT_TX_OFFLOAD_NONE;
	info->rx_queue_offload_capa =
		w.rx_queue_offload_capa & ~FAULT_RX_OFFLOAD_NONE;
	info->tx_queue_offload_capa =
		w.tx_queue_offload_capa & ~FAULT_TX_OFFLOAD_NONE;
	info->reta_size = w.reta_size;
	info->hash_key_size = w.hash_key_size;
	info->flow_type_rss_offloads = w.flow_type_rss_offloads;
	if (fp->swport != NULL) {
		/* a switch's port has RSS of its own (fault_switch.c) */
		info->max_rx_queues = RTE_MIN(info->max_rx_queues,
					      FAULT_SWITCH_RXQ);
		info->reta_size = FAULT_RETA_SIZE;
		info->hash_key_size = FAULT_RSS_KEY_LEN;
		info->flow_type_rss_offloads = FAULT_RSS_OFFLOADS;
	}
	info->default_rxconf = w.default_rxconf;
	info->default_txconf = w.default_txconf;
	info->rx_desc_lim = w.rx_desc_lim;
	info->tx_desc_lim = w.tx_desc_lim;
	info->speed_capa = w.speed_capa;
	info->default_rxportconf = w.default_rxportconf;
	info->default_txportconf = w.default_txportconf;
	info->dev_capa = 0;	/* no runtime queue setup, no shared rxq */
	return 0;
}

static int
fault_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats
		DROCE_ETH_STATS_GET_QSTATS)
{
	return rte_eth_stats_get(fault_port(dev)->wrapped_port, stats);
}

static int
fault_stats_reset(struct rte_eth_dev *dev)
{
	return rte_eth_stats_reset(fault_port(dev)->wrapped_port);
}

/* ---- xstats ------------------------------------------------------------ */

static void
fault_stats_sum(const struct rte_eth_dev *dev,
		uint64_t sum[FAULT_DIR_MAX][FAULT_STAT_MAX])
{
	const struct rte_eth_dev_data *data = dev->data;
	const struct fault_port *fp = fault_port(dev);
	const struct fault_queue *q;
	unsigned int s;
	uint16_t i;

	memcpy(sum, fp->retired, sizeof(fp->retired));
	for (i = 0; i < data->nb_rx_queues; i++) {
		q = data->rx_queues[i];
		for (s = 0; q != NULL && s < FAULT_STAT_MAX; s++)
			sum[FAULT_RX][s] += q->stats[s];
	}
	for (i = 0; i < data->nb_tx_queues; i++) {
		q = data->tx_queues[i];
		for (s = 0; q != NULL && s < FAULT_STAT_MAX; s++)
			sum[FAULT_TX][s] += q->stats[s];
	}
}

/* Our own xstats: the faults', then a switch port's queue's. */
static unsigned int
fault_own_xstats(const struct fault_port *fp)
{
	return FAULT_NB_XSTATS + (fp->swport != NULL ? FAULT_QSTAT_MAX : 0);
}

/* The wrapped port's count of xstats, 0 if it has none to give. */
static unsigned int
fault_wrapped_xstats(const struct fault_port *fp)
{
	int n = rte_eth_xstats_get_names(fp->wrapped_port, NULL, 0);

	return n > 0 ? (unsigned int)n : 0;
}

static int
fault_xstats_get_names(struct rte_eth_dev *dev,
		       struct rte_eth_xstat_name *names, unsigned int size)
{
	const size_t plen = sizeof(fault_wrapped_prefix) - 1;
	struct fault_port *fp = fault_port(dev);
	unsigned int total, own, d, s, i;
	int got;

	own = fault_own_xstats(fp);
	total = own + fault_wrapped_xstats(fp);
	if (names == NULL || size < total)
		return (int)total;

	for (d = 0; d < FAULT_DIR_MAX; d++)
		for (s = 0; s < FAULT_STAT_MAX; s++)
			snprintf(names[d * FAULT_STAT_MAX + s].name,
				 sizeof(names[0].name), "%s_fault_%s",
				 fault_dir_names[d], fault_stat_names[s]);
	for (s = 0; s < own - FAULT_NB_XSTATS; s++)
		snprintf(names[FAULT_NB_XSTATS + s].name,
			 sizeof(names[0].name), "rx_queue_%s",
			 fault_qstat_names[s]);

	got = rte_eth_xstats_get_names(fp->wrapped_port, names + own,
				       size - own);
	if (got < 0 || (unsigned int)got > size - own)
		got = 0;	/* it grew meanwhile: leave it out this time */
	for (i = own; i < own + (unsigned int)got; i++) {
		char *name = names[i].name;

		memmove(name + plen, name, sizeof(names[i].name) - plen - 1);
		memcpy(name, fault_wrapped_prefix, plen);
		name[sizeof(names[i].name) - 1] = '\0';
	}
	return (int)(own + (unsigned int)got);
}

static int
fault_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xstats,
		 unsigned int n)
{
	uint64_t sum[FAULT_DIR_MAX][FAULT_STAT_MAX];
	uint64_t qsum[FAULT_QSTAT_MAX];
	struct fault_port *fp = fault_port(dev);
	unsigned int total, own, d, s, i;
	int got;

	own = fault_own_xstats(fp);
	total = own + fault_wrapped_xstats(fp);
	if (xstats == NULL || n < total)
		return (int)total;

	fault_stats_sum(dev, sum);
	for (d = 0; d < FAULT_DIR_MAX; d++) {
		for (s = 0; s < FAULT_STAT_MAX; s++) {
			i = d * FAULT_STAT_MAX + s;
			xstats[i].id = i;
			xstats[i].value = sum[d][s];
		}
	}
	droce_fault_switch_stats(fp, qsum);
	for (s = 0; s < own - FAULT_NB_XSTATS; s++) {
		xstats[FAULT_NB_XSTATS + s].id = FAULT_NB_XSTATS + s;
		xstats[FAULT_NB_XSTATS + s].value = qsum[s];
	}

	got = rte_eth_xstats_get(fp->wrapped_port, xstats + own, n - own);
	if (got < 0 || (unsigned int)got > n - own)
		got = 0;
	for (i = own; i < own + (unsigned int)got; i++)
		xstats[i].id = i;
	return (int)(own + (unsigned int)got);
}

static int
fault_xstats_reset(struct rte_eth_dev *dev)
{
	struct rte_eth_dev_data *data = dev->data;
	struct fault_port *fp = fault_port(dev);
	struct fault_queue *q;
	uint16_t i;

	memset(fp->retired, 0, sizeof(fp->retired));
	droce_fault_switch_stats_reset(fp);
	for (i = 0; i < data->nb_rx_queues; i++) {
		q = data->rx_queues[i];
		if (q != NULL)
			memset(q->stats, 0, sizeof(q->stats));
	}
	for (i = 0; i < data->nb_tx_queues; i++) {
		q = data->tx_queues[i];
		if (q != NULL)
			memset(q->stats, 0, sizeof(q->stats));
	}
	return rte_eth_xstats_reset(fp->wrapped_port);
}

static const struct eth_dev_ops fault_ops = {
	.dev_configure = fault_dev_configure,
	.dev_start = fault_dev_start,
	.dev_stop = fault_dev_stop,
	.dev_set_link_up = fault_dev_set_link_up,
	.dev_set_link_down = fault_dev_set_link_down,
	.dev_close = fault_dev_close,
	.link_update = fault_link_update,
	.promiscuous_enable = fault_promiscuous_enable,
	.promiscuous_disable = fault_promiscuous_disable,
	.allmulticast_enable = fault_allmulticast_enable,
	.allmulticast_disable = fault_allmulticast_disable,
	.mac_addr_set = fault_mac_addr_set,
	.mtu_set = fault_mtu_set,
	.stats_get = fault_stats_get,
	.stats_reset = fault_stats_reset,
	.xstats_get = fault_xstats_get,
	.xstats_reset = fault_xstats_reset,
	.xstats_get_names = fault_xstats_get_names,
	.dev_infos_get = fault_dev_infos_get,
	.rx_queue_setup = fault_rx_queue_setup,
	.rx_queue_release = fault_rx_queue_release,
	.tx_queue_setup = fault_tx_queue_setup,
	.tx_queue_release = fault_tx_queue_release,
};

const struct fault_port *
droce_fault_port_of(uint16_t port)
{
	const struct rte_eth_dev *dev;

	if (!rte_eth_dev_is_valid_port(port))
		return NULL;
	dev = &rte_eth_devices[port];
	return dev->dev_ops == &fault_ops ? fault_port(dev) : NULL;
}

/* ---- vdev -------------------------------------------------------------- */

static void
fault_log_params(const char *name, uint16_t port_id,
		 const struct fault_params *p, uint16_t wrapped)
{
	static const char * const dirs[] = { "none", "rx", "tx", "both" };

	FAULT_LOG(INFO, "%s: port %u wraps port %u (%s): drop=%g dup=%g "
		  "reorder=%g reorder_us=%" PRIu64 " delay=%g delay_us=%"
		  PRIu64 " corrupt=%g ce=%g seed=%" PRIu64 " dir=%s",
		  name, port_id, wrapped, p->port,
		  p->prob[FAULT_DROP], p->prob[FAULT_DUP],
		  p->prob[FAULT_REORDER], p->reorder_us,
		  p->prob[FAULT_DELAY], p->delay_us,
		  p->prob[FAULT_CORRUPT], p->prob[FAULT_CE], p->seed,
		  dirs[p->dir & 3]);
	if (p->sw[0] != '\0' && p->rate == 0)
		FAULT_LOG(INFO, "%s: a port of switch %s, its queue without "
			  "a rate", name, p->sw);
	else if (p->sw[0] != '\0')
		FAULT_LOG(INFO, "%s: a port of switch %s, its queue: rate %"
			  PRIu64 " %s, queue %" PRIu64 ", RED kmin %" PRIu64
			  " kmax %" PRIu64 " pmax %g", name, p->sw, p->rate,
			  p->rate_pps ? "frames/s" : "Mb/s", p->queue,
			  p->kmin, p->kmax, p->pmax);
}

/* Set up a freshly allocated port as the face of the wrapped one. */
static void
fault_dev_fill(struct rte_eth_dev *dev, struct rte_vdev_device *vdev,
	       struct fault_port *fp, struct rte_ether_addr *mac,
	       uint16_t mtu, int socket)
{
	struct rte_eth_dev_data *data = dev->data;
	uint16_t wrapped = fp->wrapped_port;

	fp->port_id = data->port_id;
	data->dev_private = fp;		/* ethdev frees these two */
	data->mac_addrs = mac;
	data->numa_node = socket;
	data->mtu = mtu;
	/* (down until the first link update if the wrapped port says
	 * nothing now) */
	if (rte_eth_link_get_nowait(wrapped, &data->dev_link) != 0)
		memset(&data->dev_link, 0, sizeof(data->dev_link));
	fault_link_speed(fp, &data->dev_link);
	data->promiscuous = rte_eth_promiscuous_get(wrapped) == 1;
	data->all_multicast = rte_eth_allmulticast_get(wrapped) == 1;
	dev->device = &vdev->device;
	dev->dev_ops = &fault_ops;
	/* (a switch's port always takes the way through the switch) */
	dev->rx_pkt_burst = fp->params.dir & FAULT_DIR_BIT(FAULT_RX) ||
		fp->swport != NULL ? droce_fault_rx_burst : droce_fault_rx_pass;
	dev->tx_pkt_burst = fp->params.dir & FAULT_DIR_BIT(FAULT_TX) ||
		fp->swport != NULL || fp->params.dma ?
		droce_fault_tx_burst : droce_fault_tx_pass;
	dev->tx_pkt_prepare = droce_fault_tx_prepare;
}

/* The ring of a wrapped port's frames to its own address. */
static int
fault_loop_create(struct fault_port *fp, int socket)
{
	static unsigned int made;
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "fault_loop%u",
		 __atomic_fetch_add(&made, 1, __ATOMIC_RELAXED));
	fp->loop = rte_ring_create(name, FAULT_LOOP_SIZE, socket, 0);
	return fp->loop != NULL ? 0 : -rte_errno;
}

static int
fault_probe(struct rte_vdev_device *vdev)
{
	const char *name = vdev->device.name;
	struct rte_eth_dev_owner owner;
	struct rte_ether_addr *mac = NULL;
	struct fault_port *fp = NULL;
	struct fault_params params;
	struct rte_eth_dev *dev;
	uint16_t wrapped, mtu;
	int socket, ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		FAULT_LOG(ERR, "%s: primary process only", name);
		return -ENOTSUP;
	}
	ret = droce_fault_abi_check_vdev(vdev, &fault_vdev_driver);
	if (ret != 0)
		return ret;
	ret = droce_fault_parse_args(vdev->device.devargs != NULL ?
				     vdev->device.devargs->args : "", &params);
	if (ret != 0)
		return ret;
	if (rte_eth_dev_get_port_by_name(params.port, &wrapped) != 0) {
		FAULT_LOG(ERR, "%s: no port named '%s' to wrap", name,
			  params.port);
		return -ENODEV;
	}
	ret = droce_fault_abi_check_port(wrapped);
	if (ret != 0)
		return ret;

	/* the application is to use F only: F owns what it drives */
	memset(&owner, 0, sizeof(owner));
	rte_strlcpy(owner.name, name, sizeof(owner.name));
	ret = rte_eth_dev_owner_new(&owner.id);
	if (ret != 0)
		return ret;
	if (rte_eth_dev_owner_set(wrapped, &owner) != 0) {
		FAULT_LOG(ERR, "%s: port %s already has an owner", name,
			  params.port);
		return -EBUSY;
	}

	socket = rte_eth_dev_socket_id(wrapped);
	fp = rte_zmalloc_socket(name, sizeof(*fp), RTE_CACHE_LINE_SIZE, socket);
	mac = rte_zmalloc_socket(name, sizeof(*mac), 0, socket);
	if (fp == NULL || mac == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = rte_eth_macaddr_get(wrapped, mac);
	if (ret == 0)
		ret = rte_eth_dev_get_mtu(wrapped, &mtu);
	if (ret != 0)
		goto fail;
	fp->params = params;
	rte_rwlock_init(&fp->dma.lock);
	fp->wrapped_port = wrapped;
	fp->owner_id = owner.id;
	if (params.sw[0] != '\0') {
		ret = droce_fault_switch_join(fp, socket);
		if (ret != 0)
			goto fail;
	} else {
		ret = fault_loop_create(fp, socket);
		if (ret != 0)
			goto fail;
	}

	dev = rte_eth_dev_allocate(name);
	if (dev == NULL) {
		FAULT_LOG(ERR, "%s: no ethdev slot for it", name);
		ret = -ENOMEM;
		goto fail;
	}
	ret = droce_fault_abi_check_new_port(dev, name, wrapped);
	if (ret != 0) {
		rte_eth_dev_release_port(dev);
		goto fail;
	}

	fault_dev_fill(dev, vdev, fp, mac, mtu, socket);
	rte_eth_dev_probing_finish(dev);

	/* what was written above must read back through the public API */
	ret = droce_fault_abi_check_port(fp->port_id);
	if (ret != 0) {
		droce_fault_switch_leave(fp);
		rte_eth_dev_release_port(dev);
		rte_eth_dev_owner_unset(wrapped, owner.id);
		return ret;
	}
	fault_log_params(name, fp->port_id, &params, wrapped);
	return 0;

fail:
	if (fp != NULL) {
		droce_fault_switch_leave(fp);
		rte_ring_free(fp->loop);
	}
	rte_free(mac);
	rte_free(fp);
	rte_eth_dev_owner_unset(wrapped, owner.id);
	return ret;
}

static int
fault_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *dev = rte_eth_dev_allocated(vdev->device.name);
	uint16_t port_id;
	int ret;

	if (dev == NULL)
		return 0;	/* closed already */
	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return rte_eth_dev_release_port(dev);
	port_id = dev->data->port_id;
	if (dev->data->dev_started)
		rte_eth_dev_stop(port_id);
	ret = rte_eth_dev_close(port_id);
	if (ret != 0)
		FAULT_LOG(WARNING, "%s: close: %s", vdev->device.name,
			  rte_strerror(-ret));
	return 0;	/* the port is released either way */
}

static struct rte_vdev_driver fault_vdev_driver = {
	.probe = fault_probe,
	.remove = fault_remove,
	.dma_map = droce_fault_dma_map,
	.dma_unmap = droce_fault_dma_unmap,
};

RTE_PMD_REGISTER_VDEV(net_fault, fault_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_fault,
	"port=<ethdev name> "
	"drop=<0..1> "
	"dup=<0..1> "
	"reorder=<0..1> "
	"delay=<0..1> "
	"delay_us=<int> "
	"reorder_us=<int> "
	"corrupt=<0..1> "
	"ce=<0..1> "
	"dma=<0|1> "
	"seed=<uint64> "
	"dir=rx|tx|both "
	"switch=<name> "
	"rate_mbps=<int> "
	"rate_pps=<int> "
	"queue=<int> "
	"kmin=<int> "
	"kmax=<int> "
	"pmax=<0..1>");
