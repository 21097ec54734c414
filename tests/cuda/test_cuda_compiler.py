"""simtdocs.cuda's compiler: what each construct means, where it is counted, what it refuses.

* Meaning: random per-thread kernels whose threads do not talk give what their own Python
  gives when run thread by thread (``cuda_oracle``), and hand-written kernels give numpy's
  answers, for every control-flow construct.
* Lines: counters, races, sanitizer errors and traces name the reader's lines.
* Types: numba's (int64 and float64 literals, Python's ``//`` and ``%``).
* Refusals: unsupported constructs are compile-time errors naming the line and the construct.
"""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simtdocs
from simtdocs import cuda, reference
from simtdocs.cuda import CompileError

import cuda_oracle
import cuda_random_kernels as rk


# -- meaning: the kernel's own Python, one thread at a time ----------------------------------------


def agree_with_python(source, block, grid, name, seed):
    kernel = rk.load(source, name)
    args = rk.arguments(block, grid, seed)
    ours = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    oracle = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    kernel[grid, block](*ours)
    cuda_oracle.launch(kernel, grid, block, oracle)
    # the oracle computes with numba's rules (cuda_oracle.Num) but types each value as it runs:
    # a float32 that numba unifies to float64 where control flow joins rounds in float32 there
    np.testing.assert_allclose(ours[2], oracle[2], rtol=1e-4, atol=1e-4, err_msg=source)
    assert np.array_equal(ours[3], oracle[3]), source  # atomic counts


@st.composite
def private_programs(draw):
    source, block, grid, name = rk.program(lambda kind, lo, hi: draw(st.integers(lo, hi)), private=True)
    return source, block, grid, name, draw(st.integers(0, 3))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(private_programs())
def test_random_kernels_mean_what_their_python_means(p):
    agree_with_python(*p)


# -- meaning: each construct by hand ------------------------------------------------------------------


@cuda.jit
def control(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    acc = 0
    for k in range(i % 7):            # per-thread trip count
        if k == 2:
            continue
        if k * i > 40 and i % 3 == 0:
            break
        acc += k
    j = 0
    while True:                       # left by break only
        j += 1
        if j >= i % 4:
            break
    v = -1 if i % 5 == 0 else acc     # a select
    if i % 2 == 0 and i % 4 != 0:
        v += 100
    elif not (i % 3 == 0 or i % 7 == 0):
        v += 1000
    else:
        v += 10000
    out[i] = v * 10 + j


def control_python(i):
    acc = 0
    for k in range(i % 7):
        if k == 2:
            continue
        if k * i > 40 and i % 3 == 0:
            break
        acc += k
    j = 0
    while True:
        j += 1
        if j >= i % 4:
            break
    v = -1 if i % 5 == 0 else acc
    if i % 2 == 0 and i % 4 != 0:
        v += 100
    elif not (i % 3 == 0 or i % 7 == 0):
        v += 1000
    else:
        v += 10000
    return v * 10 + j


def test_control_flow_constructs():
    n = 300
    out = np.full(320, -7, np.int64)
    cuda.jit(control.py_func)[5, 64](out, n)
    assert out[:n].tolist() == [control_python(i) for i in range(n)]
    assert (out[n:] == -7).all()  # the early return


@cuda.jit(device=True)
def collatz_steps(x):
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
        if steps > 200:
            return -1
    return steps


@cuda.jit
def collatz(out):
    i = cuda.grid(1)
    if i > 0 and i < out.size:
        out[i] = collatz_steps(i)


def test_device_function_with_per_thread_loop_and_early_return():
    out = np.zeros(200, np.int64)
    st_ = collatz[4, 64](out)
    def steps(x):
        s = 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            s += 1
        return s
    assert out[1:].tolist() == [steps(i) for i in range(1, 200)]
    lines = {s.source for s in st_.by_site}
    assert "while x != 1:" in lines and "if x % 2 == 0:" in lines  # counted at the device function's lines
    assert st_.divergent_branches > 0


@cuda.jit
def guarded(a, out):
    i = cuda.grid(1)
    # the load happens only where i < a.size: a short-circuit around a load is a branch
    if i < a.size and a[i] > 0.5:
        out[i] = 1
    out[i] += 2 if i < a.size and a[i] > 0.25 else 0


def test_short_circuit_guards_the_load():
    a = np.random.default_rng(0).random(100).astype(np.float32)
    out = np.zeros(128, np.int64)
    guarded[1, 128](a, out)
    expect = np.zeros(128, np.int64)
    expect[:100] = (a > 0.5) + 2 * (a > 0.25)
    assert out.tolist() == expect.tolist()


@cuda.jit
def local_and_const(out):
    tmp = cuda.local.array(4, np.int32)
    for k in range(4):
        tmp[k] = cuda.threadIdx.x * k
    if cuda.threadIdx.x % 2 == 0:
        tmp[cuda.threadIdx.x % 4] = -1
    s = 0
    for k in range(4):
        s += tmp[k] * WEIGHTS[k]
    out[cuda.threadIdx.x] = s


WEIGHTS = np.array([1, 10, 100, 1000], np.int32)


def test_local_and_constant_arrays_are_per_thread_and_uncounted():
    out = np.zeros(64, np.int64)
    st_ = local_and_const[1, 64](out)
    expect = []
    for t in range(64):
        tmp = [t * k for k in range(4)]
        if t % 2 == 0:
            tmp[t % 4] = -1
        expect.append(sum(x * w for x, w in zip(tmp, WEIGHTS)))
    assert out.tolist() == expect
    assert st_.requests == 2  # only the store to out: one request per warp


@cuda.jit
def warp_ops(x, out):
    t = cuda.threadIdx.x
    v = x[t]
    for d in (16, 8, 4, 2, 1):
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, d)
    b = cuda.ballot_sync(0xFFFFFFFF, x[t] > 0.5)
    up = cuda.shfl_up_sync(0xFFFFFFFF, t, t % 3)     # a per-thread delta
    out[t, 0] = v
    out[t, 1] = cuda.popc(b)
    out[t, 2] = up
    out[t, 3] = cuda.all_sync(0xFFFFFFFF, x[t] >= 0) + 2 * cuda.any_sync(0xFFFFFFFF, x[t] > 0.99)


def test_warp_operations():
    x = np.random.default_rng(1).random(64).astype(np.float32)
    out = np.zeros((64, 4), np.float64)
    st_ = warp_ops[1, 64](x, out)
    for w in range(2):
        lanes = slice(32 * w, 32 * w + 32)
        assert np.allclose(out[lanes, 0], x[lanes].sum(), rtol=1e-5)
        assert (out[lanes, 1] == (x[lanes] > 0.5).sum()).all()
        assert (out[lanes, 3] == 1 + 2 * (x[lanes] > 0.99).any()).all()
    t = np.arange(64)
    src = t % 32 - t % 3
    assert (out[:, 2] == np.where(src >= 0, t - t % 3, t)).all()
    assert st_.shuffles == 2 * (5 + 1) and st_.votes == 2 * 3


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    local = cuda.shared.array(8, np.int32)
    if cuda.threadIdx.x < 8:
        local[cuda.threadIdx.x] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(local, x[i] % 8, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x < 8:
        cuda.atomic.add(bins, cuda.threadIdx.x, local[cuda.threadIdx.x])


def test_shared_histogram_with_atomics_agrees_with_the_reference_engine():
    x = np.random.default_rng(2).integers(0, 100, 1000).astype(np.int32)
    b1, b2 = np.zeros(8, np.int64), np.zeros(8, np.int64)
    s1 = histogram[4, 256](x, b1)
    s2 = reference.launch(histogram, 4, 256, args=(x, b2))
    assert b1.tolist() == np.bincount(x % 8, minlength=8).tolist() == b2.tolist()
    assert s1.by_site == s2.by_site and not s1.races


@cuda.jit
def histogram_read_out_early(x, bins):
    i = cuda.grid(1)
    local = cuda.shared.array(8, np.int32)
    if cuda.threadIdx.x < 8:
        local[cuda.threadIdx.x] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(local, x[i] % 8, 1)
    if cuda.threadIdx.x < 8:  # the cuda.syncthreads() before the read-out is missing
        cuda.atomic.add(bins, cuda.threadIdx.x, local[cuda.threadIdx.x])


def test_a_shared_histogram_read_out_without_its_barrier_races_its_atomics_in_both_engines():
    # x[i] = i % 8 on 4 blocks of 256 (block 3: 232 threads with an element): bin t of a block
    # is updated by threads t, t + 8, t + 16, … (lanes of warp 0 and threads of every other
    # warp); read-out thread t (< 8, warp 0) reads it with no barrier: 8 racing reads per
    # block, each also across warps (named: warp 1), 32 in all. compute-sanitizer's racecheck
    # reports none of them.
    x = (np.arange(1000) % 8).astype(np.int32)
    for engine in ("fast", "reference"):
        b = np.zeros(8, np.int64)
        st_ = histogram_read_out_early[4, 256](x, b) if engine == "fast" else \
            reference.launch(histogram_read_out_early, 4, 256, args=(x, b))
        assert b.tolist() == np.bincount(x, minlength=8).tolist()
        assert [(r.block[0], r.kind, r.other_atomic, r.warp, r.other_warp, r.hazards, r.across_warps)
                for r in st_.races] == [(blk, "read-after-write", True, 0, 1, 8, 8) for blk in range(4)]
        assert st_.hazards == 32
        assert {r.site.source for r in st_.races} == {"cuda.atomic.add(bins, cuda.threadIdx.x, local[cuda.threadIdx.x])"}
        assert {r.other_site.source for r in st_.races} == {"cuda.atomic.add(local, x[i] % 8, 1)"}


# -- types ----------------------------------------------------------------------------------------------


@cuda.jit
def typed(a, f64out, iout):
    i = cuda.grid(1)
    f64out[i] = a[i] * 0.1           # float32 * float64 literal: float64, as numba types it
    iout[i, 0] = (i - 5) // 3         # Python's floor division
    iout[i, 1] = (i - 5) % 3          # and modulo
    iout[i, 2] = cuda.threadIdx.x + 2147483647   # int32 + int64 literal: int64, no wrap-around


def test_types_are_numbas():
    a = np.random.default_rng(3).random(32).astype(np.float32)
    f, k = np.zeros(32), np.zeros((32, 3), np.int64)
    typed[1, 32](a, f, k)
    assert np.array_equal(f, a.astype(np.float64) * 0.1)
    i = np.arange(32)
    assert k[:, 0].tolist() == [(x - 5) // 3 for x in range(32)]
    assert k[:, 1].tolist() == [(x - 5) % 3 for x in range(32)]
    assert k[:, 2].tolist() == (i + 2147483647).tolist()


@pytest.mark.parametrize("sig,arg,expect,fn", [
    ("void(uint64[:], uint64)", 0x000030F0000030F0, 0x0F0C00000F0C0000, "brev"),
    ("void(int32[:], int64)", 0x000000000010000, 47, "clz"),
    ("void(int32[:], int64)", 0x000000000010000, 17, "ffs"),
    ("void(int32[:], int64)", 0x100000000, 33, "ffs"),
    ("void(uint32[:], uint32)", 0x000030F0, 0x0F0C0000, "brev"),
    ("void(int32[:], int32)", 0x0, 32, "clz"),
    ("void(int32[:], int32)", 0x0, 0, "ffs"),
])
def test_bit_intrinsics_as_numba_tests_expect(sig, arg, expect, fn):
    """numba-cuda's test_intrinsics.py values, the 64-bit ones included (its simulator skips them)."""
    src = {"brev": bit_brev, "clz": bit_clz, "ffs": bit_ffs}[fn]
    k = cuda.jit(sig)(src.py_func)
    ary = np.zeros(1, dtype=np.uint64 if sig.startswith("void(uint64") else np.uint32 if "uint32[" in sig else np.int32)
    k[1, 1](ary, arg)
    assert int(ary[0]) == expect


@cuda.jit
def bit_brev(ary, c):
    ary[0] = cuda.brev(c)


@cuda.jit
def bit_clz(ary, c):
    ary[0] = cuda.clz(c)


@cuda.jit
def bit_ffs(ary, c):
    ary[0] = cuda.ffs(c)


# -- the reader's lines ------------------------------------------------------------------------------


@cuda.jit
def reverse_nosync(d):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    buf[t] = d[t]
    d[t] = buf[63 - t]


@cuda.jit
def out_of_bounds(a, n):
    i = cuda.grid(1)
    if i < n + 3:
        a[i] = 1.0


@cuda.jit
def divergent_barrier(a):
    if cuda.threadIdx.x < 16:
        cuda.syncthreads()
    a[cuda.threadIdx.x] = 1


def test_races_name_the_readers_lines():
    st_ = reverse_nosync[1, 64](np.arange(64, dtype=np.float32))
    assert st_.races
    assert {r.site.source for r in st_.races} <= {"buf[t] = d[t]", "d[t] = buf[63 - t]"}
    assert "d[t] = buf[63 - t]" in str(st_.races[0])


def test_memcheck_names_the_readers_line_and_thread():
    with pytest.raises(simtdocs.MemcheckError) as info:
        out_of_bounds[1, 32](np.zeros(10, np.float32), 10)
    text = str(info.value)
    assert "a[i] = 1.0" in text and "thread (10,0,0)" in text
    assert info.value.site.lineno == out_of_bounds.py_func.__code__.co_firstlineno + 4


def test_synccheck_on_a_barrier_in_divergent_code():
    with pytest.raises(simtdocs.SynccheckError) as info:
        divergent_barrier[1, 32](np.zeros(32, np.int32))
    assert "cuda.syncthreads()" in str(info.value)


def test_by_site_trace_and_both_engines():
    n = 100
    a, b = np.ones(n, np.float32), np.ones(n, np.float32)
    st_ = vadd.launch(1, 128, (a, b, np.zeros(n, np.float32), n), trace=(0, 3))
    assert [line.site.source for line in st_.lines] == ["if i < n:", "c[i] = a[i] + b[i]"]
    assert {r.site.source for r in st_.trace} == {"c[i] = a[i] + b[i]"}
    s1 = simtdocs.launch(vadd, grid=1, block=128, args=(a, b, np.zeros(n, np.float32), n))
    s2 = reference.launch(vadd, grid=1, block=128, args=(a, b, np.zeros(n, np.float32), n))
    assert s1.by_site == s2.by_site == st_.by_site


@cuda.jit
def vadd(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


def test_as_masks_is_the_mask_form_with_the_readers_lines():
    text = vadd.as_masks()
    assert "_m1 = blk.branch(i < n)" in text
    assert "blk.store(c, i, blk.load(a, i, mask=_m1) + blk.load(b, i, mask=_m1), mask=_m1)" in text
    first = vadd.py_func.__code__.co_firstlineno
    assert f"# {first + 3}: if i < n:" in text
    compile(text.split("\n\n# ")[0], "<as_masks>", "exec")  # it is Python


def test_launch_forms():
    n = 50
    a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    st_ = vadd[2, 32](a, b, c, n)
    assert vadd.last_stats is st_ and np.array_equal(c, a + 1)
    c[:] = 0
    vadd.forall(n)(a, b, c, n)
    assert np.array_equal(c, a + 1)
    with pytest.raises(TypeError, match=r"vadd\[grid, block\]"):
        vadd(a, b, c, n)
    d = cuda.to_device(a)
    assert np.array_equal(d.copy_to_host(), a)


# -- refusals ------------------------------------------------------------------------------------------

REFUSED = {
    "try": ("try:\n        x[0] = 1\n    except Exception:\n        pass", "try/except"),
    "raise": ("raise ValueError('no')", "raise"),
    "lambda": ("f = lambda v: v\n    x[0] = 1", "lambda"),
    "list": ("y = [1, 2]\n    x[0] = 1", "a list"),
    "dict": ("y = {}\n    x[0] = 1", "a dict"),
    "comprehension": ("y = sum(v for v in range(3))", "a generator expression"),
    "print keywords": ("print(x[0], end='')", "keyword arguments"),
    "with": ("with open('f') as f:\n        pass", "with"),
    "class": ("class A:\n        pass", "a class definition"),
    "nested def": ("def g():\n        return 1\n    x[0] = g()", "a nested function"),
    "slice": ("y = x[1:]", "slicing"),
    "cooperative groups": ("g = cuda.cg.this_grid()", "cooperative groups"),
    "global list": ("x[0] = PYLIST[0]", "cannot be used as a value"),
    "python function": ("x[0] = plain(1)", "not a device function"),
    "atomic nanmax": ("cuda.atomic.nanmax(x, 0, 1)", "cuda.atomic.nanmax is not supported"),
}

PYLIST = [1, 2, 3]


def plain(v):
    return v


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_unsupported_constructs_are_compile_errors_naming_line_and_construct(what, tmp_path):
    body, words = REFUSED[what]
    source = f"import numpy as np\nfrom simtdocs import cuda\nfrom test_cuda_compiler import PYLIST, plain\n\n" \
             f"@cuda.jit\ndef k(x):\n    {body}\n"
    path = tmp_path / f"refused_{abs(hash(what))}.py"
    path.write_text(source)
    namespace = {"__name__": "refused"}
    exec(compile(source, str(path), "exec"), namespace)
    with pytest.raises(CompileError) as info:
        namespace["k"][1, 1](np.zeros(2, np.int64))
    message = str(info.value)
    assert words in message
    assert "(line 7" in message or "(line 8" in message or "(line 9" in message


@cuda.jit
def checks(x):
    i = cuda.grid(1)
    if i < 3:
        print("thread", i, "reads", x[i])
    assert x[i] >= 0, "negative input"


def test_print_and_assert(capsys):
    checks[1, 4](np.array([1.5, 2.5, 3.5, 0.0]))
    assert capsys.readouterr().out.splitlines() == ["thread 0 reads 1.5", "thread 1 reads 2.5", "thread 2 reads 3.5"]
    with pytest.raises(AssertionError, match=r"line \d+: assert x\[i\] >= 0.*thread \(1, 0, 0\).*negative input"):
        checks[1, 4](np.array([1.0, -1.0, 2.0, 3.0]))


@cuda.jit(device=True)
def recurse(n):
    if n <= 0:
        return 0
    return recurse(n - 1) + 1


@cuda.jit
def calls_recursion(x):
    x[0] = recurse(3)


def test_recursion_is_refused():
    with pytest.raises(CompileError, match="recursion"):
        calls_recursion[1, 1](np.zeros(1, np.int64))


@cuda.jit
def column_sums(out, b):
    j = cuda.grid(1)
    if j < b.shape[1]:
        acc = 0.0
        for k in range(b.shape[0]):
            acc += b[k, j]
        out[j] = acc


def column_sums_blk(blk, out, base):  # the same, on the C array whose transpose the kernel gets
    j = blk.bx * blk.bdx + blk.tx
    m = blk.branch(j < base.shape[0])
    acc = 0.0
    for k in range(base.shape[1]):
        acc = acc + blk.load(base, (j, k), mask=m)
    blk.store(out, j, acc, mask=m)


def test_a_transposed_argument_runs_in_place_with_its_real_addresses():
    base = np.random.default_rng(4).random((40, 24))
    o1, o2 = np.zeros(40), np.zeros(40)
    s1 = column_sums[2, 32](o1, base.T)  # b = base.T: b[k, j] is base[j, k]
    s2 = simtdocs.launch(column_sums_blk, grid=2, block=32, args=(o2, base))
    assert np.allclose(o1, base.sum(1)) and np.array_equal(o1, o2)
    assert s1.totals == s2.totals
    out = np.zeros((6, 4)).T  # a transposed output is written in place
    fill_t[1, (4, 6)](out)
    assert np.array_equal(out, np.add.outer(np.arange(4) * 10, np.arange(6)))


@cuda.jit
def fill_t(o):
    i, j = cuda.grid(2)
    o[i, j] = i * 10 + j


# -- a loop variable's name reused by a later loop ------------------------------------------------


@cuda.jit
def reused_loop_name(out, n):
    t = cuda.threadIdx.x
    acc = 0
    for k in range(3):          # a uniform loop: k is the same in every thread
        if n > 3 and k == 0:    # a uniform branch: not counted
            continue
        acc += k
    for k in range(t % 4):      # the same name, now per thread: a variable of its own
        acc += 1
    out[t] = acc


@cuda.jit
def own_loop_names(out, n):
    t = cuda.threadIdx.x
    acc = 0
    for k in range(3):
        if n > 3 and k == 0:
            continue
        acc += k
    for j in range(t % 4):
        acc += 1
    out[t] = acc


@cuda.jit
def read_after_the_loops(out, n):
    t = cuda.threadIdx.x
    k = 0
    for k in range(3):
        pass
    for k in range(t % 4):      # k after this loop is its last value: one variable, not split
        pass
    out[t] = k


@pytest.mark.parametrize("run", [simtdocs.launch, reference.launch], ids=["fast", "reference"])
def test_a_loop_name_reused_by_a_per_thread_loop_is_two_variables(run):
    a, b = np.zeros(64, np.int64), np.zeros(64, np.int64)
    sa = run(reused_loop_name, 1, 64, args=(a, 5))
    sb = run(own_loop_names, 1, 64, args=(b, 5))
    assert list(a) == list(b) == [1 + 2 + t % 4 for t in range(64)]
    assert sa.totals == sb.totals  # the uniform `if` is counted in neither: the renamed twin counts the same
    assert sa.totals.divergent_branches == sb.totals.divergent_branches
    c = np.zeros(64, np.int64)
    run(read_after_the_loops, 1, 64, args=(c, 5))
    assert list(c) == [t % 4 - 1 if t % 4 else 2 for t in range(64)]
