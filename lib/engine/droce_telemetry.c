/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The engine's counters through DPDK telemetry, in every process that
 * runs the engine:
 *
 *   /droce/devices                 names of the devices
 *   /droce/dev_stats,NAME          a device: addresses, link, its engine
 *                                  lcores, ECN and DCQCN's parameters,
 *                                  counters (its shards' sums)
 *   /droce/qps,NAME                QPNs of the device's QPs
 *   /droce/qp_stats,NAME,QPN       a QP: state, peer, PSNs, DCQCN's rate
 *                                  and alpha, counters
 *   /droce/resources,NAME          what a device holds of its tables
 *                                  and of the mbuf pool
 *
 * Telemetry answers from a thread of its own. Device counters are 64-bit
 * words the engine lcore alone writes, read as they are: a statistic may
 * be a few packets old, never torn. The QP table changes as QPs come and
 * go, so QPs are looked at on the lcore that owns them
 * (droce_shard_call()), each shard's on its own. The engine stops its
 * lcores at exit: a request that comes later is refused instead of
 * waiting for them.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_rwlock.h>
#include <rte_telemetry.h>

#include "droce_dpdk_compat.h"

#include "droce_engine_pvt.h"
#include "droce_telemetry.h"

/* held for reading around a control call, for writing to close */
static rte_rwlock_t tel_lock = RTE_RWLOCK_INITIALIZER;
static bool tel_closed;

/* What /droce/qp_stats reports, copied on the engine lcore. */
struct tel_qp {
	uint32_t qpn;
	bool found;
	enum ibv_qp_state state;
	enum ibv_qp_type type;
	uint32_t dest_qpn;
	uint8_t dgid[16];
	uint32_t mtu;
	uint32_t sq_psn;            /* next PSN the requester sends */
	uint32_t rq_psn;            /* next PSN the responder expects */
	uint64_t cc_rate, cc_target; /* DCQCN: kbit/s */
	uint32_t cc_alpha;          /* of 65536 */
	struct droce_qp_stats stats;
};

/* QPNs of a device's QPs, gathered on the engine lcore. */
struct tel_qpns {
	uint32_t n;
	uint32_t qpn[RTE_TEL_MAX_ARRAY_ENTRIES];
};

static struct droce_dev *
dev_by_name(const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < droce_eng.ndevs; i++) {
		struct droce_dev *dev = droce_eng.devs[i];

		if (strlen(dev->name) == len &&
		    strncmp(dev->name, name, len) == 0)
			return dev;
	}
	return NULL;
}

/*
 * The device a command's parameter names.
 * @return 0, -EINVAL without a parameter, -ENODEV if no device has that
 * name.
 */
static int
dev_param(const char *params, struct droce_dev **dev)
{
	if (params == NULL)
		return -EINVAL;
	*dev = dev_by_name(params, strlen(params));
	return *dev != NULL ? 0 : -ENODEV;
}

/* droce_shard_call(), unless the engine is stopping. */
static int
tel_call(struct droce_shard *sh, int (*fn)(struct droce_shard *, void *),
	 void *arg)
{
	int ret = -ESHUTDOWN;

	rte_rwlock_read_lock(&tel_lock);
	if (!tel_closed)
		ret = droce_shard_call(sh, fn, arg);
	rte_rwlock_read_unlock(&tel_lock);
	return ret;
}

/* tel_call() of @p first on the device's primary, then of @p rest on
 * each of its other shards. */
static int
tel_call_shards(struct droce_dev *dev,
		int (*first)(struct droce_shard *, void *),
		int (*rest)(struct droce_shard *, void *), void *arg)
{
	int ret = -ESHUTDOWN;

	rte_rwlock_read_lock(&tel_lock);
	if (!tel_closed)
		ret = droce_dev_call_shards(dev, first, rest, arg);
	rte_rwlock_read_unlock(&tel_lock);
	return ret;
}

static void
gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	if (inet_ntop(AF_INET6, gid, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

static int
tel_devices(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (i = 0; i < droce_eng.ndevs; i++)
		rte_tel_data_add_array_string(d, droce_eng.devs[i]->name);
	return 0;
}

/* Every device counter, under its name (droce_counters.h). */
static void
add_dev_counters(struct rte_tel_data *d, const struct droce_dev_stats *s)
{
#define ADD_COUNTER(name, desc) droce_tel_dict_u64(d, #name, s->name);
	DROCE_DEV_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
}

/* Every QP counter, under its name (droce_counters.h). */
static void
add_qp_counters(struct rte_tel_data *d, const struct droce_qp_stats *s)
{
#define ADD_COUNTER(name, desc) droce_tel_dict_u64(d, #name, s->name);
	DROCE_QP_COUNTERS(ADD_COUNTER)
#undef ADD_COUNTER
}

/* The DPDK lcore ids of the shards of @p dev, "1,2,...". */
static void
lcores_str(const struct droce_dev *dev, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < dev->nshards && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u",
					i != 0 ? "," : "",
					dev->shards[i]->lc->lcore_id);
}

/* ECN and DCQCN's parameters of a device (set as it starts). */
static void
add_dcqcn(struct rte_tel_data *d, const struct droce_dev *dev)
{
	const struct droce_dcqcn_params *p = &dev->cc;

	droce_tel_dict_u64(d, "dscp", dev->dscp);
	rte_tel_data_add_dict_string(d, "ecn",
				     droce_eng.cfg.ecn ? "on" : "off");
	droce_tel_dict_u64(d, "cnp_interval_us",
			   droce_eng.cfg.cnp_interval_us);
	droce_tel_dict_u64(d, "dcqcn_rate_max_kbps", p->rate_max);
	droce_tel_dict_u64(d, "dcqcn_rate_min_kbps", p->rate_min);
	droce_tel_dict_u64(d, "dcqcn_ai_kbps", p->rate_ai);
	droce_tel_dict_u64(d, "dcqcn_hai_kbps", p->rate_hai);
	droce_tel_dict_u64(d, "dcqcn_g_shift", p->g_shift);
	droce_tel_dict_u64(d, "dcqcn_alpha_period_us",
			   p->alpha_period_us);
	droce_tel_dict_u64(d, "dcqcn_increase_period_us",
			   p->increase_period_us);
	droce_tel_dict_u64(d, "dcqcn_byte_counter", p->byte_counter);
	droce_tel_dict_u64(d, "dcqcn_fast_recovery", p->fast_recovery);
}

static int
tel_dev_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_dev_stats s;
	struct droce_dev_attr a;
	struct droce_dev *dev;
	char buf[INET6_ADDRSTRLEN];
	int ret;

	RTE_SET_USED(cmd);
	ret = dev_param(params, &dev);
	if (ret != 0)
		return ret;
	droce_dev_query(dev, &a);
	droce_dev_stats(dev, &s);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", a.name);
	rte_ether_format_addr(buf, sizeof(buf), &a.mac);
	rte_tel_data_add_dict_string(d, "mac", buf);
	if (dev->ipv4 != 0 && inet_ntop(AF_INET, &dev->ipv4, buf,
					sizeof(buf)) != NULL)
		rte_tel_data_add_dict_string(d, "ipv4", buf);
	if (a.gid_count > 0) {
		gid_str(a.gid[0].raw, buf, sizeof(buf));
		rte_tel_data_add_dict_string(d, "gid0", buf);
	}
	rte_tel_data_add_dict_int(d, "port_id", a.port_id);
	rte_tel_data_add_dict_int(d, "lcore", (int)a.lcore);
	lcores_str(dev, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "lcores", buf);
	/* frames spread over the lcores by the port's RSS: "rss", or the
	 * software hand-off alone: "handoff" (one lcore: "none") */
	rte_tel_data_add_dict_string(d, "rx_spread",
		dev->nshards < 2 ? "none" :
		dev->rss ? "rss" : "handoff");
	/* payloads sent in place from any memory ("va"), from regions
	 * mapped for the port's DMA ("dma_map"), or copied ("off") */
	rte_tel_data_add_dict_string(d, "zero_copy",
		!dev->zero_copy || droce_eng.cfg.zero_copy_min == 0 ?
		"off" : dev->dma_map ? "dma_map" : "va");
	rte_tel_data_add_dict_int(d, "eth_mtu", a.eth_mtu);
	rte_tel_data_add_dict_int(d, "active_mtu",
				  (int)droce_mtu_bytes(a.active_mtu));
	rte_tel_data_add_dict_string(d, "link", a.link_up ? "up" : "down");
	droce_tel_dict_u64(d, "link_speed_mbps", a.link_speed_mbps);
	add_dcqcn(d, dev);
	add_dev_counters(d, &s);
	return 0;
}

static int
tel_resources(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_dev_resources r;
	struct droce_dev *dev;
	int ret;

	RTE_SET_USED(cmd);
	ret = dev_param(params, &dev);
	if (ret != 0)
		return ret;
	ret = tel_call_shards(dev, droce_shard_count_primary,
			      droce_shard_count, &r);
	if (ret < 0)
		return ret;
	rte_tel_data_start_dict(d);
#define ADD_GAUGE(name, desc) droce_tel_dict_u64(d, #name, r.name);
	DROCE_DEV_RESOURCES(ADD_GAUGE)
#undef ADD_GAUGE
	return 0;
}

static int
gather_qpns(struct droce_shard *sh, void *arg)
{
	struct tel_qpns *q = arg;
	uint32_t i;

	for (i = 0; i < sh->nlive && q->n < RTE_DIM(q->qpn); i++)
		q->qpn[q->n++] = sh->live[i]->cfg.qp_num;
	return 0;
}

static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_qpns *q;
	struct droce_dev *dev;
	uint32_t i;
	int ret;

	RTE_SET_USED(cmd);
	ret = dev_param(params, &dev);
	if (ret != 0)
		return ret;
	q = malloc(sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	q->n = 0;
	ret = tel_call_shards(dev, gather_qpns, gather_qpns, q);
	if (ret == 0) {
		rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
		for (i = 0; i < q->n; i++)
			droce_tel_array_u64(d, q->qpn[i]);
	}
	free(q);
	return ret;
}

static int
copy_qp(struct droce_shard *sh, void *arg)
{
	struct tel_qp *t = arg;
	const struct droce_qp_eng *qp;
	uint64_t cuts;

	qp = droce_qp_by_qpn(sh, t->qpn);
	if (qp == NULL)
		return 0;
	t->found = true;
	t->state = qp->state;
	t->type = qp->cfg.type;
	t->dest_qpn = qp->dest_qpn;
	memcpy(t->dgid, qp->path.dgid, sizeof(t->dgid));
	t->mtu = qp->mtu;
	t->sq_psn = qp->req.psn;
	t->rq_psn = qp->resp.psn;
	droce_qp_cc_read(qp, &t->cc_rate, &t->cc_target, &t->cc_alpha,
			 &cuts);
	t->stats = qp->stats;
	return 0;
}

static int
tel_qp_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct droce_dev *dev;
	struct tel_qp t;
	const char *comma;
	char buf[INET6_ADDRSTRLEN];
	char *end;
	unsigned long qpn;
	int ret;

	RTE_SET_USED(cmd);
	if (params == NULL || (comma = strchr(params, ',')) == NULL)
		return -EINVAL;
	dev = dev_by_name(params, (size_t)(comma - params));
	if (dev == NULL)
		return -ENODEV;
	errno = 0;
	qpn = strtoul(comma + 1, &end, 0);
	if (errno != 0 || end == comma + 1 || *end != '\0' || qpn > 0xffffff)
		return -EINVAL;
	memset(&t, 0, sizeof(t));
	t.qpn = (uint32_t)qpn;
	ret = tel_call(droce_dev_owner(dev, t.qpn), copy_qp, &t);
	if (ret < 0)
		return ret;
	if (!t.found)
		return -ENOENT;
	rte_tel_data_start_dict(d);
	droce_tel_dict_u64(d, "qpn", t.qpn);
	rte_tel_data_add_dict_string(d, "state", droce_qp_state_name(t.state));
	rte_tel_data_add_dict_string(d, "type", droce_qp_type_name(t.type));
	droce_tel_dict_u64(d, "dest_qpn", t.dest_qpn);
	gid_str(t.dgid, buf, sizeof(buf));
	rte_tel_data_add_dict_string(d, "dgid", buf);
	droce_tel_dict_u64(d, "path_mtu", t.mtu);
	droce_tel_dict_u64(d, "sq_psn", t.sq_psn);
	droce_tel_dict_u64(d, "rq_psn", t.rq_psn);
	droce_tel_dict_u64(d, "cc_rate_kbps", t.cc_rate);
	droce_tel_dict_u64(d, "cc_target_kbps", t.cc_target);
	droce_tel_dict_u64(d, "cc_alpha", t.cc_alpha);
	add_qp_counters(d, &t.stats);
	return 0;
}

void
droce_telemetry_init(void)
{
	rte_telemetry_register_cmd("/droce/devices", tel_devices,
				   "Names of the droce devices. No parameters");
	rte_telemetry_register_cmd("/droce/dev_stats", tel_dev_stats,
				   "Addresses, link and counters of a droce "
				   "device. Parameters: device name");
	rte_telemetry_register_cmd("/droce/qps", tel_qps,
				   "QPNs of a droce device's QPs. Parameters: "
				   "device name");
	rte_telemetry_register_cmd("/droce/qp_stats", tel_qp_stats,
				   "State and counters of a QP. Parameters: "
				   "device name,QPN");
	rte_telemetry_register_cmd("/droce/resources", tel_resources,
				   "What a droce device holds of its tables "
				   "and of the mbuf pool. Parameters: device "
				   "name");
}

void
droce_telemetry_close(void)
{
	rte_rwlock_write_lock(&tel_lock);
	tel_closed = true;
	rte_rwlock_write_unlock(&tel_lock);
}
