# Issue #18, head-dim-256 prefill at short and medium lengths (branch s7-d256): key tiles of 48 (two
# Q slots beside two K/V stages) and of 32 (two Q slots, three stages) instead of 64 (one Q slot), by
# BWPROF_ATTN_D256_TILE=48|32 (candidates; the default stays 64). On the GPU machine: build; the
# attention gtest cases (with the knob at head dim 256) beside pytest -k "wgmma_attention_rings or
# ring_knobs" (the key tiles' rings, the knob's error); compute-sanitizer memcheck of the 48 and 32
# paths (FP16, the rule's rings); then attention_sweep's prefill points at head dim 256 beside PyTorch
# with the candidate columns t48 and t32 (12 repeats). Logs under $(OUT)/attn_d256_logs, tarred to
# $(OUT)/attn_d256_logs.tgz; the summary table on stdout.
AD256_LOGS = $(OUT)/attn_d256_logs
.PHONY: gpu-attn-d256
gpu-attn-d256: gpu-build
	rm -rf $(AD256_LOGS) && mkdir -p $(AD256_LOGS)
	-( timeout 120 $(GPU_BUILD)/bwprof_tests \
	    --gtest_filter='Small/GpuCompute.OneLaunchMatchesFloat64Reference/attention_*:GpuComputeErrors.*' \
	    > $(AD256_LOGS)/gtest.log 2>&1; echo "gtest rc=$$?" > $(AD256_LOGS)/gtest.rc ) & \
	  PYTHONPATH=python timeout 120 $(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py -p no:cacheprovider \
	    -k "wgmma_attention_rings or ring_knobs or d256_key_tile" > $(AD256_LOGS)/pytest.log 2>&1; \
	  echo "pytest rc=$$?"; wait; cat $(AD256_LOGS)/gtest.rc; tail -n 4 $(AD256_LOGS)/gtest.log; \
	  grep -E '^\[  FAILED|Failure|error ' $(AD256_LOGS)/gtest.log | head -n 20; \
	  tail -n 8 $(AD256_LOGS)/pytest.log; true
	-BWPROF_PEAK_ARRAY_BYTES=16777216 PYTHONPATH=python timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(PYTHON) -m pytest -q -x tests/python/test_gpu_gemm_attention.py -p no:cacheprovider \
	  -k "wgmma_attention_rings_d256 and fp16 and knobs0 and not shape5" \
	  > $(AD256_LOGS)/memcheck.log 2>&1; echo "memcheck rc=$$?"; grep -E "ERROR SUMMARY|passed|failed" $(AD256_LOGS)/memcheck.log | tail -n 4
	-PYTHONPATH=python timeout 120 $(PYTHON) benchmarks/attention_sweep.py --only prefill --d 256 \
	  --candidates t48,t32 --repeats 12 --csv $(AD256_LOGS)/d256.csv > $(AD256_LOGS)/d256.log 2>&1; \
	  echo "sweep d256 rc=$$?"; sed -n '/^point/,$$p' $(AD256_LOGS)/d256.log
	tar -C $(OUT) -czf $(OUT)/attn_d256_logs.tgz attn_d256_logs && rm -rf $(AD256_LOGS)
