"""docs/kernels.md's parameter tables, made from the kernel descriptors (``bwprof._core.kernels()``).

Each kernel's section holds a generated block (what it computes, its dtypes and a table of its typed
parameters with their defaults and ranges) between two markers, and hand-written lines on its
variants below it. ``check`` says which blocks differ from the descriptors (a test runs it);
``python3 -m bwprof.kernel_docs`` rewrites them, adding a section for a kernel the doc lacks.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "kernels.md"
_BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- end: \1 -->\n", re.S)


def _range(p: dict) -> str:
    if p["kind"] == "choice":
        return " \\| ".join(f"`{c}`" for c in p["choices"])
    if p["kind"] == "bool":
        return "`false` \\| `true`"
    if "min" in p:
        return f"{p['min']:,} to {p['max']:,}"
    return ""


def block(k: dict) -> str:
    """The generated part of one kernel's section."""
    lines = [k["doc"].replace("|", "\\|") + ".", "",
             f"Family `{k['family']}`; dtypes {', '.join(k['dtypes'])}; access pattern {k['access_pattern']}"
             + ("; in the default suite." if k.get("default_suite") else "."), ""]
    if k["params"]:
        lines += ["| parameter | kind | default | values | meaning |", "| --- | --- | --- | --- | --- |"]
        for p in k["params"]:
            default = f"`{p['default']}`" if p["default"] != "" else "(required)"
            lines.append(f"| `{p['name']}` | {p['kind']} | {default} | {_range(p)} | "
                         f"{p['help'].replace('|', chr(92) + '|')} |")
        lines.append("")
    return "\n".join(lines)


def _section(k: dict) -> str:
    variants = "\n".join(f"- `{v['name']}` ({v['backend'].upper()})" for v in k["variants"])
    return (f"\n## `{k['name']}`\n\n<!-- generated: {k['name']} -->\n{block(k)}<!-- end: {k['name']} -->\n\n"
            f"Variants:\n\n{variants}\n")


def _kernels() -> list[dict]:
    from . import _core

    return sorted(_core.kernels(), key=lambda k: k["order"])


def check(path: Path = DOC) -> list[str]:
    """What in the doc differs from the descriptors: one line per kernel, empty when current."""
    text = Path(path).read_text(encoding="utf-8")
    have = {m.group(1): m.group(2) for m in _BLOCK.finditer(text)}
    problems = []
    kernels = _kernels()
    for k in kernels:
        if k["name"] not in have:
            problems.append(f"{k['name']}: no section")
        elif have[k["name"]] != block(k):
            problems.append(f"{k['name']}: its parameters differ from the descriptor")
    gone = sorted(set(have) - {k["name"] for k in kernels})
    problems += [f"{name}: in the doc but no kernel of this build" for name in gone]
    return problems


def update(path: Path = DOC) -> str:
    """Rewrite the doc's generated blocks (and add missing kernels' sections); returns the text."""
    text = Path(path).read_text(encoding="utf-8")
    kernels = {k["name"]: k for k in _kernels()}
    text = _BLOCK.sub(lambda m: (f"<!-- generated: {m.group(1)} -->\n{block(kernels[m.group(1)])}"
                                 f"<!-- end: {m.group(1)} -->\n") if m.group(1) in kernels else m.group(0), text)
    have = {m.group(1) for m in _BLOCK.finditer(text)}
    for name, k in kernels.items():
        if name not in have:
            text = text.rstrip("\n") + "\n" + _section(k)
    return text


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        problems = check()
        for p in problems:
            print(f"docs/kernels.md: {p}", file=sys.stderr)
        return 1 if problems else 0
    if args:
        print("usage: python3 -m bwprof.kernel_docs [--check]", file=sys.stderr)
        return 2
    from .files import atomic_write_text

    atomic_write_text(DOC, update())
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
