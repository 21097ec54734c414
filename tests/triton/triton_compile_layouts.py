"""Run as a script (no interpreter in the process): compile the tutorial-style kernels with
Triton for sm_90 (no GPU needed) and print, as JSON, per case, the first tt.load's
``sizePerThread`` along the contiguous axis and the first ld.global's vector width.

A case is (kernel name, signature, constexprs, arguments divisible by 16, num_warps); the
list is CASES, shared with test_vs_compiler.py."""

import json
import os
import re
import sys

F32, F16, I32 = "*fp32", "*fp16", "i32"
VEC = {"a_ptr": F32, "b_ptr": F32, "out_ptr": F32, "n": I32, "BLOCK": "constexpr"}
SOFTMAX = {"out_ptr": F32, "in_ptr": F32, "in_stride": I32, "out_stride": I32, "n_rows": I32, "n_cols": I32,
           "BLOCK": "constexpr"}
LN = {"X": F16, "Y": F16, "W": F16, "B": F16, "Mean": F32, "Rstd": F32, "stride": I32, "N": I32, "eps": "fp32",
      "BLOCK": "constexpr"}
MM = {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16, **{k: I32 for k in ("M", "N", "K", "s_am", "s_bk", "s_cm")},
      **{k: "constexpr" for k in ("s_ak", "s_bn", "s_cn")},
      "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP": "constexpr", "ACT": "constexpr"}

TILE = {"x_ptr": F32, "y_ptr": F32, "M": I32, "N": I32, "sxm": "constexpr", "sxn": I32, "sym": I32,
        "syn": "constexpr", "scale": "fp32", "BM": "constexpr", "BN": "constexpr"}

#: kernels whose shfl.sync.bfly and bar.sync instructions are counted in their PTX (no loops)
REDUCTIONS = {
    "block_sum_128": ("block_sum", {"x_ptr": F32, "out_ptr": F32, "n": I32, "BLOCK": "constexpr"}, {"BLOCK": 128},
                      ["x_ptr", "out_ptr", "n"], 4),
    "tile_reduce_4x64": ("tile_reduce", {"x_ptr": F32, "s_ptr": F32, "m_ptr": F32, "a_ptr": "*i32", "R": "constexpr",
                                         "C": "constexpr"}, {"R": 4, "C": 64}, ["x_ptr", "s_ptr", "m_ptr", "a_ptr"], 4),
}

CASES = {
    "vec_add_256_div": ("vec_add", VEC, {"BLOCK": 256}, ["a_ptr", "b_ptr", "out_ptr", "n"], 4),
    "vec_add_256_plain": ("vec_add", VEC, {"BLOCK": 256}, ["a_ptr", "b_ptr", "out_ptr"], 4),
    "vec_add_1024_div": ("vec_add", VEC, {"BLOCK": 1024}, ["a_ptr", "b_ptr", "out_ptr", "n"], 4),
    "vec_add_1024_plain": ("vec_add", VEC, {"BLOCK": 1024}, ["a_ptr", "b_ptr", "out_ptr"], 4),
    "softmax_781": ("row_softmax", SOFTMAX, {"BLOCK": 1024}, ["out_ptr", "in_ptr", "n_rows"], 8),
    "softmax_1024": ("row_softmax", SOFTMAX, {"BLOCK": 1024},
                     ["out_ptr", "in_ptr", "in_stride", "out_stride", "n_rows", "n_cols"], 8),
    "layer_norm_2048": ("layer_norm_fwd", LN, {"BLOCK": 2048}, ["X", "Y", "W", "B", "Mean", "Rstd", "stride", "N"], 8),
    # strides equal to 1 are specialised as the constant 1, as Triton's JIT does
    "matmul_32": ("matmul", MM, {"BM": 32, "BN": 32, "BK": 16, "GROUP": 4, "ACT": "", "s_ak": 1, "s_bn": 1, "s_cn": 1},
                  ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "s_am", "s_bk", "s_cm"], 4),
    # K (and so A's row stride) not divisible by 16: Triton cannot prove A's rows aligned
    "matmul_32_k_plain": ("matmul", MM, {"BM": 32, "BN": 32, "BK": 16, "GROUP": 4, "ACT": "", "s_ak": 1, "s_bn": 1,
                                         "s_cn": 1}, ["a_ptr", "b_ptr", "c_ptr", "M", "N", "s_cm"], 4),
    # x a transposed view: its unit stride is down the columns (sxm = 1); M divisible by 16 or not
    "scaled_tile_T_div": ("scaled_tile", TILE, {"sxm": 1, "syn": 1, "BM": 32, "BN": 32},
                          ["x_ptr", "y_ptr", "M", "N", "sxn", "sym"], 4),
    "scaled_tile_T_plain": ("scaled_tile", TILE, {"sxm": 1, "syn": 1, "BM": 32, "BN": 32},
                            ["x_ptr", "y_ptr", "N", "sym"], 4),
}


def first_load(ttgir, ptx):
    """(sizePerThread along the layout's contiguous axis, ``order[0]``, bytes per thread per
    instruction) of the first global load: a ``tt.load`` (``ld.global[.vN].bB``) or, in a
    pipelined loop, an ``async_copy_global_to_local`` (``cp.async … , N`` bytes)."""
    layouts = {name: (spt, order) for name, spt, order in re.findall(
        r"^(#\w+) = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\].*?order = \[([\d, ]+)\]", ttgir, re.M)}
    line = next(ln for ln in ttgir.splitlines() if "tt.load" in ln or "async_copy_global_to_local" in ln)
    enc = re.search(r", (#blocked\d*)>", line).group(1)
    spt_s, order_s = layouts[enc]
    spt = [int(x) for x in spt_s.split(",")]
    spt = [spt[int(order_s.split(",")[0])]]  # along order[0]
    ld = re.search(r"ld\.global(?:\.[a-z]\w*)*?(?:\.v(\d))?\.b(\d+)", ptx)
    cp = re.search(r"cp\.async\.\w+\.shared\.global(?:\.\w+)* \[[^\]]+\], \[[^\]]+\], (0x\w+|\d+)", ptx)
    if "async_copy" in line and cp:
        return spt[-1], int(cp.group(1), 0)
    return spt[-1], int(ld.group(1) or 1) * int(ld.group(2)) // 8


def main():
    os.environ.pop("TRITON_INTERPRET", None)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import triton_oracle as O
    # the same file, with Triton's imports (twin_module turns the interpreter on: undo it)
    triton.knobs.runtime.interpret = False
    os.environ.pop("TRITON_INTERPRET", None)
    text = open(os.path.join(here, "triton_style_kernels.py")).read()
    text = text.replace("from simtdocs import triton\n", "import triton\n")
    text = text.replace("from simtdocs.triton import language as tl\n", "import triton.language as tl\n")
    ns = {"__name__": "triton_style_kernels_compiled", "__file__": os.path.join(here, "triton_style_kernels.py")}
    import types
    mod = types.ModuleType(ns["__name__"])
    mod.__dict__.update(ns)
    sys.modules[mod.__name__] = mod
    exec(compile(text, mod.__file__, "exec"), mod.__dict__)
    del O
    out = {}
    for key, (name, sig, consts, div, nw) in {**CASES, **REDUCTIONS}.items():
        fn = getattr(mod, name)
        fn = fn.fn if hasattr(fn, "configs") else fn  # autotuned: the JIT function inside
        attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in div}
        k = triton.compile(ASTSource(fn, signature=sig, constexprs=consts, attrs=attrs),
                           target=GPUTarget("cuda", 90, 32), options={"num_warps": nw, "num_stages": 1})  # no pipelining, as modelled
        if key in REDUCTIONS:
            ptx = k.asm["ptx"]
            out[key] = (len(re.findall(r"shfl\.sync\.bfly", ptx)), len(re.findall(r"bar\.sync", ptx)))
        else:
            out[key] = first_load(k.asm["ttgir"], k.asm["ptx"])
    # the MMA instructions of one k-step of the 32x32x16 matmul tile on sm_80 (the loop body
    # holds one k-step: its mma.sync count is per warp and per step)
    name, sig, consts, div, nw = CASES["matmul_32"]
    fn = getattr(mod, name)
    fn = fn.fn if hasattr(fn, "configs") else fn
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in div}
    k = triton.compile(ASTSource(fn, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 80, 32), options={"num_warps": nw, "num_stages": 1})
    out["matmul_32_sm80_mma"] = (len(re.findall(r"mma\.sync\.aligned\.m16n8k16", k.asm["ptx"])), 0)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
