# latlab: the targets the README names.
#   make run   build (as you), then the characterization (as root, via sudo if needed): DURATION idle and
#              DURATION under every load, explained; which requirement classes this machine meets, and a report
#   make test  installs what the tests use when it can (scripts/test-deps.sh; LATLAB_TEST_INSTALL=0:
#              nothing), then format check, clippy -D warnings, all tests (the tracefs ones also with
#              tracefs only under /sys/kernel/debug/tracing: scripts/test-debugfs-tracing.sh); ends
#              with what it installed, the skipped tests with their reasons, and the counts
#   make test-deps  only the install (scripts/test-deps.sh)
#   make dist  static binaries for boards in dist/ (x86_64, aarch64, armv7, riscv64; see scripts/dist.sh)
#   make dist-check  run each of them (qemu-user for the foreign ones)
#   make lab   the check matrix on every lab kernel under QEMU (lab/matrix.py; see lab/README.md)
#   make lab-smoke  the CI subset: arm64 and rt-amd64, a few checks each; armmp (32-bit), the timer runs
#   make install    binary, man pages and completions under $(DESTDIR)$(PREFIX) (make uninstall)
#   make cli-docs   regenerate docs/man and completions/ from the CLI, and docs/schema/ from the result types
#   make bpf        rebuild latlab watch's BPF object crates/latlab-watch/bpf/watch.bpf.o (clang; make bpf-check compares)
CARGO ?= cargo
DURATION ?= 30s
LATLAB := $(or $(CARGO_TARGET_DIR),target)/release/latlab
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all build run test test-deps fmt clippy unit board lab-unit debugfs-tracing bench dist dist-check lab lab-smoke

all: build

build:
	$(CARGO) build --release --locked

run: build
	$(SUDO) $(LATLAB) scenario characterize --duration $(DURATION)

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

unit:
	$(CARGO) test --workspace --locked $(CARGO_TEST_FLAGS)

# The board build (`make dist`'s features: no server, no generate) lints and
# says what it lacks.
board:
	$(CARGO) clippy -p latlab --no-default-features --all-targets --locked -- -D warnings
	$(CARGO) test -p latlab --no-default-features --locked --test board_build

# Every step below, also after one failed, then the summary (scripts/test.sh).
test:
	CARGO=$(CARGO) MAKE=$(MAKE) scripts/test.sh

test-deps:
	scripts/test-deps.sh

# The tracefs-using tests again where tracefs is only under
# /sys/kernel/debug/tracing (a private mount namespace; about a minute).
debugfs-tracing:
	CARGO=$(CARGO) scripts/test-debugfs-tracing.sh

# The lab's own judges, on synthetic results (no QEMU).
lab-unit:
	python3 -m unittest discover $(LAB_UNIT_FLAGS) -s lab -p 'test_*.py'

dist:
	scripts/dist.sh

dist-check:
	scripts/dist.sh check

lab: dist
	lab/matrix.py

# Only the binaries the smoke kernels need, built beside dist/ (which keeps
# whatever make dist put there).
SMOKE_DIST = lab/cache/dist-smoke
lab-smoke:
	DIST_DIR=$(SMOKE_DIST) DIST_TARGETS="x86_64-unknown-linux-musl aarch64-unknown-linux-musl armv7-unknown-linux-musleabihf" scripts/dist.sh
	LATLAB_DIST=$(SMOKE_DIST) lab/matrix.py --smoke

# make install: the binary, its man pages (docs/man) and shell completions
# (completions/) under $(DESTDIR)$(PREFIX). PREFIX defaults to /usr/local;
# DESTDIR stages the tree for a package. LATLAB_BIN=path installs that binary
# (e.g. one from make dist) instead of building one. make uninstall removes
# the same files.
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share
MANDIR = $(DATADIR)/man
INSTALL_BIN = $(or $(LATLAB_BIN),$(LATLAB))
MAN_PAGES = $(wildcard docs/man/*.1)

.PHONY: install uninstall cli-docs

install: $(if $(LATLAB_BIN),,build)
	install -Dm755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/latlab
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -Dm644 completions/latlab.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/latlab
	install -Dm644 completions/_latlab $(DESTDIR)$(DATADIR)/zsh/site-functions/_latlab
	install -Dm644 completions/latlab.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/latlab.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/latlab $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES))) \
	  $(DESTDIR)$(DATADIR)/bash-completion/completions/latlab \
	  $(DESTDIR)$(DATADIR)/zsh/site-functions/_latlab \
	  $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/latlab.fish

# Rewrite the man pages and completions from the CLI definition, and the
# result documents' JSON Schemas from their types (latlab generate); a test
# fails when the committed ones are out of date.
cli-docs:
	rm -f docs/man/*.1
	$(CARGO) run --quiet --locked -p latlab -- generate man docs/man
	$(CARGO) run --quiet --locked -p latlab -- generate completions completions
	rm -f docs/schema/*.json
	$(CARGO) run --quiet --locked -p latlab -- generate schemas docs/schema

# latlab watch's BPF object: committed, embedded by crates/latlab-watch, so a
# build needs no clang. make bpf rebuilds it from crates/latlab-watch/bpf/watch.bpf.c; make
# bpf-check verifies the committed one is what this clang makes of the source
# (a test runs the check; scripts/bpf.sh says why the output is deterministic).
.PHONY: bpf bpf-check
bpf:
	scripts/bpf.sh
bpf-check:
	scripts/bpf.sh check
