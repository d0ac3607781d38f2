# Issue #18, GEMM at M <= 64 (the skinny tensor kernel, kernels/gemm/skinny_mma.hip), on the GPU
# machine in one call after gpu-build, about 4 minutes. Side by side: the C++ GEMM cases (every
# engine by its knob, tc_skinny among them), compute-sanitizer memcheck of the dispatch test (M
# 1-64, FP16/BF16, aligned and not: every path of the new kernel) and of the BF16 C++ tensor cases
# (may be cut at 100 s), the Python GEMM tests with their random shapes. Then, alone on the GPU,
# gemm_sweep.py over M <= 64 with each candidate's time (old = the dispatch before; gemv, tc,
# tc_w2, tc_w.5, tc_u16) beside cuBLASLt and torch. Logs in $(OUT)/gemm_small_logs.tar.gz, the
# sweep's rows in $(OUT)/gemm_small_sweep.csv.
.PHONY: gpu-gemm-small
GSMALL_LOGS = $(OUT)/gemm_small_logs
gpu-gemm-small: gpu-build
	mkdir -p $(GSMALL_LOGS)
	-( timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $(PYTHON) -m pytest -q -p no:cacheprovider \
	    -o addopts="" -k few_rows_take tests/python/test_gpu_gemm_attention.py > $(GSMALL_LOGS)/memcheck_py.log 2>&1; \
	    echo "memcheck (pytest few_rows_take) exit $$?" >> $(GSMALL_LOGS)/memcheck_py.log ) & \
	  ( timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 $(GPU_BUILD)/bwprof_tests \
	    --gtest_filter='Small/GpuCompute.*gemm_tensor_bf16*' > $(GSMALL_LOGS)/memcheck.log 2>&1; \
	    echo "memcheck exit $$?" >> $(GSMALL_LOGS)/memcheck.log ) & \
	  ( timeout 100 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -k gemm tests/python/test_gpu_gemm_attention.py \
	    tests/python/test_bf16.py > $(GSMALL_LOGS)/pytest.log 2>&1; echo "pytest exit $$?" >> $(GSMALL_LOGS)/pytest.log ) & \
	  timeout 100 $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.*gemm*:GpuComputeErrors.*:GpuLimits.Footprint*' \
	    > $(GSMALL_LOGS)/gtest.log 2>&1; echo "gtest exit $$?"; wait; \
	  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|Failure|error [0-9]" $(GSMALL_LOGS)/gtest.log | tail -n 25; \
	  tail -n 1 $(GSMALL_LOGS)/memcheck_py.log; grep -E "ERROR SUMMARY|passed|failed|Invalid" $(GSMALL_LOGS)/memcheck_py.log | tail -n 5; \
	  tail -n 1 $(GSMALL_LOGS)/memcheck.log; grep -E "ERROR SUMMARY|FAILED|Invalid" $(GSMALL_LOGS)/memcheck.log | tail -n 5; \
	  grep -E "passed|failed|error|Falsifying|^E  |^FAILED" $(GSMALL_LOGS)/pytest.log | tail -n 20
	-PYTHONUNBUFFERED=1 timeout 150 $(PYTHON) benchmarks/gemm_sweep.py --max-m 64 --repeats 10 \
	  --csv $(OUT)/gemm_small_sweep.csv > $(GSMALL_LOGS)/gemm_sweep.log 2>&1; echo "gemm sweep exit $$?"; \
	  grep -E "^device" $(GSMALL_LOGS)/gemm_sweep.log; \
	  { grep -q '^point' $(GSMALL_LOGS)/gemm_sweep.log && sed -n '/^point/,$$p' $(GSMALL_LOGS)/gemm_sweep.log || grep '^  ' $(GSMALL_LOGS)/gemm_sweep.log; }
	tar -czf $(OUT)/gemm_small_logs.tar.gz -C $(OUT) gemm_small_logs && rm -rf $(GSMALL_LOGS)
