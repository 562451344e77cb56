/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Devices: listing (which starts the engine on first use), opening,
 * attributes, ports and GIDs, and asynchronous events.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_string_fns.h>

#include <droce_build_config.h>

#include "droce_verbs_pvt.h"

RTE_LOG_REGISTER(droce_verbs_logtype, lib.droce.verbs, NOTICE);

/*
 * The vendor ID is a 24-bit IEEE company ID. droce has none registered:
 * it reports 0x02d70c, the prefix of its default MAC addresses
 * (02:d7:0c:...), an identifier of IEEE 802c's AAI quadrant (locally
 * administered: the U/L bit set, the X bit clear), which no company can
 * be assigned, so no program mistakes droce for a vendor's device; 0
 * reads as no vendor at all (rdma-core's tests refuse it).
 */
#define DROCE_VENDOR_ID 0x02d70c
#define DROCE_VENDOR_PART 0xd20e
#define DROCE_HW_VER 1

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_ibdev *ibdevs;
static unsigned int nibdevs;

/*
 * The errno of ibv_get_device_list() for an engine that did not start
 * with @p ret, as rdma-core's callers read it: ENODEV, no devices (its
 * examples print "No RDMA devices were detected"), unless the cause has
 * a name of its own that reads right there: an address in use, a
 * permission denied, memory, a configuration file missing or wrong.
 * Never a driver's bare -1 (EPERM, which rdma-core gives for a device
 * file the user may not open).
 */
static int
start_errno(int ret)
{
	switch (-ret) {
	case EADDRINUSE:
	case EACCES:
	case ENOMEM:
	case ENOENT:
	case EINVAL:
		return ret;
	default:
		return -ENODEV;
	}
}

/* The ibv_device of every engine device, made once. */
static int
ibdevs_init(void)
{
	unsigned int i, n;
	int ret = 0;

	pthread_mutex_lock(&devs_lock);
	if (ibdevs != NULL)
		goto out;
	ret = droce_engine_start();
	if (ret < 0) {
		const char *why = droce_engine_start_error();

		ret = start_errno(ret);
		DROCE_VERBS_LOG(ERR, "no devices (%s): %s", strerror(-ret),
				why[0] != '\0' ? why :
				"the engine did not start");
		goto out;
	}
	n = droce_dev_count();
	ibdevs = calloc(n ? n : 1, sizeof(*ibdevs));
	if (ibdevs == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct droce_ibdev *d = &ibdevs[i];
		struct droce_dev_attr attr;

		d->dev = droce_dev_get(i);
		d->index = i;
		droce_dev_query(d->dev, &attr);
		d->ibdev.node_type = IBV_NODE_CA;
		d->ibdev.transport_type = IBV_TRANSPORT_IB;
		strlcpy(d->ibdev.name, attr.name, sizeof(d->ibdev.name));
		snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name),
			 "uverbs%u", i);
		snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
			 "/sys/class/infiniband_verbs/uverbs%u", i);
		snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path),
			 "/sys/class/infiniband/%s", attr.name);
	}
	nibdevs = n;
out:
	pthread_mutex_unlock(&devs_lock);
	return ret;
}

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	unsigned int i;
	int ret = ibdevs_init();

	if (ret < 0) {
		errno = -ret;
		if (num_devices != NULL)
			*num_devices = 0;
		return NULL;
	}
	list = calloc(nibdevs + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nibdevs; i++)
		list[i] = &ibdevs[i].ibdev;
	if (num_devices != NULL)
		*num_devices = (int)nibdevs;
	return list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

static struct droce_ibdev *
to_ibdev(struct ibv_device *device)
{
	return container_of(device, struct droce_ibdev, ibdev);
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	struct droce_dev_attr attr;

	droce_dev_query(to_ibdev(device)->dev, &attr);
	return attr.guid;
}

int
ibv_get_device_index(struct ibv_device *device)
{
	return (int)to_ibdev(device)->index;
}

/*
 * The open contexts, for the port events the engine raises on a device:
 * each context of the device gets one.
 */
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_context *contexts;

static void
port_event(struct droce_dev *dev, enum ibv_event_type type)
{
	struct ibv_async_event ev = {
		.element.port_num = 1,
		.event_type = type,
	};
	struct droce_context *c;

	pthread_mutex_lock(&contexts_lock);
	for (c = contexts; c != NULL; c = c->next)
		if (c->dev == dev)
			droce_async_event(c, &ev);
	pthread_mutex_unlock(&contexts_lock);
}

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct droce_ibdev *d = to_ibdev(device);
	struct droce_context *ctx;

	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->ibdev = d;
	ctx->dev = d->dev;
	droce_dev_query(d->dev, &ctx->attr);
	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.context.device = device;
	/* no kernel command channel, but a file of the context's own:
	 * programs dup() it to import the context elsewhere (which droce
	 * refuses: ibv_import_device, EOPNOTSUPP) */
	ctx->vctx.context.cmd_fd = memfd_create("droce-context", MFD_CLOEXEC);
	if (ctx->vctx.context.cmd_fd < 0) {
		free(ctx);
		return NULL;
	}
	ctx->vctx.context.num_comp_vectors = 1;
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	pthread_mutex_init(&ctx->async_lock, NULL);
	ctx->vctx.context.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ctx->vctx.context.async_fd < 0) {
		close(ctx->vctx.context.cmd_fd);
		free(ctx);
		return NULL;
	}
	droce_verbs_set_ops(ctx);
	pthread_mutex_lock(&contexts_lock);
	if (contexts == NULL)
		droce_port_event_hook(port_event);
	ctx->next = contexts;
	contexts = ctx;
	pthread_mutex_unlock(&contexts_lock);
	return &ctx->vctx.context;
}

int
ibv_close_device(struct ibv_context *context)
{
	struct droce_context *ctx = to_ctx(context);
	struct droce_context **p;

	pthread_mutex_lock(&contexts_lock);
	for (p = &contexts; *p != NULL; p = &(*p)->next)
		if (*p == ctx) {
			*p = ctx->next;
			break;
		}
	pthread_mutex_unlock(&contexts_lock);
	close(context->async_fd);
	close(context->cmd_fd);
	pthread_mutex_destroy(&ctx->async_lock);
	free(ctx);
	return 0;
}

static void
fill_device_attr(struct droce_context *ctx, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce %s", DROCE_VERSION);
	a->node_guid = ctx->attr.guid;
	a->sys_image_guid = ctx->attr.guid;
	a->max_mr_size = DROCE_MAX_MR_SIZE;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = DROCE_VENDOR_ID;
	a->vendor_part_id = DROCE_VENDOR_PART;
	a->hw_ver = DROCE_HW_VER;
	a->max_qp = DROCE_MAX_QP;
	a->max_qp_wr = DROCE_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
		IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_PORT_ACTIVE_EVENT |
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
		IBV_DEVICE_XRC | IBV_DEVICE_RAW_IP_CSUM |
		IBV_DEVICE_UD_IP_CSUM |
		IBV_DEVICE_SRQ_RESIZE;
	a->max_sge = DROCE_MAX_SGE;
	a->max_sge_rd = DROCE_MAX_SGE;
	a->max_cq = 65536;
	a->max_cqe = DROCE_MAX_CQE;
	a->max_mr = 1 << 14;
	a->max_mw = 1 << 14;            /* one table holds both */
	a->max_pd = 1 << 16;
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_ee_rd_atom = 0;
	a->max_res_rd_atom = DROCE_MAX_RD_ATOMIC * DROCE_MAX_QP;
	a->max_qp_init_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_ee_init_rd_atom = 0;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = DROCE_MAX_AH;
	a->max_mcast_grp = DROCE_MAX_MCAST;
	a->max_mcast_qp_attach = DROCE_MAX_MCAST_QP;
	a->max_total_mcast_qp_attach = DROCE_MAX_MCAST * DROCE_MAX_MCAST_QP;
	a->max_srq = DROCE_MAX_SRQ;
	a->max_srq_wr = DROCE_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	fill_device_attr(to_ctx(context), attr);
	return 0;
}

int
droce_query_device_ex(struct ibv_context *context,
		      const struct ibv_query_device_ex_input *input,
		      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	fill_device_attr(to_ctx(context), &a.orig_attr);
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	/* completion timestamps count the TSC */
	a.completion_timestamp_mask = UINT64_MAX;
	a.hca_core_clock = droce_clock_hz() / 1000;
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
	a.raw_packet_caps = IBV_RAW_PACKET_CAP_IP_CSUM;
	a.tm_caps.max_rndv_hdr_size = DROCE_TM_MAX_RNDV_HDR;
	a.tm_caps.max_num_tags = DROCE_TM_MAX_TAGS;
	a.tm_caps.flags = IBV_TM_CAP_RC;
	a.tm_caps.max_ops = DROCE_TM_MAX_TAGS;
	a.tm_caps.max_sge = DROCE_TM_MAX_SGE;
	a.tso_caps.max_tso = DROCE_MAX_TSO;
	a.tso_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET |
		1u << IBV_QPT_UD;
	/* raw packet RSS: work queues, tables of up to 2^8 of them */
	a.rss_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	a.rss_caps.max_rwq_indirection_tables = DROCE_MAX_QP;
	a.rss_caps.max_rwq_indirection_table_size = 256;
	a.rss_caps.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
		IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_IPV6 |
		IBV_RX_HASH_DST_IPV6 | IBV_RX_HASH_SRC_PORT_TCP |
		IBV_RX_HASH_DST_PORT_TCP | IBV_RX_HASH_SRC_PORT_UDP |
		IBV_RX_HASH_DST_PORT_UDP;
	a.rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	a.max_wq_type_rq = DROCE_MAX_QP;
	/* on-demand paging, explicit (droce_verbs_mem.c): every transport
	 * and operation reads a region at its address, faulting pages in */
	a.odp_caps.general_caps = IBV_ODP_SUPPORT;
	a.odp_caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |
		IBV_ODP_SUPPORT_SRQ_RECV;
	a.odp_caps.per_transport_caps.uc_odp_caps = IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_SRQ_RECV;
	a.odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND |
		IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV;
	a.xrc_odp_caps = a.odp_caps.per_transport_caps.rc_odp_caps;
	a.max_dm_size = 0;
	memcpy(attr, &a, RTE_MIN(attr_size, sizeof(a)));
	return 0;
}

int
droce_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	RTE_SET_USED(context);
	if (values->comp_mask & ~(uint32_t)(IBV_VALUES_MASK_RAW_CLOCK))
		return EINVAL;
	values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = (long)droce_clock();
	return 0;
}

static void
fill_port_attr(struct droce_context *ctx, struct ibv_port_attr *a)
{
	struct droce_dev_attr attr;

	droce_dev_query(ctx->dev, &attr);
	memset(a, 0, sizeof(*a));
	a->state = attr.link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = attr.active_mtu;
	a->gid_tbl_len = 4;
	a->port_cap_flags = IBV_PORT_CM_SUP;
	a->max_msg_sz = 1u << 31;
	a->bad_pkey_cntr = 0;
	a->qkey_viol_cntr = 0;
	a->pkey_tbl_len = 1;
	a->lid = 0;
	a->sm_lid = 0;
	a->lmc = 0;
	a->max_vl_num = 1;
	a->sm_sl = 0;
	a->subnet_timeout = 0;
	a->init_type_reply = 0;
	a->active_width = 1;            /* 1x */
	a->active_speed = attr.link_speed_mbps >= 100000 ? 128 :
		attr.link_speed_mbps >= 40000 ? 64 : 32;
	a->phys_state = attr.link_up ? 5 : 3; /* LinkUp : Disabled */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->flags = 0;
	a->port_cap_flags2 = 0;
}

int
droce_query_port_ex(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_len)
{
	struct ibv_port_attr a;

	if (port_num != 1)
		return EINVAL;
	fill_port_attr(to_ctx(context), &a);
	memcpy(attr, &a, RTE_MIN(attr_len, sizeof(a)));
	return 0;
}

/* The entry point older binaries call directly. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr);
int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	/* the old structure ends with link_layer */
	return droce_query_port_ex(context, port_num,
				   (struct ibv_port_attr *)port_attr,
				   offsetof(struct ibv_port_attr, flags));
}

int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
	      union ibv_gid *gid)
{
	struct droce_context *ctx = to_ctx(context);
	struct droce_dev_attr attr;

	if (port_num != 1 || index < 0 || index >= 4)
		return -1;
	droce_dev_query(ctx->dev, &attr);
	if (index < attr.gid_count)
		*gid = attr.gid[index];
	else
		memset(gid, 0, sizeof(*gid));
	return 0;
}

int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
	       __be16 *pkey)
{
	RTE_SET_USED(context);
	if (port_num != 1 || index != 0)
		return -1;
	*pkey = 0xffff;
	return 0;
}

int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	RTE_SET_USED(context);
	if (port_num != 1 || pkey != 0xffff)
		return -1;
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		  uint32_t gid_index, struct ibv_gid_entry *entry,
		  uint32_t flags, size_t entry_size)
{
	struct droce_context *ctx = to_ctx(context);
	struct droce_dev_attr attr;
	struct ibv_gid_entry e;

	if (flags != 0 || port_num != 1)
		return EINVAL;
	droce_dev_query(ctx->dev, &attr);
	if (gid_index >= attr.gid_count)
		return ENODATA;
	memset(&e, 0, sizeof(e));
	e.gid = attr.gid[gid_index];
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	e.ndev_ifindex = 0;
	memcpy(entry, &e, RTE_MIN(entry_size, sizeof(e)));
	return 0;
}

ssize_t
_ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct droce_context *ctx = to_ctx(context);
	struct droce_dev_attr attr;
	size_t i;

	if (flags != 0 || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	droce_dev_query(ctx->dev, &attr);
	if (max_entries < attr.gid_count)
		return -EINVAL;
	for (i = 0; i < attr.gid_count; i++) {
		struct ibv_gid_entry *e = (struct ibv_gid_entry *)
			((uint8_t *)entries + i * entry_size);

		_ibv_query_gid_ex(context, 1, (uint32_t)i, e, 0, entry_size);
	}
	return attr.gid_count;
}

/* ------------------------------------------------------------------------
 * Asynchronous events.
 */

void
droce_async_event(struct droce_context *ctx, const struct ibv_async_event *ev)
{
	uint64_t one = 1;

	pthread_mutex_lock(&ctx->async_lock);
	if (ctx->async_head - ctx->async_tail < RTE_DIM(ctx->async_ring)) {
		ctx->async_ring[ctx->async_head++ % RTE_DIM(ctx->async_ring)] =
			*ev;
		if (write(ctx->vctx.context.async_fd, &one, sizeof(one)) < 0)
			ctx->async_head--;
		else
			droce_engine_woke();
	}
	pthread_mutex_unlock(&ctx->async_lock);
}

int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct droce_context *ctx = to_ctx(context);
	uint64_t n;

	if (read(context->async_fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	pthread_mutex_lock(&ctx->async_lock);
	*event = ctx->async_ring[ctx->async_tail++ % RTE_DIM(ctx->async_ring)];
	pthread_mutex_unlock(&ctx->async_lock);
	return 0;
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
	RTE_SET_USED(event);
}
