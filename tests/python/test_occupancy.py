"""bwprof.occupancy: values worked by hand (see tests/cpp/occupancy_test.cpp for the arithmetic),
the seed's RDNA3 case, errors, and the occupancy subcommand."""
import json
import os
import subprocess
import sys

import pytest

import bwprof
from bwprof import cli
from bwprof.occupancy import Occupancy, occupancy_archs


def test_exported_from_the_package():
    assert "occupancy" in bwprof.__all__
    # The package attribute is the function; the module stays importable by its full name.
    assert bwprof.occupancy is sys.modules["bwprof.occupancy"].occupancy


def test_sm90_cli_example_values():
    o = bwprof.occupancy("sm_90", 256, 64, 49152)
    assert isinstance(o, Occupancy)
    assert (o.arch, o.active_blocks, o.active_warps, o.max_warps) == ("sm_90", 4, 32, 64)
    assert o.occupancy_pct == 50.0
    assert o.limits == {"shared_memory": 4, "registers": 4, "warp_slots": 8, "block_slots": 32}
    assert o.limiter == "registers" and o.limiters == ["registers", "shared_memory"]
    assert o.shared_mem_allocated_per_block == 49152 + 1024
    assert o.text == ("shared-memory-limited: 4 blocks <- the limit; register-limited: 4 blocks <- the limit; "
                      "warp slots: 8 blocks; block slots: 32 blocks")


def test_seed_rdna3_case_is_wave_slot_limited_at_100_percent():
    # The seed: 256 threads, 8 VGPRs, 1.5 KB LDS on RDNA3 -> 8 blocks, wave slots, 100 %.
    o = bwprof.occupancy("gfx1100", 256, 8, 1536)
    assert o.active_blocks == 8
    assert o.limiter == "wave_slots"
    assert o.occupancy_pct == 100.0
    assert (o.active_warps, o.max_warps, o.unit, o.wave_size) == (64, 64, "WGP", 32)
    assert o.limits == {"lds": 64, "vgprs": 32, "wave_slots": 8, "workgroup_slots": 32}
    assert o.text.startswith("LDS-limited: 64 blocks; VGPR-limited: 32 blocks; wave slots: 8 blocks <- the limit")
    # wave64 keeps it at 100 %: 4 waves per block, 16 blocks.
    w = bwprof.occupancy("gfx1100", 256, 8, 1536, wave64=True)
    assert (w.wave_size, w.warps_per_block, w.active_blocks, w.occupancy_pct) == (64, 4, 16, 100.0)


def test_amd_published_cdna2_examples():
    # AMD's Omniperf occupancy example on MI250: 128 VGPRs -> ~50 %, 64 KiB LDS -> ~12.5 %.
    assert bwprof.occupancy("gfx90a", 256, 128, 0).occupancy_pct == 50.0
    lds = bwprof.occupancy("gfx90a", 256, 96, 65536)
    assert (lds.active_blocks, lds.occupancy_pct, lds.limiter) == (1, 12.5, "lds")


def test_cdna3_and_unlimited_limits_are_none():
    o = bwprof.occupancy("gfx942", 64, 16, 0)  # one-wave workgroups, no LDS
    assert o.active_blocks == 32 and o.occupancy_pct == 100.0
    assert o.limits["lds"] is None and o.limits["workgroup_slots"] is None
    assert "LDS-limited: no limit" in o.text


def test_numpy_and_float_integers_are_accepted():
    np = pytest.importorskip("numpy")
    a = bwprof.occupancy("sm_80", np.int64(128), np.int32(32), 0.0)
    assert a.to_dict() == bwprof.occupancy("sm_80", 128, 32, 0).to_dict()


def test_to_dict_and_str():
    o = bwprof.occupancy("sm_86", 768, 32, 0)
    d = o.to_dict()
    assert d["active_blocks"] == 2 and d["limits"]["warp_slots"] == 2
    json.dumps(d)  # plain types only
    assert str(o).splitlines() == [o.summary, o.text]


def test_archs_listed():
    names = occupancy_archs()
    for a in ("sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120", "gfx90a", "gfx940",
              "gfx941",
              "gfx942", "gfx1100", "gfx1101", "gfx1102"):
        assert a in names


@pytest.mark.parametrize("args, name", [
    (("sm_61", 128, 32, 0), "arch"),
    ((None, 128, 32, 0), "arch"),
    (("sm_90", 0, 32, 0), "threads_per_block"),
    (("sm_90", 1025, 32, 0), "threads_per_block"),
    (("sm_90", 128.5, 32, 0), "threads_per_block"),
    (("sm_90", True, 32, 0), "threads_per_block"),
    (("sm_90", 128, 256, 0), "registers_per_thread"),
    (("sm_90", 128, "32", 0), "registers_per_thread"),
    (("sm_90", 128, 32, 227 * 1024 + 1), "shared_mem_per_block"),
    (("gfx942", 128, 32, -1), "shared_mem_per_block"),
    (("gfx942", 128, 32, 10**30), "shared_mem_per_block"),
])
def test_bad_input_is_a_value_error_naming_the_argument(args, name):
    with pytest.raises(ValueError) as e:
        bwprof.occupancy(*args)
    assert str(e.value).startswith(name + ":"), str(e.value)


def test_unknown_arch_lists_the_known_ones():
    with pytest.raises(ValueError, match="known: sm_70, .*gfx1102"):
        bwprof.occupancy("sm_61", 128, 32, 0)


def test_option_errors():
    with pytest.raises(ValueError, match="^wave64:"):
        bwprof.occupancy("sm_90", 128, 32, 0, wave64=True)
    with pytest.raises(ValueError, match="^cu_mode:"):
        bwprof.occupancy("gfx90a", 128, 32, 0, cu_mode=True)


# ---- CLI ------------------------------------------------------------------------------------

def test_cli_text(capsys):
    assert cli.main(["occupancy", "--arch", "sm_90", "--threads", "256", "--regs", "64", "--smem", "49152"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("sm_90 (Hopper): 4 blocks per SM, 32 of 64 warps, 50% occupancy, "
                      "limited by registers and shared memory")
    assert "register-limited: 4 blocks <- the limit" in out[1]
    assert "50176 B shared memory per block" in out[2]


def test_cli_json_and_kb_suffix(capsys):
    assert cli.main(["occupancy", "--arch", "gfx1100", "--threads", "256", "--regs", "8", "--smem", "1.5KB",
                     "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["shared_mem_per_block"], d["active_blocks"], d["limiter"], d["occupancy_pct"]) == \
        (1536, 8, "wave_slots", 100.0)


def test_cli_wave64_and_list(capsys):
    assert cli.main(["occupancy", "--arch", "gfx1102", "--threads", "256", "--regs", "8", "--wave64"]) == 0
    assert "wave64" in capsys.readouterr().out
    assert cli.main(["occupancy", "--list-archs"]) == 0
    assert "gfx942" in capsys.readouterr().out.split()


@pytest.mark.parametrize("argv, needle", [
    (["--arch", "sm_61", "--threads", "256", "--regs", "8"], "arch: unknown architecture"),
    (["--threads", "256", "--regs", "8"], "--arch: required"),
    (["--arch", "sm_90", "--regs", "8"], "--threads: required"),
    (["--arch", "sm_90", "--threads", "abc", "--regs", "8"], "--threads: expected an integer"),
    (["--arch", "sm_90", "--threads", "2048", "--regs", "8"], "threads_per_block: must be 1..1024"),
    (["--arch", "sm_90", "--threads", "256", "--regs", "8", "--smem", "1.3"], "--smem:"),
    (["--arch", "sm_90", "--threads", "256", "--regs", "8", "--smem", "lots"], "--smem:"),
    (["--arch", "sm_90", "--threads", "256", "--regs", "8", "--wave64"], "wave64:"),
])
def test_cli_bad_input_one_line_exit_2(capsys, argv, needle):
    assert cli.main(["occupancy", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bwprof: error: ") and needle in lines[0], captured.err


def test_cli_as_a_program_no_traceback(repo_root):
    env = dict(os.environ, PYTHONPATH=os.path.join(repo_root, "python"))
    ok = subprocess.run([sys.executable, "-m", "bwprof", "occupancy", "--arch", "sm_90", "--threads", "256",
                         "--regs", "64", "--smem", "49152"], env=env, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "50% occupancy" in ok.stdout, ok.stderr
    bad = subprocess.run([sys.executable, "-m", "bwprof", "occupancy", "--arch", "sm_90", "--threads", "0",
                          "--regs", "64"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
