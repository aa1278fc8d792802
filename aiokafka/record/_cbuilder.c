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
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

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

/* ------------------------------------------------------------ field checks */

/* type(obj).__name__, as the Python messages print it (tp_name would add the
 * module of built-in types, e.g. "collections.OrderedDict"). */
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

static PyObject *
append_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "append_record() takes 7 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *buffer = args[0];
    PyObject *key_obj = args[4], *value_obj = args[5], *headers = args[6];
    if (!PyByteArray_CheckExact(buffer)) {
        PyErr_SetString(PyExc_TypeError, "append_record() buffer must be a bytearray");
        return NULL;
    }
    /* batch_size may be any int >= 0: one past long long is no limit in practice
     * (no buffer gets that big). */
    int overflow;
    long long limit = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (limit == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow) {
        limit = overflow > 0 ? LLONG_MAX : -1;
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
    /* The one resize: bytearray over-allocates, as `buffer += ...` does. */
    if (PyByteArray_Resize(buffer, after) < 0) {
        goto done;
    }
    char *p = PyByteArray_AS_STRING(buffer) + before;
    p = write_varint(p, body);
    *p++ = 0;  /* attributes: unused in v2 records */
    p = write_varint(p, ts_delta);
    p = write_varint(p, offset);
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

static PyMethodDef cbuilder_methods[] = {
    {"append_record", (PyCFunction)(void (*)(void))append_record, METH_FASTCALL,
     append_record_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cbuilder_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "aiokafka.record._cbuilder",
    .m_doc = "Optional C accelerator of the v2 record batch builder's per-record append.",
    .m_size = 0,
    .m_methods = cbuilder_methods,
};

PyMODINIT_FUNC
PyInit__cbuilder(void)
{
    return PyModuleDef_Init(&cbuilder_module);
}
