#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# What congestion control costs where there is no congestion, in one run:
# droce-perf write_bw of 64-byte WRITEs between droce0 and droce1 over a
# net_ring pair (busy-polling engines) with [engine] ecn = on (the
# default: ECN-capable packets, DCQCN ready to act on CNPs) and ecn = off,
# in turns, ROUNDS rounds of SECS seconds, the order swapped every round.
# Medians in millions of WRITEs a second, and on over off.
#
# Usage: devtools/cc_cost.sh [ROUNDS] [SECS]
#        (after devtools/quickstart.sh demo)

set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5}
secs=${2:-3}
perf=build/app/droce-perf
work=$(mktemp -d /tmp/droce-cc.XXXXXX)
trap 'rm -rf "$work"' EXIT
. devtools/ring_configs.sh
ring_configs "$work"
sed -e 's/^\[engine\]$/[engine]\necn = on/' "$work/ring.ini" >"$work/on.ini"
sed -e 's/^\[engine\]$/[engine]\necn = off/' "$work/ring.ini" >"$work/off.ini"

# Mmsg/s of a run: the MsgRate column of its result line
mpps() { # config
	DROCE_CONFIG=$work/$1.ini "$perf" write_bw -s 64 -D "$secs" \
		--no-progress 2>&1 | awk '$1 == 64 && NF == 5 { r = $5 }
		END { if (r == "") exit 1; printf "%.3f\n", r }'
}

r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) = 1 ]; then order="on off"; else order="off on"; fi
	for c in $order; do
		mpps "$c" >>"$work/$c.r"
	done
	r=$((r + 1))
done

on=$(median <"$work/on.r")
off=$(median <"$work/off.r")
echo "write_bw -s 64, medians of $rounds turns of $secs s (net_ring):"
echo "  ecn = on   $on Mmsg/s   ($(tr '\n' ' ' <"$work/on.r"))"
echo "  ecn = off  $off Mmsg/s   ($(tr '\n' ' ' <"$work/off.r"))"
echo "$on $off" | awk '{ printf "  on / off   %.3f\n", ($2 > 0 ? $1 / $2 : 0) }'
