#!/usr/bin/env bash
# Speed-of-light and occupancy of the GEMV kernels under ncu (one launch each), to see what bounds them.
py=${PYTHON:-python3}
for spec in "q4_0_matmul tiled M=1,N=14336,K=4096 bwprof_q4_0_matmul" "gemv gpu N=4096,K=4096 bwprof_gemv"; do
  set -- $spec
  ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats -k "regex:$4" -c 1 \
    $py -c "import bwprof; kw=dict(x.split('=') for x in '$3'.split(',')); kw={k:int(v) for k,v in kw.items()}; \
bwprof.measure('$1', device='gpu', dtype='fp16', variant='$2', repeats=1, warmup=0, min_time_s=0, verify=False, **kw)" 2>&1 \
    | grep -E "Duration|Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Waves Per" | head -20
done
