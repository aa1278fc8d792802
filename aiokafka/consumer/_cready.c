/*
 * ready(value): an awaitable that is already done, for AIOKafkaConsumer.__anext__.
 *
 * Why: `async for record in consumer` awaits one __anext__() per record. When the
 * record is already buffered (nearly always), an `async def __anext__` still
 * creates, starts and finishes a coroutine for it: about a fifth of the loop's
 * CPU per record. __anext__ is a plain method that returns ready(record)
 * instead; awaiting it gives the record without suspending (am_send, or
 * StopIteration(record) for code that iterates it by hand). Nothing else is
 * here: no asyncio, no consumer state. The pure-Python fallback is a coroutine
 * (consumer.py), which behaves the same, only slower.
 *
 * Like a coroutine, it can be awaited once: the second time raises
 * RuntimeError.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject_HEAD
    PyObject *value; /* NULL once awaited */
} Ready;

static PyTypeObject ReadyType;

static void
ready_dealloc(Ready *self)
{
    Py_XDECREF(self->value);
    PyObject_Free(self);
}

static PyObject *
ready_await(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static int
ready_take(Ready *self, PyObject **value)
{
    if (self->value == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse an already awaited __anext__()");
        return -1;
    }
    *value = self->value; /* the reference moves to the caller */
    self->value = NULL;
    return 0;
}

static PySendResult
ready_send(PyObject *self, PyObject *arg, PyObject **result)
{
    (void)arg;
    if (ready_take((Ready *)self, result) < 0) {
        *result = NULL;
        return PYGEN_ERROR;
    }
    return PYGEN_RETURN;
}

static PyObject *
ready_next(PyObject *self)
{
    PyObject *value;
    if (ready_take((Ready *)self, &value) < 0) {
        return NULL;
    }
    /* StopIteration(value), built explicitly: PyErr_SetObject would unpack a tuple
     * value into the exception's arguments. */
    PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, value);
    Py_DECREF(value);
    if (stop != NULL) {
        PyErr_SetObject(PyExc_StopIteration, stop);
        Py_DECREF(stop);
    }
    return NULL;
}

static PyObject *
ready_send_method(PyObject *self, PyObject *arg)
{
    (void)arg;
    return ready_next(self);
}

static PyObject *
ready_throw(PyObject *self, PyObject *args)
{
    /* Nothing to hand the exception to: it is raised where the awaiter is. */
    PyObject *typ, *val = NULL, *tb = NULL;
    if (!PyArg_UnpackTuple(args, "throw", 1, 3, &typ, &val, &tb)) {
        return NULL;
    }
    Py_CLEAR(((Ready *)self)->value);
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
    }
    else {
        PyErr_SetObject(typ, val);
    }
    return NULL;
}

static PyObject *
ready_close(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    Py_CLEAR(((Ready *)self)->value);
    Py_RETURN_NONE;
}

static PyMethodDef ready_methods[] = {
    {"send", ready_send_method, METH_O, NULL},
    {"throw", ready_throw, METH_VARARGS, NULL},
    {"close", ready_close, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyAsyncMethods ready_as_async = {
    .am_await = ready_await,
    .am_send = ready_send,
};

static PyTypeObject ReadyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aiokafka.consumer._cready.Ready",
    .tp_basicsize = sizeof(Ready),
    .tp_dealloc = (destructor)ready_dealloc,
    .tp_as_async = &ready_as_async,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = ready_next,
    .tp_methods = ready_methods,
};

static PyObject *
ready(PyObject *module, PyObject *value)
{
    (void)module;
    Ready *self = PyObject_New(Ready, &ReadyType);
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(value);
    self->value = value;
    return (PyObject *)self;
}

static PyMethodDef module_methods[] = {
    {"ready", ready, METH_O,
     "ready(value): an awaitable, done already, whose await gives value (once)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aiokafka.consumer._cready",
    .m_doc = "An already-done awaitable for AIOKafkaConsumer.__anext__ (optional).",
    .m_size = 0,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__cready(void)
{
    if (PyType_Ready(&ReadyType) < 0) {
        return NULL;
    }
    return PyModule_Create(&module_def);
}
