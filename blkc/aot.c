/* aot.c: --emit=c, the ahead-of-time C writer: NAME.h and NAME.c with a typed
 * launch function for each kernel variant, the cubin and PTX embedded, and
 * the code that loads them through libcuda.so.1. */
#include "blkc.h"
#include "lower/lower.h"

#include <errno.h>
#include <string.h>

static void c_ident(char *dst, size_t size, const char *src)
{
	size_t n = 0;
	if (!(src[0] == '_' || (src[0] >= 'a' && src[0] <= 'z') || (src[0] >= 'A' && src[0] <= 'Z')) && n + 1 < size)
		dst[n++] = '_';
	for (const char *p = src; *p && n + 1 < size; p++)
		dst[n++] = (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
		               ? *p : '_';
	dst[n] = '\0';
}

/* A parameter's name in C: the kernel's, with '_' added where it would be
 * a C keyword or one of the launch function's own parameters. */
static void c_param_name(char *dst, size_t size, const char *name)
{
	static const char *const taken[] = {
		"stream", "gx", "gy", "gz", "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
		"else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
		"return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
		"volatile", "while", "bool", "true", "false", "asm", "typeof", "alignas", "alignof", "nullptr",
		"static_assert", "thread_local", "constexpr", "class", "new", "delete", "this", "template", "namespace",
		"operator", "private", "protected", "public", "virtual", "friend", "try", "catch", "throw", "using",
		"explicit", "mutable", "typename", "export", "and", "or", "not", "xor", "bitand", "bitor", "compl",
	};
	bool clash = strncmp(name, "blk_", 4) == 0;
	for (size_t i = 0; i < sizeof taken / sizeof taken[0] && !clash; i++)
		clash = strcmp(name, taken[i]) == 0;
	snprintf(dst, size, "%s%s", name, clash ? "_" : "");
}

/* The C type of a runtime parameter, and the type the kernel receives it
 * as when that is wider (integers under 32 bits and fp8 travel as 32 bits). */
static const char *c_param_type(Type t, const char **wide)
{
	*wide = NULL;
	if (t.ptr)
		return "CUdeviceptr";
	switch ((ScalarKind)t.scalar) {
	case SK_I1: *wide = "uint32_t"; return "bool";
	case SK_I8: *wide = "int32_t"; return "int8_t";
	case SK_I16: *wide = "int32_t"; return "int16_t";
	case SK_I32: return "int32_t";
	case SK_I64: return "int64_t";
	case SK_U8: *wide = "uint32_t"; return "uint8_t";
	case SK_U16: *wide = "uint32_t"; return "uint16_t";
	case SK_U32: return "uint32_t";
	case SK_U64: return "uint64_t";
	case SK_F8E4M3: case SK_F8E5M2: *wide = "uint32_t"; return "uint8_t";
	case SK_F16: case SK_BF16: return "uint16_t";
	case SK_F32: return "float";
	case SK_F64: return "double";
	default: return "uint64_t";
	}
}

/* s as a C string literal's contents. */
static void c_escape(StrBuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c == '\n')
			sb_puts(b, "\\n");
		else if (c < 32 || c >= 127)
			sb_printf(b, "\\%03o", c);
		else if (c == '?' && i + 1 < n && s[i + 1] == '?')
			sb_puts(b, "?\\"); /* no trigraphs */
		else
			sb_putn(b, (const char *)&c, 1);
	}
}

/* Text for a C comment: no comment end inside, one line. */
static void c_comment_text(StrBuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '*' && i + 1 < n && s[i + 1] == '/')
			sb_puts(b, "* ");
		else if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t')
			sb_puts(b, " ");
		else
			sb_putn(b, &s[i], 1);
	}
}

static void c_bytes(StrBuf *b, const char *name, const unsigned char *data, size_t n, bool nul)
{
	sb_printf(b, "static const unsigned char %s[%zu] = {", name, n + (nul ? 1 : 0));
	for (size_t i = 0; i < n + (nul ? 1 : 0); i++)
		sb_printf(b, "%s0x%02x,", i % 16 ? "" : "\n\t", i < n ? data[i] : 0);
	sb_puts(b, "\n};\n");
}

static void const_text(StrBuf *b, const ConstBinding *c)
{
	if (c->type)
		sb_printf(b, "%s = %s", c->name, c->type);
	else if (c->is_float)
		sb_printf(b, "%s = %.17g", c->name, c->f);
	else
		sb_printf(b, "%s = %lld", c->name, (long long)c->i);
}

/* The launch function's declaration of variant v (no ';'). */
static void c_launch_decl(StrBuf *b, const AotVariant *v)
{
	sb_printf(b, "blk_status %s_launch(CUstream stream, unsigned gx, unsigned gy, unsigned gz", v->prefix);
	for (int i = 0; i < v->f->n_params; i++) {
		const IrParam *p = &v->f->params[i];
		if (!p->value)
			continue;
		const char *wide;
		char name[256];
		c_param_name(name, sizeof name, p->name);
		sb_printf(b, ",\n        %s %s", c_param_type(p->type, &wide), name);
	}
	sb_puts(b, ")");
}

static const char aot_header_intro[] =
	" * Kernels compiled ahead of time: no blk library is needed to run them,\n"
	" * only the CUDA driver, libcuda.so.1, which the .c file opens with dlopen\n"
	" * (link with -ldl where glibc is older than 2.34). No CUDA header is needed\n"
	" * to build either.\n"
	" *\n"
	" * %s_load() loads every kernel into the CUDA context current on the calling\n"
	" * thread (with none current, device 0's primary context is made current):\n"
	" * the embedded cubin, else (another GPU, or no cubin) the embedded PTX, which\n"
	" * the driver compiles. A launch function loads them on first use; call\n"
	" * %s_load() first where several threads launch. %s_unload() unloads them.\n"
	" * Launch functions queue the kernel on `stream` (NULL: the default stream)\n"
	" * and return at once; gx, gy, gz are the programs along each grid axis (the\n"
	" * kernel's grid clause, computed by the caller). When a call fails,\n"
	" * %s_error() says why. */\n";

/* The C names of the variants: NAME_launch for a single variant;
 * NAME_N_launch for @autotune config N (from 0) of a single kernel; with
 * several kernels NAME_KERNEL_launch, NAME_KERNEL_N_launch. */
static void aot_prefixes(AotVariant *vars, int n, const char *ident)
{
	bool one_kernel = true;
	for (int i = 1; i < n; i++)
		one_kernel = one_kernel && strcmp(vars[i].kernel, vars[0].kernel) == 0;
	for (int i = 0; i < n; i++) {
		int same_kernel = 0;
		for (int j = 0; j < n; j++)
			same_kernel += strcmp(vars[j].kernel, vars[i].kernel) == 0;
		char kid[200];
		c_ident(kid, sizeof kid, vars[i].kernel);
		if (n == 1)
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s", ident);
		else if (one_kernel)
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s_%d", ident, vars[i].config);
		else if (same_kernel == 1)
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s_%s", ident, kid);
		else
			snprintf(vars[i].prefix, sizeof vars[i].prefix, "%s_%s_%d", ident, kid, vars[i].config);
	}
}

/* NAME.h: the declarations, with what each variant was compiled for. */
static void aot_header(StrBuf *h, const Options *opt, const AotVariant *vars, int n, const char *src_path,
                       const char *leaf, const char *ident, const char *guard, const char *version)
{
	sb_printf(h, "/* %s.h: generated by %s from %s for %s by\n *   blkc --emit=c", leaf, version, src_path,
	          opt->arch);
	sb_puts(h, " -o ");
	c_comment_text(h, opt->output, strlen(opt->output));
	sb_puts(h, "\n * Do not edit; regenerate.\n *\n");
	sb_printf(h, aot_header_intro, ident, ident, ident, ident);
	sb_printf(h, "#ifndef %s\n#define %s\n\n#include <stdbool.h>\n#include <stdint.h>\n\n", guard, guard);
	sb_puts(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	sb_puts(h, "/* The driver's types, as cuda.h declares them (skipped after cuda.h). */\n"
	           "#if !defined(CUDA_VERSION) && !defined(BLK_AOT_CUDA_TYPES)\n#define BLK_AOT_CUDA_TYPES\n"
	           "typedef unsigned long long CUdeviceptr;\ntypedef struct CUstream_st *CUstream;\n#endif\n\n");
	sb_puts(h, "/* blk_status as blk.h has it (skipped after blk.h; include blk.h first\n"
	           " * where a file uses both). */\n"
	           "#if !defined(BLK_H) && !defined(BLK_AOT_STATUS)\n#define BLK_AOT_STATUS\n"
	           "typedef enum blk_status {\n\tBLK_SUCCESS = 0,\n\tBLK_ERROR_INVALID_ARGUMENT,\n\tBLK_ERROR_SOURCE,\n"
	           "\tBLK_ERROR_OUT_OF_MEMORY,\n\tBLK_ERROR_NOT_FOUND,\n\tBLK_ERROR_NO_DEVICE,\n\tBLK_ERROR_LAUNCH,\n"
	           "} blk_status;\n#endif\n\n");
	sb_printf(h, "/* Loads every kernel (BLK_ERROR_NO_DEVICE: no driver or GPU; BLK_ERROR_LAUNCH:\n"
	             " * the driver refused both the cubin and the PTX). */\nblk_status %s_load(void);\n", ident);
	sb_printf(h, "void %s_unload(void);\n", ident);
	sb_printf(h, "/* Why the last failed call on this thread failed (\"\" if none). */\nconst char *%s_error(void);\n",
	          ident);
	sb_printf(h, "/* How many kernels were loaded from PTX rather than the cubin. */\nint %s_loaded_from_ptx(void);\n",
	          ident);
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		sb_printf(h, "\n/* %s", v->kernel);
		if (v->config >= 0)
			sb_printf(h, ", @autotune config %d", v->config);
		for (int j = 0, shown = 0; j < v->f->n_params; j++) {
			const IrParam *p = &v->f->params[j];
			if (!p->is_const)
				continue;
			StrBuf tn = {0};
			if (p->is_type)
				type_print(p->type, &tn);
			ConstBinding cb = {p->name, !p->is_type && scalar_is_float((ScalarKind)p->type.scalar), p->const_ival,
			                   p->const_fval, p->is_type ? (tn.data ? tn.data : "?") : NULL};
			sb_puts(h, shown++ ? ", " : ": ");
			const_text(h, &cb);
			sb_free(&tn);
		}
		sb_printf(h, "\n * %d threads a program (num_warps %d), %d bytes of dynamic shared memory", 32 * v->f->num_warps,
		          v->f->num_warps, v->shared);
		if (v->grid) {
			sb_puts(h, "\n * The kernel's ");
			c_comment_text(h, v->grid, (size_t)v->grid_len);
			sb_puts(h, ": gx, gy, gz");
		}
		for (int j = 0; j < v->f->n_params; j++) {
			const IrParam *p = &v->f->params[j];
			if (!p->value)
				continue;
			StrBuf t = {0};
			type_print(p->type, &t);
			const char *wide;
			sb_printf(h, "\n *   %s: %s as %s", p->name, t.data ? t.data : "?", c_param_type(p->type, &wide));
			if (!p->type.ptr && (p->type.scalar == SK_F16 || p->type.scalar == SK_BF16 ||
			                     p->type.scalar == SK_F8E4M3 || p->type.scalar == SK_F8E5M2))
				sb_puts(h, " (its bits)");
			if (p->divisibility > 1)
				sb_printf(h, ", a multiple of %lld%s (checked: BLK_ERROR_INVALID_ARGUMENT)",
				          (long long)p->divisibility, p->type.ptr ? " bytes" : "");
			if (p->equals_one)
				sb_puts(h, ", equal to 1 (checked: BLK_ERROR_INVALID_ARGUMENT)");
			sb_free(&t);
		}
		sb_puts(h, " */\n");
		c_launch_decl(h, v);
		sb_puts(h, ";\n");
		if (ir_assert_ops(v->f, NULL, 0) > 0)
			sb_printf(h, "/* Waits for `stream`, then BLK_ERROR_LAUNCH if an assert of the kernel failed\n"
			             " * (the first failure, with its place, in %s_error()). */\n"
			             "blk_status %s_check(CUstream stream);\n", ident, v->prefix);
	}
	sb_printf(h, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", guard);
}

/* NAME.c up to the kernels: its includes, the driver's functions it looks
 * up, the table of variants' type. */
static void aot_source_types(StrBuf *c, const Options *opt, const char *src_path, const char *leaf,
                             const char *ident, const char *version)
{
	sb_printf(c, "/* %s.c: generated by %s from %s for %s; do not edit.\n", leaf, version, src_path, opt->arch);
	sb_printf(c, " * The CUDA driver is opened with dlopen and its few functions looked up by\n"
	             " * name: this file builds without CUDA headers or libraries, and a program\n"
	             " * using it starts where there is no driver (%s_load says so). */\n", ident);
	sb_printf(c, "#include \"%s.h\"\n\n#include <dlfcn.h>\n#include <pthread.h>\n#include <stdarg.h>\n"
	             "#include <stdio.h>\n#include <string.h>\n\n", leaf);
	sb_puts(c, "typedef int blk_CUresult;\ntypedef int blk_CUdevice;\ntypedef struct CUctx_st *blk_CUcontext;\n"
	           "typedef struct CUmod_st *blk_CUmodule;\ntypedef struct CUfunc_st *blk_CUfunction;\n\n");
	sb_puts(c, "#define BLK_DRIVER(X) \\\n"
	           "\tX(cuInit, \"cuInit\", (unsigned)) \\\n"
	           "\tX(cuCtxGetCurrent, \"cuCtxGetCurrent\", (blk_CUcontext *)) \\\n"
	           "\tX(cuCtxSetCurrent, \"cuCtxSetCurrent\", (blk_CUcontext)) \\\n"
	           "\tX(cuDeviceGet, \"cuDeviceGet\", (blk_CUdevice *, int)) \\\n"
	           "\tX(cuDevicePrimaryCtxRetain, \"cuDevicePrimaryCtxRetain\", (blk_CUcontext *, blk_CUdevice)) \\\n"
	           "\tX(cuDevicePrimaryCtxRelease, \"cuDevicePrimaryCtxRelease_v2\", (blk_CUdevice)) \\\n"
	           "\tX(cuModuleLoadData, \"cuModuleLoadData\", (blk_CUmodule *, const void *)) \\\n"
	           "\tX(cuModuleLoadDataEx, \"cuModuleLoadDataEx\", (blk_CUmodule *, const void *, unsigned, int *, "
	           "void **)) \\\n"
	           "\tX(cuModuleGetFunction, \"cuModuleGetFunction\", (blk_CUfunction *, blk_CUmodule, const char *)) \\\n"
	           "\tX(cuModuleGetGlobal, \"cuModuleGetGlobal_v2\", (CUdeviceptr *, size_t *, blk_CUmodule, "
	           "const char *)) \\\n"
	           "\tX(cuModuleUnload, \"cuModuleUnload\", (blk_CUmodule)) \\\n"
	           "\tX(cuFuncSetAttribute, \"cuFuncSetAttribute\", (blk_CUfunction, int, int)) \\\n"
	           "\tX(cuLaunchKernel, \"cuLaunchKernel\", (blk_CUfunction, unsigned, unsigned, unsigned, unsigned, "
	           "unsigned, \\\n\t\tunsigned, unsigned, CUstream, void **, void **)) \\\n"
	           "\tX(cuStreamSynchronize, \"cuStreamSynchronize\", (CUstream)) \\\n"
	           "\tX(cuMemcpyDtoH, \"cuMemcpyDtoH_v2\", (void *, CUdeviceptr, size_t)) \\\n"
	           "\tX(cuMemcpyHtoD, \"cuMemcpyHtoD_v2\", (CUdeviceptr, const void *, size_t)) \\\n"
	           "\tX(cuGetErrorName, \"cuGetErrorName\", (blk_CUresult, const char **))\n\n");
	sb_puts(c, "static struct {\n\tvoid *lib;\n#define BLK_FIELD(name, symbol, params) blk_CUresult(*name) params;\n"
	           "\tBLK_DRIVER(BLK_FIELD)\n#undef BLK_FIELD\n} blk_cu;\n\n");
	sb_puts(c, "typedef struct blk_variant {\n\tconst char *kernel;\n\tconst unsigned char *cubin;\n"
	           "\tsize_t cubin_len;\n\tconst unsigned char *ptx;\n\tint shared_bytes;\n\tunsigned threads;\n"
	           "\tblk_CUmodule module;\n\tblk_CUfunction fn;\n\tCUdeviceptr assert_state;\n\tint from_ptx;\n"
	           "} blk_variant;\n\n");
}

/* The embedded cubin (where ptxas was found) and PTX of each variant, and
 * the table of variants. */
static void aot_embedded(StrBuf *c, const AotVariant *vars, int n)
{
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		char name[300];
		if (v->cubin) {
			snprintf(name, sizeof name, "blk_cubin_%d", i);
			c_bytes(c, name, v->cubin, v->cubin_len, false);
		}
		snprintf(name, sizeof name, "blk_ptx_%d", i);
		c_bytes(c, name, (const unsigned char *)v->ptx, v->ptx_len, true);
		sb_puts(c, "\n");
	}
	sb_printf(c, "static blk_variant blk_variants[%d] = {\n", n);
	for (int i = 0; i < n; i++) {
		const AotVariant *v = &vars[i];
		sb_puts(c, "\t{\"");
		c_escape(c, v->f->name, strlen(v->f->name));
		if (v->cubin)
			sb_printf(c, "\", blk_cubin_%d, sizeof blk_cubin_%d", i, i);
		else
			sb_puts(c, "\", NULL, 0");
		sb_printf(c, ", blk_ptx_%d, %d, %d, NULL, NULL, 0, 0},\n", i, v->shared, 32 * v->f->num_warps);
	}
	sb_puts(c, "};\n\n");
}

/* The functions that load the driver and the kernels, NAME_load, NAME_unload,
 * NAME_error and NAME_loaded_from_ptx, and the launch they share. */
static void aot_loader(StrBuf *c, const char *ident)
{
	sb_printf(c,
	          "static pthread_mutex_t blk_lock = PTHREAD_MUTEX_INITIALIZER;\n"
	          "static int blk_loaded;           /* read without the lock through __atomic_load_n */\n"
	          "static blk_CUdevice blk_primary = -1; /* the device whose primary context we retained */\n"
	          "static blk_CUcontext blk_primary_ctx;\n"
	          "static _Thread_local char blk_message[2048];\n\n"
	          "const char *%s_error(void)\n{\n\treturn blk_message;\n}\n\n"
	          "static blk_status blk_fail(blk_status st, const char *fmt, ...)\n{\n\tva_list ap;\n"
	          "\tva_start(ap, fmt);\n\tvsnprintf(blk_message, sizeof blk_message, fmt, ap);\n\tva_end(ap);\n"
	          "\treturn st;\n}\n\n"
	          "static const char *blk_cu_name(blk_CUresult r)\n{\n\tconst char *name = NULL;\n"
	          "\tif (blk_cu.cuGetErrorName)\n\t\tblk_cu.cuGetErrorName(r, &name);\n\treturn name ? name : \"CUDA error\";\n}\n\n",
	          ident);
	sb_printf(c,
	          "/* Opens libcuda.so.1 and finds its functions. Caller holds blk_lock. */\n"
	          "static blk_status blk_open_driver(void)\n{\n\tif (blk_cu.lib)\n\t\treturn BLK_SUCCESS;\n"
	          "\tvoid *lib = dlopen(\"libcuda.so.1\", RTLD_NOW | RTLD_LOCAL);\n\tif (!lib)\n"
	          "\t\treturn blk_fail(BLK_ERROR_NO_DEVICE, \"%s: no CUDA driver: %%s\", dlerror());\n"
	          "#define BLK_LOOKUP(name, symbol, params) \\\n"
	          "\t{ \\\n\t\tvoid *sym = dlsym(lib, symbol); \\\n\t\tif (!sym) { \\\n\t\t\tdlclose(lib); \\\n"
	          "\t\t\treturn blk_fail(BLK_ERROR_NO_DEVICE, \"%s: the CUDA driver has no %%s\", symbol); \\\n"
	          "\t\t} \\\n\t\tmemcpy(&blk_cu.name, &sym, sizeof sym); \\\n\t}\n"
	          "\tBLK_DRIVER(BLK_LOOKUP)\n#undef BLK_LOOKUP\n"
	          "\tblk_CUresult r = blk_cu.cuInit(0);\n\tif (r != 0) {\n"
	          "\t\tblk_status st = blk_fail(BLK_ERROR_NO_DEVICE, \"%s: cuInit: %%s (%%d)\", blk_cu_name(r), r);\n"
	          "\t\tdlclose(lib);\n\t\tmemset(&blk_cu, 0, sizeof blk_cu);\n\t\treturn st;\n\t}\n"
	          "\tblk_cu.lib = lib;\n\treturn BLK_SUCCESS;\n}\n\n",
	          ident, ident, ident);
	sb_printf(c,
	          "/* One kernel: the cubin, else the PTX (JIT-compiled, with the driver's log). */\n"
	          "static blk_status blk_load_variant(blk_variant *v)\n{\n\tblk_CUresult r = -1, rc = 0;\n"
	          "\tif (v->cubin)\n\t\trc = r = blk_cu.cuModuleLoadData(&v->module, v->cubin);\n"
	          "\tv->from_ptx = r != 0;\n\tchar log[4096] = \"\";\n\tif (r != 0) {\n"
	          "\t\tint opts[] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */};\n"
	          "\t\tvoid *vals[] = {log, (void *)(size_t)sizeof log};\n"
	          "\t\tr = blk_cu.cuModuleLoadDataEx(&v->module, v->ptx, 2, opts, vals);\n\t}\n"
	          "\tif (r != 0) {\n\t\tlog[sizeof log - 1] = '\\0';\n"
	          "\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s: kernel '%%s': %%s%%s%%s (%%d) loading its PTX%%s%%s\", v->kernel,\n"
	          "\t\t                v->cubin ? \"the cubin: \" : \"\", v->cubin ? blk_cu_name(rc) : \"\",\n"
	          "\t\t                v->cubin ? \", then \" : \"\", r, log[0] ? \":\\n\" : \"\", log);\n\t}\n"
	          "\tr = blk_cu.cuModuleGetFunction(&v->fn, v->module, v->kernel);\n"
	          "\tif (r == 0 && v->shared_bytes > 48 * 1024)\n"
	          "\t\tr = blk_cu.cuFuncSetAttribute(v->fn, 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */,\n"
	          "\t\t                              v->shared_bytes);\n"
	          "\tif (r != 0) {\n\t\tblk_cu.cuModuleUnload(v->module);\n\t\tv->module = NULL;\n"
	          "\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s: kernel '%%s': %%s (%%d)\", v->kernel, blk_cu_name(r), r);\n\t}\n"
	          "\tsize_t bytes;\n"
	          "\tif (blk_cu.cuModuleGetGlobal(&v->assert_state, &bytes, v->module, \"blk_assert_state\") != 0)\n"
	          "\t\tv->assert_state = 0;\n\treturn BLK_SUCCESS;\n}\n\n",
	          ident, ident);
	sb_printf(c,
	          "static void blk_unload_locked(void)\n{\n"
	          "\tfor (size_t i = 0; i < sizeof blk_variants / sizeof blk_variants[0]; i++)\n"
	          "\t\tif (blk_variants[i].module) {\n\t\t\tblk_cu.cuModuleUnload(blk_variants[i].module);\n"
	          "\t\t\tblk_variants[i].module = NULL;\n\t\t\tblk_variants[i].fn = NULL;\n\t\t}\n"
	          "\tif (blk_primary >= 0) { /* no longer current once released */\n\t\tblk_CUcontext cur = NULL;\n"
	          "\t\tif (blk_cu.cuCtxGetCurrent(&cur) == 0 && cur == blk_primary_ctx)\n\t\t\tblk_cu.cuCtxSetCurrent(NULL);\n"
	          "\t\tblk_cu.cuDevicePrimaryCtxRelease(blk_primary);\n\t\tblk_primary = -1;\n\t\tblk_primary_ctx = NULL;\n\t}\n"
	          "\t__atomic_store_n(&blk_loaded, 0, __ATOMIC_RELEASE);\n}\n\n"
	          "blk_status %s_load(void)\n{\n\tpthread_mutex_lock(&blk_lock);\n\tblk_status st = BLK_SUCCESS;\n"
	          "\tif (!__atomic_load_n(&blk_loaded, __ATOMIC_ACQUIRE)) {\n\t\tst = blk_open_driver();\n"
	          "\t\tblk_CUcontext ctx = NULL;\n"
	          "\t\tif (st == BLK_SUCCESS && (blk_cu.cuCtxGetCurrent(&ctx) != 0 || !ctx)) {\n"
	          "\t\t\tblk_CUdevice dev;\n\t\t\tblk_CUresult r = blk_cu.cuDeviceGet(&dev, 0);\n"
	          "\t\t\tif (r == 0 && (r = blk_cu.cuDevicePrimaryCtxRetain(&ctx, dev)) == 0) {\n"
	          "\t\t\t\tblk_primary = dev;\n\t\t\t\tblk_primary_ctx = ctx;\n\t\t\t\tr = blk_cu.cuCtxSetCurrent(ctx);\n\t\t\t}\n"
	          "\t\t\tif (r != 0)\n\t\t\t\tst = blk_fail(BLK_ERROR_NO_DEVICE, \"%s: no CUDA context current and none "
	          "on device 0: %%s (%%d)\",\n\t\t\t\t              blk_cu_name(r), r);\n\t\t}\n"
	          "\t\tfor (size_t i = 0; st == BLK_SUCCESS && i < sizeof blk_variants / sizeof blk_variants[0]; i++)\n"
	          "\t\t\tst = blk_load_variant(&blk_variants[i]);\n"
	          "\t\tif (st == BLK_SUCCESS)\n\t\t\t__atomic_store_n(&blk_loaded, 1, __ATOMIC_RELEASE);\n"
	          "\t\telse if (blk_cu.lib)\n\t\t\tblk_unload_locked();\n\t}\n"
	          "\tpthread_mutex_unlock(&blk_lock);\n\tif (st == BLK_SUCCESS)\n\t\tblk_message[0] = '\\0';\n\treturn st;\n}\n\n"
	          "void %s_unload(void)\n{\n\tpthread_mutex_lock(&blk_lock);\n\tif (blk_cu.lib)\n\t\tblk_unload_locked();\n"
	          "\tpthread_mutex_unlock(&blk_lock);\n}\n\n"
	          "int %s_loaded_from_ptx(void)\n{\n\tint n = 0;\n\tpthread_mutex_lock(&blk_lock);\n"
	          "\tfor (size_t i = 0; i < sizeof blk_variants / sizeof blk_variants[0]; i++)\n"
	          "\t\tn += blk_variants[i].module && blk_variants[i].from_ptx;\n"
	          "\tpthread_mutex_unlock(&blk_lock);\n\treturn n;\n}\n\n"
	          "static blk_status blk_ready(void)\n{\n"
	          "\treturn __atomic_load_n(&blk_loaded, __ATOMIC_ACQUIRE) ? BLK_SUCCESS : %s_load();\n}\n\n"
	          "static blk_status blk_launch_variant(blk_variant *v, CUstream stream, unsigned gx, unsigned gy, "
	          "unsigned gz,\n                                     void **args)\n{\n"
	          "\tif (!gx || !gy || !gz)\n\t\treturn BLK_SUCCESS; /* no programs */\n"
	          "\tblk_CUresult r = blk_cu.cuLaunchKernel(v->fn, gx, gy, gz, v->threads, 1, 1, (unsigned)v->shared_bytes, "
	          "stream,\n\t                                        args, NULL);\n"
	          "\tif (r != 0)\n\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s: kernel '%%s' (grid %%u, %%u, %%u): "
	          "cuLaunchKernel: %%s (%%d)\", v->kernel,\n\t\t                gx, gy, gz, blk_cu_name(r), r);\n"
	          "\treturn BLK_SUCCESS;\n}\n",
	          ident, ident, ident, ident, ident, ident);
}

/* Variant i's launch function: its arguments checked against what it was
 * compiled for, widened where the kernel takes them wider. */
static void aot_launch(StrBuf *c, const AotVariant *v, int i)
{
	sb_puts(c, "\n");
	c_launch_decl(c, v);
	sb_puts(c, "\n{\n\tblk_status blk_st = blk_ready();\n\tif (blk_st != BLK_SUCCESS)\n\t\treturn blk_st;\n");
	int np = 0;
	StrBuf args = {0};
	for (int j = 0; j < v->f->n_params; j++) {
		const IrParam *p = &v->f->params[j];
		if (!p->value)
			continue;
		const char *wide;
		char name[256];
		c_param_name(name, sizeof name, p->name);
		c_param_type(p->type, &wide);
		if (p->divisibility > 1)
			sb_printf(c, "\tif ((uint64_t)%s %% %lluu != 0)\n\t\treturn blk_fail(BLK_ERROR_INVALID_ARGUMENT, "
			             "\"%s_launch: %s must be a multiple of %lld%s (it was compiled so)\");\n",
			          name, (unsigned long long)p->divisibility, v->prefix, p->name, (long long)p->divisibility,
			          p->type.ptr ? " bytes" : "");
		if (p->equals_one)
			sb_printf(c, "\tif (%s != 1)\n\t\treturn blk_fail(BLK_ERROR_INVALID_ARGUMENT, "
			             "\"%s_launch: %s must be 1 (it was compiled so)\");\n",
			          name, v->prefix, p->name);
		if (wide) {
			sb_printf(c, "\t%s blk_a%d = (%s)%s;\n", wide, np, wide, name);
			sb_printf(&args, "%s&blk_a%d", np ? ", " : "", np);
		} else {
			sb_printf(&args, "%s&%s", np ? ", " : "", name);
		}
		np++;
	}
	if (np)
		sb_printf(c, "\tvoid *blk_args[] = {%s};\n", args.data);
	sb_printf(c, "\treturn blk_launch_variant(&blk_variants[%d], stream, gx, gy, gz, %s);\n}\n", i,
	          np ? "blk_args" : "NULL");
	sb_free(&args);
}

/* Variant i's NAME_check, where the kernel has asserts: the place and
 * message of each, and the function that reads which one failed. */
static void aot_check(StrBuf *c, const AotVariant *v, int i)
{
	const Op *asserts[256];
	int na = ir_assert_ops(v->f, asserts, 256);
	if (na <= 0)
		return;
	sb_printf(c, "\nstatic const struct { unsigned line, col; const char *file, *message; } blk_asserts_%d[] = {\n",
	          i);
	for (int a = 0; a < na && a < 256; a++) {
		const Op *op = asserts[a];
		const char *file = op->loc.src ? op->loc.src->name : "?";
		sb_printf(c, "\t{%u, %u, \"", op->loc.line, op->loc.col);
		c_escape(c, file, strlen(file));
		sb_puts(c, "\", \"");
		c_escape(c, op->str ? op->str : "", op->str ? strlen(op->str) : 0);
		sb_puts(c, "\"},\n");
	}
	sb_puts(c, "};\n\n");
	sb_printf(c,
	          "blk_status %s_check(CUstream stream)\n{\n\tblk_status st = blk_ready();\n\tif (st != BLK_SUCCESS)\n"
	          "\t\treturn st;\n\tblk_variant *v = &blk_variants[%d];\n\tunsigned s[8] = {0};\n"
	          "\tblk_CUresult r = blk_cu.cuStreamSynchronize(stream);\n"
	          "\tif (r == 0 && v->assert_state)\n\t\tr = blk_cu.cuMemcpyDtoH(s, v->assert_state, sizeof s);\n"
	          "\tif (r != 0)\n\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"%s_check: kernel '%%s': %%s (%%d)\", v->kernel, "
	          "blk_cu_name(r), r);\n"
	          "\tif (!s[0])\n\t\treturn BLK_SUCCESS;\n\tunsigned zero[8] = {0};\n"
	          "\tblk_cu.cuMemcpyHtoD(v->assert_state, zero, sizeof zero);\n"
	          "\tif (s[0] > sizeof blk_asserts_%d / sizeof blk_asserts_%d[0])\n"
	          "\t\treturn blk_fail(BLK_ERROR_LAUNCH, \"kernel '%%s': assert %%u failed in program (%%u, %%u, %%u)\", "
	          "v->kernel, s[0],\n\t\t                s[1], s[2], s[3]);\n"
	          "\treturn blk_fail(BLK_ERROR_LAUNCH, \"%%s:%%u:%%u: error: assertion failed: %%s (kernel '%%s', program "
	          "(%%u, %%u, %%u), element %%u)\",\n"
	          "\t                blk_asserts_%d[s[0] - 1].file, blk_asserts_%d[s[0] - 1].line, blk_asserts_%d[s[0] - 1].col,\n"
	          "\t                blk_asserts_%d[s[0] - 1].message, v->kernel, s[1], s[2], s[3], s[4]);\n}\n",
	          v->prefix, i, v->prefix, i, i, i, i, i, i);
}

bool write_aot(const Compile *cc, const char *src_path)
{
	const Options *opt = cc->opt;
	char base[4096], ident[256], guard[300];
	snprintf(base, sizeof base, "%s", opt->output);
	size_t bl = strlen(base);
	if (bl > 2 && (strcmp(base + bl - 2, ".c") == 0 || strcmp(base + bl - 2, ".h") == 0))
		base[bl - 2] = '\0';
	const char *slash = strrchr(base, '/');
	const char *leaf = slash ? slash + 1 : base;
	c_ident(ident, sizeof ident, leaf);
	size_t gl = 0;
	for (const char *p = ident; *p && gl + 3 < sizeof guard; p++)
		guard[gl++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
	memcpy(guard + gl, "_H", 3);

	AotVariant *vars = cc->vars;
	int n = cc->n_vars;
	aot_prefixes(vars, n, ident);

	StrBuf h = {0}, c = {0};
	const char *version = blk_compiler_version();
	aot_header(&h, opt, vars, n, src_path, leaf, ident, guard, version);
	aot_source_types(&c, opt, src_path, leaf, ident, version);
	aot_embedded(&c, vars, n);
	aot_loader(&c, ident);
	for (int i = 0; i < n; i++) {
		aot_launch(&c, &vars[i], i);
		aot_check(&c, &vars[i], i);
	}

	bool ok = !h.failed && !c.failed;
	char path[4200];
	if (ok) {
		snprintf(path, sizeof path, "%s.h", base);
		ok = write_file(path, h.data, h.len);
	}
	if (ok) {
		snprintf(path, sizeof path, "%s.c", base);
		ok = write_file(path, c.data, c.len);
	}
	if (!ok)
		fprintf(stderr, "blkc: error: cannot write '%s': %s\n", path, h.failed || c.failed ? "out of memory" : strerror(errno));
	sb_free(&h);
	sb_free(&c);
	return ok;
}
