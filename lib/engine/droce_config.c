/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Configuration: which DPDK ports become which droce devices, with which
 * addresses, EAL arguments and engine cores. Read from the .ini file named
 * by DROCE_CONFIG; without one, the embedded default applies: droce0 and
 * droce1 wired back to back over a net_ring pair inside the process.
 *
 *   [eal]
 *   args = --no-huge -m 512 --no-pci --in-memory --vdev=net_memif0,...
 *
 *   [engine]
 *   cores = 1              ; CPUs of the engine lcores (default: the last)
 *   idle_sleep_us = 20     ; sleep when idle; 0 busy-polls
 *   idle_yield_us = 0      ; before sleeping, yield the CPU this long
 *   idle_spin_us = 200     ; keep polling so long after the last work
 *                          ; while no application thread of its CPU
 *                          ; calls droce and nothing else takes the CPU
 *   run_to_completion = auto ; application threads run the engine's pass
 *                          ; when they post or poll: auto (those on an
 *                          ; engine lcore's CPU), always, never
 *   link_wait_s = 30       ; at start, wait up to this long for every link
 *                          ; to be up (a memif server's comes up when its
 *                          ; client connects); default 0
 *   pcap = /tmp/droce.pcap ; mirror every frame sent and received, one
 *                          ; file per device (droce-droce0.pcap, ...)
 *   mbufs = 16384
 *   ecn = on               ; connected QPs' packets ECN-capable (ECT(0));
 *                          ; one marked CE makes its QP send a CNP, and
 *                          ; CNPs slow the QP they reach (DCQCN)
 *   cnp_interval_us = 50   ; at most one CNP a QP in this time
 *   zero_copy = auto       ; RC payloads sent from the registered memory
 *                          ; itself where the port takes segments; off
 *   zero_copy_min = 4096   ; ... for packets with at least this many
 *                          ; payload bytes
 *
 *   [device droce0]
 *   port = ring:pair0:0    ; or an ethdev name (net_memif0), a PCI address,
 *                          ; or switch:NAME (a port of net_fault's switch
 *                          ; NAME, with fault = its queue's settings)
 *   mac = 02:d7:0c:e0:00:01
 *   ipv4 = 10.0.0.1/24
 *   ipv6 = fd00::1/64
 *   mtu = 1500
 *   lcores = 0,1           ; its engine lcores, indices into cores
 *                          ; (default: one; `lcore = 0` says the same)
 *   fault = drop=0.05,seed=7 ; put the port behind net_fault (its arguments)
 *   dscp = 26              ; the DSCP of packets whose address (traffic
 *                          ; class) gives none (default 0)
 *   rss = auto             ; with several lcores on a port with RSS: the
 *                          ; port spreads frames by droce's key, and QPs
 *                          ; choose UDP source ports that land on their
 *                          ; peer's lcore; off
 *   dcqcn_rate_min_mbps = 10 ; DCQCN's parameters for its QPs (ecn = on):
 *                          ; dcqcn_rate_max_mbps (0: the port's speed),
 *                          ; _rate_min_mbps, _ai_mbps, _hai_mbps,
 *                          ; _g_shift (g = 1/2^N), _alpha_period_us,
 *                          ; _increase_period_us, _byte_counter,
 *                          ; _fast_recovery
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_mempool.h>
#include <rte_string_fns.h>

#include "droce_engine_pvt.h"

#define DEFAULT_EAL_ARGS "--no-huge -m 512 --no-pci --no-shconf"
#define DEFAULT_MBUFS 16384
#define DEFAULT_MBUF_CACHE 256
#define DEFAULT_IDLE_SLEEP_US 20
#define DEFAULT_IDLE_YIELD_US 0
#define DEFAULT_IDLE_SPIN_US 200
#define DEFAULT_MTU 1500
#define DEFAULT_ZERO_COPY_MIN 4096
#define DEFAULT_CNP_INTERVAL_US 50

static void
config_defaults(struct droce_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strlcpy(cfg->eal_args, DEFAULT_EAL_ARGS, sizeof(cfg->eal_args));
	cfg->ncores = 1;
	cfg->cores[0] = -1;
	cfg->idle_sleep_us = DEFAULT_IDLE_SLEEP_US;
	cfg->idle_yield_us = DEFAULT_IDLE_YIELD_US;
	cfg->idle_spin_us = DEFAULT_IDLE_SPIN_US;
	cfg->mbufs = DEFAULT_MBUFS;
	cfg->mbuf_cache = DEFAULT_MBUF_CACHE;
	cfg->zero_copy_min = DEFAULT_ZERO_COPY_MIN;
	cfg->ecn = true;
	cfg->cnp_interval_us = DEFAULT_CNP_INTERVAL_US;
}

static void
dev_defaults(struct droce_dev_cfg *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	strlcpy(d->name, name, sizeof(d->name));
	d->mtu = DEFAULT_MTU;
	droce_dcqcn_defaults(&d->cc, 0);
}

/* The embedded default: two devices back to back over a ring pair. */
static void
config_embedded(struct droce_cfg *cfg)
{
	static const struct rte_ether_addr mac[2] = {
		{ { 0x02, 0xd7, 0x0c, 0xe0, 0x00, 0x01 } },
		{ { 0x02, 0xd7, 0x0c, 0xe0, 0x00, 0x02 } },
	};
	unsigned int i;

	config_defaults(cfg);
	cfg->ndevs = 2;
	for (i = 0; i < 2; i++) {
		struct droce_dev_cfg *d = &cfg->dev[i];
		char name[16];

		snprintf(name, sizeof(name), "droce%u", i);
		dev_defaults(d, name);
		snprintf(d->port, sizeof(d->port), "ring:droce:%u", i);
		d->has_mac = true;
		d->mac = mac[i];
		d->ipv4 = htonl(0x0a000001 + i);
		d->ipv4_prefix = 24;
	}
}

static int
parse_ipv4(const char *s, rte_be32_t *addr, uint8_t *prefix)
{
	char buf[64];
	char *slash;
	struct in_addr a;

	strlcpy(buf, s, sizeof(buf));
	*prefix = 32;
	slash = strchr(buf, '/');
	if (slash != NULL) {
		char *end;
		unsigned long p = strtoul(slash + 1, &end, 10);

		if (*end != '\0' || p > 32)
			return -EINVAL;
		*prefix = (uint8_t)p;
		*slash = '\0';
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	*addr = a.s_addr;
	return 0;
}

static int
parse_ipv6(const char *s, uint8_t addr[16], uint8_t *prefix)
{
	char buf[128];
	char *slash;

	strlcpy(buf, s, sizeof(buf));
	*prefix = 64;
	slash = strchr(buf, '/');
	if (slash != NULL) {
		char *end;
		unsigned long p = strtoul(slash + 1, &end, 10);

		if (*end != '\0' || p > 128)
			return -EINVAL;
		*prefix = (uint8_t)p;
		*slash = '\0';
	}
	return inet_pton(AF_INET6, buf, addr) == 1 ? 0 : -EINVAL;
}

static int
parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || *v > max)
		return -EINVAL;
	return 0;
}

/* A list of at most DROCE_MAX_LCORES numbers up to @p max into @p v. */
static int
parse_list(const char *s, unsigned long max, unsigned int v[DROCE_MAX_LCORES],
	   unsigned int *n)
{
	char buf[256];
	char *save = NULL, *tok;

	strlcpy(buf, s, sizeof(buf));
	*n = 0;
	for (tok = strtok_r(buf, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save)) {
		unsigned long x;

		if (*n == DROCE_MAX_LCORES || parse_uint(tok, max, &x) < 0)
			return -EINVAL;
		v[(*n)++] = (unsigned int)x;
	}
	return *n > 0 ? 0 : -EINVAL;
}

static int
parse_cores(const char *s, struct droce_cfg *cfg)
{
	unsigned int cpus[DROCE_MAX_LCORES], i;
	int ret = parse_list(s, 1023, cpus, &cfg->ncores);

	for (i = 0; ret == 0 && i < cfg->ncores; i++)
		cfg->cores[i] = (int)cpus[i];
	return ret;
}

/* One [device NAME] section. */
/*
 * DCQCN's parameters of a [device] section, each optional: rates in
 * Mb/s, g as 1/2^dcqcn_g_shift.
 */
static int
parse_dcqcn(struct rte_cfgfile *f, const char *section,
	    struct droce_dcqcn_params *p)
{
	static const struct {
		const char *key;
		unsigned long min, max;
		size_t off;
		bool mbps;      /* kept as kbit/s */
		bool wide;      /* a uint64_t */
	} keys[] = {
#define K(k, lo, hi, f, m, w) \
	{ k, lo, hi, offsetof(struct droce_dcqcn_params, f), m, w }
		K("dcqcn_rate_max_mbps", 0, 10000000, rate_max, true, true),
		K("dcqcn_rate_min_mbps", 1, 10000000, rate_min, true, true),
		K("dcqcn_ai_mbps", 1, 10000000, rate_ai, true, true),
		K("dcqcn_hai_mbps", 1, 10000000, rate_hai, true, true),
		K("dcqcn_g_shift", 1, 16, g_shift, false, false),
		K("dcqcn_alpha_period_us", 1, 10000000, alpha_period_us,
		  false, false),
		K("dcqcn_increase_period_us", 1, 10000000, increase_period_us,
		  false, false),
		K("dcqcn_byte_counter", 1, 1ul << 40, byte_counter, false,
		  true),
		K("dcqcn_fast_recovery", 1, 1000, fast_recovery, false, false),
#undef K
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(keys); i++) {
		const char *v = rte_cfgfile_get_entry(f, section, keys[i].key);
		unsigned long n;

		if (v == NULL)
			continue;
		if (parse_uint(v, keys[i].max, &n) < 0 || n < keys[i].min) {
			DROCE_LOG(ERR, "[%s]: bad %s '%s'", section,
				  keys[i].key, v);
			return -EINVAL;
		}
		if (keys[i].wide)
			*(uint64_t *)((char *)p + keys[i].off) =
				keys[i].mbps ? (uint64_t)n * 1000 : n;
		else
			*(uint32_t *)((char *)p + keys[i].off) = (uint32_t)n;
	}
	return 0;
}

static int
parse_device(struct rte_cfgfile *f, const char *section,
	     struct droce_dev_cfg *d)
{
	const char *v;
	unsigned long n;

	dev_defaults(d, section + strlen("device "));
	if (d->name[0] == '\0')
		return -EINVAL;
	v = rte_cfgfile_get_entry(f, section, "port");
	if (v == NULL) {
		DROCE_LOG(ERR, "[%s]: no port", section);
		return -EINVAL;
	}
	strlcpy(d->port, v, sizeof(d->port));
	v = rte_cfgfile_get_entry(f, section, "fault");
	if (v != NULL)
		strlcpy(d->fault, v, sizeof(d->fault));
	v = rte_cfgfile_get_entry(f, section, "mac");
	if (v != NULL) {
		if (rte_ether_unformat_addr(v, &d->mac) < 0) {
			DROCE_LOG(ERR, "[%s]: bad mac '%s'", section, v);
			return -EINVAL;
		}
		d->has_mac = true;
	}
	v = rte_cfgfile_get_entry(f, section, "ipv4");
	if (v != NULL && parse_ipv4(v, &d->ipv4, &d->ipv4_prefix) < 0) {
		DROCE_LOG(ERR, "[%s]: bad ipv4 '%s'", section, v);
		return -EINVAL;
	}
	v = rte_cfgfile_get_entry(f, section, "ipv6");
	if (v != NULL) {
		if (parse_ipv6(v, d->ipv6, &d->ipv6_prefix) < 0) {
			DROCE_LOG(ERR, "[%s]: bad ipv6 '%s'", section, v);
			return -EINVAL;
		}
		d->has_ipv6 = true;
	}
	v = rte_cfgfile_get_entry(f, section, "mtu");
	if (v != NULL) {
		if (parse_uint(v, 9600, &n) < 0 || n < 576) {
			DROCE_LOG(ERR, "[%s]: bad mtu '%s'", section, v);
			return -EINVAL;
		}
		d->mtu = (uint16_t)n;
	}
	v = rte_cfgfile_get_entry(f, section, "dscp");
	if (v != NULL) {
		if (parse_uint(v, 63, &n) < 0) {
			DROCE_LOG(ERR, "[%s]: bad dscp '%s' (0 to 63)", section,
				  v);
			return -EINVAL;
		}
		d->dscp = (uint8_t)n;
	}
	if (parse_dcqcn(f, section, &d->cc) < 0)
		return -EINVAL;
	v = rte_cfgfile_get_entry(f, section, "rss");
	if (v != NULL) {
		if (strcmp(v, "auto") != 0 && strcmp(v, "off") != 0) {
			DROCE_LOG(ERR, "[%s]: bad rss '%s' (auto or off)",
				  section, v);
			return -EINVAL;
		}
		d->no_rss = strcmp(v, "off") == 0;
	}
	v = rte_cfgfile_get_entry(f, section, "lcores");
	if (v == NULL)
		v = rte_cfgfile_get_entry(f, section, "lcore");
	if (v != NULL &&
	    parse_list(v, DROCE_MAX_LCORES - 1, d->lcores, &d->nlcores) < 0) {
		DROCE_LOG(ERR, "[%s]: bad lcores '%s'", section, v);
		return -EINVAL;
	}
	if (d->ipv4 == 0 && !d->has_ipv6) {
		DROCE_LOG(ERR, "[%s]: needs an ipv4 or ipv6 address", section);
		return -EINVAL;
	}
	return 0;
}

/* Each of a device's lcores one of the @p ncores engine cores, once. */
static int
dev_lcores_check(const struct droce_dev_cfg *d, unsigned int ncores)
{
	unsigned int i, j;

	for (i = 0; i < d->nlcores; i++) {
		if (d->lcores[i] >= ncores)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (d->lcores[j] == d->lcores[i])
				return -EINVAL;
	}
	return 0;
}

/* The numbers of [engine]: each from min to max, an unsigned int of
 * struct droce_cfg. */
static const struct {
	const char *key;
	unsigned long min, max;
	size_t off;
} engine_numbers[] = {
#define N(k, lo, hi) { #k, lo, hi, offsetof(struct droce_cfg, k) }
	N(idle_sleep_us, 0, 1000000),
	N(idle_yield_us, 0, 1000000),
	N(idle_spin_us, 0, 1000000),
	N(link_wait_s, 0, 3600),
	N(mbufs, 1024, 1u << 22),
	N(mbuf_cache, 0, RTE_MEMPOOL_CACHE_MAX_SIZE),
	N(zero_copy_min, 1, UINT16_MAX),
	N(cnp_interval_us, 0, 1000000),
#undef N
};

/*
 * [engine] @p key of @p f, if there, one of the @p n @p names: its index
 * into *k. @return 0, or -EINVAL (logged) if it is none of them.
 */
static int
engine_choice(struct rte_cfgfile *f, const char *path, const char *key,
	      const char *const *names, unsigned int n, unsigned int *k)
{
	const char *v = rte_cfgfile_get_entry(f, "engine", key);
	char hint[64] = "";
	unsigned int i;

	if (v == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (strcmp(v, names[i]) == 0) {
			*k = i;
			return 0;
		}
		strlcat(hint, i == 0 ? "" : i + 1 < n ? ", " : " or ",
			sizeof(hint));
		strlcat(hint, names[i], sizeof(hint));
	}
	DROCE_LOG(ERR, "%s: bad %s '%s' (%s)", path, key, v, hint);
	return -EINVAL;
}

/* The [eal] and [engine] sections. */
static int
parse_engine(struct rte_cfgfile *f, const char *path, struct droce_cfg *cfg)
{
	static const char *const rtc[] = {
		[DROCE_RTC_AUTO] = "auto",
		[DROCE_RTC_ALWAYS] = "always",
		[DROCE_RTC_NEVER] = "never",
	};
	static const char *const off_on[] = { "off", "on" };
	static const char *const zero_copy[] = { "auto", "off" };
	unsigned int i, ecn = cfg->ecn, zc = 0;
	const char *v;

	v = rte_cfgfile_get_entry(f, "eal", "args");
	if (v != NULL)
		strlcpy(cfg->eal_args, v, sizeof(cfg->eal_args));
	v = rte_cfgfile_get_entry(f, "engine", "cores");
	if (v != NULL && parse_cores(v, cfg) < 0) {
		DROCE_LOG(ERR, "%s: bad cores '%s'", path, v);
		return -EINVAL;
	}
	for (i = 0; i < RTE_DIM(engine_numbers); i++) {
		unsigned long n;

		v = rte_cfgfile_get_entry(f, "engine", engine_numbers[i].key);
		if (v == NULL)
			continue;
		if (parse_uint(v, engine_numbers[i].max, &n) < 0 ||
		    n < engine_numbers[i].min) {
			DROCE_LOG(ERR, "%s: bad %s '%s'", path,
				  engine_numbers[i].key, v);
			return -EINVAL;
		}
		*(unsigned int *)((char *)cfg + engine_numbers[i].off) =
			(unsigned int)n;
	}
	if (engine_choice(f, path, "run_to_completion", rtc, RTE_DIM(rtc),
			  &cfg->run_to_completion) < 0 ||
	    engine_choice(f, path, "ecn", off_on, RTE_DIM(off_on), &ecn) < 0 ||
	    engine_choice(f, path, "zero_copy", zero_copy,
			  RTE_DIM(zero_copy), &zc) < 0)
		return -EINVAL;
	cfg->ecn = ecn != 0;
	/* off, whatever zero_copy_min says */
	if (zc == 1)
		cfg->zero_copy_min = 0;
	v = rte_cfgfile_get_entry(f, "engine", "pcap");
	if (v != NULL)
		strlcpy(cfg->pcap, v, sizeof(cfg->pcap));
	return 0;
}

/* The names of @p f's sections, into *@p names (free_names()). @return
 * how many, or -ENOMEM. */
static int
section_names(struct rte_cfgfile *f, char ***names)
{
	int n = rte_cfgfile_num_sections(f, NULL, 0), i;

	*names = calloc((size_t)RTE_MAX(n, 1), sizeof(**names));
	if (*names == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		(*names)[i] = malloc(CFG_NAME_LEN);
		if ((*names)[i] == NULL)
			return -ENOMEM;
	}
	return rte_cfgfile_sections(f, *names, n);
}

static void
free_names(char **names, int n)
{
	int i;

	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
}

/* The [device NAME] sections, in the file's order. */
static int
parse_devices(struct rte_cfgfile *f, const char *path, struct droce_cfg *cfg)
{
	int ndev = rte_cfgfile_num_sections(f, "device ", strlen("device "));
	int nsec = rte_cfgfile_num_sections(f, NULL, 0), i, ret;
	char **sections;

	if (ndev <= 0) {
		DROCE_LOG(ERR, "%s: no [device NAME] section", path);
		return -EINVAL;
	}
	if (ndev > DROCE_MAX_DEVS) {
		DROCE_LOG(ERR, "%s: more than %d devices", path, DROCE_MAX_DEVS);
		return -EINVAL;
	}
	ret = section_names(f, &sections);
	for (i = 0; ret >= 0 && i < nsec; i++) {
		struct droce_dev_cfg *d = &cfg->dev[cfg->ndevs];

		if (strncmp(sections[i], "device ", strlen("device ")) != 0)
			continue;
		ret = parse_device(f, sections[i], d);
		if (ret < 0)
			break;
		ret = dev_lcores_check(d, cfg->ncores);
		if (ret < 0) {
			DROCE_LOG(ERR, "[%s]: lcores beyond the %u engine "
				  "cores, or one twice", sections[i],
				  cfg->ncores);
			break;
		}
		cfg->ndevs++;
	}
	free_names(sections, nsec);
	return ret < 0 ? ret : 0;
}

int
droce_config_parse_file(const char *path, struct droce_cfg *cfg)
{
	struct rte_cfgfile *f;
	int ret;

	config_defaults(cfg);
	f = rte_cfgfile_load(path, 0);
	if (f == NULL) {
		/* (rte_cfgfile says which line, if it is one) */
		if (access(path, R_OK) == 0) {
			DROCE_LOG(ERR, "cannot parse configuration %s", path);
			return -EINVAL;
		}
		DROCE_LOG(ERR, "cannot read configuration %s", path);
		return -ENOENT;
	}
	ret = parse_engine(f, path, cfg);
	if (ret == 0)
		ret = parse_devices(f, path, cfg);
	rte_cfgfile_close(f);
	return ret;
}

int
droce_config_load(struct droce_cfg *cfg)
{
	const char *path = getenv("DROCE_CONFIG");

	if (path == NULL || path[0] == '\0') {
		config_embedded(cfg);
		return 0;
	}
	return droce_config_parse_file(path, cfg);
}
