/*
 * The C half of `async for record in consumer` (all optional: consumer.py and
 * fetch_records.py fall back to Python that behaves the same, only slower).
 *
 * Why: `async for` runs __anext__ once per record, and the record is nearly always
 * buffered already. In Python that is a method call, a call of the buffer's
 * take_fast() and an awaitable per record: more CPU than decoding the record. Three
 * pieces take that path in C and hand every other case to the Python code:
 *
 * - ready(value): an awaitable that is already done. Awaiting it gives value
 *   without suspending (am_send, or StopIteration(value) for code that iterates it
 *   by hand). Like a coroutine it can be awaited once: the second time raises
 *   RuntimeError.
 * - Anext(consumer, buffer, subscriptions): what AIOKafkaConsumer.__aiter__ returns
 *   when nothing overrides getone()/__anext__. Its __anext__ is the consumer's,
 *   written in C: it reads the consumer's own fields as that method does
 *   (`_membership` for the poll note) and calls `_next_via_getone()` whenever the
 *   buffer has no record ready.
 * - RecordCursor: the base of PartitionRecords. It holds the decoded batch and the
 *   index of the next record, and its take_fast() hands out the next record when
 *   the partition state still follows this cursor (nothing moved, paused or
 *   unassigned it); every other case is PartitionRecords._take_fast_slow().
 *
 * No asyncio and no consumer logic beyond those checks.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "../_cext.h"

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
ready_steal(PyObject *value)
{
    Ready *self = PyObject_New(Ready, &ReadyType);
    if (self == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    self->value = value;
    return (PyObject *)self;
}

/* Attribute and method names, interned once at import. */
static PyObject *str_cursor;
static PyObject *str_take_fast_slow;
static PyObject *str_returnable;
static PyObject *str_membership;
static PyObject *str_poll_called;
static PyObject *str_next_record_fast;
static PyObject *str_next_via_getone;

/* -- GC slots of RecordCursor and Anext --------------------------------------------- */

/* Both types hold their object references in `refs` (unused slots stay NULL), so one
 * traverse, clear and dealloc serve both. */
#define N_REFS 4

typedef struct {
    PyObject_HEAD
    PyObject *refs[N_REFS];
} Refs;

static int
refs_traverse(Refs *self, visitproc visit, void *arg)
{
    for (int i = 0; i < N_REFS; i++) {
        Py_VISIT(self->refs[i]);
    }
    return 0;
}

static int
refs_clear(Refs *self)
{
    for (int i = 0; i < N_REFS; i++) {
        Py_CLEAR(self->refs[i]);
    }
    return 0;
}

static void
refs_dealloc(Refs *self)
{
    PyObject_GC_UnTrack(self);
    refs_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The type slots of a Refs-shaped type: its GC slots and flags (plus `extra_flags`). */
#define REFS_TYPE(Type, extra_flags)                                                    \
    .tp_basicsize = sizeof(Type), .tp_dealloc = (destructor)refs_dealloc,              \
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | (extra_flags),                \
    .tp_traverse = (traverseproc)refs_traverse, .tp_clear = (inquiry)refs_clear

/* -- RecordCursor ---------------------------------------------------------------- */

/* Cursor.refs: _recs (the decoded batch, a list), state, _recs_idx (the next record
 * to hand out) and _within_end (index of the batch's last record, or -1). The two
 * indexes are int objects, not C integers: PartitionRecords reads and writes them per
 * batch, and CPython specialises an attribute read or write for an object member
 * only (a C integer member costs a type look-up and a conversion each time). */
enum { RECS, STATE, IDX, WITHIN_END };

typedef Refs Cursor;

static PyObject *
cursor_take_fast(Cursor *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *recs = self->refs[RECS];
    PyObject *state = self->refs[STATE];
    PyObject *idx = self->refs[IDX];
    PyObject *within_end = self->refs[WITHIN_END];
    Py_ssize_t i = -1, end = -1;
    if (idx != NULL && within_end != NULL && PyLong_CheckExact(idx)
        && PyLong_CheckExact(within_end)) {
        i = PyLong_AsSsize_t(idx);
        end = PyLong_AsSsize_t(within_end);
        if (PyErr_Occurred()) { /* out of range: the Python method decides */
            PyErr_Clear();
            i = -1;
        }
    }
    if (i >= 0 && i <= end && state != NULL && recs != NULL && PyList_CheckExact(recs)
        && i < PyList_GET_SIZE(recs)) {
        PyObject *followed = PyObject_GetAttr(state, str_cursor);
        if (followed == NULL) {
            return NULL;
        }
        Py_DECREF(followed); /* only its identity is compared */
        if (followed == (PyObject *)self) {
            PyObject *next = PyLong_FromSsize_t(i + 1);
            if (next == NULL) {
                return NULL;
            }
            Py_SETREF(self->refs[IDX], next);
            return Py_NewRef(PyList_GET_ITEM(recs, i));
        }
    }
    return PyObject_CallMethodNoArgs((PyObject *)self, str_take_fast_slow);
}

static PyMethodDef cursor_methods[] = {
    {"take_fast", (PyCFunction)cursor_take_fast, METH_NOARGS,
     "The next record when the partition state still follows this cursor, else\n"
     "what self._take_fast_slow() returns (see PartitionRecords.take_fast)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef cursor_members[] = {
    {"_recs", T_OBJECT_EX, offsetof(Cursor, refs) + RECS * sizeof(PyObject *), 0, NULL},
    {"_recs_idx", T_OBJECT_EX, offsetof(Cursor, refs) + IDX * sizeof(PyObject *), 0, NULL},
    {"_within_end", T_OBJECT_EX, offsetof(Cursor, refs) + WITHIN_END * sizeof(PyObject *), 0,
     NULL},
    {"state", T_OBJECT_EX, offsetof(Cursor, refs) + STATE * sizeof(PyObject *), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject CursorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aiokafka.consumer._cready.RecordCursor",
    .tp_doc = "Base of PartitionRecords: the decoded batch and the next record's index.",
    REFS_TYPE(Cursor, Py_TPFLAGS_BASETYPE),
    .tp_methods = cursor_methods,
    .tp_members = cursor_members,
    .tp_new = PyType_GenericNew,
};

/* -- Anext ----------------------------------------------------------------------- */

enum { CONSUMER, BUFFER, SUBS }; /* Anext.refs: the consumer, the fetcher's FetchBuffer,
                                  * the consumer's SubscriptionState */

typedef Refs Anext;

static PyObject *
anext_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *consumer, *buffer, *subs;
    static char *kwlist[] = {"consumer", "buffer", "subscriptions", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:Anext", kwlist, &consumer, &buffer,
                                     &subs)) {
        return NULL;
    }
    Anext *self = PyObject_GC_New(Anext, type);
    if (self == NULL) {
        return NULL;
    }
    for (int i = 0; i < N_REFS; i++) {
        self->refs[i] = NULL; /* GC_New does not zero: the slots Anext leaves unused */
    }
    self->refs[CONSUMER] = Py_NewRef(consumer);
    self->refs[BUFFER] = Py_NewRef(buffer);
    self->refs[SUBS] = Py_NewRef(subs);
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* AIOKafkaConsumer.__anext__'s fast path (consumer.py), the same checks in C. */
static PyObject *
anext_anext(Anext *self)
{
    PyObject *returnable = PyObject_GetAttr(self->refs[SUBS], str_returnable);
    if (returnable == NULL) {
        return NULL;
    }
    Py_DECREF(returnable); /* only compared with None */
    if (returnable == Py_None) {
        PyObject *membership = PyObject_GetAttr(self->refs[CONSUMER], str_membership);
        if (membership == NULL) {
            return NULL;
        }
        if (membership != Py_None) {
            PyObject *noted = PyObject_CallMethodNoArgs(membership, str_poll_called);
            Py_DECREF(membership);
            if (noted == NULL) {
                return NULL;
            }
            Py_DECREF(noted);
        }
        else {
            Py_DECREF(membership);
        }
        PyObject *take = PyObject_GetAttr(self->refs[BUFFER], str_next_record_fast);
        if (take == NULL) {
            return NULL;
        }
        /* A deserializer's error is raised here, as the Python __anext__ raises it. */
        PyObject *record = PyObject_CallNoArgs(take);
        Py_DECREF(take);
        if (record == NULL) {
            return NULL;
        }
        if (record != Py_None) {
            return ready_steal(record);
        }
        Py_DECREF(record);
    }
    return PyObject_CallMethodNoArgs(self->refs[CONSUMER], str_next_via_getone);
}

static PyObject *
anext_anext_method(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return anext_anext((Anext *)self);
}

static PyObject *
anext_aiter(PyObject *self)
{
    return Py_NewRef(self);
}

static PyAsyncMethods anext_as_async = {
    .am_aiter = anext_aiter,
    .am_anext = (unaryfunc)anext_anext,
};

static PyMethodDef anext_methods[] = {
    {"__anext__", anext_anext_method, METH_NOARGS, "The next record (an awaitable)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject AnextType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aiokafka.consumer._cready.Anext",
    .tp_doc = "Anext(consumer, buffer, subscriptions): AIOKafkaConsumer.__aiter__'s iterator.",
    REFS_TYPE(Anext, 0),
    .tp_as_async = &anext_as_async,
    .tp_methods = anext_methods,
    .tp_new = anext_new,
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

static int
cready_exec(PyObject *module)
{
    if (PyType_Ready(&ReadyType) < 0 || PyType_Ready(&CursorType) < 0
        || PyType_Ready(&AnextType) < 0) {
        return -1;
    }
    static const AkName names[] = {
        {&str_cursor, "cursor"},
        {&str_take_fast_slow, "_take_fast_slow"},
        {&str_returnable, "returnable"},
        {&str_membership, "_membership"},
        {&str_poll_called, "poll_called"},
        {&str_next_record_fast, "next_record_fast"},
        {&str_next_via_getone, "_next_via_getone"},
    };
    if (ak_intern_all(names, sizeof(names) / sizeof(names[0])) < 0) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "RecordCursor", (PyObject *)&CursorType) < 0
        || PyModule_AddObjectRef(module, "Anext", (PyObject *)&AnextType) < 0) {
        return -1;
    }
    return 0;
}

AK_MODULE(_cready, "aiokafka.consumer._cready",
          "The C half of async for over AIOKafkaConsumer (optional; see _cready.c).",
          cready_exec,
          {"ready", ready, METH_O,
           "ready(value): an awaitable, done already, whose await gives value (once)."})
