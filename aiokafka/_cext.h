/* What the optional C extensions share: a C method that stands in for a Python one.
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

#endif /* AIOKAFKA_CEXT_H */
