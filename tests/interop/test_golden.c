/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * lib/wire against Linux soft-RoCE: every frame of the golden captures
 * (tests/data/pcaps, written by rdma_rxe) parses, its ICRC verifies,
 * building the parsed view reproduces it bit for bit, and flipping any
 * single bit the ICRC covers makes verification fail while flipping a
 * masked bit does not.
 *
 * Usage: test_golden PCAP_DIR
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <droce_pcapfile.h>
#include <droce_wire.h>

#define MAX_FILES 64
#define FRAME_CAP 16384

struct frame {
	const char *file;
	uint32_t number;
	uint32_t len;
	uint8_t *data;
};

static struct frame *frames;
static size_t nframes;
static const char *pcap_dir;

static int
load_file(const char *dir, const char *name)
{
	static uint8_t buf[FRAME_CAP];
	struct droce_pcapfile pf;
	struct droce_pcap_rec rec;
	char path[4096];
	char *file = strdup(name);
	uint32_t number = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (file == NULL || droce_pcap_open_read(&pf, path) < 0) {
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	while ((ret = droce_pcap_read(&pf, &rec, buf, sizeof(buf))) > 0) {
		struct frame *f;

		frames = realloc(frames, (nframes + 1) * sizeof(*frames));
		if (frames == NULL)
			return -1;
		f = &frames[nframes++];
		f->file = file;
		f->number = ++number;
		f->len = rec.caplen;
		f->data = malloc(rec.caplen);
		if (f->data == NULL)
			return -1;
		memcpy(f->data, buf, rec.caplen);
	}
	droce_pcap_close(&pf);
	return ret;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
load_all(void **state)
{
	char *names[MAX_FILES];
	size_t n = 0, i;
	struct dirent *de;
	DIR *d = opendir(pcap_dir);

	(void)state;
	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", pcap_dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL && n < MAX_FILES) {
		size_t l = strlen(de->d_name);

		if (l > 5 && strcmp(de->d_name + l - 5, ".pcap") == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++)
		if (load_file(pcap_dir, names[i]) < 0)
			return -1;
	for (i = 0; i < n; i++)
		free(names[i]);
	return n == 0 ? -1 : 0;
}

static const struct frame *
find(const char *file, uint32_t number)
{
	size_t i;

	for (i = 0; i < nframes; i++)
		if (strcmp(frames[i].file, file) == 0 &&
		    frames[i].number == number)
			return &frames[i];
	fail_msg("%s frame %u not loaded", file, number);
	return NULL;
}

static void
test_all_frames_parse_and_verify(void **state)
{
	struct droce_wire_pkt pkt;
	size_t i;

	(void)state;
	/* the captures' README counts 1545 frames */
	assert_int_equal(nframes, 1545);
	for (i = 0; i < nframes; i++) {
		const struct frame *f = &frames[i];
		int ret = droce_wire_parse(f->data, f->len, 0, &pkt);

		if (ret != 0)
			fail_msg("%s frame %u: %s", f->file, f->number,
				 droce_wire_strerror(ret));
		assert_true(pkt.icrc_ok);
		assert_int_equal(pkt.frame_len, f->len);
		assert_true(droce_icrc_verify(f->data + pkt.l3_off,
					      pkt.frame_len - pkt.l3_off));
		/* rxe: IPv4, TTL 64, DF, UDP checksum 0, TVer 0 */
		assert_int_equal(pkt.ip_version, 4);
		assert_int_equal(pkt.ttl, 64);
		assert_int_equal(pkt.udp_cksum, 0);
		assert_int_equal(pkt.bth.tver, 0);
	}
}

static void
test_reserialise_bit_exact(void **state)
{
	static uint8_t out[FRAME_CAP];
	struct droce_wire_pkt pkt;
	size_t i;

	(void)state;
	for (i = 0; i < nframes; i++) {
		const struct frame *f = &frames[i];
		int len;

		assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
		len = droce_wire_build(out, sizeof(out), &pkt);
		if (len != (int)f->len || memcmp(out, f->data, f->len) != 0)
			fail_msg("%s frame %u: rebuilt frame differs", f->file,
				 f->number);
	}
}

/* Fields a router may rewrite, which the ICRC does not cover (IPv4). */
static bool
masked(const struct droce_wire_pkt *pkt, uint32_t off)
{
	uint32_t ip = off - pkt->l3_off;
	uint32_t udp = off - pkt->l4_off;

	return ip == 1 || ip == 8 || ip == 10 || ip == 11 || /* TOS TTL csum */
		udp == 6 || udp == 7 ||                       /* UDP csum */
		off == pkt->bth_off + 4u;                     /* FECN BECN */
}

static void
test_single_bit_flips(void **state)
{
	static uint8_t copy[FRAME_CAP];
	struct droce_wire_pkt pkt;
	uint64_t covered = 0, masked_bits = 0;
	size_t i;

	(void)state;
	for (i = 0; i < nframes; i++) {
		const struct frame *f = &frames[i];
		uint32_t off, len;
		int bit;

		assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
		len = pkt.frame_len - pkt.l3_off;
		memcpy(copy, f->data, f->len);
		/* from the IP header to the last bit of the ICRC */
		for (off = pkt.l3_off; off < pkt.frame_len; off++) {
			bool m = masked(&pkt, off);

			for (bit = 0; bit < 8; bit++) {
				bool ok;

				copy[off] ^= (uint8_t)(1u << bit);
				ok = droce_icrc_verify(copy + pkt.l3_off, len);
				copy[off] ^= (uint8_t)(1u << bit);
				if (ok != m)
					fail_msg("%s frame %u: flipping byte %u "
						 "bit %d %s the ICRC", f->file,
						 f->number, off, bit,
						 m ? "broke" : "did not break");
				if (m)
					masked_bits++;
				else
					covered++;
			}
		}
	}
	print_message("%" PRIu64 " covered and %" PRIu64 " masked bit flips "
		      "checked\n", covered, masked_bits);
}

/* What the captures' README says happened, read back through lib/wire. */
static void
test_documented_events(void **state)
{
	struct droce_wire_pkt pkt;
	const struct frame *f;

	(void)state;
	/* loss_write.pcap: frame 51 is a NAK, PSN sequence error, naming the
	 * PSN of the dropped frame 3, resent in frame 52 */
	f = find("loss_write.pcap", 51);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.opcode, DROCE_TR_RC | DROCE_OP_ACKNOWLEDGE);
	assert_int_equal(pkt.aeth.syndrome,
			 DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR);
	assert_int_equal(pkt.bth.psn, 176046);
	f = find("loss_write.pcap", 3);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.psn, 176046);
	f = find("loss_write.pcap", 52);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.psn, 176046);
	assert_int_equal(pkt.bth.opcode, DROCE_TR_RC | DROCE_OP_WRITE_MIDDLE);

	/* rc_send.pcap: frame 16 retransmits the SEND of frame 13 (PSN
	 * 0x8a32cd); frame 18 is the duplicate ACK, MSN 4 again */
	f = find("rc_send.pcap", 16);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.psn, 0x8a32cd);
	assert_int_equal(pkt.payload_len, 64);
	f = find("rc_send.pcap", 18);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.aeth.syndrome, 0x1f);
	assert_int_equal(pkt.aeth.msn, 4);

	/* rc_send_bw_s5000.pcap: 5000 bytes at MTU 1024 = 4 x 1024 + 904 */
	f = find("rc_send_bw_s5000.pcap", 1);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.opcode, DROCE_TR_RC | DROCE_OP_SEND_FIRST);
	assert_int_equal(pkt.payload_len, 1024);
	f = find("rc_send_bw_s5000.pcap", 5);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.opcode, DROCE_TR_RC | DROCE_OP_SEND_LAST);
	assert_int_equal(pkt.payload_len, 904);

	/* rdma_cm_udaddy.pcap: UD SEND with immediate, DETH source QP 0x11 */
	f = find("rdma_cm_udaddy.pcap", 3);
	assert_int_equal(droce_wire_parse(f->data, f->len, 0, &pkt), 0);
	assert_int_equal(pkt.bth.opcode, DROCE_TR_UD | DROCE_OP_SEND_ONLY_IMM);
	assert_int_equal(pkt.deth.srcqp, 0x11);
	assert_int_equal(pkt.deth.qkey, 0x01234567);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_frames_parse_and_verify),
		cmocka_unit_test(test_reserialise_bit_exact),
		cmocka_unit_test(test_single_bit_flips),
		cmocka_unit_test(test_documented_events),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s PCAP_DIR\n", argv[0]);
		return 2;
	}
	pcap_dir = argv[1];
	return cmocka_run_group_tests(tests, load_all, NULL);
}
