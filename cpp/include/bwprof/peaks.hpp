// The peaks policy: a device's achievable peaks, measured by the registry's ceiling variants.
// Memory: the best of every variant flagged Ceiling::kMemory for the backend's kind (bwprof's
// stream kernels), FP32. Compute, per arithmetic type (Peaks::vector): the variants flagged
// Ceiling::kVector (the FMA chains) for each dtype they take on the backend (FP32; FP16 as packed
// HFMA2 on a GPU). The families that list their runs (KernelFamily::ceiling_runs) add the rest:
// FP64 and packed BF16 chains (kVector), the matrix units per arithmetic type (kMatrix: fp16,
// bf16, tf32, fp8, int8) and the cache levels (kL2, kL1, kShared: read and read+write over a
// working set sized to the level). A run that fails (an arithmetic this build or device lacks, an
// output that fails its reference) leaves its roof at 0 and says why in its source. Theoretical
// figures come from the device. The size-aware memory ceiling (Peaks::size_curve,
// bwprof/size_curve.hpp) is measured with them by the memory ceilings that name a size parameter.
// A memory hierarchy out of order is measured again once, then flagged (settle_hierarchy).
// Measured once per device and process.
#pragma once
#include <functional>
#include <vector>

#include "bwprof/backend.hpp"
#include "bwprof/dtype.hpp"
#include "bwprof/measurement.hpp"

namespace bwprof {

// The peaks of the device behind `backend` for `dtype`; `refresh` forgets the cached figures of
// that device and measures them again (later calls then return the new ones). The compute roof
// (gflops) is that of the dtype's default arithmetic (default_arithmetic: FP32 on the vector units
// for every dtype), with `compute_arithmetic` naming it; `vector` and `matrix` hold every type's.
Peaks device_peaks(Backend& backend, DType dtype, bool refresh = false);

// The memory hierarchy's order in `p`: L1 and shared memory (LDS) against the L2, the L2 against
// DRAM (past a level not measured, the next one out), each level by its best figure (read or
// read + write), DRAM by the best stream kernel. One finding for each inner level measured slower
// than the level outside it; empty when in order.
std::vector<HierarchyFinding> hierarchy_findings(const Peaks& p);

// The policy for a hierarchy out of order: `remeasure` takes DRAM and the levels again (the
// bandwidth figures and `levels` of the Peaks it returns are read), once; each figure becomes the
// better of its two takes (a peak is the best a kernel reached). Still out of order, the findings
// go to p.hierarchy_disorder: flagged, never silently kept. In order, remeasure is not called.
void settle_hierarchy(Peaks& p, const std::function<Peaks()>& remeasure);

}  // namespace bwprof
