# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""What the lab's tests and devtools/inject_cost.py do alike: start
droce-inject and wait until it forwards, stop it and take its report
(droce-lab's own, app/lab/droce_lab/inject.py), read droce-lab analyze's
verdict lines."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'app', 'lab'))

from droce_lab import inject   # noqa: E402
from droce_lab import run       # noqa: E402

start_injector = inject.start
stop_injector = inject.stop

# droce-lab run's windows ([judge] of its default setup), for the tests
# whose traces, like its own, are taken where guests and busy-polling
# DPDK processes share two cores and frames wait milliseconds on the way:
# an answer's crossing to the requester, a CNP's after its CE mark
_JUDGE = run.load_config(None)['judge']
CROSSING_US = _JUDGE['crossing_us']
CNP_WINDOW_US = _JUDGE['cnp_window_us']
# ...and the QPs' timeout exponent, which its tools are given (-u)
TIMEOUT = _JUDGE['timeout']


def verdicts(out, kinds=('PASS', 'FAIL', 'N/A')):
    """droce-lab analyze's lines of those verdicts, each split into
    [verdict, check, connection, reason]."""
    rows = []
    for line in out.splitlines():
        w = line.split(None, 3)
        if len(w) == 4 and w[0] in kinds:
            rows.append(w)
    return rows


def is_ends(row, ip):
    """Is a verdict row (split, as verdicts() gives it) of the end at
    @ip: a requester's check where that end sends, a responder's where
    it answers?"""
    conn = row[2].split(':', 1)[1]
    if row[1].startswith('requester.'):
        return conn.startswith(ip + '/')
    return row[1].startswith('responder.') and ('>' + ip + '/') in conn
