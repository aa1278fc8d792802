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
 * The methods that asyncio.gather(), add_done_callback() users and bulk
 * checks call once per record (get_loop, done, cancelled, exception, result,
 * add_done_callback) have their common case here: the batch has one outcome
 * for all its records (BatchResults.whole) and nothing is cancelled. Every
 * other case calls the Python method of futures.py (_PyFutureMethods), given
 * to configure(), so the rules stay in one place. No asyncio here: the
 * context copy is the only call beyond attribute reads and tuple building.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "../_cext.h"

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

/* --------------------------------------------- the per-record methods */

/* Set by configure(): RecordMetadata, and futures.py's Python methods for
 * everything but the common case. */
static PyTypeObject *metadata_type;
static PyObject *slow_done, *slow_cancelled, *slow_exception, *slow_result;
static PyObject *str_whole, *str_cancelled_indexes, *str_loop, *str_tp, *str_timestamps,
    *str_add_callback, *str_context;
static PyObject *int_create_time, *int_log_append_time;

#define UNACKNOWLEDGED (-2) /* futures._UNACKNOWLEDGED: sent with acks=0 */

static int
check_configured(void)
{
    if (metadata_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_cfuture.configure() was not called");
        return -1;
    }
    return 0;
}

/* 1 if obj.name is None, 0 if not, -1 with an error set if it cannot be read. */
static int
attr_is_none(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) {
        return -1;
    }
    int none = value == Py_None;
    Py_DECREF(value);
    return none;
}

/* The batch's one outcome (a 6-tuple) when it covers every record and nothing is
 * cancelled, else NULL with no error set: the caller takes the Python path. A
 * new reference; NULL with an error set if an attribute read failed. */
static PyObject *
whole_outcome(RecordFutureBase *self)
{
    int none = attr_is_none(self->results, str_cancelled_indexes);
    if (none <= 0) {
        return NULL; /* an error (set), or something is cancelled (not set) */
    }
    PyObject *whole = PyObject_GetAttr(self->results, str_whole);
    if (whole == NULL) {
        return NULL;
    }
    if (!PyTuple_CheckExact(whole) || PyTuple_GET_SIZE(whole) != 6) {
        Py_DECREF(whole);
        return NULL;
    }
    return whole;
}

static PyObject *
call_slow(PyObject *slow, RecordFutureBase *self)
{
    if (check_configured() < 0) {
        return NULL;
    }
    return PyObject_CallOneArg(slow, (PyObject *)self);
}

static PyObject *
base_get_loop(RecordFutureBase *self, PyObject *Py_UNUSED(ignored))
{
    return PyObject_GetAttr(self->results, str_loop);
}

static PyObject *
base_done(RecordFutureBase *self, PyObject *Py_UNUSED(ignored))
{
    int none = attr_is_none(self->results, str_whole);
    if (none < 0) {
        return NULL;
    }
    if (!none) {
        Py_RETURN_TRUE; /* the whole batch has its outcome */
    }
    return call_slow(slow_done, self);
}

static PyObject *
base_cancelled(RecordFutureBase *self, PyObject *Py_UNUSED(ignored))
{
    int none = attr_is_none(self->results, str_cancelled_indexes);
    if (none < 0) {
        return NULL;
    }
    if (none) {
        Py_RETURN_FALSE; /* nothing in the batch is cancelled */
    }
    return call_slow(slow_cancelled, self);
}

static PyObject *
base_exception(RecordFutureBase *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *whole = whole_outcome(self);
    if (whole == NULL) {
        return PyErr_Occurred() ? NULL : call_slow(slow_exception, self);
    }
    int ok = PyTuple_GET_ITEM(whole, 5) == Py_None;
    Py_DECREF(whole);
    if (ok) {
        Py_RETURN_NONE;
    }
    return call_slow(slow_exception, self); /* a copy of the error: futures.py */
}

/* RecordMetadata(topic, partition, tp, offset, timestamp, timestamp_type,
 * log_start_offset) of a record whose batch's one outcome is whole (no error,
 * acknowledged), as futures.py's result() builds it. */
static PyObject *
build_metadata(RecordFutureBase *self, PyObject *whole)
{
    PyObject *start = PyTuple_GET_ITEM(whole, 0);
    PyObject *base = PyTuple_GET_ITEM(whole, 2);
    PyObject *log_append_time = PyTuple_GET_ITEM(whole, 3);
    PyObject *lso = PyTuple_GET_ITEM(whole, 4);
    long long base_offset = PyLong_AsLongLong(base);
    long long first = PyLong_AsLongLong(start);
    long long append_time = PyLong_AsLongLong(log_append_time);
    if (PyErr_Occurred()) {
        return NULL;
    }
    PyObject *tp = PyObject_GetAttr(self->results, str_tp);
    if (tp == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(tp) || PyTuple_GET_SIZE(tp) < 2) {
        Py_DECREF(tp);
        PyErr_SetString(PyExc_TypeError, "BatchResults.tp is not a TopicPartition");
        return NULL;
    }
    PyObject *timestamp, *ts_type;
    if (append_time >= 0) {
        timestamp = Py_NewRef(log_append_time);
        ts_type = int_log_append_time;
    }
    else {
        PyObject *timestamps = PyObject_GetAttr(self->results, str_timestamps);
        if (timestamps == NULL) {
            Py_DECREF(tp);
            return NULL;
        }
        if (!PyList_Check(timestamps) || self->index < 0
            || self->index >= PyList_GET_SIZE(timestamps)) {
            Py_DECREF(timestamps);
            Py_DECREF(tp);
            PyErr_SetString(PyExc_IndexError, "the record has no timestamp in its batch");
            return NULL;
        }
        timestamp = Py_NewRef(PyList_GET_ITEM(timestamps, self->index));
        Py_DECREF(timestamps);
        ts_type = int_create_time;
    }
    PyObject *offset = PyLong_FromLongLong(
        base_offset >= 0 ? base_offset + self->index - first : -1);
    if (offset == NULL) {
        Py_DECREF(timestamp);
        Py_DECREF(tp);
        return NULL;
    }
    /* As tuple.__new__(RecordMetadata, items) does for a subclass. */
    PyObject *md = metadata_type->tp_alloc(metadata_type, 7);
    if (md == NULL) {
        Py_DECREF(offset);
        Py_DECREF(timestamp);
        Py_DECREF(tp);
        return NULL;
    }
    PyTuple_SET_ITEM(md, 0, Py_NewRef(PyTuple_GET_ITEM(tp, 0)));
    PyTuple_SET_ITEM(md, 1, Py_NewRef(PyTuple_GET_ITEM(tp, 1)));
    PyTuple_SET_ITEM(md, 2, tp);
    PyTuple_SET_ITEM(md, 3, offset);
    PyTuple_SET_ITEM(md, 4, timestamp);
    PyTuple_SET_ITEM(md, 5, Py_NewRef(ts_type));
    PyTuple_SET_ITEM(md, 6, Py_NewRef(lso));
    return md;
}

static PyObject *
base_result(RecordFutureBase *self, PyObject *Py_UNUSED(ignored))
{
    if (check_configured() < 0) {
        return NULL;
    }
    PyObject *whole = whole_outcome(self);
    if (whole == NULL) {
        return PyErr_Occurred() ? NULL : call_slow(slow_result, self);
    }
    PyObject *md = NULL;
    if (PyTuple_GET_ITEM(whole, 5) == Py_None && PyLong_Check(PyTuple_GET_ITEM(whole, 2))) {
        long long base_offset = PyLong_AsLongLong(PyTuple_GET_ITEM(whole, 2));
        if (base_offset == -1 && PyErr_Occurred()) {
            Py_DECREF(whole);
            return NULL;
        }
        if (base_offset != UNACKNOWLEDGED) {
            md = build_metadata(self, whole);
            Py_DECREF(whole);
            return md;
        }
    }
    Py_DECREF(whole);
    return call_slow(slow_result, self); /* an error, or acks=0: futures.py */
}

static PyObject *
base_add_done_callback(RecordFutureBase *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *context = Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs != 1 || nkw > 1
        || (nkw == 1
            && PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, 0), str_context) != 0)) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        PyErr_SetString(PyExc_TypeError,
                        "add_done_callback() takes a callback and an optional context=");
        return NULL;
    }
    if (nkw == 1) {
        context = args[1];
    }
    PyObject *ctx = context == Py_None ? PyContext_CopyCurrent() : Py_NewRef(context);
    if (ctx == NULL) {
        return NULL;
    }
    /* Before anything refers back to this future (fn may hold it): see the top. */
    if (!PyObject_GC_IsTracked((PyObject *)self)) {
        PyObject_GC_Track(self);
    }
    PyObject *index = PyLong_FromSsize_t(self->index);
    if (index == NULL) {
        Py_DECREF(ctx);
        return NULL;
    }
    PyObject *stack[5] = {self->results, (PyObject *)self, index, args[0], ctx};
    PyObject *res = PyObject_VectorcallMethod(
        str_add_callback, stack, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(index);
    Py_DECREF(ctx);
    return res;
}

static PyMethodDef base_methods[] = {
    {"_track", (PyCFunction)base_track, METH_NOARGS,
     "Let the cyclic GC see this future (before anything can refer back to it)."},
    {"get_loop", (PyCFunction)base_get_loop, METH_NOARGS,
     "The event loop the future belongs to."},
    {"done", (PyCFunction)base_done, METH_NOARGS,
     "True once the record has an outcome (or the future was cancelled)."},
    {"cancelled", (PyCFunction)base_cancelled, METH_NOARGS,
     "True if cancel() was called before the record had an outcome."},
    {"exception", (PyCFunction)base_exception, METH_NOARGS,
     "The error the record failed with, or None if it succeeded.\n\n"
     "Raises asyncio.InvalidStateError (no outcome yet) or asyncio.CancelledError."},
    {"result", (PyCFunction)base_result, METH_NOARGS,
     "The record's RecordMetadata (None with acks=0, as in aiokafka).\n\n"
     "Raises asyncio.InvalidStateError (no outcome yet), asyncio.CancelledError,\n"
     "or the KafkaError the record's batch failed with."},
    {"add_done_callback", (PyCFunction)(void (*)(void))base_add_done_callback,
     METH_FASTCALL | METH_KEYWORDS,
     "add_done_callback($self, fn, /, *, context=None)\n--\n\n"
     "Call fn(self) on the loop once the future is done."},
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

/* ------------------------------------ RecordAccumulator.append_to_open */

/* Set by bind_append_to_open() (strong references, replaced if it runs again). */
static PyTypeObject *acc_type;        /* RecordAccumulator */
static PyObject *py_append_to_open;   /* its Python append_to_open */
static PyTypeObject *future_type;     /* RecordFuture */
static PyObject *str_open, *str_add, *str_append, *str_results;

/* append_to_open(tp, timestamp, key, value, headers): the record goes into tp's open
 * batch (self._open[tp]) through the batch's builder (batch.add, which returns the
 * record's timestamp), the timestamp into batch.results.timestamps, and its future is made here, as the Python method
 * does, without its frame. Cases this leaves to the Python method, which does them
 * all: headers, a batch the record does not fit in (batch.add returned None,
 * having changed nothing: the Python method asks it again, then grows or closes the
 * batch), keyword arguments, a subclass. */
static PyObject *
acc_append_to_open(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL || nargs != 5 || Py_TYPE(self) != acc_type || args[4] != Py_None) {
        return ak_call_with_self(py_append_to_open, self, args, nargs, kwnames);
    }
    PyObject *open = PyObject_GetAttr(self, str_open);
    if (open == NULL) {
        return NULL;
    }
    if (!PyDict_CheckExact(open)) {
        Py_DECREF(open);
        return ak_call_with_self(py_append_to_open, self, args, nargs, kwnames);
    }
    PyObject *batch = PyDict_GetItemWithError(open, args[0]); /* borrowed */
    if (batch == NULL) {
        Py_DECREF(open);
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE; /* no open batch: the caller starts one */
    }
    Py_INCREF(batch);
    Py_DECREF(open);
    PyObject *add = PyObject_GetAttr(batch, str_add);
    if (add == NULL) {
        Py_DECREF(batch);
        return NULL;
    }
    PyObject *stack[4] = {args[1], args[2], args[3], Py_None};
    PyObject *ts = PyObject_Vectorcall(add, stack, 4, NULL);
    Py_DECREF(add);
    if (ts == NULL || ts == Py_None) {
        Py_DECREF(batch);
        if (ts == NULL) {
            return NULL;
        }
        Py_DECREF(ts);
        return ak_call_with_self(py_append_to_open, self, args, nargs, kwnames); /* full: grow or close */
    }
    /* From here on the record is in the batch: no fallback, errors only. */
    PyObject *results = PyObject_GetAttr(batch, str_results);
    Py_DECREF(batch);
    PyObject *timestamps = results ? PyObject_GetAttr(results, str_timestamps) : NULL;
    RecordFutureBase *future = NULL;
    if (timestamps != NULL) {
        /* An open batch has results of its own: the record's index is the number
         * of records before it. */
        Py_ssize_t index = PyObject_Length(timestamps);
        if (index >= 0) {
            int appended = PyList_CheckExact(timestamps) ? PyList_Append(timestamps, ts) : -1;
            if (appended < 0 && !PyErr_Occurred()) {
                PyObject *r = PyObject_CallMethodOneArg(timestamps, str_append, ts);
                appended = r == NULL ? -1 : 0;
                Py_XDECREF(r);
            }
            if (appended == 0) {
                future = (RecordFutureBase *)future_type->tp_alloc(future_type, 0);
            }
        }
        if (future != NULL) {
            PyObject_GC_UnTrack(future); /* as new_future() makes it */
            future->results = Py_NewRef(results);
            future->index = index;
        }
    }
    Py_XDECREF(ts);
    Py_XDECREF(results);
    Py_XDECREF(timestamps);
    return (PyObject *)future;
}

static PyMethodDef append_to_open_def = {
    "append_to_open", (PyCFunction)(void (*)(void))acc_append_to_open,
    METH_FASTCALL | METH_KEYWORDS, NULL,
};

PyDoc_STRVAR(bind_append_to_open_doc,
"bind_append_to_open(accumulator_class, python_append_to_open, future_class, /)\n"
"--\n"
"\n"
"The C append_to_open of accumulator_class (a method descriptor, documented as\n"
"python_append_to_open). It reads self._open[tp] and the batch's add and\n"
"results.timestamps, makes future_class futures (untracked, as new_future), and\n"
"calls python_append_to_open(self, ...) for every case it does not handle\n"
"(headers, a full batch, keyword arguments, a subclass).");

static PyObject *
bind_append_to_open(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3 || !PyType_Check(args[0]) || !PyCallable_Check(args[1])
        || !PyType_Check(args[2])
        || !PyType_IsSubtype((PyTypeObject *)args[2], &RecordFutureBaseType)) {
        PyErr_SetString(PyExc_TypeError,
                        "bind_append_to_open() takes a class, a callable and a "
                        "RecordFutureBase subclass");
        return NULL;
    }
    if (append_to_open_def.ml_doc == NULL && ak_take_doc(&append_to_open_def, args[1], "") < 0) {
        return NULL;
    }
    PyObject *method = ak_bind_method((PyTypeObject *)args[0], &append_to_open_def, args[1],
                                      &acc_type, &py_append_to_open);
    if (method != NULL) {
        Py_XSETREF(future_type, (PyTypeObject *)Py_NewRef(args[2]));
    }
    return method;
}

/* ---------------------------------------------- BatchResults.add_callback */

static PyTypeObject *results_type;    /* BatchResults */
static PyObject *py_add_callback;     /* its Python add_callback */
static PyObject *str_segments, *str_callbacks, *str_soon;

/* add_callback(fut, index, fn, ctx) as the Python method does, without its frame, in
 * the two cases asyncio.gather and add_done_callback meet, nothing cancelled: the
 * batch has no outcome (the registration is appended to self._callbacks, a new list
 * when None), or one outcome for all its records and a loop callback already due for
 * callbacks of done futures (appended to self._soon, as call_soon does). Everything
 * else is the Python method's. */
static PyObject *
results_add_callback(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    if (kwnames != NULL || nargs != 4 || Py_TYPE(self) != results_type) {
        return ak_call_with_self(py_add_callback, self, args, nargs, kwnames);
    }
    PyObject *segments = PyObject_GetAttr(self, str_segments);
    if (segments == NULL) {
        return NULL;
    }
    int empty = PyList_CheckExact(segments) && PyList_GET_SIZE(segments) == 0;
    Py_DECREF(segments);
    int none = attr_is_none(self, str_cancelled_indexes);
    if (none < 0) {
        return NULL;
    }
    if (!empty && none && args[2] != Py_None) {
        /* An outcome, nothing cancelled: done if the one outcome covers every record
         * (whole). A callback on a done future joins those waiting for this batch's
         * loop callback (_soon, see call_soon) when there are some; the first one
         * schedules it, in Python. */
        int whole_none = attr_is_none(self, str_whole);
        if (whole_none < 0) {
            return NULL;
        }
        PyObject *soon = whole_none ? NULL : PyObject_GetAttr(self, str_soon);
        if (soon == NULL && !whole_none) {
            return NULL;
        }
        if (soon != NULL && PyList_CheckExact(soon) && PyList_GET_SIZE(soon) > 0) {
            int failed = PyList_Append(soon, args[0]) < 0 || PyList_Append(soon, args[1]) < 0
                || PyList_Append(soon, args[2]) < 0 || PyList_Append(soon, args[3]) < 0;
            Py_DECREF(soon);
            if (failed) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
        Py_XDECREF(soon);
        return ak_call_with_self(py_add_callback, self, args, nargs, kwnames);
    }
    none = none && empty;
    PyObject *callbacks = none ? PyObject_GetAttr(self, str_callbacks) : NULL;
    if (callbacks == NULL) {
        if (none) {
            return NULL; /* the read failed */
        }
        return ak_call_with_self(py_add_callback, self, args, nargs, kwnames);
    }
    int failed;
    if (callbacks == Py_None) {
        PyObject *list = PyList_New(4);
        if (list == NULL) {
            Py_DECREF(callbacks);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < 4; i++) {
            PyList_SET_ITEM(list, i, Py_NewRef(args[i]));
        }
        failed = PyObject_SetAttr(self, str_callbacks, list) < 0;
        Py_DECREF(list);
    }
    else if (PyList_CheckExact(callbacks)) {
        failed = PyList_Append(callbacks, args[0]) < 0 || PyList_Append(callbacks, args[1]) < 0
            || PyList_Append(callbacks, args[2]) < 0 || PyList_Append(callbacks, args[3]) < 0;
    }
    else {
        Py_DECREF(callbacks);
        return ak_call_with_self(py_add_callback, self, args, nargs, kwnames);
    }
    Py_DECREF(callbacks);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef add_callback_def = {
    "add_callback", (PyCFunction)(void (*)(void))results_add_callback,
    METH_FASTCALL | METH_KEYWORDS, NULL,
};

PyDoc_STRVAR(bind_add_callback_doc,
"bind_add_callback(results_class, python_add_callback, /)\n"
"--\n"
"\n"
"The C add_callback of results_class (a method descriptor, documented as\n"
"python_add_callback): while self.segments is an empty list and\n"
"self.cancelled_indexes is None, it appends (fut, index, fn, ctx) to\n"
"self._callbacks (a new list when None); it calls python_add_callback(self, ...)\n"
"for every other case.");

static PyObject *
bind_add_callback(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyType_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "bind_add_callback() takes a class and a callable");
        return NULL;
    }
    if (add_callback_def.ml_doc == NULL && ak_take_doc(&add_callback_def, args[1], "") < 0) {
        return NULL;
    }
    return ak_bind_method((PyTypeObject *)args[0], &add_callback_def, args[1], &results_type,
                          &py_add_callback);
}

PyDoc_STRVAR(configure_doc,
"configure(metadata_class, done, cancelled, exception, result, /)\n"
"--\n"
"\n"
"RecordMetadata (a tuple subclass) and the Python methods (functions of the\n"
"future) that the C ones call for every case but a batch's one outcome.");

static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5 || !PyType_Check(args[0])
        || !PyType_IsSubtype((PyTypeObject *)args[0], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "configure() takes a tuple subclass and four callables");
        return NULL;
    }
    for (Py_ssize_t i = 1; i < 5; i++) {
        if (!PyCallable_Check(args[i])) {
            PyErr_SetString(PyExc_TypeError, "configure(): the methods must be callable");
            return NULL;
        }
    }
    Py_XSETREF(slow_done, Py_NewRef(args[1]));
    Py_XSETREF(slow_cancelled, Py_NewRef(args[2]));
    Py_XSETREF(slow_exception, Py_NewRef(args[3]));
    Py_XSETREF(slow_result, Py_NewRef(args[4]));
    Py_XSETREF(metadata_type, (PyTypeObject *)Py_NewRef(args[0]));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"new_future", (PyCFunction)(void (*)(void))new_future, METH_FASTCALL, new_future_doc},
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL, configure_doc},
    {"bind_add_callback", (PyCFunction)(void (*)(void))bind_add_callback, METH_FASTCALL,
     bind_add_callback_doc},
    {"bind_append_to_open", (PyCFunction)(void (*)(void))bind_append_to_open, METH_FASTCALL,
     bind_append_to_open_doc},
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
    if (str_whole == NULL) {
        str_whole = PyUnicode_InternFromString("whole");
        str_cancelled_indexes = PyUnicode_InternFromString("cancelled_indexes");
        str_loop = PyUnicode_InternFromString("loop");
        str_tp = PyUnicode_InternFromString("tp");
        str_timestamps = PyUnicode_InternFromString("timestamps");
        str_add_callback = PyUnicode_InternFromString("add_callback");
        str_context = PyUnicode_InternFromString("context");
        str_open = PyUnicode_InternFromString("_open");
        str_segments = PyUnicode_InternFromString("segments");
        str_callbacks = PyUnicode_InternFromString("_callbacks");
        str_soon = PyUnicode_InternFromString("_soon");
        str_add = PyUnicode_InternFromString("add");
        str_append = PyUnicode_InternFromString("append");
        str_results = PyUnicode_InternFromString("results");
        int_create_time = PyLong_FromLong(0);
        int_log_append_time = PyLong_FromLong(1);
        if (!str_whole || !str_cancelled_indexes || !str_loop || !str_tp || !str_timestamps
            || !str_add_callback || !str_context || !str_open || !str_segments || !str_callbacks || !str_soon || !str_add || !str_append
            || !str_results || !int_create_time
            || !int_log_append_time) {
            return NULL;
        }
    }
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
