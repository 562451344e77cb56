#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""rdma-core's own test suite (tests/ of rdma-core 44, pyverbs) over
droce's libibverbs.so.1 and librdmacm.so.1.

Debian's python3-pyverbs ships the suite in /usr/share/doc/rdma-core/tests
(some files gzipped); it is not in droce's tree. The test unpacks it into
a work directory of its own, then runs

  droce-run /usr/bin/python3 tests/run_tests.py --dev droce0 -v

with the embedded default (droce0 and droce1 back to back in the
process, each reaching its own GIDs too) and reads unittest's verbose
report. It passes when every test is ok or skipped, and every skip's
reason is one of EXPECTED_SKIPS below: a vendor's device (mlx5, EFA),
something the machine has not got (CUDA, a GPU's dma-buf, a PCI device
for VFIO, 2 MiB huge pages), or a feature droce has not got, named. A
failure, an error, a skip for any other reason or a report that does
not add up fails it. It prints a line for each test and a summary.

Usage: test_rdmacore.py --droce-run PATH --workdir DIR
                        [--tests DIR] [--only PATTERN]...
"""

import argparse
import ast
import collections
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

RDMA_CORE_TESTS = '/usr/share/doc/rdma-core/tests'

# (pattern of the skip reason, kind, why). kind 'vendor': the test is
# for another vendor's device or needs hardware or software the machine
# has not got; 'droce': a feature droce has not got.
EXPECTED_SKIPS = [
    (r'Can not run the test over non MLX5 device', 'vendor',
     'mlx5 (NVIDIA ConnectX) only'),
    (r'Could not open mlx5 context \(This is not an MLX5 device\)', 'vendor',
     'mlx5 (NVIDIA ConnectX) only: mlx5dv'),
    (r'Can not run the test over non EFA device', 'vendor',
     'EFA (AWS) only: efadv'),
    (r'cuda-python 12\.0\+ must be installed', 'vendor',
     'CUDA: a GPU and cuda-python'),
    (r'Allocating dmabuf is not supported by /dev/dri/', 'vendor',
     'a GPU exporting dma-buf (/dev/dri)'),
    (r'PCI device must be passed by the user', 'vendor',
     'mlx5 over VFIO: a PCI device'),
    (r'There are no huge pages of size 2M allocated', 'vendor',
     '2 MiB huge pages reserved on the machine'),
    (r'Device memory is not supported', 'droce',
     'device memory (ibv_alloc_dm): droce has no memory of its own on '
     'the port'),
    (r"Device droce0 doesn't have net interface", 'droce',
     "rdma_cm tests find the device's IP address through its netdev in "
     'sysfs; a droce device is a DPDK port without one'),
    (r'Converting timestamp to nanoseconds is not supported', 'vendor',
     'mlx5 only: mlx5dv_ts_to_ns'),
    (r'Importing a device is not supported', 'droce',
     'ibv_import_device/_pd/_mr: sharing a context through its command '
     'file (droce has no kernel objects to share)'),
    (r'ODP implicit is not supported', 'droce',
     'implicit on-demand paging (the whole address space): a peer could '
     'name memory the process has not mapped, which droce would fault on '
     'where a NIC answers with an access error; explicit ODP is there'),
]

# 'name (tests.module.Class.name)' begins a test's report
START = re.compile(r'^(\w+) \((tests\.[\w.]+)\)')
# ' ... outcome' ends it (on the same line or the docstring's; on a line
# of its own after what the test printed behind ' ... ')
OUTCOME = re.compile(r'(?:^| \.\.\. )(ok|FAIL|ERROR|skipped (.*)'
                     r'|expected failure|unexpected success)$')
RAN = re.compile(r'^Ran (\d+) tests? in ([\d.]+)s$', re.M)
# unittest's sections for failures and errors
SECTION = re.compile(r'^={60,}\n(FAIL|ERROR): \w+ \((tests\.[\w.]+)\)\n'
                     r'(.*?)(?=^={60,}$|^-{60,}\nRan )', re.M | re.S)


def unpack(src, dst):
    """rdma-core's tests/ from @src into @dst/tests, gunzipped."""
    tests = os.path.join(dst, 'tests')
    shutil.copytree(src, tests)
    for name in os.listdir(tests):
        if name.endswith('.gz'):
            path = os.path.join(tests, name)
            with gzip.open(path, 'rb') as f, open(path[:-3], 'wb') as g:
                shutil.copyfileobj(f, g)
            os.unlink(path)
    return tests


def parse(out):
    """unittest's verbose report: ({test id: (outcome, skip reason)},
    tests ran or None, {test id: last line of its traceback})."""
    results = collections.OrderedDict()
    current = None
    dots = False        # the current test's ' ... ' seen
    for line in out.splitlines():
        m = START.match(line)
        if m:
            current = m.group(2)[len('tests.'):]
            dots = False
        m = OUTCOME.search(line)
        if m and m.start() == 0 and not dots:
            m = None    # a bare word before ' ... ': the test's own
        if not m and ' ... ' in line:
            dots = True
        if m and current is not None:
            outcome, reason = m.group(1), None
            if m.group(2) is not None:
                outcome = 'skipped'
                try:
                    reason = ast.literal_eval(m.group(2))
                except (SyntaxError, ValueError):
                    reason = m.group(2)
            results[current] = (outcome, reason)
            current = None
    m = RAN.search(out)
    ran = int(m.group(1)) if m else None
    why = {}
    for m in SECTION.finditer(out):
        lines = [l for l in m.group(3).splitlines() if l.strip()]
        why[m.group(2)[len('tests.'):]] = lines[-1] if lines else ''
    return results, ran, why


def expected_skip(reason):
    for pattern, kind, what in EXPECTED_SKIPS:
        if re.search(pattern, reason):
            return pattern, kind, what
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--droce-run', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--tests', default=RDMA_CORE_TESTS,
                    help="rdma-core's tests/ (default: Debian's)")
    ap.add_argument('--only', action='append', default=[],
                    help="run_tests.py's -k: tests whose name has this "
                    "in it (again: or)")
    ap.add_argument('--timeout', type=int, default=900)
    args = ap.parse_args()
    started = time.monotonic()

    if not os.path.isfile(os.path.join(args.tests, 'run_tests.py')):
        print('FAIL  no rdma-core tests in %s (python3-pyverbs)'
              % args.tests)
        return 1
    # a directory of this run's own: two runs of one build do not meet
    os.makedirs(args.workdir, exist_ok=True)
    run_dir = tempfile.mkdtemp(prefix='run-', dir=args.workdir)
    unpack(args.tests, run_dir)

    env = dict(os.environ)
    env.pop('DROCE_CONFIG', None)   # the embedded default
    argv = [os.path.abspath(args.droce_run), '/usr/bin/python3',
            'tests/run_tests.py', '--dev', 'droce0', '-v']
    for pattern in args.only:
        argv += ['-k', pattern]
    try:
        p = subprocess.run(argv, cwd=run_dir, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=args.timeout)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors='replace') if e.stdout else ''
        rc = None
    with open(os.path.join(run_dir, 'run_tests.log'), 'w') as f:
        f.write(out)

    results, ran, why = parse(out)
    failures = []
    counts = collections.Counter()
    skips = collections.Counter()
    for test, (outcome, reason) in results.items():
        if outcome == 'ok':
            counts['ok'] += 1
            print('ok    %s' % test)
        elif outcome == 'skipped':
            e = expected_skip(reason)
            if e:
                counts['skipped'] += 1
                skips[(e[1], e[2])] += 1
                print('skip  %s: %s' % (test, reason))
            else:
                failures.append('%s: skipped for a reason not expected: %s'
                                % (test, reason))
                print('FAIL  %s: skipped for a reason not expected: %s'
                      % (test, reason))
        else:
            failures.append('%s: %s %s' % (test, outcome, why.get(test, '')))
            print('FAIL  %s: %s %s' % (test, outcome, why.get(test, '')))
    if rc is None:
        failures.append('run_tests.py did not finish in %d s' % args.timeout)
    elif ran is None:
        failures.append('run_tests.py (exit %d) printed no count: %s' %
                        (rc, out.strip().splitlines()[-1:] or 'nothing'))
    elif ran != len(results):
        failures.append('run_tests.py ran %d tests, %d reported' %
                        (ran, len(results)))
    if not results:
        failures.append('no test ran')

    print('%d tests: %d ok, %d skipped as expected, %d failed (%.0f s; '
          'log %s)' % (len(results), counts['ok'], counts['skipped'],
                       len(failures), time.monotonic() - started,
                       os.path.join(run_dir, 'run_tests.log')))
    for (kind, what), n in sorted(skips.items()):
        print('  skipped %3d  %-6s  %s' % (n, kind, what))
    if failures:
        print('failed:')
        for f in failures:
            print('  ' + f[:300])
        return 1
    shutil.rmtree(run_dir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
