# Issue #18's GEMM with few rows and B's rows off 16 bytes (mma.sync realigning them in shared memory,
# kernels/gemm/mma_sm80_kernel.hpp; the rule in choice.hpp's pad_pays), on the GPU machine in one call after
# gpu-build, under 6 minutes, through the Makefile's shared recipes. Tests side by side (150 s): the
# C++ GEMM cases (every engine and knob, mma.sync in place and through registers, its tiles with K
# split) and the footprints, compute-sanitizer memcheck of the tensor GEMM cases, the Python GEMM
# tests (random shapes through every knob; the rules by their explain lines, graph replays). Then,
# alone on the GPU: benchmarks/gemm_sweep.py's whole sweep (78 points, the chosen engine beside
# cuBLASLt and torch; about 45 s), and with GEMM_SMALL=1 its few-row points with each candidate
# (`pad`: wgmma on padded copies, the rule before; about 65 s). Logs in
# $(OUT)/gemm_inplace_logs.tar.gz, the sweeps also as CSV.
.PHONY: gpu-gemm-inplace
GINPLACE_LOGS = $(OUT)/gemm_inplace_logs
gpu-gemm-inplace: gpu-build
	$(call gpu_compute_tests,$(GINPLACE_LOGS),Small/GpuCompute.*gemm_tensor*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_gemm_rules.py -k gemm,Small/GpuCompute.*gemm*:Small/GpuCompute.*qkv*:GpuComputeErrors.*,150)
	$(call gpu_sweep,gemm_sweep,$(GINPLACE_LOGS),150,gemm_sweep.py --repeats 12 --no-candidates --csv $(OUT)/gemm_sweep_whole.csv)
ifneq ($(GEMM_SMALL),)
	$(call gpu_sweep,gemm_small_sweep,$(GINPLACE_LOGS),120,gemm_sweep.py --max-m 64 --repeats 10 --csv $(OUT)/gemm_sweep_small.csv)
endif
	tar -czf $(OUT)/gemm_inplace_logs.tar.gz -C $(OUT) gemm_inplace_logs && rm -rf $(GINPLACE_LOGS)
