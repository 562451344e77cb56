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
injector's marked trace: droce's side must fail no check; soft-RoCE's
verdicts are recorded, one table per case, in report.md of the work
directory (doc/guides/lab.rst gives them), and do not fail the test: the
suite must not fail on a defect of its peer.
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

WRITE = ('ib_write_bw', ['-s', '8192', '-n', '300'])
READ = ('ib_read_bw', ['-s', '8192', '-n', '300'])
# (case, tool and arguments, the event; "ab" is the guest's way to
# droce, "{req}" the requester's way, "{resp}" the responder's)
CASES = [
    ('gbn-write', WRITE, 'drop dir={req} flow=0 rpsn=200 iter=1'),
    ('gbn-read', READ, 'drop dir={resp} rpsn=100 iter=1'),
    ('timeout', WRITE, 'drop dir={req} flow=0 rpsn=2399 iter=1'),
    ('corrupt', WRITE, 'corrupt dir={req} flow=0 rpsn=300 iter=1'),
    ('cnp', WRITE, 'ce dir={req} flow=0 rpsn=400'),
]


def plan():
    """(name, tool, args, fault, server, case, event) for test_softroce's
    guest script: each case with soft-RoCE the requester (droce's server)
    and droce the requester (the guest's server)."""
    out = []
    for case, (tool, args), event in CASES:
        for server, req in (('droce', 'ab'), ('guest', 'ba')):
            resp = 'ba' if req == 'ab' else 'ab'
            who = 'rxe' if server == 'droce' else 'droce'
            out.append(('%s-%s-requester' % (case, who), tool, args, False,
                        server, case, event.format(req=req, resp=resp)))
    return out


def run_case(args, guest, i, step, report):
    name, tool, targs, _, server, case, event = step
    work = args.workdir
    script = os.path.join(work, name + '.events')
    with open(script, 'w') as f:
        f.write(event + '\n')
    trace = os.path.join(work, name + '.pcapng')
    env = sr.host_env(args, name, False, iface=VETH[1])
    cmd = [tool, '-d', 'droce0'] + sr.gid_opt(tool, 0) + targs + \
        ['-p', str(18600 + i)]
    inj, up = lab_run.start_injector(
        [args.inject, '--no-huge', '-m', '256', '--no-pci', '--no-shconf',
         '--file-prefix', 'labsr-inj-%d-%d' % (os.getpid(), i),
         '--vdev', 'net_af_packet0,iface=%s' % sr.TAP,
         '--vdev', 'net_af_packet1,iface=%s' % VETH[0],
         '--', '--script', script, '--trace', trace])
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
    rep = lab_run.stop_injector(inj)
    acted = re.search(r'^event 1 \(line 1, \w+\): (\d+) frames', rep, re.M)
    check(acted is not None and acted.group(1) == '1',
          '%s: "%s" acted on one frame%s' % (
              name, event, '' if acted is not None and acted.group(1) == '1'
              else ': exit %s: %s' % (inj.returncode, rep.strip()[-300:])))
    lab = subprocess.run([args.lab, 'analyze', trace, '--timeout', '14'],
                         capture_output=True, text=True)
    rows = lab_run.verdicts(lab.stdout, ('PASS', 'FAIL'))
    # droce's side: its requester's checks where it sends, its
    # responder's where it answers
    mine = [r for r in rows
            if (r[1].startswith('requester.') and
                r[2].split(':')[1].startswith(sr.DROCE_IP + '/')) or
            (r[1].startswith('responder.') and
             ('>' + sr.DROCE_IP + '/') in r[2])]
    theirs = [r for r in rows if r not in mine]
    bad = [r for r in mine if r[0] == 'FAIL']
    check(rows and not bad, '%s: droce fails no check (%d judged)%s' % (
        name, len(mine), '' if not bad else ': ' +
        '; '.join(' '.join(r[:2] + r[3:]) for r in bad[:2])))
    ok_tools = rc == 0 and grc == 0
    report.append('### %s (%s %s; %s)\n\n%s\n\n' % (
        name, tool, ' '.join(targs), event,
        'both tools finished' if ok_tools else
        'droce exit %d, soft-RoCE exit %d' % (rc, grc)))
    for side, rs in (('soft-RoCE', theirs), ('droce', mine)):
        for r in rs:
            report.append('- %s %s `%s` %s\n' % (side, r[0], r[1], r[3]))
    figures = lab.stdout.split('figures', 1)[-1].strip().splitlines()[1:]
    report.append('\n' + ''.join('    %s\n' % l.strip() for l in figures) +
                  '\n')
    print('\n'.join('  %s' % ' '.join(r) for r in theirs))


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
    report = ['# soft-RoCE and droce through droce-inject\n\n']
    try:
        up = sr.run_plan(
            steps,
            lambda first: sr.boot_guest(args.workdir, sr.guest_script(
                [s[:5] for s in steps], first)),
            lambda guest, i, step: run_case(args, guest, i, step, report))
    finally:
        subprocess.run(['ip', 'link', 'del', VETH[0]],
                       stderr=subprocess.DEVNULL)
    if not up:
        return 1
    with open(os.path.join(args.workdir, 'report.md'), 'w') as f:
        f.write(''.join(report))
    print('report: %s' % os.path.join(args.workdir, 'report.md'))
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
