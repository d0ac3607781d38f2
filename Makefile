# The README's two commands (make run, make test) and the developer ones.
# Everything uses one Python: python3 on PATH unless PYTHON= says otherwise.
PYTHON ?= python3
BUILD ?= build
GPU ?= AUTO
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BENCH_ARGS ?=
PY_PACKAGES := numpy pandas matplotlib pybind11 scikit-build-core pytest
PY_MODULES := numpy,pandas,matplotlib,pybind11,scikit_build_core,pytest
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: run test setup build cpp-test py-test install clean

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

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release -DBWPROF_GPU=$(GPU) \
	  -DPython_EXECUTABLE="$$(command -v $(PYTHON))"

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

cpp-test: build
	@if [ -f $(BUILD)/CTestTestfile.cmake ]; then \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS); \
	else echo "cpp-test: GoogleTest not found, C++ tests not built"; exit 1; fi

py-test: build
	$(PYTHON) -m pytest -q tests/python

install: setup
	$(PYTHON) -m pip install --no-build-isolation .

clean:
	rm -rf $(BUILD) python/bwprof/_core*.so

# ---- the GPU machine (offline, no apt): build, test, benchmark in one call -------------------
# GoogleTest's sources travel in .carry/googletest (make carry-gtest here, then carry .carry).
GPU_BUILD ?= build-gpu
OUT ?= /tmp/bwprof-out
.PHONY: carry-gtest gpu-build gpu-check gpu-check-compute
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

# The compute kernels (GEMM, QKV, flash attention): GPU tests, one pass of the small cases under
# compute-sanitizer memcheck, then the benchmark beside PyTorch.
gpu-check-compute: gpu-build
	mkdir -p $(OUT)
	-ctest --test-dir $(GPU_BUILD) --output-on-failure -j 4 2>&1 | tail -n 30 | tee $(OUT)/ctest.log
	-$(PYTHON) -m pytest -q tests/python/test_gpu_gemm_attention.py 2>&1 | tee $(OUT)/pytest_compute.log | tail -n 40
	-command -v compute-sanitizer >/dev/null && compute-sanitizer --tool memcheck --error-exitcode 3 \
	  $(GPU_BUILD)/bwprof_tests --gtest_filter='Small/GpuCompute.*:GpuComputeErrors.*' > $(OUT)/memcheck.log 2>&1; \
	  echo "memcheck exit $$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $(OUT)/memcheck.log | tail -n 8
	PYTHONUNBUFFERED=1 $(PYTHON) benchmarks/compute.py --csv $(OUT)/compute.csv 2>&1 | tee $(OUT)/compute.log
