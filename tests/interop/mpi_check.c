/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * An MPI job's traffic, its data checked: run by test_mpi.py with Open
 * MPI over UCX over droce, one droce device a rank.
 *
 * - ping-pong between ranks 0 and 1: messages of 8 bytes to 1 MiB (eager
 *   and rendezvous), each filled with a pattern of its size and round,
 *   checked when it arrives, then sent back; the 8-byte round trip's
 *   median printed;
 * - MPI_Allreduce (MPI_SUM) of 64 Ki doubles and 16 Ki ints that each
 *   rank fills from its rank, against the sums worked out;
 * - MPI_Alltoall of 4 KiB a pair, each block naming its sender and
 *   receiver;
 * - MPI_Bcast of 1 MiB from the last rank, and a barrier.
 *
 * Each rank prints "mpi_check: rank R of N ok" and exits 0, or names what
 * was wrong and calls MPI_Abort.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define PP_MAX (1 << 20)
#define PP_ROUNDS 20
#define LAT_ROUNDS 1000
#define RED_DOUBLES (64 * 1024)
#define RED_INTS (16 * 1024)
#define A2A_BYTES 4096
#define BCAST_BYTES (1 << 20)

static int rank, size;

static void
fail(const char *what, long at)
{
	fprintf(stderr, "mpi_check: rank %d: %s (at %ld)\n", rank, what, at);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static uint8_t
pattern(size_t i, uint32_t seed)
{
	return (uint8_t)((i * 2654435761u + seed) >> 7);
}

static void
fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(i, seed);
}

static void
expect(const uint8_t *p, size_t len, uint32_t seed, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(i, seed))
			fail(what, (long)i);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
ping_pong(void)
{
	uint8_t *buf = malloc(PP_MAX);
	static double rtt[LAT_ROUNDS];
	int peer = rank == 0 ? 1 : 0;
	size_t len;
	int r;

	if (buf == NULL)
		fail("no memory", 0);
	if (rank > 1)
		goto out;
	for (len = 8; len <= PP_MAX; len *= 4) {
		for (r = 0; r < PP_ROUNDS; r++) {
			uint32_t seed = (uint32_t)(len * 31 + (size_t)r);

			if (rank == 0) {
				fill(buf, len, seed);
				MPI_Send(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD);
				memset(buf, 0, len);
				MPI_Recv(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				expect(buf, len, seed + 1, "ping-pong back");
			} else {
				MPI_Recv(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				expect(buf, len, seed, "ping-pong there");
				fill(buf, len, seed + 1);
				MPI_Send(buf, (int)len, MPI_BYTE, peer, r,
					 MPI_COMM_WORLD);
			}
		}
	}
	for (r = 0; r < LAT_ROUNDS; r++) {
		double t0 = MPI_Wtime();

		if (rank == 0) {
			MPI_Send(buf, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
		}
		rtt[r] = MPI_Wtime() - t0;
	}
	if (rank == 0) {
		qsort(rtt, LAT_ROUNDS, sizeof(rtt[0]), cmp_double);
		printf("mpi_check: 8 B ping-pong p50 %.2f us (half the round "
		       "trip)\n", rtt[LAT_ROUNDS / 2] * 1e6 / 2);
	}
out:
	free(buf);
}

static void
reductions(void)
{
	double *d = malloc(RED_DOUBLES * sizeof(*d));
	int *n = malloc(RED_INTS * sizeof(*n));
	long i;

	if (d == NULL || n == NULL)
		fail("no memory", 0);
	for (i = 0; i < RED_DOUBLES; i++)
		d[i] = (double)(rank + 1) * (double)(i % 1000) * 0.5;
	for (i = 0; i < RED_INTS; i++)
		n[i] = rank * 1000 + (int)(i % 977);
	MPI_Allreduce(MPI_IN_PLACE, d, RED_DOUBLES, MPI_DOUBLE, MPI_SUM,
		      MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, n, RED_INTS, MPI_INT, MPI_SUM,
		      MPI_COMM_WORLD);
	/* sum over r of (r + 1) = N(N+1)/2; of r * 1000 = 1000 N(N-1)/2 */
	for (i = 0; i < RED_DOUBLES; i++)
		if (d[i] != (double)size * (size + 1) / 2 *
		    (double)(i % 1000) * 0.5)
			fail("MPI_Allreduce of doubles", i);
	for (i = 0; i < RED_INTS; i++)
		if (n[i] != 1000 * size * (size - 1) / 2 + size * (int)(i % 977))
			fail("MPI_Allreduce of ints", i);
	free(d);
	free(n);
}

static void
all_to_all(void)
{
	uint8_t *out = malloc((size_t)size * A2A_BYTES);
	uint8_t *in = malloc((size_t)size * A2A_BYTES);
	int p;

	if (out == NULL || in == NULL)
		fail("no memory", 0);
	for (p = 0; p < size; p++)
		fill(out + (size_t)p * A2A_BYTES, A2A_BYTES,
		     (uint32_t)(rank * 64 + p));
	memset(in, 0, (size_t)size * A2A_BYTES);
	MPI_Alltoall(out, A2A_BYTES, MPI_BYTE, in, A2A_BYTES, MPI_BYTE,
		     MPI_COMM_WORLD);
	for (p = 0; p < size; p++)
		expect(in + (size_t)p * A2A_BYTES, A2A_BYTES,
		       (uint32_t)(p * 64 + rank), "MPI_Alltoall");
	free(out);
	free(in);
}

static void
broadcast(void)
{
	uint8_t *b = malloc(BCAST_BYTES);

	if (b == NULL)
		fail("no memory", 0);
	if (rank == size - 1)
		fill(b, BCAST_BYTES, 0xbc);
	else
		memset(b, 0, BCAST_BYTES);
	MPI_Bcast(b, BCAST_BYTES, MPI_BYTE, size - 1, MPI_COMM_WORLD);
	expect(b, BCAST_BYTES, 0xbc, "MPI_Bcast");
	free(b);
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2)
		fail("needs two ranks or more", size);
	ping_pong();
	reductions();
	all_to_all();
	broadcast();
	MPI_Barrier(MPI_COMM_WORLD);
	printf("mpi_check: rank %d of %d ok\n", rank, size);
	MPI_Finalize();
	return 0;
}
