// The architecture table (see arch.hpp): per-unit FLOP rates and occupancy limits, one row each.
//
// Rates: dense FLOPs per clock per SM/CU, the datasheet's TFLOP/s over units x the clock it quotes,
// from NVIDIA's architecture whitepapers and datasheets: "NVIDIA A100 Tensor Core GPU Architecture"
// (A100 SXM: 108 SMs, 1410 MHz: FP32 19.5, FP16 tensor 312 TFLOP/s), "NVIDIA Ampere GA102 GPU
// Architecture" (A40: 84 SMs, 1740 MHz, FP16 tensor 149.7; RTX 3090: 82 SMs, 1695 MHz, FP16 tensor
// 142 with FP16 accumulation, 71 with FP32), "NVIDIA Ada GPU Architecture" (L40S: 142 SMs, 2520 MHz,
// FP16 tensor 362, FP8 733; RTX 4090: 128 SMs, 2520 MHz, FP16 tensor 330.3 with FP16 accumulation,
// 165.2 with FP32, FP8 660.6 / 330.3), "NVIDIA H100 Tensor Core GPU Architecture" (H100 SXM: 132
// SMs x 256 FP32 FLOP/clk; 4096 dense FP16 tensor FLOP/clk at 1830 MHz), the DGX B200 datasheet
// (B200, 148 SMs: FP16/BF16 2.25, TF32 1.1, FP8 and INT8 4.5 P(FL)OP/s dense, FP64 37 TFLOP/s)
// and "NVIDIA RTX Blackwell GPU Architecture" (RTX 5090: 170 SMs, 2407 MHz: FP32 104.8, FP16
// tensor 419 with FP16 accumulation, 209.5 with FP32, FP8 838 / 419, INT8 838 TOP/s). AMD: MI300X
// 304 CUs x 256 FP32 and 2048 FP16 matrix FLOP/clk.
// The matrix rates are those of FP32 accumulation (what bwprof's kernels and PyTorch's GEMMs use)
// on the data-center and workstation parts; GeForce parts of the same architecture (RTX 20-50)
// run FP32-accumulating FP16, BF16, TF32 and FP8 at half that rate: rates_for_device().
//
// Occupancy limits, for NVIDIA sm_70..sm_120 and AMD CDNA2/CDNA3/RDNA3. Their sources
// (docs/occupancy.md has the full list and the reasoning):
//  [CUDA-CC]  CUDA C++ Programming Guide, "Compute Capabilities": the table "Technical
//             Specifications per Compute Capability" (warps, blocks, registers and shared memory
//             per SM, shared memory per block) and the per-architecture "Shared Memory" sections
//             (the carve-out sizes an SM can be configured to).
//  [CUDA-OCC] cuda_occupancy.h, shipped in every CUDA toolkit's include/: the rules the runtime's
//             cudaOccupancyMaxActiveBlocksPerMultiprocessor follows: registers rounded to 256
//             per warp and allocated per SM sub-partition (4 per SM), the per-block register
//             check over warps rounded up to 4, shared memory rounded to 256 B (7.x) / 128 B
//             (8.x and later) after adding the driver's reserved 1 KB per block (8.0+; the
//             reservedSharedMemPerBlock device property), the default carve-out preference
//             meaning "the whole shared memory of the SM", the resident blocks per SM (32 on
//             8.0, 9.0 and 10.0; 16 on 8.6/8.7, 24 on 8.9 and 12.x) and the carve-outs (up to
//             228 KB on 9.0 and 10.x, 100 KB on 8.6, 8.9 and 12.x; CUDA 13.0's header).
//  [LLVM]     LLVM AMDGPU backend, lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp (IsaInfo):
//             getMaxWavesPerEU (8 on gfx90a/gfx94x, 16 on gfx10.3+), getVGPRAllocGranule and
//             getTotalNumVGPRs (gfx90a/gfx94x: granule 8 of 512 unified arch+acc VGPRs; gfx1100/1101
//             "1.5x VGPRs": 24 of 1536 in wave32, 12 of 768 in wave64; gfx1102: 16 of 1024 / 8 of
//             512), getEUsPerCU (4 SIMDs per CU, or per WGP in WGP mode; 2 in CU mode) and
//             getMaxWorkGroupsPerCU (a multi-wave workgroup takes one of 16 barriers per CU, 32
//             per WGP in WGP mode; one-wave workgroups need none).
//  [MESA]     Mesa src/amd/common/ac_gpu_info.c: LDS per workgroup processor 128 KB on gfx10+
//             (64 KB per CU before), and the LDS allocation granularity the hardware aligns to:
//             128 dwords (512 B) on gfx7..gfx10.1, 256 dwords (1 KB) on gfx10.3+.
//  [AMD-ISA]  AMD "CDNA2 / CDNA3 Instruction Set Architecture" and "RDNA3 Instruction Set
//             Architecture" reference guides: 64 KB LDS per CU (max 64 KB per workgroup), 4 SIMDs
//             per CU (CDNA), WGP = 2 CUs of 2 SIMD32 each sharing 128 KB LDS (RDNA3).
#include "bwprof/arch.hpp"

#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace bwprof {

namespace {

constexpr std::int64_t kKiB = 1024;

std::vector<std::int64_t> kib(std::initializer_list<int> sizes) {
  std::vector<std::int64_t> out;
  for (int s : sizes) out.push_back(s * kKiB);
  return out;
}

// NVIDIA: what every sm_70..sm_120 shares [CUDA-CC, CUDA-OCC].
ArchLimits nvidia(const char* name, const char* family, int cc_major, int max_warps, int max_blocks,
                  std::vector<std::int64_t> carveouts, std::int64_t max_smem_per_block) {
  ArchLimits a;
  a.name = name;
  a.family = family;
  a.vendor = GpuVendor::kNvidia;
  a.unit = "SM";
  a.wave_size = 32;
  a.max_threads_per_block = 1024;
  a.max_warps = max_warps;
  a.max_blocks = max_blocks;
  a.register_partitions = 4;           // four SM sub-partitions, each with a quarter of the 64K
  a.registers_per_partition = 16384;   // 32-bit register file
  a.register_alloc_unit = 256;         // registers per warp
  a.registers_counted_per_warp = true;
  a.max_registers_per_thread = 255;
  a.max_registers_per_block = 65536;
  a.carveouts = std::move(carveouts);
  a.shared_mem_per_unit = a.carveouts.back();
  const bool ampere_or_later = cc_major >= 8;
  a.shared_mem_alloc_unit = ampere_or_later ? 128 : 256;
  a.shared_mem_reserved_per_block = ampere_or_later ? 1 * kKiB : 0;
  a.max_shared_mem_per_block = max_smem_per_block;
  a.source = "CUDA C++ Programming Guide (compute capabilities table, shared memory sections); cuda_occupancy.h";
  return a;
}

// AMD CDNA2/CDNA3: one CU of 4 SIMD64s, 8 wave slots each, 512 unified VGPRs per lane, 64 KB LDS.
ArchLimits cdna(const char* name, const char* family) {
  ArchLimits a;
  a.name = name;
  a.family = family;
  a.vendor = GpuVendor::kAmd;
  a.unit = "CU";
  a.wave_size = 64;
  a.max_threads_per_block = 1024;
  a.max_warps = 4 * 8;
  a.max_blocks = 16;
  a.single_wave_blocks_skip_block_limit = true;
  a.register_partitions = 4;
  a.registers_per_partition = 512;  // arch VGPRs and AGPRs share one file on gfx90a and later
  a.register_alloc_unit = 8;
  a.registers_counted_per_warp = false;
  a.max_registers_per_thread = 512;  // up to 256 arch + 256 acc
  a.max_registers_per_block = 0;
  a.shared_mem_per_unit = 64 * kKiB;
  a.shared_mem_alloc_unit = 512;
  a.shared_mem_reserved_per_block = 0;
  a.max_shared_mem_per_block = 64 * kKiB;
  a.source = "LLVM AMDGPUBaseInfo.cpp (IsaInfo); Mesa ac_gpu_info.c; AMD CDNA2/CDNA3 ISA guides";
  return a;
}

// AMD RDNA3 in WGP mode (the compiler's default): 4 SIMD32s sharing 128 KB LDS, 16 wave slots
// per SIMD. `vgprs` is the wave32 VGPR budget per lane: 1536 with the "1.5x VGPRs" of
// gfx1100/gfx1101, 1024 on gfx1102; wave64 has half the budget and half the granule.
ArchLimits rdna3(const char* name, int vgprs, int granule) {
  ArchLimits a;
  a.name = name;
  a.family = "RDNA3";
  a.vendor = GpuVendor::kAmd;
  a.unit = "WGP";
  a.wave_size = 32;
  a.max_threads_per_block = 1024;
  a.max_warps = 4 * 16;
  a.max_blocks = 32;
  a.single_wave_blocks_skip_block_limit = true;
  a.register_partitions = 4;
  a.registers_per_partition = vgprs;
  a.register_alloc_unit = granule;
  a.registers_counted_per_warp = false;
  a.max_registers_per_thread = 256;
  a.max_registers_per_block = 0;
  a.shared_mem_per_unit = 128 * kKiB;
  a.shared_mem_alloc_unit = 1 * kKiB;
  a.shared_mem_reserved_per_block = 0;
  a.max_shared_mem_per_block = 64 * kKiB;
  a.has_wave64_option = true;
  a.wave64_registers_per_partition = vgprs / 2;
  a.wave64_register_alloc_unit = granule / 2;
  a.has_cu_mode = true;
  a.source = "LLVM AMDGPUBaseInfo.cpp (IsaInfo); Mesa ac_gpu_info.c; AMD RDNA3 ISA guide";
  return a;
}

Arch rates_only(const char* name, double fp32, double fp16, double fp16_matrix) {
  Arch a;
  a.name = name;
  a.rates = ArchRates{fp32, fp16, fp16_matrix};
  return a;
}

Arch with_limits(ArchLimits limits, double fp32, double fp16, double fp16_matrix) {
  Arch a = rates_only(limits.name.c_str(), fp32, fp16, fp16_matrix);
  a.has_limits = true;
  a.limits = std::move(limits);
  return a;
}

std::vector<Arch> build_table() {
  const auto volta = kib({0, 8, 16, 32, 64, 96});
  const auto turing = kib({32, 64});
  const auto ga100 = kib({0, 8, 16, 32, 64, 100, 132, 164});
  const auto ga10x = kib({0, 8, 16, 32, 64, 100});
  const auto hopper = kib({0, 8, 16, 32, 64, 100, 132, 164, 196, 228});
  //                                                                    FP32  FP16  FP16 matrix
  return {
      with_limits(nvidia("sm_70", "Volta", 7, 64, 32, volta, 96 * kKiB), 128, 256, 1024),
      with_limits(nvidia("sm_75", "Turing", 7, 32, 16, turing, 64 * kKiB), 128, 256, 1024),
      with_limits(nvidia("sm_80", "Ampere", 8, 64, 32, ga100, 163 * kKiB), 128, 512, 2048),
      with_limits(nvidia("sm_86", "Ampere", 8, 48, 16, ga10x, 99 * kKiB), 256, 256, 1024),
      with_limits(nvidia("sm_87", "Ampere", 8, 48, 16, ga100, 163 * kKiB), 256, 256, 1024),
      with_limits(nvidia("sm_89", "Ada", 8, 48, 24, ga10x, 99 * kKiB), 256, 256, 1024),
      with_limits(nvidia("sm_90", "Hopper", 9, 64, 32, hopper, 227 * kKiB), 256, 512, 4096),
      with_limits(nvidia("sm_100", "Blackwell", 10, 64, 32, hopper, 227 * kKiB), 256, 512, 8192),
      with_limits(nvidia("sm_120", "Blackwell", 12, 48, 24, ga10x, 99 * kKiB), 256, 256, 1024),
      rates_only("gfx908", 128, 256, 1024),
      with_limits(cdna("gfx90a", "CDNA2"), 256, 256, 1024),
      with_limits(cdna("gfx940", "CDNA3"), 256, 512, 2048),
      with_limits(cdna("gfx941", "CDNA3"), 256, 512, 2048),
      with_limits(cdna("gfx942", "CDNA3"), 256, 512, 2048),
      rates_only("gfx950", 256, 512, 4096),
      rates_only("gfx1030", 256, 512, 512),
      with_limits(rdna3("gfx1100", 1536, 24), 256, 512, 512),
      with_limits(rdna3("gfx1101", 1536, 24), 256, 512, 512),
      with_limits(rdna3("gfx1102", 1024, 16), 256, 512, 512),
      rates_only("gfx1200", 256, 512, 1024),
      rates_only("gfx1201", 256, 512, 1024),
  };
}

// The other arithmetic types, dense, per SM / CU per clock: the datasheet's TFLOP/s (TOP/s) over
// units x the clock the datasheet quotes. NVIDIA: A100 SXM (108 SMs, 1410 MHz) FP64 9.7, BF16 312,
// TF32 156, INT8 624; A10 / A40 (GA102) and L40S (AD102, 142 SMs, 2520 MHz) BF16 362, TF32 183,
// FP8 733, INT8 733, FP64 at 1/64 of FP32; H100 SXM (132 SMs, 1830 MHz tensor boost) FP64 33.5
// (vector), BF16 989, TF32 495, FP8 1979, INT8 1979; B200 (148 SMs) BF16 2250, TF32 1100, FP8 and
// INT8 4500, FP64 37 (the clock its 2.25 PFLOP/s of FP16 imply, 8192 a clock); RTX PRO Blackwell
// (GB202) at the RTX 5090's rates before GeForce's halving: BF16 and FP16 1024, TF32 512, FP8 and
// INT8 2048, FP64 at 1/64 of FP32; V100 FP64 7.8; T4 INT8 130. AMD: MI250X (220
// CUs, 1700 MHz) FP64 47.9 (vector), BF16 383, INT8 383, no TF32/FP8; MI300X (304 CUs, 2100 MHz)
// FP64 81.7 (vector), BF16 1307, TF32 654, FP8 2615, INT8 2615; RX 7900 XTX (96 CUs, 2500 MHz)
// WMMA BF16 and IU8 at the FP16 rate, FP64 at 1/32 of non-dual-issue FP32.
// BF16 on the vector units (packed __nv_bfloat162 FMAs), where a datasheet gives it: A100 SXM 39
// TFLOP/s (half its 78 of FP16: sm_80 issues the BF16 HFMA2 on the FMA pipe alone) and H100 SXM
// 133.8 (FP16's rate); elsewhere not in the table (no such unit on AMD's vector ALUs).
struct OtherRates {
  const char* name;
  double fp64, bf16, bf16_matrix, tf32_matrix, fp8_matrix, int8_matrix;
};
constexpr OtherRates kOtherRates[] = {
    //          FP64  BF16  BF16  TF32  FP8   INT8 (matrix)
    {"sm_70",   64,   0,    0,    0,    0,    0},
    {"sm_75",   4,    0,    0,    0,    0,    2048},
    {"sm_80",   64,   256,  2048, 1024, 0,    4096},
    {"sm_86",   4,    0,    1024, 512,  0,    2048},
    {"sm_87",   4,    0,    1024, 512,  0,    2048},
    {"sm_89",   4,    0,    1024, 512,  2048, 2048},
    {"sm_90",   128,  512,  4096, 2048, 8192, 8192},
    {"sm_100",  128,  0,    8192, 4096, 16384, 16384},
    {"sm_120",  4,    0,    1024, 512,  2048, 2048},
    {"gfx90a",  128,  0,    1024, 0,    0,    1024},
    {"gfx940",  128,  0,    2048, 1024, 4096, 4096},
    {"gfx941",  128,  0,    2048, 1024, 4096, 4096},
    {"gfx942",  128,  0,    2048, 1024, 4096, 4096},
    {"gfx1100", 8,    0,    512,  0,    0,    512},
    {"gfx1101", 8,    0,    512,  0,    0,    512},
    {"gfx1102", 8,    0,    512,  0,    0,    512},
};

std::vector<Arch> with_other_rates(std::vector<Arch> table) {
  for (Arch& a : table)
    for (const OtherRates& r : kOtherRates)
      if (a.name == r.name) {
        a.rates.fp64 = r.fp64;
        a.rates.bf16 = r.bf16;
        a.rates.bf16_matrix = r.bf16_matrix;
        a.rates.tf32_matrix = r.tf32_matrix;
        a.rates.fp8_matrix = r.fp8_matrix;
        a.rates.int8_matrix = r.int8_matrix;
      }
  return table;
}

}  // namespace

ArchRates rates_for_device(const Arch& arch, const std::string& device_name) {
  ArchRates r = arch.rates;
  // GeForce (RTX 20 to 50): FP32 accumulation at half the tensor cores' FP16-accumulation rate, so
  // half the workstation part's rate for FP16, BF16, TF32 and FP8; INT8 (INT32 accumulation) whole.
  if (sm_version(arch.name) > 0 && device_name.find("GeForce") != std::string::npos) {
    r.fp16_matrix /= 2;
    r.bf16_matrix /= 2;
    r.tf32_matrix /= 2;
    r.fp8_matrix /= 2;
  }
  return r;
}

const std::vector<Arch>& architectures() {
  static const std::vector<Arch> table = with_other_rates(build_table());
  return table;
}

std::string normalize_arch(const std::string& raw) {
  std::string s;
  for (char c : raw)
    if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = s.find(':');  // HIP's gcnArchName carries target features: gfx90a:sramecc+:xnack-
  if (colon != std::string::npos) s = s.substr(0, colon);
  if (s.rfind("compute_", 0) == 0) s = "sm_" + s.substr(8);
  if (s.rfind("sm", 0) == 0 && s.rfind("sm_", 0) != 0) s = "sm_" + s.substr(2);
  // sm_90a / sm_100f: the suffix selects instructions, not resources.
  if (s.rfind("sm_", 0) == 0 && s.size() > 3 && (s.back() == 'a' || s.back() == 'f')) s.pop_back();
  return s;
}

int sm_version(const std::string& arch) {
  const std::string a = normalize_arch(arch);
  return a.rfind("sm_", 0) == 0 ? std::atoi(a.c_str() + 3) : 0;
}

namespace {

// "120-virtual" -> {120, 'f' or 'a' or 0, virtual}; false for anything else.
bool parse_cuda_code(const std::string& entry, int& number, char& suffix, bool& ptx) {
  const auto dash = entry.find('-');
  std::string num = entry.substr(0, dash);
  const std::string kind = dash == std::string::npos ? "real" : entry.substr(dash + 1);
  if (kind != "real" && kind != "virtual") return false;
  suffix = 0;
  if (!num.empty() && (num.back() == 'a' || num.back() == 'f')) suffix = num.back(), num.pop_back();
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 4) return false;
  number = std::atoi(num.c_str());
  ptx = kind == "virtual";
  return true;
}

// How a user names an architecture to CUDAARCHS: the number, "90a" for Hopper (its wgmma paths).
std::string cudaarchs_name(int sm) { return std::to_string(sm) + (sm == 90 ? "a" : ""); }

}  // namespace

bool gpu_code_runs_on(const std::string& built, const std::string& device) {
  const int dev = sm_version(device);
  if (dev == 0) return !built.empty() && normalize_arch(built) == normalize_arch(device);  // AMD
  int b = 0;
  char suffix = 0;
  bool ptx = false;
  if (!parse_cuda_code(built, b, suffix, ptx)) return false;
  if (suffix == 'a') return dev == b;
  if (suffix == 'f' || !ptx) return dev / 10 == b / 10 && dev >= b;
  return dev >= b;
}

std::string gpu_code_missing(const std::string& gpu, const std::string& device, const std::vector<std::string>& built,
                             const std::string& refused) {
  std::string have;
  bool runs = false;
  for (const std::string& e : built) {
    runs = runs || gpu_code_runs_on(e, device);
    int b = 0;
    char suffix = 0;
    bool ptx = false;
    std::string name = e;
    if (parse_cuda_code(e, b, suffix, ptx))
      name = (ptx ? "compute_" : "sm_") + std::to_string(b) + (suffix ? std::string(1, suffix) : "") + (ptx ? " (PTX)" : "");
    have += (have.empty() ? "" : ", ") + name;
  }
  if (runs && refused.empty()) return "";
  const int sm = sm_version(device);
  const std::string command =
      sm ? "CUDAARCHS=" + cudaarchs_name(sm) + " pip install --no-build-isolation ."
         : "pip install --no-build-isolation . -C cmake.define.BWPROF_HIP_TARGETS=" + normalize_arch(device);
  const std::string what = runs ? "the GPU runtime refuses this bwprof module's code for it (" + refused + "; "
                                 : "this bwprof module has no GPU code for it (";
  return gpu + " is " + device + ", and " + what + "it was built for " +
         (have.empty() ? std::string("no GPU architecture") : have) + "). Build bwprof for this GPU, in its source folder: " +
         command;
}

const Arch* find_arch(const std::string& arch) {
  const std::string key = normalize_arch(arch);
  for (auto& a : architectures())
    if (a.name == key) return &a;
  return nullptr;
}

}  // namespace bwprof
