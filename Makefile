# The two commands a newcomer needs: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
JOBS ?= 2
LISTEN ?= 127.0.0.1:8080
DATA_DIR ?= .trainyard
# Model seconds per wall second of the simulated runtime under `make run`: a reserved A3 VM boots
# in 300 model seconds, so at 30 the quick start's job is done in about 15 s of wall time, while
# every time the API reports (boot, pull, run, cost) stays model time.
SIM_SPEED ?= 30
export CCACHE_DIR ?= $(HOME)/.cache/trainyard-ccache
# Hits across clones (CI builds a fresh one each time) and with precompiled headers.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_SLOPPINESS ?= pch_defines,time_macros,include_file_mtime,include_file_ctime

FUZZ_DIR ?= $(BUILD_DIR)/fuzz
FUZZ_SECONDS ?= 60
SOAK_FUZZ_SECONDS ?= 1800

.PHONY: setup run-setup build fuzz-build run test fuzz asan bench bench-scheduler soak pictures console-pictures format clean

setup:
	@bash scripts/setup dev

# make run configures without the tests and benchmarks (no GoogleTest or Google Benchmark needed)
# and builds only the trainyard binary; make build and make test turn them on in the same tree.
build: setup
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DTRAINYARD_TESTS=ON -DTRAINYARD_BENCH=ON
	cmake --build $(BUILD_DIR) -j$(JOBS)

run-setup:
	@bash scripts/setup

run: run-setup
	test -f $(BUILD_DIR)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DTRAINYARD_TESTS=OFF -DTRAINYARD_BENCH=OFF
	cmake --build $(BUILD_DIR) -j$(JOBS) --target trainyard
	$(BUILD_DIR)/trainyard serve --listen $(LISTEN) --data-dir $(DATA_DIR) --sim-speed $(SIM_SPEED)

# libFuzzer targets (tests/fuzz/), built by clang++ in a tree of their own.
fuzz-build: setup
	CXX=clang++ cmake -S tests/fuzz -B $(FUZZ_DIR)
	cmake --build $(FUZZ_DIR) -j$(JOBS)

# Slurm (for tests/e2e/slurm_test.sh's throwaway cluster), nginx and Prometheus are installed for
# the tests only: make run stays light.
# A skip (exit 77) must not pass for green: tests/check_skips reads ctest's JUnit file and fails on
# any skip tests/allowed_skips does not allow. Both run; ctest's own failure status comes first.
test: build fuzz-build
	bash scripts/setup slurm test-tools
	rm -f $(BUILD_DIR)/ctest-junit.xml
	(cd $(BUILD_DIR) && ctest -j2 --output-on-failure --output-junit ctest-junit.xml); \
	  status=$$?; \
	  python3 tests/check_skips $(BUILD_DIR)/ctest-junit.xml || [ $$status -ne 0 ] || status=1; \
	  exit $$status

# Each fuzz target for FUZZ_SECONDS (make test runs them for 60 s through ctest).
fuzz: fuzz-build
	bash tests/fuzz/run $(FUZZ_DIR) $(FUZZ_SECONDS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, in its own build tree.
asan: setup
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTRAINYARD_ASAN=ON -DTRAINYARD_BENCH=OFF
	cmake --build build-asan -j$(JOBS)
	cd build-asan && LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest -j2 --output-on-failure

# Benchmarks (bench/): the server under wrk beside its references (the no-work endpoint, pgbench),
# end to end, and the scheduler core. Writes bench/results/latest.{json,md}. bench-scheduler runs
# the scheduler core's whole Google Benchmark grid (1k-100k pending x 100-10k nodes).
bench: build
	bash scripts/setup slurm test-tools wrk
	bash bench/run $(BUILD_DIR)

bench-scheduler: build
	$(BUILD_DIR)/bench/trainyard_bench --benchmark_counters_tabular=true

# The long runs: each fuzz target for SOAK_FUZZ_SECONDS, the store property test over
# SOAK_PROPERTY_SEEDS seeds (tests/integration/storage/store_property_test.cpp: every seed, each
# divergence named; make test runs 28), then the crash soak (tests/soak/).
SOAK_PROPERTY_SEEDS ?= 500
soak: build fuzz-build
	bash tests/fuzz/run $(FUZZ_DIR) $(SOAK_FUZZ_SECONDS)
	TRAINYARD_PROPERTY_SEEDS=$(SOAK_PROPERTY_SEEDS) TRAINYARD_PROPERTY_KEEP_GOING=1 \
	  $(BUILD_DIR)/tests/integration_tests --gtest_filter='StorePropertyTest.EveryHistory*'
	python3 tests/soak/crash_soak.py $(BUILD_DIR)/trainyard --kills 100 --pg-restarts 10
	python3 tests/soak/crash_soak.py $(BUILD_DIR)/trainyard --scenario handover --kills 20 --pg-restarts 0
	python3 tests/soak/crash_soak.py $(BUILD_DIR)/trainyard --scenario handover --all-full --kills 20 --pg-restarts 0

# The monitoring pictures of docs/operations.md (docs/monitoring/pictures/): a few minutes of a
# real run under Prometheus, plotted from its range queries with the dashboard's PromQL (Debian's
# matplotlib is for the system python3, hence /usr/bin/python3).
PICTURE_MINUTES ?= 4
pictures: build
	bash scripts/setup python3-matplotlib test-tools
	/usr/bin/python3 scripts/dashboard_pictures.py $(BUILD_DIR)/trainyard docs/monitoring/pictures --minutes $(PICTURE_MINUTES)

# The web console's screenshots (README.md, docs/console.md), from a real run in Debian's chromium.
console-pictures: build
	bash scripts/setup test-tools
	bash scripts/console_pictures.sh $(BUILD_DIR) docs/console

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD_DIR) build-asan
