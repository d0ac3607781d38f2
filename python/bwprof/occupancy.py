"""Theoretical occupancy: how many blocks of a kernel fit on one SM (NVIDIA) or CU/WGP (AMD).

    >>> import bwprof
    >>> o = bwprof.occupancy("gfx1100", 256, 8, 1536)
    >>> o.active_blocks, o.occupancy_pct, o.limiter
    (8, 100.0, 'wave_slots')
    >>> print(o.text)
    LDS-limited: 64 blocks; VGPR-limited: 32 blocks; wave slots: 8 blocks <- the limit; workgroup slots: 32 blocks

The rules (cpp/src/core/occupancy.cpp) and the one architecture table (cpp/src/core/arch.cpp) live in the C++ core;
docs/occupancy.md explains them and their sources. ``python3 -m bwprof occupancy`` is the CLI.
"""
from __future__ import annotations

import dataclasses
import json
import operator
import re
from typing import Dict, List, Optional

from . import _core
from . import arguments as _args

__all__ = ["Occupancy", "occupancy", "occupancy_archs", "register_cli"]


@dataclasses.dataclass(frozen=True)
class Occupancy:
    """One block shape's theoretical occupancy on one SM / CU / WGP.

    ``limits`` maps each resource to the blocks it alone allows (None: it does not limit);
    NVIDIA names them registers, shared_memory, warp_slots, block_slots and AMD vgprs, lds,
    wave_slots, workgroup_slots. ``limiter`` is the binding one (slots first on a tie) and
    ``limiters`` every one that binds.
    """

    arch: str
    active_blocks: int
    active_warps: int
    max_warps: int
    occupancy_pct: float
    limiter: str
    limits: Dict[str, Optional[int]]
    text: str
    family: str
    vendor: str
    unit: str
    wave_size: int
    threads_per_block: int
    registers_per_thread: int
    shared_mem_per_block: int
    warps_per_block: int
    limiters: List[str]
    limit_labels: Dict[str, str]
    registers_allocated_per_warp: int
    shared_mem_allocated_per_block: int
    shared_mem_carveout: int
    note: str
    summary: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return f"{self.summary}\n{self.text}"


def _int_arg(name: str, value) -> int:
    if _args.is_bool(value):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f"{name}: expected an integer, got {_args.show(value)}") from None
    if abs(v) > 2**62:
        raise ValueError(f"{name}: {_args.show(v)} is out of range")
    return v


def occupancy(arch: str, threads_per_block: int, registers_per_thread: int, shared_mem_per_block: int = 0,
              *, wave64: bool = False, cu_mode: bool = False) -> Occupancy:
    """Theoretical occupancy of blocks of ``threads_per_block`` threads that use
    ``registers_per_thread`` registers (AMD: VGPRs, arch + acc on CDNA) and
    ``shared_mem_per_block`` bytes of shared memory / LDS (static + dynamic) on ``arch``
    ("sm_90", "gfx942", ...; see :func:`occupancy_archs`).

    ``wave64``: an RDNA kernel compiled for wave64; ``cu_mode``: an RDNA kernel compiled for CU
    mode (the default is WGP mode). Raises ValueError naming the argument on bad input.
    """
    if not isinstance(arch, str):
        raise ValueError(f"arch: expected a name such as 'sm_90' or 'gfx942', got {arch!r}")
    d = _core.occupancy(_args.text("arch", arch), _int_arg("threads_per_block", threads_per_block),
                        _int_arg("registers_per_thread", registers_per_thread),
                        _int_arg("shared_mem_per_block", shared_mem_per_block),
                        wave64=_args.flag("wave64", wave64), cu_mode=_args.flag("cu_mode", cu_mode))
    return Occupancy(**d)


def occupancy_archs() -> List[str]:
    """The architectures the calculator knows, NVIDIA first."""
    return list(_core.occupancy_archs())


# ---- CLI ------------------------------------------------------------------------------------

_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(k|kb|kib)?\s*$", re.IGNORECASE)


def _parse_count(name: str, text) -> int:
    if text is None:
        raise ValueError(f"{name}: required")
    try:
        return int(str(text).strip())
    except ValueError:
        raise ValueError(f"{name}: expected an integer, got {text!r}") from None


def _parse_bytes(name: str, text: str) -> int:
    """Bytes, with an optional K / KB / KiB suffix meaning 1024: "49152", "48K", "1.5KB"."""
    m = _BYTES.match(str(text))
    if not m:
        raise ValueError(f"{name}: expected bytes such as 49152, 48K or 1.5KB, got {text!r}")
    value = float(m.group(1)) * (1024 if m.group(2) else 1)
    if not value.is_integer():
        raise ValueError(f"{name}: {text!r} is not a whole number of bytes")
    return int(value)


def _details(o: Occupancy) -> str:
    if o.vendor == "amd":
        regs = f"{o.registers_allocated_per_warp} VGPRs per lane per wave"
        smem = f"{o.shared_mem_allocated_per_block} B LDS per workgroup"
    else:
        regs = f"{o.registers_allocated_per_warp} registers per warp"
        smem = f"{o.shared_mem_allocated_per_block} B shared memory per block"
        if o.active_blocks:
            smem += f" (carve-out {o.shared_mem_carveout // 1024} KB)"
    warp = "waves" if o.vendor == "amd" else "warps"
    return (f"block: {o.threads_per_block} threads = {o.warps_per_block} {warp}; "
            f"allocated: {regs}, {smem}")


def _cmd_occupancy(args) -> int:
    if args.list_archs:
        print("\n".join(occupancy_archs()))
        return 0
    if not args.arch:
        raise ValueError("--arch: required (one of " + ", ".join(occupancy_archs()) + ")")
    o = occupancy(args.arch, _parse_count("--threads", args.threads), _parse_count("--regs", args.regs),
                  _parse_bytes("--smem", args.smem), wave64=args.wave64, cu_mode=args.cu_mode)
    if args.json:
        print(json.dumps(o.to_dict(), indent=1))
        return 0
    print(o.summary)
    print("  " + o.text)
    print("  " + _details(o))
    return 0


def register_cli(subparsers):
    """Add the ``occupancy`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "occupancy", help="theoretical occupancy of a block shape on an architecture",
        description="Blocks per SM/CU/WGP, active warps (waves), occupancy and the limiting resource "
                    "for a kernel's block size, registers and shared memory (LDS).")
    p.add_argument("--arch", help="sm_70 .. sm_90, gfx90a, gfx940/941/942, gfx1100/1101/1102")
    p.add_argument("--threads", metavar="N", help="threads per block")
    p.add_argument("--regs", metavar="N", help="registers per thread (AMD: VGPRs, arch + acc)")
    p.add_argument("--smem", metavar="BYTES", default="0",
                   help="shared memory (LDS) per block, static + dynamic; K/KB/KiB = 1024 (default 0)")
    p.add_argument("--wave64", action="store_true", help="RDNA: the kernel is compiled for wave64")
    p.add_argument("--cu-mode", action="store_true", help="RDNA: the kernel is compiled for CU mode")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--list-archs", action="store_true", help="list the known architectures")
    p.set_defaults(func=_cmd_occupancy)
    return subparsers
