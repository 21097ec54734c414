"""Every puzzle, tried as new readers would: at least three correct kernels in styles other than
the solution's pass (other indexing, extra guards, shuffles instead of shared memory, broadcast
reads, no ``blk.branch`` where the warps do not diverge), and at least three plausible wrong
ones fail with the message that names the fault (the line, where the fault has one)."""

import sys
from pathlib import Path

import pytest

from simtdocs.puzzles import PUZZLES

sys.path.insert(0, str(Path(__file__).parent))
import kernels_p2  # noqa: E402
import kernels_warp  # noqa: E402

from tests import test_puzzles  # noqa: E402

CORRECT = {**kernels_p2.CORRECT, **kernels_warp.CORRECT}
WRONG = [(name, k) for mod in (kernels_p2, kernels_warp) for name, ks in mod.WRONG.items() for k in ks]
WRONG += [(p.name, k) for p in PUZZLES.values() for k in p.wrong]

MESSAGES = {
    "double_index_only": 'wrong value at element 0 of out: expected -0.152099, got 0.0, stored by line 3 '
                         '(`blk.store(out, i, 2.0 * i)`) (1,024 of its 1,024 elements are wrong)',
    "double_off_by_one": 'wrong value at element 0 of out: expected -0.152099, got 1.13013, stored by line 4 '
                         '(`blk.store(out, i, 2 * blk.load(a, i + 1, mask=m), mask=m)`) (1,024 of its 1,024 '
                         'elements are wrong)',
    "add_store_unguarded": 'thread (232, 0, 0) of block (3, 0, 0) writes out of bounds on line 5',
    "add_index_only": 'wrong value at element 0 of out: expected -0.83365, got -0.457609, stored by line 4 '
                      '(`blk.store(out, i, i + blk.load(b, i, mask=m), mask=m)`) (1,000 of its 1,000 elements '
                      'are wrong)',
    "bias_by_row": 'wrong value at element [0][1] of out: expected 1.22912, got 1.20859, stored by line 5 '
                   '(`blk.store(out, (row, col), blk.load(a, (row, col), mask=m) + blk.load(bias, row, '
                   'mask=m), mask=m)`) (3,450 of its 3,500 elements are wrong)',
    "bias_unguarded": 'thread (6, 0, 0) of block (4, 0, 0) reads out of bounds on line 4',
    "square_one_pass": 'wrong value at element 1024 of out: expected 0.799584, got 0.0 (8,897 of its 10,000 '
                       'elements are wrong)',
    "square_last_left_out": 'wrong value at element 9999 of out: expected 0.438634, got 0.0 (1 of its 10,000 elements'
                            ' are wrong)',
    "warp_sum_every_lane_stores": 'wrong value at element 0 of out: expected 139.0, got 192.0, stored by line 6 '
                                  '(`blk.store(out, i // 32, v)`) (128 of its 128 elements are wrong)',
    "reverse_syncwarp": 'a race between warps 0 and 7 on line 7: warp 0 reads shared tile[255], which warp 7 '
                        'writes on line 5, with no __syncthreads() between (1,024 hazards in all)',
    "scale_index_only": 'wrong value at element [0][0] of B: expected -2.1021, got 0.0, stored by line 4 '
                        '(`blk.store(B, (row, col), 3.0 * (row * N + col))`) (4,096 of its 4,096 elements are '
                        'wrong)',
    "scale_transposed_store": 'wrong value at element [1][0] of B: expected 2.5284, got -0.933421, stored by line 4 '
                              '(`blk.store(B, (col, row), 3 * blk.load(A, (row, col)))`) (4,032 of its 4,096 elements '
                              'are wrong)',
    "transpose_no_sync": 'a race between warps 0 and 1 on line 10: warp 0 reads shared tile[1][0], which warp 1 '
                         'writes on line 6, with no __syncthreads() between (3,968 hazards in all)',
    "pair_index_only": 'wrong value at element 0 of out: expected 1.21776, got 1.0, stored by line 4 '
                       '(`blk.store(out, i, 0 * pair[..., 0] + 4.0 * i + 1)`) (2,048 of its 2,048 elements are '
                       'wrong)',
    "pair_off_by_one": 'thread (255, 0, 0) of block (7, 0, 0) reads out of bounds on line 3',
    "block_sum_everyone_reads_the_total": 'shared wavefronts: 832 where at most 720 are allowed; 128 of them on line 13 (`total = '
                                          'blk.load(sdata, 0 * tid)`), where the solution needs 16',
    "warp_of_lane_is_tx": 'wrong value at element 16 of lane: expected 16, got 0, stored by line 5 '
                          '(`blk.store(lane, g, blk.tx)`) (128 of its 256 elements are wrong)',
    "warp_of_grid_warp": 'wrong value at element 128 of warp: expected 0, got 4 (128 of its 256 elements are '
                         'wrong)',
    "even_odd_annotation_removed": 'warps diverge on line 5 (`blk.alu(4, mask=even)`): its warp instructions run 16 of their'
                                   ' 32 lanes on average; SIMT efficiency 60% where 100% is asked',
    "even_odd_index_only": 'wrong value at element 0 of out: expected 0.227832, got 0.0, stored by line 7 '
                           '(`blk.store(out, i, np.where(even, 2.0 * i, i + 100.0))`) (4,096 of its 4,096 elements '
                           'are wrong)',
    "signed_annotation_removed": 'warps diverge on line 5 (`blk.alu(4, mask=pos)`): its warp instructions run 16 of their '
                                 '32 lanes on average; SIMT efficiency 60% where 100% is asked',
    "signed_reads_unsorted": 'wrong value at element 3 of y: expected 0.955131, got -1.78379, stored by line 8 '
                             '(`blk.store(y, j, np.where(pos, np.sqrt(np.abs(v)), -v * v))`) (4,092 of its 4,096 '
                             'elements are wrong)',
    "copy4_index_only": 'wrong value at element 0 of out: expected 0.186359, got 0.0, stored by line 3 '
                        '(`blk.store(out, i, np.stack([i + k for k in range(4)], axis=-1).astype(np.float32), '
                        'width=4)`) (8,192 of its 8,192 elements are wrong)',
    "scan_down": 'wrong value at element 0 of out: expected 0.0, got 156.0, stored by line 7 '
                 '(`blk.store(out, i, v)`) (2,044 of its 2,048 elements are wrong)',
    "scan_four_steps": 'wrong value at element 17 of out: expected 74.0, got 68.0, stored by line 7 '
                       '(`blk.store(out, i, v)`) (1,018 of its 2,048 elements are wrong)',
    "scan_shared": 'shared requests: 640 where at most 0 are allowed; 320 of them on line 6 (`blk.store(s, '
                   'blk.tx, v)`), which the solution does without',
    "max_xor_four_steps": 'wrong value at element 1 of out: expected 0.964468, got 0.818317, stored by line 6 '
                          '(`blk.store(out, i, v)`) (1,024 of its 2,048 elements are wrong)',
    "max_shared": 'shared requests: 2,112 where at most 0 are allowed; 1,984 of them on line 8 (`best = '
                  'np.maximum(best, blk.load(s, blk.warp * 32 + k))`), which the solution does without',
    "compact_counts_itself": 'wrong value at element 1 of out: expected 7, got 9, stored by line 8 (`blk.store(out, 32'
                             ' * w + before, v, mask=keep)`) (954 of its 2,048 elements are wrong)',
    "compact_own_vote": 'wrong value at element 0 of count: expected 18, got 0, stored by line 8 '
                        '(`blk.store(count, w, keep.astype(np.int32), mask=blk.lane == 0)`) (64 of its 64 '
                        'elements are wrong)',
    "histogram_flush_by_store": 'wrong value at element 0 of hist: expected 2108, got 131, stored by line 10 '
                                '(`blk.store(hist, t, blk.load(local, t, mask=first), mask=first)`) (32 of its 32 '
                                'elements are wrong)',
    "histogram_not_zeroed": 'thread (0, 0, 0) of block (0, 0, 0) updates shared local[20] with an atomic on line 5, '
                            'but no thread of its block gave it a first value',
    "tail_syncwarp_before_store": 'a race inside warp 0 on line 14: lane 0 reads shared sdata[8], which lane 8 writes on '
                                  'line 16; its lanes are not in lockstep, so it needs __syncwarp() between (240 hazards in '
                                  'all)',
    "tail_sync_inside_if": '__syncthreads() on line 15 is reached by 32 of the 256 threads of block (0, 0, 0): a '
                           'barrier inside an if',
    "tickets_one_try": 'wrong value at element 0 of counter: expected 32, got 1, stored by line 6 (`seen = '
                       'blk.atomic_cas(counter, zero, old, (old + 1) % K, mask=want)`) (1 of its 1 elements are '
                       'wrong)',
    "tickets_no_wrap": 'wrong value at element 0 of counter: expected 32, got 132, stored by line 9 (`seen = '
                       'blk.atomic_cas(counter, zero, old, old + 1, mask=waiting)`) (1 of its 1 elements are '
                       'wrong)',
    "warp_scan_unguarded": 'wrong value at element 1 of out: expected 6.0, got 96.0, stored by line 6 '
                           '(`blk.store(out, i, v)`) (1,954 of its 2,048 elements are wrong)',
    "warp_max_broadcast_late": 'wrong value at element 32 of out: expected 0.939043, got 0.888478 (992 of its 2,048 '
                               'elements are wrong)',
    "compact_with_atomics": 'atomics: 64 where at most 0 are allowed; 64 of them on line 6 (`slot = '
                            'blk.atomic_add(count, w, 1 + 0 * i, mask=keep)`), which the solution does without',
    "histogram_plain_increment": 'wrong value at element 0 of hist: expected 2108, got 16, stored by line 10 '
                                 '(`blk.atomic_add(hist, t, blk.load(local, t, mask=first), mask=first)`) (32 of its 32 '
                                 'elements are wrong)',
    "tail_sum_syncwarp_once": 'a race inside warp 0 on line 14: lane 0 reads shared sdata[8], which lane 8 writes on '
                              'line 14; its lanes are not in lockstep, so it needs __syncwarp() between (240 hazards in '
                              'all)',
    "tickets_add_then_wrap": 'wrong value at element 0 of counter: expected 32, got 132, stored by line 4 (`old = '
                             'blk.atomic_add(counter, 0 * i, 1 + 0 * i, mask=want)`) (1 of its 1 elements are wrong)',

}


@pytest.mark.parametrize("name, kernel", [(n, k) for n, ks in CORRECT.items() for k in ks],
                         ids=[k.__name__ for ks in CORRECT.values() for k in ks])
def test_a_correct_kernel_in_another_style_passes(name, kernel):
    verdict = PUZZLES[name].check(kernel)
    assert verdict.passed, verdict.message.en
    assert verdict.card is not None


@pytest.mark.parametrize("name, kernel", WRONG, ids=[k.__name__ for _n, k in WRONG])
def test_a_plausible_wrong_kernel_fails_naming_the_fault(name, kernel):
    verdict = PUZZLES[name].check(kernel)
    assert not verdict.passed
    assert verdict.message.en == MESSAGES[kernel.__name__]


def test_every_puzzle_has_three_other_correct_styles_and_three_wrong_answers():
    wrong = {name: 0 for name in PUZZLES}
    for name, _kernel in WRONG + [(n, k) for n, k, _m in test_puzzles.WRONG]:
        wrong[name] += 1
    assert {name: len(CORRECT.get(name, ())) for name in PUZZLES if len(CORRECT.get(name, ())) < 3} == {}
    assert {name: n for name, n in wrong.items() if n < 3} == {}
    assert set(MESSAGES) == {k.__name__ for _n, k in WRONG}
