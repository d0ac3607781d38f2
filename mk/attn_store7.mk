# Issue #18, short-sequence prefill (branch s7-attn-store): O stored by the copy engine from shared
# memory (BWPROF_ATTN_O_TMA=1, a candidate; off by default). On the GPU machine: build; the attention
# gtest cases (their runs include O_TMA=1 with the rule's rings and with a block per tile); memcheck of
# the O_TMA path (the rings test's shapes, fp16: seq_q off 128, head dims 80/96 held 128 wide, paged);
# pytest -k attention with the knob off, then on (all but the rings test, which sets it itself); then
# attention_sweep's prefill points at seq_kv <= 512 (every head dim) with the columns o_tma / o_tma_q2
# and the rings the rule did not choose, and the long D64/D128 points with o_tma as controls, 12
# repeats each, beside PyTorch. Logs under $(OUT)/attn_store7_logs, tarred; the tables on stdout.
AST7_LOGS = $(OUT)/attn_store7_logs
.PHONY: gpu-attn-store7
gpu-attn-store7: gpu-build
	rm -rf $(AST7_LOGS) && mkdir -p $(AST7_LOGS)
	-timeout 100 $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.OneLaunchMatchesFloat64Reference/attention_*:GpuComputeErrors.*' \
	  > $(AST7_LOGS)/gtest.log 2>&1; echo "gtest rc=$$?"; tail -n 4 $(AST7_LOGS)/gtest.log; \
	  grep -E '^\[  FAILED|Failure|error ' $(AST7_LOGS)/gtest.log | head -n 20 || true
	-BWPROF_PEAK_ARRAY_BYTES=16777216 PYTHONPATH=python timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(PYTHON) -m pytest -q -x tests/python/test_gpu_gemm_attention.py -p no:cacheprovider \
	  -k "wgmma_attention_rings and fp16 and (knobs6 or knobs7)" \
	  > $(AST7_LOGS)/memcheck.log 2>&1; echo "memcheck rc=$$?"; grep -E "ERROR SUMMARY|passed|failed" $(AST7_LOGS)/memcheck.log | tail -n 4
	-PYTHONPATH=python timeout 120 $(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py -k attention \
	  -p no:cacheprovider > $(AST7_LOGS)/pytest_off.log 2>&1; echo "pytest (O_TMA off) rc=$$?"; tail -n 6 $(AST7_LOGS)/pytest_off.log
	-BWPROF_ATTN_O_TMA=1 PYTHONPATH=python timeout 120 $(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py \
	  -k "attention and not rings_match" -p no:cacheprovider > $(AST7_LOGS)/pytest_on.log 2>&1; \
	  echo "pytest (O_TMA=1) rc=$$?"; tail -n 6 $(AST7_LOGS)/pytest_on.log
	-PYTHONPATH=python timeout 150 $(PYTHON) benchmarks/attention_sweep.py --only prefill --max-s 512 --repeats 12 \
	  --candidates o_tma,o_tma_q2,st3q1,st2q2 --csv $(AST7_LOGS)/short.csv > $(AST7_LOGS)/short.log 2>&1; \
	  echo "sweep short rc=$$?"; sed -n '/^point/,$$p' $(AST7_LOGS)/short.log
	-PYTHONPATH=python timeout 100 $(PYTHON) benchmarks/attention_sweep.py --only prefill --min-s 1024 --d 64 --d 128 \
	  --repeats 12 --candidates o_tma --csv $(AST7_LOGS)/long.csv > $(AST7_LOGS)/long.log 2>&1; \
	  echo "sweep long rc=$$?"; sed -n '/^point/,$$p' $(AST7_LOGS)/long.log
	tar -C $(OUT) -czf $(OUT)/attn_store7_logs.tgz attn_store7_logs && rm -rf $(AST7_LOGS)
