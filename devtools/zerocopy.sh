#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Large messages with and without zero copy, in one run: droce-perf's
# write_bw and read_bw of 64 KiB and 1 MiB between droce0 and droce1 over
# a net_ring pair with a jumbo MTU (path MTU 4096), busy-polling, with
# [engine] zero_copy = auto (the default: payloads sent from the
# registered memory itself, taken by the receiver where they lie) and
# zero_copy = off (copied into and out of packet buffers), in turns,
# ROUNDS rounds of SECS seconds, the order changed every round; and the
# yardstick, memcpy_crc (each message copied once and its bytes CRCed
# once: what one side's copy costs). Medians in GB/s.
#
# Usage: devtools/zerocopy.sh [ROUNDS] [SECS]
#        (after devtools/quickstart.sh demo)

set -eu
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-3}
perf=build/app/droce-perf
work=$(mktemp -d /tmp/droce-zc.XXXXXX)
trap 'rm -rf "$work"' EXIT
. devtools/ring_configs.sh
ring_configs "$work"
cp "$work/ring9k.ini" "$work/auto.ini"
cp "$work/ring9k-copy.ini" "$work/off.ini"

# GB/s of a run: a bandwidth test's average MB/s, or a yardstick's GB/s
gbs() { # config test size
	DROCE_CONFIG=$work/$1.ini "$perf" "$2" -s "$3" -D "$secs" \
		--no-progress 2>&1 | awk -v s="$3" -v t="$2" '
		$1 == s && NF == 5 { r = $4 / 1000 }
		$1 == s && NF == 3 && t ~ /^memcpy/ { r = $3 }
		END { if (r == "") exit 1; printf "%.2f\n", r }'
}

r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) = 1 ]; then order="auto off"; else order="off auto"; fi
	for size in 65536 1048576; do
		for t in write_bw read_bw; do
			for c in $order; do
				echo "$(gbs "$c" "$t" "$size")" \
					>>"$work/$c-$t-$size.r"
			done
		done
		gbs auto memcpy_crc "$size" >>"$work/memcpy_crc-$size.r"
	done
	r=$((r + 1))
done

echo "medians of $rounds turns of $secs s, GB/s (net_ring, MTU 9000):"
printf "%-10s %8s %10s %10s %8s %12s\n" test bytes copy zero-copy ratio \
	memcpy_crc
for size in 65536 1048576; do
	y=$(median <"$work/memcpy_crc-$size.r")
	for t in write_bw read_bw; do
		off=$(median <"$work/off-$t-$size.r")
		on=$(median <"$work/auto-$t-$size.r")
		ratio=$(echo "$on $off" |
			awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }')
		printf "%-10s %8s %10s %10s %8s %12s\n" "$t" "$size" "$off" \
			"$on" "$ratio" "$y"
	done
done
