"""Short kernel names: demangled, templates and arguments trimmed, namespaces dropped.

Profilers print names at very different lengths (ncu's full demangled signature with lambdas,
rocprof's ``[clone .kd]`` suffix, nsys's ``--base``-less names, a raw Itanium symbol now and
then). Breakdowns and joins need one readable key, so every reader fills ``short_name`` here.
"""

import re

_SUFFIXES = (" [clone .kd]", ".kd")
# Kernels that only wrap the real one, named by their first template argument (CUTLASS).
_WRAPPERS = {"Kernel", "Kernel2", "device_kernel"}
_OPEN = {"<": ">", "(": ")", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _itanium_base_name(symbol):
    """The function's own identifier from an Itanium-mangled symbol, or None.

    Only the name is needed (not a full demangling): read the <length><identifier> pieces of
    the (possibly nested) name and keep the last one before the template arguments or the
    parameter types start.
    """
    s = symbol
    if not s.startswith("_Z"):
        return None
    i = 2
    if i < len(s) and s[i] == "L":          # internal linkage marker
        i += 1
    nested = i < len(s) and s[i] == "N"
    if nested:
        i += 1
        while i < len(s) and s[i] in "rVKRO":   # cv and ref qualifiers of member functions
            i += 1
    last = None
    while i < len(s):
        if s.startswith("St", i):               # std:: abbreviation
            i += 2
            continue
        m = re.match(r"\d+", s[i:])
        if not m:
            break
        n = int(m.group(0))
        i += len(m.group(0))
        last = s[i:i + n]
        i += n
        if not nested:
            break
    return last


def _strip_brackets(name):
    """``name`` with every <...>, (...) and [...] group removed (None if unbalanced)."""
    out = []
    stack = []
    i = 0
    while i < len(name):
        ch = name[i]
        # "operator()" / "operator<" etc. are names, not brackets.
        if name.startswith("operator", i) and not stack:
            m = re.match(r"operator\s*(\(\)|\[\]|<<=?|>>=?|<=>|<=|>=|->\*?|[<>]|\S)", name[i:])
            if m:
                out.append(name[i:i + len(m.group(0))])
                i += len(m.group(0))
                continue
        if ch in _OPEN:
            stack.append(ch)
        elif ch in _CLOSE:
            if ch == ">" and i > 0 and name[i - 1] == "-":
                pass                            # "->" inside a template argument
            elif not stack or stack[-1] != _CLOSE[ch]:
                return None
            else:
                stack.pop()
                i += 1
                continue
        if not stack:
            out.append(ch)
        i += 1
    return None if stack else "".join(out)


def short_kernel_name(name):
    """A readable key for ``name``: ``void at::native::foo<float, 4>(int, T2)`` -> ``foo``."""
    if name is None:
        return ""
    s = str(name).strip()
    for suffix in _SUFFIXES:
        if s.endswith(suffix):
            s = s[: -len(suffix)].rstrip()
    if s.startswith("_Z"):
        base = _itanium_base_name(s)
        return base or s
    if s.startswith(("Memcpy ", "Memset ")):
        # PyTorch's copy/fill events ("Memcpy DtoD (Device -> Device)") are not C++ names.
        return s.split(" (", 1)[0]
    trimmed = _strip_brackets(s)
    if trimmed is None:
        # Truncated or odd name: keep what precedes the first bracket.
        trimmed = re.split(r"[<(\[]", s, maxsplit=1)[0]
    trimmed = trimmed.strip()
    # Drop a return type or qualifier in front ("void ", "__global__ void ").
    parts = trimmed.split()
    if parts:
        trimmed = parts[-1] if not parts[-1].startswith("::") else "".join(parts[-2:])
    # Keep the last scope component; "at::::foo" (after removing "<unnamed>") works too.
    trimmed = trimmed.rstrip(":")
    if "::" in trimmed:
        trimmed = trimmed.rsplit("::", 1)[1]
    if trimmed in _WRAPPERS and "<" in s:
        inner = s[s.index("<") + 1:]
        depth, end = 0, len(inner)
        for k, ch in enumerate(inner):
            depth += ch in "<(["
            if ch in ">)]":
                if depth == 0:
                    end = k
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                end = k
                break
        return short_kernel_name(inner[:end]) or trimmed
    return trimmed or s
