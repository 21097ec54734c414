"""The zoo's helper: run an outside kernel on both engines and insist they agree.

``both(kernel, grid, block, args, ...)`` runs ``simtdocs.reference.launch`` (one lane at a
time: the definition of every counter) and ``simtdocs.launch`` twice (its own batching, and
one block per pass, since no count may depend on how blocks are batched; only the first
under ``SIMTDOCS_ZOO_BATCHINGS=1``, as ``make check`` runs it), each on fresh
copies of ``args``. Every output array, ``stats.totals``, every per-line counter
(``stats.by_site``) and ``stats.races`` must be identical; it returns the fast engine's run
so the test can check the result against numpy and the counters against its own hand
derivation. ``fast(...)`` is the fast engine alone, for a bigger case than the reference
can run in a test's time.

The tests never call simtdocs's counting code for an expected number: each expected count
is an integer literal or a small formula of the launch sizes, derived in a comment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import simtdocs
from simtdocs import reference

# ``make check`` sets it: the zoo compares the reference with the fast engine in its own
# batching only (``make test`` also runs one block per pass).
ONE_BATCHING = os.environ.get("SIMTDOCS_ZOO_BATCHINGS") == "1"


@dataclass
class Run:
    args: tuple  # the arguments after the launch (copies: the caller's stay untouched)
    stats: simtdocs.Stats
    batched: "Run | None" = None  # for an order-dependent kernel: the run in the engine's own batching

    @property
    def t(self):
        return self.stats.totals

    def line(self, text):
        """The counters of the one kernel line whose source contains ``text``."""
        found = [lc.counters for lc in self.stats.lines if text in lc.site.source]
        assert len(found) == 1, f"{len(found)} kernel lines contain {text!r}"
        return found[0]


def _fresh(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _launch(engine, kernel, grid, block, args, **kw):
    args = _fresh(args)
    stats = engine(kernel, grid, block, args=args, **kw)
    return Run(args, stats)


def _same(a: Run, b: Run, what: str):
    for i, (x, y) in enumerate(zip(a.args, b.args)):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), \
                f"{what}: argument {i} differs\n  reference {x.ravel()[:16]}…\n  fast      {y.ravel()[:16]}…"
    assert a.stats.totals == b.stats.totals, f"{what}: totals\n  reference {a.stats.totals}\n  fast      {b.stats.totals}"
    sites = set(a.stats.by_site) | set(b.stats.by_site)
    for site in sorted(sites, key=lambda s: s.lineno):
        x, y = a.stats.by_site.get(site), b.stats.by_site.get(site)
        assert x == y, f"{what}: line {site.lineno} ({site.source})\n  reference {x}\n  fast      {y}"
    assert a.stats.races == b.stats.races, f"{what}: races\n  reference {a.stats.races}\n  fast      {b.stats.races}"


def run_both(kernel, grid, block, args, order_dependent=False, **kw) -> Run:
    """``order_dependent=True`` for a kernel whose control flow depends on other blocks'
    atomics (``simtdocs.launch``'s rule): batched, it sees another legal order of blocks,
    so only its results must match; one block per pass must match everything. Returns the
    fast engine's batched run (one block per pass when ``order_dependent``)."""
    ref = _launch(reference.launch, kernel, grid, block, args, **kw)
    fast = _launch(simtdocs.launch, kernel, grid, block, args, **kw)
    if ONE_BATCHING and not order_dependent:  # make check: the engine's own batching only
        _same(ref, fast, "fast engine (its own batching)")
        return fast
    one = _launch(simtdocs.launch, kernel, grid, block, args, blocks_per_pass=1, **kw)
    _same(ref, one, "fast engine (one block per pass)")
    if order_dependent:
        for i, (x, y) in enumerate(zip(ref.args, fast.args)):
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y), f"fast engine (its own batching): argument {i} differs"
        one.batched = fast
        return one
    _same(ref, fast, "fast engine (its own batching)")
    return fast


def raise_both(exc_type, kernel, grid, block, args, **kw) -> str:
    """Both engines must raise ``exc_type`` with the same message (one block per pass, as
    the reference runs); the fast engine batched must raise it too. Returns the message."""
    messages = []
    for engine, extra in ((reference.launch, {}), (simtdocs.launch, {"blocks_per_pass": 1}), (simtdocs.launch, {})):
        try:
            _launch(engine, kernel, grid, block, args, **extra, **kw)
        except exc_type as exc:
            messages.append(str(exc))
        else:
            raise AssertionError(f"{engine.__module__} ran {kernel.__name__} without raising {exc_type.__name__}")
    assert messages[0] == messages[1], f"messages differ:\n  reference: {messages[0]}\n  fast:      {messages[1]}"
    return messages[0]


def run_fast(kernel, grid, block, args, **kw) -> Run:
    return _launch(simtdocs.launch, kernel, grid, block, args, **kw)


def expect(counters, **expected):
    """Assert each named counter (``sectors=250``…) of ``counters`` (totals or a line)."""
    got = {k: getattr(counters, k) for k in expected}
    assert got == expected, f"counters differ from the hand derivation:\n  expected {expected}\n  got      {got}"


def rng(seed):
    return np.random.default_rng(seed)
