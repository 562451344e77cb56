/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-framegen: write a pcap file holding a frame of every RoCEv2 opcode
 * built by lib/wire, over IPv4 and IPv6, for a list of payload lengths
 * (so every pad count), with header fields drawn from a seeded generator.
 * The frames feed droce-dump, tshark and scapy.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce_build_config.h>
#include <droce_pcapfile.h>
#include <rte_ip.h>

#include <droce_wire.h>

#define MAX_RANGES 64
#define DEFAULT_LENGTHS "0-16,255-257,1023-1025,4093-4096"

struct range {
	uint32_t lo;
	uint32_t hi;
};

struct options {
	const char *out;
	bool ipv4;
	bool ipv6;
	bool vlan;
	uint64_t seed;
	struct range lens[MAX_RANGES];
	unsigned int nlens;
	bool opcodes[256];      /* which opcodes to write */
};

static uint64_t rng_state;

/* splitmix64: small, seeded, good enough to vary every header field. */
static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s -o FILE.pcap [options]\n"
		"Write one frame per RoCEv2 opcode, IP version and payload length.\n"
		"  -o, --output FILE    pcap file to write\n"
		"  -4, --ipv4           IPv4 frames only\n"
		"  -6, --ipv6           IPv6 frames only\n"
		"  -v, --vlan           add an 802.1Q tag\n"
		"  -O, --opcodes LIST   only these opcodes, e.g. 0x04,0x64 (default: all)\n"
		"  -l, --lengths LIST   payload lengths, e.g. 0-16,1024,4096\n"
		"                       (default " DEFAULT_LENGTHS ")\n"
		"  -s, --seed N         seed of the header field values (default 1)\n"
		"  -h, --help           this text\n", prog);
}

static int
parse_lengths(const char *arg, struct options *o)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (copy == NULL)
		return -ENOMEM;
	o->nlens = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long lo, hi;

		lo = strtoul(tok, &end, 0);
		hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 0);
		if (*end != '\0' || hi < lo || hi > DROCE_MAX_MTU ||
		    o->nlens == MAX_RANGES) {
			ret = -EINVAL;
			break;
		}
		o->lens[o->nlens].lo = (uint32_t)lo;
		o->lens[o->nlens].hi = (uint32_t)hi;
		o->nlens++;
	}
	free(copy);
	return o->nlens == 0 ? -EINVAL : ret;
}

static int
parse_opcodes(const char *arg, struct options *o)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = -EINVAL;

	if (copy == NULL)
		return -ENOMEM;
	memset(o->opcodes, 0, sizeof(o->opcodes));
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long op = strtoul(tok, &end, 0);

		if (*end != '\0' || op > 255 ||
		    droce_opcode_get((uint8_t)op) == NULL) {
			ret = -EINVAL;
			break;
		}
		o->opcodes[op] = true;
		ret = 0;
	}
	free(copy);
	return ret;
}

/* Fill every header field of pkt from the generator. */
static void
randomise(struct droce_wire_pkt *pkt, uint8_t opcode, int ip_version,
	  bool vlan)
{
	static const struct rte_ether_addr src_mac = {
		{ 0x02, 0xd7, 0x0c, 0xe0, 0x00, 0x01 } };
	static const struct rte_ether_addr dst_mac = {
		{ 0x02, 0xd7, 0x0c, 0xe0, 0x00, 0x02 } };
	struct droce_bth *b = &pkt->bth;
	uint32_t sqpn = rng() & DROCE_PSN_MASK;

	memset(pkt, 0, sizeof(*pkt));
	pkt->dst_mac = dst_mac;
	pkt->src_mac = src_mac;
	pkt->has_vlan = vlan;
	pkt->vlan_tci = (uint16_t)(rng() & 0xefff);
	pkt->ip_version = (uint8_t)ip_version;
	pkt->tos = (uint8_t)(rng() & 0xfc);
	pkt->ttl = 64;
	pkt->ip_id = (uint16_t)rng();
	pkt->ip_frag = RTE_IPV4_HDR_DF_FLAG;
	pkt->flow_label = (uint32_t)rng() & 0xfffff;
	if (ip_version == 4) {
		droce_gid_from_ipv4(pkt->src_gid, htonl(0x0a000001));
		droce_gid_from_ipv4(pkt->dst_gid, htonl(0x0a000002));
	} else {
		inet_pton(AF_INET6, "fd00:d20c:e::1", pkt->src_gid);
		inet_pton(AF_INET6, "fd00:d20c:e::2", pkt->dst_gid);
	}
	b->opcode = opcode;
	b->se = rng() & 1;
	b->m = rng() & 1;
	b->pkey = (rng() & 1) ? 0xffff : (uint16_t)rng();
	b->fecn = rng() & 1;
	b->becn = rng() & 1;
	b->dqpn = (uint32_t)rng() & DROCE_PSN_MASK;
	b->ackreq = rng() & 1;
	b->psn = (uint32_t)rng() & DROCE_PSN_MASK;
	pkt->udp_sport = droce_udp_sport(sqpn, b->dqpn);
	pkt->udp_dport = DROCE_UDP_PORT;
	pkt->xrceth.xrcsrq = (uint32_t)rng() & DROCE_PSN_MASK;
	pkt->deth.qkey = (uint32_t)rng();
	pkt->deth.srcqp = sqpn;
	pkt->feth.sel = rng() & 3;
	pkt->feth.plt = rng() & 3;
	pkt->reth.va = rng();
	pkt->reth.rkey = (uint32_t)rng();
	pkt->reth.dlen = (uint32_t)rng() & 0xffffff;
	pkt->aeth.syndrome = (uint8_t)rng() & 0x7f;
	pkt->aeth.msn = (uint32_t)rng() & DROCE_PSN_MASK;
	pkt->atomiceth.va = rng() & ~7ull;
	pkt->atomiceth.rkey = (uint32_t)rng();
	pkt->atomiceth.swap_add = rng();
	pkt->atomiceth.compare = rng();
	pkt->atomicacketh.orig = rng();
	pkt->immdt = (uint32_t)rng();
	pkt->ieth_rkey = (uint32_t)rng();
}

static int
emit(struct droce_pcapfile *pf, struct droce_wire_pkt *pkt, uint32_t plen,
     uint64_t *count)
{
	static uint8_t payload[DROCE_MAX_MTU];
	static uint8_t frame[DROCE_MAX_HDR_LEN + DROCE_MAX_MTU + 8];
	uint32_t i;
	int len;

	for (i = 0; i < plen; i++)
		payload[i] = (uint8_t)rng();
	pkt->payload = payload;
	pkt->payload_len = plen;
	len = droce_wire_build(frame, sizeof(frame), pkt);
	if (len < 0)
		return len;
	(*count)++;
	/* One frame per microsecond from the epoch: stable output. */
	return droce_pcap_write(pf, *count * 1000u, frame, (uint32_t)len);
}

static int
generate(const struct options *o, uint64_t *count)
{
	struct droce_pcapfile pf;
	struct droce_wire_pkt pkt;
	unsigned int op, r, v;
	int ret;

	ret = droce_pcap_open_write(&pf, o->out);
	if (ret < 0)
		return ret;
	rng_state = o->seed;
	for (v = 4; v <= 6 && ret == 0; v += 2) {
		if ((v == 4 && !o->ipv4) || (v == 6 && !o->ipv6))
			continue;
		for (op = 0; op < 256 && ret == 0; op++) {
			const struct droce_opcode_info *info =
				droce_opcode_get((uint8_t)op);

			if (info == NULL || !o->opcodes[op])
				continue;
			if (!(info->flags & DROCE_OPF_PAYLOAD)) {
				randomise(&pkt, (uint8_t)op, (int)v, o->vlan);
				ret = emit(&pf, &pkt, 0, count);
				continue;
			}
			if (info->flags & DROCE_OPF_ATOMIC_WRITE) {
				randomise(&pkt, (uint8_t)op, (int)v, o->vlan);
				ret = emit(&pf, &pkt, 8, count);
				continue;
			}
			for (r = 0; r < o->nlens && ret == 0; r++) {
				uint32_t l;

				for (l = o->lens[r].lo;
				     l <= o->lens[r].hi && ret == 0; l++) {
					randomise(&pkt, (uint8_t)op, (int)v,
						  o->vlan);
					ret = emit(&pf, &pkt, l, count);
				}
			}
		}
	}
	if (ret == 0)
		ret = droce_pcap_close(&pf);
	else
		droce_pcap_close(&pf);
	return ret;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "ipv4", no_argument, NULL, '4' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "vlan", no_argument, NULL, 'v' },
		{ "opcodes", required_argument, NULL, 'O' },
		{ "lengths", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .ipv4 = true, .ipv6 = true, .seed = 1 };
	uint64_t count = 0;
	int opt, ret;

	parse_lengths(DEFAULT_LENGTHS, &o);
	memset(o.opcodes, 1, sizeof(o.opcodes));
	while ((opt = getopt_long(argc, argv, "o:46vO:l:s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o.out = optarg;
			break;
		case '4':
			o.ipv6 = false;
			break;
		case '6':
			o.ipv4 = false;
			break;
		case 'v':
			o.vlan = true;
			break;
		case 'O':
			if (parse_opcodes(optarg, &o) < 0) {
				fprintf(stderr, "droce-framegen: bad opcode list "
					"'%s' (defined opcodes only)\n", optarg);
				return 2;
			}
			break;
		case 'l':
			if (parse_lengths(optarg, &o) < 0) {
				fprintf(stderr, "droce-framegen: bad length list "
					"'%s' (0..%u)\n", optarg, DROCE_MAX_MTU);
				return 2;
			}
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (o.out == NULL || optind != argc || (!o.ipv4 && !o.ipv6)) {
		usage(stderr, argv[0]);
		return 2;
	}
	ret = generate(&o, &count);
	if (ret < 0) {
		fprintf(stderr, "droce-framegen: %s: %s\n", o.out, strerror(-ret));
		return 1;
	}
	printf("droce-framegen: wrote %" PRIu64 " frames to %s\n", count, o.out);
	return 0;
}
