/*
 * Sensor.record in C (optional: aiokafka/metrics/stats.py falls back to its Python
 * _PySensorFields, which behaves the same, only slower).
 *
 * Why: every Produce request records eight values (five in ProducerMetrics, three in
 * the connection's NodeMetrics), and a Python record() is a method call plus a dozen
 * attribute reads and writes: about 6% of the instructions of a lone send_and_wait.
 *
 * SensorFields is the base of stats.Sensor. It holds the sensor's window fields as C
 * members under the Python slot names (so Sensor's Python methods read and write them
 * unchanged) and defines record(). Everything else, including the rare window roll
 * (Sensor._roll), stays Python.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "../_cext.h"

/* stats.WINDOW (a test pins that they agree). */
#define WINDOW 30.0

typedef struct {
    PyObject_HEAD
    Py_ssize_t base_n, n, p_n;
    double base_sum, start, sum, max, p_start, p_sum, p_max;
} SensorFields;

static PyObject *time_module; /* stats.py's `time`: record() reads time.monotonic */
static PyObject *str_monotonic, *str_roll, *str_value, *str_now;

/* A value as the Python `self._sum += value` sees it: a float, an int (converted as
 * float + int converts it) or anything with __float__. -1 with an exception set. */
static int
as_double(PyObject *obj, double *out)
{
    if (PyFloat_CheckExact(obj)) {
        *out = PyFloat_AS_DOUBLE(obj);
        return 0;
    }
    /* Sizes and counts are ints: converted directly, not through a float object as
     * PyFloat_AsDouble would (OverflowError past the float range, as float + int). */
    double v = PyLong_CheckExact(obj) ? PyLong_AsDouble(obj) : PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    *out = v;
    return 0;
}

/* record(value=1.0, now=None), parsed by hand: the keyword parser costs more than
 * the rest of the call. */
static int
parse_record_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  PyObject **value, PyObject **now)
{
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError, "record() takes at most 2 arguments (%zd given)",
                     nargs);
        return -1;
    }
    *value = nargs > 0 ? args[0] : NULL;
    *now = nargs > 1 ? args[1] : Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        PyObject *arg = args[nargs + i];
        int is_value = PyUnicode_Compare(key, str_value) == 0;
        if (!is_value && PyUnicode_Compare(key, str_now) != 0) {
            PyErr_Format(PyExc_TypeError,
                         "record() got an unexpected keyword argument '%U'", key);
            return -1;
        }
        if ((is_value && nargs > 0) || (!is_value && nargs > 1)) {
            PyErr_Format(PyExc_TypeError, "record() got multiple values for argument '%U'",
                         key);
            return -1;
        }
        *(is_value ? value : now) = arg;
    }
    return 0;
}

static PyObject *
sensor_record(SensorFields *self, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    PyObject *value_obj, *now_obj;
    if (parse_record_args(args, nargs, kwnames, &value_obj, &now_obj) < 0) {
        return NULL;
    }
    PyObject *clock = NULL; /* time.monotonic()'s result when now is None */
    if (now_obj == Py_None) {
        clock = PyObject_CallMethodNoArgs(time_module, str_monotonic);
        if (clock == NULL) {
            return NULL;
        }
        now_obj = clock;
    }
    double now;
    if (as_double(now_obj, &now) < 0) {
        Py_XDECREF(clock);
        return NULL;
    }
    if (now - self->start >= WINDOW) {
        /* Once a window at most: the Python roll, called with the same `now`. */
        PyObject *r = PyObject_CallMethodOneArg((PyObject *)self, str_roll, now_obj);
        if (r == NULL) {
            Py_XDECREF(clock);
            return NULL;
        }
        Py_DECREF(r);
    }
    Py_XDECREF(clock);
    double value = 1.0;
    if (value_obj != NULL && as_double(value_obj, &value) < 0) {
        return NULL;
    }
    self->sum += value;
    self->n += 1;
    if (value > self->max) {
        self->max = value;
    }
    Py_RETURN_NONE;
}

static PyMethodDef sensor_methods[] = {
    {"record", (PyCFunction)(void (*)(void))sensor_record, METH_FASTCALL | METH_KEYWORDS,
     "record(value=1.0, now=None)\n--\n\n"
     "Add one value (``now`` is ``time.monotonic()``, passed when the caller has it)."},
    {NULL, NULL, 0, NULL},
};

#define FIELD(name, type, member) {name, type, offsetof(SensorFields, member), 0, NULL}

static PyMemberDef sensor_members[] = {
    FIELD("_base_n", T_PYSSIZET, base_n),
    FIELD("_base_sum", T_DOUBLE, base_sum),
    FIELD("_max", T_DOUBLE, max),
    FIELD("_n", T_PYSSIZET, n),
    FIELD("_p_max", T_DOUBLE, p_max),
    FIELD("_p_n", T_PYSSIZET, p_n),
    FIELD("_p_start", T_DOUBLE, p_start),
    FIELD("_p_sum", T_DOUBLE, p_sum),
    FIELD("_start", T_DOUBLE, start),
    FIELD("_sum", T_DOUBLE, sum),
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject SensorFieldsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "aiokafka.metrics._csensor.SensorFields",
    .tp_doc = "The window fields of stats.Sensor, and its record() in C.",
    .tp_basicsize = sizeof(SensorFields),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_methods = sensor_methods,
    .tp_members = sensor_members,
    .tp_new = PyType_GenericNew,
};

static int
csensor_exec(PyObject *module)
{
    if (PyType_Ready(&SensorFieldsType) < 0) {
        return -1;
    }
    static const AkName names[] = {
        {&str_monotonic, "monotonic"},
        {&str_roll, "_roll"},
        {&str_value, "value"},
        {&str_now, "now"},
    };
    if (ak_intern_all(names, sizeof(names) / sizeof(names[0])) < 0) {
        return -1;
    }
    if (time_module == NULL) {
        /* The module, not its function: a patched time.monotonic is seen, as the
         * Python record() sees it. */
        time_module = PyImport_ImportModule("time");
        if (time_module == NULL) {
            return -1;
        }
    }
    PyObject *window = PyFloat_FromDouble(WINDOW);
    int failed = window == NULL
                 || PyModule_AddObjectRef(module, "SensorFields", (PyObject *)&SensorFieldsType) < 0
                 || PyModule_AddObjectRef(module, "WINDOW", window) < 0;
    Py_XDECREF(window);
    return failed ? -1 : 0;
}

/* No module functions: the type is all there is (the sentinel stands for the list). */
AK_MODULE(_csensor, "aiokafka.metrics._csensor",
          "Sensor.record in C (optional; see _csensor.c).", csensor_exec,
          {NULL, NULL, 0, NULL})
