#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-lab run, as a newcomer runs it, in a network namespace of its
own.

1. Its default setup: two soft-RoCE guests on two taps, droce-inject
   between them, every script of the set both ways (and go-back-N on 16
   QPs): 28 runs. Every run must have been run, its event acting on as many
   frames as asked, and be in the report with its verdicts and, where
   it has an event, a plot of it. soft-RoCE's verdicts are recorded, not
   asserted: the suite must not fail on a defect of its peer
   (doc/guides/lab.rst gives them).
2. A setup of its configuration file: a soft-RoCE guest on the left,
   droce on the right (a "shell" end: Debian's perftest over droce's
   libibverbs.so.1, its port af_packet on a veth to the injector). Every
   check of droce's side, requester or responder, must go as the IBTA
   asks.
"""

import argparse
import configparser
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'interop'))

import netns   # noqa: E402
from lab_run import CNP_WINDOW_US, TIMEOUT, is_ends   # noqa: E402

sys.path.insert(0, os.path.join(HERE, '..', '..', 'app', 'lab'))
from droce_lab.analyze import ARRIVAL   # noqa: E402

failures = []


def check(cond, what):
    print('%s  %s' % ('ok  ' if cond else 'FAIL', what), flush=True)
    if not cond:
        failures.append(what)


def lab_run(args, out, scripts, config=None, fake=None):
    cmd = [args.lab, 'run', '-o', out, '--inject', args.inject] + \
        (['--config', config] if config else []) + \
        (['--fake-fault', fake] if fake else []) + scripts
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    print('\n'.join('  | ' + l for l in p.stdout.splitlines()))
    page = ''
    index = os.path.join(out, 'report', 'index.html')
    if os.path.exists(index):
        with open(index) as f:
            page = f.read()
    return p.returncode, p.stdout, page


def check_runs(name, rc, out, page, n):
    """Exit 0 or 1 (a run went otherwise than the IBTA asks), every run
    run, every run in the report with a plot where it has an event."""
    m = re.search(r'^(\d+) runs: (\d+) as the IBTA asks, (\d+) differ, '
                  r'(\d+) not run$', out, re.M)
    check(rc in (0, 1) and m is not None and int(m.group(1)) == n and
          m.group(4) == '0',
          '%s: exit %d, %s' % (name, rc, m.group(0) if m else
                               'no summary line'))
    parts = page.split('<h2>')[1:]
    rows = re.findall(r'<tr><td>\d\d-[^<]*</td>', page)
    plotted = [p for p in parts if '<img src=' in p]
    evented = [p for p in parts if '<p>events: ' in p]
    check(len(parts) == n and len(rows) == n and
          len(plotted) >= len(evented) > 0,
          '%s: the report holds %d of %d runs in its table and %d traces, '
          '%d with an event, %d plotted' % (name, len(rows), n, len(parts),
                                            len(evented), len(plotted)))


DROCE_INI = """[eal]
args = --no-huge -m 512 --no-pci --no-shconf --file-prefix=labrun-{pid} \
--vdev=net_af_packet0,iface={veth},framecnt=4096
[engine]
idle_sleep_us = 20
link_wait_s = 10
pcap = @MIRROR@
[device droce0]
port = net_af_packet0
mac = 02:d7:0c:e0:0a:03
ipv4 = {ip}/24
"""
DROCE_IP = '10.0.10.3'
# the host's address on the left guest's tap: perftest's own TCP
# exchange with the right end, droce's programs on the host
HOST_IP = '10.0.10.9'
# the right end's shell: a line to run over droce, with a configuration
# (and so a mirror) of its own
DROCE_END = """#!/bin/sh
n=$(date +%s%N)
sed "s|@MIRROR@|{work}/mirror-$n.pcap|" {ini} >{work}/droce-$n.ini
DROCE_CONFIG={work}/droce-$n.ini LD_LIBRARY_PATH={lib} exec sh -c "$1"
"""



def droce_config(args, inj, end):
    """droce-lab run's default setup (--print-config) with its right end
    droce, run by the shell script @end, and the injector's port 1 on
    the veth @inj."""
    cp = configparser.ConfigParser(interpolation=None)
    cp.read_string(subprocess.run([args.lab, 'run', '--print-config'],
                                  capture_output=True, text=True,
                                  check=True).stdout)
    cp['injector']['eal'] = cp['injector']['eal'].replace('{right_tap}',
                                                          inj)
    cp['left']['host_ip'] = HOST_IP + '/24'
    cp.remove_section('right')
    cp['right'] = {'kind': 'shell', 'shell': 'sh ' + end,
                   'device': 'droce0', 'gid': '0', 'ip': HOST_IP}
    return cp


# droce and the injector meet on a veth pair, af_packet both ends (the
# ifindexes far apart: DPDK's af_packet fanout group is (pid ^ ifindex)
# & 0xffff, and a group bound to another interface refuses a socket)
VETH = (('labrun-inj', 0x1100), ('labrun-droce', 0x4100))
DROCE_SCRIPTS = ['gbn-write', 'gbn-send', 'gbn-read', 'timeout',
                 'corrupt', 'dup', 'psn-ahead', 'psn-behind',
                 'psn-far-ahead', 'psn-far-behind', 'bad-rkey', 'cnp']


def droce_end(args):
    work = os.path.join(args.workdir, 'droce')
    os.makedirs(work)
    (inj, i), (dev, d) = VETH
    subprocess.run(['ip', 'link', 'add', inj, 'index', str(i), 'type',
                    'veth', 'peer', 'name', dev, 'index', str(d)],
                   check=True)
    for v in (inj, dev):
        subprocess.run(['ip', 'link', 'set', v, 'up'], check=True)
    ini = os.path.join(work, 'droce.ini.in')
    with open(ini, 'w') as f:
        f.write(DROCE_INI.format(pid=os.getpid(), veth=dev, ip=DROCE_IP))
    # each line droce runs (a tool and its tries) with a mirror of its
    # own, to judge droce by
    end = os.path.join(work, 'droce-end.sh')
    with open(end, 'w') as f:
        f.write(DROCE_END.format(work=work, ini=ini,
                                 lib=os.path.abspath(args.lib)))
    config = os.path.join(work, 'lab.ini')
    with open(config, 'w') as f:
        droce_config(args, inj, end).write(f)
    try:
        rc, out, page = lab_run(args, os.path.join(work, 'run'),
                                DROCE_SCRIPTS, config)
    finally:
        subprocess.run(['ip', 'link', 'del', inj], stderr=subprocess.DEVNULL)
    check_runs('soft-RoCE and droce', rc, out, page,
               2 * len(DROCE_SCRIPTS))
    # droce's side: what reached droce and when from its own mirrors
    # (--at), exactly (the injector's trace holds frames that waited on
    # their way between droce and the injector: a resend seen 10.7 ms
    # after droce sent it, which would make droce's timer seem that
    # much early); the rest from the report's table of what differs
    arrival = {side + '.' + c for c in ARRIVAL
               for side in ('requester', 'responder')}
    mine = [l for l in re.findall(r'right end: [^<]*',
                                  page.split('<h2>')[0])
            if l.split()[3] not in arrival]
    mirrors = sorted(f for f in os.listdir(work) if f.startswith('mirror-'))
    for m in mirrors:
        p = subprocess.run([args.lab, 'analyze', os.path.join(work, m),
                            '--at', DROCE_IP, '--timeout', TIMEOUT,
                            '--cnp-window-us', CNP_WINDOW_US],
                           capture_output=True, text=True)
        mine += ['%s: %s' % (m, l) for l in p.stdout.splitlines()
                 if l.startswith('FAIL ') and l.split()[1] in arrival and
                 is_ends(l.split(), DROCE_IP)]
    check(mirrors and not mine,
          "soft-RoCE and droce: droce's side goes as the IBTA asks in every "
          'run (%d mirrors of droce)%s' % (
              len(mirrors), ''.join('\n      ' + l for l in mine)))


def main():
    ap = argparse.ArgumentParser()
    for opt in ('lab', 'inject', 'lib', 'workdir'):
        ap.add_argument('--' + opt, required=True)
    args = ap.parse_args()
    netns.enter()
    args.workdir = os.path.abspath(args.workdir)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)

    # (the default set: every script on one QP, go-back-N on 16; in its
    # third run, soft-RoCE's kernel log tells of a fault, as rxe's
    # warnings at a QP's end do now and then: that run runs again on a
    # guest booted anew)
    rc, out, page = lab_run(args, os.path.join(args.workdir, 'rxe'), [],
                            fake='03-gbn-send-left')
    check_runs('two soft-RoCE guests', rc, out, page, 28)
    check('(the run 03-gbn-send-left-requester again: ' in out and
          "the left end's kernel faulted 1 times" in page,
          'two soft-RoCE guests: a kernel fault of the guest in a run, the '
          'guest booted again and the run run again, the report says so')
    droce_end(args)
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
