# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""What the lab's tests and devtools/inject_cost.py do alike: start
droce-inject and wait until it forwards, stop it and take its report,
read droce-lab analyze's verdict lines."""

import signal
import subprocess


def start_injector(cmd):
    """droce-inject (@p cmd), once it forwards: (process, whether it
    does)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    head = ''
    while 'forwarding' not in head and p.poll() is None:
        head += p.stdout.readline()
    return p, 'forwarding' in head


def stop_injector(p):
    """SIGTERM, 30 s to stop (then killed): what it printed since."""
    p.send_signal(signal.SIGTERM)
    try:
        out, _ = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    return out


def verdicts(out, kinds=('PASS', 'FAIL', 'N/A')):
    """droce-lab analyze's lines of those verdicts, each split into
    [verdict, check, connection, reason]."""
    rows = []
    for line in out.splitlines():
        w = line.split(None, 3)
        if len(w) == 4 and w[0] in kinds:
            rows.append(w)
    return rows
