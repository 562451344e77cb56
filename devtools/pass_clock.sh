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
# With REV, the same built from that revision (in a scratch worktree)
# runs in turns with this tree's, each line headed "old" or "new": a
# change judged by its stages. A host's speed moves the cycles of every
# stage together, so compare a stage with another of the same run.
# DROCE_PERF_ARGS adds droce-perf options (e.g. "-l 32").
#
# Usage: devtools/pass_clock.sh [TEST [BYTES [SECONDS [RUNS [REV]]]]]
#        (after quickstart.sh demo; default write_bw 64 3 1)

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
test=${1:-write_bw}
size=${2:-64}
secs=${3:-3}
runs=${4:-1}
rev=${5:-}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" 2>/dev/null; rm -rf "$work"' EXIT

[ -d build-clock ] || meson setup -Dtests=false -Dpass_clock=true \
	build-clock >/dev/null
ninja -C build-clock app/droce-perf >/dev/null
builds="build-clock/app/droce-perf"
if [ -n "$rev" ]; then
	git worktree add -q --detach "$work/old" "$rev"
	meson setup -Dtests=false -Dpass_clock=true "$work/old/build" \
		"$work/old" >/dev/null
	ninja -C "$work/old/build" app/droce-perf >/dev/null
	builds="$work/old/build/app/droce-perf $builds"
fi
. devtools/ring_configs.sh
ring_configs "$work"
for r in $(seq 1 "$runs"); do
	for perf in $builds; do
		which=
		[ -z "$rev" ] || case $perf in
			"$work"/*) which="old " ;;
			*) which="new " ;;
		esac
		# shellcheck disable=SC2086
		DROCE_CONFIG="$work/ring.ini" "$perf" "$test" -s "$size" \
			-D "$secs" ${DROCE_PERF_ARGS:-} --no-progress 2>&1 |
			awk -v which="$which" '
			/pass clock/ { sub(/^.*pass clock of /, ""); clock = $0 }
			/^ *[0-9]+ +[0-9]+ / { rate = $NF }
			END { printf "%s%s Mmsg/s; %s\n", which, rate, clock }'
	done
done
