# conftest.py - shared fixtures of the Python package's tests: the random seed (printed, and
# taken from GCUT_TEST_SEED to replay a failure) and the independent oracles.
import itertools
import os

import numpy as np
import pytest


def pytest_terminal_summary(terminalreporter):
    # Printed at the end of every run, -q included, so a failure can be replayed.
    terminalreporter.write_line(f"gcut test seed: {test_seed()} (GCUT_TEST_SEED=N replays one)")


def test_seed():
    return int(os.environ.get("GCUT_TEST_SEED", "20261123"))


test_seed.__test__ = False


@pytest.fixture
def rng(request):
    # One stream per test, derived from the run's seed and the test's name.
    name = request.node.name.encode()
    return np.random.default_rng([test_seed(), int.from_bytes(name[-8:].ljust(8, b"\0"), "little")])


class Problem:
    """A max-flow problem kept as plain arrays: the oracle side of every test."""

    def __init__(self, n):
        self.n = n
        self.eu, self.ev, self.ec, self.er = [], [], [], []
        self.ts = np.zeros(n, dtype=np.int64)
        self.tt = np.zeros(n, dtype=np.int64)

    def add_edge(self, u, v, c, r):
        self.eu.append(u)
        self.ev.append(v)
        self.ec.append(c)
        self.er.append(r)

    def cut_value(self, sink_side):
        """Capacity of the cut whose sink side is sink_side (bool per node)."""
        t = np.asarray(sink_side, dtype=bool)
        val = int(self.ts[t].sum()) + int(self.tt[~t].sum())
        for u, v, c, r in zip(self.eu, self.ev, self.ec, self.er):
            if not t[u] and t[v]:
                val += c
            if not t[v] and t[u]:
                val += r
        return val

    def brute_force(self):
        """Minimum cut over all 2^n labelings (n <= 12)."""
        best = None
        for bits in itertools.product([False, True], repeat=self.n):
            v = self.cut_value(bits)
            best = v if best is None or v < best else best
        return best


@pytest.fixture
def make_problem():
    return Problem
