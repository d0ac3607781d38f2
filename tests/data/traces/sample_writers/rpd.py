"""rocmProfileData's older, unrelated "rocpd" (.rpd files), schema_version 2 as roctracer-era
rpd_tracer writes it.

Schema source (facts only): ``rocpd_python/rocpd/schema_data/tableSchema.cmd`` in
ROCm/rocmProfileData (rocpd_op, rocpd_api, rocpd_api_ops, rocpd_kernelapi, rocpd_string).
"""

import sqlite3
from pathlib import Path

from . import fast_writes

_RPD_TABLES = """
CREATE TABLE rocpd_metadata (id integer PRIMARY KEY AUTOINCREMENT, tag varchar(4096) NOT NULL,
  value varchar(4096) NOT NULL);
CREATE TABLE rocpd_string (id integer PRIMARY KEY AUTOINCREMENT, string varchar(4096) NOT NULL);
CREATE TABLE rocpd_api (id integer PRIMARY KEY AUTOINCREMENT, pid integer NOT NULL, tid integer NOT NULL,
  start integer NOT NULL, "end" integer NOT NULL, apiName_id bigint NOT NULL, args_id bigint NOT NULL);
CREATE TABLE rocpd_op (id integer PRIMARY KEY AUTOINCREMENT, gpuId integer NOT NULL, queueId integer NOT NULL,
  sequenceId integer NOT NULL, completionSignal varchar(18) NOT NULL, start integer NOT NULL,
  "end" integer NOT NULL, description_id bigint NOT NULL, opType_id bigint NOT NULL);
CREATE TABLE rocpd_api_ops (id integer PRIMARY KEY AUTOINCREMENT, api_id bigint NOT NULL,
  op_id bigint NOT NULL);
CREATE TABLE rocpd_kernelapi (api_ptr_id bigint NOT NULL PRIMARY KEY, stream varchar(18) NOT NULL,
  gridX integer NOT NULL, gridY integer NOT NULL, gridZ integer NOT NULL, workgroupX integer NOT NULL,
  workgroupY integer NOT NULL, workgroupZ integer NOT NULL, groupSegmentSize integer NOT NULL,
  privateSegmentSize integer NOT NULL, kernelArgAddress varchar(18), aquireFence varchar(8),
  releaseFence varchar(8), codeObject_id bigint, kernelName_id bigint NOT NULL);
CREATE TABLE rocpd_copyapi (api_ptr_id bigint NOT NULL PRIMARY KEY, stream varchar(18) NOT NULL,
  size integer NOT NULL, width integer, height integer, kind integer NOT NULL, dst varchar(18) NOT NULL,
  src varchar(18) NOT NULL, dstDevice integer NOT NULL, srcDevice integer NOT NULL, sync bool NOT NULL,
  pinned bool NOT NULL);
"""


def write_rpd_sample(path):
    """roctracer-era rpd: kernels (one launched as a graph Task), a copy, a fill, a barrier."""
    path = Path(path)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(str(path))
    con.execute("PRAGMA page_size = 1024")
    fast_writes(con)
    con.executescript(_RPD_TABLES)
    con.execute("INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '2')")
    strings = {}

    def s(text):
        if text not in strings:
            strings[text] = con.execute("INSERT INTO rocpd_string (string) VALUES (?)", (text,)).lastrowid
        return strings[text]

    s("")
    gemm = "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_1LDSB1"
    cat = ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>"
           "(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, "
           "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)")
    ops = [  # (pid, api name, op type, description, start, end, launch args)
        (3001, "hipExtModuleLaunchKernel", "KernelExecution", gemm, 5_000, 65_000,
         (1792, 782, 1, 256, 1, 1, 16384, 0)),
        (3001, "hipLaunchKernel", "KernelExecution", cat, 70_000, 76_240, (1, 2, 1, 128, 1, 1, 0, 0)),
        (3001, "hipGraphLaunch", "Task", cat, 80_000, 86_000, (1, 2, 1, 128, 1, 1, 0, 0)),
        (3001, "hipMemcpyAsync", "CopyHostToDevice", "", 1_000, 4_000, None),
        (3001, "hipMemsetAsync", "FillBuffer", "", 90_000, 91_500, None),
        (3001, "hipStreamWaitEvent", "Marker", "", 92_000, 92_000, None),
    ]
    base = 8_306_017_670_000_000
    for k, (pid, api, optype, desc, start, end, launch) in enumerate(ops):
        api_id = con.execute(
            'INSERT INTO rocpd_api (pid, tid, start, "end", apiName_id, args_id) VALUES (?, ?, ?, ?, ?, ?)',
            (pid, pid + 1, base + start - 900, base + start - 100, s(api), s(""))).lastrowid
        op_id = con.execute(
            'INSERT INTO rocpd_op (gpuId, queueId, sequenceId, completionSignal, start, "end", description_id, '
            "opType_id) VALUES (2, 0, ?, '', ?, ?, ?, ?)",
            (k, base + start, base + end, s(desc), s(optype))).lastrowid
        con.execute("INSERT INTO rocpd_api_ops (api_id, op_id) VALUES (?, ?)", (api_id, op_id))
        if launch:
            gx, gy, gz, wx, wy, wz, lds, scratch = launch
            con.execute(
                "INSERT INTO rocpd_kernelapi (api_ptr_id, stream, gridX, gridY, gridZ, workgroupX, workgroupY, "
                "workgroupZ, groupSegmentSize, privateSegmentSize, kernelArgAddress, aquireFence, releaseFence, "
                "codeObject_id, kernelName_id) VALUES (?, '0x0', ?, ?, ?, ?, ?, ?, ?, ?, '', '', '', '', ?)",
                (api_id, gx, gy, gz, wx, wy, wz, lds, scratch, s(desc)))
    con.commit()
    con.close()
