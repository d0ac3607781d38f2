"""Dependencies run one way: core <- backends <- families <- api <- bindings (DESIGN.md).

Parses every C++ source under cpp/, kernels/ and python/src/ (no build needed), resolves each quoted
include as the compilers do (the including file's folder, then cpp/include, cpp/src, kernels), and
fails naming file:line for an include that runs upward, a bindings file that includes anything but
the public headers (and the bindings' own python/src/bindings.hpp), or a core source that names a
family or kernel in a string literal.

Also: no tracked source file grows past LINE_LIMIT lines (issue #11: split a file by concern
before it gets there)."""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTS = (".cpp", ".hpp", ".hip", ".cu", ".h")
INCLUDE_DIRS = ("cpp/include", "cpp/src", "kernels")
LAYERS = ("core", "backends", "families", "api", "bindings")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(rel):
    """The layer of a repository-relative path, or None for a file outside the layered tree."""
    parts = rel.split("/")
    if rel == "cpp/include/bwprof/api.hpp" or rel.startswith("cpp/src/api/"):
        return "api"
    if rel.startswith("cpp/include/") or rel.startswith("cpp/src/core/"):
        return "core"
    if rel.startswith(("cpp/src/cpu/", "cpp/src/gpu/", "kernels/common/")):
        return "backends"
    if parts[0] == "kernels" and len(parts) >= 3:
        return "families"
    if rel.startswith("python/src/"):
        return "bindings"
    return None


def sources(root):
    out = []
    for top in ("cpp", "kernels", "python/src"):
        for d, _, files in os.walk(os.path.join(root, top)):
            out += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files if f.endswith(EXTS)]
    return sorted(out)


def resolve(root, rel, target):
    for base in [os.path.dirname(rel), *INCLUDE_DIRS]:
        cand = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def include_violations(root):
    bad = []
    for rel in sources(root):
        src_layer = layer_of(rel)
        if src_layer is None:
            bad.append(f"{rel}: in no layer (core, backends, families, api, bindings)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(root, rel, m.group(1))
                where = f"{rel}:{n}: #include \"{m.group(1)}\""
                if target is None:
                    bad.append(f"{where} resolves to no file of the tree")
                    continue
                dst_layer = layer_of(target)
                if src_layer == "bindings":
                    if not target.startswith(("cpp/include/bwprof/", "python/src/")):
                        bad.append(f"{where}: the bindings include public headers (cpp/include/bwprof/) only")
                elif dst_layer is None or LAYERS.index(dst_layer) > LAYERS.index(src_layer):
                    bad.append(f"{where}: {src_layer} includes {dst_layer} ({target}), which runs upward")
    return bad


def string_literals(text):
    """(line, literal) of the C++ string literals in `text`, comments and char literals skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            line += text.count("\n", i, end)
            i = end + 2
            continue
        elif c in "\"'":
            j, buf = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\":
                    buf.append(text[j:j + 2])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            if c == '"':
                out.append((line, "".join(buf)))
            i = j + 1
            continue
        i += 1
    return out


def family_names(root):
    """Every name a family owns: its folder, the kernel names and family columns its descriptor
    assigns, and the literals it spells that start with its folder's name ("stream_triad")."""
    folders, text = [], {}
    kernels = os.path.join(root, "kernels")
    for d in sorted(os.listdir(kernels)):
        fam = os.path.join(kernels, d, "family.cpp")
        if os.path.isfile(fam):
            folders.append(d)
            with open(fam) as f:
                text[d] = f.read()
    names = set(folders)
    for d, t in text.items():
        names |= set(re.findall(r'\b(?:name|family)\s*=\s*(?:[\w.]+\s*=\s*)*"(\w+)"', t))
        names |= {s for _, s in string_literals(t) if any(s.startswith(f + "_") for f in folders)}
    return names


def core_literal_violations(root, names):
    bad = []
    for rel in sources(root):
        if layer_of(rel) != "core":
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for line, s in string_literals(f.read()):
                if s in names:
                    bad.append(f"{rel}:{line}: the core names \"{s}\", which a family owns")
    return bad


def test_every_source_sits_in_a_layer_and_includes_only_downward():
    assert include_violations(ROOT) == []


def test_the_core_names_no_family_or_kernel():
    names = family_names(ROOT)
    # The names the scan must know, or it could pass by knowing none.
    assert {"stream", "gemm", "stream_triad", "qkv_projection", "q4_0_matmul", "fill", "fma_chain",
            "roofline"} <= names
    assert core_literal_violations(ROOT, names) == []


def test_the_scan_catches_an_upward_include_and_a_named_kernel(tmp_path):
    # A copy of the tree's layout with one planted violation of each kind.
    def write(rel, text):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    write("cpp/include/bwprof/kernel.hpp", "#pragma once\n")
    write("cpp/include/bwprof/api.hpp", '#include "bwprof/kernel.hpp"\n')
    write("cpp/src/core/runner.cpp", '#include "bwprof/kernel.hpp"\n#include "gemm/gemm.hpp"\nconst char* k = "gemm";\n')
    write("cpp/src/cpu/cpu_backend.cpp", '#include "bwprof/api.hpp"\n')
    write("kernels/common/reference.hpp", '#include "bwprof/kernel.hpp"\n')
    write("kernels/gemm/gemm.hpp", '#include "common/reference.hpp"\n')
    write("kernels/gemm/family.cpp", '#include "gemm/gemm.hpp"\nvoid f() { k.name = k.family = "gemm"; }\n')
    write("python/src/module.cpp", '#include "bwprof/api.hpp"\n#include "cpu/cpu_backend.cpp"\n#include "bindings.hpp"\n')
    write("python/src/bindings.hpp", '#include "bwprof/kernel.hpp"\n')
    bad = include_violations(str(tmp_path))
    assert any(b.startswith("cpp/src/core/runner.cpp:2:") and "core includes families" in b for b in bad), bad
    assert any(b.startswith("cpp/src/cpu/cpu_backend.cpp:1:") and "backends includes api" in b for b in bad), bad
    assert any(b.startswith("python/src/module.cpp:2:") and "public headers" in b for b in bad), bad
    assert len(bad) == 3, bad
    lit = core_literal_violations(str(tmp_path), family_names(str(tmp_path)))
    assert lit == ['cpp/src/core/runner.cpp:3: the core names "gemm", which a family owns']


@pytest.mark.parametrize("rel,layer", [
    ("cpp/include/bwprof/registry.hpp", "core"), ("cpp/include/bwprof/api.hpp", "api"),
    ("cpp/src/core/peaks.cpp", "core"), ("cpp/src/gpu/gpu_backend.hpp", "backends"),
    ("kernels/common/gpu_runtime.hpp", "backends"), ("kernels/gemm/dispatch.hip", "families"),
    ("cpp/src/api/api.cpp", "api"), ("python/src/module.cpp", "bindings")])
def test_layer_map(rel, layer):
    assert layer_of(rel) == layer


# --- file length ----------------------------------------------------------------------------

LINE_LIMIT = 550
LIMITED_TOPS = ("cpp", "kernels", "python", "tests", "benchmarks")
LIMITED_EXTS = (".py", ".cpp", ".hpp", ".hip", ".h", ".cu", ".cuh")
GENERATED = re.compile(rb"@generated|DO NOT EDIT")


def limited_sources(root, use_git=True):
    """The tracked source files the line limit covers (git ls-files; a walk of the folders where
    there is no git checkout, as in an sdist). Sample data under tests/data is not source (its
    writer scripts are), nor is a file that says it was generated."""
    names = None
    if use_git and shutil.which("git"):
        out = subprocess.run(["git", "ls-files", "-z", "--", *LIMITED_TOPS], cwd=root, capture_output=True)
        if out.returncode == 0:
            names = [n.decode("utf-8", "replace") for n in out.stdout.split(b"\0") if n]
    if names is None:
        names = []
        for top in LIMITED_TOPS:
            for d, dirs, files in os.walk(os.path.join(root, top)):
                dirs[:] = [x for x in dirs if not x.startswith((".", "build")) and x != "__pycache__"]
                names += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files]
    out = []
    for rel in sorted(names):
        if not rel.endswith(LIMITED_EXTS) or (rel.startswith("tests/data/") and not rel.endswith(".py")):
            continue
        path = os.path.join(root, rel)
        if not os.path.isfile(path):            # tracked but deleted in the work tree
            continue
        with open(path, "rb") as f:
            if GENERATED.search(f.read(2048)):
                continue
        out.append(rel)
    return out


def line_count(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def too_long(root, names, limit=LINE_LIMIT):
    return [f"{rel}: {n} lines (the limit is {limit}: split it by concern)"
            for rel in names if (n := line_count(os.path.join(root, rel))) > limit]


def test_no_source_file_is_over_the_line_limit():
    names = limited_sources(ROOT)
    # The files the scan must see, or it could pass by seeing none.
    assert {"python/src/module.cpp", "kernels/gemm/dispatch.hip", "python/bwprof/traces/csv_table.py",
            "tests/python/test_layers.py", "tests/data/traces/make_sqlite_samples.py",
            "cpp/include/bwprof/api.hpp"} <= set(names)
    assert too_long(ROOT, names) == []


@pytest.mark.parametrize("git", [pytest.param(True, marks=pytest.mark.skipif(shutil.which("git") is None,
                                                                   reason="needs git")), False])
def test_the_line_limit_catches_a_long_source_file(tmp_path, git):
    def write(rel, lines, head=""):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(head + "x = 1\n" * (lines - (1 if head else 0)))
    write("python/bwprof/long.py", LINE_LIMIT + 1)
    write("kernels/gemm/long.hip", LINE_LIMIT + 40)
    write("tests/data/traces/writer.py", LINE_LIMIT + 2)
    write("cpp/src/core/fine.cpp", LINE_LIMIT)                       # at the limit: fine
    write("tests/data/traces/sample.h", 5000)                        # sample data
    write("python/bwprof/table_gen.py", 5000, head="# @generated by a script\n")
    write("docs/long.py", 5000)                                      # outside the folders
    write("benchmarks/notes.txt", 5000)                              # not source
    if git:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
        write("python/bwprof/untracked.py", 5000)                    # not tracked: not counted
    bad = too_long(str(tmp_path), limited_sources(str(tmp_path), use_git=git))
    assert bad == [f"kernels/gemm/long.hip: {LINE_LIMIT + 40} lines (the limit is {LINE_LIMIT}: split it by concern)",
                   f"python/bwprof/long.py: {LINE_LIMIT + 1} lines (the limit is {LINE_LIMIT}: split it by concern)",
                   f"tests/data/traces/writer.py: {LINE_LIMIT + 2} lines (the limit is {LINE_LIMIT}: split it by concern)"]
