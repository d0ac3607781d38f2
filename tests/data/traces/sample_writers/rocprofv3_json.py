"""rocprofv3 ``--output-format json``.

Schema source (facts only): ``source/docs/rocprofv3-schema.json`` in ROCm/rocprofiler-sdk.
"""

import json
from pathlib import Path


def rocprofv3_json_doc():
    """One process, one GPU: two kernels, one copy, SQ_WAVES counters for one dispatch."""
    gpu, cpu = {"handle": 2}, {"handle": 1}
    kernel_names = ["", "void bwprof_stream_copy<float>(float const*, float*, unsigned long)",
                    "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1"]
    symbols = [{"size": 0, "kernel_id": 0, "kernel_name": ""}] + [
        {"size": 128, "kernel_id": k, "code_object_id": 1, "kernel_name": kernel_names[k] + ".kd",
         "formatted_kernel_name": kernel_names[k], "demangled_kernel_name": kernel_names[k],
         "truncated_kernel_name": kernel_names[k].split("<")[0], "group_segment_size": 0,
         "private_segment_size": 0, "arch_vgpr_count": 16 * k, "accum_vgpr_count": 0, "sgpr_count": 24}
        for k in (1, 2)]

    def dispatch(k, dispatch_id, start, end, grid, block, corr, lds=0):
        return {"size": 104, "kind": 1, "operation": 1, "thread_id": 9001,
                "correlation_id": {"internal": corr, "external": 0},
                "start_timestamp": start, "end_timestamp": end,
                "dispatch_info": {"size": 72, "agent_id": gpu, "queue_id": {"handle": 77}, "kernel_id": k,
                                  "dispatch_id": dispatch_id, "private_segment_size": 0,
                                  "group_segment_size": lds,
                                  "workgroup_size": dict(zip("xyz", block)),
                                  "grid_size": dict(zip("xyz", grid))}}

    return {"rocprofiler-sdk-tool": [{
        "metadata": {"pid": 9001, "init_time": 100, "fini_time": 9_000_000},
        "agents": [
            {"size": 1, "id": cpu, "type": 1, "node_id": 0, "logical_node_id": 0, "logical_node_type_id": 0,
             "name": "AMD EPYC 9654", "product_name": "AMD EPYC 9654", "cu_count": 0},
            {"size": 1, "id": gpu, "type": 2, "node_id": 1, "logical_node_id": 1, "logical_node_type_id": 0,
             "name": "gfx942", "product_name": "AMD Instinct MI300X", "cu_count": 304, "wave_front_size": 64},
        ],
        "counters": [{"agent_id": gpu, "id": {"handle": 5}, "is_constant": 0, "is_derived": 0,
                      "name": "SQ_WAVES", "description": "waves", "block": "SQ", "expression": "",
                      "dimension_ids": []}],
        "strings": {"callback_records": [],
                    "buffer_records": [{"kind": "NONE", "operations": []},
                                       {"kind": "KERNEL_DISPATCH", "operations": ["NONE", "KERNEL_DISPATCH_COMPLETE"]},
                                       {"kind": "MEMORY_COPY",
                                        "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST",
                                                       "MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                                                       "MEMORY_COPY_DEVICE_TO_DEVICE"]}],
                    "marker_api": [], "counters": {"dimension_ids": []}},
        "code_objects": [{"size": 1, "code_object_id": 1, "uri": "file:///opt/app/app.co"}],
        "kernel_symbols": symbols,
        "callback_records": {"counter_collection": [
            {"dispatch_data": {"size": 1, "correlation_id": {"internal": 501, "external": 0},
                               "dispatch_info": {"size": 1, "agent_id": gpu, "queue_id": {"handle": 77},
                                                 "kernel_id": 1, "dispatch_id": 1}},
             "records": [{"counter_id": {"handle": 5}, "value": 2048.0},
                         {"counter_id": {"handle": 5}, "value": 2048.0}],
             "thread_id": 9001, "arch_vgpr_count": 16, "sgpr_count": 24, "lds_block_size_v": 0}]},
        "buffer_records": {
            "kernel_dispatch": [
                dispatch(1, 1, 5_000_000, 5_010_000, (1048576, 1, 1), (256, 1, 1), 501),
                dispatch(2, 2, 5_020_000, 5_520_000, (8192, 64, 1), (256, 1, 1), 502, lds=16384),
                dispatch(1, 3, 5_600_000, 5_611_000, (1048576, 1, 1), (256, 1, 1), 503),
            ],
            "memory_copy": [{"size": 1, "kind": 2, "operation": 2, "thread_id": 9001,
                             "correlation_id": {"internal": 500, "external": 0},
                             "start_timestamp": 4_000_000, "end_timestamp": 4_250_000,
                             "dst_agent_id": gpu, "src_agent_id": cpu, "bytes": 8388608}],
            "hip_api": [], "hsa_api": [], "marker_api": [], "rccl_api": [], "scratch_memory": [],
        },
    }]}


def write_rocprofv3_json_sample(path):
    Path(path).write_text(json.dumps(rocprofv3_json_doc(), indent=1) + "\n")
