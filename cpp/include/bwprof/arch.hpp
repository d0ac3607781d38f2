// The one table of GPU architectures: what each unit (SM, CU) computes per clock, and the
// resources the occupancy calculator counts. The GPU backend's theoretical peaks and the
// occupancy calculator both read it; the numbers and their sources are in cpp/src/core/arch.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bwprof {

enum class GpuVendor { kNvidia, kAmd };

// The per-SM (NVIDIA) or per-CU / per-WGP (AMD) resources of one architecture, as the hardware
// hands them to resident blocks. Register and shared-memory figures follow each vendor's own
// allocation rules: see the field comments.
struct ArchLimits {
  std::string name;     // "sm_90", "gfx942"
  std::string family;   // "Hopper", "CDNA3", "RDNA3"
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string unit;     // what one occupancy figure is for: "SM", "CU" or "WGP"
  int wave_size = 32;   // threads per warp / wavefront
  int max_threads_per_block = 1024;
  int max_warps = 0;    // resident warps (waves) per unit: warp slots
  int max_blocks = 0;   // resident blocks (workgroups) per unit: block slots
  // AMD: a one-wave workgroup needs no barrier, so the workgroup limit does not apply to it.
  bool single_wave_blocks_skip_block_limit = false;

  // Registers. Allocation happens per partition (NVIDIA: SM sub-partition; AMD: SIMD), so the
  // warps that fit are partitions * floor(registers_per_partition / allocated-per-warp).
  int register_partitions = 4;
  // NVIDIA: 32-bit registers per sub-partition; AMD: VGPRs per lane of one SIMD.
  int registers_per_partition = 0;
  // NVIDIA: a warp's registers (per thread * 32) are rounded up to this many; AMD: a wave's
  // VGPRs per lane are rounded up to this granule.
  int register_alloc_unit = 0;
  bool registers_counted_per_warp = true;  // NVIDIA true (regs * warp size), AMD false (per lane)
  int max_registers_per_thread = 255;
  int max_registers_per_block = 0;         // NVIDIA 65536; 0: no such limit (AMD)

  // Shared memory (NVIDIA) / LDS (AMD), bytes.
  std::int64_t shared_mem_per_unit = 0;    // the largest carve-out (NVIDIA), LDS per CU/WGP (AMD)
  std::vector<std::int64_t> carveouts;     // NVIDIA's selectable shared-memory sizes; empty on AMD
  std::int64_t shared_mem_alloc_unit = 0;  // a block's use is rounded up to this
  std::int64_t shared_mem_reserved_per_block = 0;  // the driver's own 1 KB per block on sm_80+
  std::int64_t max_shared_mem_per_block = 0;       // what one block may ask for (opt-in maximum)

  // RDNA only: wave64 halves the VGPR budget and granule; CU mode halves the WGP.
  bool has_wave64_option = false;
  int wave64_registers_per_partition = 0;
  int wave64_register_alloc_unit = 0;
  bool has_cu_mode = false;
  std::string source;  // where these numbers come from
};

// FLOPs per clock per SM/CU (dense), from the vendors' whitepapers and datasheets. Matrix rates are
// those of FP32 accumulation on data-center and workstation parts (rates_for_device for GeForce).
struct ArchRates {
  double fp32 = 0;         // FP32 on the vector units
  double fp16 = 0;         // FP16 on the vector units
  double fp16_matrix = 0;  // FP16 on the matrix units (tensor cores, MFMA, WMMA)
  // The other arithmetic types (0: no such unit, or not in the table): FP64 and packed BF16 on the
  // vector units, and on the matrix units BF16 (FP32 accumulation), TF32, FP8 (e4m3) and INT8 (ops
  // per clock).
  double fp64 = 0, bf16 = 0, bf16_matrix = 0, tf32_matrix = 0, fp8_matrix = 0, int8_matrix = 0;
};

struct Arch {
  std::string name;  // "sm_90", "gfx942": what normalize_arch() returns
  ArchRates rates;
  // Occupancy limits, where the table has them; an architecture with rates only reports
  // "unknown architecture" to the occupancy calculator.
  bool has_limits = false;
  ArchLimits limits;
};

// Every architecture, in table order.
const std::vector<Arch>& architectures();

// The rates of one product of `arch`, named as its runtime names it ("NVIDIA GeForce RTX 4090"):
// the table's, with the matrix rates of FP32 accumulation halved on GeForce parts.
ArchRates rates_for_device(const Arch& arch, const std::string& device_name);

// "sm_90a", "sm90", "compute_90", "SM_90" -> "sm_90"; "gfx90a:sramecc+:xnack-" -> "gfx90a".
std::string normalize_arch(const std::string& raw);

// The table's entry for `arch` (any spelling normalize_arch() accepts); nullptr when unknown.
const Arch* find_arch(const std::string& arch);

// An NVIDIA architecture's number (any spelling normalize_arch() accepts): "sm_90" -> 90, "sm_100a"
// -> 100; 0 for an AMD target or anything else.
int sm_version(const std::string& arch);

// Whether code built as `built` runs on a GPU of architecture `device` ("sm_86", "gfx90a"). `built`
// is one entry of a CUDA architecture list in CMake's spelling ("80-real" machine code, "120-virtual"
// PTX, "90a-real") or an AMD target ("gfx942"). NVIDIA's rules: machine code runs on the minors of
// its major version from its own up (sm_80 on sm_86 and sm_89), an "a" target on itself alone, an
// "f" target on its major version from its own minor up; PTX on every later architecture (the
// driver compiles it), "a" PTX on itself alone. AMD: the target itself.
bool gpu_code_runs_on(const std::string& built, const std::string& device);

// "" where one entry of `built` runs on `device` (gpu_code_runs_on) and the runtime did not refuse
// it (`refused`: its error, "" when it took the code); else the one message for a GPU this build
// has no code for: `gpu` (its id and name), its architecture, the architectures built, and the
// command that builds for it.
std::string gpu_code_missing(const std::string& gpu, const std::string& device, const std::vector<std::string>& built,
                             const std::string& refused = "");

}  // namespace bwprof
