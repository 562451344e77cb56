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
/* a CM command gives up after this long without the event it waits for */
#define PMD_CM_WAIT_S 10.0

struct rdma_cm_id;

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
	/* made through the CM (cm connect, cm listen): its id, or NULL */
	struct rdma_cm_id *cm_id;
	bool cm_accepted;               /* a listener's: it was asked */
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
/* a free slot with the PD, buffer, MR and CQ of a QP, but no QP yet */
struct pmd_qp *pmd_qp_alloc(struct pmd_port *p, unsigned int depth);
void pmd_qp_init_attr(const struct pmd_qp *q, struct ibv_qp_init_attr *qa);
/* the line `create qp` prints: GID, QPN, PSN, rkey, address, depth */
void pmd_qp_print(const struct pmd_qp *q);
struct pmd_qp *pmd_qp_create(struct pmd_port *p, unsigned int depth);
int pmd_qp_connect(struct pmd_qp *q, const union ibv_gid *gid, uint32_t qpn,
		   uint32_t psn, uint32_t rkey, uint64_t addr);
/* @p q is in RTS: note its peer (found among ours if it is) and say so */
void pmd_qp_set_peer(struct pmd_qp *q, const union ibv_gid *gid,
		     uint32_t qpn, uint32_t psn, uint32_t rkey, uint64_t addr);
int pmd_qp_connect_local(struct pmd_qp *q, struct pmd_qp *peer);
void pmd_qp_destroy(struct pmd_qp *q);
void pmd_qp_show(struct pmd_qp *q);
void pmd_cq_show(struct pmd_qp *q);

/* pmd_cm.c */
/* take the CM's events for up to @p ms milliseconds (0: those waiting) */
void pmd_cm_poll(unsigned int ms);
/* the fd readable while CM events wait, or -1 before the first cm command */
int pmd_cm_fd(void);
int pmd_cm_listen(struct pmd_port *p, uint16_t port);
/* stop @p p's listener on @p port, or every one of them if it is -1 */
int pmd_cm_stop(struct pmd_port *p, int port);
/* `port stop`: @p p's listeners go, quietly if it has none */
void pmd_cm_port_stop(struct pmd_port *p);
struct pmd_qp *pmd_cm_connect(struct pmd_port *p, const char *ip,
			      uint16_t port);
int pmd_cm_disconnect(struct pmd_qp *q);
/* pmd_qp_destroy's part for a QP of the CM: the QP and its id */
void pmd_cm_release(struct pmd_qp *q);
void pmd_cm_show(void);
void pmd_cm_fini(void);

/* pmd_run.c */
int pmd_run(struct pmd_qp *q, const struct pmd_mode *m, uint32_t size,
	    uint64_t count);
void pmd_pattern(uint8_t *p, uint32_t len, uint64_t seed);
bool pmd_pattern_ok(const uint8_t *p, uint32_t len, uint64_t seed);
uint64_t pmd_seed(uint64_t i);

#endif /* DROCE_PMD_H */
