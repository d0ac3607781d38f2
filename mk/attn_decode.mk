# Issue #18, attention decode and paged prefill (branch attn-decode), on the GPU machine: build; the
# attention C++ GPU cases (every kernel and knob, the decode kernel's ring depths and split counts),
# compute-sanitizer memcheck of the BF16 paged cases (decode with its knobs, both paged loaders), the
# Python attention tests (the decode/paged fixed shapes and random decode shapes with knobs) side by
# side (Makefile's gpu_compute_tests); ncu sections of the decode kernel at two D64 misses and of the
# paged prefill at pages of 16 read by cp.async; then attention_sweep's decode and paged points beside
# PyTorch: the misses (and 3 controls) with every candidate column, then all of them, default only.
# Logs tarred to $(OUT)/attn_decode_logs.tar.gz; the tables on stdout. About 4 minutes after the build.
ADEC_LOGS = $(OUT)/attn_decode_logs
ADEC_NCU = ncu --print-summary none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section LaunchStats --section WarpStateStats -k regex:bwprof_attention -c 1
ADEC_FOCUS = attention_sweep.py --only decode,paged --focus --repeats 12 \
  --candidates w1,s2,s3,s4,s5,s6,tma,cpl,bs128 --csv $(ADEC_LOGS)/focus.csv
ADEC_ALL = attention_sweep.py --only decode,paged --no-candidates --repeats 12 --csv $(ADEC_LOGS)/decode_paged.csv
.PHONY: gpu-attn-decode
gpu-attn-decode: gpu-build
	rm -rf $(ADEC_LOGS) && mkdir -p $(ADEC_LOGS)
	$(call gpu_compute_tests,$(ADEC_LOGS),Small/GpuCompute.*attention_flash_paged_bf16*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_attention_decode.py -k "flash_attention or decode or each_attention",Small/GpuCompute.*attention*:GpuComputeErrors.*,150)
	-for pt in "fp16 1 32 8 1 8192 64 0 0 -" "bf16 16 32 8 1 4096 64 0 0 -" "bf16 1 32 8 4096 4096 128 16 1 cp"; do \
	  set -- $$pt; env PYTHONPATH=python $$([ $${10} = cp ] && echo BWPROF_ATTN_PAGED_LOAD=cp) timeout 50 $(ADEC_NCU) \
	  $(PYTHON) -c "import bwprof; \
	  kw = dict(batch=$$2, heads=$$3, kv_heads=$$4, seq_q=$$5, seq_kv=$$6, head_dim=$$7, causal=bool($$9)); \
	  kw.update(dict(block_size=$$8) if $$8 else {}); \
	  bwprof.measure('attention', dtype='$$1', device='gpu', variant='flash_paged' if $$8 else 'flash', repeats=1, warmup=0, min_time_s=0.0, max_time_s=0.1, **kw)" \
	  > $(ADEC_LOGS)/ncu_$$1_B$$2_H$$3_$$4_S$$6_D$$7_bs$$8.txt 2>&1; echo "ncu $$pt exit $$?"; done
	$(call gpu_sweep,focus,$(ADEC_LOGS),120,$(ADEC_FOCUS))
	$(call gpu_sweep,decode_paged,$(ADEC_LOGS),90,$(ADEC_ALL))
	tar -czf $(OUT)/attn_decode_logs.tar.gz -C $(OUT) attn_decode_logs && rm -rf $(ADEC_LOGS)
