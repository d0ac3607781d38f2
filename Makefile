# bwprof's commands.
#   make run                    the benchmark suite on the first GPU (else the CPU), with its report
#   make test                   install what is missing, build, run every C++ and Python test
#   make build / install / clean
#   make ci                     what CI runs (.ci/run)
#   make gpu-check              on a GPU machine: the tests with the GPU, then compute-sanitizer memcheck
#   make gpu-bench SUITE=gemm   on a GPU machine: one benchmark suite beside PyTorch (SUITE=list lists them)
# One Python throughout: python3 on PATH unless PYTHON= says otherwise. GPU=OFF builds the CPU
# backend only; CUDAARCHS=86 (say), in a fresh BUILD folder, builds for that GPU (README: GPUs).
PYTHON ?= python3
BUILD ?= build
GPU ?= AUTO
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
BENCH_ARGS ?=
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: run test setup build cpp-test py-test install clean ci gpu-check gpu-bench

run: build
	$(PYTHON) -m bwprof bench $(BENCH_ARGS)

test: build cpp-test py-test

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release -DBWPROF_GPU=$(GPU) \
	  -DPython_EXECUTABLE="$$(command -v $(PYTHON))" $(CMAKE_ARGS)

# What the build and the tests need, installed only where missing (so this also works offline where
# everything is present): Debian's cmake, g++ and GoogleTest as root through apt, Python packages
# through pip. What cannot be installed is named, and the build goes on without it.
PY_PACKAGES := numpy pandas matplotlib pybind11 scikit-build-core pytest hypothesis pytest-xdist nbclient ipykernel nbformat orjson plotly
PY_MODULES := numpy,pandas,matplotlib,pybind11,scikit_build_core,pytest,hypothesis,xdist,nbclient,ipykernel,nbformat,orjson,plotly
HAVE_GTEST = [ -d /usr/src/googletest ] || [ -f /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake ] || \
  [ -f /usr/lib/cmake/GTest/GTestConfig.cmake ]
setup:
	@if ! command -v cmake >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 || ! { $(HAVE_GTEST); }; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    echo "setup: installing Debian packages (cmake, g++, libgtest-dev)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ libgtest-dev >/dev/null; } || \
	      echo "setup: apt-get failed; the C++ tests need libgtest-dev"; \
	  else echo "setup: cmake, g++ or libgtest-dev missing and apt-get unavailable; C++ tests may be skipped"; fi; \
	fi
	@# chromium runs the HTML report's browser tests (skipped where it is missing)
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; } || \
	  echo "setup: chromium could not be installed; the report's browser tests are skipped"
	@$(PYTHON) -c "import $(PY_MODULES)" >/dev/null 2>&1 || { echo "setup: installing Python packages ($(PY_PACKAGES))"; \
	  $(PYTHON) -m pip install -q --retries 1 --timeout 15 $(PY_PACKAGES) || \
	    echo "setup: pip failed; the tests of what is missing will fail"; }
	@# orjson before its depth limit (up to 3.9.0) is not used by the trace readers (deep JSON crashes
	@# it): upgrade it where pip can, so that the fast path is the one tested
	@$(PYTHON) -c "import orjson; orjson.loads(b'[' * 1100 + b']' * 1100)" >/dev/null 2>&1 && \
	  { $(PYTHON) -m pip install -q --retries 1 --timeout 15 'orjson>=3.9.15' >/dev/null 2>&1 || \
	    echo "setup: orjson has no depth limit and could not be upgraded; traces are read with json"; } || true

cpp-test: build
	@if [ -f $(BUILD)/CTestTestfile.cmake ]; then \
	  ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS); \
	else echo "cpp-test: GoogleTest not found, C++ tests not built"; exit 1; fi

# The Python tests in PYTEST_WORKERS processes (pytest-xdist), then the few marked `serial` (they
# judge the CPU's own timing) alone. PYTEST_ARGS adds to both runs.
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=
PYTEST_PATHS ?= tests/python
py-test: build
	@if [ "$(PYTEST_WORKERS)" -gt 1 ] 2>/dev/null && $(PYTHON) -c "import xdist" >/dev/null 2>&1; then \
	  echo "pytest: $(PYTEST_WORKERS) processes, then the tests marked serial alone"; \
	  $(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) -m "not serial" $(PYTEST_ARGS) $(PYTEST_PATHS) || exit $$?; \
	  $(PYTHON) -m pytest -q -m serial $(PYTEST_ARGS) $(PYTEST_PATHS); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc; \
	else $(PYTHON) -m pytest -q $(PYTEST_ARGS) $(PYTEST_PATHS); fi

install: setup
	$(PYTHON) -m pip install --no-build-isolation .

clean:
	rm -rf $(BUILD) build-* python/bwprof/_core*.so gpu-out

ci:
	.ci/run

# ---- on a machine with a GPU: `make gpu-check`, `make gpu-bench SUITE=<name>` ----------------
# benchmarks/gpu_suites.py runs each suite's steps, each under a time limit, logs and CSVs in
# GPU_OUT; `make gpu-bench SUITE=list` lists the suites. BEFORE=<another bwprof checkout, built>
# runs a benchmark suite there too, alternated with this tree, and compares the rows; STEPS=a,b runs
# some of a suite's steps (each under its own time limit: within a machine's time per command).
SUITE ?= list
GPU_OUT ?= gpu-out
BEFORE ?=
SUITE_ARGS ?=
STEPS ?=
GPU_SUITES = $(PYTHON) benchmarks/gpu_suites.py --out $(GPU_OUT) --build $(BUILD) $(if $(STEPS),--only $(STEPS))
gpu-check: build
	$(GPU_SUITES) check
gpu-bench: build
	$(GPU_SUITES) $(SUITE) $(if $(BEFORE),--before $(BEFORE)) $(if $(SUITE_ARGS),-- $(SUITE_ARGS))

# ---- the other builds CI makes (.ci/run) -------------------------------------------------------
.PHONY: test-cpu-only cuda-arch-check hip-build pip-check cpp-example

# The CPU-only build (no GPU backend compiled in): its C++ tests (they link the build's own
# libraries, compiled without the GPU code), then the Python tests whose outcome depends on what the
# build carries (its features, variants, devices and their errors). The rest of the Python tests go
# through the same CPU code in both builds and ran in `make test`.
CPU_ONLY_PY_TESTS := test_api.py test_errors.py test_links.py test_peaks.py test_roofline_agreement.py test_gpu_code.py
test-cpu-only:
	$(MAKE) build cpp-test BUILD=build-cpu GPU=OFF
	$(MAKE) py-test BUILD=build-cpu GPU=OFF PYTEST_PATHS="$(addprefix tests/python/,$(CPU_ONLY_PY_TESTS))"

# The CUDA sources of $(BUILD) (a CUDA build) compiled, device code only, for CUDA_CHECK_ARCHS as the
# default build compiles them (.ci/cuda_arch_check.py: at -O0 unless CUDA_CHECK_ARGS=--opt=3).
CUDA_CHECK_ARCHS ?= 80,89,100
CUDA_CHECK_ARGS ?=
cuda-arch-check:
	$(PYTHON) .ci/cuda_arch_check.py $(BUILD) --archs $(CUDA_CHECK_ARCHS) --jobs $(JOBS) --out build-arch-check \
	  $(CUDA_CHECK_ARGS)

# The AMD targets, compiled with Debian 12's hipcc (ROCm 5.2: gfx90a, gfx940 and gfx1030; the default
# BWPROF_HIP_TARGETS gfx942/gfx1100 need a newer ROCm), then the matrix instructions checked in the
# assembly of the targets whose device libraries Debian lacks (.ci/hip_isa_check.sh).
HIP_TARGETS ?= gfx90a;gfx940;gfx1030
hip-build:
	@command -v hipcc >/dev/null 2>&1 || { echo "hip-build: installing Debian's hipcc"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hipcc >/dev/null; }
	rocblas=$$(sh .ci/rocblas_header.sh build-hip-deps); \
	cmake -S . -B build-hip $(GENERATOR) -DBWPROF_GPU=HIP -DBWPROF_BUILD_TESTS=OFF -DBWPROF_BUILD_PYTHON=OFF \
	  "-DBWPROF_HIP_TARGETS=$(HIP_TARGETS)" $${rocblas:+-DBWPROF_ROCBLAS_ROOT=$$rocblas -DBWPROF_ROCBLAS_COMPILE_CHECK=ON}
	cmake --build build-hip -j $(JOBS)
	sh .ci/hip_isa_check.sh build-hip

# The package as `pip install --no-build-isolation .` builds it, into a scratch folder, then imported
# from outside the tree. PIP_BUILD_DIR keeps scikit-build-core's build folder (CI: inside the tree,
# so that the compiler cache sees the paths make build's objects had); empty: a temporary folder.
PIP_BUILD_DIR ?=
pip-check: setup
	rm -rf build-pip-target $(PIP_BUILD_DIR)
	$(PYTHON) -m pip install -q --no-build-isolation --no-deps --target build-pip-target \
	  $(if $(PIP_BUILD_DIR),-C build-dir=$(PIP_BUILD_DIR)) .
	cd /tmp && PYTHONPATH=$(CURDIR)/build-pip-target $(PYTHON) -c "import bwprof; \
	  m = bwprof.measure('stream_triad', device='cpu', n=4096, repeats=1); \
	  assert m.verified, m; print('pip-built bwprof', bwprof.__version__, 'from', bwprof.__file__)"

# The installed C++ package as a project outside the tree uses it: $(BUILD) installed into a scratch
# prefix, examples/cpp built against it (the GPU example too where the build has a GPU backend), the
# CPU example run.
cpp-example: build
	rm -rf build-install build-example
	cmake --install $(BUILD) --prefix $(CURDIR)/build-install > /dev/null
	cmake -S examples/cpp -B build-example $(GENERATOR) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_PREFIX_PATH=$(CURDIR)/build-install
	cmake --build build-example -j $(JOBS)
	build-example/profile_cpu
