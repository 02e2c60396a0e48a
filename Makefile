# Makefile for blk. `make` builds build/blkc, build/libblk.so and build/libblk.a;
# `make help` lists the other targets. GNU make 4.3 or newer.

VERSION := 0.1.0

PREFIX ?= /usr/local
DESTDIR ?=
SANITIZE ?= 0
# SANITIZE=1: ASan and UBSan (build/san); SANITIZE=thread: TSan (build/tsan).
ifeq ($(filter 0 1 thread,$(SANITIZE)),)
$(error SANITIZE=$(SANITIZE): use 0, 1 (ASan and UBSan) or thread (TSan))
endif
# Non-empty in a sanitized build, of either kind.
SANITIZED := $(filter 1 thread,$(SANITIZE))
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang-19
CFLAGS ?= $(if $(SANITIZED),-O1 -g,-O2 -g)
LDFLAGS ?=
# The largest libblk.so + blkc we accept (bytes): what a GPU run carries must
# stay well under 64 MiB.
SIZE_LIMIT ?= 50331648

# Where everything is built. A sanitized build has its own folder so that
# normal and sanitized objects never mix. (Only `make BUILD=...` moves it.)
ifneq ($(origin BUILD),command line)
BUILD := $(if $(filter 1,$(SANITIZE)),build/san,$(if $(filter thread,$(SANITIZE)),build/tsan,build))
endif
OBJ := $(BUILD)/obj
GEN := $(BUILD)/gen

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

# ---- dependencies --------------------------------------------------------
# tools/deps.sh checks for (and as root installs) what the build needs, once,
# and writes build/config.mk: LLVM's flags and libraries. Make reads it back
# (re-executing itself when it was just written).

CONFIG := build/config.mk
NO_CONFIG_GOALS := clean help
ifneq ($(filter-out $(NO_CONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(CONFIG)
endif

$(CONFIG): tools/deps.sh
	@CC='$(CC)' bash tools/deps.sh build $@

# ---- sources -------------------------------------------------------------

LANG_SRCS := $(wildcard lang/*.c)
# compiler/STAGE/*.c: one folder a stage, found by the wildcard; blkc/ is
# the command line, a client of the library, not part of it.
COMPILER_SRCS := $(wildcard compiler/*/*.c)
RUNTIME_SRCS := $(wildcard runtime/*.c)
BLKC_SRCS := $(wildcard blkc/*.c)
GEN_SRCS := $(if $(wildcard lang/lexer.re),$(GEN)/lexer.c) $(if $(wildcard lang/parser.y),$(GEN)/parser.c)
GEN_HDRS := $(if $(wildcard lang/parser.y),$(GEN)/parser.h)

LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LANG_SRCS) $(COMPILER_SRCS) $(RUNTIME_SRCS)) \
            $(patsubst $(GEN)/%.c,$(OBJ)/gen/%.o,$(GEN_SRCS))
BLKC_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(BLKC_SRCS))

# Tests in C: tests/SUITE/NAME_test.c becomes $(BUILD)/tests/SUITE/NAME, one
# source file a program. Most link our objects (libblk.a) and the system's
# shared libLLVM, to reach internal functions: they run where LLVM is
# installed. NAME_api_test.c links libblk.so and sees only blk_*: small, and
# runs anywhere libblk.so does (the GPU machine).
TEST_SRCS := $(wildcard tests/*/*_test.c)
API_TEST_SRCS := $(filter %_api_test.c,$(TEST_SRCS))
UNIT_TEST_SRCS := $(filter-out %_api_test.c,$(TEST_SRCS))
API_TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(API_TEST_SRCS))
UNIT_TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_TEST_SRCS))

# Host programs of the examples: examples/NAME.c becomes $(BUILD)/examples/NAME.
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))

# ---- flags ---------------------------------------------------------------

SAN_FLAGS := $(if $(filter thread,$(SANITIZE)),-fsanitize=thread,-fsanitize=address,undefined -fno-sanitize-recover=all) \
             -fno-omit-frame-pointer
WARN_FLAGS := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c17 -D_GNU_SOURCE -fPIC -fvisibility=hidden \
               -ffunction-sections -fdata-sections -DBLK_VERSION='"$(VERSION)"' \
               -Ilang -Icompiler -Iruntime -I$(GEN) $(WARN_FLAGS) \
               $(if $(SANITIZED),$(SAN_FLAGS))
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(CPPFLAGS)
# lang/ must not know about LLVM: only compiler/, runtime/ and tests see its headers.
LLVM_CFLAGS = -isystem $(LLVM_INCLUDE)
# Code from bison and re2c: the warnings their output trips, for that code
# only (bison's yynerrs is set and never read: clang 19 says so).
GEN_WARN_FLAGS :=
$(OBJ)/gen/parser.o build/fuzz/obj/gen/parser.o: GEN_WARN_FLAGS := -Wno-unused-but-set-variable

ALL_LDFLAGS = $(if $(SANITIZED),$(SAN_FLAGS)) $(LDFLAGS)
LLVM_LINK = -L$(LLVM_LIBDIR) $(LLVM_LIBS) $(LLVM_SYSLIBS)
SYS_LIBS := -lm -lpthread -ldl -lrt

# libblk.so carries LLVM (NVPTX only), libstdc++, libgcc, zlib and zstd
# inside it and exports blk_* only (tools/libblk.map). llvm_emit_ptx is kept
# as a root of --gc-sections: the PTX back end is the library's purpose even
# before an exported function reaches it.
SO_LDFLAGS = -shared -Wl,-soname,libblk.so -Wl,--version-script=tools/libblk.map \
             -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,--undefined=llvm_emit_ptx \
             -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack \
             $(if $(SANITIZED),,-Wl,-z,defs) -static-libgcc
SO_LIBS = $(LLVM_LINK) -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic $(SYS_LIBS)

# blkc and API tests find libblk.so beside them, or in ../lib once installed.
BIN_RPATH := -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib'

# Objects are rebuilt when the compiler or the flags change (make CC=clang).
FLAGS_FILE := $(BUILD)/flags
FLAGS_NOW = $(CC) $(ALL_CFLAGS) | $(ALL_LDFLAGS) | $(LLVM_VERSION)
ifneq ($(filter-out $(NO_CONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
ifneq ($(file <$(FLAGS_FILE)),$(FLAGS_NOW))
$(shell mkdir -p $(BUILD))
$(file >$(FLAGS_FILE),$(FLAGS_NOW))
endif
endif

# ---- the build -----------------------------------------------------------

.PHONY: all
# The Python package's launchers in C (python/blk/_fastlaunch.c, Python's
# stable ABI of 3.10: one build for every later Python), beside libblk.so,
# where python3 is 3.10 or newer and has its headers; the package runs
# without it. Not sanitized: python3 cannot load a sanitized library.
PY_INCLUDE := $(shell python3 -c 'import sys, sysconfig; sys.version_info >= (3, 10) and print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_FAST := $(if $(wildcard $(PY_INCLUDE)/Python.h),$(BUILD)/_blkfast.abi3.so)

# The size limit is for what a GPU run carries: a sanitized build never travels.
all: $(BUILD)/blkc $(BUILD)/libblk.so $(BUILD)/libblk.a $(if $(SANITIZED),,$(BUILD)/size.txt $(PY_FAST))

$(BUILD)/_blkfast.abi3.so: python/blk/_fastlaunch.c
	@mkdir -p $(@D)
	$(CC) -std=c17 -Wall -Wextra -Werror -O2 -fPIC -shared -I$(PY_INCLUDE) -o $@ $<

# Every object waits for the generated parser header (parallel make), the
# configuration and the flags; -MMD -MP records the headers each includes.
$(OBJ)/%.o: %.c $(FLAGS_FILE) | $(GEN_HDRS) $(CONFIG)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(EXTRA_CFLAGS) -MMD -MP -c $< -o $@

$(OBJ)/compiler/%.o $(OBJ)/runtime/%.o $(OBJ)/blkc/%.o $(OBJ)/tests/%.o: EXTRA_CFLAGS = $(LLVM_CFLAGS)

$(OBJ)/gen/%.o: $(GEN)/%.c $(FLAGS_FILE) | $(GEN_HDRS) $(CONFIG)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(GEN_WARN_FLAGS) -MMD -MP -c $< -o $@

# re2c: all warnings, as errors; no date or version in the output.
$(GEN)/lexer.c: lang/lexer.re | $(CONFIG)
	@mkdir -p $(@D)
	$(RE2C) -W -Werror --no-generation-date --no-version -o $@ $<

# bison: all warnings as errors; a conflict fails the build and shows its
# counterexamples.
$(GEN)/parser.c $(GEN)/parser.h &: lang/parser.y | $(CONFIG)
	@mkdir -p $(@D)
	$(BISON) -Wall -Werror -Wcounterexamples -d -o $(GEN)/parser.c $<

$(BUILD)/libblk.so: $(LIB_OBJS) tools/libblk.map
	$(CC) $(ALL_LDFLAGS) $(SO_LDFLAGS) -o $@ $(LIB_OBJS) $(SO_LIBS)

# Our objects only: LLVM comes from pkg-config --static (blk.pc's Libs.private).
$(BUILD)/libblk.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# blkc takes blk_* from libblk.so; what else it calls (the front end, which
# does not touch LLVM) is linked in from libblk.a. Whatever reaches LLVM must
# go through an exported blk_* function.
$(BUILD)/blkc: $(BLKC_OBJ) $(BUILD)/libblk.so $(BUILD)/libblk.a
	$(CC) $(ALL_LDFLAGS) -Wl,--gc-sections -o $@ $(BLKC_OBJ) $(BUILD)/libblk.so $(BUILD)/libblk.a \
		$(BIN_RPATH) $(SYS_LIBS)

$(BUILD)/size.txt: $(BUILD)/blkc $(BUILD)/libblk.so
	@awk -v so=$$(stat -c %s $(BUILD)/libblk.so) -v bin=$$(stat -c %s $(BUILD)/blkc) -v limit=$(SIZE_LIMIT) \
	  'BEGIN { printf "size: libblk.so %.1f MiB + blkc %.2f MiB = %.1f MiB carried by a GPU run (limit %.0f MiB)\n", \
	           so / 2^20, bin / 2^20, (so + bin) / 2^20, limit / 2^20; exit (so + bin > limit) }' >$@.tmp; \
	st=$$?; cat $@.tmp; \
	if [ $$st -ne 0 ]; then rm -f $@.tmp; echo "error: libblk.so + blkc exceed SIZE_LIMIT" >&2; exit 1; fi; \
	mv $@.tmp $@

# ---- tests ---------------------------------------------------------------

.PHONY: test test-bins examples
test-bins: $(UNIT_TEST_BINS) $(API_TEST_BINS)

$(UNIT_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/%.o $(BUILD)/libblk.a
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libblk.a -L$(LLVM_LIBDIR) $(LLVM_SHARED_LIBS) \
		-Wl,-rpath,$(LLVM_LIBDIR) $(SYS_LIBS)

$(API_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/%.o $(BUILD)/libblk.so
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libblk.so -Wl,-rpath,'$$ORIGIN/../..' $(SYS_LIBS)

# tests/runtime/fake_cuda.c: a stand-in libcuda.so.1 (host memory, launches
# recorded, not run), through which tests reach the GPU backend of libblk
# where there is no GPU (BLK_CUDA_DRIVER names it).
FAKE_CUDA := $(if $(wildcard tests/runtime/fake_cuda.c),$(BUILD)/tests/runtime/fake/libcuda.so.1)
test-bins: $(FAKE_CUDA)
$(BUILD)/tests/runtime/fake/libcuda.so.1: tests/runtime/fake_cuda.c tests/runtime/fake_cuda.h $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ $< -lpthread

examples: $(EXAMPLE_BINS)
$(EXAMPLE_BINS): $(BUILD)/examples/%: $(OBJ)/examples/%.o $(BUILD)/libblk.so
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libblk.so -Wl,-rpath,'$$ORIGIN/..' $(SYS_LIBS)

# tests/run.sh runs every suite (tests/*/run.sh) against $(BUILD) and sums
# their counts. SUITES=lang,llvm runs some. Under TSan the default is the
# suites where threads run: the runtime (cache, autotuning, the stand-in
# driver), the API (concurrent_api_test) and the interpreter (blocks on
# threads).
TSAN_SUITES := runtime,api,interp
ifeq ($(SANITIZE),thread)
SUITES ?= $(TSAN_SUITES)
endif
test: all test-bins examples
	@BLK_SANITIZE=$(SANITIZE) bash tests/run.sh $(BUILD) $(subst $(comma), ,$(SUITES))
comma := ,

# Differential tests on the GPU (not part of `make test`): DIFF_N generated
# kernels on the interpreter and the GPU, outputs compared (docs/testing.md).
DIFF_N ?= 10000
.PHONY: gpu-diff
gpu-diff: all
	@bash tests/diff/run.sh $(BUILD) --gpu $(DIFF_N)

# ---- benchmark programs (not built by `make`) -----------------------------
# bench/NAME.c becomes $(BUILD)/bench/NAME, linked to libblk.so; they reach
# the driver themselves through dlopen (-ldl is in SYS_LIBS). bench/layout.c
# is the self-test's, compiled by bench/selftest.py. bench.py builds the
# launch program with cc where `make bench-bins` was not run.
BENCH_SRCS := $(filter-out bench/layout.c,$(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: bench-bins
bench-bins: $(BENCH_BINS)
$(BENCH_BINS): $(BUILD)/bench/%: $(OBJ)/bench/%.o $(BUILD)/libblk.so
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libblk.so -Wl,-rpath,'$$ORIGIN/..' $(SYS_LIBS)

-include $(BENCH_BINS:$(BUILD)/bench/%=$(OBJ)/bench/%.d)

# ---- demo ----------------------------------------------------------------

.PHONY: demo
# The main job: build, then compile and run examples against C references,
# on the GPU when one can be used, else on the interpreter.
demo: all examples
	$(BUILD)/blkc --version
	$(BUILD)/blkc examples/vector_add.tile
	$(BUILD)/examples/vector_add
	$(BUILD)/examples/softmax
	$(BUILD)/examples/matmul

# ---- fuzzing (clang-19 and libFuzzer) ------------------------------------

FUZZ_DIR := build/fuzz
FUZZ_SRC := tests/fuzz/fuzz_parse.c
FUZZ_STAMP := build/.deps-fuzz
FUZZ_CFLAGS := -std=c17 -D_GNU_SOURCE -g -O1 $(SAN_FLAGS) -Ilang -I$(GEN) $(WARN_FLAGS)
FUZZ_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LANG_SRCS)) \
             $(patsubst $(GEN)/%.c,$(FUZZ_DIR)/obj/gen/%.o,$(GEN_SRCS))
FUZZ_SEEDS := $(wildcard tests/lang/*.tile examples/*.tile stdlib/nn/attention.tile)
# valid kernels from the differential tests' generator (fixed seed), as seeds
FUZZ_GEN_CORPUS := $(FUZZ_DIR)/corpus-gen
.PHONY: fuzz-gen-corpus
fuzz-gen-corpus:
	@rm -rf $(FUZZ_GEN_CORPUS) && python3 tests/diff/gen.py --seed 20261124 --count 200 --out $(FUZZ_GEN_CORPUS)

.PHONY: fuzz
fuzz: $(FUZZ_DIR)/fuzz_parse fuzz-gen-corpus
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	@for f in $(FUZZ_SEEDS); do cp -n "$$f" "$(FUZZ_DIR)/corpus/seed-$$(echo "$$f" | tr / -)"; done
	$(FUZZ_DIR)/fuzz_parse -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/ \
		$(if $(wildcard tests/fuzz/*.dict),-dict=$(firstword $(wildcard tests/fuzz/*.dict))) \
		$(FUZZ_DIR)/corpus $(wildcard tests/fuzz/corpus tests/fuzz/regressions) $(FUZZ_GEN_CORPUS)

$(FUZZ_STAMP): tools/deps.sh
	@bash tools/deps.sh fuzz $@

ifneq ($(filter fuzz,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(FUZZ_SRC)),)
$(error $(FUZZ_SRC) does not exist yet: 'make fuzz' needs the parser's fuzz harness)
endif
endif

$(FUZZ_DIR)/obj/%.o: %.c | $(GEN_HDRS) $(FUZZ_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/obj/gen/%.o: $(GEN)/%.c | $(GEN_HDRS) $(FUZZ_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(GEN_WARN_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_parse: $(FUZZ_SRC) $(FUZZ_OBJS) | $(FUZZ_STAMP)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $(FUZZ_SRC) $(FUZZ_OBJS) -lm

# Semantic analysis and the tile IR passes (no LLVM; the pass table of the
# compile driver): tests/fuzz/fuzz_irgen.c.
FUZZ_IR_SRCS := $(wildcard compiler/ir/*.c compiler/irgen/*.c compiler/gpu/*.c) compiler/pipeline/passes.c
FUZZ_IR_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_IR_SRCS))
$(FUZZ_IR_OBJS): FUZZ_CFLAGS += -Icompiler $(LLVM_CFLAGS)

.PHONY: fuzz-irgen
fuzz-irgen: $(FUZZ_DIR)/fuzz_irgen fuzz-gen-corpus
	@mkdir -p $(FUZZ_DIR)/corpus-irgen $(FUZZ_DIR)/artifacts
	$(FUZZ_DIR)/fuzz_irgen -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/ -dict=tests/fuzz/fuzz.dict \
		$(FUZZ_DIR)/corpus-irgen tests/lang examples $(FUZZ_GEN_CORPUS)

$(FUZZ_DIR)/fuzz_irgen: tests/fuzz/fuzz_irgen.c $(FUZZ_OBJS) $(FUZZ_IR_OBJS) | $(FUZZ_STAMP)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Icompiler $(LLVM_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_OBJS) $(FUZZ_IR_OBJS) -lm

# ---- install -------------------------------------------------------------

.PHONY: install
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/blk/stdlib \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/blkc $(DESTDIR)$(PREFIX)/bin/blkc
	install -m 644 docs/blkc.1 $(DESTDIR)$(PREFIX)/share/man/man1/blkc.1
	install -m 755 $(BUILD)/libblk.so $(DESTDIR)$(PREFIX)/lib/libblk.so
	install -m 644 $(BUILD)/libblk.a $(DESTDIR)$(PREFIX)/lib/libblk.a
	$(if $(wildcard runtime/blk.h),install -m 644 runtime/blk.h $(DESTDIR)$(PREFIX)/include/blk.h)
	$(if $(wildcard stdlib/*),cp -R stdlib/. $(DESTDIR)$(PREFIX)/share/blk/stdlib/)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
		-e 's|@LIBS_PRIVATE@|-L$(LLVM_LIBDIR) $(LLVM_LIBS) $(LLVM_SYSLIBS_PC) -lstdc++ $(SYS_LIBS)|g' \
		blk.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/blk.pc

# ---- the Python package ----------------------------------------------------
# build/wheel/blk-VERSION-py3-none-linux_x86_64.whl: python/blk with libblk.so
# and the standard library inside (python/_blk_build.py, the package's own
# build backend; no pip needed). `pip install ./python` does the same from
# a checkout; docs/python.md.
.PHONY: wheel
wheel: $(BUILD)/libblk.so
	@rm -rf $(BUILD)/wheel
	BLK_LIB=$(abspath $(BUILD)/libblk.so) python3 python/_blk_build.py $(BUILD)/wheel

# ---- housekeeping --------------------------------------------------------

.PHONY: clean help
clean:
	rm -rf build $(filter-out build build/%,$(BUILD))

help:
	@echo 'make                  build build/blkc, build/libblk.so, build/libblk.a'
	@echo 'make test             build, then run every test suite (SUITES=lang,llvm: some)'
	@echo 'make demo             build, then run the vector_add, softmax and matmul examples against C references'
	@echo '                      (on the GPU when one can be used, else on the interpreter)'
	@echo 'make SANITIZE=1 ...   the same with ASan and UBSan, in build/san'
	@echo 'make SANITIZE=thread test  the threaded suites (runtime,api,interp) with TSan, in build/tsan'
	@echo 'make CC=clang ...     another compiler (objects rebuild when flags change)'
	@echo 'make fuzz             fuzz the parser for FUZZ_SECONDS (default 60) with clang-19'
	@echo 'make gpu-diff         DIFF_N (default 10000) random kernels on the interpreter and the GPU, compared'
	@echo 'make examples         build the examples host programs into build/examples'
	@echo 'make bench-bins       build the benchmark programs (bench/*.c) into build/bench'
	@echo 'make wheel            the Python package as a wheel (libblk.so and stdlib inside) in build/wheel'
	@echo 'make install          install blkc, libblk, blk.h, the stdlib and the blkc(1) man page into PREFIX'
	@echo '                      (default /usr/local), DESTDIR honoured'
	@echo 'make clean            remove build/'

-include $(LIB_OBJS:.o=.d) $(BLKC_OBJ:.o=.d) $(UNIT_TEST_BINS:$(BUILD)/tests/%=$(OBJ)/tests/%.d) \
         $(API_TEST_BINS:$(BUILD)/tests/%=$(OBJ)/tests/%.d) $(FUZZ_OBJS:.o=.d) $(FUZZ_IR_OBJS:.o=.d) \
         $(EXAMPLE_BINS:$(BUILD)/examples/%=$(OBJ)/examples/%.d)
