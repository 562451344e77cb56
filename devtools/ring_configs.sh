# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Sourced by the benchmark scripts: the one-process benchmark
# configurations, and median. ring_configs DIR writes DIR/ring.ini,
# droce0 and droce1 over a net_ring pair with busy-polling engines (no
# idle sleeps in a benchmark), DIR/ring9k.ini, the same with a jumbo
# MTU (9000: path MTU 4096) for large messages, and DIR/ring9k-copy.ini,
# that with zero_copy = off (payloads copied into and out of packets),
# and DIR/ring-rtc.ini, ring.ini whose application threads run the
# engine's passes themselves whenever they post and poll
# (run_to_completion = always), as a program sharing the engine's CPU
# does.

ring_configs() {
	cat >"$1/ring.ini" <<INI
[engine]
idle_sleep_us = 0
[device droce0]
port = ring:bench:0
ipv4 = 10.0.0.1/24
[device droce1]
port = ring:bench:1
ipv4 = 10.0.0.2/24
INI
	sed -e 's/^\(ipv4 = .*\)/\1\nmtu = 9000/' "$1/ring.ini" >"$1/ring9k.ini"
	sed -e 's/^\[engine\]$/[engine]\nzero_copy = off/' "$1/ring9k.ini" \
		>"$1/ring9k-copy.ini"
	sed -e 's/^\[engine\]$/[engine]\nrun_to_completion = always/' \
		"$1/ring.ini" >"$1/ring-rtc.ini"
}

# The median of the numbers on stdin, one a line (the upper one of an
# even count's middle two).
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
