/* _fastlaunch.c: the module _blkfast, the launch fast path of the blk
 * package in C (optional: the package runs without it, python/blk/_ffi.py).
 *
 * _blkfast.launcher(fallback, fail, launch, kernel, buf, keep, buf_words,
 * args_offset, stream_word, getstream, device, tensor_type, kwnames,
 * kwvalues, specs[, strict[, kwargs_at]]) returns a builtin function that
 * does what the launcher _plan.py generates does for one plan and grid,
 * without its Python frame and without ctypes. First the checks, every argument's, in
 * the same order: the thread that made it, the keyword arguments (names and values),
 * each tensor's class, dtype, device and contiguity, each int and float's
 * class. Then the values: torch's current stream and every pointer and
 * scalar, written into the plan's blk_launch_options and blk_arg array, and
 * blk_launch called through its address, the GIL held (as the package's
 * ctypes call holds it: the arrays are the plan's).
 *
 * A call that fails a check goes to fallback(args, kwargs) (the kernel's
 * _miss for this grid: it decides the slow way); so does a value that
 * raises TypeError, ValueError or OverflowError (a data_ptr or an integer
 * that does not fit), as the generated launcher's writes do. A fallback of
 * None: such a call returns NotImplemented (a probe: the caller tries
 * another launcher).
 *
 * blk.triton's launchers (python/blk/triton) check what decides a
 * translation's specialization as well: strict (1) compares each keyword
 * argument's class too (a constexpr of 1 is not one of 1.0 or True), and
 * the kinds K_INT32 ... K_FLOAT_EXACT take an int only in the range its
 * parameter type was chosen for (i32; i64 outside i32; u64 past i64), a
 * bool only for an i1, a float only for a float. kwargs_at (a tuple of
 * an int for each keyword name): -1 for a keyword compared with its value
 * in kwvalues, i >= 0 for one that gives the runtime argument of specs[i]
 * (checked and written as a positional one; kwvalues holds a placeholder);
 * the positional arguments are then the specs the keywords leave, in
 * order. Any other
 * exception propagates, as from the generated launcher. A failed blk_launch
 * goes to fail(status, "blk_launch", (args, kwargs)), which raises the
 * blk.Error.
 *
 * A launcher is an object of a garbage-collected type (it holds the plan's
 * objects, which hold the kernel, which holds its launchers: cycles the
 * collector must see), wrapped in a builtin function.
 *
 * Python's stable ABI of 3.10: one build serves every later Python. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* an argument's kind: what it must be, and how its value is written */
enum { K_TENSOR, K_TENSOR_STRIDED, K_INT, K_U64, K_FLOAT, K_INT32, K_INT64_WIDE, K_U64_WIDE, K_BOOL, K_FLOAT_EXACT,
       K_KINDS };
enum { MAX_ARGS = 64 };

typedef int (*LaunchFn)(void *kernel, void *args, int n_args, void *opts);

typedef struct ArgSpec {
	int kind;
	Py_ssize_t word;  /* its value's 8-byte word in the buffer */
	PyObject *dtype;  /* a tensor's dtype (compared by identity) */
} ArgSpec;

typedef struct Launcher {
	PyObject_HEAD
	LaunchFn launch;
	void *kernel;
	unsigned char *buf; /* blk_launch_options, then the blk_arg array */
	Py_ssize_t args_offset;
	int n;
	Py_ssize_t stream_word; /* -1: the stream was written once */
	unsigned long thread;
	Py_ssize_t n_kw;
	int n_pos;        /* the arguments given by position: the first n_pos of arg */
	int kw_at[MAX_ARGS]; /* each keyword's argument (-1: a value compared) */
	int strict; /* keyword arguments of the plan's classes only */
	PyObject *getstream, *device, *tensor_type, *keep, *fallback, *fail, *kwnames, *kwvalues;
	PyObject *next; /* the grid's launcher before this one (set_next), or NULL */
	ArgSpec arg[MAX_ARGS];
} Launcher;

static PyObject *s_dtype, *s_get_device, *s_is_contiguous, *s_data_ptr, *s_blk_launch;

static int launcher_traverse(PyObject *self, visitproc visit, void *arg)
{
	Launcher *L = (Launcher *)self;
	Py_VISIT(Py_TYPE(self)); /* a heap type's instances hold it */
	Py_VISIT(L->getstream);
	Py_VISIT(L->device);
	Py_VISIT(L->tensor_type);
	Py_VISIT(L->keep);
	Py_VISIT(L->fallback);
	Py_VISIT(L->next);
	Py_VISIT(L->fail);
	Py_VISIT(L->kwnames);
	Py_VISIT(L->kwvalues);
	for (int i = 0; i < L->n; i++)
		Py_VISIT(L->arg[i].dtype);
	return 0;
}

static int launcher_clear(PyObject *self)
{
	Launcher *L = (Launcher *)self;
	Py_CLEAR(L->getstream);
	Py_CLEAR(L->device);
	Py_CLEAR(L->tensor_type);
	Py_CLEAR(L->keep);
	Py_CLEAR(L->fallback);
	Py_CLEAR(L->next);
	Py_CLEAR(L->fail);
	Py_CLEAR(L->kwnames);
	Py_CLEAR(L->kwvalues);
	for (int i = 0; i < L->n; i++)
		Py_CLEAR(L->arg[i].dtype);
	L->buf = NULL; /* cleared: every call raises */
	return 0;
}

static void launcher_dealloc(PyObject *self)
{
	PyTypeObject *tp = Py_TYPE(self);
	PyObject_GC_UnTrack(self);
	launcher_clear(self);
	freefunc free_fn = (freefunc)PyType_GetSlot(tp, Py_tp_free);
	free_fn(self);
	Py_DECREF(tp);
}

static PyType_Slot launcher_slots[] = {
	{Py_tp_traverse, (void *)launcher_traverse},
	{Py_tp_clear, (void *)launcher_clear},
	{Py_tp_dealloc, (void *)launcher_dealloc},
	{0, NULL},
};

static PyType_Spec launcher_spec = {"_blkfast.Launcher", sizeof(Launcher), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
                                    launcher_slots};
static PyObject *launcher_type;

/* The call's positional arguments as a tuple, and its keyword arguments as
 * a dict. */
static PyObject *given(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **kw)
{
	PyObject *t = PyTuple_New(nargs);
	*kw = PyDict_New();
	if (!t || !*kw)
		goto fail;
	for (Py_ssize_t i = 0; i < nargs; i++) {
		Py_INCREF(args[i]);
		PyTuple_SetItem(t, i, args[i]);
	}
	Py_ssize_t nk = kwnames ? PyTuple_Size(kwnames) : 0;
	for (Py_ssize_t j = 0; j < nk; j++)
		if (PyDict_SetItem(*kw, PyTuple_GetItem(kwnames, j), args[nargs + j]) < 0)
			goto fail;
	return t;
fail:
	Py_XDECREF(t);
	Py_CLEAR(*kw);
	return NULL;
}

static PyObject *to_fallback(Launcher *L, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	PyObject *kw;
	PyObject *t = given(args, nargs, kwnames, &kw);
	if (!t)
		return NULL;
	PyObject *r = PyObject_CallFunctionObjArgs(L->fallback, t, kw, NULL);
	Py_DECREF(t);
	Py_DECREF(kw);
	return r;
}

/* The plan's keyword name i that is name, or -1. The call's names are
 * mostly the plan's own strings, in its order: by identity first. */
static Py_ssize_t kw_index(const Launcher *L, PyObject *name, Py_ssize_t guess)
{
	if (guess < L->n_kw && PyTuple_GetItem(L->kwnames, guess) == name)
		return guess;
	for (Py_ssize_t i = 0; i < L->n_kw; i++)
		if (PyTuple_GetItem(L->kwnames, i) == name)
			return i;
	for (Py_ssize_t i = 0; i < L->n_kw; i++)
		if (PyUnicode_Compare(PyTuple_GetItem(L->kwnames, i), name) == 0)
			return i;
	PyErr_Clear();
	return -1;
}

/* Whether the keyword arguments are the plan's: the same names, each value
 * equal to the plan's, or (kw_at) a runtime argument, put in a[] for the
 * checks. -1: a comparison raised. */
static int same_kw(const Launcher *L, PyObject *const *values, PyObject *kwnames, PyObject **a)
{
	Py_ssize_t nk = kwnames ? PyTuple_Size(kwnames) : 0;
	if (nk != L->n_kw)
		return 0;
	for (Py_ssize_t j = 0; j < nk; j++) {
		Py_ssize_t i = kw_index(L, PyTuple_GetItem(kwnames, j), j);
		if (i < 0)
			return 0;
		if (L->kw_at[i] >= 0) {
			a[L->kw_at[i]] = values[j];
			continue;
		}
		PyObject *want = PyTuple_GetItem(L->kwvalues, i);
		if (values[j] == want)
			continue;
		if (L->strict && Py_TYPE(values[j]) != Py_TYPE(want))
			return 0;
		int eq = PyObject_RichCompareBool(values[j], want, Py_EQ);
		if (eq != 1)
			return eq;
	}
	return 1;
}

/* The kind of int an exact int is for blk.triton: K_INT32 in [-2^31, 2^31),
 * K_INT64_WIDE elsewhere in int64, K_U64_WIDE in [2^63, 2^64), else -1. */
static int int_range(PyObject *a)
{
	int over = 0;
	long long v = PyLong_AsLongLongAndOverflow(a, &over);
	if (!over && !PyErr_Occurred())
		return v >= INT32_MIN && v <= INT32_MAX ? K_INT32 : K_INT64_WIDE;
	if (!PyErr_Occurred() && over > 0) {
		(void)PyLong_AsUnsignedLongLong(a);
		if (!PyErr_Occurred())
			return K_U64_WIDE;
	}
	PyErr_Clear();
	return -1;
}

/* A method of a tensor called without arguments. */
static PyObject *call0(PyObject *t, PyObject *name) { return PyObject_CallMethodObjArgs(t, name, NULL); }

/* Whether argument a is what spec s was made for: 1 yes, 0 no, -1 an
 * exception (which propagates, as from the generated launcher's checks). */
static int check(const Launcher *L, const ArgSpec *s, PyObject *a)
{
	PyObject *r;
	int ok;
	switch (s->kind) {
	case K_TENSOR:
	case K_TENSOR_STRIDED:
		if (Py_TYPE(a) != (PyTypeObject *)L->tensor_type &&
		    !PyType_IsSubtype(Py_TYPE(a), (PyTypeObject *)L->tensor_type))
			return 0;
		if (!(r = PyObject_GetAttr(a, s_dtype)))
			return -1;
		ok = r == s->dtype;
		Py_DECREF(r);
		if (!ok)
			return 0;
		if (!(r = call0(a, s_get_device)))
			return -1;
		ok = PyObject_RichCompareBool(r, L->device, Py_EQ);
		Py_DECREF(r);
		if (ok != 1 || s->kind == K_TENSOR_STRIDED)
			return ok;
		if (!(r = call0(a, s_is_contiguous)))
			return -1;
		ok = PyObject_IsTrue(r);
		Py_DECREF(r);
		return ok;
	case K_INT:
	case K_U64:
		return Py_TYPE(a) == &PyLong_Type;
	case K_INT32:
	case K_INT64_WIDE:
	case K_U64_WIDE:
		return Py_TYPE(a) == &PyLong_Type && int_range(a) == s->kind;
	case K_BOOL:
		return Py_TYPE(a) == &PyBool_Type;
	case K_FLOAT_EXACT:
		return Py_TYPE(a) == &PyFloat_Type;
	default:
		return Py_TYPE(a) == &PyFloat_Type || Py_TYPE(a) == &PyLong_Type;
	}
}

/* An exception raised while taking a value: 0 (cleared: the call falls
 * back) for a TypeError, ValueError or OverflowError, which the generated
 * launcher's writes catch; -1 (it propagates) for any other. */
static int misfit(void)
{
	if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError) ||
	    PyErr_ExceptionMatches(PyExc_OverflowError)) {
		PyErr_Clear();
		return 0;
	}
	return -1;
}

/* Argument a's bits (it passed check): 1, or 0 where the value does not
 * fit (TypeError, ValueError or OverflowError: cleared, the call falls
 * back), or -1 (another exception: it propagates). */
static int value(const ArgSpec *s, PyObject *a, uint64_t *bits)
{
	PyObject *r = NULL;
	switch (s->kind) {
	case K_TENSOR:
	case K_TENSOR_STRIDED:
		if (!(r = call0(a, s_data_ptr)))
			break;
		if (!PyLong_Check(r)) {
			Py_DECREF(r);
			return 0;
		}
		*bits = PyLong_AsUnsignedLongLong(r);
		Py_DECREF(r);
		break;
	case K_INT:
	case K_INT32:
	case K_INT64_WIDE:
	case K_BOOL: {
		long long v = PyLong_AsLongLong(a);
		memcpy(bits, &v, sizeof v);
		break;
	}
	case K_U64:
	case K_U64_WIDE:
		*bits = PyLong_AsUnsignedLongLong(a);
		break;
	default: {
		double d = Py_TYPE(a) == &PyFloat_Type ? PyFloat_AsDouble(a) : PyLong_AsDouble(a);
		memcpy(bits, &d, sizeof d);
		break;
	}
	}
	return PyErr_Occurred() ? misfit() : 1;
}

/* A call this launcher's plan does not take: the grid's launchers before
 * it (next, set by the kernel where the grid's launcher changed), tried in
 * C up to CHAIN_MAX deep, so that a kernel launched on one grid with
 * consts that take turns (a forward and a backward) does not go the
 * checked way in Python at every call; then the fallback (NotImplemented
 * for a probe, or inside a chain). chained: the launchers tried before
 * this one in the call (the GIL is held). */
enum { CHAIN_MAX = 4 };
static int chained;
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames);

static PyObject *not_mine(Launcher *L, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	if (L->next && ((Launcher *)L->next)->buf && chained < CHAIN_MAX) {
		chained++;
		PyObject *r = launch(L->next, args, nargs, kwnames);
		chained--;
		if (r != Py_NotImplemented)
			return r; /* launched, or an error */
		Py_DECREF(r);
	}
	if (L->fallback == Py_None || chained)
		Py_RETURN_NOTIMPLEMENTED;
	return to_fallback(L, args, nargs, kwnames);
}

static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
	Launcher *L = (Launcher *)self;
	Py_ssize_t nargs = nargsf; /* a builtin function's FASTCALL: no offset flag */
	if (!L->buf) {
		PyErr_SetString(PyExc_RuntimeError, "blk: a launcher used after it was cleared");
		return NULL;
	}
	/* the runtime arguments in order: by position, then (same_kw) by name */
	PyObject *a[MAX_ARGS];
	int ok = nargs == L->n_pos && PyThread_get_thread_ident() == L->thread;
	if (ok) {
		memcpy(a, args, sizeof *a * (size_t)nargs);
		ok = same_kw(L, args + nargs, kwnames, a);
	}
	for (int i = 0; ok == 1 && i < L->n; i++)
		ok = check(L, &L->arg[i], a[i]);
	uint64_t bits[MAX_ARGS], stream = 0;
	for (int i = 0; ok == 1 && i < L->n; i++)
		ok = value(&L->arg[i], a[i], &bits[i]);
	if (ok == 1 && L->stream_word >= 0) {
		PyObject *r = PyObject_CallFunctionObjArgs(L->getstream, L->device, NULL);
		ArgSpec u64 = {K_U64, 0, NULL};
		ok = !r ? misfit() : PyLong_Check(r) ? value(&u64, r, &stream) : 0;
		Py_XDECREF(r);
	}
	if (ok < 0)
		return NULL;
	if (!ok)
		return not_mine(L, args, nargs, kwnames);
	if (L->stream_word >= 0)
		memcpy(L->buf + 8 * L->stream_word, &stream, 8);
	for (int i = 0; i < L->n; i++)
		memcpy(L->buf + 8 * L->arg[i].word, &bits[i], 8);
	int st = L->launch(L->kernel, L->buf + L->args_offset, L->n, L->buf);
	if (!st)
		Py_RETURN_NONE;
	PyObject *kw;
	PyObject *t = given(args, nargs, kwnames, &kw);
	if (!t)
		return NULL;
	PyObject *r = PyObject_CallFunction(L->fail, "iO(OO)", st, s_blk_launch, t, kw);
	Py_DECREF(t);
	Py_DECREF(kw);
	return r;
}

static PyMethodDef launch_def = {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL | METH_KEYWORDS,
                                 "A blk launcher (blk._plan): kernel[grid](*args, **consts)."};

static void *address(PyObject *o) { return PyLong_Check(o) ? PyLong_AsVoidPtr(o) : NULL; }

static PyObject *bad(const char *what)
{
	PyErr_Format(PyExc_ValueError, "_blkfast.launcher: %s", what);
	return NULL;
}

static PyObject *make_launcher(PyObject *mod, PyObject *a)
{
	(void)mod;
	PyObject *fallback, *fail, *fn, *kernel, *buf, *keep, *getstream, *device, *tensor_type, *kwnames, *kwvalues,
		*specs, *kwargs_at = NULL;
	Py_ssize_t buf_words, args_offset, stream_word;
	int strict = 0;
	if (!PyArg_ParseTuple(a, "OOOOOOnnnOOOOOO|pO:launcher", &fallback, &fail, &fn, &kernel, &buf, &keep, &buf_words,
	                      &args_offset, &stream_word, &getstream, &device, &tensor_type, &kwnames, &kwvalues, &specs,
	                      &strict, &kwargs_at))
		return NULL;
	if (!PyTuple_Check(kwnames) || !PyTuple_Check(kwvalues) || PyTuple_Size(kwnames) != PyTuple_Size(kwvalues) ||
	    !PyTuple_Check(specs) || !PyType_Check(tensor_type) || !PyLong_Check(device) ||
	    (kwargs_at && (!PyTuple_Check(kwargs_at) || PyTuple_Size(kwargs_at) != PyTuple_Size(kwnames))))
		return bad("arguments of the wrong types");
	Py_ssize_t n = PyTuple_Size(specs);
	if (n > MAX_ARGS || PyTuple_Size(kwnames) > MAX_ARGS)
		return bad("more than 64 arguments");
	/* each keyword's runtime argument: each at most once, and they the last ones */
	int kw_at[MAX_ARGS], by_name = 0;
	for (Py_ssize_t j = 0; j < PyTuple_Size(kwnames); j++) {
		kw_at[j] = kwargs_at ? (int)PyLong_AsLong(PyTuple_GetItem(kwargs_at, j)) : -1;
		if (PyErr_Occurred())
			return NULL;
		if (kw_at[j] < -1 || kw_at[j] >= n)
			return bad("a keyword's argument out of range");
		by_name += kw_at[j] >= 0;
	}
	for (Py_ssize_t j = 0; j < PyTuple_Size(kwnames); j++) {
		if (kw_at[j] >= 0 && kw_at[j] < n - by_name)
			return bad("keywords' arguments not the last ones");
		for (Py_ssize_t i = 0; i < j; i++)
			if (kw_at[j] >= 0 && kw_at[i] == kw_at[j])
				return bad("a runtime argument of two keywords");
	}
	if (buf_words < 1 || args_offset < 0 || args_offset % 8 || args_offset / 8 + 2 * n > buf_words ||
	    stream_word >= buf_words)
		return bad("offsets outside the buffer");
	Launcher *L = (Launcher *)PyType_GenericAlloc((PyTypeObject *)launcher_type, 0);
	if (!L)
		return NULL;
	PyObject *objs[] = {getstream, device, tensor_type, keep, fallback, fail, kwnames, kwvalues};
	PyObject **slots[] = {&L->getstream, &L->device, &L->tensor_type, &L->keep, &L->fallback, &L->fail,
	                      &L->kwnames, &L->kwvalues};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
		Py_INCREF(objs[i]);
		*slots[i] = objs[i];
	}
	L->n_kw = PyTuple_Size(kwnames);
	memcpy(L->kw_at, kw_at, sizeof *kw_at * (size_t)L->n_kw);
	L->n_pos = (int)(n - by_name);
	L->strict = strict;
	L->launch = (LaunchFn)(uintptr_t)address(fn);
	L->kernel = address(kernel);
	L->buf = address(buf);
	L->args_offset = args_offset;
	L->stream_word = stream_word;
	L->thread = PyThread_get_thread_ident();
	for (Py_ssize_t i = 0; i < n && !PyErr_Occurred(); i++) {
		PyObject *dtype = NULL;
		int kind = 0;
		Py_ssize_t word = 0;
		if (!PyArg_ParseTuple(PyTuple_GetItem(specs, i), "inO", &kind, &word, &dtype))
			break;
		if (kind < 0 || kind >= K_KINDS || word < 0 || word >= buf_words) {
			bad("an argument's kind or word out of range");
			break;
		}
		Py_INCREF(dtype);
		L->arg[L->n++] = (ArgSpec){kind, word, dtype};
	}
	if (!PyErr_Occurred() && (!L->launch || !L->buf))
		bad("a null address");
	if (PyErr_Occurred()) {
		Py_DECREF(L);
		return NULL;
	}
	PyObject *f = PyCFunction_NewEx(&launch_def, (PyObject *)L, NULL);
	Py_DECREF(L);
	return f;
}

/* The Launcher a launcher function made here wraps, or NULL. */
static Launcher *launcher_of(PyObject *fn)
{
	if (!PyCFunction_Check(fn))
		return NULL;
	PyObject *self = PyCFunction_GetSelf(fn);
	return self && PyObject_TypeCheck(self, (PyTypeObject *)launcher_type) ? (Launcher *)self : NULL;
}

/* set_next(fn, prev): the calls fn's plan does not take try prev's first
 * (prev None: none). False where either is not a launcher of this module. */
static PyObject *set_next(PyObject *mod, PyObject *a)
{
	(void)mod;
	PyObject *fn, *prev;
	if (!PyArg_ParseTuple(a, "OO:set_next", &fn, &prev))
		return NULL;
	Launcher *L = launcher_of(fn), *P = prev == Py_None ? NULL : launcher_of(prev);
	if (!L || (prev != Py_None && !P) || P == L)
		Py_RETURN_FALSE;
	PyObject *old = L->next;
	Py_XINCREF((PyObject *)P);
	L->next = (PyObject *)P;
	Py_XDECREF(old);
	Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
	{"launcher", make_launcher, METH_VARARGS, "A launcher for one plan and grid (blk._plan)."},
	{"set_next", set_next, METH_VARARGS, "set_next(fn, prev): calls fn does not take try prev's launcher first."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blkfast", "The blk package's launch fast path.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__blkfast(void)
{
	s_dtype = PyUnicode_InternFromString("dtype");
	s_get_device = PyUnicode_InternFromString("get_device");
	s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
	s_data_ptr = PyUnicode_InternFromString("data_ptr");
	s_blk_launch = PyUnicode_InternFromString("blk_launch");
	if (!s_dtype || !s_get_device || !s_is_contiguous || !s_data_ptr || !s_blk_launch)
		return NULL;
	if (!launcher_type && !(launcher_type = PyType_FromSpec(&launcher_spec)))
		return NULL;
	return PyModule_Create(&module);
}
