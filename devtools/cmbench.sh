#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Connections through droce's connection manager, per second: rdma-core's
# cmtime (rdmacm-utils), unmodified, between two processes over net_memif
# (one droce device each, 10.0.2.1 and 10.0.2.2), with 1, 100 and 1000
# connections in flight (cmtime makes them all, then times each step).
#
# Usage: devtools/cmbench.sh [BUILD_DIR] [ROUNDS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
rounds=${2:-3}
work=$(mktemp -d)
trap 'pkill -f "cmtime -b 10.0.2.1" 2>/dev/null; rm -rf "$work"' EXIT
lib=$build/lib/ibverbs:$build/lib/rdmacm

ini() {         # role n core
	cat <<INI
[eal]
args = --no-huge -m 512 --no-pci --no-shconf --file-prefix=cmbench-$$-$1 --vdev=net_memif0,role=$1,socket=$work/m.sock,socket-abstract=no,id=0
[engine]
cores = $3
idle_sleep_us = 20
link_wait_s = 30
[device droce0]
port = net_memif0
mac = 02:d7:0c:e0:02:0$2
ipv4 = 10.0.2.$2/24
INI
}
ini server 1 1 >"$work/server.ini"
ini client 2 0 >"$work/client.ini"

for n in 1 100 1000; do
	r=0
	while [ $r -lt "$rounds" ]; do
		rm -f "$work/m.sock"
		DROCE_CONFIG=$work/server.ini LD_LIBRARY_PATH=$lib \
			timeout 60 cmtime -b 10.0.2.1 -c "$n" >/dev/null 2>&1 &
		sleep 2
		DROCE_CONFIG=$work/client.ini LD_LIBRARY_PATH=$lib \
			timeout 60 cmtime -s 10.0.2.1 -b 10.0.2.2 -c "$n" \
			>"$work/out" 2>&1
		pkill -f "cmtime -b 10.0.2.1" 2>/dev/null || true
		wait 2>/dev/null || true
		awk -v n="$n" '
			/^connect / { c = $3 }
			/^disconnect / { d = $3 }
			END { printf "%5d connections: connect %8.2f ms (%6.0f/s), disconnect %8.2f ms (%6.0f/s)\n", n, c, n * 1000 / c, d, n * 1000 / d }' \
			"$work/out"
		r=$((r + 1))
	done
done
