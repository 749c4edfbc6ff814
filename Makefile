# The two commands a newcomer needs: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
JOBS ?= 2
LISTEN ?= 127.0.0.1:8080
DATA_DIR ?= .trainyard
SIM_SPEED ?= 1
export CCACHE_DIR ?= $(HOME)/.cache/trainyard-ccache
# Hits across clones (CI builds a fresh one each time) and with precompiled headers.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_SLOPPINESS ?= pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: setup build run test asan bench bench-scheduler format clean

setup:
	@bash scripts/setup

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

build: setup $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	$(BUILD_DIR)/trainyard serve --listen $(LISTEN) --data-dir $(DATA_DIR) --sim-speed $(SIM_SPEED)

test: build
	cd $(BUILD_DIR) && ctest -j2 --output-on-failure

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, in its own build tree.
asan: setup
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTRAINYARD_ASAN=ON -DTRAINYARD_BENCH=OFF
	cmake --build build-asan -j$(JOBS)
	cd build-asan && LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest -j2 --output-on-failure

# Benchmarks (bench/): the server under wrk beside its references (the no-work endpoint, pgbench),
# end to end, and the scheduler core. Writes bench/results/latest.{json,md}. bench-scheduler runs
# the scheduler core's whole Google Benchmark grid (1k-100k pending x 100-10k nodes).
bench: build
	bash bench/run $(BUILD_DIR)

bench-scheduler: build
	$(BUILD_DIR)/bench/trainyard_bench --benchmark_counters_tabular=true

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD_DIR) build-asan
