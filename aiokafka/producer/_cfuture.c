/*
 * Optional base class of RecordFuture (futures.py): its two fields, and
 * futures that the cyclic garbage collector does not track until they can be
 * part of a cycle.
 *
 * Why: send() hands out one RecordFuture per record, and a busy caller keeps
 * many thousands alive until their batches are acknowledged. Every tracked
 * object is walked by each collection it survives: against a real broker the
 * collector took a quarter of the producer's CPU, all of it for these futures
 * (py-spy, 1M records). new_future() makes them untracked.
 *
 * Why that is safe: the collector only needs to see an object that can be on
 * a reference cycle. A future refers to its BatchResults, and the only way
 * back from a BatchResults to code that holds futures is a registered
 * callback or awaiting task (BatchResults._callbacks): add_done_callback() and
 * __await__ call _track() first. The other way, an error stored in the batch
 * whose traceback reaches a caller's frame, is closed in futures.py: callers
 * get a copy of the stored error, so the stored one never gets their frames.
 *
 * No asyncio, no behaviour: the methods stay in Python (futures.py).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *results;   /* BatchResults of the record's batch */
    Py_ssize_t index;    /* the record's index in that batch */
} RecordFutureBase;

static PyTypeObject RecordFutureBaseType;

static PyObject *
base_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *results;
    Py_ssize_t index;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "RecordFuture() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "On:RecordFuture", &results, &index)) {
        return NULL;
    }
    RecordFutureBase *self = (RecordFutureBase *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(results);
    self->results = results;
    self->index = index;
    return (PyObject *)self; /* tracked: made the ordinary way */
}

static int
base_traverse(RecordFutureBase *self, visitproc visit, void *arg)
{
    Py_VISIT(self->results);
    return 0;
}

static int
base_clear(RecordFutureBase *self)
{
    Py_CLEAR(self->results);
    return 0;
}

static void
base_dealloc(RecordFutureBase *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self); /* a no-op when untracked */
    Py_CLEAR(self->results);
    type->tp_free((PyObject *)self);
}

static PyObject *
base_track(RecordFutureBase *self, PyObject *Py_UNUSED(ignored))
{
    if (!PyObject_GC_IsTracked((PyObject *)self)) {
        PyObject_GC_Track(self);
    }
    Py_RETURN_NONE;
}

static PyMethodDef base_methods[] = {
    {"_track", (PyCFunction)base_track, METH_NOARGS,
     "Let the cyclic GC see this future (before anything can refer back to it)."},
    {NULL},
};

static PyMemberDef base_members[] = {
    {"_results", T_OBJECT_EX, offsetof(RecordFutureBase, results), READONLY,
     "BatchResults of the record's batch."},
    {"_index", T_PYSSIZET, offsetof(RecordFutureBase, index), READONLY,
     "The record's index in its batch."},
    {NULL},
};

static PyTypeObject RecordFutureBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aiokafka.producer._cfuture.RecordFutureBase",
    .tp_basicsize = sizeof(RecordFutureBase),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = PyDoc_STR("RecordFuture's fields (results, index)."),
    .tp_new = base_new,
    .tp_traverse = (traverseproc)base_traverse,
    .tp_clear = (inquiry)base_clear,
    .tp_dealloc = (destructor)base_dealloc,
    .tp_methods = base_methods,
    .tp_members = base_members,
};

PyDoc_STRVAR(new_future_doc,
"new_future(cls, results, index, /)\n"
"--\n"
"\n"
"A cls (a subclass of RecordFutureBase without __init__) for record index of\n"
"results, not tracked by the cyclic GC until its _track() is called.");

static PyObject *
new_future(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "new_future() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyType_Check(args[0])
        || !PyType_IsSubtype((PyTypeObject *)args[0], &RecordFutureBaseType)) {
        PyErr_SetString(PyExc_TypeError, "new_future(): cls must subclass RecordFutureBase");
        return NULL;
    }
    Py_ssize_t index = PyLong_AsSsize_t(args[2]);
    if (index == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0];
    RecordFutureBase *self = (RecordFutureBase *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    PyObject_GC_UnTrack(self);
    Py_INCREF(args[1]);
    self->results = args[1];
    self->index = index;
    return (PyObject *)self;
}

static PyMethodDef module_methods[] = {
    {"new_future", (PyCFunction)(void (*)(void))new_future, METH_FASTCALL, new_future_doc},
    {NULL},
};

static struct PyModuleDef cfuture_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aiokafka.producer._cfuture",
    .m_doc = "Optional base of RecordFuture whose instances start untracked by the GC.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__cfuture(void)
{
    if (PyType_Ready(&RecordFutureBaseType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&cfuture_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&RecordFutureBaseType);
    if (PyModule_AddObject(module, "RecordFutureBase", (PyObject *)&RecordFutureBaseType) < 0) {
        Py_DECREF(&RecordFutureBaseType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
