# profd: eBPF profiler daemon.  `make run` and `make test` are all you need.
#
# Two phases.  The make you type installs what its goals need
# (scripts/deps.sh) and only then hands the goals to a second make, which
# reads this file again.  So every variable that asks an installed tool
# (pkg-config, $(CC), clang) is evaluated after the tool exists, and under
# `make -jN` nothing compiles while apt is still installing: on a fresh
# Debian the first `make run` failed with /usr/include/$(MULTIARCH) empty,
# and `make -j2` raced the install.
ifeq ($(PROFD_DEPS_DONE),)
GOALS := $(or $(MAKECMDGOALS),all)
# --test for the goals that run tests, fuzzers or benchmarks; nothing for
# `make clean` alone; the build's packages for every other goal.
DEPS_ARGS := $(if $(filter test test-arm64 unit bench fuzz fuzz-build test-deps bench-deps,$(GOALS)),--test,\
	     $(if $(filter-out clean check-layers,$(GOALS)),--build,none))
.PHONY: $(GOALS)
# One recipe for all goals (the first), so `make -j all test` installs and
# builds once; the others wait for nothing and do nothing.
# The second make compiles on every CPU unless -j was typed (-j1 keeps it
# serial, and so does a `make clean` among the goals, which would race
# the build): `make test`'s tree (the daemon, its tests and the fuzz
# targets) took 74 s serially and 32 s with -j2 on the 2-vCPU VM, and
# CI builds two sanitized trees more.  MAKEFLAGS holds -j only once a recipe
# runs, hence the test here and not in a variable.
$(firstword $(GOALS)):
	@$(if $(filter none,$(DEPS_ARGS)),:,ARCH=$(ARCH) ./scripts/deps.sh $(DEPS_ARGS))
	@$(MAKE) --no-print-directory PROFD_DEPS_DONE=1 $(if $(filter -j% clean,$(MAKEFLAGS) $(GOALS)),,-j$(shell nproc)) $(GOALS)
$(wordlist 2,$(words $(GOALS)),$(GOALS)):
	@:
else
PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
# SANITIZE=1: everything but the BPF side and the test workloads built with
# ASan and UBSan, in a build directory of its own (`make test SANITIZE=1`).
# SANITIZE=thread: with TSan instead, for the builder thread and the loop's
# (`make test SANITIZE=thread ONLY=t_build_offloop`).
ifeq ($(SANITIZE),thread)
BUILD := build-tsan
else ifneq ($(SANITIZE),)
BUILD := build-asan
endif
# STATIC=1: the static profd of `make dist`, in a build directory of its own.
ifneq ($(STATIC),)
BUILD := build-static
endif
# What `profd --version`, /health, /metrics and every profile say the binary
# is (src/lib/buildinfo.c), and the version `make dist` names its tarball after.  Outside a git clone (a source tarball) give them:
# make VERSION=1.2 COMMIT=<hash>.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# Only characters that need no quoting in C or the shell, nor escaping in
# JSON or a Prometheus label.
VERSION_C := $(shell printf '%s' '$(subst ','',$(VERSION))' | tr -c 'A-Za-z0-9._+~:-' _)
COMMIT_C := $(shell printf '%s' '$(subst ','',$(COMMIT))' | tr -c 'A-Za-z0-9._+~:-' _)

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG := pkg-config
# The kernel's name for the architecture (-D__TARGET_ARCH_$(ARCH) for the
# BPF side).  `make ARCH=arm64` on x86-64 cross-builds everything into
# build-arm64/ (docs/operations.md, "arm64").
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH := $(HOST_ARCH)
MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch 2>/dev/null)
ifeq ($(MULTIARCH),)
$(error cannot tell the multiarch triplet (no dpkg-architecture, and $(CC) -print-multiarch printed nothing): is gcc installed?)
endif

PKGS := libbpf libdw libelf libevent json-c zlib
CROSS :=
ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(ARCH)-$(HOST_ARCH),arm64-x86)
$(error ARCH=$(ARCH) on $(HOST_ARCH): only ARCH=arm64 on x86-64 cross-builds)
endif
# Debian's cross compiler, the :arm64 libraries installed beside the
# native ones (Multi-Arch: same, scripts/deps.sh), and those that can't be
# unpacked into a directory of their own (scripts/arm64-sysroot.sh).
CROSS := aarch64-linux-gnu
MULTIARCH := $(CROSS)
CC := $(CROSS)-gcc
CXX := $(CROSS)-g++
BUILD := $(BUILD)-arm64
ARM64_SYSROOT := $(shell ./scripts/arm64-sysroot.sh 2>/dev/null)
ifeq ($(ARM64_SYSROOT),)
$(error scripts/arm64-sysroot.sh failed: run it to see why)
endif
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(CROSS)/pkgconfig:/usr/share/pkgconfig pkg-config
PKGS := $(filter-out libevent,$(PKGS))
CFLAGS_CROSS := -I$(ARM64_SYSROOT)/usr/include
LDLIBS_CROSS := -L$(ARM64_SYSROOT)/usr/lib/$(CROSS) -Wl,-rpath-link,$(ARM64_SYSROOT)/usr/lib/$(CROSS) \
		-Wl,-rpath-link,/usr/lib/$(CROSS) -levent
endif
OBJ := $(BUILD)/obj
CFLAGS ?= -O2 -g
# Before the warnings and include paths every build adds: the flags
# `profd --version` names (FLAGS_C below).
USER_CFLAGS := $(CFLAGS)
# Includes name their layer's directory under src/: #include "proc/procs.h".
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer \
	  -Isrc -I$(BUILD) -MMD -MP $(CFLAGS_CROSS) \
	  $(shell $(PKG_CONFIG) --cflags $(PKGS) capstone 2>/dev/null)
# What the binary says it is (src/lib/buildinfo.c; VERSION above).
CFLAGS += -DPROFD_VERSION='"$(VERSION_C)"' -DPROFD_COMMIT='"$(COMMIT_C)"'
# With clang, whose UBSan (unlike gcc 12's) writes its reports where
# UBSAN_OPTIONS=log_path says, which tests/run.sh checks after each test.
# The workloads stay as they are: they are what is profiled, not profd.
ifeq ($(SANITIZE),thread)
SAN_CC := $(CLANG)
CFLAGS += -fsanitize=thread
else ifneq ($(SANITIZE),)
SAN_CC := $(CLANG)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined
else
SAN_CC := $(CC)
endif
# libdebuginfod (debug files fetched by build ID) is not linked: the daemon
# dlopens it when DEBUGINFOD_URLS is set (src/symbolizer/debuginfod.c), so
# libcurl's ~27 libraries stay out of the always-on daemon; -ldl for
# glibc < 2.34.  libiberty (static, libiberty-dev): C++ and Rust demangling
# (src/symbolizer/demangle.c).
LDLIBS += $(LDLIBS_CROSS) $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -liberty \
	  -lpthread -lm -ldl
# The static build: glibc and Debian 12's archives of the same libraries,
# capstone linked in (no dlopen of it: heap probes are never single-stepped
# for want of it), libiberty's demangler, and no libdebuginfod, which has no
# .a (docs/operations.md, "The static build").  -static-pie, so the daemon
# that root runs over other users' files keeps the dynamic build's ASLR of
# its own code; relocating capstone's tables at start costs 1.4 MiB of
# RssAnon against -static (docs/benchmarks.md).  libdw of Debian 12 needs
# no zstd.
ifneq ($(STATIC),)
CFLAGS += -DPROFD_STATIC
LDFLAGS += -static-pie
LDLIBS := $(LDLIBS_CROSS) -Wl,--start-group -lbpf -ldw -lelf -levent -ljson-c -lcapstone -lz -llzma -lbz2 \
	  -Wl,--end-group -liberty -lpthread -lm
endif
# The flags `profd --version` says the binary was built with: those given
# (CFLAGS, default -O2 -g) and the link's (-static-pie for make dist),
# quoted as the version is.
FLAGS_C := $(shell printf '%s' '$(subst ','',$(strip $(USER_CFLAGS) $(LDFLAGS)))' | tr -c 'A-Za-z0-9._+~:=,/ -' _)
CFLAGS += -DPROFD_FLAGS='"$(FLAGS_C)"'

# The BPF side needs no kernel headers and no vmlinux.h: only the UAPI
# headers of linux-libc-dev, so one object loads on kernels with or without
# BTF (see docs/architecture.md).
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Isrc -idirafter /usr/include/$(MULTIARCH) \
	      -Wall -MMD -MP
# targets.bpf.c defines the shared maps: libbpf 1.1's linker fails when an
# object declaring them extern comes first.
BPF_SRCS := src/bpf/targets.bpf.c $(filter-out src/bpf/targets.bpf.c,$(wildcard src/bpf/*.bpf.c))
BPF_OBJS := $(patsubst src/bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKEL := $(BUILD)/bpf/profd.skel.h

# The layers, bottom up, and what each may include: src/LAYERS, which
# scripts/check-layers.sh enforces (`make check-layers`, part of `make test`).
# bpf is the kernel side and its ABI headers (src/bpf/abi/): no objects here.
LAYERS := $(shell sed -n 's/^\([a-z]*\):.*/\1/p' src/LAYERS)
layer_below = $(shell sed -n 's/^$(1):\(.*\)/\1/p' src/LAYERS)
layer_objs = $(patsubst %.c,$(OBJ)/%.o,$(filter-out src/cmd/main.c src/bpf/%,$(wildcard src/$(1)/*.c)))
LIB_SRCS := $(filter-out src/cmd/main.c,$(foreach l,$(filter-out bpf,$(LAYERS)),$(wildcard src/$(l)/*.c)))
LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRCS))
MAIN_OBJ := $(OBJ)/src/cmd/main.o

# One Criterion binary per layer, tests/unit/LAYER/*.c linked with that
# layer's objects and those of the layers it may include, nothing else: a
# call up or sideways fails to link.
UNIT_LAYERS := $(notdir $(patsubst %/,%,$(dir $(wildcard tests/unit/*/*.c))))
UNIT_LAYERS := $(filter $(UNIT_LAYERS),$(LAYERS))
UNIT_BINS := $(patsubst %,$(BUILD)/tests/unit_%,$(UNIT_LAYERS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/tests/%,$(WORKLOAD_SRCS))
# C++ and Rust, whose names the symbolizer demangles; Rust twice, once per
# mangling scheme rustc has (its default, legacy, and v0).
WORKLOADS += $(BUILD)/tests/cxx_target $(if $(CROSS),,$(BUILD)/tests/rust_target $(BUILD)/tests/rust_target_v0)
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS))

.PHONY: all deps test-deps bench-deps run test test-arm64 unit install clean bench fuzz fuzz-build check-layers dist
# Keep every intermediate (BPF objects, the skeleton, fuzz and tool objects):
# make would delete them, and the next run would build them again.
.SECONDARY:
# A recipe that fails leaves no half-written target behind.
.DELETE_ON_ERROR:

all: $(BUILD)/profd $(BUILD)/libprofd_heap.so

deps:
	@./scripts/deps.sh

test-deps:
	@./scripts/deps.sh --test

$(BUILD)/bpf/%.bpf.o: src/bpf/%.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# One object from every program group, linked by bpftool: they share the
# target maps (extern in all but targets.bpf.c), and tracer/bpfobj.c owns it.
$(BUILD)/bpf/profd.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(SKEL): $(BUILD)/bpf/profd.bpf.o
	$(BPFTOOL) gen skeleton $< name profd_bpf > $@.tmp && mv $@.tmp $@

# The skeleton is a prerequisite of the objects that include it, and only
# of those (as in libbpf-bootstrap): everything else compiles while clang
# and bpftool make it.  -MMD's dependency files say the rest.
SKEL_USERS := $(shell grep -l '"bpf/profd.skel.h"' $(LIB_SRCS))
$(patsubst %.c,$(OBJ)/%.o,$(SKEL_USERS)): $(SKEL)

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(SAN_CC) $(CFLAGS) -c $< -o $@

# Only buildinfo.o is rebuilt when the version or commit changes:
# $(BUILD)/buildinfo.txt is rewritten only then.  (The -D's are in CFLAGS, so
# that any other object directory, a static build's, compiles it too; such a
# directory's buildinfo.o wants the same prerequisite.)
.PHONY: buildinfo-force
$(BUILD)/buildinfo.txt: buildinfo-force
	@mkdir -p $(dir $@)
	@printf '%s %s %s\n' '$(VERSION_C)' '$(COMMIT_C)' '$(FLAGS_C)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(OBJ)/src/lib/buildinfo.o: $(BUILD)/buildinfo.txt

$(BUILD)/profd: $(LIB_OBJS) $(MAIN_OBJ)
	$(SAN_CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Web assets (the page, the flamegraph's script) compiled in as C string literals.
$(BUILD)/assets/%.h: src/%
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@.tmp && mv $@.tmp $@
$(OBJ)/src/render/flamegraph.o: $(BUILD)/assets/render/flamegraph.js.h
$(OBJ)/src/server/page.o: $(BUILD)/assets/server/page.html.h

# Test workloads: real programs with known hot spots, built the way
# production C should be (-O2, frame pointers, DWARF).
$(BUILD)/tests/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $< -lm

$(BUILD)/tests/cxx_target: tests/workloads/cxx_target.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -fno-omit-frame-pointer -o $@ $<

# rustc reads make's jobserver from MAKEFLAGS, and warns that the build is
# "misconfigured" when, as for a recipe without $(MAKE), its fds are closed.
RUSTC ?= env -u MAKEFLAGS -u MFLAGS rustc
RUST_FLAGS := -C opt-level=2 -g -C force-frame-pointers=yes
$(BUILD)/tests/rust_target: tests/workloads/rust_target.rs
	@mkdir -p $(dir $@)
	$(RUSTC) $(RUST_FLAGS) -o $@ $<

$(BUILD)/tests/rust_target_v0: tests/workloads/rust_target.rs
	@mkdir -p $(dir $@)
	$(RUSTC) $(RUST_FLAGS) -C symbol-mangling-version=v0 -o $@ $<

# The exception: a workload of code without frame pointers, for unwinding by CFI.
# On arm64 with pointer authentication and BTI as well (PAC-signed return
# addresses on the stack, DW_CFA_AARCH64_negate_ra_state in its CFI).
NOFP_FLAGS := -fomit-frame-pointer $(if $(filter arm64,$(ARCH)),-mbranch-protection=standard)
$(BUILD)/tests/nofp_target: tests/workloads/nofp_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(NOFP_FLAGS) -o $@ $<

# Small programs the shell tests drive, linked against profd's modules.
$(BUILD)/tests/tools/%: $(OBJ)/tests/tools/%.o $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(SAN_CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

define unit_rule
$(BUILD)/tests/unit_$(1): $(patsubst %.c,$(OBJ)/%.o,$(wildcard tests/unit/$(1)/*.c)) \
		$(call layer_objs,$(1)) $(foreach l,$(call layer_below,$(1)),$(call layer_objs,$(l)))
	@mkdir -p $$(dir $$@)
	$$(SAN_CC) $$(CFLAGS) -o $$@ $$^ $$(LDLIBS) -lcriterion
endef
$(foreach l,$(UNIT_LAYERS),$(eval $(call unit_rule,$(l))))

# Fails, naming file:line, on an include that runs up or sideways (src/LAYERS).
# The self-test plants bad includes in a copy and fails unless each is caught.
check-layers:
	@./scripts/check-layers.sh
	@./scripts/check-layers.sh --self-test

# PROFD_ARGS: more options for serve, e.g. PROFD_ARGS='--listen 127.0.0.1:8000'.
run: $(BUILD)/profd
	$(BUILD)/profd serve $(PROFD_ARGS)

# The fuzz targets are sanitized builds already: SANITIZE=1 doesn't run them again.
test: check-layers $(BUILD)/profd $(BUILD)/libprofd_heap.so $(WORKLOADS) $(TOOLS) $(UNIT_BINS) $(if $(SANITIZE),,fuzz-build)
	@BUILD=$(CURDIR)/$(BUILD) SANITIZE=$(SANITIZE) LOAD=$(LOAD) ONLY=$(ONLY) ARM64=$(ARM64) LANES=$(LANES) \
		UNIT_LAYERS="$(UNIT_LAYERS)" ./tests/run.sh

# The arm64 guests with postgres (tests/sys/t_arm64_pg.sh, issue 21), alone:
# `make test` leaves them out for time (docs/benchmarks.md, "arm64,
# emulated") unless ARM64=1, which .ci/run sets: they then run in the
# guests' lane beside the host's tests (tests/run.sh).  It cross-builds
# what it needs.
test-arm64:
	@BUILD=$(CURDIR)/$(BUILD) ONLY=t_arm64_pg NO_UNIT=1 ./tests/run.sh

# Fuzz targets (clang's libFuzzer): tests/fuzz/fuzz_NAME.c calls the parsers
# of the daemon's modules, built again with coverage, ASan and UBSan in
# $(FUZZ)/obj.  `make fuzz` runs each for FUZZ_RUNS inputs (-1: no limit)
# or FUZZ_SECONDS (0: no limit), from the seeds in tests/fuzz/corpus/NAME
# and those made here from real files; the smoke test tests/sys/t_fuzz_smoke.sh
# runs each briefly.
FUZZ := $(BUILD)/fuzz
FUZZ_RUNS ?= 100000
FUZZ_SECONDS ?= 0
FUZZ_CFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ)/%,$(FUZZ_SRCS))
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ)/obj/%.o,$(LIB_SRCS))

$(patsubst %.c,$(FUZZ)/obj/%.o,$(SKEL_USERS)): $(SKEL)
$(FUZZ)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS)) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ)/obj/src/render/flamegraph.o: $(BUILD)/assets/render/flamegraph.js.h
$(FUZZ)/obj/src/server/page.o: $(BUILD)/assets/server/page.html.h
$(FUZZ)/obj/src/lib/buildinfo.o: $(BUILD)/buildinfo.txt

$(FUZZ)/fuzz_%: $(FUZZ)/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# Seeds made from real inputs rather than committed: this machine's maps,
# and small ELF files with CFI and DWARF (the test workloads, one stripped).
$(FUZZ)/seeds/stamp: $(BUILD)/tests/clock_target $(BUILD)/tests/nofp_target $(BUILD)/tests/sig_target
	@mkdir -p $(FUZZ)/seeds/maps $(FUZZ)/seeds/elf
	cat /proc/self/maps > $(FUZZ)/seeds/maps/self
	cp $^ $(FUZZ)/seeds/elf/
	strip -o $(FUZZ)/seeds/elf/clock_target.stripped $(BUILD)/tests/clock_target
	touch $@

fuzz-build: $(FUZZ_BINS) $(FUZZ)/seeds/stamp

fuzz: fuzz-build
	FUZZ=$(CURDIR)/$(FUZZ) ./tests/fuzz/run.sh $(FUZZ_RUNS) $(FUZZ_SECONDS) $(notdir $(FUZZ_BINS))

# Benchmarks (root): writes docs/benchmarks.md's summary and bench/results.json.
# QUICK=1 is the smoke test `make test` runs: short, results in build/bench.
bench: $(BUILD)/profd $(WORKLOADS)
	QUICK=$(QUICK) ./bench/run.sh

bench-deps:
	@./scripts/deps.sh --bench

# The binary stripped, its debug information where debuggers (and profd
# itself) look for it by build ID, the unit, and the packaging/ examples
# (the inittab line, a config that starts as written) beside the docs.
# libprofd_heap.so: sampled heap tracking inside a process, preloaded where
# postgres starts (preload/heap_preload.c); not part of the daemon.
$(BUILD)/libprofd_heap.so: preload/heap_preload.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -fvisibility=hidden -fno-omit-frame-pointer -Wall -Wextra \
		-Wl,-soname,libprofd_heap.so -o $@ $<

install: $(BUILD)/profd $(BUILD)/libprofd_heap.so
	objcopy --only-keep-debug $(BUILD)/profd $(BUILD)/profd.debug
	objcopy --strip-all --add-gnu-debuglink=$(BUILD)/profd.debug $(BUILD)/profd $(BUILD)/profd.stripped
	install -D -m 0755 $(BUILD)/profd.stripped $(DESTDIR)$(PREFIX)/bin/profd
	id=$$(readelf -nW $(BUILD)/profd | awk '/Build ID:/ {print $$NF}'); \
	install -D -m 0644 $(BUILD)/profd.debug \
		$(DESTDIR)$(PREFIX)/lib/debug/.build-id/$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-).debug
	install -D -m 0644 systemd/profd.service $(DESTDIR)$(PREFIX)/lib/systemd/system/profd.service
	sed -i 's|/usr/local/bin/profd|$(PREFIX)/bin/profd|' $(DESTDIR)$(PREFIX)/lib/systemd/system/profd.service
	install -D -m 0644 packaging/config.example.json $(DESTDIR)$(PREFIX)/share/profd/config.example.json
	install -D -m 0644 packaging/profd.inittab $(DESTDIR)$(PREFIX)/share/profd/profd.inittab
	install -D -m 0644 $(BUILD)/libprofd_heap.so $(DESTDIR)$(PREFIX)/lib/profd/libprofd_heap.so

# dist/profd-VERSION-ARCH-linux.tar.gz: the static profd (stripped, with
# profd.debug beside it, linked by build ID and .gnu_debuglink), the heap
# preload library built by the same compiler (it needs glibc 2.2.5's symbols
# only, so it loads in bullseye's postgres), the systemd unit and everything
# under packaging/ (scripts/dist.sh).
DIST_BUILD := build-static$(if $(CROSS),-arm64)
dist:
	@$(MAKE) --no-print-directory STATIC=1 $(DIST_BUILD)/profd $(DIST_BUILD)/libprofd_heap.so
	./scripts/dist.sh $(DIST_BUILD)/profd "$(VERSION)" dist $(DIST_BUILD)/libprofd_heap.so

clean:
	rm -rf $(BUILD) build-static dist $(if $(CROSS),build-static-arm64)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

endif # PROFD_DEPS_DONE
