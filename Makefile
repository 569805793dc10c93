# Canyon's build and gate. `make test` is the one command CI runs (.ci/run).
#
# Everything is built with --release: the RocksDB C++ library (~15 minutes on two
# cores) is then compiled once and shared by `make run`, the tests, clippy and the
# docs. CARGO_TARGET_DIR lives outside the clone so that builds stay incremental
# across fresh clones, CI runs and sessions on the same machine.

CARGO_TARGET_DIR ?= $(HOME)/.cache/canyon-target
export CARGO_TARGET_DIR

CARGO ?= cargo
DATA_DIR ?= ./data
PORT ?= 3306
# Seconds per fuzz target in `make test` (scripts/fuzz.sh; skipped without nightly).
FUZZ_SECONDS ?= 60

.PHONY: all deps build run test fmt fuzz

all: build

## deps: install the Debian packages the build and the tests need (idempotent)
deps:
	./scripts/install-deps.sh

## build: the `canyon` binary, at $(CARGO_TARGET_DIR)/release/canyon
build:
	$(CARGO) build --release -p canyon-server

## run: build and start a server on ./data, port 3306 (root password in ./data/root-password)
run: deps build
	$(CARGO_TARGET_DIR)/release/canyon serve --data-dir $(DATA_DIR) --port $(PORT)

## test: the gate CI runs: formatting, lints, every test, documentation, a bounded fuzz run
test: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	$(CARGO) test --release --workspace --no-fail-fast
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --release --workspace --no-deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

## fuzz: every fuzz target for FUZZ_SECONDS each (e.g. make fuzz FUZZ_SECONDS=3600)
fuzz:
	./scripts/fuzz.sh $(FUZZ_SECONDS)

## fmt: reformat the workspace
fmt:
	$(CARGO) fmt --all
