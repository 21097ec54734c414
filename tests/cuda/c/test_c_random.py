"""Random CUDA C kernels (``c_random``) against the dialect, the reference engine and C's own
meaning (``c_oracle``).

* ``mode="same"`` (C and numba mean the same: small non-negative integers, float32
  throughout): the C kernel and its dialect twin, each on the fast engine (a random number of
  blocks per pass) and on ``simtdocs.reference``, give the same arrays, the same counters on
  every line (C lines mapped to the twin's), the same race records, or the same error.
* ``mode="c"`` (overflow, negative ``/`` and ``%``, unsigned and ``long long`` mixing,
  ``char``/``short`` promotion, double beside float): the C kernel on both engines gives the
  arrays the per-thread oracle gives, bit for bit, and the engines agree on every counter;
  with threads that talk (``private=False``) the engines agree with each other.
* Every kind of program is valid CUDA: ``nvcc -arch=sm_90 -c`` compiles it (where the CUDA
  toolkit is installed).

The normal suite runs a few dozen programs of each; ``SIMTDOCS_LONG=1`` runs thousands
(``benchmarks/agreement.py --c`` prints the counts).
"""

from __future__ import annotations

import glob
import os
import random
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import simtdocs
from simtdocs import reference

import c_oracle
import c_random as cr

LONG = bool(os.environ.get("SIMTDOCS_LONG"))
PER_PASS = [None, 1, 2]


def chooser(seed):
    r = random.Random(seed)
    return lambda kind, lo, hi: r.randint(lo, hi)


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _run(engine, kernel, p, args, **options):
    args = _copy(args)
    try:
        stats = engine(kernel, grid=p.grid, block=p.block, args=args, **options)
    except simtdocs.SimulatorError as exc:
        return type(exc).__name__, str(exc).splitlines()[0], str(exc)
    return "ok", args, stats


def _lines(stats, line_map=None):
    """The counters of each line (a C line under the dialect line it maps to)."""
    out = {}
    for site, c in stats.by_site.items():
        key = site.lineno if line_map is None else line_map.get(site.lineno, ("unmapped C line", site.lineno))
        assert key not in out, (key, site)
        out[key] = c
    return out


def _races(stats, line_map=None):
    m = (lambda n: n) if line_map is None else (lambda n: line_map.get(n, ("unmapped C line", n)))
    return [(r.kind, r.block, r.warp, r.other_warp, r.array, r.address, m(r.site.lineno), r.index,
             m(r.other_site.lineno) if r.other_site else None, r.lane, r.other_lane, r.atomic, r.other_atomic,
             r.hazards, r.across_warps) for r in stats.races]


def _where(message, line_map=None):
    """What an error names, without the text it quotes (C's or the dialect's): the threads and
    blocks, and the lines (a C line as the dialect line it maps to)."""
    m = (lambda n: n) if line_map is None else (lambda n: line_map.get(n, ("unmapped C line", n)))
    return (re.findall(r"threads? \([\d,]+\)|blocks? \([\d,]+\)", message),
            [m(int(n)) for n in re.findall(r"\bline (\d+)", message)])


def _arrays(run):
    return [x for x in run[1] if isinstance(x, np.ndarray)]


def _equal_arrays(x, y):
    return all(np.array_equal(a, b, equal_nan=True) for a, b in zip(_arrays(x), _arrays(y)))


def check_same(p: cr.Program, seed: int, per_pass) -> str:
    """C, dialect and both engines agree (``mode="same"``); returns "ok" or the error's type."""
    c_kernel, py_kernel = cr.load_c(p), cr.load_python(p)
    c_args, py_args = cr.arguments(p, seed)
    what = f"\n--- C\n{p.c_source}\n--- dialect\n{p.py_source}"
    runs = {
        "c fast": _run(simtdocs.launch, c_kernel, p, c_args, blocks_per_pass=per_pass),
        "c reference": _run(reference.launch, c_kernel, p, c_args),
        "py fast": _run(simtdocs.launch, py_kernel, p, py_args, blocks_per_pass=per_pass),
        "py reference": _run(reference.launch, py_kernel, p, py_args),
    }
    kinds = {k: r[0] for k, r in runs.items()}
    if set(kinds.values()) != {"ok"}:
        # an invalid kernel: every run fails; run one block at a time as the reference runs them,
        # each language gives the reference's first error, and C's names the thread the dialect's names
        assert "ok" not in kinds.values(), (kinds, what)
        one = {lang: _run(simtdocs.launch, k, p, a, blocks_per_pass=1)
               for lang, k, a in (("c", c_kernel, c_args), ("py", py_kernel, py_args))}
        assert one["c"][:2] == runs["c reference"][:2], (one["c"][:2], runs["c reference"][:2], what)
        assert one["py"][:2] == runs["py reference"][:2], (one["py"][:2], runs["py reference"][:2], what)
        c, py = runs["c reference"], runs["py reference"]
        assert c[0] == py[0] and _where(c[2], p.line_map) == _where(py[2]), (c[2], py[2], what)
        assert _where(py[2])[0], py[2]  # the error names a thread (or a block)
        return c[0]
    ref = runs["py reference"]
    for k, r in runs.items():
        assert _equal_arrays(r, ref), (k, what)
    py_lines = _lines(ref[2])
    assert _lines(runs["py fast"][2]) == py_lines, what
    assert _lines(runs["c reference"][2], p.line_map) == py_lines, what
    assert _lines(runs["c fast"][2], p.line_map) == py_lines, what
    for k, r in runs.items():
        assert r[2].totals == ref[2].totals, (k, what)
    if p.private:  # threads that do not talk: C's meaning, per thread, is the dialect's here too
        oracle = _copy(c_args)
        c_oracle.launch(p, oracle)
        assert _equal_arrays(("ok", oracle), ref), ("c_oracle", what)
    py_races = _races(ref[2])
    assert _races(runs["py fast"][2]) == py_races, what
    assert _races(runs["c reference"][2], p.line_map) == py_races, what
    assert _races(runs["c fast"][2], p.line_map) == py_races, what
    return "ok"


def check_c(p: cr.Program, seed: int, per_pass) -> str:
    """The C kernel on both engines against ``c_oracle`` (``mode="c"``), or, where its threads
    talk (``private=False``), the engines against each other; returns "ok" or the error's type."""
    kernel = cr.load_c(p)
    args, _ = cr.arguments(p, seed)
    what = f"\n--- C\n{p.c_source}"
    fast = _run(simtdocs.launch, kernel, p, args, blocks_per_pass=per_pass)
    slow = _run(reference.launch, kernel, p, args)
    if not p.private and (fast[0] != "ok" or slow[0] != "ok"):
        one = _run(simtdocs.launch, kernel, p, args, blocks_per_pass=1)
        assert fast[0] != "ok" and one[:2] == slow[:2], (fast[:2], one[:2], slow[:2], what)
        return slow[0]
    assert fast[0] == "ok" and slow[0] == "ok", (fast[:2], slow[:2], what)
    oracle = _copy(args)
    if p.private:
        c_oracle.launch(p, oracle)
    for x, y, z, (_, name) in zip(fast[1], slow[1], oracle, p.params):
        if isinstance(z, np.ndarray):
            assert np.array_equal(x, y, equal_nan=True), (name, "fast and reference engines differ", what)
            if not p.private:
                continue
            bad = np.flatnonzero(~((x == z) | (np.isnan(x) & np.isnan(z))) if x.dtype.kind == "f" else x != z)
            assert bad.size == 0, (name, [(int(i), x[i], z[i]) for i in bad[:5]], what)
    assert _lines(fast[2]) == _lines(slow[2]), what
    assert fast[2].totals == slow[2].totals, what
    assert _races(fast[2]) == _races(slow[2]), what
    return "ok"


def find_nvcc():
    """``nvcc`` on PATH, else the newest /usr/local/cuda*/bin/nvcc, else None."""
    return shutil.which("nvcc") or next((p for p in sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)
                                         if os.access(p, os.X_OK)), None)


def nvcc_compiles(programs, nvcc) -> str:
    """Compile the programs' C with ``nvcc -arch=sm_90 -std=c++17 -c`` (one file, a namespace
    each); "" if it compiled, else nvcc's errors."""
    text = "".join(f"#undef TPB\nnamespace p{i} {{\n{p.c_source}}}\n" for i, p in enumerate(programs))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "c_random.cu")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([nvcc, "-arch=sm_90", "-std=c++17", "-c", path, "-o", os.path.join(d, "c_random.o")],
                           capture_output=True, text=True)
    return "" if r.returncode == 0 else "\n".join(l for l in (r.stdout + r.stderr).splitlines() if "error" in l)


SAME_FLAGS = [{}, {"atomics_mix": True}, {"exits": True}, {"private": True}]


def same_cases(n, first=0):
    return [(seed, SAME_FLAGS[seed % len(SAME_FLAGS)]) for seed in range(first, first + n)]


@pytest.mark.parametrize("chunk", range(4))
def test_c_and_the_dialect_mean_the_same(chunk):
    """``mode="same"``: 40 programs (10 per chunk), each flag of ``program`` in turn."""
    outcomes = [check_same(cr.program(chooser(seed), **flags), seed % 4, PER_PASS[seed % 3])
                for seed, flags in same_cases(10, 10 * chunk)]
    assert outcomes.count("ok") >= 6, outcomes


@pytest.mark.parametrize("chunk", range(4))
def test_c_means_what_c_means(chunk):
    """``mode="c"``: 40 programs (10 per chunk) against ``c_oracle``."""
    for seed in range(10 * chunk, 10 * chunk + 10):
        check_c(cr.program(chooser(seed), mode="c", exits=seed % 3 == 0), seed % 4, PER_PASS[seed % 3])


@pytest.mark.parametrize("chunk", range(2))
def test_c_rules_with_threads_that_talk_agree_on_both_engines(chunk):
    """``mode="c", private=False``: shared memory, barriers, shuffles and votes over C's types
    (a ``double`` shuffled, a ``char`` in a ballot's test); 20 programs, the engines against
    each other (arrays, counters per line, races, errors)."""
    outcomes = [check_c(cr.program(chooser(seed), mode="c", private=False, exits=seed % 2 == 0), seed % 4,
                        PER_PASS[seed % 3]) for seed in range(10 * chunk, 10 * chunk + 10)]
    assert outcomes.count("ok") >= 5, outcomes


@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA toolkit (nvcc) here")
def test_the_programs_are_valid_cuda(request):
    """What the generator writes is CUDA that nvcc compiles (10 programs of each kind; the
    texts that compiled are remembered by their hash in pytest's cache, as test_nvcc does)."""
    import hashlib
    programs = [cr.program(chooser(seed), **kw) for seed in range(10)
                for kw in (SAME_FLAGS[seed % len(SAME_FLAGS)], {"mode": "c"}, {"mode": "c", "private": False})]
    # kernel names carry a counter: the key is the text without them
    text = re.sub(r"c_random_kernel_\d+", "k", "".join(p.c_source for p in programs))
    key = "c_random/nvcc/" + hashlib.sha1((text + find_nvcc()).encode()).hexdigest()
    if request.config.cache.get(key, False):
        return
    assert nvcc_compiles(programs, find_nvcc()) == ""
    request.config.cache.set(key, True)


def test_the_race_records_compared_are_not_empty():
    """The suite's shared-atomics programs race (shared accesses of other threads with no
    barrier between), so the race records C and the dialect must agree on are real ones."""
    kinds = set()
    for seed in range(1, 40, 4):  # the suite's atomics_mix programs
        p = cr.program(chooser(seed), **SAME_FLAGS[seed % len(SAME_FLAGS)])
        r = _run(reference.launch, cr.load_c(p), p, cr.arguments(p, seed % 4)[0])
        if r[0] == "ok":
            kinds |= {(x.kind, x.atomic, x.other_atomic) for x in r[2].races}
    assert {"read-after-write", "write-after-read"} <= {kind for kind, _, _ in kinds}, kinds


def test_the_c_programs_reach_cs_own_rules():
    """Over fixed seeds the oracle meets every rule where C and numba differ."""
    c_oracle.events.clear()
    for seed in range(20):
        p = cr.program(chooser(seed), mode="c")
        c_oracle.launch(p, cr.arguments(p, seed)[0])
    for event in ("signed wrap", "unsigned wrap", "negative / or %", "negative signed meets unsigned", "promotion",
                  "narrowing to signed"):
        assert c_oracle.events[event] > 0, (event, c_oracle.events)


def test_the_generator_reaches_every_construct():
    seen = ""
    for seed in range(80):
        p = cr.program(chooser(seed), **SAME_FLAGS[seed % len(SAME_FLAGS)])
        seen += p.c_source
    for construct in ("} else if (", "} else {", " && ", " || ", " ? ", "for (int k", "while (", "break;", "continue;",
                      "return;", "+=", "sh[tid]", "__syncthreads();", "__shfl_", "__ballot_sync", "atomicAdd(&hist",
                      "atomicAdd(&sh", "clamp(", "loc[", "bump(", "atomicMax(", "__syncwarp();"):
        assert construct in seen, construct
    c_seen = "".join(cr.program(chooser(seed), mode="c").c_source for seed in range(60))
    for construct in ("(unsigned)", "(char)", "(short)", "(long long)", "(unsigned char)", "(double)", " << ", " >> ",
                      " ^ ", "S8[", "S16[", "U[", "3000000000", "4000000000u", "5000000000LL", " * 0.5)", "iout[",
                      "do {", "++", "/=", "%=", "<<=", " ? "):
        assert construct in c_seen, construct


_PY_ONLY = {"if", "elif", "else", "while", "for", "in", "range", "and", "or", "not", "return", "break", "continue",
            "def", "cuda", "np", "float32", "True", "False", "array", "shared", "local", "atomic", "popc"}
_C_ONLY = {"if", "else", "while", "for", "int", "float", "void", "bool", "return", "break", "continue", "__device__",
           "__global__", "extern", "C", "__shared__", "const", "f", "__popc"}
_C_WORDS = {"atomicAdd": "add", "atomicSub": "sub", "atomicMax": "max", "atomicMin": "min",
            "__syncthreads": "syncthreads", "__syncwarp": "syncwarp", "__ballot_sync": "ballot_sync", "__shfl_down_sync": "shfl_down_sync",
            "__shfl_up_sync": "shfl_up_sync", "__shfl_xor_sync": "shfl_xor_sync"}


def _words(line, drop, rename=None):
    words = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"\d+\.\d+f?|0x[0-9A-F]+", "", line))) - drop
    return {(rename or {}).get(w, w) for w in words if not w.endswith("_end")}


def test_a_line_map_maps_each_statement():
    """The C line of each statement maps to the dialect line of the same statement: the two
    name the same variables, arrays and functions."""
    for seed in range(8):
        p = cr.program(chooser(seed), **SAME_FLAGS[seed % len(SAME_FLAGS)])
        c_lines, py_lines = p.c_source.splitlines(), p.py_source.splitlines()
        assert len(p.line_map) == len(set(p.line_map.values())) > 20
        for c, py in p.line_map.items():
            a, b = c_lines[c - 1], py_lines[py - 1]
            assert _words(a, _C_ONLY, _C_WORDS) == _words(b, _PY_ONLY), (a, b)


@pytest.mark.skipif(not LONG, reason="SIMTDOCS_LONG=1 runs thousands of programs (benchmarks/agreement.py --c)")
def test_long_run():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import agreement
    assert agreement.c_run(3000, 0, show=1) == 0  # about an hour on one core
