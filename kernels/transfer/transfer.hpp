// Transfers through the GPU runtime: copies between host and device memory (from pinned or
// pageable host memory), a device-to-device copy and a memset, each one runtime call timed like
// a kernel. Host copies are bound by the GPU's host link (PCIe or chip-to-chip), which judges them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "bwprof/kernel.hpp"
#include "common/reference.hpp"

namespace bwprof {

// The byte every memset writes (and checks).
constexpr std::uint8_t kMemsetByte = 0x5a;

// The GPU variants (family.cpp registers them in GPU builds; there is no CPU variant).
std::unique_ptr<KernelInstance> make_transfer_gpu(Backend&, const Problem&);

}  // namespace bwprof
