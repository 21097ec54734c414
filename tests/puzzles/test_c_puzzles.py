"""Every puzzle in CUDA C (issue 40): ``check()`` grades a ``RawKernel`` like a Python kernel.

For each puzzle the C solution (``snippets/puzzles/<module>_solutions.cu``) passes, the C
skeleton (``snippets/puzzles/<module>.cu``) fails, and at least two wrong C answers
(``tests/puzzles/c_wrong/<module>.cu``: an off-by-one guard or index, a missing ``__syncthreads()`` where the puzzle has a barrier, …)
fail with a verdict that names the C line at fault, counted from the kernel's ``__global__``
line as a Python verdict counts from the ``def``, in English and in Chinese. Each expected
line below was read off the kernel by hand; the test also checks that the line holds the
construct it is about, so a renumbering of the files cannot pass unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simtdocs.cuda import RawModule
from simtdocs.i18n import language
from simtdocs.puzzles import PUZZLES

from simtdocs.snippets import repo_root

ROOT = repo_root()
WRONG_DIR = Path(__file__).parent / "c_wrong"

# (puzzle, wrong kernel, the line the verdict must name, text of that line, the English verdict)
WRONG = [
    ("double", "double_read_next", 4, "a[i + 1]",
     "thread (255, 0, 0) of block (3, 0, 0) reads out of bounds on line 4"),
    ("double", "double_block_stride_twice", 4, "a[i]",
     "thread (0, 0, 0) of block (2, 0, 0) reads out of bounds on line 4"),
    ("guard", "guard_less_or_equal", 5, "out[i] = a[i] + b[i];",
     "thread (232, 0, 0) of block (3, 0, 0) reads out of bounds on line 5"),
    ("guard", "guard_store_only", 4, "float sum = a[i] + b[i];",
     "thread (232, 0, 0) of block (3, 0, 0) reads out of bounds on line 4"),
    ("add_bias", "add_bias_row_less_or_equal", 6, "a[row * N + col]",
     "thread (0, 2, 0) of block (0, 3, 0) reads out of bounds on line 6"),
    ("add_bias", "add_bias_column_major", 6, "a[col * M + row]",
     "wrong value at element [0][1] of out: expected 1.22912, got -0.454534, stored by line 6 "
     "(`out[row * N + col] = a[col * M + row] + bias[col];`) (3,498 of its 3,500 elements are wrong)"),
    ("grid_stride", "grid_stride_less_or_equal", 5, "float v = a[i];",
     "thread (16, 0, 0) of block (6, 0, 0) reads out of bounds on line 5"),
    ("grid_stride", "grid_stride_chunks", 7, "float v = a[i];",
     "coalescing 12% where ≥ 90% is asked, on line 7 (`float v = a[i];`)"),
    ("warp_sum", "warp_sum_one_step_short", 9, "out[i / 32] = v;",
     "wrong value at element 0 of out: expected 139.0, got 84.0, stored by line 9 (`out[i / 32] = v;`) "
     "(128 of its 128 elements are wrong)"),
    ("warp_sum", "warp_sum_stored_at_i", 9, "out[i] = v;",
     "thread (128, 0, 0) of block (0, 0, 0) writes out of bounds on line 9"),
    ("window_sum", "window_sum_no_sync", 10, "out[i] = tile[t]",
     "a race inside warp 0 on line 10: lane 0 reads shared tile[1], which lane 1 writes on line 6; other warps "
     "race on tile in this block too, so it needs __syncthreads() between (4,096 hazards in all)"),
    ("window_sum", "window_sum_halo_less_or_equal", 8, "<= n",
     "thread (0, 0, 0) of block (7, 0, 0) reads out of bounds on line 8"),
    ("reverse_blocks", "reverse_blocks_sync_in_if", 8, "__syncthreads();",
     "__syncthreads() on line 8 is reached by 128 of the 256 threads of block (0, 0, 0): a barrier inside an if"),
    ("reverse_blocks", "reverse_blocks_off_by_one", 8, "tile[blockDim.x - t]",
     "thread (0, 0, 0) of block (0, 0, 0) reads shared memory out of bounds on line 8"),
    ("scale", "scale_transposed_store", 5, "B[col * N + row]",
     "wrong value at element [1][0] of B: expected 2.5284, got -0.933421, stored by line 5 "
     "(`B[col * N + row] = 3.0f * A[row * N + col];`) (4,032 of its 4,096 elements are wrong)"),
    ("scale", "scale_row_from_x_size", 5, "A[row * N + col]",
     "thread (0, 0, 0) of block (0, 2, 0) reads out of bounds on line 5"),
    ("transpose", "transpose_pad_two", 13, "tile[threadIdx.x][threadIdx.y + j]",
     "2-way bank conflict on line 13 (`B[(y + j) * N + x] = tile[threadIdx.x][threadIdx.y + j];`)"),
    ("transpose", "transpose_no_sync", 12, "tile[threadIdx.x][threadIdx.y + j]",
     "a race between warps 0 and 1 on line 12: warp 0 reads shared tile[1][0], which warp 1 writes on line 7, "
     "with no __syncthreads() between (3,968 hazards in all)"),
    ("pair_sum", "pair_sum_float2_index_doubled", 4, "(a)[2 * i]",
     "thread (0, 0, 0) of block (4, 0, 0) reads out of bounds on line 4"),
    ("pair_sum", "pair_sum_left_twice", 5, "pair.x + pair.x",
     "wrong value at element 0 of out: expected 1.21776, got 1.45538, stored by line 5 (`out[i] = pair.x + pair.x;`) "
     "(2,047 of its 2,048 elements are wrong)"),
    ("block_sum", "block_sum_no_sync_in_loop", 9, "sdata[tid] += sdata[tid + s];",
     "a race between warps 0 and 2 on line 9: warp 0 reads shared sdata[64], which warp 2 writes on line 9, "
     "with no __syncthreads() between (2,032 hazards in all)"),
    ("block_sum", "block_sum_less_or_equal", 9, "sdata[tid + s]",
     "thread (128, 0, 0) of block (0, 0, 0) reads shared memory out of bounds on line 9"),
    ("warp_scan", "warp_scan_unguarded", 8, "out[i] = v;",
     "wrong value at element 1 of out: expected 6.0, got 96.0, stored by line 8 (`out[i] = v;`) "
     "(1,954 of its 2,048 elements are wrong)"),
    ("warp_scan", "warp_scan_one_step_short", 12, "out[i] = v;",
     "wrong value at element 17 of out: expected 74.0, got 68.0, stored by line 12 (`out[i] = v;`) "
     "(1,018 of its 2,048 elements are wrong)"),
    ("warp_max", "warp_max_first_step_eight", 8, "out[i] = v;",
     "wrong value at element 16 of out: expected 0.964468, got 0.713403, stored by line 8 (`out[i] = v;`) "
     "(1,024 of its 2,048 elements are wrong)"),
    ("warp_max", "warp_max_one_step_short", 8, "out[i] = v;",
     "wrong value at element 1 of out: expected 0.964468, got 0.818317, stored by line 8 (`out[i] = v;`) "
     "(1,024 of its 2,048 elements are wrong)"),
    ("compact", "compact_with_atomics", 7, "atomicAdd(&count[w], 1)",
     "atomics: 64 where at most 0 are allowed; 64 of them on line 7 (`int slot = atomicAdd(&count[w], 1);`), "
     "which the solution does without"),
    ("compact", "compact_counts_own_lane", 11, "out[32 * w + before] = v;",
     "wrong value at element 1 of out: expected 7, got 9, stored by line 11 (`out[32 * w + before] = v;`) "
     "(954 of its 2,048 elements are wrong)"),
    ("histogram", "histogram_no_second_sync", 11, "local[t]",
     "a race between warps 0 and 1 on line 11: warp 0 reads shared local[0], which warp 1 updates with an atomic "
     "on line 9, with no __syncthreads() between (505 hazards in all)"),
    ("histogram", "histogram_less_or_equal", 6, "local[t] = 0;",
     "thread (32, 0, 0) of block (0, 0, 0) writes shared memory out of bounds on line 6"),
    ("tail_sum", "tail_sum_syncwarp_once", 16, "sdata[tid] += sdata[tid + s];",
     "a race inside warp 0 on line 16: lane 0 reads shared sdata[8], which lane 8 writes on line 16; its lanes "
     "are not in lockstep, so it needs __syncwarp() between (240 hazards in all)"),
    ("tail_sum", "tail_sum_no_sync_in_first_loop", 10, "sdata[tid] += sdata[tid + s];",
     "a race between warps 0 and 2 on line 10: warp 0 reads shared sdata[64], which warp 2 writes on line 10, "
     "with no __syncthreads() between (1,792 hazards in all)"),
    ("tickets", "tickets_add_then_wrap", 5, "atomicAdd(&counter[0], 1)",
     "wrong value at element 0 of counter: expected 32, got 132, stored by line 5 "
     "(`int old = atomicAdd(&counter[0], 1);`) (1 of its 1 elements are wrong)"),
    ("tickets", "tickets_cas_once", 6, "atomicCAS(",
     "wrong value at element 0 of counter: expected 32, got 1, stored by line 6 "
     "(`atomicCAS(&counter[0], old, (old + 1) % K);`) (1 of its 1 elements are wrong)"),
    ("warp_of", "warp_of_lane_from_x", 6, "threadIdx.x % 32",
     "wrong value at element 16 of lane: expected 16, got 0, stored by line 6 (`lane[g] = threadIdx.x % 32;`) "
     "(128 of its 256 elements are wrong)"),
    ("warp_of", "warp_of_one_past", 5, "warp[g]",
     "thread (15, 7, 0) of block (1, 0, 0) writes out of bounds on line 5"),
    ("even_odd", "even_odd_pairs_not_halved", 6, "float v = a[i];",
     "thread (0, 0, 0) of block (8, 0, 0) reads out of bounds on line 6"),
    ("even_odd", "even_odd_branch_on_warp_only", 6, "out[i] = 2.0f * v;",
     "wrong value at element 1 of out: expected 99.1552, got -1.68953, stored by line 6 (`out[i] = 2.0f * v;`) "
     "(2,048 of its 4,096 elements are wrong)"),
    ("signed", "signed_stored_in_order", 7, "y[i]",
     "wrong value at element 2 of y: expected -1.78379, got 0.955131, stored by line 7 (`y[i] = sqrtf(fabsf(v));`) "
     "(4,092 of its 4,096 elements are wrong)"),
    ("signed", "signed_next_in_order", 4, "order[i + 1]",
     "thread (255, 0, 0) of block (15, 0, 0) reads out of bounds on line 4"),
    ("copy4", "copy4_float4_index_times_four", 4, "(a)[4 * i]",
     "thread (0, 0, 0) of block (2, 0, 0) reads out of bounds on line 4"),
    ("copy4", "copy4_two_float2", 6, "reinterpret_cast<float2 *>(out)",
     "warp instructions: 256 where at most 128 are allowed; 128 of them on line 6 "
     "(`reinterpret_cast<float2 *>(out)[2 * i + k] = v;`), which the solution does without"),
]


def wrong_kernel(puzzle: str, name: str):
    module = PUZZLES[puzzle].c_file().rsplit("/", 1)[-1]
    return RawModule(path=str(WRONG_DIR / module)).get_function(name)


def kernel_line(path, name: str, n: int) -> str:
    """Line ``n`` of kernel ``name`` in ``path``, counted from its ``__global__`` line (1)."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    first = next(k for k, ln in enumerate(lines) if re.match(rf"__global__ void {name}\(", ln))
    return lines[first + n - 1]


@pytest.mark.parametrize("name", list(PUZZLES))
def test_the_c_solution_passes_and_the_c_skeleton_fails(name):
    puzzle = PUZZLES[name]
    solution, skeleton = puzzle.c_kernel("solution"), puzzle.c_kernel("skeleton")
    # the Python puzzle's arguments and launch, in C
    assert [n for n, _t in solution.params] == [n for n, _t in skeleton.params] == puzzle.argument_names()
    verdict = puzzle.check(solution)
    assert verdict.passed, verdict.message.en
    # what was measured is what the Python solution measures (counters, values checked)
    assert verdict.message.en == puzzle.check(puzzle.solution).message.en
    assert verdict.card is not None and "your kernel" in verdict.card.render("en")
    assert "你的内核" in verdict.card.render("zh")
    assert not puzzle.check(skeleton).passed
    # a notebook shows the skeletons' file: no answer in it
    assert not re.search(r"_solution\(", (ROOT / puzzle.c_file("skeleton")).read_text(encoding="utf-8"))


@pytest.mark.parametrize("puzzle, kernel, line, holds, en", WRONG, ids=[w[1] for w in WRONG])
def test_a_wrong_c_answer_fails_naming_its_c_line(puzzle, kernel, line, holds, en):
    path = WRONG_DIR / PUZZLES[puzzle].c_file().rsplit("/", 1)[-1]
    assert holds in kernel_line(path, kernel, line), "the line the verdict is about"
    verdict = PUZZLES[puzzle].check(wrong_kernel(puzzle, kernel))
    assert not verdict.passed
    assert verdict.message.en == en
    with language("zh", strict=True):
        zh = str(verdict).split("\n")[0]
    assert zh.startswith("✗ ") and f"第 {line} 行" in zh, zh
    for quoted in re.findall(r"`[^`]+`", en):  # the C line it quotes, quoted in Chinese too
        assert quoted in zh, zh


def test_every_puzzle_has_two_wrong_c_answers_and_every_wrong_kernel_is_tested():
    per_puzzle = {name: sum(w[0] == name for w in WRONG) for name in PUZZLES}
    assert min(per_puzzle.values()) >= 2, per_puzzle
    kernels = {n for cu in WRONG_DIR.glob("*.cu") for n in re.findall(r"__global__ void (\w+)", cu.read_text())}
    assert kernels == {w[1] for w in WRONG}


def test_chinese_verdicts_in_full():
    cases = {
        ("guard", "guard_less_or_equal"): "✗ 线程块 (3, 0, 0) 的线程 (232, 0, 0) 在第 5 行越界读取",
        ("reverse_blocks", "reverse_blocks_sync_in_if"):
            "✗ 第 8 行的 __syncthreads() 只有线程块 (0, 0, 0) 的 256 个线程中的 128 个到达：屏障放在了 if 里",
        ("transpose", "transpose_no_sync"):
            "✗ 第 12 行有 warp 0 与 warp 1 之间的竞争：warp 0 读共享内存 tile[1][0]，而 warp 1 在第 7 行写它，"
            "中间没有 __syncthreads()（共 3,968 处冲突）",
        ("grid_stride", "grid_stride_chunks"): "✗ 合并效率只有 12%，要求 ≥ 90%，问题在第 7 行（`float v = a[i];`）",
    }
    for (puzzle, kernel), zh in cases.items():
        assert PUZZLES[puzzle].check(wrong_kernel(puzzle, kernel)).text("zh") == zh


def test_the_sanitizer_report_counts_c_lines_from_the_global_line():
    verdict = PUZZLES["guard"].check(PUZZLES["guard"].c_kernel("skeleton"))
    assert verdict.message.en == "thread (232, 0, 0) of block (3, 0, 0) reads out of bounds on line 4"
    assert verdict.detail.splitlines()[:3] == [
        "Invalid __global__ read of size 4 bytes",
        "    at add (line 4: out[i] = a[i] + b[i];)",
        "    by thread (232,0,0) in block (3,0,0)",
    ]


def test_a_c_kernel_from_a_string_counts_from_its_global_line_too():
    # What a notebook reader does: RawKernel(code, name), a template line before __global__.
    from simtdocs.cuda import RawKernel

    code = ("// doubled\n\ntemplate <int K>\n__global__ void twice(const float *a, float *out)\n{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    out[i] = K * a[i + 1];\n}\n")
    kernel = RawModule(code=code, name_expressions=["twice<2>"]).get_function("twice<2>")
    assert PUZZLES["double"].check(kernel).message.en == (
        "thread (255, 0, 0) of block (3, 0, 0) reads out of bounds on line 4")
    plain = RawKernel(code.replace("template <int K>\n", "").replace("K *", "2.0f *"), "twice")
    assert PUZZLES["double"].check(plain).message.en == (
        "thread (255, 0, 0) of block (3, 0, 0) reads out of bounds on line 4")


def test_c_source_gives_the_solution_under_the_skeletons_name():
    puzzle = PUZZLES["double"]
    assert puzzle.c_name() == "double_vector"  # `double` is a C keyword
    skeleton, solution = puzzle.c_source("skeleton"), puzzle.c_source("solution")
    assert skeleton.startswith("__global__ void double_vector(const float *a, float *out)\n")
    assert solution.startswith("__global__ void double_vector(const float *a, float *out)\n")
    assert "out[i] = 2.0f * a[i];" in solution and "TODO" in skeleton
    assert PUZZLES["double"].check(RawModule(code=solution).get_function("double_vector")).passed
    with pytest.raises(ValueError, match="'skeleton' or 'solution'"):
        puzzle.c_kernel("answer")


PAGES = {"p2": ("docs/p2/puzzles.md", "docs/p2/puzzles.en.md"),
         "exec_model": ("docs/exec-model-puzzles.md", "docs/exec-model-puzzles.en.md")}


@pytest.mark.parametrize("lecture", list(PAGES))
def test_each_puzzle_page_offers_the_c_skeleton_and_solution_in_a_tab_beside_the_python(lecture):
    from simtdocs.puzzles import of_lecture

    for page in PAGES[lecture]:
        text = (ROOT / page).read_text(encoding="utf-8")
        for puzzle in of_lecture(lecture):
            for which, section in (("skeleton", puzzle.name), ("solution", puzzle.name + "_solution")):
                include = f'--8<-- "{puzzle.c_file(which)}:{section}"'
                at = text.index(include)  # the C fence, in the tab after the Python one
                before = text[:at]
                assert before.rindex('=== "CUDA C"') > before.rindex('=== "Python"') > before.rindex("### "), (
                    page, section)
