/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_PERF_H
#define DROCE_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define PERF_MAX_QPS 32768       /* a droce device's (DROCE_MAX_QP) */
/* QP counts one run measures one after the other (-q 1,64,...) */
#define PERF_MAX_SWEEP 8
#define PERF_MAX_POST_LIST 64
#define PERF_DEFAULT_PORT 18515
/* receives posted per send in flight (send_bw) */
#define PERF_RX_FACTOR 4

enum perf_test {
	PERF_WRITE_BW,
	PERF_READ_BW,
	PERF_SEND_BW,
	PERF_ATOMIC_BW,
	PERF_WRITE_LAT,
	PERF_SEND_LAT,
	PERF_RAW,
	PERF_MEMCPY,
	PERF_WQ,
	PERF_CM,
	PERF_MEMCPY_CRC,
	PERF_RAW_LAT,
};

struct perf_opts {
	enum perf_test test;
	uint32_t size;
	uint64_t iters;            /* 0: run for duration */
	double duration;           /* seconds */
	unsigned int qps;
	unsigned int busy_qps;     /* QPs the test runs on (0: all) */
	unsigned int nsweep;       /* QP counts of a sweep (-q A,B,...) */
	unsigned int sweep[PERF_MAX_SWEEP];
	unsigned int tx_depth;
	unsigned int post_list;    /* WRs per ibv_post_send call */
	enum ibv_mtu mtu;          /* 0 until perf_port_mtu() */
	int gid_index;
	bool server;               /* two processes: this one waits */
	const char *host;          /* two processes: connect to it */
	uint16_t port;
	int dev;                   /* device of this side (two processes) */
	bool compare_raw;          /* also measure raw frames of this size */
	bool raw_icrc;             /* raw frames are RoCE, ICRCs and all */
	unsigned int turns;        /* -R: test and raw frames in turns */
	bool progress;
	bool quiet;
};

/* What one side has and tells the other: the fixed part, then nqps
 * QPNs and nqps PSNs. */
struct perf_info {
	uint32_t nqps;
	uint8_t gid[16];
	uint8_t mac[6];
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
	/* not sent as they are: the arrays they point to are */
	uint32_t *qpn;
	uint32_t *psn;
};

struct perf_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp **qp;        /* o->qps of them */
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t buf_len;
	struct perf_info me;
	struct perf_info peer;     /* its arrays: the other side's me, or
				    * peer_arrays (two processes) */
	uint32_t *peer_arrays;
	bool recvs_posted;         /* send_bw's receives are up (a turn
				    * before this one posted them) */
};

struct perf_result {
	uint64_t msgs;
	uint64_t bytes;
	uint64_t frames;           /* RoCE frames the requester's port sent */
	double secs;
	double peak_msg_rate;
	/* bandwidth tests over several QPs: each one's share */
	unsigned int nqp_rates;    /* QPs measured (0: one QP, none) */
	double *qp_rate;           /* each one's MB/s (freed by the caller) */
	double jain;               /* Jain's fairness index of qp_rate */
	/* latency, microseconds */
	double lat_min, lat_max, lat_typ, lat_avg, lat_stdev, lat_p99, lat_p999;
};

/* perf_setup.c */
/* Set o->mtu to the active MTU of the port of this side's device. */
int perf_port_mtu(struct perf_opts *o);

int perf_side_open(struct perf_side *s, int dev, const struct perf_opts *o);
int perf_side_connect(struct perf_side *s, const struct perf_opts *o);
void perf_side_close(struct perf_side *s);
int perf_exchange(const struct perf_opts *o, struct perf_side *s);
int perf_sync(const struct perf_opts *o);
bool perf_sync_ready(void);
void perf_sync_close(void);
double perf_now(void);

/* perf_bw.c */
int perf_bw(const struct perf_opts *o, struct perf_side *cl,
	    struct perf_side *sv, struct perf_result *r);
int perf_bw_server(const struct perf_opts *o, struct perf_side *sv);

/* perf_lat.c */
int perf_lat(const struct perf_opts *o, struct perf_side *cl,
	     struct perf_side *sv, struct perf_result *r);
int perf_lat_remote(const struct perf_opts *o, struct perf_side *me,
		    bool initiator, struct perf_result *r);
int perf_raw_lat(const struct perf_opts *o, struct perf_side *me,
		 bool remote, struct perf_result *r);

/* perf_raw.c */
uint32_t perf_frame_len(const struct perf_opts *o);
int perf_raw(const struct perf_opts *o, struct perf_side *tx,
	     struct perf_result *r);
int perf_memcpy(const struct perf_opts *o, struct perf_result *r,
		uint32_t (*crc32)(uint32_t crc, const void *buf, size_t len));

/* perf_cm.c */
int perf_cm(const struct perf_opts *o, struct perf_side *cl,
	    struct perf_side *sv);

/* perf_sweep.c */
int perf_sweep(struct perf_opts *o);

/* perf_wq.c */
int perf_wq(const struct perf_opts *o);

uint64_t perf_packets(const struct perf_opts *o, const struct perf_result *r);

/* perf_report.c */
void perf_report_header(const struct perf_opts *o);
void perf_report(const struct perf_opts *o, const struct perf_result *r);
void perf_report_ratio(const struct perf_opts *o, const struct perf_result *roce,
		       const struct perf_result *raw);
const char *perf_test_name(enum perf_test t);

#endif /* DROCE_PERF_H */
