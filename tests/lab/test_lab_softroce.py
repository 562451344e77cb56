#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Linux soft-RoCE and droce with droce-inject between them, judged.

The guest of tests/interop/test_softroce.py (rdma_rxe on its eth0, a tap
on the host) on one side of droce-inject (net_af_packet on the tap),
droce on the other (net_af_packet on a veth pair). Each case runs a perftest tool both ways
(soft-RoCE the requester, then droce) with one event put into the
requester's traffic or the responder's answers: a packet dropped (go-back-N
of WRITEs, a READ response lost), the last packet dropped (the
requester's timer), a packet corrupted, a CE mark. droce-lab judges the
injector's marked trace, and droce's own mirror (--at): droce's side, as
its mirror shows it, must fail no check; soft-RoCE's
verdicts do not fail the test (the suite must not fail on a defect of its
peer): droce-lab report puts every case's verdicts, figures and time/PSN
plots in report/index.html of the work directory (doc/guides/lab.rst
gives them), which must hold a plot of each case's event.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'interop'))

import lab_run                 # noqa: E402
from droce_lab.analyze import ARRIVAL   # noqa: E402
import netns                   # noqa: E402
import test_softroce as sr     # noqa: E402
from test_softroce import check, failures   # noqa: E402

# droce and the injector meet on a veth pair (af_packet both): a memif
# port whose peer process exits under it, as droce's tools do, can
# crash DPDK 22.11's memif receive (its regions unmapped by the
# control thread while the data path reads them)
VETH = ('lsr-inj', 'lsr-droce')
# (DPDK's af_packet fanout group is (pid ^ ifindex) & 0xffff, and a
# group bound to another interface refuses a socket: ifindexes far from
# the tap's and from each other)
VETH_INDEX = (0x1000, 0x4000)

# The injector's af_packet rings: 4096 frames, not DPDK's 512, so that
# a burst from several QPs is not lost before the injector sees it (the
# kernel drops what a full ring cannot take, unmarked: the trace would
# show a requester skipping PSNs and a responder NAKing a gap that the
# trace does not hold)
RING = ',framecnt=4096'
# The guest, the injector, droce and the tools share this machine's two
# cores: the injector sleeps 20 us when idle (--idle-us) rather than
# hold a core, and droce-lab allows for frames that wait milliseconds on
# the way (one was seen to wait 3 ms between the injector and droce), as
# droce-lab run does: an answer may take lab_run.CROSSING_US to cross to
# the requester (a frame it sent in that time was sent before the answer
# reached it) and a CNP lab_run.CNP_WINDOW_US to follow a CE mark
CROSSING_US = lab_run.CROSSING_US
CNP_WINDOW_US = lab_run.CNP_WINDOW_US

# The QPs' local ACK timeout (perftest's -u), the exponent droce-lab
# judges with: 4.096 us x 2^18 = 1.07 s, not perftest's 67.1 ms. The
# guest under TCG takes in a few hundred to a few thousand frames a
# second once a burst has queued in front of it (a tap queue, virtio's
# ring, rdma_rxe's own unbounded one) and acknowledges nothing of what
# follows until it has taken in what came first: the requester's first
# window of 1024 packets and its go-back-N resend of 512 were seen to
# hold it 2.1 s, in which droce's timer had fired six times with
# nothing acknowledged and its QP, with perftest's retry_cnt of 7
# (the NAK took one), had failed. A timeout shorter than the worst
# round trip of its path would do as much to any requester
# (doc/guides/lab.rst).
QP_TIMEOUT = '18'
_COMMON = ['-u', QP_TIMEOUT]
WRITE = ('ib_write_bw', ['-s', '8192', '-n', '300'] + _COMMON)
READ = ('ib_read_bw', ['-s', '8192', '-n', '300'] + _COMMON)
SEND = ('ib_send_bw', ['-s', '8192', '-n', '300'] + _COMMON)
WRITE_4QP = ('ib_write_bw', ['-s', '8192', '-n', '300', '-q', '4'] +
             _COMMON)
# SENDs to a receive queue of one WQE, which the server posts again as
# each completes: the requester outruns it and meets RNR NAKs
RNR = ('ib_send_bw', ['-s', '1024', '-n', '300', '-r', '1'] + _COMMON)
# (case, tool and arguments, the event and how many frames it acts on;
# "ab" is the guest's way to droce, "{req}" the requester's way,
# "{resp}" the responder's)
CASES = [
    ('gbn-write', WRITE, 'drop dir={req} flow=0 rpsn=200 iter=1', 1),
    ('gbn-send', SEND, 'drop dir={req} flow=0 rpsn=200 iter=1', 1),
    ('gbn-write-4qp', WRITE_4QP, 'drop dir={req} rpsn=200 iter=1 count=4',
     4),
    ('gbn-read', READ, 'drop dir={resp} rpsn=100 iter=1', 1),
    ('timeout', WRITE, 'drop dir={req} flow=0 rpsn=2399 iter=1', 1),
    ('corrupt', WRITE, 'corrupt dir={req} flow=0 rpsn=300 iter=1', 1),
    ('cnp', WRITE, 'ce dir={req} flow=0 rpsn=400', 1),
    ('rnr', RNR, None, 0),
]


def plan():
    """(name, tool, args, fault, server, case, event) for test_softroce's
    guest script: each case with soft-RoCE the requester (droce's server)
    and droce the requester (the guest's server)."""
    out = []
    for case, (tool, args), event, acts in CASES:
        for server, req in (('droce', 'ab'), ('guest', 'ba')):
            resp = 'ba' if req == 'ab' else 'ab'
            who = 'rxe' if server == 'droce' else 'droce'
            out.append(('%s-%s-requester' % (case, who), tool, args, False,
                        server, case,
                        event and event.format(req=req, resp=resp), acts))
    return out


def run_case(args, guest, i, step):
    name, tool, targs, _, server, case, event, acts = step
    work = args.workdir
    script = os.path.join(work, name + '.events')
    with open(script, 'w') as f:
        f.write((event or '# no event') + '\n')
    trace = os.path.join(work, name + '.pcapng')
    # (droce's port too: a burst of four QPs' answers lost before droce
    # is in no trace, and droce's timer would seem early)
    env = sr.host_env(args, name, False, iface=VETH[1] + RING)
    cmd = [tool, '-d', 'droce0'] + sr.gid_opt(tool, 0) + targs + \
        ['-p', str(18600 + i)]
    inj, up = lab_run.start_injector(
        [args.inject, '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
         '--file-prefix', 'labsr-inj-%d-%d' % (os.getpid(), i),
         '--vdev', 'net_af_packet0,iface=%s%s' % (sr.TAP, RING),
         '--vdev', 'net_af_packet1,iface=%s%s' % (VETH[0], RING),
         '--', '--script', script, '--trace', trace, '--idle-us', '20'])
    check(up, '%s: droce-inject between the tap and droce' % name)
    if not guest.wait_for(r'^guest: begin %s$' % re.escape(name), 600):
        check(False, '%s: the guest never started it' % name)
        lab_run.stop_injector(inj)
        return
    for again in range(3):
        if server == 'droce':
            rc, out = sr.droce_server(cmd, env, guest, name)
        else:
            rc, out = sr.droce_client(cmd, env, guest)
        if not sr.guest_again(guest, name, again + 1):
            break
    m = guest.wait_for(r'^guest: end %s rc=(\d+)' % re.escape(name), 600)
    grc = int(m.group(1)) if m else -1
    if rc != 0 or grc != 0:
        # (not a failure: droce's side is judged from the trace below)
        print('  %s: droce exit %d, soft-RoCE exit %d' % (name, rc, grc))
    rep = lab_run.stop_injector(inj)
    acted = re.search(r'^event 1 \(line 1, \w+\): (\d+) frames', rep, re.M)
    ok = inj.returncode == 0 and (
        acted is not None and acted.group(1) == str(acts) if event
        else acted is None)
    check(ok, '%s: %s%s' % (
        name, '"%s" acted on %d frames' % (event, acts) if event else
        'droce-inject forwarded it all', '' if ok else ': exit %s: %s' %
        (inj.returncode, rep.strip()[-300:])))
    lab = subprocess.run([args.lab, 'analyze', trace,
                          '--timeout', QP_TIMEOUT,
                          '--crossing-us', CROSSING_US,
                          '--cnp-window-us', CNP_WINDOW_US],
                         capture_output=True, text=True)
    rows = lab_run.verdicts(lab.stdout, ('PASS', 'FAIL'))
    # droce's side: its requester's checks where it sends, its
    # responder's where it answers. What reached droce and when is
    # judged from its own mirror (--at), exactly: the injector's trace
    # holds frames that waited on the way (a resend seen 10.7 ms after
    # droce sent it, the two cores shared), which would make droce's
    # timer seem early by as much. The rest (every message acknowledged,
    # ACKs in order) from the injector's trace: the mirror may drop
    # frames of a burst (counted), never the injector's.
    at = subprocess.run([args.lab, 'analyze',
                         os.path.join(work, name + '-droce0.pcap'),
                         '--at', sr.DROCE_IP, '--timeout', QP_TIMEOUT,
                         '--cnp-window-us', CNP_WINDOW_US],
                        capture_output=True, text=True)
    def droces(r):
        return lab_run.is_ends(r, sr.DROCE_IP)

    arrival = ['.'.join(('requester', c)) for c in ARRIVAL] + \
        ['.'.join(('responder', c)) for c in ARRIVAL]
    mine = [r for r in lab_run.verdicts(at.stdout, ('PASS', 'FAIL'))
            if droces(r) and r[1] in arrival] + \
        [r for r in rows if droces(r) and r[1] not in arrival]
    theirs = [r for r in rows if not droces(r)]
    if case == 'rnr':
        check(any(r[1] == 'requester.rnr' for r in rows),
              '%s: the responder sent RNR NAKs, and the requester waited '
              'or not (judged)' % name)
    bad = [r for r in mine if r[0] == 'FAIL']
    check(rows and not bad, '%s: droce fails no check (%d judged)%s' % (
        name, len(mine), '' if not bad else ': ' +
        '; '.join(' '.join(r[:2] + r[3:]) for r in bad[:2])))
    print('\n'.join('  %s' % ' '.join(r) for r in theirs))


def make_report(args, steps):
    """droce-lab report over the cases' traces: every case in it, its
    verdicts as analyze gives them, a plot around its event."""
    traces = [os.path.join(args.workdir, s[0] + '.pcapng') for s in steps]
    traces = [t for t in traces if os.path.exists(t)]
    out = os.path.join(args.workdir, 'report')
    p = subprocess.run([args.lab, 'report', '-o', out,
                        '--timeout', QP_TIMEOUT,
                        '--crossing-us', CROSSING_US,
                        '--cnp-window-us', CNP_WINDOW_US,
                        '--title', 'soft-RoCE and droce through '
                        'droce-inject'] + traces,
                       capture_output=True, text=True)
    page = ''
    if os.path.exists(os.path.join(out, 'index.html')):
        with open(os.path.join(out, 'index.html')) as f:
            page = f.read()
    parts = page.split('<h2>')[1:]
    plotted = [t for n, t in enumerate(traces)
               if any('<img src="trace%d-' % n in part for part in parts)]
    check(p.returncode in (0, 1) and len(parts) == len(steps) and
          len(plotted) == len(steps),
          'droce-lab report: %d of %d cases in it, %d with a plot of their '
          'event%s' % (len(parts), len(steps), len(plotted),
                       '' if p.returncode in (0, 1) else
                       ': exit %d: %s' % (p.returncode,
                                          p.stderr.strip()[-300:])))
    print('report: %s' % os.path.join(out, 'index.html'))


def main():
    ap = argparse.ArgumentParser()
    for opt in ('lib', 'inject', 'lab', 'workdir'):
        ap.add_argument('--' + opt, required=True)
    ap.add_argument('--only', default='')
    args = ap.parse_args()
    netns.enter()
    args.workdir = os.path.abspath(args.workdir)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    steps = [s for s in plan() if not args.only or
             any(o in s[0] for o in args.only.split(','))]
    sr.sh('ip', 'link', 'add', VETH[0], 'index', str(VETH_INDEX[0]), 'type',
          'veth', 'peer', 'name', VETH[1], 'index', str(VETH_INDEX[1]))
    for v in VETH:
        sr.sh('ip', 'link', 'set', v, 'up')
    try:
        up = sr.run_plan(
            steps,
            lambda first: sr.boot_guest(args.workdir, sr.guest_script(
                [s[:5] for s in steps], first)),
            lambda guest, i, step: run_case(args, guest, i, step))
    finally:
        subprocess.run(['ip', 'link', 'del', VETH[0]],
                       stderr=subprocess.DEVNULL)
    if not up:
        return 1
    make_report(args, steps)
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
