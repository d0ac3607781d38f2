# Issue #18's GEMM at M >= 128 (branch gemm-large): the `tensor` GEMM's large-M choices against
# `vendor`, through the Makefile's shared recipes, under 4 minutes after the build. Tests (side by
# side, 110 s): the C++ GEMM/QKV cases (each engine and knob; wgmma's split K by slots, the default,
# and by chain; copies padded to 128-byte rows) and the footprints, compute-sanitizer memcheck of the FP16 tensor
# GEMM cases (every knob's path), the Python GEMM tests (random shapes through every knob). Then
# benchmarks/gemm_sweep.py --large (130 s): the M >= 128 points that miss or nearly miss and an
# aligned control, a column per candidate (tiles, splits sN by slots, chain, p16 = copies only to
# 16-byte rows, p128 = copies to 128-byte rows wherever rows are off them) beside
# vendor and torch. Logs in $(OUT)/gemm_large_logs.tar.gz, the sweep also as $(OUT)/gemm_sweep_large.csv.
.PHONY: gpu-gemm-large
GLARGE_LOGS = $(OUT)/gemm_large_logs
gpu-gemm-large: gpu-build
	$(call gpu_compute_tests,$(GLARGE_LOGS),Small/GpuCompute.*gemm_tensor_fp16*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_gemm_rules.py -k gemm,Small/GpuCompute.*gemm*:Small/GpuCompute.*qkv*:GpuComputeErrors.*,110)
	$(call gpu_sweep,gemm_sweep,$(GLARGE_LOGS),130,gemm_sweep.py --large --repeats 12 --csv $(OUT)/gemm_sweep_large.csv)
	tar -czf $(OUT)/gemm_large_logs.tar.gz -C $(OUT) gemm_large_logs && rm -rf $(GLARGE_LOGS)
