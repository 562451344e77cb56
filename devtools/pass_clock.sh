#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Where an engine lcore's cycles go: droce-perf built with the pass clock
# (meson's pass_clock option, in build-clock/), run in one process over
# net_ring (droce0 -> droce1 on one engine lcore), then the TSC cycles
# each stage of its passes took, a frame received. The clock costs an
# rdtsc a stage (some 12 ns here), so its rates are a little below the
# plain build's: compare stages, not rates.
#
# Usage: devtools/pass_clock.sh [TEST [BYTES [SECONDS [RUNS]]]]
#        (after quickstart.sh demo; default write_bw 64 3 1)

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
test=${1:-write_bw}
size=${2:-64}
secs=${3:-3}
runs=${4:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[ -d build-clock ] || meson setup -Dtests=false -Dpass_clock=true \
	build-clock >/dev/null
ninja -C build-clock app/droce-perf >/dev/null
. devtools/ring_configs.sh
ring_configs "$work"
for r in $(seq 1 "$runs"); do
	DROCE_CONFIG="$work/ring.ini" build-clock/app/droce-perf "$test" \
		-s "$size" -D "$secs" --no-progress 2>&1 | awk '
		/pass clock/ { sub(/^.*pass clock of /, ""); clock = $0 }
		/^ *[0-9]+ +[0-9]+ / { rate = $NF }
		END { printf "%s Mmsg/s; %s\n", rate, clock }'
done
