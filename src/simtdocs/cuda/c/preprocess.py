"""The C preprocessor, by pcpp: ``-D``/``-U``/``-I`` options, ``#define``, ``#if``/``#ifdef``.

The usual CUDA headers (``cuda_runtime.h``, ``cooperative_groups.h``, ``stdio.h`` …) are
known: their names (``threadIdx``, ``__syncthreads`` …) are the front end's built-ins, so
an ``#include`` of one adds nothing. Any other ``#include`` must be found through an
``-I`` option, else it is an error naming the file. The output keeps the ``.cu`` file's
line numbers: pcpp's ``#line`` directives are read back into a map from each row of the output
to its file and line (``preprocess_rows``), so a message about a line of an ``-I`` header names
that header and its own line, and a message about line 12 of the reader's file quotes line 12.
"""

from __future__ import annotations

import io
import linecache
import os
import re

from ..analysis import CompileError

KNOWN_HEADERS = {
    "cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "device_launch_parameters.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "cuda_fp16.h", "stdio.h", "stdlib.h", "string.h", "math.h", "assert.h",
    "stdint.h", "cstdio", "cstdlib", "cmath", "cstring", "cstdint", "iostream", "vector", "algorithm",
    "helper_cuda.h", "helper_functions.h", "device_functions.h", "math_constants.h", "float.h", "limits.h",
    "climits", "cfloat", "time.h", "ctime", "chrono", "cassert", "sm_30_intrinsics.h", "cuda_profiler_api.h",
    # the toolkit's own headers, which samples include with quotes too ("vector_types.h")
    "vector_types.h", "vector_functions.h", "driver_types.h", "builtin_types.h", "host_defines.h",
    "device_types.h", "sm_20_intrinsics.h", "sm_32_intrinsics.h", "sm_60_atomic_functions.h",
}
#: what the device preset defines (H100: compute capability 9.0); nvcc's own version macros are
#: CUDA 13.0's (the toolkit ``nvcc --version`` reports here: release 13.0, V13.0.88), and the host
#: compiler's ``__linux__`` (samples test it in host code, ``#error Unsupported system`` otherwise)
PREDEFINED = {"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": "900", "__CUDACC_VER_MAJOR__": "13",
              "__CUDACC_VER_MINOR__": "0", "__CUDACC_VER_BUILD__": "88", "__linux__": "1", "INT_MAX": "2147483647",
              "INT_MIN": "(-2147483647-1)", "UINT_MAX": "4294967295u", "FLT_MAX": "3.402823466e+38f",
              "CUDART_INF_F": "(1.0f/0.0f)", "NULL": "0"}


#: macros a built-in header defines when it is included: CUDA 13's values (``CUDART_VERSION`` is
#: 13000 in CUDA 13.0's cuda_runtime_api.h, ``CUDA_VERSION`` 13000 in its cuda.h), so that
#: ``#if CUDART_VERSION >= 2020`` keeps the code it guards, as nvcc does
HEADER_DEFINES = {
    "cuda_runtime.h": {"CUDART_VERSION": "13000"}, "cuda_runtime_api.h": {"CUDART_VERSION": "13000"},
    "cuda.h": {"CUDA_VERSION": "13000"},
}

#: ``__align__(n)`` is GCC's aligned attribute, as in CUDA's host_defines.h: a struct's size
#: rounds up to it (``typedef struct __align__(16) { int r, g, b; } RGB32;`` is 16 bytes);
#: ``__launch_bounds__`` changes no meaning here
FUNCTION_MACROS = ("__align__(n) __attribute__((aligned(n)))", "__builtin_align__(n) __attribute__((aligned(n)))",
                   "__launch_bounds__(...) ")


def options_of(options) -> tuple[dict, list, list]:
    """``("-DN=4", "-I", "dir", "--std=c++17")`` -> defines, undefines, include dirs (others ignored)."""
    defines, undef, incs = {}, [], []
    opts = list(options or ())
    k = 0
    while k < len(opts):
        o = str(opts[k])
        if o in ("-D", "-U", "-I", "--define-macro", "--include-path") and k + 1 < len(opts):
            o, k = o[:2] if o.startswith("-") and len(o) == 2 else {"--define-macro": "-D", "--include-path": "-I"}[o], k + 1
            o += str(opts[k])
        if o.startswith("-D"):
            name, _, value = o[2:].partition("=")
            defines[name] = value if _ else "1"
        elif o.startswith("-U"):
            undef.append(o[2:])
        elif o.startswith("-I"):
            incs.append(o[2:])
        k += 1
    return defines, undef, incs


def preprocess(code: str, filename: str, options=()) -> str:
    """The preprocessed text (``preprocess_rows`` also says where each of its rows comes from)."""
    return preprocess_rows(code, filename, options)[0]


def preprocess_rows(code: str, filename: str, options=()) -> tuple[str, list[tuple[str, int]]]:
    """The preprocessed text and, for each of its rows, the ``(file, line)`` it comes from: the
    main file's ``filename``, or the path of an ``-I`` header, with that file's own line number."""
    import pcpp
    from pcpp import Action, OutputDirective

    defines, undef, incs = options_of(options)
    opened: list[str] = []  # the headers found through -I, in the order pcpp opened them

    class P(pcpp.Preprocessor):
        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
            for name, value in HEADER_DEFINES.get(includepath, {}).items():
                if name not in self.macros and name not in undef:
                    self.define(f"{name} {value}")
            if includepath in KNOWN_HEADERS or includepath.startswith("cuda") or includepath.startswith("thrust/") \
                    or is_system_include:  # <...>: the C and C++ libraries and the system's: host code's
                raise OutputDirective(Action.IgnoreAndRemove)
            raise CompileError(f"{filename}: #include {includepath!r}: file not found (the CUDA headers the front end "
                               f"knows are built in; add an -I option for your own)")

        def on_file_open(self, is_system_include, includepath):
            # a header's comments may be in Latin-1 (a name with an accent): read bytes as UTF-8 where they are
            f = open(includepath, encoding="utf-8", errors="replace")
            opened.append(includepath)
            return f

        def on_error(self, file, line, msg):
            raise CompileError(f"{file or filename}:{line}: preprocessor: {msg}")

        def on_unknown_macro_in_defined_expr(self, tok):
            return False

        def on_unknown_macro_in_expr(self, ident):
            return 0

    p = P()
    p.line_directive = "#line"
    for name, value in {**PREDEFINED, **defines}.items():
        if name not in undef:
            p.define(f"{name} {value}")
    for macro in FUNCTION_MACROS:
        p.define(macro)
    for d in incs:
        p.add_path(d)
    p.parse(code, filename)
    out = io.StringIO()
    p.write(out)
    text, rows = _rows(out.getvalue(), filename, opened)
    for path in set(f for f, _ in rows if f != filename):
        if path not in linecache.cache and os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                header = f.read()
            linecache.cache[path] = (len(header), None, header.splitlines(keepends=True), path)
    return _cg_types(text), rows


_LINE = re.compile(r'^#line (\d+)(?: "([^"]*)")?\s*$')


def _rows(text: str, filename: str, opened: list[str]) -> tuple[str, list[tuple[str, int]]]:
    """pcpp's output without its ``#line`` directives, and each row's ``(file, line)``: the
    rows keep pcpp's order (a header's text where it was included), and each row knows its line."""
    out, rows = [], []
    cur, name = 1, filename
    for raw in text.split("\n"):
        m = _LINE.match(raw)
        if m:
            cur, name = int(m.group(1)), _header_path(m.group(2), filename, opened) if m.group(2) else name
            continue
        out.append(raw)
        rows.append((name, cur))
        cur += 1
    return "\n".join(out), rows


def _header_path(name: str, filename: str, opened: list[str]) -> str:
    """The path of the file pcpp's ``#line N "name"`` means (pcpp names a header as written in
    its ``#include``; the path it opened is the last one of that name)."""
    if name == filename or os.path.basename(name) == os.path.basename(filename) and not opened:
        return filename
    for path in reversed(opened):
        if os.path.basename(path) == os.path.basename(name):
            return path
    return filename if os.path.basename(name) == os.path.basename(filename) else name


_TILE = re.compile(r"\b(?:(?:cg|cooperative_groups)\s*::\s*)?thread_block_tile\s*<\s*(\d+)\s*>")


def _cg_types(text: str) -> str:
    """``cg::thread_block_tile<32>`` as one type name of the same length (``__cgtile32``):
    tree-sitter, which does not know the template, would read ``a < 32 > b`` (columns kept)."""
    return _TILE.sub(lambda m: f"__cgtile{m.group(1)}".ljust(len(m.group(0))), text)
