# Issue #14, round 4 of the Q4_0 `tiled` GEMV (M = 1, 4096x4096 toward 90 % of the read line):
# candidates that put every chunk of a warp in flight at once (BWPROF_Q4_KERNEL ring8x8rl,
# ring16x4rl, ringa8x8rl, ringa16x4rl) and their loads-alone probes. On the GPU
# machine: the Q4 gtests, the knob tests of the round-4 kernels against the float64 gold (odd sizes,
# random shapes) and the Q4_0 GPU kernel tests, a short memcheck of each new kernel, then
# gemv_ceiling.py --q4-only in three alternating passes (each candidate beside the read line and a
# clean read of the same bytes; the spread over the passes printed). Logs in one tarball under $(OUT).
.PHONY: gpu-q4-fast2
Q4F2_KERNELS := ring8x8rl ring16x4rl ringa8x8rl ringa16x4rl
Q4F2_LOGS = $(OUT)/q4_fast2_logs
gpu-q4-fast2: gpu-build
	rm -rf $(Q4F2_LOGS) && mkdir -p $(Q4F2_LOGS)
	-timeout 40 $(GPU_BUILD)/bwprof_tests --gtest_filter='Q4*:GpuLimits.FootprintCoversWhatEveryGpuInstanceAllocates' \
	  > $(Q4F2_LOGS)/gtest.log 2>&1; \
	  echo "gtest exit $$?"; tail -n 2 $(Q4F2_LOGS)/gtest.log
	-timeout 110 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -rs tests/python/test_gpu_tuning_knobs.py \
	  tests/python/test_gpu_kernels.py -k "q4_0 and (ring8x8rl or ring16x4r or ringa8x8rl or ringa16x4r \
	  or round4 or ringx8x4rl or ring8x4rl or not ring)" > $(Q4F2_LOGS)/pytest.log 2>&1; \
	  echo "pytest exit $$?"; grep -E "passed|failed|Error" $(Q4F2_LOGS)/pytest.log | tail -n 8
	-timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $(PYTHON) -c "import os, bwprof; \
	  [(os.environ.__setitem__('BWPROF_Q4_KERNEL', k), print(k, s, bwprof.measure('q4_0_matmul', dtype='fp16', \
	  device='gpu', variant='tiled', repeats=2, min_time_s=0.0, warmup=1, **s).verified)) for k in '$(Q4F2_KERNELS)'.split() \
	  for s in (dict(M=1, N=33, K=96), dict(M=2, N=1001, K=4160), dict(M=5, N=40, K=160))]" \
	  > $(Q4F2_LOGS)/memcheck.log 2>&1; echo "memcheck exit $$?"; grep -E "ERROR SUMMARY|False" $(Q4F2_LOGS)/memcheck.log | sort | uniq -c
	-PYTHONUNBUFFERED=1 timeout 210 $(PYTHON) benchmarks/gemv_ceiling.py --q4-only --passes 3 \
	  --csv $(Q4F2_LOGS)/gemv_ceiling_q4.csv 2>&1 | tee $(Q4F2_LOGS)/gemv_ceiling_q4.log
	tar -czf $(OUT)/q4_fast2_logs.tgz -C $(OUT) q4_fast2_logs && rm -rf $(Q4F2_LOGS)
