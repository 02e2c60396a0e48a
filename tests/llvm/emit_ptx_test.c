/* emit_ptx_test: llvm_emit_ptx on a small kernel built through the LLVM C API,
 *     c[i] = a[i] + b[i]   for i = ctaid.x * ntid.x + tid.x < n
 * for several targets; the PTX is checked for its key lines and, where ptxas
 * is on PATH (or in $PTXAS), assembled by it. Also the error paths: bad
 * target, bad optimization level, a module that does not verify, an error
 * raised inside code generation, and emission from several threads at once.
 *
 * Prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why" a case and last
 * "N passed, N failed". */
#include "interp/interp.h"
#include "irgen/irgen.h"
#include "lower/lower.h"

#include <llvm-c/Core.h>

#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int passed, failed;

static void result(bool ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void result(bool ok, const char *name, const char *fmt, ...)
{
	if (ok) {
		printf("ok   %s\n", name);
		passed++;
		return;
	}
	printf("FAIL %s: ", name);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed++;
}

/* ---- the kernel ---------------------------------------------------------- */

static LLVMValueRef sreg(LLVMModuleRef m, LLVMBuilderRef b, const char *name)
{
	LLVMContextRef ctx = LLVMGetModuleContext(m);
	LLVMTypeRef fty = LLVMFunctionType(LLVMInt32TypeInContext(ctx), NULL, 0, false);
	LLVMValueRef fn = LLVMGetNamedFunction(m, name);
	if (!fn)
		fn = LLVMAddFunction(m, name, fty);
	return LLVMBuildCall2(b, fty, fn, NULL, 0, "");
}

/* vadd(ptr addrspace(1) a, b, c, i32 n), marked a kernel by nvvm.annotations. */
static LLVMModuleRef build_vadd(LLVMContextRef ctx)
{
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("vadd", ctx);
	LLVMTypeRef f32 = LLVMFloatTypeInContext(ctx);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef gptr = LLVMPointerTypeInContext(ctx, 1);
	LLVMTypeRef params[] = {gptr, gptr, gptr, i32};
	LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), params, 4, false);
	LLVMValueRef fn = LLVMAddFunction(m, "vadd", fty);
	LLVMValueRef a = LLVMGetParam(fn, 0), bp = LLVMGetParam(fn, 1), c = LLVMGetParam(fn, 2);
	LLVMValueRef n = LLVMGetParam(fn, 3);

	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, fn, "entry");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx, fn, "body");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, fn, "done");

	LLVMPositionBuilderAtEnd(b, entry);
	LLVMValueRef tid = sreg(m, b, "llvm.nvvm.read.ptx.sreg.tid.x");
	LLVMValueRef ctaid = sreg(m, b, "llvm.nvvm.read.ptx.sreg.ctaid.x");
	LLVMValueRef ntid = sreg(m, b, "llvm.nvvm.read.ptx.sreg.ntid.x");
	LLVMValueRef i = LLVMBuildAdd(b, LLVMBuildMul(b, ctaid, ntid, ""), tid, "i");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, n, ""), body, done);

	LLVMPositionBuilderAtEnd(b, body);
	LLVMValueRef idx = LLVMBuildSExt(b, i, i64, "");
	LLVMValueRef pa = LLVMBuildGEP2(b, f32, a, &idx, 1, "");
	LLVMValueRef pb = LLVMBuildGEP2(b, f32, bp, &idx, 1, "");
	LLVMValueRef pc = LLVMBuildGEP2(b, f32, c, &idx, 1, "");
	LLVMValueRef sum = LLVMBuildFAdd(b, LLVMBuildLoad2(b, f32, pa, ""), LLVMBuildLoad2(b, f32, pb, ""), "");
	LLVMBuildStore(b, sum, pc);
	LLVMBuildBr(b, done);

	LLVMPositionBuilderAtEnd(b, done);
	LLVMBuildRetVoid(b);
	LLVMDisposeBuilder(b);

	LLVMMetadataRef md[] = {
		LLVMValueAsMetadata(fn),
		LLVMMDStringInContext2(ctx, "kernel", 6),
		LLVMValueAsMetadata(LLVMConstInt(i32, 1, false)),
	};
	LLVMAddNamedMetadataOperand(m, "nvvm.annotations",
	                            LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, md, 3)));
	return m;
}

/* Builds vadd in a fresh context and emits it. */
static bool emit_vadd(const char *arch, int opt, char **ptx, char **err)
{
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = build_vadd(ctx);
	size_t len = 0;
	bool ok = llvm_emit_ptx(m, arch, opt, ptx, &len, err);
	if (ok && strlen(*ptx) != len) {
		free(*ptx);
		*ptx = NULL;
		*err = strdup("ptx_len does not match the string");
		ok = false;
	}
	LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	return ok;
}

/* ---- ptxas --------------------------------------------------------------- */

static char ptxas_path[4096];

static bool find_ptxas(void)
{
	const char *env = getenv("PTXAS");
	if (env && *env) {
		snprintf(ptxas_path, sizeof ptxas_path, "%s", env);
		return access(ptxas_path, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		return false;
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(ptxas_path, sizeof ptxas_path, "%.*s/ptxas", (int)n, path);
		if (n > 0 && access(ptxas_path, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* Runs ptxas -arch=ARCH on the PTX; its messages go to stderr. */
static bool run_ptxas(const char *arch, const char *ptx, char *why, size_t why_len)
{
	char dir[] = "/tmp/blk-ptxas.XXXXXX";
	if (!mkdtemp(dir)) {
		snprintf(why, why_len, "mkdtemp failed");
		return false;
	}
	char in[64], out[64], archflag[32];
	snprintf(in, sizeof in, "%s/k.ptx", dir);
	snprintf(out, sizeof out, "%s/k.cubin", dir);
	snprintf(archflag, sizeof archflag, "-arch=%s", arch);
	FILE *f = fopen(in, "w");
	bool ok = f && fputs(ptx, f) >= 0;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		snprintf(why, why_len, "could not write %s", in);
	} else {
		char *argv[] = {ptxas_path, archflag, "-o", out, in, NULL};
		pid_t pid;
		int st = 0;
		if (posix_spawn(&pid, ptxas_path, NULL, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) < 0) {
			snprintf(why, why_len, "could not run %.200s", ptxas_path);
			ok = false;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			snprintf(why, why_len, "ptxas %s rejected the PTX (status %d)", archflag,
			         WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			ok = false;
		} else {
			struct stat sb;
			ok = stat(out, &sb) == 0 && sb.st_size > 0;
			if (!ok)
				snprintf(why, why_len, "ptxas wrote no cubin");
		}
	}
	unlink(out);
	unlink(in);
	rmdir(dir);
	return ok;
}

/* ---- cases --------------------------------------------------------------- */

static bool have_ptxas;

static void check_target(const char *arch, int opt, const char *version_line, const char *target_line)
{
	char name[64], *ptx = NULL, *err = NULL;
	snprintf(name, sizeof name, "emit %s O%d", arch, opt);
	if (!emit_vadd(arch, opt, &ptx, &err)) {
		result(false, name, "%s", err ? err : "(no message)");
		free(err);
		return;
	}
	const char *want[] = {version_line, target_line, ".address_size 64", ".entry vadd",
	                      "ld.global", "st.global", "add.rn.f32", "%ctaid.x"};
	const char *missing = NULL;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(ptx, want[i]))
			missing = want[i];
	result(!missing && !err, name, "PTX lacks '%s'", missing ? missing : "?");

	snprintf(name, sizeof name, "ptxas %s O%d", arch, opt);
	char why[256] = "";
	if (!have_ptxas)
		printf("skip %s: ptxas not on PATH\n", name);
	else
		result(run_ptxas(arch, ptx, why, sizeof why), name, "%s", why);
	free(ptx);
}

static void check_bad_target(void)
{
	char *ptx = (char *)1, *err = NULL;
	bool ok = emit_vadd("sm_99", 3, &ptx, &err);
	result(!ok && !ptx && err && strstr(err, "sm_99"), "bad target is an error",
	       "ok=%d err=%s", ok, err ? err : "(null)");
	free(err);
	err = NULL;
	ok = emit_vadd(NULL, 3, &ptx, &err);
	result(!ok && err, "no target is an error", "ok=%d", ok);
	free(err);
}

static void check_bad_opt(void)
{
	char *ptx = NULL, *err = NULL;
	bool ok = emit_vadd("sm_90", 4, &ptx, &err);
	result(!ok && err && strstr(err, "optimization level"), "bad opt level is an error",
	       "ok=%d err=%s", ok, err ? err : "(null)");
	free(err);
	/* err_msg may be NULL. */
	ok = emit_vadd("sm_90", -1, &ptx, NULL);
	result(!ok && !ptx, "error without err_msg", "ok=%d", ok);
}

/* A block with no terminator: the verifier rejects it, nothing crashes. */
static void check_invalid_module(void)
{
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("broken", ctx);
	LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, false);
	LLVMValueRef fn = LLVMAddFunction(m, "broken", fty);
	LLVMAppendBasicBlockInContext(ctx, fn, "entry");
	char *ptx = NULL, *err = NULL;
	bool ok = llvm_emit_ptx(m, "sm_90", 3, &ptx, NULL, &err);
	result(!ok && !ptx && err && strstr(err, "invalid LLVM module"), "invalid module is an error",
	       "ok=%d err=%s", ok, err ? err : "(null)");
	free(err);
	free(ptx);
	LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
}

/* Inline assembly that names a register NVPTX does not have: LLVM reports
 * an error during code generation, which must come back as a message (its
 * default handler would print it and exit). */
static void check_codegen_error(void)
{
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("asm", ctx);
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
	LLVMTypeRef fty = LLVMFunctionType(i32, NULL, 0, false);
	LLVMValueRef fn = LLVMAddFunction(m, "f", fty);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, "entry"));
	char code[] = "mov.u32 $0, 1;", cons[] = "={nosuchreg}";
	LLVMValueRef asm_ = LLVMGetInlineAsm(fty, code, strlen(code), cons, strlen(cons), true, false,
	                                     LLVMInlineAsmDialectATT, false);
	LLVMBuildRet(b, LLVMBuildCall2(b, fty, asm_, NULL, 0, ""));
	LLVMDisposeBuilder(b);
	char *ptx = NULL, *err = NULL;
	bool ok = llvm_emit_ptx(m, "sm_90", 0, &ptx, NULL, &err);
	result(!ok && !ptx && err && strstr(err, "LLVM"), "codegen error is returned",
	       "ok=%d err=%s", ok, err ? err : "(null)");
	free(err);
	free(ptx);
	LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
}

enum { THREADS = 4 };
typedef struct Job {
	const char *arch;
	char *ptx, *err;
	bool ok;
} Job;

static void *job_run(void *p)
{
	Job *j = p;
	j->ok = emit_vadd(j->arch, 3, &j->ptx, &j->err);
	return NULL;
}

static void check_threads(void)
{
	Job jobs[THREADS] = {{.arch = "sm_90"}, {.arch = "sm_80"}, {.arch = "sm_90"}, {.arch = "sm_80"}};
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, job_run, &jobs[i]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	bool ok = true;
	for (int i = 0; i < THREADS; i++)
		ok = ok && jobs[i].ok;
	ok = ok && strcmp(jobs[0].ptx, jobs[2].ptx) == 0 && strcmp(jobs[1].ptx, jobs[3].ptx) == 0 &&
	     strcmp(jobs[0].ptx, jobs[1].ptx) != 0;
	result(ok, "emit from 4 threads", "results differ or failed (%s)",
	       jobs[0].err ? jobs[0].err : "no message");
	for (int i = 0; i < THREADS; i++) {
		free(jobs[i].ptx);
		free(jobs[i].err);
	}
}

static void check_versions(void)
{
	const char *v = llvm_version_string();
	result(v && strncmp(v, "19.", 3) == 0, "llvm_version_string", "got '%s'", v ? v : "(null)");
	const char *c = blk_compiler_version();
	char want[64];
	snprintf(want, sizeof want, "(LLVM %s, NVPTX)", v ? v : "");
	result(c && strncmp(c, "blk ", 4) == 0 && strstr(c, want), "blk_compiler_version",
	       "got '%s'", c ? c : "(null)");
	result(llvm_ptx_isa_version("sm_90a") == 80 && llvm_ptx_isa_version("sm_80") == 78 &&
	       llvm_ptx_isa_version("sm_100") == 0 && llvm_ptx_isa_version(NULL) == 0,
	       "llvm_ptx_isa_version", "unexpected table");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	have_ptxas = find_ptxas();
	check_versions();
	check_target("sm_80", 3, ".version 7.8", ".target sm_80");
	check_target("sm_90", 3, ".version 8.0", ".target sm_90");
	check_target("sm_90a", 0, ".version 8.0", ".target sm_90a");
	check_target("sm_86", 2, ".version 7.8", ".target sm_86");
	check_bad_target();
	check_bad_opt();
	check_invalid_module();
	check_codegen_error();
	check_threads();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
