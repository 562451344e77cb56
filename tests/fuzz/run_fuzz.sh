#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Run a libFuzzer target for a bounded time, seeded with every frame of the
# golden captures, and fail if it finds anything.
# Usage: run_fuzz.sh FUZZER SECONDS WORKDIR PCAP...
set -eu
fuzzer=$(realpath "$1") seconds=$2 work=$3
shift 3
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds"
# one seed file per captured frame (classic little-endian pcap)
/usr/bin/python3 - "$work/seeds" "$@" <<'PY'
import struct, sys
out = sys.argv[1]
n = 0
for path in sys.argv[2:]:
    data = open(path, 'rb').read()
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from('<I', data, off + 8)[0]
        frame = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        n += 1
        with open('%s/%05d' % (out, n), 'wb') as f:
            f.write(frame)
print('seeded with %d frames' % n)
PY
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus seeds
