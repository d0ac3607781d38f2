"""The rules by which CMakeLists.txt compiles each CUDA source for some architectures only
(cmake/cuda_architectures.cmake): a source holds to them, or the build would ship a kernel without
the code its GPU needs."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEARCH = [ROOT / "kernels", ROOT / "cpp" / "src", ROOT / "cpp" / "include"]
# Hopper's own instructions: only the sm_90a pass of nvcc has them.
HOPPER_HEADERS = {"common/gpu_wgmma.hpp", "common/gpu_wgmma_attn.hpp", "mma_peak/wgmma_ops.hpp"}
HOPPER_MARKS = re.compile(r"__CUDA_ARCH_FEAT_SM90|BWPROF_WGMMA_DEVICE|wgmma\.mma_async|cp\.async\.bulk\.tensor")
# A test of the minor version (sm_86, sm_89, ...): code the lowest minor of its major lacks.
MINOR_GUARD = re.compile(r"__CUDA_ARCH__\s*>=?\s*(\d+)")


def gpu_sources():
    return sorted(p for d in (ROOT / "kernels", ROOT / "cpp" / "src" / "gpu") for p in d.rglob("*.hip"))


def _arch_check():
    """.ci/cuda_arch_check.py as a module: its include walk is the one the tests check against."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("cuda_arch_check", ROOT / ".ci" / "cuda_arch_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def local_includes(path: Path):
    """The tree's own headers `path` includes, directly or not (quoted includes found under SEARCH)."""
    return _arch_check().includes(path, set())


def minor_sources():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"set\(BWPROF_CUDA_MINOR_SOURCES ([^)]*)\)", text)
    assert m, "CMakeLists.txt sets BWPROF_CUDA_MINOR_SOURCES"
    return {ROOT / p.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "") for p in m.group(1).split()}


def hopper_only(path: Path) -> bool:
    return "_sm90" in path.name


def test_hopper_code_lives_in_the_sm90_files_alone():
    offenders = []
    for src in gpu_sources():
        files = [src] + sorted(local_includes(src))
        uses = any(HOPPER_MARKS.search(f.read_text(errors="ignore")) for f in files if f.suffix == ".hip") or any(
            str(h.relative_to(b)) in HOPPER_HEADERS for h in files[1:] for b in SEARCH if b in h.parents)
        if uses and not hopper_only(src):
            offenders.append(str(src.relative_to(ROOT)))
    assert not offenders, f"files with Hopper-only code not named *_sm90*.hip (compiled for sm_90a alone): {offenders}"


def test_the_sm90_files_are_reached_through_the_hopper_checks_only():
    # Their entry points are called where the device is sm_90 and the build has sm_90a code: the
    # checks below, each behind BWPROF_HAVE_SM90A.
    for check in ("bool gemm::wgmma_available(", "bool sm90_takes("):
        where = [p for p in gpu_sources() if check in p.read_text(errors="ignore")]
        assert len(where) == 1, (check, where)
        text = where[0].read_text()
        body = text[text.index(check):]
        body = body[:body.index("\n}\n")]
        assert "#if defined(BWPROF_HAVE_SM90A)" in body and '"sm_90"' in body, check
    picks = (ROOT / "kernels" / "mma_peak" / "gpu.hip").read_text()
    assert 'if (e == "wgmma" && sm != 90)' in picks and "#if !defined(BWPROF_HAVE_SM90A)" in picks


def test_code_for_a_minor_version_is_compiled_for_every_architecture():
    listed = minor_sources()
    offenders = []
    for src in gpu_sources():
        if hopper_only(src):
            continue
        text = "".join(f.read_text(errors="ignore") for f in [src] + sorted(local_includes(src)))
        minors = {int(v) for v in MINOR_GUARD.findall(text) if int(v) % 100 != 0}
        if minors and src not in listed:
            offenders.append((str(src.relative_to(ROOT)), sorted(minors)))
    assert not offenders, f"sources testing a minor version, missing from BWPROF_CUDA_MINOR_SOURCES: {offenders}"
    assert all(p.is_file() for p in listed), listed


def test_ci_compiles_the_build_s_own_commands_for_another_architecture():
    # .ci/cuda_arch_check.py rewrites a CUDA object's command from compile_commands.json.
    mod = _arch_check()
    src = "/t/kernels/gemm/mma_sm80.hip"
    cmd = ["ccache", "/usr/local/bin/nvcc", "-DBWPROF_WITH_GPU", "-I/t/kernels", "-O3", "-Xcicc", "-O0", "-Xptxas",
           "-O0", "--generate-code=arch=compute_90a,code=[sm_90a]", "-Xcompiler=-fPIC", "--threads=0", "-x", "cu",
           "-c", src, "-o", "x.o", "-MD", "-MT", "x.o", "-MF", "x.o.d"]
    out = mod.device_command(cmd, src, "100", Path("/o/y.cubin"), opt=3)
    assert out == ["/usr/local/bin/nvcc", "-DBWPROF_WITH_GPU", "-I/t/kernels", "-O3", "-x", "cu", "-cubin",
                   "-arch=sm_100", "-o", "/o/y.cubin", src]
    fast = mod.device_command(cmd, src, "80", Path("/o/z.cubin"), opt=0)
    assert fast[-9:] == ["-cubin", "-arch=sm_80", "-Xcicc", "-O0", "-Xptxas", "-O0", "-o", "/o/z.cubin", src]
    assert fast.count("-O0") == 2  # BUILD's own -O0 taken out, the check's put in
    # CI's build: cicc at -O1; the check's own level replaces it (one -Xcicc level, the last word)
    o1 = cmd[:6] + ["-O1"] + cmd[7:]
    assert o1[5:7] == ["-Xcicc", "-O1"]
    for opt, want in ((0, ["-Xcicc", "-O0", "-Xptxas", "-O0"]), (3, [])):
        got = mod.device_command(o1, src, "80", Path("/o/w.cubin"), opt=opt)
        assert "-O1" not in got and got[-3 - len(want):-3] == want, got
    # The thresholds a file's code tests, through the tree's headers (gpu_mma.hpp's >= 900).
    assert {800, 900} <= mod.guards(ROOT / "kernels" / "gemm" / "mma_sm80_f16_128x128.hip")
    assert 890 in mod.guards(ROOT / "kernels" / "mma_peak" / "nvidia.hip")
