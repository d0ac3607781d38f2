# Issue #18's GEMM at M >= 128 (branch gemm-large): the `tensor` GEMM's large-M choices against
# `vendor`. On the GPU machine, after the build, under 4 minutes: the C++ GEMM cases (each engine
# and knob, the split K by chain and by slots, 128-byte padded copies) and the footprints;
# compute-sanitizer memcheck of the wgmma cases that split K or pad (the new paths); the Python
# GEMM tests (random shapes through every knob); then benchmarks/gemm_sweep.py --large: the M >= 128
# points that miss or nearly miss, with a column per candidate (tile, splits by chain sN and by
# slots sNp, p128) beside vendor and torch. Logs in $(OUT)/gemm_large_logs.tar.gz, the sweep also
# as $(OUT)/gemm_sweep_large.csv; the summary tables are printed.
.PHONY: gpu-gemm-large
GLARGE_LOGS = $(OUT)/gemm_large_logs
GLARGE_MEMCHECK = Small/GpuCompute.*gemm_tensor_fp16*
gpu-gemm-large: gpu-build
	mkdir -p $(GLARGE_LOGS)
	-( timeout 110 compute-sanitizer --tool memcheck --error-exitcode 3 $(GPU_BUILD)/bwprof_tests \
	    --gtest_filter='$(GLARGE_MEMCHECK)' > $(GLARGE_LOGS)/memcheck.log 2>&1; \
	    echo "memcheck exit $$?" >> $(GLARGE_LOGS)/memcheck.log ) & \
	  ( timeout 110 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" tests/python/test_gpu_gemm_attention.py \
	    -k "gemm" > $(GLARGE_LOGS)/pytest.log 2>&1; echo "pytest exit $$?" >> $(GLARGE_LOGS)/pytest.log ) & \
	  timeout 110 $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.*gemm*:Small/GpuCompute.*qkv*:GpuComputeErrors.*:GpuLimits.Footprint*' \
	    > $(GLARGE_LOGS)/gtest.log 2>&1; echo "gtest exit $$?"; wait; \
	  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|Failure|error [0-9]|Which is|Expected" $(GLARGE_LOGS)/gtest.log | tail -n 30; \
	  tail -n 1 $(GLARGE_LOGS)/memcheck.log; grep -E "ERROR SUMMARY|FAILED|Invalid|out of bounds" $(GLARGE_LOGS)/memcheck.log | sort | uniq -c | head -n 8; \
	  grep -E "passed|failed|error|Falsifying|^E  |^FAILED" $(GLARGE_LOGS)/pytest.log | tail -n 20
	-PYTHONUNBUFFERED=1 timeout 130 $(PYTHON) benchmarks/gemm_sweep.py --large --repeats 12 --csv $(OUT)/gemm_sweep_large.csv \
	  > $(GLARGE_LOGS)/gemm_sweep.log 2>&1; echo "gemm sweep exit $$?"; \
	  { grep -q '^point' $(GLARGE_LOGS)/gemm_sweep.log && sed -n '/^point/,$$p' $(GLARGE_LOGS)/gemm_sweep.log || tail -n 30 $(GLARGE_LOGS)/gemm_sweep.log; }
	tar -czf $(OUT)/gemm_large_logs.tar.gz -C $(OUT) gemm_large_logs && rm -rf $(GLARGE_LOGS)
