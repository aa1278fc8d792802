/*
 * Optional accelerator of DefaultRecordBatchBuilder.add() (default_builder.py).
 *
 * One function, append_record(), encodes one magic v2 record and appends it to
 * the builder's bytearray. It is the per-record work of producer.send() that
 * pure Python does with table look-ups and a bytes join; here it is one size
 * computation and one write. Everything else (timestamps, the record count,
 * argument checks, the batch header) stays in Python. The pure-Python add() is
 * the reference: the bytes written and the exceptions raised are the same, and
 * tests/unit/test_record_cbuilder.py compares the two.
 *
 * No asyncio, no state: a function from its arguments to bytes appended.
 *
 * The second entry point, bind_builder(), returns the C append_next() of
 * DefaultRecordBatchBuilder (create_batch()'s per-record path): the record at
 * the next offset, the builder's counters and the DefaultRecordMetadata in one
 * call, where Python needs append_next() -> add() -> append_record() and a
 * tuple. It handles the common record (key and value bytes or None, no
 * headers, timestamp None or an int) and hands anything else to the Python
 * append_next(), so errors stay the Python path's.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#ifndef Py_T_OBJECT_EX  /* Python < 3.12 */
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

#include "../_cext.h"

/* ------------------------------------------------------------------ varints */

/* Zigzag maps small negative and positive numbers to small unsigned ones, so
 * both take few bytes (Kafka's varint, as Protobuf's sint64). The casts keep
 * the shifts defined for negative values. */
static inline uint64_t
zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline Py_ssize_t
varint_size(int64_t v)
{
    uint64_t z = zigzag(v);
    Py_ssize_t size = 1;
    while (z > 0x7f) {
        z >>= 7;
        size++;
    }
    return size;
}

static inline char *
write_varint(char *out, int64_t v)
{
    uint64_t z = zigzag(v);
    while (z > 0x7f) {
        *out++ = (char)((z & 0x7f) | 0x80);
        z >>= 7;
    }
    *out++ = (char)z;
    return out;
}

/* A v2 record up to its headers count: length, attributes (unused in v2 records),
 * timestamp and offset deltas, then key and value, each length-prefixed (-1: null).
 * `p` has room for all of it; returns where the headers go. */
static char *
write_record_head(char *p, Py_ssize_t body, int64_t ts_delta, int64_t offset_delta,
                  PyObject *key, Py_ssize_t key_len, PyObject *value, Py_ssize_t value_len)
{
    p = write_varint(p, body);
    *p++ = 0;
    p = write_varint(p, ts_delta);
    p = write_varint(p, offset_delta);
    p = write_varint(p, key_len);
    if (key_len > 0) {
        memcpy(p, PyBytes_AS_STRING(key), (size_t)key_len);
        p += key_len;
    }
    p = write_varint(p, value_len);
    if (value_len > 0) {
        memcpy(p, PyBytes_AS_STRING(value), (size_t)value_len);
        p += value_len;
    }
    return p;
}

/* ------------------------------------------------------------ field checks */

/* type(obj).__name__, as the Python messages print it (tp_name would add the
 * module of built-in types, e.g. "collections.OrderedDict"). */
/* Resize a batch buffer to `after` bytes for an append.
 *
 * Why not PyByteArray_Resize alone: for a moderate upsize CPython over-allocates a
 * bytearray by 1/8 only, so a batch filled by ~100-byte appends is reallocated some
 * 70 times and its bytes copied about 8 times over (callgrind: about a tenth of the
 * producer's instructions per record). When the allocation is outgrown, it is
 * doubled instead: a resize past 1/8 more is exact, and the resize back down to
 * `after` keeps the allocation (a bytearray shrinks only below half of it). */
static int
resize_for_append(PyObject *buffer, Py_ssize_t after)
{
    if (PyByteArray_CheckExact(buffer)) {
        Py_ssize_t alloc = ((PyByteArrayObject *)buffer)->ob_alloc;
        if (after + 1 > alloc && alloc > 0 && alloc <= PY_SSIZE_T_MAX / 2
            && 2 * alloc > after + 1) {
            if (PyByteArray_Resize(buffer, 2 * alloc - 1) < 0) {
                return -1;
            }
        }
    }
    return PyByteArray_Resize(buffer, after);
}

static PyObject *
type_name(PyObject *obj)
{
    return PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__name__");
}

static void
raise_not_bytes(PyObject *obj, const char *field)
{
    PyObject *name = type_name(obj);
    if (name != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "record %s must be bytes, bytearray, memoryview or None, not %U",
                     field, name);
        Py_DECREF(name);
    }
}

/* A record key or value as a bytes object (new reference), or NULL with an
 * exception. The Python path keeps exact bytes as they are and copies the
 * other accepted types with bytes(obj) (_as_bytes); bytes subclasses count as
 * "other" there (its test is `type(key) is not bytes`), so they are copied too. */
static PyObject *
field_as_bytes(PyObject *obj, const char *field)
{
    if (PyBytes_CheckExact(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    if (PyBytes_Check(obj) || PyByteArray_Check(obj) || PyMemoryView_Check(obj)) {
        return PyObject_Bytes(obj);
    }
    raise_not_bytes(obj, field);
    return NULL;
}

/* ----------------------------------------------------------------- headers */

/* Headers are encoded into this scratch buffer first: they come from any
 * iterable (possibly a one-shot generator), so their size is only known after
 * reading them, and the record must be checked against the batch size before
 * anything is appended. */
typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} scratch_t;

static char *
scratch_reserve(scratch_t *s, Py_ssize_t extra)
{
    if (s->len + extra > s->cap) {
        Py_ssize_t cap = s->cap ? s->cap : 128;
        while (cap < s->len + extra) {
            if (cap > PY_SSIZE_T_MAX / 2) {
                PyErr_NoMemory();
                return NULL;
            }
            cap *= 2;
        }
        char *data = PyMem_Realloc(s->data, (size_t)cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        s->data = data;
        s->cap = cap;
    }
    return s->data + s->len;
}

/* Append a varint-length-prefixed byte string (length -1 and no bytes for None). */
static int
scratch_put_field(scratch_t *s, const char *data, Py_ssize_t len)
{
    char *p = scratch_reserve(s, 10 + (len > 0 ? len : 0));
    if (p == NULL) {
        return -1;
    }
    char *end = write_varint(p, len);
    if (len > 0) {
        memcpy(end, data, (size_t)len);
        end += len;
    }
    s->len = end - s->data;
    return 0;
}

/* `key, value = item` as Python unpacks it: the two items as new references,
 * or -1 with the Python path's TypeError when the item is not a pair (Python
 * turns the TypeError or ValueError of the unpacking into it). */
static int
unpack_pair(PyObject *item, PyObject **key, PyObject **value)
{
    if (PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) == 2) {
        /* The common case, without an iterator. */
        *key = Py_NewRef(PyTuple_GET_ITEM(item, 0));
        *value = Py_NewRef(PyTuple_GET_ITEM(item, 1));
        return 0;
    }
    *key = *value = NULL;
    PyObject *extra = NULL;
    PyObject *it = PyObject_GetIter(item);
    if (it != NULL) {
        *key = PyIter_Next(it);
        if (*key != NULL) {
            *value = PyIter_Next(it);
            if (*value != NULL) {
                extra = PyIter_Next(it);
            }
        }
        Py_DECREF(it);
    }
    if (*value != NULL && extra == NULL && !PyErr_Occurred()) {
        return 0;
    }
    Py_XDECREF(extra);
    Py_CLEAR(*key);
    Py_CLEAR(*value);
    /* Too few or too many items (no exception yet), or a TypeError/ValueError
     * from the iteration: the pair error. Anything else propagates as is. */
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)
            && !PyErr_ExceptionMatches(PyExc_ValueError)) {
            return -1;
        }
        PyErr_Clear();
    }
    PyErr_Format(PyExc_TypeError,
                 "record headers must be (str, bytes | None) pairs, got %R", item);
    return -1;
}

/* One header: key as UTF-8, value as bytes or None. */
static int
encode_header(scratch_t *s, PyObject *item)
{
    PyObject *key, *value;
    if (unpack_pair(item, &key, &value) < 0) {
        return -1;
    }
    int rc = -1;
    PyObject *value_bytes = NULL;
    if (!PyUnicode_Check(key)) {
        PyObject *name = type_name(key);
        if (name != NULL) {
            PyErr_Format(PyExc_TypeError, "record header key must be str, not %U", name);
            Py_DECREF(name);
        }
        goto done;
    }
    Py_ssize_t key_len;
    const char *key_utf8 = PyUnicode_AsUTF8AndSize(key, &key_len);
    if (key_utf8 == NULL || scratch_put_field(s, key_utf8, key_len) < 0) {
        goto done;
    }
    if (value == Py_None) {
        rc = scratch_put_field(s, NULL, -1);
        goto done;
    }
    /* Unlike key and value, a header value that is any bytes instance (a
     * subclass too) is used as is: the Python test is isinstance(value, bytes). */
    if (PyBytes_Check(value)) {
        value_bytes = Py_NewRef(value);
    }
    else if (PyByteArray_Check(value) || PyMemoryView_Check(value)) {
        value_bytes = PyObject_Bytes(value);
        if (value_bytes == NULL) {
            goto done;
        }
    }
    else {
        raise_not_bytes(value, "header value");
        goto done;
    }
    rc = scratch_put_field(s, PyBytes_AS_STRING(value_bytes), PyBytes_GET_SIZE(value_bytes));
done:
    Py_XDECREF(value_bytes);
    Py_DECREF(key);
    Py_DECREF(value);
    return rc;
}

/* headersCount and the headers, into `s` (which holds nothing before). */
static int
encode_headers(scratch_t *s, PyObject *headers)
{
    /* Room for the count, written when known: a varint of at most 10 bytes. */
    if (scratch_reserve(s, 10) == NULL) {
        return -1;
    }
    s->len = 10;
    PyObject *it = PyObject_GetIter(headers);
    if (it == NULL) {
        return -1;
    }
    int64_t count = 0;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        int rc = encode_header(s, item);
        Py_DECREF(item);
        if (rc < 0) {
            Py_DECREF(it);
            return -1;
        }
        count++;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        return -1;
    }
    /* Move the count next to the headers: the caller copies from s->data. */
    Py_ssize_t count_len = varint_size(count);
    char *start = s->data + 10 - count_len;
    write_varint(start, count);
    memmove(s->data, start, (size_t)(s->len - (10 - count_len)));
    s->len -= 10 - count_len;
    return 0;
}

/* --------------------------------------------------------------- the record */

/* The timestamp delta as int64, or the ValueError encode_varint() raises for a
 * value outside the signed 64-bit range (deltas of two int64s can be). */
static int
as_varint_value(PyObject *obj, int64_t *out)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow) {
        PyErr_Format(PyExc_ValueError, "value %S does not fit a signed 64-bit varint", obj);
        return -1;
    }
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

PyDoc_STRVAR(append_record_doc,
"append_record(buffer, limit, offset, timestamp_delta, key, value, headers, /)\n"
"--\n"
"\n"
"Append one v2 record (length, attributes, timestamp delta, offset delta, key,\n"
"value, headers) to the bytearray buffer.\n"
"\n"
"Returns False, appending nothing, when limit >= 0 and the buffer would grow past\n"
"limit bytes; True otherwise. On any exception nothing is appended.");

/* A buffer limit (batch_size) as long long: -1 is no limit; any int >= 0 counts, one
 * past long long being no limit in practice (no buffer gets that big). */
static int
as_limit(PyObject *obj, long long *out)
{
    int overflow;
    long long limit = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (limit == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = overflow ? (overflow > 0 ? LLONG_MAX : -1) : limit;
    return 0;
}

AK_POSITIONAL(append_record, 7)
{
    PyObject *buffer = args[0];
    PyObject *key_obj = args[4], *value_obj = args[5], *headers = args[6];
    if (!PyByteArray_CheckExact(buffer)) {
        PyErr_SetString(PyExc_TypeError, "append_record() buffer must be a bytearray");
        return NULL;
    }
    long long limit;
    if (as_limit(args[1], &limit) < 0) {
        return NULL;
    }
    int64_t offset, ts_delta;
    PyObject *key = NULL, *value = NULL, *result = NULL;
    scratch_t hdrs = {NULL, 0, 0};

    /* Checked in the Python path's order (key, value, timestamp delta, offset,
     * headers), so a record with two bad fields fails with the same error. */
    if (key_obj != Py_None && (key = field_as_bytes(key_obj, "key")) == NULL) {
        goto done;
    }
    if (value_obj != Py_None && (value = field_as_bytes(value_obj, "value")) == NULL) {
        goto done;
    }
    /* add()'s callers checked 0 <= offset < 2**31; the delta of two int64
     * timestamps may still be out of range. */
    if (as_varint_value(args[3], &ts_delta) < 0 || as_varint_value(args[2], &offset) < 0) {
        goto done;
    }
    int has_headers = headers == Py_None ? 0 : PyObject_IsTrue(headers);
    if (has_headers < 0 || (has_headers && encode_headers(&hdrs, headers) < 0)) {
        goto done;
    }

    /* None is length -1 and no bytes. */
    Py_ssize_t key_len = key ? PyBytes_GET_SIZE(key) : -1;
    Py_ssize_t value_len = value ? PyBytes_GET_SIZE(value) : -1;
    Py_ssize_t body = 1  /* attributes */
        + varint_size(ts_delta) + varint_size(offset)
        + varint_size(key_len) + (key_len > 0 ? key_len : 0)
        + varint_size(value_len) + (value_len > 0 ? value_len : 0)
        + (has_headers ? hdrs.len : 1);
    Py_ssize_t before = PyByteArray_GET_SIZE(buffer);
    Py_ssize_t after = before + varint_size(body) + body;
    if (limit >= 0 && (long long)after > limit) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    /* The one resize (the allocation doubles when outgrown). */
    if (resize_for_append(buffer, after) < 0) {
        goto done;
    }
    char *p = write_record_head(PyByteArray_AS_STRING(buffer) + before, body, ts_delta,
                                offset, key, key_len, value, value_len);
    if (has_headers) {
        memcpy(p, hdrs.data, (size_t)hdrs.len);
    }
    else {
        *p = 0;  /* headersCount 0 */
    }
    result = Py_NewRef(Py_True);
done:
    PyMem_Free(hdrs.data);
    Py_XDECREF(key);
    Py_XDECREF(value);
    return result;
}

/* -------------------------------------------------------- append_values */

PyDoc_STRVAR(append_values_doc,
"append_values(buffer, limit, offset, ts_delta, values, start, /)\n"
"--\n"
"\n"
"Append values[start:] (a list) to the bytearray buffer as v2 records with no key\n"
"and no headers, at offsets offset, offset + 1, ..., all with timestamp delta\n"
"ts_delta, while the buffer stays within limit bytes (when offset is 0 the first\n"
"record is appended whatever its size, as add() does). Stops at the first value\n"
"that is neither bytes nor None. Returns the index of the first value not\n"
"appended. On an exception nothing is appended.");

/* The body size of a key-less, header-less record: `fixed` (attributes, timestamp
 * delta, null key, headers count) plus its offset delta and value. */
static inline Py_ssize_t
value_body(Py_ssize_t fixed, int64_t offset_delta, Py_ssize_t value_len)
{
    return fixed + varint_size(offset_delta) + varint_size(value_len)
        + (value_len > 0 ? value_len : 0);
}

AK_POSITIONAL(append_values, 6)
{
    PyObject *buffer = args[0], *values = args[4];
    if (!PyByteArray_CheckExact(buffer) || !PyList_CheckExact(values)) {
        PyErr_SetString(PyExc_TypeError,
                        "append_values() takes a bytearray buffer and a list of values");
        return NULL;
    }
    long long limit;
    if (as_limit(args[1], &limit) < 0) {
        return NULL;
    }
    int64_t offset, ts_delta;
    if (as_varint_value(args[2], &offset) < 0 || as_varint_value(args[3], &ts_delta) < 0) {
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[5]);
    if (start == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    if (start < 0 || start > n) {
        PyErr_SetString(PyExc_ValueError, "append_values() start out of range");
        return NULL;
    }
    /* First pass: how many fit, and the bytes they take. */
    Py_ssize_t before = PyByteArray_GET_SIZE(buffer);
    Py_ssize_t after = before, end = start;
    Py_ssize_t fixed = 1 + varint_size(ts_delta) + varint_size(-1) + 1;
    for (; end < n; end++) {
        PyObject *value = PyList_GET_ITEM(values, end);
        if (value != Py_None && !PyBytes_CheckExact(value)) {
            break;
        }
        Py_ssize_t value_len = value != Py_None ? PyBytes_GET_SIZE(value) : -1;
        Py_ssize_t body = value_body(fixed, offset + (end - start), value_len);
        Py_ssize_t next = after + varint_size(body) + body;
        if (limit >= 0 && (long long)next > limit && (offset > 0 || end > start)) {
            break;
        }
        after = next;
    }
    if (end > start) {
        /* The one resize; the list cannot change meanwhile (no Python code runs). */
        if (resize_for_append(buffer, after) < 0) {
            return NULL;
        }
        char *p = PyByteArray_AS_STRING(buffer) + before;
        for (Py_ssize_t i = start; i < end; i++) {
            PyObject *value = PyList_GET_ITEM(values, i);
            Py_ssize_t value_len = value != Py_None ? PyBytes_GET_SIZE(value) : -1;
            int64_t offset_delta = offset + (i - start);
            Py_ssize_t body = value_body(fixed, offset_delta, value_len);
            p = write_record_head(p, body, ts_delta, offset_delta, Py_None, -1, value,
                                  value_len);
            *p++ = 0;  /* headersCount */
        }
    }
    return PyLong_FromSsize_t(end);
}

/* ------------------------------------------------------- append_next */

/* The builder's __slots__ read and written by append_next(), found by their
 * member offsets (bind_builder() checks each is an object slot of the class):
 * a slot read is a pointer load, where a getattr would cost as much as the
 * encoding. */
enum {
    SLOT_BUFFER,
    SLOT_BATCH_SIZE,
    SLOT_BUILT,
    SLOT_COUNT,
    SLOT_FIRST_TS,
    SLOT_MAX_TS,
    SLOT_LAST_OFFSET,
    N_SLOTS
};
static const char *const slot_names[N_SLOTS] = {
    "_buffer", "_batch_size", "_built", "_count",
    "_first_timestamp", "_max_timestamp", "_last_offset",
};
static Py_ssize_t slot_offsets[N_SLOTS];
#define SLOT(self, i) (*(PyObject **)((char *)(self) + slot_offsets[i]))

/* Set by bind_builder() (strong references, replaced if it runs again). */
static PyTypeObject *builder_type;   /* DefaultRecordBatchBuilder */
static PyTypeObject *metadata_type;  /* DefaultRecordMetadata, a tuple subclass */
static PyObject *py_append_next;     /* the Python DefaultRecordBatchBuilder.append_next */
static PyObject *py_add;             /* the Python DefaultRecordBatchBuilder.add */

/* The member offsets of the object slots `names` of `cls`, or -1 with an exception
 * (a TypeError when one is not such a slot). The class's own dict, not its MRO:
 * the slots must be cls's. Read with PyType_GetDict on 3.12+, where tp_dict is NULL
 * for static built-in types (int, tuple, ...): reading it segfaulted there. */
static int
slot_offsets_of(PyTypeObject *cls, const char *const *names, int n, Py_ssize_t *offsets)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *dict = PyType_GetDict(cls);
#else
    PyObject *dict = Py_XNewRef(cls->tp_dict);
#endif
    if (dict == NULL && PyErr_Occurred()) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *key = PyUnicode_FromString(names[i]);
        if (key == NULL) {
            Py_XDECREF(dict);
            return -1;
        }
        PyObject *descr = dict != NULL ? PyDict_GetItemWithError(dict, key) : NULL;
        Py_DECREF(key);
        if (descr == NULL && PyErr_Occurred()) {
            Py_XDECREF(dict);
            return -1;
        }
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)
            || ((PyMemberDescrObject *)descr)->d_member->type != Py_T_OBJECT_EX) {
            PyErr_Format(PyExc_TypeError, "%s is not a slot of %s", names[i], cls->tp_name);
            Py_XDECREF(dict);
            return -1;
        }
        offsets[i] = ((PyMemberDescrObject *)descr)->d_member->offset;
    }
    Py_XDECREF(dict);
    return 0;
}

/* An exact int slot as int64, or 0 (no exception) when it is not one. */
static int
slot_int64(PyObject *obj, int64_t *out)
{
    if (obj == NULL || !PyLong_CheckExact(obj)) {
        return 0;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = (int64_t)v;
    return 1;
}

/* time.time_ns() // 1_000_000: both read CLOCK_REALTIME. */
static int
now_ms(int64_t *out)
{
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) != TIME_UTC) {
        return 0;
    }
    *out = (int64_t)ts.tv_sec * 1000 + (int64_t)(ts.tv_nsec / 1000000);
    return 1;
}

/* append_next(), or (with_meta 0) add() for its common case: what it returns is the
 * record's timestamp, not a metadata tuple (the producer's path: no tuple and no
 * size int per record). Every other case goes to py_func(self, ...). */
static PyObject *
append_common(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              int with_meta)
{
    PyObject *py_func = with_meta ? py_append_next : py_add;
    if (kwnames != NULL || nargs < 3 || nargs > 4 || Py_TYPE(self) != builder_type) {
        return ak_call_with_self(py_func, self, args, nargs, kwnames);
    }
    PyObject *timestamp = args[0], *key = args[1], *value = args[2];
    if ((nargs == 4 && args[3] != Py_None)
        || (key != Py_None && !PyBytes_CheckExact(key))
        || (value != Py_None && !PyBytes_CheckExact(value))) {
        return ak_call_with_self(py_func, self, args, nargs, kwnames);
    }
    PyObject *buffer = SLOT(self, SLOT_BUFFER);
    int64_t count, first_ts = 0, max_ts = 0, ts, limit = -1;
    if (SLOT(self, SLOT_BUILT) != Py_False || buffer == NULL
        || !PyByteArray_CheckExact(buffer)
        || !slot_int64(SLOT(self, SLOT_COUNT), &count)) {
        return ak_call_with_self(py_func, self, args, nargs, kwnames);
    }
    if (timestamp == Py_None) {
        if (!now_ms(&ts)) {
            return ak_call_with_self(py_func, self, args, nargs, kwnames);
        }
    }
    else if (!slot_int64(timestamp, &ts)) {
        return ak_call_with_self(py_func, self, args, nargs, kwnames);
    }
    int64_t ts_delta = 0;
    if (count) {
        PyObject *batch_size = SLOT(self, SLOT_BATCH_SIZE);
        int overflow = 0;
        if (batch_size == NULL || !PyLong_CheckExact(batch_size)
            || !slot_int64(SLOT(self, SLOT_FIRST_TS), &first_ts)
            || !slot_int64(SLOT(self, SLOT_MAX_TS), &max_ts)
            || (first_ts > 0 && ts < INT64_MIN + first_ts)
            || (first_ts < 0 && ts > INT64_MAX + first_ts)) {
            /* (A delta outside int64: Python raises the ValueError.) */
            return ak_call_with_self(py_func, self, args, nargs, kwnames);
        }
        ts_delta = ts - first_ts;
        long long l = PyLong_AsLongLongAndOverflow(batch_size, &overflow);
        if (l == -1 && PyErr_Occurred()) {
            return NULL;
        }
        limit = overflow ? (overflow > 0 ? LLONG_MAX : -1) : l;
    }

    Py_ssize_t key_len = key != Py_None ? PyBytes_GET_SIZE(key) : -1;
    Py_ssize_t value_len = value != Py_None ? PyBytes_GET_SIZE(value) : -1;
    Py_ssize_t body = 1 + varint_size(ts_delta) + varint_size(count)
        + varint_size(key_len) + (key_len > 0 ? key_len : 0)
        + varint_size(value_len) + (value_len > 0 ? value_len : 0)
        + 1;
    Py_ssize_t before = PyByteArray_GET_SIZE(buffer);
    Py_ssize_t after = before + varint_size(body) + body;
    if (limit >= 0 && (long long)after > limit) {
        Py_RETURN_NONE;
    }

    /* Every object first, so a failure leaves the builder as it was. */
    PyObject *ts_obj = timestamp == Py_None ? PyLong_FromLongLong(ts) : Py_NewRef(timestamp);
    PyObject *offset_obj = PyLong_FromLongLong(count);
    PyObject *count_obj = PyLong_FromLongLong(count + 1);
    PyObject *size_obj = with_meta ? PyLong_FromSsize_t(after - before) : NULL;
    PyObject *meta = NULL;
    if (ts_obj && offset_obj && count_obj && (size_obj || !with_meta)) {
        meta = with_meta ? metadata_type->tp_alloc(metadata_type, 3) : Py_NewRef(ts_obj);
    }
    if (meta == NULL || resize_for_append(buffer, after) < 0) {
        Py_XDECREF(ts_obj);
        Py_XDECREF(offset_obj);
        Py_XDECREF(count_obj);
        Py_XDECREF(size_obj);
        Py_XDECREF(meta);
        return NULL;
    }
    char *p = write_record_head(PyByteArray_AS_STRING(buffer) + before, body, ts_delta,
                                count, key, key_len, value, value_len);
    *p = 0;  /* headersCount */

    /* add()'s bookkeeping. */
    if (!count) {
        Py_XSETREF(SLOT(self, SLOT_FIRST_TS), Py_NewRef(ts_obj));
        Py_XSETREF(SLOT(self, SLOT_MAX_TS), Py_NewRef(ts_obj));
    }
    else if (ts > max_ts) {
        Py_XSETREF(SLOT(self, SLOT_MAX_TS), Py_NewRef(ts_obj));
    }
    Py_XSETREF(SLOT(self, SLOT_COUNT), count_obj);
    Py_XSETREF(SLOT(self, SLOT_LAST_OFFSET), Py_NewRef(offset_obj));
    if (!with_meta) {
        Py_DECREF(offset_obj);
        Py_DECREF(ts_obj);
        return meta; /* the timestamp */
    }
    PyTuple_SET_ITEM(meta, 0, offset_obj);
    PyTuple_SET_ITEM(meta, 1, size_obj);
    PyTuple_SET_ITEM(meta, 2, ts_obj);
    return meta;
}

static PyObject *
append_next(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return append_common(self, args, nargs, kwnames, 1);
}

static PyObject *
add_next(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return append_common(self, args, nargs, kwnames, 0);
}

static PyMethodDef append_next_def = {
    "append_next", (PyCFunction)(void (*)(void))append_next, METH_FASTCALL | METH_KEYWORDS,
    "append_next(timestamp, key, value, headers=None)\n--\n\n"
    "DefaultRecordBatchBuilder.append_next in C (see bind_builder).",
};

static PyMethodDef add_next_def = {
    "add", (PyCFunction)(void (*)(void))add_next, METH_FASTCALL | METH_KEYWORDS,
    "add(timestamp, key, value, headers=None)\n--\n\n"
    "DefaultRecordBatchBuilder.add at the next offset in C (see bind_adder).",
};

PyDoc_STRVAR(bind_adder_doc,
"bind_adder(python_add, /)\n"
"--\n"
"\n"
"The C add of the builder class given to bind_builder() (call that first): a\n"
"method descriptor for the common record (key and value bytes or None, no\n"
"headers, the next offset), returning the record's timestamp or None (the batch\n"
"is full), as python_add does; it calls python_add(self, ...) for every other case.");

AK_POSITIONAL(bind_adder, 1)
{
    if (!PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "bind_adder() takes a callable");
        return NULL;
    }
    if (builder_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind_builder() was not called");
        return NULL;
    }
    return ak_bind_method(builder_type, &add_next_def, args[0], NULL, &py_add);
}

PyDoc_STRVAR(bind_builder_doc,
"bind_builder(builder_class, metadata_class, python_append_next, /)\n"
"--\n"
"\n"
"The C append_next of builder_class (a method descriptor: bind it with __get__).\n"
"It reads and writes the class's slots _buffer, _batch_size, _built, _count,\n"
"_first_timestamp, _max_timestamp and _last_offset, returns metadata_class\n"
"tuples (offset, size, timestamp), and calls python_append_next(self, ...) for\n"
"every case it does not handle (headers, key or value not bytes or None, a\n"
"built builder, a subclass).");

AK_POSITIONAL(bind_builder, 3)
{
    if (!PyType_Check(args[0]) || !PyType_Check(args[1])
        || !PyType_IsSubtype((PyTypeObject *)args[1], &PyTuple_Type)
        || !PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "bind_builder() takes a class, a tuple subclass and a callable");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[0];
    Py_ssize_t offsets[N_SLOTS];
    if (slot_offsets_of(cls, slot_names, N_SLOTS, offsets) < 0) {
        return NULL;
    }
    PyObject *method =
        ak_bind_method(cls, &append_next_def, args[2], &builder_type, &py_append_next);
    if (method != NULL) {
        memcpy(slot_offsets, offsets, sizeof(offsets));
        Py_XSETREF(metadata_type, (PyTypeObject *)Py_NewRef(args[1]));
    }
    return method;
}

/* ------------------------------------------------ BatchBuilder.append */

/* The BatchBuilder slots read by batch_append(), as for the record builder. */
enum { BSLOT_APPEND, BSLOT_CLOSED, BSLOT_PLAIN, N_BSLOTS };
static const char *const bslot_names[N_BSLOTS] = {"_append", "_closed", "_plain"};
static Py_ssize_t bslot_offsets[N_BSLOTS];
#define BSLOT(self, i) (*(PyObject **)((char *)(self) + bslot_offsets[i]))

static PyTypeObject *batch_type;     /* aiokafka.producer.records.BatchBuilder */
static PyObject *py_batch_append;    /* its Python append */
/* append()'s keyword names, interned: the caller's are compared by identity
 * (names in code are interned), anything else goes to Python. */
static PyObject *kw_key, *kw_value, *kw_timestamp, *kw_headers;

static PyObject *
batch_append(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *key = Py_None, *value = Py_None, *timestamp = Py_None, *headers = Py_None;
    if (nargs != 0 || Py_TYPE(self) != batch_type) {
        return ak_call_with_self(py_batch_append, self, args, nargs, kwnames);
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (name == kw_value) {
            value = args[i];
        }
        else if (name == kw_key) {
            key = args[i];
        }
        else if (name == kw_timestamp) {
            timestamp = args[i];
        }
        else if (name == kw_headers) {
            headers = args[i];
        }
        else {
            return ak_call_with_self(py_batch_append, self, args, nargs, kwnames);
        }
    }
    PyObject *append = BSLOT(self, BSLOT_APPEND);
    if (timestamp != Py_None || headers != Py_None
        || BSLOT(self, BSLOT_CLOSED) != Py_False || BSLOT(self, BSLOT_PLAIN) != Py_True
        || append == NULL
        || (key != Py_None && !PyBytes_CheckExact(key))
        || (value != Py_None && !PyBytes_CheckExact(value))) {
        return ak_call_with_self(py_batch_append, self, args, nargs, kwnames);
    }
    PyObject *stack[4] = {Py_None, key, value, Py_None};
    return PyObject_Vectorcall(append, stack, 4, NULL);
}

#define batch_append_signature \
    "append($self, /, *, key=None, value=None, timestamp=None, headers=None)\n--\n\n"
static const char batch_append_doc_default[] =
    batch_append_signature "BatchBuilder.append in C (see bind_batch).";

static PyMethodDef batch_append_def = {
    "append", (PyCFunction)(void (*)(void))batch_append, METH_FASTCALL | METH_KEYWORDS,
    batch_append_doc_default,
};

PyDoc_STRVAR(bind_batch_doc,
"bind_batch(batch_class, python_append, /)\n"
"--\n"
"\n"
"The C append of create_batch()'s BatchBuilder (a method descriptor). The common\n"
"record (keyword arguments only, no timestamp, no headers, key and value bytes or\n"
"None, _plain true, _closed false) goes straight to the _append slot (the\n"
"builder's appender, called as (None, key, value, None)); everything else to\n"
"python_append(self, ...).");

AK_POSITIONAL(bind_batch, 2)
{
    if (!PyType_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "bind_batch() takes a class and a callable");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[0];
    Py_ssize_t offsets[N_BSLOTS];
    if (slot_offsets_of(cls, bslot_names, N_BSLOTS, offsets) < 0) {
        return NULL;
    }
    if (kw_key == NULL) {
        kw_key = PyUnicode_InternFromString("key");
        kw_value = PyUnicode_InternFromString("value");
        kw_timestamp = PyUnicode_InternFromString("timestamp");
        kw_headers = PyUnicode_InternFromString("headers");
        if (!kw_key || !kw_value || !kw_timestamp || !kw_headers) {
            Py_CLEAR(kw_key);
            return NULL;
        }
    }
    /* The C method shows the Python one's docstring (help(), the API docs). */
    if (batch_append_def.ml_doc == batch_append_doc_default
        && ak_take_doc(&batch_append_def, args[1], batch_append_signature) < 0) {
        return NULL;
    }
    PyObject *method =
        ak_bind_method(cls, &batch_append_def, args[1], &batch_type, &py_batch_append);
    if (method != NULL) {
        memcpy(bslot_offsets, offsets, sizeof(offsets));
    }
    return method;
}

AK_MODULE(_cbuilder, "aiokafka.record._cbuilder",
          "Optional C accelerator of the v2 record batch builder's per-record append.",
          ak_module_exec_nothing,
          AK_FASTCALL(bind_batch), AK_FASTCALL(append_record), AK_FASTCALL(append_values),
          AK_FASTCALL(bind_builder), AK_FASTCALL(bind_adder))
