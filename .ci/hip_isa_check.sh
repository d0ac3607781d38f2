#!/bin/sh
# The AMD matrix paths in assembly, for targets whose device libraries Debian 12's ROCm lacks (its
# clang 15 still compiles their device code): RDNA3's GEMM must hold the FP16 and BF16 WMMA
# instructions, and each step of a wave of the matrix peak must issue 128 of each type's MMA (256
# for INT8 where its K is 8 or the WMMA's 16): FP16/BF16/INT8 on gfx90a, every type (TF32 as xf32,
# FP8) on gfx940, FP16/BF16/IU8 WMMA on gfx1100. Usage: .ci/hip_isa_check.sh BUILD_DIR
set -u
out=${1:?BUILD_DIR}
asm() {  # TARGET SOURCE OUTPUT
  HIP_PLATFORM=amd hipcc -x hip --offload-arch="$1" -nogpulib --offload-device-only -O3 -std=c++17 \
    -D__HIP_PLATFORM_AMD__ -Icpp/include -Icpp/src -Ikernels -S -o "$3" "$2" 2>&1 |
    grep -v -e "linker' input unused" -e "argument unused during compilation"
  return 0
}
fail=0
asm gfx1100 kernels/gemm/wmma_rdna3.hip "$out/gemm_gfx1100.s"
n=$(grep -c v_wmma_f32_16x16x16_f16 "$out/gemm_gfx1100.s"); b=$(grep -c v_wmma_f32_16x16x16_bf16 "$out/gemm_gfx1100.s")
if [ "$n" -gt 0 ] && [ "$b" -gt 0 ]; then echo "hip-isa-check: $n FP16 and $b BF16 WMMA instructions in the gfx1100 GEMM"
else echo "hip-isa-check: FP16 $n, BF16 $b WMMA instructions in the gfx1100 GEMM (want both)"; fail=1; fi
for t in gfx90a gfx940 gfx1100; do asm $t kernels/mma_peak/amd.hip "$out/mma_peak_$t.s"; done
for spec in gfx90a:v_mfma_f32_32x32x8f16:128 gfx90a:v_mfma_f32_32x32x8bf16_1k:128 gfx90a:v_mfma_i32_32x32x8i8:256 \
  gfx940:v_mfma_f32_32x32x8_f16:128 gfx940:v_mfma_f32_32x32x8_bf16:128 gfx940:v_mfma_f32_32x32x4_xf32:128 \
  gfx940:v_mfma_f32_32x32x16_fp8_fp8:128 gfx940:v_mfma_i32_32x32x16_i8:128 \
  gfx1100:v_wmma_f32_16x16x16_f16:128 gfx1100:v_wmma_f32_16x16x16_bf16:128 gfx1100:v_wmma_i32_16x16x16_iu8:256; do
  t=${spec%%:*}; rest=${spec#*:}; ins=${rest%%:*}; want=${rest#*:}
  n=$(grep -c "$ins\b" "$out/mma_peak_$t.s")
  if [ "$n" = "$want" ]; then echo "hip-isa-check: $t $ins x$n"
  else echo "hip-isa-check: $t $ins: $n, expected $want"; fail=1; fi
done
exit $fail
