"""The translation catalogs: extract, update, compile, check. ``python -m simtdocs_site.catalogs``

Babel reads every ``_("...")`` in a domain's sources (see :data:`SOURCES`) and merges the
strings into ``src/simtdocs/locale/<lang>/LC_MESSAGES/<domain>.po``: new strings arrive
with an empty translation, strings no code uses any more are dropped, and the ``.mo``
that :mod:`gettext` reads is compiled next to it. ``--check`` changes nothing and lists
what is wrong (the test suite runs it): a string without a translation, a fuzzy one, an
entry no code uses, or a ``.mo`` that does not match its ``.po``.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from simtdocs.i18n import DOMAINS, LANGUAGES, LOCALE_DIR, SOURCE_LANGUAGE

from simtdocs.snippets import repo_root

# Where each domain's strings live, relative to the repository. The few labels of the site
# package (the glossary's terminology table) are shown on pages like the library's: its catalog.
SOURCES = {
    "simtdocs": ("src/simtdocs", "src/simtdocs_site"),
    "home": ("snippets/home",),
    "p2": ("snippets/p2",),
    "exec_model": ("snippets/exec_model",),
    "silicon": ("snippets/silicon",),
}
assert tuple(SOURCES) == DOMAINS
# A lecture's presentation helpers, src/simtdocs/lectures/<domain>.py or the modules of the package
# src/simtdocs/lectures/<domain>/, belong to its catalog, not simtdocs'.
LECTURES = "src/simtdocs/lectures"
HEADER = ("# {lang} translations of the {domain} labels, kept by `make translations`\n"
          "# (python -m simtdocs_site.catalogs). Fill msgstr; do not edit the msgid lines.")
TARGETS = [lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE]


def extract(domain: str):
    """A template catalog of every ``_()`` string in the domain's sources, with where it is used."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract as extract_file, extract_from_dir

    root = repo_root()
    template = Catalog(domain=domain, project="simtdocs", charset="utf-8")
    options = dict(keywords={"_": None, "_n": (1, 2), "translate": (1,)}, comment_tags=("TRANSLATORS:",))
    skip = [("build/**", "ignore")] + ([("lectures/**", "ignore")] if domain == "simtdocs" else [])
    found = [((Path(folder) / f).as_posix(), n, m, c, ctx) for folder in SOURCES[domain]
             for f, n, m, c, ctx in extract_from_dir(root / folder, method_map=[*skip, ("**.py", "python")], **options)]
    for helpers in lecture_modules(domain):
        with helpers.open("rb") as f:
            where = helpers.relative_to(root).as_posix()
            found += [(where, n, m, c, ctx) for n, m, c, ctx in extract_file("python", f, **options)]
    for where, lineno, message, comments, context in found:
        if isinstance(message, tuple):  # _("text", name=...) gives (text, None, ...); _n gives (one, many)
            message = message[:2] if isinstance(message[1], str) else message[0]
        template.add(message, None, [(where, lineno)], auto_comments=comments, context=context)
    return template


def lecture_modules(domain: str) -> list[Path]:
    """The helper modules of a lecture: ``lectures/<domain>.py``, or every module of ``lectures/<domain>/``."""
    base = repo_root() / LECTURES
    module, package = base / f"{domain}.py", base / domain
    return ([module] if module.is_file() else []) + (sorted(package.rglob("*.py")) if package.is_dir() else [])


def po_path(domain: str, lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{domain}.po"


def read(domain: str, lang: str):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    path = po_path(domain, lang)
    if not path.exists():
        return Catalog(locale=lang, domain=domain, project="simtdocs", charset="utf-8")
    with path.open("rb") as f:
        return read_po(f, locale=lang, domain=domain)


def compiled(catalog) -> bytes:
    from babel.messages.mofile import write_mo

    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    return buf.getvalue()


def extract_comments():
    """A template catalog of the comments of every visible block (:mod:`simtdocs_site.comments`)."""
    from babel.messages.catalog import Catalog

    from . import comments

    template = Catalog(domain=comments.DOMAIN, project="simtdocs", charset="utf-8")
    for msgid, places in comments.used().items():
        template.add(msgid, None, [(w.split(" (cell")[0].rsplit(":", 1)[0], 0) for w in places[:3]])
    return template


def _all_domains():
    """(domain, template) of the label catalogs and of the comments' catalog."""
    from . import comments

    for domain in DOMAINS:
        yield domain, extract(domain)
    yield comments.DOMAIN, extract_comments()


def update() -> list[str]:
    """Merge the sources' strings into every catalog and compile it; return what changed."""
    from babel.messages.pofile import write_po

    changed = []
    for domain, template in _all_domains():
        for lang in TARGETS:
            catalog = read(domain, lang)
            catalog.update(template, no_fuzzy_matching=True)
            catalog.obsolete.clear()  # git remembers old translations; the catalog holds live ones
            catalog.fuzzy = False
            catalog.header_comment = HEADER.format(domain=domain, lang=lang)
            catalog.copyright_holder = catalog.last_translator = "the simtdocs authors"
            catalog.language_team = f"simtdocs {lang}"
            catalog.msgid_bugs_address = ""
            path = po_path(domain, lang)
            path.parent.mkdir(parents=True, exist_ok=True)
            buf = io.BytesIO()
            # No line numbers: an edit above a label should not change the catalog.
            write_po(buf, catalog, width=100, include_previous=False, include_lineno=False)
            new = buf.getvalue()
            old = path.read_bytes() if path.exists() else b""
            # The header's creation date would make every run a change: keep the file if only it moved.
            if _without_dates(new) != _without_dates(old):
                path.write_bytes(new)
                changed.append(path.relative_to(repo_root()).as_posix())
            mo = path.with_suffix(".mo")
            data = compiled(read(domain, lang))
            if not mo.exists() or mo.read_bytes() != data:
                mo.write_bytes(data)
                changed.append(mo.relative_to(repo_root()).as_posix())
    return changed


def _without_dates(po: bytes) -> bytes:
    return b"\n".join(ln for ln in po.split(b"\n") if not ln.startswith((b'"POT-Creation-Date', b'"PO-Revision-Date')))


def problems() -> list[str]:
    """Everything that would put an untranslated or stale label on a page."""
    out = []
    for domain, template in _all_domains():
        used = {_key(m.id) for m in template if m.id}
        for lang in TARGETS:
            path = po_path(domain, lang)
            rel = path.relative_to(repo_root()).as_posix()
            catalog = read(domain, lang)
            have = {_key(m.id): m for m in catalog if m.id}
            for msgid in sorted(used - set(have)):
                where = ", ".join(f"{f}:{n}" for f, n in template[msgid].locations)
                out.append(f"{rel}: {msgid!r} ({where}) is not in the catalog: run `make translations`")
            for msgid in sorted(set(have) - used):
                out.append(f"{rel}: {msgid!r} is used by no code any more: run `make translations`")
            for msgid in sorted(used & set(have)):
                m = have[msgid]
                strings = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
                if not all(strings):
                    out.append(f"{rel}: {msgid!r} has no translation")
                elif m.fuzzy:
                    out.append(f"{rel}: {msgid!r} is marked fuzzy: check the translation and remove the flag")
                elif domain != "comments" and any(_fields(t) != _fields(msgid) for t in strings):
                    out.append(f"{rel}: {msgid!r} and its translation {m.string!r} have different {{fields}}")
            mo = path.with_suffix(".mo")
            if path.exists() and (not mo.exists() or mo.read_bytes() != compiled(catalog)):
                out.append(f"{mo.relative_to(repo_root()).as_posix()} does not match its .po: run `make translations`")
    return out + conflicts()


def conflicts() -> list[str]:
    """The same English label translated differently in two catalogs: the lookup takes the
    first catalog that has it (:data:`simtdocs.i18n.DOMAINS` order), so one page would be wrong."""
    out = []
    for lang in TARGETS:
        seen: dict[str, tuple[str, object]] = {}
        for domain in DOMAINS:
            for m in read(domain, lang):
                if not m.id or not m.string:
                    continue
                key = _key(m.id)
                if key in seen and seen[key][1] != m.string:
                    out.append(f"{lang}: {key!r} is {seen[key][1]!r} in {seen[key][0]}.po but {m.string!r} in "
                               f"{domain}.po: translate it the same way, or reword one of them")
                seen.setdefault(key, (domain, m.string))
    return out


def _key(msgid):
    return msgid[0] if isinstance(msgid, (tuple, list)) else msgid


def _fields(s: str) -> set[str]:
    import string

    try:
        return {f for _, f, _, _ in string.Formatter().parse(s) if f is not None}
    except ValueError:
        return {"<unbalanced braces>"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--check" in argv:
        found = problems()
        for p in found:
            print(p)
        print(f"{len(found)} problem(s) in the translation catalogs" if found else "catalogs complete")
        return 1 if found else 0
    for path in update():
        print(f"updated {path}")
    missing = [p for p in problems() if "has no translation" in p]
    for p in missing:
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
