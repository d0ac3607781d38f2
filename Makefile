# The README's two commands (make run, make test) and the developer ones.
# Everything uses one Python: python3 on PATH unless PYTHON= says otherwise.
PYTHON ?= python3
BUILD ?= build
GPU ?= AUTO
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BENCH_ARGS ?=
PY_PACKAGES := numpy pandas matplotlib pybind11 scikit-build-core pytest nbclient ipykernel nbformat
PY_MODULES := numpy,pandas,matplotlib,pybind11,scikit_build_core,pytest,nbclient,ipykernel,nbformat
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
