# profd: eBPF profiler daemon.  `make run` and `make test` are all you need.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
OBJ := $(BUILD)/obj

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

PKGS := libbpf libdw libelf libevent json-c zlib
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer \
	  -I$(BUILD) -Ibpf -Idaemon -Isymbolizer -Ipprof \
	  $(shell pkg-config --cflags $(PKGS) capstone 2>/dev/null)
LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
LIB_SRCS := $(wildcard symbolizer/*.c pprof/*.c) $(filter-out daemon/main.c,$(wildcard daemon/*.c))
LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRCS))
MAIN_OBJ := $(OBJ)/daemon/main.o

UNIT_SRCS := $(wildcard tests/unit/*.c)
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/tests/%,$(WORKLOAD_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS))

.PHONY: all deps test-deps bench-deps run test unit install clean bench
# Keep the BPF object and skeleton: make would delete them as intermediates.
.SECONDARY: $(SKELS) $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))

all: deps $(BUILD)/profd

deps:
	@./scripts/deps.sh

test-deps:
	@./scripts/deps.sh --test

# The BPF side is compiled once against the running kernel's BTF (CO-RE);
# relocations make the object load on any kernel that has BTF.
$(BUILD)/vmlinux.h:
	@mkdir -p $(BUILD)
	@test -r /sys/kernel/btf/vmlinux || { echo "profd: this kernel has no BTF (/sys/kernel/btf/vmlinux); profd needs CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c bpf/*.h $(BUILD)/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Ibpf -c $< -o $@
	llvm-strip -g $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

$(OBJ)/%.o: %.c $(SKELS) $(wildcard */*.h)
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

# Small programs the shell tests drive, linked against profd's modules.
$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/unit: $(UNIT_SRCS) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lcriterion

run: deps $(BUILD)/profd
	$(BUILD)/profd serve

test: test-deps $(BUILD)/profd $(WORKLOADS) $(TOOLS) $(BUILD)/tests/unit
	@./tests/run.sh

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
