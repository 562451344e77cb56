/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The rest of libibverbs' exported surface, so that libibverbs.so.1 built
 * from droce resolves every symbol a prebuilt program or provider library
 * imports (Debian links them with -z now: one missing symbol and they do
 * not load):
 *  - helpers droce implements as rdma-core does: rate conversions, the GID
 *    type, sysfs reads, fork ranges;
 *  - verbs of features droce does not have yet (address handles,
 *    multicast, imports, ECE, dma-buf MRs): they fail cleanly with
 *    EOPNOTSUPP, as ibv_post_send(3) and friends allow;
 *  - the provider interface (ibv_cmd_*, verbs_*): droce has no kernel
 *    driver under it, so a provider library loaded alongside (perftest
 *    loads libmlx5, libefa ...) registers, is ignored and never claims a
 *    device; its commands fail with EOPNOTSUPP.
 */

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "droce_verbs_pvt.h"

/* ------------------------------------------------------------------------
 * Rates.
 */

static const struct {
	enum ibv_rate rate;
	int mult;           /* of 2.5 Gbit/s */
	int mbps;
	bool from_mult;     /* mult_to_ibv_rate() maps the multiple back */
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500, true },
	{ IBV_RATE_5_GBPS, 2, 5000, true },
	{ IBV_RATE_10_GBPS, 4, 10000, true },
	{ IBV_RATE_20_GBPS, 8, 20000, true },
	{ IBV_RATE_30_GBPS, 12, 30000, true },
	{ IBV_RATE_40_GBPS, 16, 40000, true },
	{ IBV_RATE_60_GBPS, 24, 60000, true },
	{ IBV_RATE_80_GBPS, 32, 80000, true },
	{ IBV_RATE_120_GBPS, 48, 120000, true },
	{ IBV_RATE_14_GBPS, 5, 14062, false },
	{ IBV_RATE_56_GBPS, 22, 56250, false },
	{ IBV_RATE_112_GBPS, 45, 112500, false },
	{ IBV_RATE_168_GBPS, 67, 168750, false },
	{ IBV_RATE_25_GBPS, 10, 25781, false },
	{ IBV_RATE_100_GBPS, 40, 103125, false },
	{ IBV_RATE_200_GBPS, 80, 206250, false },
	{ IBV_RATE_300_GBPS, 120, 309375, false },
	{ IBV_RATE_28_GBPS, 11, 28125, true },
	{ IBV_RATE_50_GBPS, 20, 53125, true },
	{ IBV_RATE_400_GBPS, 160, 425000, true },
	{ IBV_RATE_600_GBPS, 240, 637500, true },
	{ IBV_RATE_800_GBPS, 320, 850000, true },
	{ IBV_RATE_1200_GBPS, 480, 1275000, true },
};

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].from_mult && rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ------------------------------------------------------------------------
 * GID type, sysfs, fork.
 */

/* rdma-core's enum ibv_gid_type_sysfs (not in the public header). */
#define GID_TYPE_SYSFS_ROCE_V2 1

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);

/* Every GID of a droce port is a RoCEv2 GID. */
int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		   unsigned int index, int *type)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(context, port_num, &pa) != 0)
		return -1;
	if (index >= (unsigned int)pa.gid_tbl_len) {
		errno = EINVAL;
		return -1;
	}
	*type = GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
			      const char *fnfmt, ...);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

const char *
ibv_get_sysfs_path(void)
{
	return "/sys";
}

/*
 * A sysfs attribute, without its trailing newline. droce devices have no
 * sysfs directory, so for them it fails as for a missing file.
 */
int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
		    size_t size)
{
	char path[512];
	ssize_t len;
	int fd;

	if (size == 0 ||
	    snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else
		buf[size - 1] = '\0';
	return (int)len;
}

int
ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
			  const char *fnfmt, ...)
{
	RTE_SET_USED(buf);
	RTE_SET_USED(size);
	RTE_SET_USED(sysfs_dev);
	RTE_SET_USED(fnfmt);
	errno = ENOENT;
	return -1;
}

/* The engine reads and writes registered memory from this process only:
 * nothing to keep from a child. */
int
ibv_dontfork_range(void *base, size_t size)
{
	RTE_SET_USED(base);
	RTE_SET_USED(size);
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	RTE_SET_USED(base);
	RTE_SET_USED(size);
	return 0;
}

/* ------------------------------------------------------------------------
 * Verbs of features droce does not have yet.
 */

#define NOT_YET_PTR(ret, name, ...)			\
	ret name(__VA_ARGS__)				\
	{						\
		errno = EOPNOTSUPP;			\
		return NULL;				\
	}
#define NOT_YET_INT(name, ...)				\
	int name(__VA_ARGS__)				\
	{						\
		return EOPNOTSUPP;			\
	}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

NOT_YET_INT(ibv_set_ece, struct ibv_qp *qp, struct ibv_ece *ece)
NOT_YET_INT(ibv_query_ece, struct ibv_qp *qp, struct ibv_ece *ece)
NOT_YET_PTR(struct ibv_context *, ibv_import_device, int cmd_fd)
NOT_YET_PTR(struct ibv_pd *, ibv_import_pd, struct ibv_context *context,
	    uint32_t pd_handle)
NOT_YET_PTR(struct ibv_mr *, ibv_import_mr, struct ibv_pd *pd,
	    uint32_t mr_handle)
NOT_YET_PTR(struct ibv_dm *, ibv_import_dm, struct ibv_context *context,
	    uint32_t dm_handle)
NOT_YET_PTR(struct ibv_mr *, ibv_reg_dmabuf_mr, struct ibv_pd *pd,
	    uint64_t offset, size_t length, uint64_t iova, int fd, int access)

/* Nothing was imported, so there is nothing to let go of. */
void
ibv_unimport_pd(struct ibv_pd *pd)
{
}

void
ibv_unimport_mr(struct ibv_mr *mr)
{
}

void
ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* Not promised: the conservative answer the man page allows. */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			   uint32_t flags)
{
	return 0;
}

/* ------------------------------------------------------------------------
 * The provider interface. Prototypes are rdma-core's driver.h in spirit:
 * every argument a pointer or an integer, so none needs naming here.
 */

#define PROVIDER_CMD(name)				\
	int name(void);					\
	int name(void)					\
	{						\
		return EOPNOTSUPP;			\
	}

PROVIDER_CMD(ibv_cmd_advise_mr)
PROVIDER_CMD(ibv_cmd_alloc_dm)
PROVIDER_CMD(ibv_cmd_alloc_mw)
PROVIDER_CMD(ibv_cmd_alloc_pd)
PROVIDER_CMD(ibv_cmd_attach_mcast)
PROVIDER_CMD(ibv_cmd_close_xrcd)
PROVIDER_CMD(ibv_cmd_create_ah)
PROVIDER_CMD(ibv_cmd_create_counters)
PROVIDER_CMD(ibv_cmd_create_cq)
PROVIDER_CMD(ibv_cmd_create_cq_ex)
PROVIDER_CMD(ibv_cmd_create_flow)
PROVIDER_CMD(ibv_cmd_create_flow_action_esp)
PROVIDER_CMD(ibv_cmd_create_qp)
PROVIDER_CMD(ibv_cmd_create_qp_ex)
PROVIDER_CMD(ibv_cmd_create_qp_ex2)
PROVIDER_CMD(ibv_cmd_create_rwq_ind_table)
PROVIDER_CMD(ibv_cmd_create_srq)
PROVIDER_CMD(ibv_cmd_create_srq_ex)
PROVIDER_CMD(ibv_cmd_create_wq)
PROVIDER_CMD(ibv_cmd_dealloc_mw)
PROVIDER_CMD(ibv_cmd_dealloc_pd)
PROVIDER_CMD(ibv_cmd_dereg_mr)
PROVIDER_CMD(ibv_cmd_destroy_ah)
PROVIDER_CMD(ibv_cmd_destroy_counters)
PROVIDER_CMD(ibv_cmd_destroy_cq)
PROVIDER_CMD(ibv_cmd_destroy_flow)
PROVIDER_CMD(ibv_cmd_destroy_flow_action)
PROVIDER_CMD(ibv_cmd_destroy_qp)
PROVIDER_CMD(ibv_cmd_destroy_rwq_ind_table)
PROVIDER_CMD(ibv_cmd_destroy_srq)
PROVIDER_CMD(ibv_cmd_destroy_wq)
PROVIDER_CMD(ibv_cmd_detach_mcast)
PROVIDER_CMD(ibv_cmd_free_dm)
PROVIDER_CMD(ibv_cmd_get_context)
PROVIDER_CMD(ibv_cmd_modify_cq)
PROVIDER_CMD(ibv_cmd_modify_flow_action_esp)
PROVIDER_CMD(ibv_cmd_modify_qp)
PROVIDER_CMD(ibv_cmd_modify_qp_ex)
PROVIDER_CMD(ibv_cmd_modify_srq)
PROVIDER_CMD(ibv_cmd_modify_wq)
PROVIDER_CMD(ibv_cmd_open_qp)
PROVIDER_CMD(ibv_cmd_open_xrcd)
PROVIDER_CMD(ibv_cmd_poll_cq)
PROVIDER_CMD(ibv_cmd_post_recv)
PROVIDER_CMD(ibv_cmd_post_send)
PROVIDER_CMD(ibv_cmd_post_srq_recv)
PROVIDER_CMD(ibv_cmd_query_context)
PROVIDER_CMD(ibv_cmd_query_device_any)
PROVIDER_CMD(ibv_cmd_query_mr)
PROVIDER_CMD(ibv_cmd_query_port)
PROVIDER_CMD(ibv_cmd_query_qp)
PROVIDER_CMD(ibv_cmd_query_srq)
PROVIDER_CMD(ibv_cmd_read_counters)
PROVIDER_CMD(ibv_cmd_reg_dm_mr)
PROVIDER_CMD(ibv_cmd_reg_dmabuf_mr)
PROVIDER_CMD(ibv_cmd_reg_mr)
PROVIDER_CMD(ibv_cmd_req_notify_cq)
PROVIDER_CMD(ibv_cmd_rereg_mr)
PROVIDER_CMD(ibv_cmd_resize_cq)
PROVIDER_CMD(execute_ioctl)
PROVIDER_CMD(verbs_init_cq)

/* Providers register at load time: heard, never asked to claim a device. */
void ibv_register_driver(const char *name, void *init_func);
void verbs_register_driver_34(const void *ops);

void
ibv_register_driver(const char *name, void *init_func)
{
}

void
verbs_register_driver_34(const void *ops)
{
}

/* No kernel structures to translate. */
void ibv_copy_ah_attr_from_kern(void *dst, const void *src);
void ibv_copy_path_rec_from_kern(void *dst, const void *src);
void ibv_copy_path_rec_to_kern(void *dst, const void *src);
void ibv_copy_qp_attr_from_kern(void *dst, const void *src);

void
ibv_copy_ah_attr_from_kern(void *dst, const void *src)
{
}

void
ibv_copy_path_rec_from_kern(void *dst, const void *src)
{
}

void
ibv_copy_path_rec_to_kern(void *dst, const void *src)
{
}

void
ibv_copy_qp_attr_from_kern(void *dst, const void *src)
{
}

/* Contexts come from droce's devices only. */
void *_verbs_init_and_alloc_context(void *device, int cmd_fd,
				    size_t alloc_size, void *context_offset,
				    uint32_t driver_id);
void *verbs_open_device(void *device, void *private_data);
void verbs_set_ops(void *vctx, const void *ops);
void verbs_uninit_context(void *context);
void __verbs_log(void *ctx, const char *fmt, ...);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link);

void *
_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size,
			      void *context_offset, uint32_t driver_id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void *
verbs_open_device(void *device, void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void
verbs_set_ops(void *vctx, const void *ops)
{
}

void
verbs_uninit_context(void *context)
{
}

void
__verbs_log(void *ctx, const char *fmt, ...)
{
}

unsigned int
__ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	return num_attrs;
}

#pragma GCC diagnostic pop

/* Whether a destroy may succeed on a disassociated device (never here). */
bool verbs_allow_disassociate_destroy;
