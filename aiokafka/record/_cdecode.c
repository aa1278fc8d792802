/*
 * Optional accelerator of the v2 record decoders (consumer/record_decode.py and
 * DefaultRecordBatch.record_tuples in default_records.py).
 *
 * decode_records() turns a batch's records section (CRC-checked and
 * decompressed by Python) into a list of records: ConsumerRecord objects when
 * given that class, (offset, timestamp, key, value, headers, size) tuples when
 * given None. It is the consumer's per-record work; decompression and control
 * batches stay in Python. decode_batch() does the same for a whole
 * uncompressed batch, header and CRC check included: for small batches (a few
 * records each, as web services produce them) those per-batch steps in Python
 * cost more than the records. deserialize() applies the
 * consumer's key/value deserializers to such records, as the Python loops in
 * record_decode.deserialize do, and tracks a record again when it gets an
 * object that could be part of a reference cycle (see below).
 *
 * The pure-Python loops are the reference. This code never raises for bad
 * data: on anything it does not decode exactly as they would (truncation, a
 * length that does not add up, a varint wider than 64 bits, a sum past int64,
 * invalid UTF-8 in a header key, an unexpected record class, ...) it returns
 * None and the caller runs the Python loop, which returns the records or
 * raises the typed error. So the records are the same when this succeeds and
 * the errors are the Python ones by construction; tests/unit/test_record_cdecode.py
 * compares the two over generated and mutated batches.
 *
 * Records can be left untracked by the cyclic garbage collector (the caller
 * says when: record_decode.decode_batch). A record holding only str, int,
 * bytes, None and tuples of those cannot be part of a reference cycle, and the
 * collector's passes over large batches kept alive by the application cost
 * more than the decoding itself (0.52 -> 0.20 us/record for 6,000-record
 * batches); CPython untracks tuples and dicts of such atoms for the same reason.
 *
 * No asyncio, no state but a cache of the record class's slot layout.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "structmember.h"

#include "../_cext.h"

/* The fields of aiokafka.structs.ConsumerRecord, in constructor order. */
#define N_FIELDS 12
static const char *const FIELD_NAMES[N_FIELDS] = {
    "topic", "partition", "offset", "timestamp", "timestamp_type", "key",
    "value", "checksum", "serialized_key_size", "serialized_value_size",
    "headers", "leader_epoch",
};
enum {
    F_TOPIC, F_PARTITION, F_OFFSET, F_TIMESTAMP, F_TIMESTAMP_TYPE, F_KEY,
    F_VALUE, F_CHECKSUM, F_KEY_SIZE, F_VALUE_SIZE, F_HEADERS, F_LEADER_EPOCH,
};

/* Slot offsets of the last record class seen (a strong reference, so the
 * pointer cannot be reused by another type while cached). */
static PyTypeObject *cached_type = NULL;
static Py_ssize_t cached_offsets[N_FIELDS];

/* Fill `offsets` with the byte offset of each field's slot in `tp`. 0 when the
 * class is laid out as expected (a __slots__ class whose fields are all
 * object slots, e.g. ConsumerRecord), -1 otherwise, with no exception set: the
 * caller then takes the Python path, which calls the class normally. A
 * __dict__ (ConsumerRecord has one, for attributes its users add, as on
 * aiokafka's records) is allowed: tp_alloc leaves it empty. */
static int
slot_layout(PyTypeObject *tp, Py_ssize_t *offsets)
{
    if (tp == cached_type) {
        memcpy(offsets, cached_offsets, sizeof(cached_offsets));
        return 0;
    }
    if (!PyType_IS_GC(tp) || tp->tp_itemsize != 0) {
        return -1;
    }
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *name = PyUnicode_InternFromString(FIELD_NAMES[i]);
        if (name == NULL) {
            PyErr_Clear();
            return -1;
        }
        /* A borrowed reference (the class's own attribute, via its MRO); sets
         * no exception. */
        PyObject *descr = _PyType_Lookup(tp, name);
        Py_DECREF(name);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            return -1;
        }
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY) ||
            m->offset < (Py_ssize_t)sizeof(PyObject) ||
            m->offset + (Py_ssize_t)sizeof(PyObject *) > tp->tp_basicsize) {
            return -1;
        }
        offsets[i] = m->offset;
    }
    Py_INCREF(tp);
    Py_XSETREF(cached_type, tp);
    memcpy(cached_offsets, offsets, sizeof(cached_offsets));
    return 0;
}

/* Zigzag varint at data[*pos], at most 10 bytes and 64 bits. 0 and *pos moved
 * past it, or -1 where the Python decoder would raise or return a number wider
 * than int64 (end of data, an 11th byte, bits past the 64th). */
static inline int
read_varint(const uint8_t *data, Py_ssize_t n, Py_ssize_t *pos, int64_t *out)
{
    Py_ssize_t i = *pos;
    if (i < n && data[i] < 0x80) {
        uint64_t v = data[i];
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        *pos = i + 1;
        return 0;
    }
    uint64_t value = 0;
    int shift = 0;
    for (;;) {
        if (i >= n) {
            return -1;
        }
        uint8_t b = data[i++];
        if (shift == 63 && b > 1) {
            return -1;
        }
        value |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            break;
        }
        shift += 7;
    }
    *out = (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
    *pos = i;
    return 0;
}

/* A key or value: varint length then bytes; length -1 means None only when it
 * is the single byte 0x01 (the Python loops read a longer -1 as corrupt). */
static inline int
read_bytes_field(const uint8_t *data, Py_ssize_t n, Py_ssize_t *pos,
                 PyObject **out, int64_t *size)
{
    Py_ssize_t start = *pos;
    int64_t len;
    if (read_varint(data, n, pos, &len) < 0) {
        return -1;
    }
    if (len == -1 && *pos == start + 1) {
        *out = Py_NewRef(Py_None);
        *size = -1;
        return 0;
    }
    if (len < 0 || len > n - *pos) {
        return -1;
    }
    *out = PyBytes_FromStringAndSize((const char *)data + *pos, (Py_ssize_t)len);
    if (*out == NULL) {
        return -2; /* MemoryError: a real exception, not a fallback */
    }
    *pos += (Py_ssize_t)len;
    *size = len;
    return 0;
}

/* The headers of a record at data[*pos] (first byte non-zero), as a list of
 * (str, bytes | None) pairs. -1: fall back; -2: exception set. */
static int
read_headers(const uint8_t *data, Py_ssize_t n, Py_ssize_t *pos, PyObject **out)
{
    int64_t count;
    if (read_varint(data, n, pos, &count) < 0 || count < 0 || count > n - *pos) {
        return -1;
    }
    PyObject *list = PyList_New((Py_ssize_t)count);
    if (list == NULL) {
        return -2;
    }
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        int64_t key_len, value_len;
        if (read_varint(data, n, pos, &key_len) < 0 || key_len < 0 ||
            key_len > n - *pos) {
            goto fallback;
        }
        PyObject *key = PyUnicode_DecodeUTF8((const char *)data + *pos,
                                             (Py_ssize_t)key_len, "strict");
        if (key == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                goto error;
            }
            PyErr_Clear();
            goto fallback;
        }
        *pos += (Py_ssize_t)key_len;
        PyObject *value;
        if (read_varint(data, n, pos, &value_len) < 0 || value_len < -1 ||
            value_len > n - *pos) {
            Py_DECREF(key);
            goto fallback;
        }
        if (value_len == -1) {
            value = Py_NewRef(Py_None);
        }
        else {
            value = PyBytes_FromStringAndSize((const char *)data + *pos,
                                              (Py_ssize_t)value_len);
            if (value == NULL) {
                Py_DECREF(key);
                goto error;
            }
            *pos += (Py_ssize_t)value_len;
        }
        PyObject *pair = PyTuple_New(2);
        if (pair == NULL) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto error;
        }
        PyTuple_SET_ITEM(pair, 0, key);
        PyTuple_SET_ITEM(pair, 1, value);
        PyList_SET_ITEM(list, i, pair);
    }
    *out = list;
    return 0;
fallback:
    Py_DECREF(list);
    return -1;
error:
    Py_DECREF(list);
    return -2;
}

static inline void
set_slot(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    *(PyObject **)((char *)obj + offset) = value; /* steals the reference */
}

PyDoc_STRVAR(decode_records_doc,
"decode_records(data, count, base_offset, base_timestamp, append_time, topic,\n"
"               partition, timestamp_type, leader_epoch, record_type, untracked, /)\n"
"--\n\n"
"The `count` records of a v2 batch's records section `data` (bytes): a list of\n"
"record_type(topic, partition, offset, timestamp, timestamp_type, key, value,\n"
"None, key size, value size, headers tuple, leader_epoch) when record_type is\n"
"a class, of (offset, timestamp, key, value, headers list, size) tuples when it\n"
"is None. Timestamps are append_time when it is not None, else base_timestamp\n"
"plus the record's delta. None when the Python decoder must run instead\n"
"(corrupt or unusual data, or a record class laid out differently).\n"
"untracked: leave the records out of the cyclic garbage collector (see\n"
"record_decode.decode_batch for when that is safe).");

/* The decoding loop of decode_records and decode_batch: the `count` records
 * of data[0:n]. A new list, Py_None (new reference: fall back to Python), or
 * NULL with an exception set. */
static PyObject *
decode_loop(const uint8_t *data, Py_ssize_t n, long long count, long long base_offset,
            long long base_ts, PyObject *append_time, PyObject *topic,
            PyObject *partition, PyObject *ts_type, PyObject *epoch,
            PyObject *record_type, int untracked)
{
    Py_ssize_t offsets[N_FIELDS];
    int tuples = record_type == Py_None;
    if (!tuples && (!PyType_Check(record_type) ||
                    slot_layout((PyTypeObject *)record_type, offsets) < 0)) {
        Py_RETURN_NONE;
    }
    if (count < 0) {
        count = 0;
    }
    /* A record takes at least 7 bytes (length, attributes, timestamp and offset
     * deltas, key, value, header count): more records than that is corrupt, and
     * the list is not sized from an untrusted count. */
    if (count > n / 7) {
        Py_RETURN_NONE;
    }
    PyTypeObject *tp = tuples ? NULL : (PyTypeObject *)record_type;
    PyObject *out = PyList_New((Py_ssize_t)count);
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t pos = 0;
    int rc = 0;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        Py_ssize_t start = pos;
        int64_t length, ts_delta, offset_delta, key_size, value_size;
        long long offset, timestamp = 0;
        PyObject *key = NULL, *value = NULL, *headers = NULL;
        PyObject *rec, *offset_obj, *ts_obj, *key_size_obj, *value_size_obj;
        if (read_varint(data, n, &pos, &length) < 0 || length <= 0 ||
            length > n - pos) {
            goto fallback;
        }
        Py_ssize_t end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes: unused */
        if (read_varint(data, n, &pos, &ts_delta) < 0 ||
            read_varint(data, n, &pos, &offset_delta) < 0 ||
            __builtin_add_overflow(base_offset, (long long)offset_delta, &offset) ||
            (append_time == Py_None &&
             __builtin_add_overflow(base_ts, (long long)ts_delta, &timestamp))) {
            goto fallback;
        }
        rc = read_bytes_field(data, n, &pos, &key, &key_size);
        if (rc < 0) {
            goto record_failed;
        }
        rc = read_bytes_field(data, n, &pos, &value, &value_size);
        if (rc < 0) {
            goto record_failed;
        }
        if (pos >= n) {
            rc = -1;
            goto record_failed;
        }
        if (data[pos] == 0) {
            pos += 1;
            headers = tuples ? PyList_New(0) : Py_NewRef(Py_None);
            if (headers == NULL) {
                rc = -2;
                goto record_failed;
            }
        }
        else {
            rc = read_headers(data, n, &pos, &headers);
            if (rc < 0) {
                goto record_failed;
            }
            if (!tuples) {
                Py_SETREF(headers, PyList_AsTuple(headers));
                if (headers == NULL) {
                    rc = -2;
                    goto record_failed;
                }
            }
        }
        if (pos != end) {
            rc = -1;
            goto record_failed;
        }
        offset_obj = PyLong_FromLongLong(offset);
        ts_obj = append_time == Py_None ? PyLong_FromLongLong(timestamp)
                                        : Py_NewRef(append_time);
        if (offset_obj == NULL || ts_obj == NULL) {
            Py_XDECREF(offset_obj);
            Py_XDECREF(ts_obj);
            rc = -2;
            goto record_failed;
        }
        if (tuples) {
            PyObject *size_obj = PyLong_FromSsize_t(pos - start);
            rec = size_obj == NULL ? NULL : PyTuple_New(6);
            if (rec == NULL) {
                Py_XDECREF(size_obj);
                Py_DECREF(offset_obj);
                Py_DECREF(ts_obj);
                rc = -2;
                goto record_failed;
            }
            PyTuple_SET_ITEM(rec, 0, offset_obj);
            PyTuple_SET_ITEM(rec, 1, ts_obj);
            PyTuple_SET_ITEM(rec, 2, key);
            PyTuple_SET_ITEM(rec, 3, value);
            PyTuple_SET_ITEM(rec, 4, headers);
            PyTuple_SET_ITEM(rec, 5, size_obj);
            PyList_SET_ITEM(out, i, rec);
            continue;
        }
        if (headers == Py_None) {
            /* The shared empty tuple, as the Python decoder gives. */
            Py_SETREF(headers, PyTuple_New(0));
        }
        key_size_obj = PyLong_FromLongLong(key_size);
        value_size_obj = PyLong_FromLongLong(value_size);
        rec = tp->tp_alloc(tp, 0);
        if (rec == NULL || key_size_obj == NULL || value_size_obj == NULL) {
            Py_XDECREF(rec);
            Py_XDECREF(key_size_obj);
            Py_XDECREF(value_size_obj);
            Py_DECREF(offset_obj);
            Py_DECREF(ts_obj);
            rc = -2;
            goto record_failed;
        }
        set_slot(rec, offsets[F_TOPIC], Py_NewRef(topic));
        set_slot(rec, offsets[F_PARTITION], Py_NewRef(partition));
        set_slot(rec, offsets[F_OFFSET], offset_obj);
        set_slot(rec, offsets[F_TIMESTAMP], ts_obj);
        set_slot(rec, offsets[F_TIMESTAMP_TYPE], Py_NewRef(ts_type));
        set_slot(rec, offsets[F_KEY], key);
        set_slot(rec, offsets[F_VALUE], value);
        set_slot(rec, offsets[F_CHECKSUM], Py_NewRef(Py_None));
        set_slot(rec, offsets[F_KEY_SIZE], key_size_obj);
        set_slot(rec, offsets[F_VALUE_SIZE], value_size_obj);
        set_slot(rec, offsets[F_HEADERS], headers);
        set_slot(rec, offsets[F_LEADER_EPOCH], Py_NewRef(epoch));
        if (untracked) {
            PyObject_GC_UnTrack(rec);
        }
        PyList_SET_ITEM(out, i, rec);
        continue;
    record_failed:
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(headers);
        if (rc == -2) {
            Py_DECREF(out);
            return NULL;
        }
        goto fallback;
    }
    if (pos != n) {
        goto fallback;
    }
    return out;
fallback:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

AK_POSITIONAL(decode_records, 11)
{
    int untracked = PyObject_IsTrue(args[10]);
    if (untracked < 0) {
        return NULL;
    }
    PyObject *data_obj = args[0];
    if (!PyBytes_CheckExact(data_obj)) {
        Py_RETURN_NONE;
    }
    long long count = PyLong_AsLongLong(args[1]);
    long long base_offset = PyLong_AsLongLong(args[2]);
    long long base_ts = PyLong_AsLongLong(args[3]);
    if (PyErr_Occurred()) {
        /* Not an int64: the Python path has the arithmetic for it. */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return decode_loop((const uint8_t *)PyBytes_AS_STRING(data_obj),
                       PyBytes_GET_SIZE(data_obj), count, base_offset, base_ts, args[4],
                       args[5], args[6], args[7], args[8], args[9], untracked);
}

/* Big-endian reads of the v2 batch header (the caller checked the length). */
static inline uint64_t
be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

static inline uint32_t
be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* The v2 batch header (default_records.HEADER_STRUCT): offsets of its fields. */
enum {
    H_BASE_OFFSET = 0, H_LENGTH = 8, H_LEADER_EPOCH = 12, H_MAGIC = 16, H_CRC = 17,
    H_ATTRIBUTES = 21, H_FIRST_TS = 27, H_MAX_TS = 35, H_COUNT = 57, H_SIZE = 61,
};

PyDoc_STRVAR(decode_batch_doc,
"decode_batch(batch, crc32c, record_type, topic, partition, untracked, /)\n"
"--\n\n"
"The records of one uncompressed v2 record batch `batch` (any buffer, from its\n"
"base offset to its end) as decode_records builds them, with the header\n"
"fields read here: one call per batch instead of a dozen property reads, a\n"
"CRC helper call and a copy of the records section. `crc32c` is the CRC-32C\n"
"function to check the batch with (None: no check). None whenever the Python\n"
"path must run instead: a compressed batch, a header or CRC it would reject,\n"
"or anything decode_records falls back on (that path then raises its error).");

AK_POSITIONAL(decode_batch, 6)
{
    PyObject *crc_fn = args[1], *record_type = args[2];
    int untracked = PyObject_IsTrue(args[5]);
    if (untracked < 0) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *out = NULL, *append_time = NULL, *ts_type = NULL, *epoch = NULL;
    const uint8_t *p = (const uint8_t *)view.buf;
    Py_ssize_t n = view.len;
    if (n < H_SIZE || p[H_MAGIC] != 2) {
        goto fallback;
    }
    int32_t length = (int32_t)be32(p + H_LENGTH);
    if (length < H_SIZE - 12 || (Py_ssize_t)length + 12 > n) {
        goto fallback;
    }
    n = (Py_ssize_t)length + 12; /* a longer buffer is cut, as DefaultRecordBatch does */
    int attributes = (p[H_ATTRIBUTES] << 8) | p[H_ATTRIBUTES + 1];
    if (attributes & 0x07) {
        goto fallback; /* compressed: decompression stays in Python */
    }
    int32_t count = (int32_t)be32(p + H_COUNT);
    if (count < 0) {
        goto fallback;
    }
    if (crc_fn != Py_None) {
        /* The CRC covers everything from the attributes to the end. The view is
         * only lent to crc_fn (the crc32c package's function, which keeps nothing). */
        PyObject *mv = PyMemoryView_FromMemory((char *)p + H_ATTRIBUTES, n - H_ATTRIBUTES,
                                               PyBUF_READ);
        if (mv == NULL) {
            goto error;
        }
        PyObject *crc = PyObject_CallOneArg(crc_fn, mv);
        Py_DECREF(mv);
        if (crc == NULL) {
            PyErr_Clear(); /* the Python path calls it again and raises */
            goto fallback;
        }
        unsigned long value = PyLong_AsUnsignedLong(crc);
        Py_DECREF(crc);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            goto fallback;
        }
        if (value != be32(p + H_CRC)) {
            goto fallback;
        }
    }
    int log_append = (attributes & 0x08) != 0;
    int32_t leader_epoch = (int32_t)be32(p + H_LEADER_EPOCH);
    append_time = log_append ? PyLong_FromLongLong((long long)be64(p + H_MAX_TS))
                             : Py_NewRef(Py_None);
    ts_type = PyLong_FromLong(log_append);
    epoch = leader_epoch < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(leader_epoch);
    if (append_time == NULL || ts_type == NULL || epoch == NULL) {
        goto error;
    }
    out = decode_loop(p + H_SIZE, n - H_SIZE, count, (long long)be64(p + H_BASE_OFFSET),
                      (long long)be64(p + H_FIRST_TS), append_time, args[3], args[4],
                      ts_type, epoch, record_type, untracked);
    goto done;
fallback:
    out = Py_NewRef(Py_None);
    goto done;
error:
    out = NULL;
done:
    Py_XDECREF(append_time);
    Py_XDECREF(ts_type);
    Py_XDECREF(epoch);
    PyBuffer_Release(&view);
    return out;
}

/* Apply `fn` to the slot at `offset` of every record whose slot is not None. */
static int
apply_to_slot(PyObject *records, PyObject *fn, Py_ssize_t offset)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); i++) {
        PyObject *rec = PyList_GET_ITEM(records, i);
        PyObject **slot = (PyObject **)((char *)rec + offset);
        PyObject *old = *slot;
        if (old == Py_None) {
            continue;
        }
        /* The call may run any code: hold the record and the old value. */
        Py_INCREF(rec);
        Py_INCREF(old);
        PyObject *new = PyObject_CallOneArg(fn, old);
        Py_DECREF(old);
        if (new == NULL) {
            Py_DECREF(rec);
            return -1;
        }
        Py_XSETREF(*slot, new);
        Py_DECREF(rec);
    }
    return 0;
}

PyDoc_STRVAR(deserialize_doc,
"deserialize(records, key_deserializer, value_deserializer, record_type, /)\n"
"--\n\n"
"Replace each record's key, then each record's value, that is not None by the\n"
"deserializer's result (either may be None: skipped), as the fetcher's Python\n"
"loops do, in the same order. A record left untracked by decode_records is\n"
"tracked by the garbage collector again when its new key or value is of a type\n"
"that can be part of a reference cycle. False (nothing done) when a record is\n"
"not exactly record_type or that class is laid out differently: the caller then\n"
"runs its Python loops. A deserializer's exception propagates.");

AK_POSITIONAL(deserialize, 4)
{
    PyObject *records = args[0], *kd = args[1], *vd = args[2], *record_type = args[3];
    Py_ssize_t offsets[N_FIELDS];
    if (!PyList_CheckExact(records)) {
        PyErr_SetString(PyExc_TypeError, "deserialize() needs a list of records");
        return NULL;
    }
    if (!PyType_Check(record_type) ||
        slot_layout((PyTypeObject *)record_type, offsets) < 0) {
        Py_RETURN_FALSE;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); i++) {
        PyObject *rec = PyList_GET_ITEM(records, i);
        if ((PyObject *)Py_TYPE(rec) != record_type ||
            *(PyObject **)((char *)rec + offsets[F_KEY]) == NULL ||
            *(PyObject **)((char *)rec + offsets[F_VALUE]) == NULL) {
            Py_RETURN_FALSE; /* the Python loops raise AttributeError for a deleted field */
        }
    }
    if ((kd != Py_None && apply_to_slot(records, kd, offsets[F_KEY]) < 0) ||
        (vd != Py_None && apply_to_slot(records, vd, offsets[F_VALUE]) < 0)) {
        return NULL;
    }
    /* Untracked records stay so only while they hold atoms (str, bytes, int, ...):
     * any object of a collectable type might come to refer back to the record. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); i++) {
        PyObject *rec = PyList_GET_ITEM(records, i);
        if (PyObject_GC_IsTracked(rec)) {
            continue;
        }
        PyObject *key = *(PyObject **)((char *)rec + offsets[F_KEY]);
        PyObject *value = *(PyObject **)((char *)rec + offsets[F_VALUE]);
        if ((key != NULL && PyObject_IS_GC(key)) || (value != NULL && PyObject_IS_GC(value))) {
            PyObject_GC_Track(rec);
        }
    }
    Py_RETURN_TRUE;
}

AK_MODULE(_cdecode, "aiokafka.record._cdecode",
          "Optional C decoder of v2 record batch records (see record_decode.py).",
          ak_module_exec_nothing,
          AK_FASTCALL(decode_records), AK_FASTCALL(decode_batch), AK_FASTCALL(deserialize))
