"""What makes the grader hard to fool: random inputs that differ per array and per draw, a
second draw that must agree, and a score card that sets the kernel beside the solution."""

import numpy as np

from simtdocs.puzzles import PUZZLES


def test_inputs_are_random_different_per_array_and_per_draw_and_stated():
    for puzzle in PUZZLES.values():
        first, second = (puzzle.inputs(seed) for seed in puzzle.seeds)
        arrays = [k for k, a in enumerate(first.args) if isinstance(a, np.ndarray) and k in first.drawn]
        for k in arrays:
            assert not np.array_equal(first.args[k], second.args[k]), (puzzle.name, k)
            flat = first.args[k].reshape(-1)
            assert not np.array_equal(flat, np.arange(flat.size)), (puzzle.name, k)
        for j in arrays:
            for k in arrays:
                if j < k and first.args[j].shape == first.args[k].shape:
                    assert not np.array_equal(first.args[j], first.args[k]), (puzzle.name, j, k)
        if arrays:
            text = puzzle.launch_text()
            assert "random" in text.en and "随机" in text.pick("zh"), puzzle.name
    assert np.array_equal(PUZZLES["double"].inputs().args[0], PUZZLES["double"].inputs().args[0])  # fixed seeds


def test_a_kernel_that_memorised_the_first_draw_fails_on_the_second():
    answer = PUZZLES["double"].inputs().expected[1]

    def memorised(blk, a, out):
        i = blk.bx * blk.bdx + blk.tx
        blk.load(a, i)
        blk.store(out, i, answer[i])

    verdict = PUZZLES["double"].check(memorised)
    assert not verdict.passed
    assert verdict.message.en.startswith("on a second draw of random inputs: wrong value at element 0 of out: ")
    assert verdict.message.pick("zh").startswith("换一组随机输入后：out 的元素 0 值不对：")


def test_the_score_card_sets_the_kernel_beside_the_solution_in_both_languages():
    verdict = PUZZLES["pair_sum"].check(PUZZLES["pair_sum"].skeleton)
    assert verdict.card.text("en").splitlines() == [
        "score card                your kernel  the solution",
        "global reads per thread             2             1",
        "global writes per thread            1             1",
        "shared reads per thread             0             0",
        "shared writes per thread            0             0",
        "sectors                         1,280           768",
        "divergent branches                  0             0",
        "SIMT efficiency                  100%          100%",
        "barriers                            0             0",
        "warp instructions                 192           128",
    ]
    zh = verdict.render("zh")
    assert "| 计分卡 | 你的内核 | 参考解法 |" in zh
    assert "| 每线程全局读 | 2 | 1 |" in zh and "| sector 数 | 1,280 | 768 |" in zh
    assert "<summary>计分卡：你的内核与参考解法</summary>" in zh
    # a kernel the sanitizer stopped has no counters to show
    assert PUZZLES["guard"].check(PUZZLES["guard"].skeleton).card is None


def test_divergence_is_read_from_the_lanes_the_warps_ran_not_from_blk_branch():
    def masked_without_branch(blk, a, out):
        i = blk.bx * blk.bdx + blk.tx
        v = blk.load(a, i)
        even = i % 2 == 0
        blk.alu(4, mask=even)
        blk.alu(4, mask=~even)
        blk.store(out, i, np.where(even, 2 * v, v + 100))

    verdict = PUZZLES["even_odd"].check(masked_without_branch)
    assert verdict.message.en == ("warps diverge on line 5 (`blk.alu(4, mask=even)`): its warp instructions run 16 "
                                  "of their 32 lanes on average; SIMT efficiency 60% where 100% is asked")
    assert verdict.message.pick("zh") == ("第 5 行（`blk.alu(4, mask=even)`）上 warp 发散：这一行的 warp 指令平均只有 32 个 lane "
                                          "中的 16 个在执行；SIMT 效率 60%，要求 100%")


def test_a_race_inside_a_warp_reaches_the_verdict_in_both_languages():
    verdict = PUZZLES["tail_sum"].check(PUZZLES["tail_sum"].skeleton)
    assert verdict.message.en == (
        "a race inside warp 0 on line 14: lane 0 reads shared sdata[8], which lane 8 writes on line 14; its lanes "
        "are not in lockstep, so it needs __syncwarp() between (240 hazards in all)")
    assert verdict.message.pick("zh") == (
        "第 14 行有 warp 0 内部的竞争：lane 0 读取共享内存 sdata[8]，而 lane 8 在第 14 行写它；同一 warp 的各 lane "
        "并不同步执行，中间需要 __syncwarp()（共 240 处冲突）")
    assert PUZZLES["tail_sum"].check(PUZZLES["tail_sum"].solution).passed


# -- the histogram's second barrier (issue 38): shared atomics take part in racecheck ------------


def histogram_without_second_sync(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    first = t < hist.size
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.atomic_add(local, b, 1 + 0 * t)
    blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)


def histogram_second_sync_skipped_in_the_last_block(blk, x, hist):
    local = blk.shared(hist.size, np.int32, name="local")
    t = blk.tx
    first = t < hist.size
    blk.store(local, t, 0 * t, mask=first)
    blk.sync()
    b = blk.load(x, blk.bx * blk.bdx + t)
    blk.atomic_add(local, b, 1 + 0 * t)
    blk.sync(mask=np.broadcast_to(blk.bx != blk.gdx - 1, (blk.nblocks, blk.nthreads)))
    blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)


def _histogram_hazards(blocks):
    """From the puzzle's input alone: per block, the read-out threads t (< bins) whose bin
    another thread of the block updated (racecheck's racing reads), and the lowest warp
    other than 0 that updated bin 0."""
    from simtdocs.puzzles.warp_level import BINS, HIST_BLOCK

    x = PUZZLES["histogram"].inputs().args[0].reshape(-1, HIST_BLOCK)
    threads = np.arange(HIST_BLOCK)
    racing = [sum(bool(((row == t) & (threads != t)).any()) for t in range(BINS)) for row in x[blocks]]
    other = int(min(threads[(x[blocks[0]] == 0) & (threads >= 32)]) // 32)
    return sum(racing), other


def test_the_histogram_without_its_second_barrier_fails_naming_the_read_out_line():
    # The simulator's serial order gives the right counts; racecheck finds the read-out
    # (line 9) racing the shared atomics (line 8) of every block, as the tool would not.
    from simtdocs.puzzles.warp_level import HIST_BLOCKS

    count, other = _histogram_hazards(list(range(HIST_BLOCKS)))
    verdict = PUZZLES["histogram"].check(histogram_without_second_sync)
    assert not verdict.passed
    assert verdict.message.en == (
        f"a race between warps 0 and {other} on line 9: warp 0 reads shared local[0], which warp {other} updates "
        f"with an atomic on line 8, with no __syncthreads() between ({count:,} hazards in all)")
    assert verdict.message.pick("zh") == (
        f"第 9 行有 warp 0 与 warp {other} 之间的竞争：warp 0 读共享内存 local[0]，而 warp {other} 在第 8 行用原子"
        f"操作更新它，中间没有 __syncthreads()（共 {count:,} 处冲突）")
    assert count > 16 * 30  # (skewed bins: nearly every bin of every block has another thread's update)


def test_the_histogram_with_its_second_barrier_skipped_in_the_last_block_fails_there():
    from simtdocs.puzzles.warp_level import HIST_BLOCKS

    last = HIST_BLOCKS - 1
    count, other = _histogram_hazards([last])
    verdict = PUZZLES["histogram"].check(histogram_second_sync_skipped_in_the_last_block)
    assert not verdict.passed
    assert verdict.message.en == (
        f"a race between warps 0 and {other} on line 10: warp 0 reads shared local[0], which warp {other} updates "
        f"with an atomic on line 8, with no __syncthreads() between ({count:,} hazards in all)")
