# profd: eBPF profiler daemon.  `make run` and `make test` are all you need.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
OBJ := $(BUILD)/obj

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

PKGS := libbpf libdw libelf libevent json-c zlib
CFLAGS ?= -O2 -g
# Includes name their directory: #include "daemon/procs.h".
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer \
	  -I. -I$(BUILD) -MMD -MP \
	  $(shell pkg-config --cflags $(PKGS) capstone 2>/dev/null)
# libdebuginfod: debug files fetched by build ID (symbolizer/debuginfod.c).
LDLIBS += $(shell pkg-config --libs $(PKGS) libdebuginfod 2>/dev/null) -lpthread -lm

# The BPF side needs no kernel headers and no vmlinux.h: only the UAPI
# headers of linux-libc-dev, so one object loads on kernels with or without
# BTF (see docs/architecture.md).
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I. -idirafter /usr/include/$(MULTIARCH) \
	      -Wall -MMD -MP
# targets.bpf.c defines the shared maps: libbpf 1.1's linker fails when an
# object declaring them extern comes first.
BPF_SRCS := bpf/targets.bpf.c $(filter-out bpf/targets.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKEL := $(BUILD)/bpf/profd.skel.h

LIB_SRCS := $(wildcard lib/*.c symbolizer/*.c pprof/*.c) $(filter-out daemon/main.c,$(wildcard daemon/*.c))
LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRCS))
MAIN_OBJ := $(OBJ)/daemon/main.o

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(UNIT_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/tests/%,$(WORKLOAD_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS))

.PHONY: all deps test-deps bench-deps run test unit install clean bench
# Keep the BPF objects and skeleton: make would delete them as intermediates.
.SECONDARY: $(SKEL) $(BPF_OBJS) $(BUILD)/bpf/profd.bpf.o

all: deps $(BUILD)/profd

deps:
	@./scripts/deps.sh

test-deps:
	@./scripts/deps.sh --test

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# One object from every program group, linked by bpftool: they share the
# target maps (extern in all but targets.bpf.c), and bpfobj.c owns it.
$(BUILD)/bpf/profd.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(SKEL): $(BUILD)/bpf/profd.bpf.o
	$(BPFTOOL) gen skeleton $< name profd_bpf > $@.tmp && mv $@.tmp $@

# The skeleton must exist before anything that may include it compiles;
# after that, -MMD's dependency files say exactly who includes what.
$(OBJ)/%.o: %.c | $(SKEL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/profd: $(LIB_OBJS) $(MAIN_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Web assets (the page, the flamegraph's script) compiled in as C string literals.
$(BUILD)/assets/%.h: %
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@.tmp && mv $@.tmp $@
$(OBJ)/pprof/flamegraph.o: $(BUILD)/assets/pprof/flamegraph.js.h
$(OBJ)/daemon/page.o: $(BUILD)/assets/daemon/page.html.h

# Test workloads: real programs with known hot spots, built the way
# production C should be (-O2, frame pointers, DWARF).
$(BUILD)/tests/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fno-omit-frame-pointer -o $@ $< -lm

# The exception: a workload of code without frame pointers, for unwinding by CFI.
$(BUILD)/tests/nofp_target: tests/workloads/nofp_target.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -o $@ $<

# Small programs the shell tests drive, linked against profd's modules.
$(BUILD)/tests/tools/%: $(OBJ)/tests/tools/%.o $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit: $(UNIT_OBJS) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lcriterion

run: deps $(BUILD)/profd
	$(BUILD)/profd serve

test: test-deps $(BUILD)/profd $(WORKLOADS) $(TOOLS) $(BUILD)/tests/unit
	@LOAD=$(LOAD) ./tests/run.sh

# Benchmarks (root): writes docs/benchmarks.md's summary and bench/results.json.
# QUICK=1 is the smoke test `make test` runs: short, results in build/bench.
bench: bench-deps $(BUILD)/profd $(WORKLOADS)
	QUICK=$(QUICK) ./bench/run.sh

bench-deps:
	@./scripts/deps.sh --bench

install: $(BUILD)/profd
	install -D -m 0755 $(BUILD)/profd $(DESTDIR)$(PREFIX)/bin/profd
	install -D -m 0644 systemd/profd.service $(DESTDIR)$(PREFIX)/lib/systemd/system/profd.service
	sed -i 's|/usr/local/bin/profd|$(PREFIX)/bin/profd|' $(DESTDIR)$(PREFIX)/lib/systemd/system/profd.service

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
