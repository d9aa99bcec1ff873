# latlab: the targets the README names.
#   make run   build (as you) and run the default 30 s characterization (as root, via sudo if needed)
#   make test  format check, clippy -D warnings, all tests
#   make dist  static binaries for boards in dist/ (x86_64, aarch64, armv7, riscv64; see scripts/dist.sh)
#   make dist-check  run each of them (qemu-user for the foreign ones)
CARGO ?= cargo
DURATION ?= 30s
LATLAB := $(or $(CARGO_TARGET_DIR),target)/release/latlab
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all build run test fmt clippy unit bench dist dist-check

all: build

build:
	$(CARGO) build --release --locked

run: build
	$(SUDO) $(LATLAB) run --duration $(DURATION)

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

unit:
	$(CARGO) test --workspace --locked

test: fmt clippy unit

dist:
	scripts/dist.sh

dist-check:
	scripts/dist.sh check
