# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Open MPI (Debian 12's openmpi-bin, 4.1) over UCX over droce.

tests/interop/mpi_check.c, built with mpicc, runs as an MPI job with one
droce device a rank: a ping-pong from 8 bytes to 1 MiB, MPI_Allreduce,
MPI_Alltoall and MPI_Bcast, every byte checked (doc/guides/user.rst,
*Open MPI*, has the command line).

- 2 ranks, their devices joined by net_memif (rank 0 serves, rank 1 is
  the client);
- 4 ranks, each device net_af_packet on one end of a veth pair whose
  other end is on a Linux bridge, as four hosts on one switch.

Each rank runs through a wrapper that gives it its own configuration,
by its rank (OMPI_COMM_WORLD_RANK), and runs it through droce-run.
mpirun is told to take UCX (--mca pml ucx: Open MPI prefers UCX only
for mlx5 devices), UCX to use droce's device (UCX_NET_DEVICES) and, the
ranks being on one machine, not shared memory (UCX_TLS=^sm), so that the
ranks' messages go through droce. Each rank must print that it is ok,
and mpirun exit 0.

Usage: test_mpi.py --run DROCE_RUN --source SRC --workdir DIR
Prints one line per check, then "N passed, N failed".
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

PASSED = []
FAILED = []


def check(cond, what):
    (PASSED if cond else FAILED).append(what)
    print(('PASS ' if cond else 'FAIL ') + what, flush=True)
    return cond


def sh(*argv):
    subprocess.run(argv, check=True)


def eal(work, tag, vdev):
    return ('[eal]\nargs = --no-huge -m 512 --no-pci --no-shconf '
            '--file-prefix=droce-mpi-%d-%s --vdev=%s\n'
            % (os.getpid(), tag, vdev))


def memif_configs(work):
    """Rank 0 the memif server, rank 1 the client."""
    sock = os.path.join(work, 'memif.sock')
    for rank, role in ((0, 'server'), (1, 'client')):
        with open(os.path.join(work, 'rank%d.ini' % rank), 'w') as f:
            f.write(eal(work, 'memif%d' % rank,
                        'net_memif0,role=%s,socket=%s,id=0' % (role, sock)))
            f.write('[engine]\ncores = %d\nidle_sleep_us = 20\n'
                    'link_wait_s = 30\n' % (1 - rank))
            f.write('[device droce0]\nport = net_memif0\n'
                    'ipv4 = 10.0.31.%d/24\n' % (rank + 1))


def bridge_configs(work, n):
    """Ranks 0..n-1 on veth pairs to a bridge, af_packet on their end."""
    sh('ip', 'link', 'add', 'mpibr', 'type', 'bridge')
    sh('ip', 'link', 'set', 'mpibr', 'up')
    for rank in range(n):
        port, peer = 'mpi%da' % rank, 'mpi%db' % rank
        # (interface indexes 4096 apart: DPDK's af_packet names its
        # fanout group pid ^ ifindex, groups are the namespace's, and
        # two processes of near pids on interfaces of near indexes could
        # draw one group, which the second then cannot join: EINVAL)
        sh('ip', 'link', 'add', port, 'index', str(0x1000 * (rank + 1)),
           'type', 'veth', 'peer', 'name', peer)
        sh('ip', 'link', 'set', peer, 'master', 'mpibr')
        for ifc in (port, peer):
            sh('ip', 'link', 'set', ifc, 'up')
        with open(os.path.join(work, 'rank%d.ini' % rank), 'w') as f:
            f.write(eal(work, 'afp%d' % rank,
                        'net_af_packet0,iface=%s,qpairs=1' % port))
            f.write('[engine]\ncores = %d\nidle_sleep_us = 20\n'
                    'link_wait_s = 30\n' % (rank % 2))
            f.write('[device droce0]\nport = net_af_packet0\n'
                    'mac = 02:d7:0c:e0:31:%02x\nipv4 = 10.0.32.%d/24\n'
                    'mtu = 1500\n' % (rank + 1, rank + 1))


def wrapper(work, run):
    """The rank's configuration by its rank, then droce-run."""
    path = os.path.join(work, 'rank.sh')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\nexec %s -c %s/rank$OMPI_COMM_WORLD_RANK.ini '
                '"$@"\n' % (run, work))
    os.chmod(path, 0o755)
    return path


def mpirun(work, run, exe, n, what):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1',
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    argv = ['mpirun', '-np', str(n), '--oversubscribe', '--bind-to', 'none',
            '--mca', 'pml', 'ucx',
            '-x', 'UCX_NET_DEVICES=droce0:1', '-x', 'UCX_TLS=^sm',
            wrapper(work, run), exe]
    try:
        r = subprocess.run(argv, env=env, capture_output=True, text=True,
                           timeout=300)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = str(e.stdout or '') + str(e.stderr or ''), -1
    ok = sorted(int(m) for m in
                re.findall(r'^mpi_check: rank (\d+) of %d ok$' % n, out,
                           re.M))
    check(rc == 0 and ok == list(range(n)),
          '%s: mpirun exits %d, ranks ok: %s' % (what, rc, ok))
    lat = re.search(r'ping-pong p50 ([\d.]+) us', out)
    if lat:
        print('%s: 8 B ping-pong p50 %s us' % (what, lat.group(1)))
    if rc != 0 or ok != list(range(n)):
        print(out[-3000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help='droce-run')
    ap.add_argument('--source', required=True, help='mpi_check.c')
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    netns.enter()
    exe = os.path.join(a.workdir, 'mpi_check')
    r = subprocess.run(['mpicc', '-O2', '-Wall', '-Werror', '-o', exe,
                        a.source], capture_output=True, text=True)
    if not check(r.returncode == 0, 'mpicc builds mpi_check'):
        print(r.stdout + r.stderr)
    else:
        two = os.path.join(a.workdir, 'two')
        os.makedirs(two)
        memif_configs(two)
        mpirun(two, a.run, exe, 2, '2 ranks over net_memif')
        four = os.path.join(a.workdir, 'four')
        os.makedirs(four)
        bridge_configs(four, 4)
        mpirun(four, a.run, exe, 4, '4 ranks on a bridge')
    print('%d passed, %d failed' % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == '__main__':
    sys.exit(main())
