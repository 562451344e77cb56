#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# One engine lcore per device against two, in one run: droce-perf's 64-byte
# write_bw between droce0 and droce1 over a net_ring pair, QPS QPs
# (default 8: every lcore gets some), the engine's defaults, and
#   1: two engine lcores, on CPUs 0 and 1: droce0 on the first, droce1
#      on the second (one lcore per device);
#   2: the same two lcores, each with a shard of both devices (lcores =
#      0,1: two lcores per device);
#   shared: one engine lcore for both devices (the default: the last
#      CPU), the application's thread alone on the other CPU;
#   rss: as 2, the devices on net_fault's switch instead, whose ports
#      spread frames over their queues by RSS: each QP's UDP source port
#      lands its frames on its peer's lcore;
#   handoff: as rss with rss = off: every frame reaches the first lcore,
#      which hands those of the other lcore's QPs on through a ring;
# in turns, ROUNDS rounds of SECS seconds, the order changed every round;
# and raw 64-byte frames, the yardstick. Medians, and each rate as a
# ratio of the raw frames'. This virtual machine has two CPUs: in 1 and
# 2 the application's posting thread shares them with two lcores.
#
# Usage: devtools/lcores.sh [ROUNDS] [SECS] [QPS]
#        (after devtools/quickstart.sh demo)

set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-3}
qps=${3:-8}
perf=build/app/droce-perf
. devtools/ring_configs.sh	# (median)
work=$(mktemp -d /tmp/droce-lcores.XXXXXX)
trap 'rm -rf "$work"' EXIT
configs="1 2 shared rss handoff"
for c in $configs; do
	{
		if [ "$c" != shared ]; then
			printf '[engine]\ncores = 0,1\n'
		fi
		for d in 0 1; do
			case $c in
			rss | handoff) echo "[device droce$d]
port = switch:bench" ;;
			*) echo "[device droce$d]
port = ring:bench:$d" ;;
			esac
			echo "ipv4 = 10.0.0.$((d + 1))/24"
			case $c in
			1) echo "lcores = $d" ;;
			2 | rss) echo "lcores = 0,1" ;;
			handoff) printf 'lcores = 0,1\nrss = off\n' ;;
			esac
		done
	} >"$work/$c.ini"
done

# the messages per second (M) a write_bw run printed
rate() {
	DROCE_CONFIG=$1 "$perf" write_bw -s 64 -t 16 -q "$qps" -D "$secs" \
		--no-progress 2>&1 | awk '$1 == 64 && NF == 5 { r = $5 }
		END { if (r == "") exit 1; print r }'
}

# raw 64-byte frames' rate (Mpps), carrying as many bytes as a WRITE's
raw() {
	DROCE_CONFIG=$work/shared.ini "$perf" raw -s 64 -D "$secs" \
		--no-progress 2>&1 | awk '$1 ~ /^[0-9]+$/ && NF == 4 { r = $3 }
		END { if (r == "") exit 1; print r }'
}

for c in $configs raw; do
	: >"$work/$c.r"
done
r=1
while [ "$r" -le "$rounds" ]; do
	case $((r % 3)) in
	1) order="1 2 shared rss handoff" ;;
	2) order="handoff rss 2 shared 1" ;;
	*) order="shared handoff 1 rss 2" ;;
	esac
	for c in $order; do
		v=$(rate "$work/$c.ini")
		echo "round $r, $c: $v Mpps"
		echo "$v" >>"$work/$c.r"
	done
	v=$(raw)
	echo "round $r, raw 64-byte frames: $v Mpps"
	echo "$v" >>"$work/raw.r"
	r=$((r + 1))
done
m1=$(median <"$work/1.r")
m2=$(median <"$work/2.r")
ms=$(median <"$work/shared.r")
mrss=$(median <"$work/rss.r")
mh=$(median <"$work/handoff.r")
mr=$(median <"$work/raw.r")
echo
echo "medians of $rounds rounds, write_bw -s 64, $qps QPs (Mpps, ratio to raw):"
awk -v a="$m1" -v b="$m2" -v s="$ms" -v f="$mr" -v x="$mrss" -v h="$mh" \
    'BEGIN {
	printf "  1 lcore per device (2 lcores):     %6.3f  %.3f\n", a, a / f
	printf "  2 lcores per device (2 lcores):    %6.3f  %.3f\n", b, b / f
	printf "  one lcore for both devices:        %6.3f  %.3f\n", s, s / f
	printf "  2 per device, switch, RSS:         %6.3f  %.3f\n", x, x / f
	printf "  2 per device, switch, hand-off:    %6.3f  %.3f\n", h, h / f
	printf "  raw 64-byte frames:                %6.3f\n", f
	printf "  2 lcores per device / 1:           %6.2f\n", b / a
	printf "  RSS / hand-off:                    %6.2f\n", x / h }'
