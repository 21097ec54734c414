"""Undefined, not fatal (issue 38): in the numba dialect a shuffle from a lane that does not
take part (exited, inactive, past the end of the block) gives an undefined value, which is an
error only where it is stored, used as an index or branched on, naming the line that made it
and the line that used it; left unused it is silent, as on a GPU (PTX ISA, ``shfl``: "results
are undefined ... if an active thread sources a register from an inactive thread"). In the
mask API the read stays an error, whose message says why and how to avoid it. Expectations
derived by hand in the comments, in both engines."""

import re

import numpy as np
import pytest

import simtdocs
from simtdocs import cuda, reference
from simtdocs.cuda.runtime import UndefinedValueError

ENGINES = {"reference": reference.launch, "fast": simtdocs.launch,
           "fast, one block a pass": lambda *a, **k: simtdocs.launch(*a, blocks_per_pass=1, **k)}
FULL = 0xFFFFFFFF


@pytest.fixture(params=list(ENGINES))
def launch(request):
    return ENGINES[request.param]


def line_of(kernel, text) -> int:
    """The file line of the kernel's source line containing ``text``."""
    import inspect
    lines, first = inspect.getsourcelines(kernel.py_func if hasattr(kernel, "py_func") else kernel)
    (k,) = [n for n, s in enumerate(lines) if text in s]
    return first + k


# -- the warp-aggregated atomics of a partial warp ----------------------------------------------


@cuda.jit
def aggregated_all(counter, slot, n):
    """Every running lane takes one slot through its warp's leader (the lowest active lane)."""
    i = cuda.grid(1)
    if i >= n:
        return
    mask = cuda.activemask()
    leader = cuda.ffs(mask) - 1
    base = 0
    if cuda.laneid == leader:
        base = cuda.atomic.add(counter, 0, cuda.popc(mask))
    base = cuda.shfl_sync(mask, base, leader)
    slot[i] = base + cuda.popc(mask & cuda.lanemask_lt())


@cuda.jit
def aggregated_odd(a, counter, slot, n):
    """Stream compaction: each odd element takes a slot through the leader of its warp's odd
    lanes. A warp with no odd lane has mask 0 and leader ffs(0) - 1 = -1, and shuffles from
    lane -1 % 32 = 31; in the last, partial warp lane 31 has exited: undefined, never used."""
    i = cuda.grid(1)
    if i >= n:
        return
    odd = a[i] % 2 == 1
    mask = cuda.ballot_sync(FULL, odd)
    leader = cuda.ffs(mask) - 1
    base = 0
    if cuda.laneid == leader:
        base = cuda.atomic.add(counter, 0, cuda.popc(mask))
    base = cuda.shfl_sync(FULL, base, leader)
    if odd:
        slot[i] = base + cuda.popc(mask & cuda.lanemask_lt())


def _warps_take_consecutive_slots(slot, taking):
    """Within each warp the taking lanes hold consecutive slots in lane order."""
    for w in range(0, len(slot), 32):
        s = slot[w:w + 32][taking[w:w + 32]]
        assert np.array_equal(s, np.arange(s.size) + (s[0] if s.size else 0))


def test_aggregated_atomics_in_a_partial_warp_run_and_store_right(launch):
    n = 1000
    counter, slot = np.zeros(1, np.int32), np.full(n, -1, np.int64)
    launch(aggregated_all, grid=4, block=256, args=(counter, slot, n))
    # 1000 running threads, one slot each: the slots are 0 … 999, once each; the last warp
    # (threads 992-999, lanes 0-7: mask 0xFF, leader lane 0) took 8 consecutive ones.
    assert counter[0] == 1000
    assert np.array_equal(np.sort(slot), np.arange(1000))
    _warps_take_consecutive_slots(slot, np.ones(n, bool))


def test_the_ffs_of_an_empty_ballot_shuffles_an_undefined_value_that_is_never_used(launch):
    n = 1000
    a = np.zeros(n, np.int32)
    a[np.arange(0, 992, 3)] = 7  # odd: 0, 3, …, 990 (331 of them); threads 992-999 all even
    counter, slot = np.zeros(1, np.int32), np.full(n, -1, np.int64)
    launch(aggregated_odd, grid=4, block=256, args=(a, counter, slot, n))
    # The last warp's 8 lanes ballot 0, shuffle from lane 31 (exited): undefined, unused.
    odd = a % 2 == 1
    assert counter[0] == 331
    assert np.array_equal(np.sort(slot[odd]), np.arange(331))
    assert (slot[~odd] == -1).all()
    _warps_take_consecutive_slots(slot, odd)


# -- where an undefined value is an error ------------------------------------------------------


@cuda.jit
def store_it(a, out):
    i = cuda.grid(1)
    v = a[i]
    w = cuda.shfl_down_sync(FULL, v, 16)
    x = w * 2.0 + 1.0
    out[i] = x


@cuda.jit
def index_with_it(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, i, 16)
    out[w % 40] = a[i]


@cuda.jit
def branch_on_it(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, a[i], 16)
    if w > 0.5:
        out[i] = 1.0


@cuda.jit
def leave_it_unused(a, out):
    i = cuda.grid(1)
    v = a[i]
    w = cuda.shfl_down_sync(FULL, v, 16)
    x = w + v  # undefined in threads 32-39, and never read
    out[i] = v * 2.0


@cuda.jit
def overwrite_some(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, a[i], 16)
    if cuda.laneid < 4:
        w = 0.0  # threads 32-35 are defined again; 36-39 are not
    out[i] = w


@cuda.jit
def overwrite_all(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, a[i], 16)
    w = a[i]
    out[i] = w


A40 = np.arange(40, dtype=np.float32) + 1


def _undefined(launch, kernel, block=40):
    out = np.zeros(40, np.float32)
    with pytest.raises(UndefinedValueError) as info:
        launch(kernel, grid=1, block=block, args=(A40, out))
    return info.value, str(info.value)


def test_an_undefined_value_stored_names_the_line_that_made_it_and_the_line_that_stored_it(launch):
    err, text = _undefined(launch, store_it)
    # Block of 40: warp 1 has lanes 0-7 (threads 32-39); each reads lane + 16 (threads 48-55),
    # past the end of the block: undefined, carried by w * 2 + 1 into x, stored by all 8.
    made, used = line_of(store_it, "w = cuda.shfl_down_sync"), line_of(store_it, "out[i] = x")
    assert text.startswith(f"Undefined value stored to memory at store_it (line {used}: out[i] = x)")
    assert f"made at line {made} (w = cuda.shfl_down_sync(FULL, v, 16)): __shfl_down_sync read a lane" in text
    assert "by thread (32,0,0) in block (0,0,0) (8 threads of the block): `x` is undefined there" in text
    assert "on a GPU that value is undefined" in text
    assert err.thread == (32, 0, 0) and err.block == (0, 0, 0)
    assert isinstance(err, simtdocs.SimulatorError)


def test_an_undefined_index_is_an_error(launch):
    err, text = _undefined(launch, index_with_it)
    used = line_of(index_with_it, "out[w % 40] = a[i]")
    assert text.startswith(f"Undefined value used as an index at index_with_it (line {used}:")
    assert "`w % 40` is undefined there" in text and err.thread == (32, 0, 0)


def test_a_branch_on_an_undefined_value_is_an_error(launch):
    err, text = _undefined(launch, branch_on_it)
    used, made = line_of(branch_on_it, "if w > 0.5:"), line_of(branch_on_it, "w = cuda.shfl_down_sync")
    assert text.startswith(f"Undefined value branched on at branch_on_it (line {used}: if w > 0.5:)")
    assert f"made at line {made} " in text and err.thread == (32, 0, 0)


def test_an_unused_undefined_value_is_silent_and_counted_as_before(launch):
    out = np.zeros(40, np.float32)
    stats = launch(leave_it_unused, grid=1, block=40, args=(A40, out))
    assert np.array_equal(out, A40 * 2)
    # One shuffle per warp with an active lane: 2 warps.
    (c,) = [lc.counters for lc in stats.lines if "shfl_down_sync" in lc.site.source]
    assert (c.shuffles, c.warp_instructions, c.active_lanes) == (2, 2, 40)


def test_a_defined_value_assigned_clears_the_lanes_it_reaches(launch):
    err, text = _undefined(launch, overwrite_some)
    # Lanes 0-3 of warp 1 (threads 32-35) assigned 0.0; threads 36-39 still undefined.
    assert err.thread == (36, 0, 0) and "(4 threads of the block)" in text
    out = np.zeros(40, np.float32)
    launch(overwrite_all, grid=1, block=40, args=(A40, out))
    assert np.array_equal(out, A40)


def test_whole_warps_shuffle_as_before(launch):
    out = np.zeros(64, np.float32)
    a = np.arange(64, dtype=np.float32) + 1
    launch(store_it, grid=1, block=64, args=(a, out))
    # lane l < 16 reads lane l + 16; lanes 16-31 are past the warp's width and keep their own
    src = np.arange(64)
    src = np.where(src % 32 < 16, src + 16, src)
    assert np.array_equal(out, a[src] * 2 + 1)


# -- a warp reduction in a partial warp; a device function that shuffles ------------------------


@cuda.jit(device=True)
def warp_sum(v):
    for d in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(FULL, v, d)
    return v


@cuda.jit
def per_warp_sums(a, out):
    i = cuda.grid(1)
    s = warp_sum(a[i])
    if cuda.laneid == 0:
        out[i // 32] = s


@cuda.jit
def per_warp_sums_inline(a, out):
    i = cuda.grid(1)
    v = a[i]
    for d in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(FULL, v, d)
    if cuda.laneid == 0:
        out[i // 32] = v


@pytest.mark.parametrize("kernel", [per_warp_sums, per_warp_sums_inline], ids=["device function", "inline"])
def test_a_warp_reduction_of_whole_warps_is_right_and_of_a_partial_warp_stops_at_its_store(launch, kernel):
    a = np.arange(64, dtype=np.float32) + 1
    out = np.zeros(2, np.float32)
    launch(kernel, grid=1, block=64, args=(a, out))
    assert out.tolist() == [a[:32].sum(), a[32:].sum()]  # 528 and 1552
    # A block of 40: lane 0 of warp 1 (thread 32) adds lane 16, past the block: undefined,
    # and it stores it. Warp 0's lanes are all defined.
    with pytest.raises(UndefinedValueError) as info:
        launch(kernel, grid=1, block=40, args=(a[:40].copy(), np.zeros(2, np.float32)))
    text = str(info.value)
    assert info.value.thread == (32, 0, 0) and "(1 thread of the block)" in text
    assert "Undefined value stored to memory" in text
    assert "v += cuda.shfl_down_sync(FULL, v, d)" in text and "__shfl_down_sync read a lane" in text


# -- exited lanes named in a mask: syncwarp, votes, syncthreads_count --------------------------


@cuda.jit
def after_exit(out, counts, n):
    i = cuda.grid(1)
    if i >= n:
        return
    cuda.syncwarp(FULL)  # lanes 8-31 of warp 1 exited: not waited for
    b = cuda.ballot_sync(FULL, True)
    c = cuda.syncthreads_count(True)
    out[i] = b
    if i == 0:
        counts[0] = c


def test_exited_lanes_do_not_take_part_in_syncwarp_votes_or_syncthreads_count(launch):
    out, counts = np.zeros(40, np.int64), np.zeros(1, np.int64)
    launch(after_exit, grid=1, block=64, args=(out, counts, 40))
    # warp 0: all 32 lanes vote; warp 1: lanes 0-7 (threads 32-39), bits 0xFF; 40 threads count
    assert out.tolist() == [FULL] * 32 + [0xFF] * 8
    assert counts[0] == 40


# -- the compiled form of a kernel without shuffles has no shadows -------------------------------


@cuda.jit
def no_shuffles(a, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * 2.0


def test_kernels_without_shuffles_compile_as_before():
    text = no_shuffles.as_masks()
    assert "_u_" not in text and "_shfl_plan" not in text
    # with a shuffle, the plan runs first and the value is checked only where it goes
    masks = store_it.as_masks()
    assert "_shfl_plan(" in masks and "_u_check(" in masks


# -- the mask API: the read stays an error, and says why --------------------------------------


def mask_api_shuffle(blk, a, out):
    v = blk.load(a, blk.tid)
    w = blk.shfl_down(v, 16)
    blk.store(out, blk.tid, w)


def test_the_mask_api_error_says_a_gpu_gives_an_undefined_value_and_how_to_avoid_reading_it():
    out = np.zeros(40, np.float32)
    with pytest.raises(simtdocs.SimulatorError) as info:
        simtdocs.launch(mask_api_shuffle, grid=1, block=40, args=(A40, out))
    text = str(info.value)
    assert re.search(r"__shfl_down_sync reads a lane that does not take part\n    at mask_api_shuffle \(line \d+", text)
    assert "threads 32–39 read from threads 48–55" in text
    assert "on a GPU that value is undefined" in text
    assert "here the shuffle's result becomes your own numpy array, so reading such a lane stops the launch" in text
    assert "To avoid it, shuffle under a mask= whose lanes read only lanes of that same mask" in text


@cuda.jit(device=True)
def twice(x):
    return x * 2.0


@cuda.jit
def pass_it_to_a_device_function(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, a[i], 16)
    out[i] = twice(w)


def test_an_undefined_value_passed_to_a_device_function_is_reported_at_the_call(launch):
    # The function's own uses are not followed: the call is where it is caught (thread 32).
    err, text = _undefined(launch, pass_it_to_a_device_function)
    used = line_of(pass_it_to_a_device_function, "out[i] = twice(w)")
    assert text.startswith(f"Undefined value passed to a device function at pass_it_to_a_device_function (line {used}:")
    assert err.thread == (32, 0, 0)
    out = np.zeros(64, np.float32)
    launch(pass_it_to_a_device_function, grid=1, block=64, args=(np.ones(64, np.float32), out))
    assert (out == 2).all()  # whole warps: every source takes part


# -- the CUDA C front end lowers onto the same compiler: the same rule ----------------------------

AGGREGATE_CU = r'''
extern "C" __global__ void compact(const int* a, int* counter, int* slot, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    bool odd = a[i] % 2 == 1;
    unsigned mask = __ballot_sync(0xffffffff, odd);
    int leader = __ffs(mask) - 1;
    int base = 0;
    if ((threadIdx.x % 32) == leader) base = atomicAdd(counter, __popc(mask));
    base = __shfl_sync(0xffffffff, base, leader);
    if (odd) slot[i] = base + __popc(mask & ((1u << (threadIdx.x % 32)) - 1));
}

extern "C" __global__ void down(const float* a, float* out) {
    int i = threadIdx.x;
    float w = __shfl_down_sync(0xffffffff, a[i], 16);
    out[i] = w;
}
'''


def test_cuda_c_aggregation_runs_and_an_undefined_store_names_both_c_lines():
    pytest.importorskip("simtdocs.cuda.c")
    from simtdocs.cuda import RawModule
    module = RawModule(code=AGGREGATE_CU)
    n = 1000
    a = np.zeros(n, np.int32)
    a[np.arange(0, 992, 3)] = 7  # as above: 331 odd elements, the last warp's 8 lanes all even
    counter, slot = np.zeros(1, np.int32), np.full(n, -1, np.int32)
    module.get_function("compact")((4,), (256,), (a, counter, slot, np.int32(n)))
    odd = a % 2 == 1
    assert counter[0] == 331 and np.array_equal(np.sort(slot[odd]), np.arange(331)) and (slot[~odd] == -1).all()
    with pytest.raises(UndefinedValueError) as info:
        module.get_function("down")((1,), (40,), (A40, np.zeros(40, np.float32)))
    text = str(info.value)
    assert "Undefined value stored to memory at down (line" in text and ": out[i] = w;)" in text
    assert "(float w = __shfl_down_sync(0xffffffff, a[i], 16);): __shfl_down_sync read a lane" in text
    assert info.value.thread == (32, 0, 0)


# -- the lanes that read a lane that takes part get its value, whatever the others read ---------


@cuda.jit
def store_only_defined(a, out, delta):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, a[i], delta)
    if cuda.laneid + delta < 8 or i < 32:
        out[i] = w


@cuda.jit
def per_thread_delta(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_up_sync(FULL, a[i], cuda.laneid % 3)
    x = cuda.shfl_xor_sync(FULL, a[i], 1)
    out[i] = w + 100.0 * x


def test_defined_lanes_are_right_next_to_undefined_ones(launch):
    out = np.zeros(40, np.float32)
    launch(store_only_defined, grid=1, block=40, args=(A40, out, 4))
    # warp 0: lane l < 28 reads l + 4, lanes 28-31 keep their own; warp 1 (lanes 0-7 of a
    # block of 40): lanes 0-3 read 4-7 (defined, stored), lanes 4-7 read 8-11 (missing: not stored)
    t = np.arange(40)
    src = np.where(t < 28, t + 4, np.where(t < 32, t, t + 4))
    assert np.array_equal(out[:36], A40[src[:36]]) and (out[36:] == 0).all()
    out = np.zeros(40, np.float32)
    launch(per_thread_delta, grid=1, block=40, args=(A40, out))
    # shfl_up by lane % 3: lane l reads l - l % 3 (never below 0); shfl_xor by 1: l ^ 1, inside 0-7
    lane = t % 32
    up = t - lane % 3
    assert np.array_equal(out, A40[up] + 100 * A40[t ^ 1])


@cuda.jit
def short_circuit(a, out):
    i = cuda.grid(1)
    w = cuda.shfl_down_sync(FULL, a[i], 16)
    if i >= 32 or w > 20.5:  # threads 32-39 never look at their (undefined) w
        out[i] = 1.0
    if i < 32 and w < 20.5:
        out[i] = 2.0


def test_a_short_circuit_that_skips_the_undefined_value_is_no_branch_on_it(launch):
    out = np.zeros(40, np.float32)
    launch(short_circuit, grid=1, block=40, args=(A40, out))
    # warp 0: w = a[l + 16] = l + 17 for l < 16, else a[l] = l + 1: w > 20.5 for l >= 4 (l < 16)
    # and l >= 20; w < 20.5 for l < 4 and 16 <= l < 20
    t = np.arange(32)
    w = np.where(t < 16, t + 17, t + 1)
    assert out[:32].tolist() == np.where(w > 20.5, 1.0, np.where(w < 20.5, 2.0, 0.0)).tolist()
    assert (out[32:] == 1).all()
