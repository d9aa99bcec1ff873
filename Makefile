# latlab: the targets the README names.
#   make run   build (as you) and run the default 30 s characterization (as root, via sudo if needed)
#   make test  format check, clippy -D warnings, all tests
#   make dist  static binaries for boards in dist/ (x86_64, aarch64, armv7, riscv64; see scripts/dist.sh)
#   make dist-check  run each of them (qemu-user for the foreign ones)
#   make lab   the check matrix on every lab kernel under QEMU (lab/matrix.py; see lab/README.md)
#   make lab-smoke  the CI subset: arm64 and rt-amd64, a few checks each
CARGO ?= cargo
DURATION ?= 30s
LATLAB := $(or $(CARGO_TARGET_DIR),target)/release/latlab
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all build run test fmt clippy unit lab-unit bench dist dist-check lab lab-smoke

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

test: fmt clippy unit lab-unit

# The lab's own judges, on synthetic results (no QEMU).
lab-unit:
	python3 -m unittest discover -s lab -p 'test_*.py'

dist:
	scripts/dist.sh

dist-check:
	scripts/dist.sh check

lab: dist
	lab/matrix.py

# Only the binaries the smoke kernels need.
lab-smoke:
	DIST_TARGETS="x86_64-unknown-linux-musl aarch64-unknown-linux-musl" scripts/dist.sh
	lab/matrix.py --smoke
