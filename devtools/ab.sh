#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Judge a change by speed: droce-perf of another revision (built in a
# scratch worktree) and of this tree's build, run in turns over net_ring,
# the order swapped every round, then each one's median. This virtual
# machine's speed drifts within minutes: only figures taken in one such
# session compare.
#
# Usage: devtools/ab.sh REV [ROUNDS] [SECONDS] [CONFIG:TEST:BYTES ...]
#        (after quickstart.sh demo)
# e.g.   devtools/ab.sh HEAD~3 5 3
#        devtools/ab.sh HEAD~1 5 3 ring9k:read_bw:65536 ring9k-copy:read_bw:65536
# CONFIG is one of devtools/ring_configs.sh's (ring, ring9k, ring9k-copy,
# ring-rtc);
# without rows, the five below.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rev=${1:?usage: devtools/ab.sh REV [ROUNDS] [SECONDS] [CONFIG:TEST:BYTES ...]}
rounds=${2:-3}
secs=${3:-3}
shift $(($# < 3 ? $# : 3))
rows="ring:write_bw:64 ring:send_bw:64 ring:write_bw:65536
	ring:read_bw:65536 ring9k:write_bw:65536"
[ $# -eq 0 ] || rows="$*"
new=$top/build/app/droce-perf
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" 2>/dev/null; rm -rf "$work"' EXIT

[ -x "$new" ] || { echo "no $new: run devtools/quickstart.sh demo" >&2; exit 1; }
echo "building $rev ($(git rev-parse --short "$rev")) in a scratch worktree"
git worktree add -q --detach "$work/old" "$rev"
meson setup -Dtests=false "$work/old/build" "$work/old" >/dev/null
ninja -C "$work/old/build" app/droce-perf >/dev/null
old=$work/old/build/app/droce-perf

# the configurations of devtools/bench.sh
. devtools/ring_configs.sh
ring_configs "$work"

one() { # binary port test size: "Mmsg/s ratio"
	DROCE_CONFIG="$work/$2.ini" "$1" "$3" -s "$4" -D "$secs" -R \
		--no-progress 2>/dev/null | awk '
		/^   RoCE/ { m = $5; gsub(/[(]/, "", m) }
		/^   ratio/ { r = $2 }
		END { print m, r }'
}

for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
	for row in $rows; do
		t=$(echo "$row" | tr : ' ')
		for which in $order; do
			eval bin=\$$which
			# shellcheck disable=SC2086
			echo "$which $t $(one "$bin" $t)"
		done
	done
done >"$work/runs"

echo "medians of $rounds turns of $secs s (Mmsg/s, and the ratio to raw"
echo "frames of the same size taken right after each run):"
printf "%-11s %-10s %6s %16s %16s %7s\n" port test bytes old new new/old
awk '{ k = $2 " " $3 " " $4; v[$1, k] = v[$1, k] " " $5; r[$1, k] = r[$1, k] " " $6
	if (!(k in seen)) { seen[k] = 1; keys[++n] = k } }
function median(s,   a, m, i, j, t) {
	m = split(s, a, " ")
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return a[int((m + 1) / 2)]
}
END { for (i = 1; i <= n; i++) { k = keys[i]; split(k, f, " ")
	o = median(v["old", k]); w = median(v["new", k])
	printf "%-11s %-10s %6s %8.3f (%5.2f) %8.3f (%5.2f) %7.2f\n", f[1], f[2],
		f[3], o, median(r["old", k]), w, median(r["new", k]),
		(o > 0 ? w / o : 0) } }' "$work/runs"
