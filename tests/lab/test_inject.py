#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-inject between two droce processes, its trace judged.

droce-inject forwards between two ports, a droce-perf server on one and
its client on the other (two processes, each on a veth pair of its own
with the injector, net_af_packet at both ends, in a network namespace of
the test's own),
and puts a script's events into the client's WRITEs: a packet dropped,
one corrupted, one marked CE, one duplicated, one held back 2 ms, one
sent after the next two, one with its PSN set 100 ahead. Both sides
must finish; the injector must have acted on each event exactly once,
the reordered and the rewritten frame where the trace says; and
droce-lab analyze of its trace, the injector's marks in it,
must find nothing wrong on either side: each NAK names the PSN the
responder expected, the resends start there, the corrupted packet is
dropped silently, the CE mark draws a CNP to the requester's QP.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'interop'))

import netns        # noqa: E402
import lab_run      # noqa: E402

failed = 0

SCRIPT = """\
# the client's WRITEs (port 0 to port 1), flow 0: 4 KiB messages, 4
# packets each at path MTU 1024, 128 in flight at most: each event far
# enough from the one before for its resends to be over
drop    dir=ab flow=0 rpsn=1000  iter=1
corrupt dir=ab flow=0 rpsn=3001  iter=1
ce      dir=ab flow=0 rpsn=5002
dup     dir=ab flow=0 rpsn=7003  iter=1
delay   dir=ab flow=0 rpsn=9001  iter=1 us=2000
reorder dir=ab flow=0 rpsn=10001 iter=1 k=2
rewrite dir=ab flow=0 rpsn=11001 iter=1 field=psn value=+100
"""

# (not memif: a memif port whose peer process exits under it, as these
# droce-perf processes do before the injector stops, can crash DPDK
# 22.11's memif receive)
VETHS = (('inj-a', 'droce-a'), ('inj-b', 'droce-b'))
# DPDK's af_packet joins each socket to fanout group (pid ^ ifindex) &
# 0xffff, and a group bound to another interface refuses it (EINVAL):
# ifindexes far apart, so that processes started moments apart (pids
# close) never meet in one group
INDEX = ((0x1000, 0x4000), (0x2000, 0x8000))

INI = """\
[eal]
args = --no-huge -m 512 --no-pci --no-shconf --file-prefix={prefix} \
--vdev=net_af_packet0,iface={veth}
[engine]
cores = 0
idle_sleep_us = 20
link_wait_s = 30
ecn = on
[device droce0]
port = net_af_packet0
mac = 02:d7:0c:e0:02:0{n}
ipv4 = 10.0.2.{n}/24
"""


def check(cond, what):
    global failed
    print('%s %s' % ('ok   ' if cond else 'FAIL ', what))
    if not cond:
        failed += 1


def check_moved(trace):
    """The reordered frame after the two that came behind it, the
    rewritten one 100 PSNs ahead of the frame before it its way."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..',
                                    'app', 'lab'))
    from droce_lab import trace as T
    frames, _ = T.read(trace)
    ab = [f for f in frames if f.src == '10.0.2.1']
    for i, f in enumerate(ab):
        if f.action == 'reordered':
            check(i >= 2 and 'reordered after 2' in f.note and
                  [g.psn for g in ab[i - 2:i]] ==
                  [(f.psn + 1) & 0xffffff, (f.psn + 2) & 0xffffff],
                  'reordered: PSN %d after %s' %
                  (f.psn, [g.psn for g in ab[max(i - 2, 0):i]]))
        elif f.action == 'rewritten':
            check(i >= 1 and f.psn == (ab[i - 1].psn + 101) & 0xffffff and
                  f.icrc_ok and
                  'rewritten psn=%d' % f.psn in f.note,
                  'rewritten: PSN %d after %d, its ICRC good (%s)' %
                  (f.psn, ab[i - 1].psn, f.note))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--inject', required=True)
    ap.add_argument('--perf', required=True)
    ap.add_argument('--lab', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    work = os.path.abspath(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    script = os.path.join(work, 'events.txt')
    with open(script, 'w') as f:
        f.write(SCRIPT)
    trace = os.path.join(work, 'trace.pcapng')
    netns.enter()
    for (inj_end, droce_end), (i, j) in zip(VETHS, INDEX):
        subprocess.run(['ip', 'link', 'add', inj_end, 'index', str(i),
                        'type', 'veth', 'peer', 'name', droce_end,
                        'index', str(j)], check=True)
        for v in (inj_end, droce_end):
            subprocess.run(['ip', 'link', 'set', v, 'up'], check=True)
    tag = 'inject-%d' % os.getpid()
    inj, up = lab_run.start_injector(
        [args.inject, '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
         '-l', '1', '--file-prefix', tag,
         '--vdev', 'net_af_packet0,iface=%s' % VETHS[0][0],
         '--vdev', 'net_af_packet1,iface=%s' % VETHS[1][0],
         '--', '--script', script, '--trace', trace])
    check(up, 'droce-inject starts')
    # the client on port 0's side (a), the server on port 1's (b)
    inis = []
    for n, (role, veth) in enumerate((('client', VETHS[0][1]),
                                      ('server', VETHS[1][1])), 1):
        ini = os.path.join(work, role + '.ini')
        with open(ini, 'w') as f:
            f.write(INI.format(prefix='%s-%s' % (tag, role), veth=veth,
                               n=n))
        inis.append(ini)
    port = str(netns.free_port())
    base = [args.perf, 'write_bw', '-s', '4096', '-n', '3000', '-p', port,
            '--no-progress']
    srv = subprocess.Popen(base + ['--server'],
                           env=dict(os.environ, DROCE_CONFIG=inis[1]),
                           stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    cli = subprocess.Popen(base + ['127.0.0.1'],
                           env=dict(os.environ, DROCE_CONFIG=inis[0]),
                           stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    outs = []
    for name, p in (('client', cli), ('server', srv)):
        try:
            out, _ = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        outs.append(out)
        check(p.returncode == 0, 'droce-perf %s: 3000 WRITEs of 4 KiB '
              'through the injector%s' % (name, '' if p.returncode == 0
                                          else ': ' + out.strip()[-400:]))
    check(re.search(r'^ 4096\s+3000\s', outs[0], re.M) is not None,
          'the client reports 3000 messages')
    report = lab_run.stop_injector(inj)
    print(report.strip())
    check(inj.returncode == 0, 'droce-inject stops at SIGTERM')
    counts = dict(re.findall(r'^event \d+ \(line (\d+), \w+\): (\d+) '
                             'frames', report, re.M))
    check(len(counts) == 7 and set(counts.values()) == {'1'},
          'each event acted on one frame (%s)' % counts)
    check_moved(trace)
    # The trace is the injector's: a CE mark's time is when the injector
    # sent the request, and its CNP's when droce's answer reached the
    # injector.  Three busy-polling DPDK processes on two CPUs hold frames
    # a millisecond or more between them (CI saw 1.02 ms), so the window
    # is droce-lab run's, not analyze's default of 1 ms.
    lab = subprocess.run([args.lab, 'analyze', trace, '--timeout', '14',
                          '--cnp-window-us', lab_run.CNP_WINDOW_US],
                         capture_output=True, text=True)
    print(lab.stdout + lab.stderr)
    check(lab.returncode == 0, 'droce-lab analyze of the trace: no check '
          'failed')
    verdicts = {w[1]: (w[0], w[3]) for w in lab_run.verdicts(lab.stdout)
                if w[2].startswith('c0:')}
    for chk, what in (('responder.nak-psn', 'naming the expected PSN'),
                      ('responder.nak-single', ''),
                      ('requester.gbn-resend', ''),
                      ('responder.corrupt', ''),
                      ('responder.cnp', ''), ('responder.cnp-qp', ''),
                      ('requester.resend-same', ''),
                      ('responder.dup-ack', ''),
                      ('requester.complete', '')):
        v = verdicts.get(chk, ('none', ''))
        check(v[0] == 'PASS' and what in v[1], 'c0 %s: PASS %s' %
              (chk, v[1]))
    print('%d failed' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
