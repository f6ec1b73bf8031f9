# metacache — `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo
SHELL := bash
.SHELLFLAGS := -eo pipefail -c
TEST_LOG := $(or $(CARGO_TARGET_DIR),target)/metacache-test.log

.PHONY: help run test test-deps fmt fmt-check lint bench bench-quick bench-planning bench-lance bench-lookaside bench-disk bench-disk-planning doc clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: ## Build and run the service on its defaults: MySQL 127.0.0.1:9030, HTTP 127.0.0.1:8030, data in ./data
	$(CARGO) run --locked -p metacache -- serve

test-deps: ## Find or install the mysql client and promtool the integration tests use
	@scripts/test-deps.sh

test: fmt-check lint test-deps ## Format check, clippy -D warnings, and every test of the workspace
	@mkdir -p $(dir $(TEST_LOG))
	$(CARGO) test --workspace --all-targets --locked 2>&1 | tee $(TEST_LOG)
	$(CARGO) test --workspace --doc --locked 2>&1 | tee -a $(TEST_LOG)
	@awk '/^test result:/ { passed += $$4; failed += $$6 } END { printf "%d passed, %d failed\n", passed, failed }' $(TEST_LOG)

fmt: ## Format the code
	$(CARGO) fmt --all

fmt-check: ## Fail on unformatted code
	$(CARGO) fmt --all -- --check

lint: ## Clippy on every target, warnings are errors
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

BENCH_CRATES := -p metacache-cache -p metacache-catalog -p metacache-sources -p metacache-sql -p metacache-server

bench: ## Criterion benchmarks and the governance run (see docs/benchmarks.md)
	$(CARGO) bench $(BENCH_CRATES) --benches --locked

bench-quick: ## The same benchmarks with short measurement times
	$(CARGO) bench $(BENCH_CRATES) --benches --locked -- --warm-up-time 1 --measurement-time 2

bench-planning: ## Cold vs warm planning metadata of a 10,000-file Hive-style table, local FS and SeaweedFS S3
	$(CARGO) bench -p metacache-sources --bench bench_planning --locked

bench-lance: ## Cold vs warm Lance table-access resolution, directory and REST namespaces (needs pylance for REST)
	$(CARGO) bench -p metacache-sources --bench bench_lance --locked

bench-lookaside: ## Look-aside GET throughput against nginx, both under wrk (needs wrk, nginx)
	scripts/bench-lookaside.sh

bench-disk: ## Disk-tier hits against foyer and bare reads (one process), then 1/2/4 processes on one directory
	$(CARGO) bench -p metacache-disk --features foyer-bench --bench hits --locked
	scripts/disk-bench.sh

bench-disk-planning: ## Iceberg and Paimon planning on SeaweedFS: cold vs disk-warm (fresh node) vs memory-warm
	$(CARGO) bench -p metacache-sources --bench bench_disk_tier --locked

doc: ## API documentation
	$(CARGO) doc --workspace --no-deps

clean: ## Remove build output
	$(CARGO) clean
