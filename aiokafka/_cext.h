/* What the optional C extensions share: a C method that stands in for a Python one,
 * the argument-count check of their module functions, and the module definition.
 *
 * Such a method takes the common case in C and hands every other case to the Python
 * function it replaces (same arguments, so the same result and errors), and shows that
 * function's docstring in help() and the API docs. Header-only and static: each
 * extension is a shared object of its own.
 */
#ifndef AIOKAFKA_CEXT_H
#define AIOKAFKA_CEXT_H

#include <Python.h>
#include <string.h>

/* func(self, *args, **kwargs), from a vectorcall method's arguments. */
static inline PyObject *
ak_call_with_self(PyObject *func, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8];
    PyObject **stack = small;
    if (total + 1 > 8) {
        stack = PyMem_Malloc((size_t)(total + 1) * sizeof(PyObject *));
        if (stack == NULL) {
            return PyErr_NoMemory();
        }
    }
    stack[0] = self;
    for (Py_ssize_t i = 0; i < total; i++) {
        stack[i + 1] = args[i];
    }
    PyObject *result = PyObject_Vectorcall(func, stack, nargs + 1, kwnames);
    if (stack != small) {
        PyMem_Free(stack);
    }
    return result;
}

/* Set def's docstring to prefix + func.__doc__. A PyMethodDef holds a C string, so the
 * copy is kept for the life of the process; call it once per def. A func without a str
 * docstring leaves def as it is. Returns 0, or -1 with an exception set. */
static inline int
ak_take_doc(PyMethodDef *def, PyObject *func, const char *prefix)
{
    PyObject *doc = PyObject_GetAttrString(func, "__doc__");
    if (doc == NULL) {
        return -1;
    }
    if (!PyUnicode_Check(doc)) {
        Py_DECREF(doc);
        return 0;
    }
    PyObject *full = PyUnicode_FromFormat("%s%U", prefix, doc);
    Py_DECREF(doc);
    if (full == NULL) {
        return -1;
    }
    const char *utf8 = PyUnicode_AsUTF8(full);
    char *copy = utf8 ? PyMem_RawMalloc(strlen(utf8) + 1) : NULL;
    if (copy == NULL) {
        Py_DECREF(full);
        if (utf8 != NULL) {
            PyErr_NoMemory();
        }
        return -1;
    }
    strcpy(copy, utf8);
    Py_DECREF(full);
    def->ml_doc = copy;
    return 0;
}

/* A method descriptor of def for cls, standing in for python_func: on success
 * *fallback holds python_func (what the C method calls for the cases it leaves) and,
 * when owner is not NULL, *owner holds cls (the exact type the C method accepts); the
 * references they held before are released. Returns a new reference, or NULL with an
 * exception set (then neither is changed). */
static inline PyObject *
ak_bind_method(PyTypeObject *cls, PyMethodDef *def, PyObject *python_func,
               PyTypeObject **owner, PyObject **fallback)
{
    PyObject *method = PyDescr_NewMethod(cls, def);
    if (method == NULL) {
        return NULL;
    }
    if (owner != NULL) {
        Py_XSETREF(*owner, (PyTypeObject *)Py_NewRef(cls));
    }
    Py_XSETREF(*fallback, Py_NewRef(python_func));
    return method;
}

/* 0 when a METH_FASTCALL module function called name got `expected` arguments; else
 * -1 with a TypeError saying how many it takes. */
static inline int
ak_check_nargs(const char *name, Py_ssize_t nargs, Py_ssize_t expected)
{
    if (nargs == expected) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, expected,
                 nargs);
    return -1;
}

/* Defines the METH_FASTCALL module function name, which takes exactly n positional
 * arguments, and opens the definition of its body: `AK_POSITIONAL(f, 2) { ... args[1]
 * ... }`. The body sees only `args`; the count is checked before it runs. */
#define AK_POSITIONAL(name, n)                                                          \
    static PyObject *name##_body(PyObject *const *args);                                \
    static PyObject *name(PyObject *module, PyObject *const *args, Py_ssize_t nargs)    \
    {                                                                                   \
        (void)module;                                                                   \
        return ak_check_nargs(#name, nargs, (n)) < 0 ? NULL : name##_body(args);        \
    }                                                                                   \
    static PyObject *name##_body(PyObject *const *args)

/* A name an extension interns once at import, and where it keeps it. */
typedef struct {
    PyObject **slot;
    const char *name;
} AkName;

/* Intern every name of `names` (n of them) into its slot, once: a slot already set
 * (the module imported again) is kept. Returns 0, or -1 with an exception set. */
static inline int
ak_intern_all(const AkName *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (*names[i].slot == NULL) {
            *names[i].slot = PyUnicode_InternFromString(names[i].name);
            if (*names[i].slot == NULL) {
                return -1;
            }
        }
    }
    return 0;
}

/* The PyMethodDef entry of a METH_FASTCALL module function f documented by f_doc. */
#define AK_FASTCALL(f) {#f, (PyCFunction)(void (*)(void))(f), METH_FASTCALL, f##_doc}

/* An exec function of AK_MODULE for a module with nothing to set up. */
static inline int
ak_module_exec_nothing(PyObject *module)
{
    (void)module;
    return 0;
}

/* The extension module `name` (full_name, e.g. "aiokafka.record._cdecode") with the
 * docstring doc and the PyMethodDef entries that follow (e.g. AK_FASTCALL(f)): its
 * method table, PyModuleDef and PyInit_<name>. Multi-phase initialisation with no
 * module state (an extension keeps its state in static variables); exec, an
 * int (*)(PyObject *module), runs on the new module (e.g. to ready a type), or is
 * ak_module_exec_nothing. */
#define AK_MODULE(name, full_name, doc, exec, ...)                                      \
    static PyMethodDef name##_methods[] = {__VA_ARGS__, {NULL, NULL, 0, NULL}};         \
    static PyModuleDef_Slot name##_slots[] = {{Py_mod_exec, (void *)(exec)}, {0, NULL}}; \
    static struct PyModuleDef name##_module = {                                         \
        PyModuleDef_HEAD_INIT,                                                          \
        .m_name = (full_name),                                                          \
        .m_doc = (doc),                                                                 \
        .m_size = 0,                                                                    \
        .m_methods = name##_methods,                                                    \
        .m_slots = name##_slots,                                                        \
    };                                                                                  \
    PyMODINIT_FUNC PyInit_##name(void) { return PyModuleDef_Init(&name##_module); }

#endif /* AIOKAFKA_CEXT_H */
