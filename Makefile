# metacache — `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo
SHELL := bash
.SHELLFLAGS := -eo pipefail -c
TEST_LOG := $(or $(CARGO_TARGET_DIR),target)/metacache-test.log

.PHONY: help run test fmt fmt-check lint bench bench-quick doc clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

run: ## Run the service on its embedded defaults (arrives with the front ends, issue #4)
	@echo "metacache has no service binary yet: the SQL/HTTP front ends are issue #4." >&2
	@echo "Today metacache is a library: see README.md, 'make test' and 'make bench'." >&2
	@exit 2

test: fmt-check lint ## Format check, clippy -D warnings, and every test of the workspace
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

bench: ## Criterion benchmarks and the governance run (see docs/benchmarks.md)
	$(CARGO) bench -p metacache-cache --benches --locked

bench-quick: ## The same benchmarks with short measurement times
	$(CARGO) bench -p metacache-cache --benches --locked -- --warm-up-time 1 --measurement-time 2

doc: ## API documentation
	$(CARGO) doc --workspace --no-deps

clean: ## Remove build output
	$(CARGO) clean
