"""Nsight Systems ``nsys export --type sqlite``, schema 3.28.

Schema source (facts only): the SQLite Schema Reference of the Nsight Systems documentation
(CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET, StringIds, TARGET_INFO_GPU, ENUM_CUDA_MEMCPY_OPER,
META_DATA_EXPORT; globalPid = pid << 24).
"""

import sqlite3
from pathlib import Path

from . import fast_writes

_NSYS_TABLES = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, graphId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER,
  dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER,
  virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
"""

NSYS_PIDS = (52001, 52002)


def write_nsys_sample(path, schema_version="3.28.1"):
    """Two processes on two H100s: GEMM, flash attention (one replayed from a CUDA graph),
    layer norm, a copy and a memset; globalPid holds the pid in bits 24..47."""
    path = Path(path)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(str(path))
    con.execute("PRAGMA page_size = 1024")
    fast_writes(con)
    con.executescript(_NSYS_TABLES)
    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', ?)", (schema_version,))
    for dev in (0, 1):
        con.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, smCount, cuDevice, computeMajor, "
                    "computeMinor) VALUES (0, ?, 'NVIDIA H100 80GB HBM3', ?, 132, ?, 9, 0)",
                    (dev, f"0000:{0x19 + dev:02x}:00.0", dev))
    for k, name, label in ((1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
                           (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"),
                           (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device")):
        con.execute("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", (k, name, label))
    names = {}

    def sid(text):
        if text not in names:
            names[text] = 100 + len(names)
            con.execute("INSERT INTO StringIds VALUES (?, ?)", (names[text], text))
        return names[text]

    gemm = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off"
    flash = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>, " \
            "false, false, false, false, true, true, false>(Flash_fwd_params)"
    norm = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>" \
           "(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)"
    short = {gemm: gemm, flash: "flash_fwd_kernel", norm: "vectorized_layer_norm_kernel"}
    kernels = [  # (pid, device, start, end, name, grid, block, regs, static smem, dynamic smem, graph node)
        (0, 0, 1_000, 81_000, gemm, (132, 1, 1), (384, 1, 1), 168, 0, 213_248, None),
        (0, 0, 82_000, 122_000, flash, (16, 32, 1), (128, 1, 1), 255, 0, 49_152, None),
        (0, 0, 123_000, 128_000, norm, (4096, 1, 1), (128, 1, 1), 30, 24, 0, None),
        (0, 0, 130_000, 170_000, flash, (16, 32, 1), (128, 1, 1), 255, 0, 49_152, 7),
        (1, 1, 2_000, 62_000, gemm, (132, 1, 1), (384, 1, 1), 168, 0, 213_248, None),
    ]
    for corr, (p, dev, start, end, name, grid, block, regs, smem, dsmem, node) in enumerate(kernels, 1):
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
            "globalPid, demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, "
            "blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, "
            "gridId, graphNodeId, graphId) VALUES (?, ?, ?, 1, 7, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "0, 0, ?, ?, ?)",
            (start, end, dev, corr, NSYS_PIDS[p] << 24, sid(name), sid(short[name]), regs, *grid, *block, smem,
             dsmem, corr, node, 3 if node else None))
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (200, 900, 0, 1, 7, 90, ?, 4194304, 1, 1, 2)",
                (NSYS_PIDS[0] << 24,))
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, value, bytes, memKind) VALUES (950, 990, 0, 1, 7, 91, ?, 0, 65536, 2)",
                (NSYS_PIDS[0] << 24,))
    con.commit()
    con.close()
