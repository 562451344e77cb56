/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-dump: print every RoCEv2 frame of a pcap file, decoded by lib/wire,
 * one line per frame (or one JSON object per line with --json).
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <droce_build_config.h>
#include <droce_pcapfile.h>

#include "dump.h"

static void
usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s [--json] [--check] FILE.pcap...\n"
		"Decode the RoCEv2 frames of classic pcap files (Ethernet).\n"
		"  -j, --json     one JSON object per line instead of text\n"
		"  -c, --check    exit with status 1 if any RoCEv2 frame is\n"
		"                 malformed (non-RoCE frames are fine)\n"
		"  -V, --version  print the version\n"
		"  -h, --help     this text\n", prog);
}

struct counts {
	uint64_t roce;
	uint64_t other;
	uint64_t bad;
};

static int
dump_file(const char *path, bool json, struct counts *c)
{
	static uint8_t buf[DROCE_PCAP_SNAPLEN * 4];
	struct droce_pcapfile pf;
	struct droce_pcap_rec rec;
	struct droce_wire_pkt pkt;
	struct dump_frame fr = { .pkt = &pkt };
	int ret;

	ret = droce_pcap_open_read(&pf, path);
	if (ret < 0) {
		fprintf(stderr, "droce-dump: %s: %s\n", path,
			ret == -EINVAL ? "not a pcap file" : strerror(-ret));
		return -1;
	}
	if (pf.linktype != DROCE_PCAP_LINKTYPE_ETHERNET) {
		fprintf(stderr, "droce-dump: %s: link type %u is not Ethernet\n",
			path, pf.linktype);
		droce_pcap_close(&pf);
		return -1;
	}
	while ((ret = droce_pcap_read(&pf, &rec, buf, sizeof(buf))) > 0) {
		fr.number++;
		fr.ts_ns = rec.ts_ns;
		fr.caplen = rec.caplen;
		fr.err = droce_wire_parse(buf, rec.caplen, 0, &pkt);
		if (fr.err == -DROCE_WIRE_ENOTROCE)
			c->other++;
		else if (fr.err != 0)
			c->bad++;
		else
			c->roce++;
		if (json)
			dump_json(stdout, &fr);
		else
			dump_text(stdout, &fr);
	}
	droce_pcap_close(&pf);
	if (ret < 0) {
		fprintf(stderr, "droce-dump: %s: record %" PRIu64 ": %s\n", path,
			fr.number + 1, ret == -EINVAL ? "corrupt record" :
			strerror(-ret));
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct counts c = { 0 };
	bool json = false, check = false, failed = false;
	int opt, i;

	while ((opt = getopt_long(argc, argv, "jcVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'c':
			check = true;
			break;
		case 'V':
			printf("droce-dump %s\n", DROCE_VERSION);
			return 0;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	for (i = optind; i < argc; i++)
		if (dump_file(argv[i], json, &c) < 0)
			failed = true;
	fflush(stdout);
	if (check)
		fprintf(stderr, "droce-dump: %" PRIu64 " RoCEv2, %" PRIu64
			" malformed, %" PRIu64 " other frames\n",
			c.roce, c.bad, c.other);
	if (failed)
		return 2;
	return check && c.bad != 0 ? 1 : 0;
}
