#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""What droce-inject costs: droce-perf with and without it in the path.

One droce process, droce0 and droce1 on one engine lcore (core 0), each
on a memif port: straight to each other (a memif pair), or each to a
droce-inject on core 1 (forwarding with no event; without a trace and
with its pcapng trace of every frame's headers). Raw frames of 64 and
1024 bytes (the floor of the ports, droce's engine sending and receiving
them alone) and a raw ping-pong, run in turns, the order swapped every
round, then each one's median; the ratios are to the direct memif pair's
figures of the same rounds. (RoCE traffic would add droce-perf's
application thread, a third busy thread on a machine of two cores: its
figures would measure the scheduler, not the injector.)

Usage: devtools/inject_cost.py [ROUNDS] [--rst]   (after quickstart.sh demo)
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lab'))

import lab_run      # noqa: E402
PERF = os.path.join(TOP, 'build', 'app', 'droce-perf')
INJECT = os.path.join(TOP, 'build', 'app', 'droce-inject')

INI = """\
[eal]
args = --no-huge -m 512 --no-pci --no-shconf --file-prefix={prefix} \
--vdev=net_memif0,role={r0},socket={s0},id=0 \
--vdev=net_memif1,role=client,socket={s1},id=0
[engine]
cores = 0
idle_sleep_us = 0
link_wait_s = 20
[device droce0]
port = net_memif0
mac = 02:d7:0c:e0:03:01
ipv4 = 10.0.3.1/24
[device droce1]
port = net_memif1
mac = 02:d7:0c:e0:03:02
ipv4 = 10.0.3.2/24
"""

# test, droce-perf arguments, the figure: (regex on its output, unit)
TESTS = (
    ('raw 64 B', ['raw', '-s', '64', '-D', '2'],
     r'^ \d+\s+\d+\s+([\d.]+)\s', 'Mpps'),
    ('raw 1024 B', ['raw', '-s', '1024', '-D', '2'],
     r'^ \d+\s+\d+\s+([\d.]+)\s', 'Mpps'),
    ('raw_lat', ['raw_lat', '-n', '20000'],
     r'^ \d+\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)', 'us p50'),
)
MODES = ('direct', 'inject', 'inject+trace')


def run_mode(work, mode, argv, rx):
    tag = 'icost-%d-%s' % (os.getpid(), mode.replace('+', '-'))
    inj = None
    # (memif's sockets are abstract: their names short)
    if mode == 'direct':
        sock = os.path.join(work, 'd.sock')
        ini = INI.format(prefix=tag, r0='server', s0=sock, s1=sock)
    else:
        socks = [os.path.join(work, '%d%s.sock' % (MODES.index(mode), s))
                 for s in 'ab']
        ini = INI.format(prefix=tag, r0='client', s0=socks[0],
                         s1=socks[1])
        script = os.path.join(work, 'none.txt')
        open(script, 'w').close()
        cmd = [INJECT, '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
               '-l', '1', '--file-prefix', tag + '-inj',
               '--vdev', 'net_memif0,role=server,socket=%s,id=0' % socks[0],
               '--vdev', 'net_memif1,role=server,socket=%s,id=0' % socks[1],
               '--', '--script', script]
        if mode == 'inject+trace':
            cmd += ['--trace', os.path.join(work, tag + '.pcapng')]
        inj, _ = lab_run.start_injector(cmd)
    path = os.path.join(work, tag + '.ini')
    with open(path, 'w') as f:
        f.write(ini)
    try:
        p = subprocess.run([PERF] + argv + ['--no-progress'],
                           env=dict(os.environ, DROCE_CONFIG=path),
                           capture_output=True, text=True, timeout=120)
        m = re.search(rx, p.stdout, re.M)
        if m is None:
            print('%s %s: no figure: %s' % (mode, ' '.join(argv),
                                            (p.stdout + p.stderr)[-300:]),
                  file=sys.stderr)
        return float(m.group(1)) if m else None
    finally:
        if inj is not None:
            lab_run.stop_injector(inj)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 and \
        sys.argv[1].isdigit() else 3
    rst = '--rst' in sys.argv
    for exe in (PERF, INJECT):
        if not os.access(exe, os.X_OK):
            sys.exit('no %s: run devtools/quickstart.sh demo' % exe)
    work = tempfile.mkdtemp(prefix='icost')
    got = {}
    try:
        for r in range(rounds):
            order = MODES if r % 2 == 0 else tuple(reversed(MODES))
            for name, argv, rx, unit in TESTS:
                for mode in order:
                    v = run_mode(work, mode, argv, rx)
                    got.setdefault((name, mode), []).append(v)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for name, _, _, unit in TESTS:
        med = {}
        for mode in MODES:
            vals = [v for v in got[(name, mode)] if v is not None]
            med[mode] = statistics.median(vals) if vals else None
        base = med['direct']
        cells = [name, unit]
        for mode in MODES:
            v = med[mode]
            if v is None:
                cells.append('-')
            elif mode == 'direct' or not base:
                cells.append('%.3f' % v)
            else:
                cells.append('%.3f (%.2f)' % (v, v / base))
        rows.append(cells)
    head = ['test', 'unit'] + list(MODES)
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    if rst:
        rule = '  '.join('=' * w for w in widths)
        print(rule)
        print('  '.join(h.ljust(w) for h, w in zip(head, widths)))
        print(rule)
    else:
        print('  '.join(h.ljust(w) for h, w in zip(head, widths)))
    for cells in rows:
        print('  '.join(str(c).ljust(w) for c, w in zip(cells, widths)))
    if rst:
        print(rule)
    print('(medians of %d rounds; in brackets the ratio to direct)' % rounds)


if __name__ == '__main__':
    main()
