#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The benchmark figures of doc/guides/benchmarks.rst: droce-perf over
# net_ring (one process, droce0 -> droce1, one engine lcore for both; with
# a 1500-byte MTU, and a 9000-byte one, "ring9k", for large messages) and
# over net_memif (two processes), each beside the raw frame rate of the
# same port and lcore; the floor of RoCE packets alone (raw frames with
# their ICRCs computed and checked) on both, and one engine lcore's
# 64-byte WRITEs against that floor (the per-lcore floor); and memcpy on
# this machine.
#
# Usage: devtools/bench.sh [SECONDS]    (after devtools/quickstart.sh demo)

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
perf=build/app/droce-perf
secs=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. devtools/ring_configs.sh
ring_configs "$work"
# memif: each process on its engine's core, the engines yielding before
# they sleep (not the default: doc/guides/user.rst says why)
sed -e 's/^idle_sleep_us = .*/idle_sleep_us = 20\nidle_yield_us = 1000/' \
	-e "s|/tmp/droce-memif.sock|$work/memif.sock|" \
	config/memif-server.ini >"$work/server.ini"
sed -e 's/^idle_sleep_us = .*/idle_sleep_us = 20\nidle_yield_us = 1000/' \
	-e "s|/tmp/droce-memif.sock|$work/memif.sock|" \
	config/memif-client.ini >"$work/client.ini"

run() { # port test size [flag]: droce-perf's report, raw yardstick in
	port=$1 test=$2 size=$3 flag=${4:-}
	if [ "$port" = ring ] || [ "$port" = ring9k ]; then
		DROCE_CONFIG="$work/$port.ini" $perf "$test" -s "$size" \
			-D "$secs" -R $flag --no-progress
	else
		# each process on its engine's core (cores = 1 and 0 in the
		# configs): the posting thread shares the core with its own
		# engine, not with the other process's
		DROCE_CONFIG="$work/server.ini" taskset -c 1 $perf "$test" \
			-s "$size" -D "$secs" --server >/dev/null 2>&1 &
		sleep 1
		DROCE_CONFIG="$work/client.ini" taskset -c 0 $perf \
			"$test" -s "$size" -D "$secs" -R $flag --no-progress \
			127.0.0.1
		wait
	fi
}

row() { # port test size: one line of the table
	run "$@" | awk -v port="$1" -v test="$2" -v size="$3" '
		/^ [0-9]/ && !res { mb = $4; rate = $5; res = 1 }
		/raw / { raw = $2 }
		/RoCE / { pps = $3 }
		/ratio/ { ratio = $2 }
		END { if (raw == "") { raw = "-"; ratio = "-"; pps = "-" }
			printf "%-6s %-10s %8s %12.3f %12.1f %10s %10s %7s\n",
			port, test, size, rate, mb, pps, raw, ratio }'
}

floor() { # port: raw frames, and RoCE ones with their ICRCs, after write_bw
	{ run "$1" write_bw 64; run "$1" write_bw 64 --raw-icrc; } |
	awk -v port="$1" '/^   raw / { raw = $2 }
		/^   raw\+icrc / { floor = $2 }
		END { printf "  %-6s raw %7.3f Mpps, RoCE with ICRCs %7.3f Mpps:" \
			" %.2f of raw\n", port, raw, floor,
			(raw > 0 ? floor / raw : 0) }'
}

printf "%-6s %-10s %8s %12s %12s %10s %10s %7s\n" port test bytes \
	"Mmsg/s" "MB/s" "RoCE Mpps" "raw Mpps" ratio
for port in ring memif; do
	row $port write_bw 64
	row $port write_bw 65536
	row $port send_bw 64
	row $port read_bw 65536
	if [ $port = ring ]; then
		row ring9k write_bw 65536
		row ring9k read_bw 65536
	fi
done
echo
echo "the floor: 138-byte RoCE packets no QP takes, their ICRCs computed"
echo "on send and checked on receipt, nothing else (each yardstick taken"
echo "after a 64-byte write_bw run, as in the table):"
floor ring
floor memif
echo
echo "one engine lcore doing both ends against that floor, the two in ten"
echo "turns each (a host's drift weighs on both alike), 64-byte write_bw:"
for l in 1 32; do
	DROCE_CONFIG="$work/ring.ini" $perf write_bw -s 64 -D "$secs" -l $l \
		-R --raw-icrc --turns 10 --no-progress | awk -v l=$l '
		/^   raw\+icrc / { floor = $2 }
		/^   RoCE / { roce = $3 }
		/ratio/ { ratio = $2 }
		END { printf "  -l %-2s %7.3f Mpps against %7.3f: %s of the floor\n",
			l, roce, floor, ratio }'
done
echo
echo "memcpy on this machine (8 MiB working set):"
$perf memcpy -s 65536 -D "$secs" | awk '/^ [0-9]/ { print "  64 KiB copies: " $3 " GB/s" }'
echo
echo "latency, one process over net_ring:"
for t in write_lat send_lat; do
	DROCE_CONFIG="$work/ring.ini" $perf $t -n 20000 | awk -v t=$t \
		'/^ [0-9]/ { print "  " t ": typical " $5 " us, 99% " $8 " us" }'
done
