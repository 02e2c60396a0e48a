/* ptx.c: from an LLVM module to PTX text, through LLVM's NVPTX backend.
 *
 * The last step of the compiler: lowering hands over an LLVM module whose
 * kernels are marked for NVPTX; this file picks the PTX ISA version for the
 * target, runs LLVM's optimization pipeline and the code generator, and
 * returns the PTX as a string. Errors come back as strings: LLVM's own
 * diagnostics are caught by a handler on the module's context, so that an
 * error in code generation neither prints nor exits the process. */
#include "lower/lower.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm-c/Support.h>

#ifndef BLK_VERSION
#define BLK_VERSION "0.0.0"
#endif

static const char nvptx_triple[] = "nvptx64-nvidia-cuda";

/* ---- versions ---------------------------------------------------------- */

static pthread_once_t version_once = PTHREAD_ONCE_INIT;
static char llvm_version[32];
static char compiler_version[96];

static void init_versions(void)
{
	unsigned major = 0, minor = 0, patch = 0;
	LLVMGetVersion(&major, &minor, &patch);
	snprintf(llvm_version, sizeof llvm_version, "%u.%u.%u", major, minor, patch);
	snprintf(compiler_version, sizeof compiler_version, "blk %s (LLVM %s, NVPTX)",
	         BLK_VERSION, llvm_version);
}

const char *llvm_version_string(void)
{
	pthread_once(&version_once, init_versions);
	return llvm_version;
}

BLK_API const char *blk_compiler_version(void)
{
	pthread_once(&version_once, init_versions);
	return compiler_version;
}

/* ---- targets ----------------------------------------------------------- */

/* The targets we emit for and the PTX ISA each gets. PTX 7.8 (CUDA 11.8)
 * covers every instruction up to sm_89 and is read by any recent driver;
 * sm_90 gets 8.0 (CUDA 12.0), the first ISA with wgmma, TMA and mbarrier
 * transactions, which sm_90a's features need as well. */
static const struct {
	const char *arch;
	int ptx;
} targets[] = {
	{"sm_70", 78}, {"sm_72", 78}, {"sm_75", 78}, {"sm_80", 78}, {"sm_86", 78},
	{"sm_87", 78}, {"sm_89", 78}, {"sm_90", 80}, {"sm_90a", 80},
};

int llvm_ptx_isa_version(const char *arch)
{
	if (!arch)
		return 0;
	for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
		if (strcmp(arch, targets[i].arch) == 0)
			return targets[i].ptx;
	return 0;
}

static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;

static void init_nvptx(void)
{
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
	/* Machine-level passes that ptxas runs again, on the whole kernel, with
	 * the real register file: LLVM's copies cost 10% of code generation
	 * (softmax, layernorm) and the SASS of every example came out the same
	 * or smaller without them (docs/performance.md). Each option has been
	 * in LLVM for years; an unknown one would be ignored (the errors go to
	 * a null stream). The LLVM inside libblk.so is libblk's own; a program
	 * that links libblk.a shares these options with its own LLVM
	 * (docs/runtime.md says so). */
	static const char *const argv[] = {
		"libblk",
		"-disable-machine-cse",  /* machine CSE */
		"-disable-machine-licm", /* machine loop-invariant motion */
		"-disable-machine-sink", /* machine code sinking */
		"-disable-cgp",          /* CodeGenPrepare's address sinking */
		"-disable-lsr",          /* loop strength reduction */
		"-disable-block-placement",
		/* the lowering writes the vector accesses it wants */
		"-disable-nvptx-load-store-vectorizer",
	};
	LLVMParseCommandLineOptions((int)(sizeof argv / sizeof argv[0]), argv, NULL);
}

/* ---- errors ------------------------------------------------------------ */

/* Messages gathered while one module is compiled. */
typedef struct Errors {
	char *text; /* NULL, or a malloc'd string; lines joined by '\n' */
	bool failed;
} Errors;

static void errors_add(Errors *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errors_add(Errors *e, const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&line, fmt, ap);
	va_end(ap);
	e->failed = true;
	if (n < 0)
		return;
	if (!e->text) {
		e->text = line;
		return;
	}
	size_t old = strlen(e->text);
	char *joined = realloc(e->text, old + 1 + (size_t)n + 1);
	if (joined) {
		joined[old] = '\n';
		memcpy(joined + old + 1, line, (size_t)n + 1);
		e->text = joined;
	}
	free(line);
}

/* Gives the messages to the caller, or frees them. */
static void errors_finish(Errors *e, char **err_msg)
{
	if (e->failed && !e->text)
		e->text = strdup("PTX emission failed (out of memory)");
	if (err_msg)
		*err_msg = e->text;
	else
		free(e->text);
	e->text = NULL;
}

/* LLVM's diagnostics during code generation. Errors fail the compilation;
 * warnings, remarks and notes are dropped. */
static void on_diagnostic(LLVMDiagnosticInfoRef info, void *opaque)
{
	Errors *e = opaque;
	if (LLVMGetDiagInfoSeverity(info) != LLVMDSError)
		return;
	char *desc = LLVMGetDiagInfoDescription(info);
	errors_add(e, "LLVM: %s", desc ? desc : "unknown error");
	LLVMDisposeMessage(desc);
}

/* ---- target machines ----------------------------------------------------
 * Creating one costs about 0.4 ms, a twentieth of compiling a small kernel:
 * they are kept for the next compilation. One is used by one thread at a
 * time (taken out of the pool, given back after); the pool holds a few per
 * process and lives as long as it does. */

enum { TM_POOL = 16 };
static pthread_mutex_t tm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char arch[16];
	int opt_level;
	LLVMTargetMachineRef tm;
} tm_pool[TM_POOL];
static int tm_count;

static LLVMTargetMachineRef tm_take(const char *arch, int opt_level)
{
	LLVMTargetMachineRef tm = NULL;
	pthread_mutex_lock(&tm_lock);
	for (int i = tm_count - 1; i >= 0 && !tm; i--)
		if (tm_pool[i].opt_level == opt_level && strcmp(tm_pool[i].arch, arch) == 0) {
			tm = tm_pool[i].tm;
			tm_pool[i] = tm_pool[--tm_count];
		}
	pthread_mutex_unlock(&tm_lock);
	return tm;
}

static void tm_give(LLVMTargetMachineRef tm, const char *arch, int opt_level)
{
	pthread_mutex_lock(&tm_lock);
	if (tm_count < TM_POOL && strlen(arch) < sizeof tm_pool[0].arch) {
		strcpy(tm_pool[tm_count].arch, arch);
		tm_pool[tm_count].opt_level = opt_level;
		tm_pool[tm_count++].tm = tm;
		tm = NULL;
	}
	pthread_mutex_unlock(&tm_lock);
	if (tm)
		LLVMDisposeTargetMachine(tm);
}

/* ---- emission ---------------------------------------------------------- */

/* Level 3's pipeline, made for the LLVM IR of blk's kernels: one function,
 * no calls, straight-line element code and a few loops. It keeps what
 * default<O3> does for them (folding the lowering's index arithmetic,
 * value numbering, hoisting and rotating loops, widening induction
 * variables, tid ranges for narrower arithmetic) and leaves out its
 * inliner, interprocedural and vectorizer passes, which find nothing here:
 * a third of O3's time, with the same or smaller SASS over the examples
 * (docs/performance.md). ptxas optimizes the PTX again. */
static const char kernel_pipeline[] =
	"function(nvvm-intr-range,sroa,early-cse,instcombine<no-verify-fixpoint>,reassociate,"
	"loop-mssa(licm<no-allowspeculation>,loop-rotate,licm<allowspeculation>),"
	"loop(indvars),gvn,sccp,bdce,correlated-propagation,instcombine<no-verify-fixpoint>,adce,simplifycfg,sink)";

/* The same with LLVM's loop unroller after the loop passes, for kernels
 * with range(..., unroll = N) (llvm.loop metadata on a back edge): it
 * unrolls those loops by N (and, by its own measure, others of the kernel). */
static const char kernel_pipeline_unroll[] =
	"function(nvvm-intr-range,sroa,early-cse,instcombine<no-verify-fixpoint>,reassociate,"
	"loop-mssa(licm<no-allowspeculation>,loop-rotate,licm<allowspeculation>),"
	"loop(indvars),loop-unroll<O3>,gvn,sccp,bdce,correlated-propagation,instcombine<no-verify-fixpoint>,adce,"
	"simplifycfg)";

static bool has_loop_hint(LLVMModuleRef m)
{
	unsigned kind = LLVMGetMDKindIDInContext(LLVMGetModuleContext(m), "llvm.loop", 9);
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
		for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
			LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
			if (t && LLVMGetMetadata(t, kind))
				return true;
		}
	return false;
}

static bool run_pipeline(LLVMModuleRef m, LLVMTargetMachineRef tm, int opt_level, Errors *e)
{
	static const char *const pipelines[] = {NULL, "default<O1>", "default<O2>", kernel_pipeline};
	LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
	const char *pipeline = opt_level == 3 && has_loop_hint(m) ? kernel_pipeline_unroll : pipelines[opt_level];
	LLVMErrorRef err = LLVMRunPasses(m, pipeline, tm, opts);
	LLVMDisposePassBuilderOptions(opts);
	if (!err)
		return true;
	char *msg = LLVMGetErrorMessage(err);
	errors_add(e, "LLVM pass pipeline: %s", msg ? msg : "unknown error");
	LLVMDisposeErrorMessage(msg);
	return false;
}

/* mma.sync of e4m3 and e5m2 (sm_89 and up, written as inline assembly by
 * lower/dot_mma.c, so LLVM does not know of it) needs PTX ISA 8.4 (CUDA
 * 12.4): a kernel that has one says so in its .version line; every other
 * kernel keeps its target's version (the table above). */
static void raise_version_for_fp8_mma(char *ptx)
{
	if (!strstr(ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e"))
		return;
	char *v = strstr(ptx, "\n.version ");
	if (v && (strncmp(v + 10, "7.8\n", 4) == 0 || strncmp(v + 10, "8.0\n", 4) == 0))
		memcpy(v + 10, "8.4", 3);
}

static bool emit(LLVMModuleRef m, LLVMTargetMachineRef tm, char **ptx_out, size_t *ptx_len, Errors *e)
{
	char *msg = NULL;
	LLVMMemoryBufferRef buf = NULL;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMAssemblyFile, &msg, &buf)) {
		errors_add(e, "LLVM code generation: %s", msg ? msg : "unknown error");
		LLVMDisposeMessage(msg);
		return false;
	}
	LLVMDisposeMessage(msg);
	if (e->failed) { /* an error reported through the diagnostic handler */
		LLVMDisposeMemoryBuffer(buf);
		return false;
	}
	size_t len = LLVMGetBufferSize(buf);
	char *ptx = malloc(len + 1);
	if (!ptx) {
		LLVMDisposeMemoryBuffer(buf);
		errors_add(e, "out of memory for %zu bytes of PTX", len);
		return false;
	}
	memcpy(ptx, LLVMGetBufferStart(buf), len);
	ptx[len] = '\0';
	raise_version_for_fp8_mma(ptx);
	LLVMDisposeMemoryBuffer(buf);
	*ptx_out = ptx;
	if (ptx_len)
		*ptx_len = len;
	return true;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool llvm_emit_ptx(LLVMModuleRef m, const char *arch, int opt_level,
                   char **ptx_out, size_t *ptx_len, char **err_msg)
{
	return llvm_emit_ptx_timed(m, arch, opt_level, ptx_out, ptx_len, err_msg, NULL, NULL);
}

bool llvm_emit_ptx_timed(LLVMModuleRef m, const char *arch, int opt_level, char **ptx_out, size_t *ptx_len,
                         char **err_msg, double *ms_opt, double *ms_emit)
{
	double t0 = now_ms();
	if (ms_opt)
		*ms_opt = 0;
	if (ms_emit)
		*ms_emit = 0;
	Errors e = {0};
	if (err_msg)
		*err_msg = NULL;
	if (ptx_out)
		*ptx_out = NULL;
	if (ptx_len)
		*ptx_len = 0;

	if (!m || !ptx_out) {
		errors_add(&e, "llvm_emit_ptx: no %s", !m ? "module" : "output pointer");
		errors_finish(&e, err_msg);
		return false;
	}
	int ptx_isa = llvm_ptx_isa_version(arch);
	if (!ptx_isa) {
		errors_add(&e, "unsupported GPU architecture '%s' (expected one of sm_70 sm_72 "
		               "sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a)", arch ? arch : "(null)");
		errors_finish(&e, err_msg);
		return false;
	}
	if (opt_level < 0 || opt_level > 3) {
		errors_add(&e, "optimization level %d out of range 0..3", opt_level);
		errors_finish(&e, err_msg);
		return false;
	}

	pthread_once(&nvptx_once, init_nvptx);

	char *msg = NULL;
	LLVMTargetRef target = NULL;
	if (LLVMGetTargetFromTriple(nvptx_triple, &target, &msg)) {
		errors_add(&e, "LLVM has no NVPTX target: %s", msg ? msg : "unknown error");
		LLVMDisposeMessage(msg);
		errors_finish(&e, err_msg);
		return false;
	}

	char features[16];
	snprintf(features, sizeof features, "+ptx%d", ptx_isa);
	/* level 3 generates code at Default: Aggressive differs only in running
	 * GVN instead of EarlyCSE before instruction selection, after the
	 * kernel pipeline's own GVN (the same SASS, 0.2 ms less) */
	static const LLVMCodeGenOptLevel cg_levels[] = {
		LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
		LLVMCodeGenLevelDefault,
	};
	LLVMTargetMachineRef tm = tm_take(arch, opt_level);
	if (!tm)
		tm = LLVMCreateTargetMachine(target, nvptx_triple, arch, features, cg_levels[opt_level], LLVMRelocDefault,
		                             LLVMCodeModelDefault);
	if (!tm) {
		errors_add(&e, "LLVM could not create a target machine for %s", arch);
		errors_finish(&e, err_msg);
		return false;
	}

	LLVMSetTarget(m, nvptx_triple);
	LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(m, layout);
	LLVMDisposeTargetData(layout);

	/* Catch LLVM's diagnostics (its default handler exits on errors). */
	LLVMContextRef ctx = LLVMGetModuleContext(m);
	LLVMDiagnosticHandler old_handler = LLVMContextGetDiagnosticHandler(ctx);
	void *old_context = LLVMContextGetDiagnosticContext(ctx);
	LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, &e);

	bool ok = false;
	msg = NULL;
	if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
		errors_add(&e, "invalid LLVM module: %s", msg ? msg : "unknown error");
	} else if (opt_level == 0 || run_pipeline(m, tm, opt_level, &e)) {
		double t1 = now_ms();
		if (ms_opt)
			*ms_opt = t1 - t0;
		ok = emit(m, tm, ptx_out, ptx_len, &e);
		if (ms_emit)
			*ms_emit = now_ms() - t1;
	}
	LLVMDisposeMessage(msg);

	LLVMContextSetDiagnosticHandler(ctx, old_handler, old_context);
	tm_give(tm, arch, opt_level);
	if (!ok)
		e.failed = true;
	errors_finish(&e, err_msg);
	return ok;
}
