"""rocpd (rocprofiler-sdk), schema_version 3 as ROCm 7 rocprofv3 writes it.

Schema sources (facts only): ``source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql``,
``rocpd_views.sql`` and ``data_views.sql`` in ROCm/rocprofiler-sdk, and the ``.schema`` of a
database written by ROCm 7 rocprofv3. Tables carry a ``_<uuid>`` suffix and are read through
same-named views without it; the ``kernels`` view joins dispatches with agents, kernel symbols,
events, queues, streams, processes and threads.

``write_big_rocpd`` is also used by benchmarks/trace_read_speed.py for a million dispatches.
"""

import json
import sqlite3
from pathlib import Path

from . import fast_writes

ROCPD_UUID = "0000a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b"
ROCPD_GUID = ROCPD_UUID.replace("_", "-")

J = "JSONB DEFAULT '{}' NOT NULL"
_ROCPD_TABLES = {
    "rocpd_metadata": ["id INTEGER PRIMARY KEY AUTOINCREMENT", "tag TEXT NOT NULL", "value TEXT NOT NULL"],
    "rocpd_string": ["string TEXT NOT NULL UNIQUE"],
    "rocpd_info_node": ["hash BIGINT NOT NULL UNIQUE", "machine_id TEXT NOT NULL UNIQUE", "system_name TEXT",
                        "hostname TEXT", "release TEXT", "version TEXT", "hardware_name TEXT",
                        "domain_name TEXT"],
    "rocpd_info_process": ["nid INTEGER NOT NULL", "ppid INTEGER", "pid INTEGER NOT NULL", "init BIGINT",
                           "fini BIGINT", '"start" BIGINT', '"end" BIGINT', "command TEXT",
                           f"environment {J}", f"extdata {J}"],
    "rocpd_info_thread": ["nid INTEGER NOT NULL", "ppid INTEGER", "pid INTEGER NOT NULL",
                          "tid INTEGER NOT NULL", "name TEXT", '"start" BIGINT', '"end" BIGINT',
                          f"extdata {J}"],
    "rocpd_info_agent": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL",
                         "type TEXT CHECK (type IN ('CPU', 'GPU'))", "absolute_index INTEGER",
                         "logical_index INTEGER", "type_index INTEGER", "uuid INTEGER", "name TEXT",
                         "model_name TEXT", "vendor_name TEXT", "product_name TEXT", "user_name TEXT",
                         f"extdata {J}"],
    "rocpd_info_queue": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "name TEXT", f"extdata {J}"],
    "rocpd_info_stream": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "name TEXT", f"extdata {J}"],
    "rocpd_info_pmc": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "agent_id INTEGER",
                       "target_arch TEXT", "event_code INT", "instance_id INTEGER", "name TEXT NOT NULL",
                       "symbol TEXT NOT NULL", "description TEXT", "long_description TEXT DEFAULT ''",
                       "component TEXT", "units TEXT DEFAULT ''", "value_type TEXT", "block TEXT",
                       "expression TEXT", "is_constant INTEGER", "is_derived INTEGER", f"extdata {J}"],
    "rocpd_info_code_object": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "agent_id INTEGER",
                               "uri TEXT", "load_base BIGINT", "load_size BIGINT", "load_delta BIGINT",
                               "storage_type TEXT", f"extdata {J}"],
    "rocpd_info_kernel_symbol": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL",
                                 "code_object_id INTEGER NOT NULL", "kernel_name TEXT", "display_name TEXT",
                                 "kernel_object INTEGER", "kernarg_segment_size INTEGER",
                                 "kernarg_segment_alignment INTEGER", "group_segment_size INTEGER",
                                 "private_segment_size INTEGER", "sgpr_count INTEGER",
                                 "arch_vgpr_count INTEGER", "accum_vgpr_count INTEGER", f"extdata {J}"],
    "rocpd_track": ["nid INTEGER NOT NULL", "pid INTEGER", "tid INTEGER", "name_id INTEGER", f"extdata {J}"],
    "rocpd_event": ["category_id INTEGER", "stack_id INTEGER", "parent_stack_id INTEGER",
                    "correlation_id INTEGER", f"call_stack {J}", f"line_info {J}", f"extdata {J}"],
    "rocpd_arg": ["event_id INTEGER NOT NULL", "position INTEGER NOT NULL", "type TEXT NOT NULL",
                  "name TEXT NOT NULL", "value TEXT", f"extdata {J}"],
    "rocpd_pmc_event": ["event_id INTEGER", "pmc_id INTEGER NOT NULL", "value REAL DEFAULT 0.0",
                        "extdata JSONB DEFAULT '{}'"],
    "rocpd_region": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "tid INTEGER NOT NULL",
                     '"start" BIGINT NOT NULL', '"end" BIGINT NOT NULL', "name_id INTEGER NOT NULL",
                     "event_id INTEGER", f"extdata {J}"],
    "rocpd_sample": ["track_id INTEGER NOT NULL", "timestamp BIGINT NOT NULL", "event_id INTEGER",
                     f"extdata {J}"],
    "rocpd_kernel_dispatch": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "tid INTEGER",
                              "agent_id INTEGER NOT NULL", "kernel_id INTEGER NOT NULL",
                              "dispatch_id INTEGER NOT NULL", "queue_id INTEGER NOT NULL",
                              "stream_id INTEGER NOT NULL", '"start" BIGINT NOT NULL',
                              '"end" BIGINT NOT NULL', "private_segment_size INTEGER",
                              "group_segment_size INTEGER", "workgroup_size_x INTEGER NOT NULL",
                              "workgroup_size_y INTEGER NOT NULL", "workgroup_size_z INTEGER NOT NULL",
                              "grid_size_x INTEGER NOT NULL", "grid_size_y INTEGER NOT NULL",
                              "grid_size_z INTEGER NOT NULL", "region_name_id INTEGER",
                              "event_id INTEGER", f"extdata {J}"],
    "rocpd_memory_copy": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "tid INTEGER",
                          '"start" BIGINT NOT NULL', '"end" BIGINT NOT NULL', "name_id INTEGER NOT NULL",
                          "dst_agent_id INTEGER", "dst_address INTEGER", "src_agent_id INTEGER",
                          "src_address INTEGER", "size INTEGER NOT NULL", "queue_id INTEGER",
                          "stream_id INTEGER", "region_name_id INTEGER", "event_id INTEGER",
                          f"extdata {J}"],
    "rocpd_memory_allocate": ["nid INTEGER NOT NULL", "pid INTEGER NOT NULL", "tid INTEGER",
                              "agent_id INTEGER", "type TEXT", "level TEXT", '"start" BIGINT NOT NULL',
                              '"end" BIGINT NOT NULL', "address INTEGER", "size INTEGER NOT NULL",
                              "queue_id INTEGER", "stream_id INTEGER", "event_id INTEGER",
                              f"extdata {J}"],
}

# The views a reader uses, with the column names ROCm 7's rocpd writes (one SELECT per view;
# the joins follow the ids: dispatch.pid -> process row, dispatch.tid -> thread row, ...).
_KERNELS_VIEW = """
CREATE VIEW kernels AS SELECT
  K.id, K.guid, T.tid,
  (SELECT string FROM rocpd_string RS WHERE RS.id = E.category_id AND RS.guid = E.guid) AS category,
  R.string AS region, S.display_name AS name, K.nid, P.pid,
  A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
  A.type_index AS agent_type_index, A.type AS agent_type, S.code_object_id AS code_object_id,
  K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id, Q.name AS queue, ST.name AS stream,
  K.start, K.end, (K.end - K.start) AS duration,
  K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z,
  K.workgroup_size_x AS workgroup_x, K.workgroup_size_y AS workgroup_y,
  K.workgroup_size_z AS workgroup_z, K.group_segment_size AS lds_size,
  K.private_segment_size AS scratch_size, S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count,
  S.sgpr_count, S.group_segment_size AS static_lds_size,
  S.private_segment_size AS static_scratch_size, E.stack_id, E.parent_stack_id,
  E.correlation_id AS corr_id
FROM rocpd_kernel_dispatch K
  JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid
  JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
  JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid
  JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid
  LEFT JOIN rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid
  LEFT JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid
  JOIN rocpd_info_process P ON P.id = Q.pid AND P.guid = Q.guid
  JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid;
"""

_COPIES_VIEW = """
CREATE VIEW memory_copies AS SELECT
  M.id, M.guid,
  (SELECT string FROM rocpd_string RS WHERE RS.id = E.category_id AND RS.guid = E.guid) AS category,
  M.nid, P.pid, T.tid, M.start, M.end, (M.end - M.start) AS duration, S.string AS name,
  R.string AS region_name, M.stream_id, M.queue_id, ST.name AS stream_name, Q.name AS queue_name,
  M.size, DA.name AS dst_device, DA.absolute_index AS dst_agent_abs_index,
  DA.logical_index AS dst_agent_log_index, DA.type_index AS dst_agent_type_index,
  DA.type AS dst_agent_type, M.dst_address, SA.name AS src_device,
  SA.absolute_index AS src_agent_abs_index, SA.logical_index AS src_agent_log_index,
  SA.type_index AS src_agent_type_index, SA.type AS src_agent_type, M.src_address,
  E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id
FROM rocpd_memory_copy M
  JOIN rocpd_string S ON S.id = M.name_id AND S.guid = M.guid
  LEFT JOIN rocpd_string R ON R.id = M.region_name_id AND R.guid = M.guid
  JOIN rocpd_info_agent DA ON DA.id = M.dst_agent_id AND DA.guid = M.guid
  JOIN rocpd_info_agent SA ON SA.id = M.src_agent_id AND SA.guid = M.guid
  LEFT JOIN rocpd_info_queue Q ON Q.id = M.queue_id AND Q.guid = M.guid
  LEFT JOIN rocpd_info_stream ST ON ST.id = M.stream_id AND ST.guid = M.guid
  JOIN rocpd_event E ON E.id = M.event_id AND E.guid = M.guid
  JOIN rocpd_info_process P ON P.id = M.pid AND P.guid = M.guid
  JOIN rocpd_info_thread T ON T.id = M.tid AND T.guid = M.guid;
"""


class Rocpd:
    """Builds a rocpd database: tables with the uuid suffix, views without, ids as rocprofv3."""

    def __init__(self, path, schema_version="3", uuid=ROCPD_UUID, page_size=1024, views=True):
        path = Path(path)
        if path.exists():
            path.unlink()
        self.con = sqlite3.connect(str(path))
        self.con.execute(f"PRAGMA page_size = {page_size}")
        fast_writes(self.con)
        self.uuid, self.guid = uuid, uuid.replace("_", "-")
        for table, cols in _ROCPD_TABLES.items():
            body = cols if table == "rocpd_metadata" else (
                ["id INTEGER PRIMARY KEY AUTOINCREMENT", f"guid TEXT DEFAULT '{self.guid}' NOT NULL"] + cols)
            self.con.execute(f'CREATE TABLE "{table}_{uuid}" ({", ".join(body)})')
            self.con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM "{table}_{uuid}"')
        if views:
            self.con.executescript(_KERNELS_VIEW + _COPIES_VIEW)
        for tag, value in (("schema_version", schema_version), ("uuid", uuid), ("guid", self.guid)):
            self.con.execute(f'INSERT INTO "rocpd_metadata_{uuid}" (tag, value) VALUES (?, ?)', (tag, value))
        self.strings = {}
        self.node = self.insert("rocpd_info_node", hash=42, machine_id="c0ffee", system_name="Linux",
                                hostname="mi300-node", release="6.8.0", version="#1 SMP",
                                hardware_name="x86_64")

    def insert(self, table, **values):
        cols = ", ".join(f'"{k}"' for k in values)
        marks = ", ".join("?" for _ in values)
        cur = self.con.execute(f'INSERT INTO "{table}_{self.uuid}" ({cols}) VALUES ({marks})',
                               tuple(values.values()))
        return cur.lastrowid

    def string(self, text):
        if text not in self.strings:
            self.strings[text] = self.insert("rocpd_string", string=text)
        return self.strings[text]

    def process(self, pid, command="python3 serve.py"):
        p = self.insert("rocpd_info_process", nid=self.node, ppid=1, pid=pid, init=0, fini=0,
                        start=0, end=0, command=command)
        t = self.insert("rocpd_info_thread", nid=self.node, ppid=1, pid=p, tid=pid, name="main")
        q = self.insert("rocpd_info_queue", nid=self.node, pid=p, name="queue 0")
        s = self.insert("rocpd_info_stream", nid=self.node, pid=p, name="stream 0")
        return {"process": p, "thread": t, "queue": q, "stream": s, "pid": pid}

    def agents(self, proc, gpus=2, product="AMD Instinct MI300X", cu_count=304):
        """One CPU agent and ``gpus`` GPU agents of one process; returns the GPU agent row ids."""
        self.insert("rocpd_info_agent", nid=self.node, pid=proc["process"], type="CPU", absolute_index=0,
                    logical_index=0, type_index=0, name="AMD EPYC 9654", product_name="AMD EPYC 9654",
                    extdata=json.dumps({"cpu_cores_count": 96}))
        ids = []
        for g in range(gpus):
            ids.append(self.insert(
                "rocpd_info_agent", nid=self.node, pid=proc["process"], type="GPU",
                absolute_index=g + 1, logical_index=g + 1, type_index=g, name="gfx942",
                model_name="aqua_vanjaram", vendor_name="AMD", product_name=product,
                extdata=json.dumps({"cu_count": cu_count, "wave_front_size": 64, "simd_per_cu": 4,
                                    "max_engine_clk_fcompute": 2100})))
        return ids

    def symbol(self, proc, name, vgpr, agpr=0, sgpr=32, lds=0, scratch=0, display=None):
        co = self.insert("rocpd_info_code_object", nid=self.node, pid=proc["process"], agent_id=None,
                         uri="file:///opt/app/kernels.co", storage_type="FILE")
        return self.insert("rocpd_info_kernel_symbol", nid=self.node, pid=proc["process"], code_object_id=co,
                           kernel_name=name + ".kd", display_name=display or name,
                           group_segment_size=lds, private_segment_size=scratch, sgpr_count=sgpr,
                           arch_vgpr_count=vgpr, accum_vgpr_count=agpr)

    def event(self, stack_id, corr=0, category="KERNEL_DISPATCH"):
        return self.insert("rocpd_event", category_id=self.string(category), stack_id=stack_id,
                           parent_stack_id=stack_id, correlation_id=corr)

    def dispatch(self, proc, agent, symbol, dispatch_id, start, end, grid, block, lds=0, scratch=0,
                 stack_id=None, region=None):
        ev = self.event(dispatch_id if stack_id is None else stack_id)
        return self.insert(
            "rocpd_kernel_dispatch", nid=self.node, pid=proc["process"], tid=proc["thread"], agent_id=agent,
            kernel_id=symbol, dispatch_id=dispatch_id, queue_id=proc["queue"], stream_id=proc["stream"],
            start=start, end=end, private_segment_size=scratch, group_segment_size=lds,
            workgroup_size_x=block[0], workgroup_size_y=block[1], workgroup_size_z=block[2],
            grid_size_x=grid[0], grid_size_y=grid[1], grid_size_z=grid[2],
            region_name_id=self.string(region or "kernel"), event_id=ev), ev

    def counter(self, proc, agent, name):
        return self.insert("rocpd_info_pmc", nid=self.node, pid=proc["process"], agent_id=agent,
                           target_arch="GPU", name=name, symbol=name, description=name, block="SQ",
                           value_type="ABS", is_constant=0, is_derived=0)

    def pmc(self, event, pmc, value):
        self.insert("rocpd_pmc_event", event_id=event, pmc_id=pmc, value=value)

    def copy(self, proc, name, start, end, size, src, dst, stack_id):
        ev = self.event(stack_id, category="MEMORY_COPY")
        self.insert("rocpd_memory_copy", nid=self.node, pid=proc["process"], tid=proc["thread"], start=start,
                    end=end, name_id=self.string(name), dst_agent_id=dst, src_agent_id=src, size=size,
                    queue_id=proc["queue"], stream_id=proc["stream"], event_id=ev)

    def close(self):
        self.con.commit()
        self.con.close()


def write_rocpd_sample(path):
    """Two processes on two MI300X GPUs: GEMM, attention, elementwise, counters, a copy.

    Grid sizes are work-items as in the AQL packet (rocprofiler-sdk's dispatch_info.grid_size):
    1048576 x 1 x 1 items in 256-item workgroups are 4096 workgroups.
    """
    db = Rocpd(path)
    a = db.process(4101, "python3 serve.py --rank 0")
    b = db.process(4102, "python3 serve.py --rank 1")
    ga = db.agents(a)                      # GPU 0, GPU 1 as seen by process a
    gb = db.agents(b)
    gemm_a = db.symbol(a, "Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1", vgpr=128, agpr=128, sgpr=96,
                       lds=32768)
    silu_a = db.symbol(a, "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel"
                          "(at::TensorIteratorBase&)::{lambda()#1}>(int, float*)", vgpr=24, sgpr=16)
    attn_b = db.symbol(b, "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>(Flash_fwd_params)",
                       vgpr=96, agpr=32, sgpr=64, lds=65536)
    gemm_b = db.symbol(b, "Cijk_Ailk_Bljk_HHS_BH_MT256x128x64_MI32x32x8x1", vgpr=128, agpr=128, sgpr=96,
                       lds=32768)
    waves = db.counter(a, ga[0], "SQ_WAVES")
    t0 = 1_000_000_000
    # process a on GPU 0: GEMM 400 us twice, SiLU 20 us; the second GEMM came from a HIP graph
    # (rocpd records it as an ordinary dispatch).
    _, e1 = db.dispatch(a, ga[0], gemm_a, 1, t0, t0 + 400_000, (65536, 8, 1), (256, 1, 1), lds=32768,
                        stack_id=11)
    _, e2 = db.dispatch(a, ga[0], silu_a, 2, t0 + 401_000, t0 + 421_000, (1000, 1, 1), (256, 1, 1),
                        stack_id=12)
    _, e3 = db.dispatch(a, ga[0], gemm_a, 3, t0 + 430_000, t0 + 830_000, (65536, 8, 1), (256, 1, 1),
                        lds=32768, stack_id=13, region="hipGraphLaunch")
    for ev, v in ((e1, 1024.0), (e2, 2.0), (e3, 1024.0)):
        db.pmc(ev, waves, v)          # two XCD instances per dispatch: the reader sums them
        db.pmc(ev, waves, v)
    # process b on GPU 1: attention 250 us, GEMM 300 us, and a 1 MiB host-to-device copy.
    db.dispatch(b, gb[1], attn_b, 1, t0 + 100_000, t0 + 350_000, (4096, 16, 1), (256, 1, 1), lds=65536,
                scratch=512, stack_id=21)
    db.dispatch(b, gb[1], gemm_b, 2, t0 + 360_000, t0 + 660_000, (65536, 8, 1), (256, 1, 1), lds=32768,
                stack_id=22)
    cpu_b = gb[0] - 1                      # the CPU agent row of process b
    db.copy(b, "MEMORY_COPY_HOST_TO_DEVICE", t0 + 50_000, t0 + 90_000, 1 << 20, cpu_b, gb[1], stack_id=20)
    db.close()


def write_big_rocpd(path, dispatches, kernels=40, gpus=2):
    """A single-process rocpd database with ``dispatches`` kernel dispatches (for timing)."""
    db = Rocpd(path, page_size=4096)
    p = db.process(7000)
    gpu = db.agents(p, gpus=gpus)
    syms = [db.symbol(p, f"void model_kernel_{k}<float, {64 * (k % 4 + 1)}>(float const*, float*, int)",
                      vgpr=32 + k, sgpr=24) for k in range(kernels)]
    region = db.string("kernel")
    cat = db.string("KERNEL_DISPATCH")
    u = db.uuid
    db.con.executemany(
        f'INSERT INTO "rocpd_event_{u}" (id, category_id, stack_id, parent_stack_id, correlation_id) '
        "VALUES (?, ?, ?, ?, 0)", ((i + 1, cat, i + 1, i + 1) for i in range(dispatches)))
    base = 10 ** 15

    def rows():
        for i in range(dispatches):
            k = i % kernels
            start = base + 3000 * i
            yield (db.node, p["process"], p["thread"], gpu[i % gpus], syms[k], i + 1, p["queue"], p["stream"],
                   start, start + 1000 + 37 * k, 0, 1024 * (k % 3), 256, 1, 1, 256 * (64 + k), 1, 1,
                   region, i + 1)

    db.con.executemany(
        f'INSERT INTO "rocpd_kernel_dispatch_{u}" (nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, '
        'stream_id, "start", "end", private_segment_size, group_segment_size, workgroup_size_x, '
        "workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) "
        f"VALUES ({', '.join('?' * 20)})", rows())
    db.close()
