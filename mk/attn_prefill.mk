# Issue #18, attention prefill (contiguous and paged; branches attn-prefill, r2-attn): on the GPU
# machine, build; the attention gtest cases (every kernel and knob, the Hopper kernel's rings and
# both paged loaders among them); compute-sanitizer memcheck of the Hopper kernel's rings (as the
# rule chooses them: two stages and two Q slots at one key tile, else three and one; two and three
# set by knob; paged K/V by the copy engine at pages of 16); pytest -k attention; then
# attention_sweep's prefill points at head dim 256 and at seq_kv <= 512 beside PyTorch with the
# candidate columns (st3q1 at S<=128, st2q2 above: the rings the rule did not choose; o4/o16, wide,
# wgmma1, flash). Logs under $(OUT)/attn_prefill_logs, tarred to $(OUT)/attn_prefill_logs.tgz; the
# tables on stdout.
APRE_LOGS = $(OUT)/attn_prefill_logs
.PHONY: gpu-attn-prefill
gpu-attn-prefill: gpu-build
	rm -rf $(APRE_LOGS) && mkdir -p $(APRE_LOGS)
	-timeout 100 $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.OneLaunchMatchesFloat64Reference/attention_*:GpuComputeErrors.*' \
	  > $(APRE_LOGS)/gtest.log 2>&1; echo "gtest rc=$$?"; tail -n 4 $(APRE_LOGS)/gtest.log; \
	  grep -E '^\[  FAILED|Failure|error ' $(APRE_LOGS)/gtest.log | head -n 20 || true
	-BWPROF_PEAK_ARRAY_BYTES=16777216 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(PYTHON) -m pytest -q -x tests/python/test_gpu_gemm_attention.py -p no:cacheprovider \
	  -k "wgmma_attention_rings and fp16 and (knobs0 or knobs2 or knobs5)" \
	  > $(APRE_LOGS)/memcheck.log 2>&1; echo "memcheck rc=$$?"; grep -E "ERROR SUMMARY|passed|failed" $(APRE_LOGS)/memcheck.log | tail -n 4
	-PYTHONPATH=python timeout 120 $(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_attention_decode.py -k attention \
	  -p no:cacheprovider > $(APRE_LOGS)/pytest.log 2>&1; echo "pytest rc=$$?"; tail -n 8 $(APRE_LOGS)/pytest.log
	-PYTHONPATH=python timeout 100 $(PYTHON) benchmarks/attention_sweep.py --only prefill --d 256 \
	  --csv $(APRE_LOGS)/d256.csv > $(APRE_LOGS)/d256.log 2>&1; echo "sweep d256 rc=$$?"; sed -n '/^point/,$$p' $(APRE_LOGS)/d256.log
	-PYTHONPATH=python timeout 100 $(PYTHON) benchmarks/attention_sweep.py --only prefill --max-s 512 \
	  --d 64 --d 80 --d 96 --d 128 --csv $(APRE_LOGS)/short.csv > $(APRE_LOGS)/short.log 2>&1; \
	  echo "sweep short rc=$$?"; sed -n '/^point/,$$p' $(APRE_LOGS)/short.log
	tar -C $(OUT) -czf $(OUT)/attn_prefill_logs.tgz attn_prefill_logs && rm -rf $(APRE_LOGS)
