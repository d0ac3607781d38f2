"""Dependencies run one way: core <- backends <- families <- api <- bindings (DESIGN.md).

Parses every C++ source under cpp/, kernels/ and python/src/ (no build needed), resolves each quoted
include as the compilers do (the including file's folder, then cpp/include, cpp/src, kernels), and
fails naming file:line for an include that runs upward, a bindings file that includes anything but
the public headers, or a core source that names a family or kernel in a string literal."""
import os
import re

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
                    if not target.startswith("cpp/include/bwprof/"):
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
    write("python/src/module.cpp", '#include "bwprof/api.hpp"\n#include "cpu/cpu_backend.cpp"\n')
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
