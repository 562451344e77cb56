# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-lab: RoCE traces judged by the IBTA (doc/guides/lab.rst)."""
