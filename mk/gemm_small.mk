# Issue #18, GEMM at M <= 64 (the skinny tensor kernel, kernels/gemm/skinny_mma.hip), on the GPU
# machine in one call after gpu-build, about 4 minutes, through the Makefile's shared recipes.
# Side by side (gpu_compute_tests, 100 s): compute-sanitizer memcheck of the new kernel's every path
# (GpuSkinnyTensorGemm: tiles of 8-64 rows, aligned and not, K whole and split, FP16/BF16), the C++
# GEMM cases (every engine by its knob, tc_skinny among them), the GPU footprints, the Python GEMM
# tests with their random shapes (the few-row rules of choice.hpp by their explain lines). Then,
# alone on the GPU (gpu_sweep), gemm_sweep.py over M <= 64 with each candidate's time (mma, gemv at
# M = 1, tc = the skinny tensor kernel with its own waves, tc_w1, tc_w.5; from M = 17 the wgmma
# tiles and splits) beside cuBLASLt and torch. Logs in $(OUT)/gemm_small_logs.tar.gz, the sweep's rows
# in $(OUT)/gemm_small_sweep.csv.
.PHONY: gpu-gemm-small
GSMALL_LOGS = $(OUT)/gemm_small_logs
gpu-gemm-small: gpu-build
	$(call gpu_compute_tests,$(GSMALL_LOGS),GpuSkinnyTensorGemm.*,-k gemm tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_gemm_rules.py tests/python/test_bf16.py,Small/GpuCompute.*gemm*:GpuComputeErrors.*:GpuSkinnyTensorGemm.*,100)
	$(call gpu_sweep,gemm_small_sweep,$(GSMALL_LOGS),140,gemm_sweep.py --max-m 64 --repeats 10 --csv $(OUT)/gemm_small_sweep.csv)
	tar -czf $(OUT)/gemm_small_logs.tar.gz -C $(OUT) gemm_small_logs && rm -rf $(GSMALL_LOGS)
