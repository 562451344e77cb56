#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Incast with congestion control on and off, in one run: 2, 4 and 8
# senders WRITE 64 KiB messages to one device through net_fault's
# switch, every line 2.5 Gb/s (path MTU 4096), the queue in front of the
# receiver the bottleneck (512 KiB, RED marking from 16 KiB to 128 KiB),
# with [engine] ecn = on (DCQCN) and off; a 64-byte WRITE flow from the
# first sender times its round trips through the same queue. Each case
# is tests/integration/test_incast.c run for SECS seconds; its figures
# are measured after the first second. util: how busy the bottleneck's
# line was; goodput: the messages' bytes over the line's rate; jain:
# Jain's fairness index of the senders' shares; converge: the time from
# which every 100 ms slice was fair (index >= 0.95); retx pkts: packets
# the senders sent again (go-back-N); backlog: the mean of what each
# frame found queued ahead of it; p50, p99: the small flow's round trips.
# A second table: the first sender alone at the end of each run with
# DCQCN on (its rate, how busy the line, the queue's largest backlog).
#
# Usage: devtools/incast.sh [SECS]   (after devtools/quickstart.sh test)

set -eu
cd "$(dirname "$0")/.."
secs=${1:-5}
exe=build/tests/test_incast
work=$(mktemp -d /tmp/droce-incast.XXXXXX)
trap 'rm -rf "$work"' EXIT
alones=

printf "%-7s %-3s %5s %7s %6s %9s %7s %7s %9s %11s %8s %8s\n" senders \
	cc util goodput jain converge dropped marked "retx pkts" \
	"backlog KiB" "p50 us" "p99 us"
for n in 2 4 8; do
	for cc in on off; do
		out=$("$exe" "$work/$n-$cc" "$n" "$cc" "$secs" 2>&1 || true)
		line=$(echo "$out" | grep '^incast ' || true)
		alone=$(echo "$out" | grep '^alone ' || true)
		[ -z "$alone" ] || alones="$alones$n $alone
"
		if [ -z "$line" ]; then
			echo "$n $cc: no figures ($exe failed)"
			continue
		fi
		echo "$line" | awk -v n="$n" -v cc="$cc" '
		{
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			printf "%-7s %-3s %5.2f %7.2f %6.3f %6s%s " \
				"%7s %7s %9s %11.0f %8s %8s\n", n, cc,
				v["util"], v["goodput"], v["jain"],
				v["converged_ms"] == 0 ? "never" : \
				v["converged_ms"], \
				v["converged_ms"] == 0 ? "   " : " ms",
				v["dropped"], v["marked"],
				v["retransmits"], v["backlog_mean"] / 1024,
				v["small_p50_us"], v["small_p99_us"]
		}'
	done
done

# droce1 alone at the end of each run with DCQCN on: back at the line's
# rate, still paced
echo
printf "%-12s %9s %5s %6s %16s\n" "alone after" "rate Mb/s" util \
	marked "backlog max KiB"
printf "%s" "$alones" | awk '
NF > 0 {
	for (i = 3; i <= NF; i++) {
		split($i, kv, "=")
		v[kv[1]] = kv[2]
	}
	printf "%-12s %9s %5.2f %6s %16.1f\n", $1 " senders",
		v["rate_mbps"], v["util"], v["marked"],
		v["backlog_max"] / 1024
}'
