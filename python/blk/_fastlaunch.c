/* _fastlaunch.c: the module _blkfast, the launch fast path of the blk
 * package in C (optional: the package runs without it, python/blk/_ffi.py).
 *
 * _blkfast.launcher(fallback, fail, launch, kernel, buf, args_offset,
 * stream_word, getstream, device, tensor_type, kwnames, kwvalues, specs)
 * returns a builtin function that does what the launcher _plan.py generates
 * does (the same checks, in the same order) for one plan and grid, without
 * its Python frame and without ctypes: each tensor's class, dtype, device
 * and contiguity; each int and float's class; the thread that made it; the
 * keyword arguments (names and values); then torch's current stream and
 * every pointer and scalar written into the plan's blk_launch_options and
 * blk_arg array, and blk_launch called through its address, the GIL held
 * (as the package's ctypes call holds it: the arrays are the plan's).
 * Anything unlike what it was made for (and any exception on the way) goes
 * to `fallback`, the generated Python launcher, with the same arguments:
 * it decides the slow way. A failed blk_launch goes to fail(status,
 * "blk_launch", (args, kwargs)), which raises the blk.Error.
 *
 * Python's stable ABI of 3.10: one build serves every later Python. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* an argument's kind: what it must be, and how its value is written */
enum { K_TENSOR, K_TENSOR_STRIDED, K_INT, K_U64, K_FLOAT };

typedef int (*LaunchFn)(void *kernel, void *args, int n_args, void *opts);

typedef struct ArgSpec {
	int kind;
	Py_ssize_t word;  /* its value's 8-byte word in the buffer */
	PyObject *dtype;  /* a tensor's dtype (compared by identity) */
} ArgSpec;

typedef struct Launcher {
	LaunchFn launch;
	void *kernel;
	unsigned char *buf; /* blk_launch_options, then the blk_arg array */
	Py_ssize_t args_offset;
	int n;
	Py_ssize_t stream_word; /* -1: the stream was written once */
	PyObject *getstream, *device;
	long device_index;
	unsigned long thread;
	PyTypeObject *tensor_type;
	PyObject *keep, *fallback, *fail, *kwnames, *kwvalues;
	Py_ssize_t n_kw;
	ArgSpec arg[];
} Launcher;

static const char CAPSULE[] = "blk._blkfast.launcher";
static PyObject *s_dtype, *s_get_device, *s_is_contiguous, *s_data_ptr, *s_blk_launch;

static void launcher_free(PyObject *capsule)
{
	Launcher *L = PyCapsule_GetPointer(capsule, CAPSULE);
	if (!L)
		return;
	for (int i = 0; i < L->n; i++)
		Py_XDECREF(L->arg[i].dtype);
	Py_XDECREF(L->getstream);
	Py_XDECREF(L->device);
	Py_XDECREF((PyObject *)L->tensor_type);
	Py_XDECREF(L->keep);
	Py_XDECREF(L->fallback);
	Py_XDECREF(L->fail);
	Py_XDECREF(L->kwnames);
	Py_XDECREF(L->kwvalues);
	PyMem_Free(L);
}

/* The call's (args, kwargs) as a tuple and a dict (the slow ways only). */
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
	PyErr_Clear();
	PyObject *kw;
	PyObject *t = given(args, nargs, kwnames, &kw);
	if (!t)
		return NULL;
	PyObject *r = PyObject_Call(L->fallback, t, kw);
	Py_DECREF(t);
	Py_DECREF(kw);
	return r;
}

/* Whether the keyword arguments are the plan's: the same names, each
 * value equal to the plan's. */
static int same_kw(const Launcher *L, PyObject *const *values, PyObject *kwnames)
{
	Py_ssize_t nk = kwnames ? PyTuple_Size(kwnames) : 0;
	if (nk != L->n_kw)
		return 0;
	for (Py_ssize_t j = 0; j < nk; j++) {
		PyObject *name = PyTuple_GetItem(kwnames, j);
		Py_ssize_t i = 0;
		for (; i < L->n_kw; i++) {
			PyObject *want = PyTuple_GetItem(L->kwnames, i);
			if (want == name || PyUnicode_Compare(want, name) == 0)
				break;
		}
		if (i == L->n_kw)
			return 0;
		PyObject *want = PyTuple_GetItem(L->kwvalues, i);
		if (values[j] != want && PyObject_RichCompareBool(values[j], want, Py_EQ) != 1)
			return 0;
	}
	return 1;
}

/* A method of a tensor called without arguments. */
static PyObject *call0(PyObject *t, PyObject *name) { return PyObject_CallMethodObjArgs(t, name, NULL); }

/* The bits of argument a for spec s into *bits: 0 when it is not what the
 * plan was made for (or an exception was raised on the way). */
static int value_bits(const Launcher *L, const ArgSpec *s, PyObject *a, uint64_t *bits)
{
	PyObject *r;
	int ok;
	switch (s->kind) {
	case K_TENSOR:
	case K_TENSOR_STRIDED:
		if (Py_TYPE(a) != L->tensor_type && !PyType_IsSubtype(Py_TYPE(a), L->tensor_type))
			return 0;
		if (!(r = PyObject_GetAttr(a, s_dtype)))
			return 0;
		ok = r == s->dtype;
		Py_DECREF(r);
		if (!ok || !(r = call0(a, s_get_device)))
			return 0;
		ok = PyLong_Check(r) && PyLong_AsLong(r) == L->device_index;
		Py_DECREF(r);
		if (ok && s->kind == K_TENSOR) {
			if (!(r = call0(a, s_is_contiguous)))
				return 0;
			ok = r == Py_True;
			Py_DECREF(r);
		}
		if (!ok || !(r = call0(a, s_data_ptr)))
			return 0;
		*bits = PyLong_Check(r) ? PyLong_AsUnsignedLongLong(r) : (uint64_t)-1;
		Py_DECREF(r);
		return !PyErr_Occurred();
	case K_INT:
	case K_U64:
		if (Py_TYPE(a) != &PyLong_Type)
			return 0;
		if (s->kind == K_U64) {
			*bits = PyLong_AsUnsignedLongLong(a);
		} else {
			int over = 0;
			long long v = PyLong_AsLongLongAndOverflow(a, &over);
			if (over)
				return 0;
			memcpy(bits, &v, sizeof v);
		}
		return !PyErr_Occurred();
	default: {
		double d;
		if (Py_TYPE(a) == &PyFloat_Type)
			d = PyFloat_AsDouble(a);
		else if (Py_TYPE(a) == &PyLong_Type)
			d = PyLong_AsDouble(a);
		else
			return 0;
		memcpy(bits, &d, sizeof d);
		return !PyErr_Occurred();
	}
	}
}

static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	Launcher *L = PyCapsule_GetPointer(self, CAPSULE);
	if (!L)
		return NULL;
	if (nargs != L->n || !same_kw(L, args + nargs, kwnames) || PyThread_get_thread_ident() != L->thread)
		return to_fallback(L, args, nargs, kwnames);
	enum { MAX_FAST = 64 };
	uint64_t bits[MAX_FAST];
	for (int i = 0; i < L->n; i++)
		if (!value_bits(L, &L->arg[i], args[i], &bits[i]))
			return to_fallback(L, args, nargs, kwnames);
	if (L->stream_word >= 0) {
		PyObject *r = PyObject_CallFunctionObjArgs(L->getstream, L->device, NULL);
		uint64_t stream = r && PyLong_Check(r) ? PyLong_AsUnsignedLongLong(r) : 0;
		int ok = r && PyLong_Check(r) && !PyErr_Occurred();
		Py_XDECREF(r);
		if (!ok)
			return to_fallback(L, args, nargs, kwnames);
		memcpy(L->buf + 8 * L->stream_word, &stream, 8);
	}
	for (int i = 0; i < L->n; i++)
		memcpy(L->buf + 8 * L->arg[i].word, &bits[i], 8);
	int st = L->launch(L->kernel, L->buf + L->args_offset, L->n, L->buf);
	if (st) {
		PyObject *kw;
		PyObject *t = given(args, nargs, kwnames, &kw);
		if (!t)
			return NULL;
		PyObject *r = PyObject_CallFunction(L->fail, "iO(OO)", st, s_blk_launch, t, kw);
		Py_DECREF(t);
		Py_DECREF(kw);
		return r;
	}
	Py_RETURN_NONE;
}

static PyMethodDef launch_def = {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL | METH_KEYWORDS,
                                 "A blk launcher (blk._plan): kernel[grid](*args, **consts)."};

static void *address(PyObject *o)
{
	return PyLong_Check(o) ? PyLong_AsVoidPtr(o) : NULL;
}

static PyObject *make_launcher(PyObject *mod, PyObject *a)
{
	(void)mod;
	PyObject *fallback, *fail, *fn, *kernel, *buf, *keep, *getstream, *device, *tensor_type, *kwnames, *kwvalues,
		*specs;
	Py_ssize_t args_offset, stream_word;
	if (!PyArg_ParseTuple(a, "OOOOOOnnOOOOOO:launcher", &fallback, &fail, &fn, &kernel, &buf, &keep, &args_offset,
	                      &stream_word, &getstream, &device, &tensor_type, &kwnames, &kwvalues, &specs))
		return NULL;
	if (!PyTuple_Check(kwnames) || !PyTuple_Check(kwvalues) || PyTuple_Size(kwnames) != PyTuple_Size(kwvalues) ||
	    !PyTuple_Check(specs) || !PyType_Check(tensor_type) || PyTuple_Size(specs) > 64) {
		PyErr_SetString(PyExc_TypeError, "_blkfast.launcher: bad arguments");
		return NULL;
	}
	int n = (int)PyTuple_Size(specs);
	Launcher *L = PyMem_Calloc(1, sizeof *L + (size_t)n * sizeof L->arg[0]);
	if (!L)
		return PyErr_NoMemory();
	PyObject *cap = PyCapsule_New(L, CAPSULE, launcher_free); /* frees L and what it holds */
	if (!cap) {
		PyMem_Free(L);
		return NULL;
	}
	PyObject *objs[] = {getstream, device, tensor_type, keep, fallback, fail, kwnames, kwvalues};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
		Py_INCREF(objs[i]);
	L->getstream = getstream;
	L->device = device;
	L->tensor_type = (PyTypeObject *)tensor_type;
	L->keep = keep;
	L->fallback = fallback;
	L->fail = fail;
	L->kwnames = kwnames;
	L->kwvalues = kwvalues;
	L->n_kw = PyTuple_Size(kwnames);
	L->launch = (LaunchFn)(uintptr_t)address(fn);
	L->kernel = address(kernel);
	L->buf = address(buf);
	L->args_offset = args_offset;
	L->stream_word = stream_word;
	L->device_index = PyLong_AsLong(device);
	L->thread = PyThread_get_thread_ident();
	for (int i = 0; i < n && !PyErr_Occurred(); i++) {
		PyObject *dtype = NULL;
		int kind = 0;
		Py_ssize_t word = 0;
		if (!PyArg_ParseTuple(PyTuple_GetItem(specs, i), "inO", &kind, &word, &dtype))
			break;
		Py_INCREF(dtype);
		L->arg[L->n++] = (ArgSpec){kind, word, dtype};
	}
	if (!PyErr_Occurred() && (!L->launch || !L->buf))
		PyErr_SetString(PyExc_ValueError, "_blkfast.launcher: a null address");
	if (PyErr_Occurred()) {
		Py_DECREF(cap);
		return NULL;
	}
	PyObject *f = PyCFunction_NewEx(&launch_def, cap, NULL);
	Py_DECREF(cap);
	return f;
}

static PyMethodDef methods[] = {
	{"launcher", make_launcher, METH_VARARGS, "A launcher for one plan and grid (blk._plan)."},
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
	return PyModule_Create(&module);
}
