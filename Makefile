# The README's two commands (make run, make test) and the developer ones.
# Everything uses one Python: python3 on PATH unless PYTHON= says otherwise.
PYTHON ?= python3
BUILD ?= build
GPU ?= AUTO
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BENCH_ARGS ?=
PY_PACKAGES := numpy pandas matplotlib pybind11 scikit-build-core pytest hypothesis nbclient ipykernel nbformat orjson
PY_MODULES := numpy,pandas,matplotlib,pybind11,scikit_build_core,pytest,hypothesis,nbclient,ipykernel,nbformat,orjson
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: run test setup build cpp-test py-test install clean ci test-cpu-only hip-build pip-check hip-peak-check

run: build
	$(PYTHON) -m bwprof bench $(BENCH_ARGS)

test: build cpp-test py-test

# Installs only what is missing, so it also works offline where everything is present.
setup:
	@if ! command -v cmake >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 || \
	    { [ ! -d /usr/src/googletest ] && [ ! -f /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake ] && \
	      [ ! -f /usr/lib/cmake/GTest/GTestConfig.cmake ]; }; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "setup: installing Debian packages (cmake, g++, libgtest-dev)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ libgtest-dev >/dev/null; \
	  else \
	    echo "setup: cmake, g++ or libgtest-dev missing and apt-get unavailable; C++ tests may be skipped"; \
	  fi; \
	fi
	@if ! $(PYTHON) -c "import $(PY_MODULES)" >/dev/null 2>&1; then \
	  echo "setup: installing Python packages ($(PY_PACKAGES))"; \
	  $(PYTHON) -m pip install -q $(PY_PACKAGES); \
	fi
	@$(PYTHON) -c "import xdist" >/dev/null 2>&1 || $(PYTHON) -m pip install -q pytest-xdist >/dev/null 2>&1 || \
	  echo "setup: pytest-xdist unavailable; the Python tests run in one process"
	@# orjson before its depth limit (up to 3.9.0) is not used by the trace readers (deep JSON crashes
	@# it): upgrade it where pip can, so that the fast path is the one tested
	@$(PYTHON) -c "import orjson; orjson.loads(b'[' * 1100 + b']' * 1100)" >/dev/null 2>&1 && \
	  { $(PYTHON) -m pip install -q 'orjson>=3.9.15' >/dev/null 2>&1 || \
	    echo "setup: orjson has no depth limit and could not be upgraded; traces are read with json"; } || true

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release -DBWPROF_GPU=$(GPU) \
	  -DPython_EXECUTABLE="$$(command -v $(PYTHON))"

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

cpp-test: build
	@if [ -f $(BUILD)/CTestTestfile.cmake ]; then \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS); \
	else echo "cpp-test: GoogleTest not found, C++ tests not built"; exit 1; fi

# The Python tests in PYTEST_WORKERS processes (pytest-xdist, where installed), then the few marked
# `serial` (they judge the CPU's own timing) alone. PYTEST_ARGS adds to both runs.
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=
define run_pytest
	@if [ "$(PYTEST_WORKERS)" -gt 1 ] 2>/dev/null && $(PYTHON) -c "import xdist" >/dev/null 2>&1; then \
	  echo "pytest: $(PYTEST_WORKERS) processes, then the tests marked serial alone"; \
	  $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) -m "not serial" $(PYTEST_ARGS) $(1) || exit $$?; \
	  $(PYTHON) -m pytest -q -m serial $(PYTEST_ARGS) $(1); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc; \
	else $(PYTHON) -m pytest -q $(PYTEST_ARGS) $(1); fi
endef
py-test: build
	$(call run_pytest,tests/python)

# CI: the README's test command (with nvcc present this is the CUDA build, whose CPU tests must pass
# on a machine without a GPU), then a CPU-only build with its tests, then the AMD compile.
ci: test test-cpu-only hip-build pip-check cpp-example

# The installed C++ package as a project outside the tree uses it: install $(BUILD) into a scratch
# prefix, build examples/cpp against it (the GPU example too where the build has a GPU backend),
# run the CPU example.
EXAMPLE_PREFIX ?= $(CURDIR)/build-install
EXAMPLE_BUILD ?= $(CURDIR)/build-example
.PHONY: cpp-example example-against
cpp-example: build
	$(MAKE) example-against
# (no dependencies: the GPU machine uses it over its own build)
example-against:
	rm -rf $(EXAMPLE_PREFIX) $(EXAMPLE_BUILD)
	cmake --install $(BUILD) --prefix $(EXAMPLE_PREFIX) > /dev/null
	cmake -S examples/cpp -B $(EXAMPLE_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_PREFIX_PATH=$(EXAMPLE_PREFIX) $(EXAMPLE_ARGS)
	cmake --build $(EXAMPLE_BUILD) -j $(JOBS)
	$(EXAMPLE_BUILD)/profile_cpu

# The package as pip builds it (scikit-build-core over the same CMakeLists), into a scratch folder.
# PIP_BUILD_DIR keeps scikit-build-core's build folder inside the tree (CI does, so that a compiler
# cache sees the same relative paths as make build's); empty: a temporary folder.
PIP_BUILD_DIR ?=
pip-check: setup
	rm -rf build-pip-target $(PIP_BUILD_DIR)
	$(PYTHON) -m pip install -q --no-build-isolation --no-deps --target build-pip-target \
	  $(if $(PIP_BUILD_DIR),-C build-dir=$(PIP_BUILD_DIR)) .
	cd /tmp && PYTHONPATH=$(CURDIR)/build-pip-target $(PYTHON) -c "import bwprof; \
	  m = bwprof.measure('stream_triad', device='cpu', n=4096, repeats=1); \
	  assert m.verified, m; print('pip-built bwprof', bwprof.__version__, 'from', bwprof.__file__)"

# The CPU-only build differs from the CUDA build in the native module (no GPU backend compiled in),
# not in the pure-Python layers: it runs every C++ test and the Python tests that go through the
# module, while the trace readers, baselines, charts, tables, notebooks, docs and run-folder tests
# (which the CUDA build's `make test` has just run over the same CPU backend) run once.
CPU_ONLY_PY_SKIP := test_traces_*.py test_baseline*.py test_plots.py test_notebooks.py test_docs.py \
  test_tables.py test_layers.py test_tree.py test_files.py test_run_folders.py test_size_graph.py \
  test_output_errors.py test_sweep_markdown.py test_module_for.py
test-cpu-only:
	$(MAKE) build cpp-test BUILD=build-cpu GPU=OFF
	$(call run_pytest,tests/python $(foreach f,$(CPU_ONLY_PY_SKIP),--ignore-glob='tests/python/$(f)'))

# Debian 12's hipcc (ROCm 5.2, clang 15) knows gfx90a, gfx940 and gfx1030 of the CDNA2, CDNA3 and
# RDNA2 generations; gfx942/gfx1100 (the default BWPROF_HIP_TARGETS) need a newer ROCm.
HIP_TARGETS ?= gfx90a;gfx940;gfx1030
hip-build:
	@command -v hipcc >/dev/null 2>&1 || { echo "hip-build: installing Debian's hipcc"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hipcc >/dev/null; }
	$(MAKE) rocblas-header
	cmake -S . -B build-hip $(GENERATOR) -DBWPROF_GPU=HIP -DBWPROF_BUILD_TESTS=OFF -DBWPROF_BUILD_PYTHON=OFF \
	  "-DBWPROF_HIP_TARGETS=$(HIP_TARGETS)" $$(test -f $(ROCBLAS_DIR)/usr/include/rocblas/rocblas.h && \
	  echo -DBWPROF_ROCBLAS_ROOT=$(ROCBLAS_DIR)/usr -DBWPROF_ROCBLAS_COMPILE_CHECK=ON)
	cmake --build build-hip -j $(JOBS)
	$(MAKE) hip-wmma-check

# RDNA3's WMMA path: Debian 12's ROCm has no gfx1100 device library to link, but its clang 15
# compiles gfx1100 device code; the GEMM's assembly must hold the FP16 and BF16 WMMA instructions.
hip-wmma-check:
	HIP_PLATFORM=amd hipcc -x hip --offload-arch=gfx1100 -nogpulib --offload-device-only -O3 -std=c++17 \
	  -D__HIP_PLATFORM_AMD__ -Icpp/include -Icpp/src -Ikernels -S -o build-hip/gemm_gfx1100.s kernels/gemm/wmma_rdna3.hip \
	  2>&1 | grep -v -e "linker' input unused" -e "argument unused during compilation" || true
	@n=$$(grep -c v_wmma_f32_16x16x16_f16 build-hip/gemm_gfx1100.s); b=$$(grep -c v_wmma_f32_16x16x16_bf16 build-hip/gemm_gfx1100.s); \
	  if [ "$$n" -gt 0 ] && [ "$$b" -gt 0 ]; then echo "hip-wmma-check: $$n FP16 and $$b BF16 WMMA instructions in the gfx1100 GEMM"; \
	  else echo "hip-wmma-check: FP16 $$n, BF16 $$b WMMA instructions in the gfx1100 GEMM (want both)"; exit 1; fi
	$(MAKE) hip-peak-check

# The matrix peak's instructions, per AMD target: each step of a wave issues 128 of each type's
# MMA (256 for INT8 where its K is 8 or the WMMA's 16): FP16/BF16/INT8 on gfx90a, every type
# (TF32 as xf32, FP8) on gfx940, FP16/BF16/IU8 WMMA on gfx1100.
hip-peak-check:
	@for t in gfx90a gfx940 gfx1100; do \
	  HIP_PLATFORM=amd hipcc -x hip --offload-arch=$$t -nogpulib --offload-device-only -O3 -std=c++17 \
	    -D__HIP_PLATFORM_AMD__ -Icpp/include -Icpp/src -Ikernels -S -o build-hip/mma_peak_$$t.s \
	    kernels/mma_peak/amd.hip 2>&1 | grep -v -e "linker' input unused" -e "argument unused during compilation"; \
	done; true
	@fail=0; for spec in gfx90a:v_mfma_f32_32x32x8f16:128 gfx90a:v_mfma_f32_32x32x8bf16_1k:128 \
	  gfx90a:v_mfma_i32_32x32x8i8:256 gfx940:v_mfma_f32_32x32x8_f16:128 gfx940:v_mfma_f32_32x32x8_bf16:128 \
	  gfx940:v_mfma_f32_32x32x4_xf32:128 gfx940:v_mfma_f32_32x32x16_fp8_fp8:128 gfx940:v_mfma_i32_32x32x16_i8:128 \
	  gfx1100:v_wmma_f32_16x16x16_f16:128 gfx1100:v_wmma_f32_16x16x16_bf16:128 gfx1100:v_wmma_i32_16x16x16_iu8:256; do \
	  t=$${spec%%:*}; rest=$${spec#*:}; ins=$${rest%%:*}; want=$${rest#*:}; \
	  n=$$(grep -c "$$ins\b" build-hip/mma_peak_$$t.s); \
	  if [ "$$n" = "$$want" ]; then echo "hip-peak-check: $$t $$ins x$$n"; \
	  else echo "hip-peak-check: $$t $$ins: $$n, expected $$want"; fail=1; fi; done; exit $$fail

# Debian 12 packages no rocBLAS; Debian 13's librocblas-dev (headers only, 66 kB) lets CI compile
# the `vendor` rocBLAS path. Unpacked into build-hip-deps, never installed; nothing links it.
ROCBLAS_DIR ?= $(CURDIR)/build-hip-deps/rocblas
rocblas-header:
	@if [ ! -f $(ROCBLAS_DIR)/usr/include/rocblas/rocblas.h ]; then \
	  d=$(CURDIR)/build-hip-deps/apt; mkdir -p $$d/lists/partial $(ROCBLAS_DIR); \
	  echo "deb http://deb.debian.org/debian trixie main" > $$d/sources.list; \
	  o="-o Dir::Etc::SourceList=$$d/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$$d/lists"; \
	  if apt-get $$o update -qq >/dev/null 2>&1 && (cd $$d && apt-get $$o download -qq librocblas-dev >/dev/null 2>&1); then \
	    dpkg -x $$d/librocblas-dev_*.deb $(ROCBLAS_DIR) && echo "rocblas-header: $$(ls $$d/librocblas-dev_*.deb)"; \
	  else echo "rocblas-header: could not fetch Debian 13's librocblas-dev; the rocBLAS path is not compiled"; fi; \
	fi

install: setup
	$(PYTHON) -m pip install --no-build-isolation .

clean:
	rm -rf $(BUILD) build-cpu build-hip build-hip-deps build-pip-target build-pip build-ccache build-install build-example $(GPU_BUILD) \
	  python/bwprof/_core*.so

# ---- the GPU machine (offline, no apt): build, test, benchmark in one call -------------------
# GoogleTest's sources travel in .carry/googletest (make carry-gtest here, then carry .carry).
GPU_BUILD ?= build-gpu
OUT ?= /tmp/bwprof-out
.PHONY: rocblas-header hip-wmma-check carry-gtest gpu-build gpu-check gpu-memcheck gpu-tools-check gpu-notebooks gpu-check-compute
# GoogleTest's sources: .carry/googletest here, or ../googletest from a worktree carried inside .carry/.
GTEST_SRC ?= $(if $(wildcard $(CURDIR)/.carry/googletest),$(CURDIR)/.carry/googletest,$(abspath $(CURDIR)/../googletest))
carry-gtest:
	mkdir -p .carry && rm -rf .carry/googletest && cp -r /usr/src/googletest .carry/googletest

gpu-build:
	cmake -S . -B $(GPU_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release -DBWPROF_GPU=CUDA \
	  -DCMAKE_CUDA_ARCHITECTURES=90 -DBWPROF_GTEST_SOURCE_DIR=$(GTEST_SRC) \
	  -DPython_EXECUTABLE="$$(command -v $(PYTHON))"
	cmake --build $(GPU_BUILD) -j $(JOBS)

gpu-check: gpu-build
	mkdir -p $(OUT)
	-ctest --test-dir $(GPU_BUILD) --output-on-failure -j 4 2>&1 | tail -n 30 | tee $(OUT)/ctest.log
	-$(PYTHON) -m pytest -q -x tests/python/test_gpu_kernels.py tests/python/test_api.py tests/python/test_errors.py 2>&1 | tee $(OUT)/pytest.log | tail -n 30
	$(PYTHON) benchmarks/memory_bound.py --csv $(OUT)/memory_bound.csv 2>&1 | tee $(OUT)/memory_bound.log

# compute-sanitizer memcheck over the GPU tests (small peak arrays: every access is checked)
gpu-memcheck: gpu-build
	mkdir -p $(OUT)
	BWPROF_PEAK_ARRAY_BYTES=16777216 compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(PYTHON) -m pytest -q -x tests/python/test_gpu_kernels.py -k "not quick_suite and not out_of_device" \
	  2>&1 | tee $(OUT)/memcheck.log | tail -n 15

# Issue checks that need the GPU: ncu durations vs bwprof's timings; baselines catch a slowdown.
gpu-tools-check: gpu-build
	mkdir -p $(OUT)/ncu_check $(OUT)/regress
	-$(PYTHON) benchmarks/ncu_check.py $(OUT)/ncu_check 2>&1 | tail -n 25 | tee $(OUT)/ncu_check.log
	-bash benchmarks/regression_check.sh $(OUT)/regress 2>&1 | tee $(OUT)/regress.log

# Refresh the notebooks' outputs on the GPU machine: nbclient and ipykernel travel as wheels in .whl
# (see the device notes), installed into /tmp/site for this call only. NOTEBOOKS="06_model.ipynb ..."
# executes only those (default: every notebook).
gpu-notebooks: gpu-build
	mkdir -p $(OUT)/notebooks
	$(PYTHON) -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
	PYTHONPATH=/tmp/site:$(CURDIR)/python $(PYTHON) notebooks/execute.py $(OUT)/notebooks $(NOTEBOOKS)

# The compute kernels (GEMM, QKV, flash attention): GPU tests, one pass of the small cases under
# compute-sanitizer memcheck, then the benchmark beside PyTorch.
gpu-check-compute: gpu-build
	mkdir -p $(OUT)
	-ctest --test-dir $(GPU_BUILD) --output-on-failure -j 4 2>&1 | tail -n 30 | tee $(OUT)/ctest.log
	-$(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_attention_decode.py tests/python/test_gpu_gemm_rules.py 2>&1 | tee $(OUT)/pytest_compute.log | tail -n 40
	-command -v compute-sanitizer >/dev/null && compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.*:GpuComputeErrors.*' > $(OUT)/memcheck.log 2>&1; \
	  echo "memcheck exit $$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $(OUT)/memcheck.log | tail -n 8
	PYTHONUNBUFFERED=1 $(PYTHON) benchmarks/compute.py --csv $(OUT)/compute.csv 2>&1 | tee $(OUT)/compute.log

# Issue #11's proof: one benchmark script (SUITE=memory_bound or compute) of a carried older tree and
# of this tree, alternated (before, after, before, after) in one call, then compared row by row.
# The older tree: git archive <commit> | tar -x -C .carry/before (carry .carry). Both build at once.
BEFORE ?= .carry/before
SUITE ?= memory_bound
.PHONY: gpu-before-after gpu-stream-hold
gpu-before-after:
	mkdir -p $(OUT)
	$(MAKE) -C $(BEFORE) gpu-build GTEST_SRC=$(GTEST_SRC) JOBS=8 > $(OUT)/build_before.log 2>&1 & \
	  $(MAKE) gpu-build JOBS=8 > $(OUT)/build_after.log 2>&1; a=$$?; wait $$!; b=$$?; \
	  tail -n 3 $(OUT)/build_before.log $(OUT)/build_after.log; test $$a = 0 -a $$b = 0
	for r in 1 2; do \
	  PYTHONUNBUFFERED=1 PYTHONPATH=$(abspath $(BEFORE))/python $(PYTHON) $(BEFORE)/benchmarks/$(SUITE).py --no-torch \
	    --csv $(OUT)/$(SUITE)_before$$r.csv > $(OUT)/$(SUITE)_before$$r.log 2>&1 || exit 1; \
	  PYTHONUNBUFFERED=1 $(PYTHON) benchmarks/$(SUITE).py --no-torch --csv $(OUT)/$(SUITE)_after$$r.csv \
	    > $(OUT)/$(SUITE)_after$$r.log 2>&1 || exit 1; \
	done
	-$(PYTHON) benchmarks/compare_runs.py $(OUT)/$(SUITE)_before1.csv $(OUT)/$(SUITE)_before2.csv | tail -n 1
	-$(PYTHON) benchmarks/compare_runs.py $(OUT)/$(SUITE)_before1.csv $(OUT)/$(SUITE)_after1.csv
	-$(PYTHON) benchmarks/compare_runs.py $(OUT)/$(SUITE)_before2.csv $(OUT)/$(SUITE)_after2.csv | tail -n 1

# Item 9 of issue #11: the spin against the blocking kernel, every family of the suite.
gpu-stream-hold: gpu-build
	mkdir -p $(OUT)
	PYTHONUNBUFFERED=1 $(PYTHON) benchmarks/stream_hold.py --csv $(OUT)/stream_hold.csv 2>&1 | tee $(OUT)/stream_hold.log

# Issue #11's closing checks on the GPU machine, in two calls that reuse one build:
# gpu-verify-tests: every C++ and Python test with the GPU present;
# gpu-verify-tools: compute-sanitizer memcheck of the GPU gtests and the real .ncu-rep sample.
.PHONY: gpu-verify-tests gpu-verify-tools
# The GPU machine's Python tests (verbose, so a run cut by its time limit still names where it was).
PYTEST_GPU_S ?= 420
PYTEST_GPU_ARGS ?= tests/python
gpu-verify-tests: gpu-build
	mkdir -p $(OUT)
	-timeout 150 ctest --test-dir $(GPU_BUILD) --output-on-failure -j 8 > $(OUT)/ctest.log 2>&1; \
	  echo "ctest exit $$?"; tail -n 4 $(OUT)/ctest.log
	-timeout $(PYTEST_GPU_S) $(PYTHON) -m pytest -v -p no:cacheprovider -o addopts="" -rfE --durations=12 $(PYTEST_GPU_ARGS) \
	  > $(OUT)/pytest_gpu.log 2>&1; echo "pytest exit $$?"; grep -E "^(FAILED|ERROR)|passed|failed" $(OUT)/pytest_gpu.log | tail -n 25

gpu-verify-tools: gpu-build
	mkdir -p $(OUT)
	-timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.*:GpuComputeErrors.*:*Gpu*Small*' \
	  > $(OUT)/memcheck.log 2>&1; echo "memcheck exit $$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $(OUT)/memcheck.log | tail -n 5
	-timeout 90 bash benchmarks/make_ncu_rep_sample.sh $(OUT)/ncu > $(OUT)/ncu_sample.log 2>&1; \
	  echo "ncu sample exit $$?"; tail -n 6 $(OUT)/ncu_sample.log

# Issue #18 (BF16, attention head dims, GEMM dispatch) on the GPU machine. Every target runs the same
# two parts: gpu_compute_tests (the C++ GPU cases named by a filter; compute-sanitizer memcheck of a
# subset; the GPU footprints; the Python GPU tests with their random shapes; the four side by side,
# each under its own time limit) and one gpu_sweep per benchmark (bwprof beside PyTorch, alone on the
# GPU, its table printed). Logs tarred under $(OUT), sweep tables also as CSV.
#   gpu-bf16-attn        the whole sweeps (75 attention and 78 GEMM points), under 9 minutes warm;
#   gpu-bf16-attn-quick  15 + 10 points with each candidate kernel's time beside the chosen one's;
#   gpu-gemm-fast        every GEMM engine's C++ cases and memcheck, the quick GEMM sweep;
#   gpu-attn-fast        every attention kernel's C++ cases and memcheck, the quick attention sweep.
# $(call gpu_compute_tests,LOGDIR,MEMCHECK_FILTER,PYTEST_ARGS,GTEST_FILTER,SECONDS)
define gpu_compute_tests
	mkdir -p $(1)
	-( timeout $(5) compute-sanitizer --tool memcheck --error-exitcode 3 $(GPU_BUILD)/bwprof_tests \
	    --gtest_filter='$(2)' > $(1)/memcheck.log 2>&1; echo "memcheck exit $$?" >> $(1)/memcheck.log ) & \
	  ( timeout $(5) $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" $(3) > $(1)/pytest.log 2>&1; \
	    echo "pytest exit $$?" >> $(1)/pytest.log ) & \
	  ( timeout $(5) $(GPU_BUILD)/bwprof_tests --gtest_filter='GpuLimits.Footprint*' > $(1)/gtest_footprint.log 2>&1; \
	    echo "footprint gtest exit $$?" >> $(1)/gtest_footprint.log ) & \
	  timeout $(5) $(GPU_BUILD)/bwprof_tests --gtest_filter='$(4)' > $(1)/gtest.log 2>&1; echo "gtest exit $$?"; wait; \
	  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]|Failure|error [0-9]|Which is|Expected" $(1)/gtest.log | tail -n 30; \
	  grep -E "Failure|Expected|Which is|^\[  (PASSED|FAILED) |exit" $(1)/gtest_footprint.log | tail -n 12; \
	  tail -n 1 $(1)/memcheck.log; grep -E "ERROR SUMMARY|FAILED|Invalid|out of bounds|race" $(1)/memcheck.log | sort | uniq -c | head -n 8; \
	  grep -E "passed|failed|error|Falsifying|^E  |^FAILED" $(1)/pytest.log | tail -n 20
endef
# $(call gpu_sweep,NAME,LOGDIR,SECONDS,SCRIPT AND ARGUMENTS)
define gpu_sweep
	-PYTHONUNBUFFERED=1 timeout $(3) $(PYTHON) benchmarks/$(4) > $(2)/$(1).log 2>&1; echo "$(1) exit $$?"; \
	  grep -E "^(torch|SDPA)" $(2)/$(1).log; \
	  { grep -q '^point' $(2)/$(1).log && sed -n '/^point/,$$p' $(2)/$(1).log || tail -n 30 $(2)/$(1).log; }; \
	  grep -E "FAILED|Error" $(2)/$(1).log | head -n 5
endef
.PHONY: gpu-bf16-attn gpu-bf16-attn-quick gpu-gemm-fast gpu-attn-fast
BF16_LOGS = $(OUT)/bf16_attn_logs
GEMM_LOGS = $(OUT)/gemm_fast_logs
ATTN_LOGS = $(OUT)/attn_fast_logs
gpu-bf16-attn: gpu-build
	$(call gpu_compute_tests,$(BF16_LOGS),Small/GpuCompute.*attention_flash_bf16*:Small/GpuCompute.*attention_flash_paged_fp16*:Small/GpuCompute.*gemm_tensor*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_attention_decode.py tests/python/test_gpu_gemm_rules.py tests/python/test_bf16.py,Small/GpuCompute.*:GpuComputeErrors.*,150)
	$(call gpu_sweep,attention_sweep,$(BF16_LOGS),230,attention_sweep.py --repeats 12 --no-candidates --csv $(OUT)/attention_sweep.csv)
	$(call gpu_sweep,gemm_sweep,$(BF16_LOGS),120,gemm_sweep.py --repeats 12 --no-candidates --csv $(OUT)/gemm_sweep.csv)
	tar -czf $(OUT)/bf16_attn_logs.tar.gz -C $(OUT) bf16_attn_logs && rm -rf $(BF16_LOGS)

gpu-bf16-attn-quick: gpu-build
	$(call gpu_compute_tests,$(BF16_LOGS),Small/GpuCompute.*attention_flash_bf16*:Small/GpuCompute.*attention_flash_paged_fp16*:Small/GpuCompute.*gemm_tensor_bf16*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_attention_decode.py,Small/GpuCompute.*:GpuComputeErrors.*,150)
	$(call gpu_sweep,attention_sweep,$(BF16_LOGS),150,attention_sweep.py --quick --csv $(OUT)/attention_sweep_quick.csv)
	$(call gpu_sweep,gemm_sweep,$(BF16_LOGS),90,gemm_sweep.py --quick --csv $(OUT)/gemm_sweep_quick.csv)
	tar -czf $(OUT)/bf16_attn_logs.tar.gz -C $(OUT) bf16_attn_logs && rm -rf $(BF16_LOGS)

gpu-gemm-fast: gpu-build
	$(call gpu_compute_tests,$(GEMM_LOGS),Small/GpuCompute.*gemm_tensor*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_gemm_rules.py -k gemm,Small/GpuCompute.*gemm*:Small/GpuCompute.*qkv*:GpuComputeErrors.*,200)
	$(call gpu_sweep,gemm_sweep,$(GEMM_LOGS),170,gemm_sweep.py --quick --repeats 15 --csv $(OUT)/gemm_sweep_quick.csv)
	tar -czf $(OUT)/gemm_fast_logs.tar.gz -C $(OUT) gemm_fast_logs && rm -rf $(GEMM_LOGS)

gpu-attn-fast: gpu-build
	$(call gpu_compute_tests,$(ATTN_LOGS),Small/GpuCompute.*attention_flash_bf16*:Small/GpuCompute.*attention_flash_paged_fp16*,tests/python/test_gpu_gemm_attention.py tests/python/test_gpu_attention_decode.py -k attention,Small/GpuCompute.*attention*:GpuComputeErrors.*,170)
	$(call gpu_sweep,attention_sweep,$(ATTN_LOGS),110,attention_sweep.py --quick --repeats 12 --csv $(OUT)/attention_sweep_quick.csv)
	tar -czf $(OUT)/attn_fast_logs.tar.gz -C $(OUT) attn_fast_logs && rm -rf $(ATTN_LOGS)
# Issue #12's C++ items on the GPU: the footprint of every GPU instance against what it allocates,
# device buffers that fit one by one but not together refused before allocating, Ctrl-C during a GPU
# measurement (a child process), and the label and limit tests with the GPU build.
.PHONY: gpu-relcpp
gpu-relcpp: gpu-build
	mkdir -p $(OUT)
	-timeout 240 $(GPU_BUILD)/bwprof_tests --gtest_filter='*Limits*:Interrupt*:SuiteLabels*' \
	  > $(OUT)/relcpp_gtest.log 2>&1; echo "gtest exit $$?"; \
	  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|out of device memory" $(OUT)/relcpp_gtest.log | tail -n 15
	-timeout 240 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -rs tests/python/test_limits.py \
	  tests/python/test_suite.py > $(OUT)/relcpp_pytest.log 2>&1; echo "pytest exit $$?"; tail -n 12 $(OUT)/relcpp_pytest.log

# Issue #17's .ncu-rep crash on the GPU machine: the .ncu-rep tests (the real sample through
# ncu_report in a child and through ncu --import), the step-by-step probe of ncu_report under
# faulthandler (which call crashes), and a fresh report read both ways against its CSV export.
# Logs in $(OUT)/gpu_ncu_rep.tar.gz; the summary lines are printed.
.PHONY: gpu-ncu-rep
gpu-ncu-rep: gpu-build
	rm -rf $(OUT)/ncu_rep && mkdir -p $(OUT)/ncu_rep
	-timeout 150 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -rs tests/python/test_traces_ncu_rep.py \
	  tests/python/test_traces_ncu_rep_api.py > $(OUT)/ncu_rep/pytest.log 2>&1; \
	  echo "pytest exit $$?"; grep -E "passed|failed|SKIPPED|Error" $(OUT)/ncu_rep/pytest.log | tail -n 8
	-timeout 150 $(PYTHON) benchmarks/ncu_report_probe.py > $(OUT)/ncu_rep/probe.log 2>&1; \
	  echo "probe exit $$?"; grep -E "^probe child|^bwprof read_ncu_rep|still running" $(OUT)/ncu_rep/probe.log
	-timeout 240 bash benchmarks/make_ncu_rep_sample.sh $(OUT)/ncu_rep/sample > $(OUT)/ncu_rep/sample.log 2>&1; \
	  echo "sample exit $$?"; grep -E "via=|ncu_report module|report size|failed" $(OUT)/ncu_rep/sample.log
	tar -czf $(OUT)/gpu_ncu_rep.tar.gz -C $(OUT) ncu_rep && rm -rf $(OUT)/ncu_rep

# Issue #14 part B on the GPU machine, in one call: the graph-mode and size-curve tests, the size
# curve (fit and residual in peaks.log, every point in size_curve.json), benchmarks/gemv_graph.py
# (single and graph beside torch.mv in a CUDA graph), the memory-bound families benched in single and
# graph modes with the new columns (bench_size_graph.txt; both run folders in runs.tgz), and the size
# chart. 7 files in $(OUT); each step has a time limit so the whole stays under 9 minutes.
SIZE_KERNELS ?= stream layernorm bias_act kv_cache q4_0_dequant gemv
SIZE_RUNS ?= /tmp/bwprof-size-runs
.PHONY: gpu-size-graph
gpu-size-graph: gpu-build
	rm -rf $(SIZE_RUNS) && mkdir -p $(OUT) $(SIZE_RUNS)
	-timeout 150 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -s tests/python/test_gpu_size_graph.py \
	  > $(OUT)/pytest_size_graph.log 2>&1; echo "pytest exit $$?"; \
	  grep -E "size curve:|passed|failed|error|skip" $(OUT)/pytest_size_graph.log | tail -n 12
	-timeout 50 $(PYTHON) -m bwprof peaks --device gpu 2>&1 | tee $(OUT)/peaks.log
	-PYTHONUNBUFFERED=1 timeout 100 $(PYTHON) benchmarks/gemv_graph.py 2>&1 | tee $(OUT)/gemv_graph.log
	-for t in single graph; do \
	  PYTHONUNBUFFERED=1 timeout 100 $(PYTHON) -m bwprof bench --device gpu --kernels $(SIZE_KERNELS) --timing $$t \
	    --no-plots --no-progress --out $(SIZE_RUNS)/$$t > $(SIZE_RUNS)/bench_$$t.log 2>&1; \
	  echo "bench $$t exit $$?"; tail -n 4 $(SIZE_RUNS)/bench_$$t.log; done
	-run=$$(ls -d $(SIZE_RUNS)/single/*/ | tail -n 1); cp $$run/size_curve.json $(OUT)/size_curve.json; \
	  timeout 40 $(PYTHON) -m bwprof plot $$run --out $(SIZE_RUNS)/plots > /dev/null && \
	  cp $(SIZE_RUNS)/plots/size_ceiling.png $(OUT)/size_ceiling.png; \
	  $(PYTHON) -c "import pandas as pd, glob; \
	    df = pd.concat(pd.read_csv(f) for f in sorted(glob.glob('$(SIZE_RUNS)/*/*/results.csv'))); \
	    pd.set_option('display.width', 250); \
	    print(df[['kernel','variant','dtype','label','timing','rotation_sets','time_median_us','bandwidth_gbs', \
	      'bandwidth_pct_peak','attainable_bandwidth_gbs','bandwidth_pct_attainable','fixed_cost_pct', \
	      'sm_clock_mhz','throttled_samples','bound']].to_string(index=False))" > $(OUT)/bench_size_graph.txt 2>&1; \
	  tail -n 5 $(OUT)/bench_size_graph.txt
	-tar -czf $(OUT)/runs.tgz -C $(SIZE_RUNS) .
# Issue #13 on the GPU machine: bwprof.profile's tests (CPU and GPU), the Profiler's C++ tests,
# benchmarks/profile_check.py (PyTorch copy / matmul / layer norm against bwprof's own kernels, a
# Triton and a CuPy kernel, ncu's durations of the same launches), the C++ GPU example built
# against the installed package, and notebook 05 executed (its GPU section's outputs).
.PHONY: gpu-profile
gpu-profile: gpu-build
	rm -rf $(OUT)/logs && mkdir -p $(OUT)/logs
	-timeout 240 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" tests/python/test_gpu_profile.py \
	  tests/python/test_profile.py > $(OUT)/logs/pytest_profile.log 2>&1; echo "pytest exit $$?"; tail -n 4 $(OUT)/logs/pytest_profile.log
	-timeout 60 $(GPU_BUILD)/bwprof_tests --gtest_filter='Profiler*' > $(OUT)/logs/gtest_profiler.log 2>&1; \
	  echo "gtest Profiler exit $$?"; tail -n 2 $(OUT)/logs/gtest_profiler.log
	-PYTHONUNBUFFERED=1 timeout 300 $(PYTHON) benchmarks/profile_check.py --out $(OUT)/logs 2>&1 | tee $(OUT)/profile_check.log
	-timeout 150 $(MAKE) --no-print-directory example-against BUILD=$(GPU_BUILD) EXAMPLE_PREFIX=/tmp/bwprof-install \
	  EXAMPLE_BUILD=/tmp/bwprof-example EXAMPLE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=90 JOBS=8 > $(OUT)/logs/cpp_example.log 2>&1; \
	  echo "C++ example build + CPU run exit $$?"; tail -n 3 $(OUT)/logs/cpp_example.log; \
	  timeout 60 /tmp/bwprof-example/profile_gpu 2>&1 | tee $(OUT)/cpp_example_gpu.log
	-if ls .whl/*.whl >/dev/null 2>&1; then $(PYTHON) -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
	  --upgrade --target /tmp/site .whl/*.whl; fi; PYTHONPATH=/tmp/site:$(CURDIR)/python timeout 200 $(PYTHON) \
	  notebooks/execute.py $(OUT) 05_profile_your_code.ipynb > $(OUT)/logs/notebook.log 2>&1; echo "notebook exit $$?"
	tar -C $(OUT) -czf $(OUT)/profile_logs.tgz logs && rm -rf $(OUT)/logs

# Issue #14 part A on the GPU machine: the roof kernels' checks (gtest and pytest), the peak table
# (every matrix type and cache level, measured beside theoretical) beside PyTorch's 8192^3 matmul
# per type and its L2-resident sum, then a `bench --quick` roofline chart with the cache levels.
# $(OUT): peaks.log, peaks.csv, roofline.png, roofline.svg, logs.tar.gz.
.PHONY: gpu-peaks
gpu-peaks: gpu-build
	mkdir -p $(OUT)/logs
	-timeout 150 $(GPU_BUILD)/bwprof_tests --gtest_filter='PeakKernels.*:Judge.*:Registry.*:Peaks.*' \
	  > $(OUT)/logs/gtest.log 2>&1; echo "gtest exit $$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED  \]" $(OUT)/logs/gtest.log | tail -n 12
	-timeout 150 $(PYTHON) -m pytest -q -p no:cacheprovider tests/python/test_peaks.py \
	  tests/python/test_roofline_agreement.py tests/python/test_roofline.py > $(OUT)/logs/pytest.log 2>&1; \
	  echo "pytest exit $$?"; tail -n 5 $(OUT)/logs/pytest.log
	-PYTHONUNBUFFERED=1 timeout 200 $(PYTHON) benchmarks/peaks.py --csv $(OUT)/peaks.csv 2>&1 | tee $(OUT)/peaks.log
	-PYTHONUNBUFFERED=1 timeout 200 $(PYTHON) -m bwprof bench --quick --out $(OUT)/logs/bench > $(OUT)/logs/bench.log 2>&1; \
	  echo "bench exit $$?"; tail -n 4 $(OUT)/logs/bench.log; \
	  cp $$(ls -d $(OUT)/logs/bench/*/ | head -n 1)roofline.png $$(ls -d $(OUT)/logs/bench/*/ | head -n 1)roofline.svg $(OUT)/ 2>/dev/null; true
	cd $(OUT) && tar czf logs.tar.gz logs && rm -rf logs
	ls $(OUT)

# Issue #14's checks on the GPU machine in one call, under 9 minutes with gpu-build (70-130 s): the
# step timeouts add up to 410 s, so a step that hangs costs its own output only. The peak table
# (every matrix type, cache level and vector unit, then the size curve's lines, read and copy, each
# with its fit, RMS residual and worst point) beside PyTorch; a FULL bench (every kernel of the
# default suite at full shapes and repeats, FP32 and FP16, the clean read stream_read and the
# intensity sweep among them, single timing; the host/device transfers and memset left out: they
# are no roofline points, take the most time and `make gpu-links` covers them) whose roofline and
# size charts (both lines) are drawn from its run folder; benchmarks/gemv_graph.py (the GEMVs single against
# the read line and in a CUDA graph beside torch.mv in a graph). 6 files in $(OUT): peaks.csv,
# bench_run.tgz (the run folder), roofline.png, size_ceiling.png, gemv_graph.csv and logs.tgz
# (each step's log); the tables are printed too.
PEAKS_ALL_RUNS ?= /tmp/bwprof-peaks-all
.PHONY: gpu-peaks-all gpu-peaks2-quick
gpu-peaks-all: gpu-build
	rm -rf $(PEAKS_ALL_RUNS) $(OUT)/logs && mkdir -p $(OUT)/logs $(PEAKS_ALL_RUNS)
	-PYTHONUNBUFFERED=1 timeout 120 $(PYTHON) benchmarks/peaks.py --csv $(OUT)/peaks.csv 2>&1 | tee $(OUT)/logs/peaks.log
	-kernels=$$($(PYTHON) -c "from bwprof import suite; print(' '.join(dict.fromkeys(c.kernel for c in suite.default_suite() \
	  if c.kernel not in ('h2d', 'd2h', 'd2d', 'memset'))))"); echo "bench kernels: $$kernels"; \
	  PYTHONUNBUFFERED=1 timeout 200 $(PYTHON) -m bwprof bench --device gpu --kernels $$kernels --no-plots --no-progress \
	  --out $(PEAKS_ALL_RUNS) > $(OUT)/logs/bench.log 2>&1; echo "bench exit $$?"; grep -E "measurements on|WARNING|FAILED" $(OUT)/logs/bench.log
	-run=$$(ls -d $(PEAKS_ALL_RUNS)/*/ | head -n 1); timeout 30 $(PYTHON) -m bwprof plot $$run --out $(PEAKS_ALL_RUNS)/plots \
	  > $(OUT)/logs/plot.log 2>&1; echo "plot exit $$?"; cp $(PEAKS_ALL_RUNS)/plots/roofline.png $(PEAKS_ALL_RUNS)/plots/size_ceiling.png $(OUT)/; \
	  tar -czf $(OUT)/bench_run.tgz -C $(PEAKS_ALL_RUNS) .
	-PYTHONUNBUFFERED=1 timeout 60 $(PYTHON) benchmarks/gemv_graph.py --csv $(OUT)/gemv_graph.csv 2>&1 | tee $(OUT)/logs/gemv_graph.log
	tar -czf $(OUT)/logs.tgz -C $(OUT) logs && rm -rf $(OUT)/logs
	ls $(OUT)

# Issue #14's rest, second look (under 5 minutes with a warm build): the size curve split by access
# pattern. pytest: the tuning knobs against the reference at odd sizes (BWPROF_GEMV_BLOCK,
# BWPROF_GEMV_LOADS, BWPROF_Q4_KERNEL with the two-tile and X-in-registers rings, BWPROF_STREAM_READ's
# shapes), the clean read stream_read (single and graph), and the GPU size curve's two lines (read
# and copy, a GEMV judged against the read's). benchmarks/gemv_ceiling.py: each line's residual and
# worst point, the clean read's shapes from 64 KB to 134 MB, each GEMV beside a clean read and a copy
# of its bytes and beside the read line and the old mixed line, then the candidates.
# $(OUT): gemv_ceiling.csv, logs.tgz (pytest.log, gemv_ceiling.log).
gpu-peaks2-quick: gpu-build
	rm -rf $(OUT)/logs && mkdir -p $(OUT)/logs
	-timeout 200 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -rs -s tests/python/test_gpu_tuning_knobs.py \
	  tests/python/test_gpu_kernels.py tests/python/test_gpu_size_graph.py \
	  -k "match_the_reference or knob or stream_read or size_curve" > $(OUT)/logs/pytest.log 2>&1; \
	  echo "pytest exit $$?"; grep -E "size curve,|passed|failed|Error" $(OUT)/logs/pytest.log | tail -n 8
	-PYTHONUNBUFFERED=1 timeout 270 $(PYTHON) benchmarks/gemv_ceiling.py --csv $(OUT)/gemv_ceiling.csv 2>&1 | tee $(OUT)/logs/gemv_ceiling.log
	tar -czf $(OUT)/logs.tgz -C $(OUT) logs && rm -rf $(OUT)/logs

# Issue #14's last item: the Q4_0 `tiled` GEMV (M = 1, single launch) at >= 90 % of the read line
# (under 4 minutes with a warm build). gtest: the Q4_0 tests and the GPU footprint test (the library
# now keeps the weights as records); pytest: every BWPROF_Q4_KERNEL kernel against the reference at
# odd sizes, and the probes (which must NOT pass for the product), the Q4_0 GPU kernel tests;
# compute-sanitizer memcheck over the two adopted kernels at odd sizes; benchmarks/gemv_ceiling.py
# --q4-only: 4096x4096 and 14336x4096 beside the read line and a clean read of their bytes, rounds
# 1-2's best in 2 alternating passes, then "the floor": each kernel against its loads alone (and the
# issue-rate bound where counted). (Round 3's split K lost at 2e80c96: docs/notes/gemv.md.)
# $(OUT): gemv_ceiling_q4.csv, logs.tgz (gtest.log, pytest.log, memcheck.log, gemv_ceiling_q4.log).
.PHONY: gpu-q4-fast
Q4_MEMCHECK_KERNELS := ringx8x4rl ring8x4rl ring16x2rle flood32x2
gpu-q4-fast: gpu-build
	rm -rf $(OUT)/logs && mkdir -p $(OUT)/logs
	-timeout 60 $(GPU_BUILD)/bwprof_tests --gtest_filter='Q4*:GpuLimits.FootprintCoversWhatEveryGpuInstanceAllocates' \
	  > $(OUT)/logs/gtest.log 2>&1; \
	  echo "gtest exit $$?"; tail -n 2 $(OUT)/logs/gtest.log
	-timeout 170 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -rs tests/python/test_gpu_tuning_knobs.py \
	  tests/python/test_gpu_kernels.py -k "q4_0" > $(OUT)/logs/pytest.log 2>&1; \
	  echo "pytest exit $$?"; grep -E "passed|failed|Error" $(OUT)/logs/pytest.log | tail -n 8
	-for k in $(Q4_MEMCHECK_KERNELS); do BWPROF_Q4_KERNEL=$$k timeout 25 compute-sanitizer --tool memcheck \
	  --error-exitcode 3 $(PYTHON) -c "import bwprof; [print('$$k', s, bwprof.measure('q4_0_matmul', dtype='fp16', \
	  device='gpu', variant='tiled', repeats=2, min_time_s=0.0, warmup=1, **s).verified) for s in \
	  (dict(M=1, N=33, K=96), dict(M=9, N=40, K=160), dict(M=2, N=1001, K=4096))]"; echo "memcheck $$k exit $$?"; \
	  done > $(OUT)/logs/memcheck.log 2>&1; grep -E "exit|ERROR SUMMARY|False" $(OUT)/logs/memcheck.log | sort | uniq -c
	-PYTHONUNBUFFERED=1 timeout 200 $(PYTHON) benchmarks/gemv_ceiling.py --q4-only --csv $(OUT)/gemv_ceiling_q4.csv 2>&1 \
	  | tee $(OUT)/logs/gemv_ceiling_q4.log
	tar -czf $(OUT)/logs.tgz -C $(OUT) logs && rm -rf $(OUT)/logs

# Issue #16: links around the GPU. Every test and benchmark here runs with NCCL_NVLS_ENABLE=0
# (bwprof never turns NVLink multicast on or off itself). Logs go into one tarball under $(OUT).
# gpu-links (one H100): the link tests, host transfers pinned vs pageable, d2d and memset beside
# PyTorch, and the `bench --kernels transfer` path with its chart.
.PHONY: gpu-links gpu-links-multi
LINKS_ENV := NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
gpu-links: gpu-build
	mkdir -p $(OUT)/links
	-$(LINKS_ENV) timeout 150 $(GPU_BUILD)/bwprof_tests --gtest_filter='Links*:Collectives*:GpuLinks*' \
	  > $(OUT)/links/gtest.log 2>&1; echo "gtest exit $$?"; tail -n 3 $(OUT)/links/gtest.log
	-$(LINKS_ENV) timeout 240 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" tests/python/test_links.py \
	  tests/python/test_gpu_links.py > $(OUT)/links/pytest.log 2>&1; echo "pytest exit $$?"; \
	  grep -E "passed|failed|error|skipped" $(OUT)/links/pytest.log | tail -n 8
	-$(LINKS_ENV) timeout 200 $(PYTHON) benchmarks/transfers.py --csv $(OUT)/transfers.csv > $(OUT)/transfers.log 2>&1; \
	  echo "transfers exit $$?"; cat $(OUT)/transfers.log
	-$(LINKS_ENV) timeout 90 $(PYTHON) -m bwprof bench --kernels transfer --quick --no-progress --out $(OUT)/links/run \
	  > $(OUT)/links/bench.log 2>&1; echo "bench exit $$?"; tail -n 5 $(OUT)/links/bench.log
	tar -czf $(OUT)/links.tar.gz -C $(OUT) links && rm -rf $(OUT)/links

# gpu-links-multi (two H200s): the same tests with two GPUs (peer copies, the 2-process NCCL job),
# the P2P matrix and every collective's busbw over 1 KB..1 GB in one process, PyTorch's
# torch.distributed all_reduce of the same sizes (torchrun, one process per GPU), the comparison,
# and bwprof's own 2-process bootstrap through torchrun.
gpu-links-multi: gpu-build
	mkdir -p $(OUT)/multi
	-$(LINKS_ENV) timeout 150 $(GPU_BUILD)/bwprof_tests --gtest_filter='Links*:Collectives*:GpuLinks*' \
	  > $(OUT)/multi/gtest.log 2>&1; echo "gtest exit $$?"; tail -n 3 $(OUT)/multi/gtest.log
	-$(LINKS_ENV) timeout 200 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" tests/python/test_gpu_links.py \
	  > $(OUT)/multi/pytest.log 2>&1; echo "pytest exit $$?"; grep -E "passed|failed|error|skipped" $(OUT)/multi/pytest.log | tail -n 8
	-$(LINKS_ENV) timeout 200 $(PYTHON) benchmarks/collectives.py node --csv $(OUT)/bwprof_node.csv \
	  --p2p-csv $(OUT)/multi/p2p.csv --plots $(OUT)/multi > $(OUT)/multi/node.log 2>&1; echo "node exit $$?"; \
	  grep -A12 "^P2P" $(OUT)/multi/node.log | head -n 14
	-$(LINKS_ENV) timeout 120 $(PYTHON) -m torch.distributed.run --standalone --nproc_per_node 2 \
	  benchmarks/collectives.py torch --csv $(OUT)/torch_allreduce.csv > $(OUT)/multi/torch.log 2>&1; echo "torch exit $$?"
	-$(PYTHON) benchmarks/collectives.py compare $(OUT)/bwprof_node.csv $(OUT)/torch_allreduce.csv \
	  --csv $(OUT)/multi/compare.csv | tee $(OUT)/compare.log
	-$(LINKS_ENV) timeout 120 $(PYTHON) -m torch.distributed.run --standalone --nproc_per_node 2 -m bwprof collectives \
	  --quick --out $(OUT)/multi/ranks > $(OUT)/multi/ranks.log 2>&1; echo "torchrun bwprof exit $$?"; \
	  ls $(OUT)/multi/ranks; tail -n 4 $(OUT)/multi/ranks.log
	tar -czf $(OUT)/multi.tar.gz -C $(OUT) multi && rm -rf $(OUT)/multi

# Issue #15 on the GPU machine: the model tests (CPU and GPU), then benchmarks/model_peer.py: the
# encoder (separate and fused forms, 256 positions) and the decode step (FT-054 and 8B-class, FP16 and
# Q4_0 weights, batch 1, KV 1024) with bwprof, each beside the same step built from torch ops in a
# CUDA graph. $(OUT): model_peer.log (every report and the side-by-side table), pytest_model.log, the
# encoder's and the 8B Q4_0 step's charts, model_runs.tgz (every run folder).
MODEL_RUNS ?= /tmp/bwprof-model-runs
.PHONY: gpu-model
gpu-model: gpu-build
	rm -rf $(MODEL_RUNS) && mkdir -p $(OUT) $(MODEL_RUNS)
	-timeout 150 $(PYTHON) -m pytest -q -p no:cacheprovider -o addopts="" -rs tests/python/test_model.py \
	  tests/python/test_gpu_model.py > $(OUT)/pytest_model.log 2>&1; echo "pytest exit $$?"; tail -n 6 $(OUT)/pytest_model.log
	-PYTHONUNBUFFERED=1 timeout 300 $(PYTHON) benchmarks/model_peer.py --out $(MODEL_RUNS) > $(OUT)/model_peer.log 2>&1; \
	  echo "model_peer exit $$?"; grep -A16 "^bwprof beside PyTorch" $(OUT)/model_peer.log
	-enc=$$(ls -d $(MODEL_RUNS)/*-encoder | head -n 1); q8=$$(ls -d $(MODEL_RUNS)/*-decode-8b-q4_0 | head -n 1); \
	  cp $$enc/model_breakdown.png $(OUT)/encoder_breakdown.png; cp $$enc/model_whatif.png $(OUT)/encoder_whatif.png; \
	  cp $$q8/model_breakdown.png $(OUT)/decode_8b_q4_0_breakdown.png; true
	-tar -czf $(OUT)/model_runs.tgz -C $(MODEL_RUNS) .
	ls $(OUT)

# GPU-machine targets of work in progress, one file per topic (mk/README.md).
-include $(wildcard mk/*.mk)
