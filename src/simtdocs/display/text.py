"""Values as page text: labels in the page's language, numbers formatted, Markdown tables."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

from simtdocs.i18n import Listing, Msg, _, current_language, language


class AuthoringError(Exception):
    """A display object or glue was used in a way that would put a wrong page on the site."""


TEXT = (Msg, Listing)  # what reads differently per language


def plain_number(x: float, digits: int = 4) -> str:
    """``digits`` significant digits, thousands separated, never in scientific notation."""
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    s = f"{x:,.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def text(value: Any, lang: str, fmt: str | None = None) -> str:
    """Format one value for ``lang``: a label (``_()``) is translated, numbers use ``fmt``.

    Without ``fmt`` an integer gets thousands separators and a float four
    significant digits (``12345.6`` -> ``12,346``, ``0.0123456`` -> ``0.01235``).
    """
    if isinstance(value, TEXT):
        return value.pick(lang)
    if fmt:
        return format(value, fmt)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return plain_number(float(value))
    with language(lang):
        return str(value)


@dataclass
class Table:
    """A Markdown table; headers and cells may be labels (``_("…")``), shown per language.

    ``fmt`` is one format spec per column (or ``None``), e.g. ``[None, ",", ".1%"]``;
    ``align`` one of ``l``/``r``/``c`` per column, e.g. ``"lrr"``. Every row must
    have one cell per column.
    """

    rows: Sequence[Sequence[Any]]
    columns: Sequence[Any]
    fmt: Sequence[str | None] | None = None
    align: str | None = None

    def __post_init__(self):
        n = len(self.columns)
        if n == 0:
            raise AuthoringError("Table needs at least one column")
        self.rows = [list(r) for r in self.rows]
        for i, r in enumerate(self.rows):
            if len(r) != n:
                raise AuthoringError(f"Table row {i} has {len(r)} cells for {n} columns: {r!r}")
        if self.fmt is not None:
            if len(self.fmt) != n:
                raise AuthoringError(f"Table fmt has {len(self.fmt)} entries for {n} columns: {self.fmt!r}")
            for i, f in enumerate(self.fmt):
                for r in self.rows:
                    if f and not isinstance(r[i], TEXT):
                        format(r[i], f)  # a bad spec fails here, in the block
        if self.align is not None and (len(self.align) != n or set(self.align) - set("lrc")):
            raise AuthoringError(f"Table align must be one of l/r/c per column ({n}), got {self.align!r}")

    def render(self, lang: str) -> str:
        fmts = list(self.fmt or [None] * len(self.columns))

        def cell(v, f):
            return text(v, lang, f).replace("|", r"\|").replace("\n", " ")

        def header(c):  # "threads/block" may break after its slash: a table of such columns fits the page
            parts = cell(c, None).split("`")
            return "`".join(p if k % 2 else p.replace("/", "/<wbr>") for k, p in enumerate(parts))

        head = "| " + " | ".join(header(c) for c in self.columns) + " |"
        align = self.align or "l" + "r" * (len(self.columns) - 1)
        rule = "|" + "|".join({"l": ":--", "r": "--:", "c": ":-:"}[a] for a in align) + "|"
        body = ["| " + " | ".join(cell(v, f) for v, f in zip(r, fmts)) + " |" for r in self.rows]
        return "\n".join([head, rule, *body])

    def _repr_markdown_(self) -> str:
        return self.render(current_language())

    @classmethod
    def counters(cls, stats, labels=None) -> "Table":
        """The headline counters of a launch (``stats.counters()``) with their names."""
        if labels is None:
            import simtdocs

            labels = simtdocs.LABELS
        rows = []
        for key, value in stats.counters().items():
            if key.endswith("efficiency"):  # a ratio reads better as a percentage
                value = f"{value:.1%}"
            rows.append((labels.get(key, key), f"`{key}`", value))
        return cls(rows, [_("Counter"), _("Key"), _("Value")], align="llr")
