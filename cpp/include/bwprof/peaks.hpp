// The peaks policy: a device's achievable peaks, measured by the registry's ceiling variants.
// Memory: the best of every variant flagged Ceiling::kMemory for the backend's kind (bwprof's
// stream kernels), FP32. Compute, per dtype: the variants flagged Ceiling::kVector (the FMA
// chains); a backend without a variant for the dtype (the CPU computes FP16 in FP32) takes FP32's.
// Theoretical figures come from the device. The size-aware memory ceiling (Peaks::size_curve,
// bwprof/size_curve.hpp) is measured with them by the memory ceilings that name a size parameter.
// Measured once per device and process.
#pragma once
#include "bwprof/backend.hpp"
#include "bwprof/dtype.hpp"
#include "bwprof/measurement.hpp"

namespace bwprof {

// The peaks of the device behind `backend` for `dtype`; `refresh` forgets the cached figures of
// that device and measures them again (later calls then return the new ones).
Peaks device_peaks(Backend& backend, DType dtype, bool refresh = false);

}  // namespace bwprof
