# Issue #18, attention decode and paged prefill (branch attn-decode): on the GPU machine, build; the
# attention gtest cases (every kernel and knob, the decode kernel's ring depths and split counts);
# compute-sanitizer memcheck of the decode and paged paths; pytest -k attention; ncu sections of the
# decode kernel at two points and of the paged prefill at pages of 16 (cp.async loader); then
# attention_sweep's decode and paged points beside PyTorch, the misses with every candidate column.
# Logs under $(OUT)/attn_decode_logs, tarred to $(OUT)/attn_decode_logs.tgz; the tables on stdout.
ADEC_LOGS = $(OUT)/attn_decode_logs
ADEC_NCU = ncu --print-summary none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section LaunchStats --section WarpStateStats -k regex:bwprof_attention -c 1
.PHONY: gpu-attn-decode
gpu-attn-decode: gpu-build
	rm -rf $(ADEC_LOGS) && mkdir -p $(ADEC_LOGS)
	-$(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.OneLaunchMatchesFloat64Reference/attention_*' \
	  > $(ADEC_LOGS)/gtest.log 2>&1; tail -n 4 $(ADEC_LOGS)/gtest.log; grep -E '^\[  FAILED' $(ADEC_LOGS)/gtest.log | head -n 20 || true
	-BWPROF_PEAK_ARRAY_BYTES=16777216 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(PYTHON) -m pytest -q -x tests/python/test_gpu_gemm_attention.py -k "decode_and_paged_fixed" -p no:cacheprovider \
	  > $(ADEC_LOGS)/memcheck.log 2>&1; echo "memcheck rc=$$?"; tail -n 6 $(ADEC_LOGS)/memcheck.log
	-PYTHONPATH=python timeout 120 $(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py -k attention \
	  -p no:cacheprovider > $(ADEC_LOGS)/pytest.log 2>&1; echo "pytest rc=$$?"; tail -n 8 $(ADEC_LOGS)/pytest.log
	-for pt in "fp16 1 32 8 1 8192 64 0 0 -" "bf16 16 32 8 1 4096 64 0 0 -" "bf16 1 32 8 4096 4096 128 16 1 cp"; do \
	  set -- $$pt; env PYTHONPATH=python $$([ $${10} = cp ] && echo BWPROF_ATTN_PAGED_LOAD=cp) timeout 50 $(ADEC_NCU) \
	  $(PYTHON) -c "import bwprof; \
	  kw = dict(batch=$$2, heads=$$3, kv_heads=$$4, seq_q=$$5, seq_kv=$$6, head_dim=$$7, causal=bool($$9)); \
	  kw.update(dict(block_size=$$8) if $$8 else {}); \
	  bwprof.measure('attention', dtype='$$1', device='gpu', variant='flash_paged' if $$8 else 'flash', repeats=1, warmup=0, min_time_s=0.0, max_time_s=0.1, **kw)" \
	  > $(ADEC_LOGS)/ncu_$$1_B$$2_H$$3_$$4_S$$6_D$$7_bs$$8.txt 2>&1; echo "ncu $$pt rc=$$?"; done
	-PYTHONPATH=python timeout 120 $(PYTHON) benchmarks/attention_sweep.py --only decode,paged --focus \
	  --candidates w2,w05,s2,s3,s4,s5,s6,cpl,bs128 --csv $(ADEC_LOGS)/focus.csv 2>&1 | tee $(ADEC_LOGS)/focus.log | \
	  sed -n '/^point/,$$p'
	-PYTHONPATH=python timeout 90 $(PYTHON) benchmarks/attention_sweep.py --only decode,paged --no-candidates \
	  --csv $(ADEC_LOGS)/decode_paged.csv 2>&1 | tee $(ADEC_LOGS)/decode_paged.log | sed -n '/^point/,$$p'
	tar -C $(OUT) -czf $(OUT)/attn_decode_logs.tgz attn_decode_logs && rm -rf $(ADEC_LOGS)
