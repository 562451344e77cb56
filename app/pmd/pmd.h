/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_PMD_H
#define DROCE_PMD_H

#include <stdbool.h>
#include <stdint.h>

#include <cmdline_parse.h>
#include <infiniband/verbs.h>

#define PMD_MAX_PORTS 16
#define PMD_MAX_QPS 64
#define PMD_DEFAULT_DEPTH 128
#define PMD_MAX_DEPTH 4096
/* each QP's registered buffer; a message is at most half of it */
#define PMD_BUF_LEN (4u << 20)
#define PMD_MAX_MSG (PMD_BUF_LEN / 2)
/* a run fails after this long without a completion */
#define PMD_STALL_S 10.0

/* A droce device: open between `port start` and `port stop`. */
struct pmd_port {
	char name[64];
	struct ibv_device *ibdev;
	struct ibv_context *ctx;        /* NULL: stopped */
	bool pcap;                      /* mirroring to pcap_path */
	char pcap_path[256];
};

/* A QP with its own PD, buffer, MR and CQ. */
struct pmd_qp {
	bool used;
	unsigned int id;
	struct pmd_port *port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint8_t *buf;
	unsigned int depth;             /* send and receive WRs, CQ depth / 2 */
	uint32_t psn;                   /* our first PSN */
	union ibv_gid gid;              /* our GID (index 0) */
	uint64_t cq_polled;             /* completions taken from cq */
	/* the peer, once connected */
	bool connected;
	union ibv_gid peer_gid;
	uint32_t peer_qpn;
	uint32_t peer_psn;
	uint32_t peer_rkey;             /* 0: not known */
	uint64_t peer_addr;
	struct pmd_qp *peer;            /* the peer if it is ours, or NULL */
};

/* What a run measured. */
struct pmd_result {
	uint64_t msgs;
	uint64_t bytes;
	double secs;
	uint64_t verified;              /* messages whose data was checked */
};

/* One traffic pattern of `run`: an opcode, how to set data up, check it. */
struct pmd_mode {
	const char *name;
	enum ibv_wr_opcode opcode;
	bool needs_local_peer;          /* the peer must be a QP of ours */
	bool needs_rkey;                /* the peer's buffer must be known */
	/* before the first WR: fill or clear buffers */
	void (*prepare)(struct pmd_qp *q, uint32_t size, uint32_t nslots);
	/* before message @p i goes out from slot @p slot */
	void (*before_post)(struct pmd_qp *q, uint32_t size, uint64_t i,
			    uint32_t slot);
	/* a receive of the peer completed message @p i: check it */
	int (*on_recv)(struct pmd_qp *q, const struct ibv_wc *wc,
		       uint32_t size, uint64_t i, uint32_t slot);
	/* after the last completion: check what was moved */
	int (*verify)(struct pmd_qp *q, uint32_t size, uint64_t count,
		      uint32_t nslots, uint64_t *verified);
};

extern const struct pmd_mode pmd_mode_write;
extern const struct pmd_mode pmd_mode_read;
extern const struct pmd_mode pmd_mode_send;

extern struct pmd_port pmd_ports[PMD_MAX_PORTS];
extern unsigned int pmd_nports;
extern struct pmd_qp pmd_qps[PMD_MAX_QPS];

/* A command failed: the script stops and droce-pmd exits with 1. */
void pmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* true once a command failed since the last pmd_failed_reset() */
bool pmd_failed(void);
void pmd_failed_reset(void);
double pmd_now(void);

/* pmd_cmdline.c */
extern cmdline_parse_ctx_t pmd_cmd_ctx[];
void pmd_help(void);
void pmd_quit(struct cmdline *cl);
bool pmd_quit_asked(void);

/* pmd_port.c */
int pmd_ports_init(void);
void pmd_ports_fini(void);
struct pmd_port *pmd_port_find(const char *name);
int pmd_port_start(struct pmd_port *p);
void pmd_port_stop(struct pmd_port *p);
void pmd_port_show(struct pmd_port *p);
/* a counter's line of `show device` and `show qp` */
void pmd_counter(const char *name, uint64_t v);
int pmd_pcap_start(struct pmd_port *p, const char *path);
int pmd_pcap_stop(struct pmd_port *p);

/* pmd_qp.c */
struct pmd_qp *pmd_qp_get(unsigned int id);
struct pmd_qp *pmd_qp_create(struct pmd_port *p, unsigned int depth);
int pmd_qp_connect(struct pmd_qp *q, const union ibv_gid *gid, uint32_t qpn,
		   uint32_t psn, uint32_t rkey, uint64_t addr);
int pmd_qp_connect_local(struct pmd_qp *q, struct pmd_qp *peer);
void pmd_qp_destroy(struct pmd_qp *q);
void pmd_qp_show(struct pmd_qp *q);
void pmd_cq_show(struct pmd_qp *q);

/* pmd_run.c */
int pmd_run(struct pmd_qp *q, const struct pmd_mode *m, uint32_t size,
	    uint64_t count);
void pmd_pattern(uint8_t *p, uint32_t len, uint64_t seed);
bool pmd_pattern_ok(const uint8_t *p, uint32_t len, uint64_t seed);
uint64_t pmd_seed(uint64_t i);

#endif /* DROCE_PMD_H */
