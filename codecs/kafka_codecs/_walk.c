/* The record walk of kafka_codecs.records.validate_batch, in C.
 *
 * walk(records, count) -> bool
 *
 * Reads `count` v2 records from `records` (the batch payload after the 61-byte header, already
 * decompressed) with Apache Kafka's rules (DefaultRecord.readFrom): zig-zag varints of at most 5
 * bytes and varlongs of at most 10, bits past 32 or 64 dropped; negative key and value lengths
 * are null; a negative header count or header key length is an error; each record must hold
 * exactly the bytes its length prefix declares; nothing may follow the last record. Raises ValueError with the reason for a malformed payload. Returns whether the offset
 * deltas run 0, 1, 2, ... as Kafka expects of a compressed batch.
 *
 * records.py holds the same walk in Python (_walk_records_py), used when this module was not
 * built; the tests hold the two to the same verdicts and messages.
 *
 * seek_timestamp(buf, target) -> (position, next)
 *
 * Walks the v2 batch headers laid end to end in `buf` (a stretch of a segment file) and gives the
 * position of the first batch whose MaxTimestamp is >= `target` (-1 if none), and where the walk
 * stopped: the first batch not wholly in `buf`, or the one after the batch found. Only the 61-byte
 * headers are read, as Kafka's FileRecords.searchForTimestamp reads batch headers before records;
 * batch.py holds the same walk in Python (_seek_timestamp_py), held to the same answers by tests.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct {
    const uint8_t *buf;
    Py_ssize_t pos;
    Py_ssize_t end;
} reader;

/* 0 on success; -1 with a Python exception set. */
static int
read_raw(reader *r, int max_bytes, uint64_t *out)
{
    uint64_t raw = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (r->pos >= r->end) {
            PyErr_SetString(PyExc_ValueError, "truncated varint");
            return -1;
        }
        uint8_t b = r->buf[r->pos++];
        raw |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = raw;
            return 0;
        }
        shift += 7;
    }
    PyErr_SetString(PyExc_ValueError, "varint is too long");
    return -1;
}

static int
read_varint(reader *r, int32_t *out)
{
    uint64_t raw;
    if (read_raw(r, 5, &raw) < 0)
        return -1;
    uint32_t u = (uint32_t)raw;
    *out = (int32_t)((u >> 1) ^ (~(u & 1) + 1));
    return 0;
}

static int
skip_varlong(reader *r)
{
    uint64_t raw;
    return read_raw(r, 10, &raw);
}

/* Skip a field of `size` bytes (nothing when negative: null). */
static int
skip_field(reader *r, int32_t size)
{
    if (size > 0) {
        if (size > r->end - r->pos) {
            PyErr_Format(PyExc_ValueError, "field of %d bytes runs past the batch", (int)size);
            return -1;
        }
        r->pos += size;
    }
    return 0;
}

static PyObject *
walk(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    if (!PyArg_ParseTuple(args, "y*n:walk", &view, &count))
        return NULL;
    reader r = {(const uint8_t *)view.buf, 0, view.len};
    int in_order = 1;
    int32_t length, field, headers;
    Py_ssize_t start;

    for (Py_ssize_t n = 0; n < count; n++) {
        if (r.pos >= r.end) {
            PyErr_Format(PyExc_ValueError, "batch declares %zd records, found %zd", count, n);
            goto fail;
        }
        if (read_varint(&r, &length) < 0)
            goto fail;
        start = r.pos;
        if (length < 0 || length > r.end - r.pos) {
            PyErr_Format(PyExc_ValueError, "record length %d exceeds the batch", (int)length);
            goto fail;
        }
        r.pos += 1; /* Attributes: unused since magic 2 */
        if (skip_varlong(&r) < 0) /* TimestampDelta */
            goto fail;
        if (read_varint(&r, &field) < 0) /* OffsetDelta */
            goto fail;
        if (field != n)
            in_order = 0;
        /* Key, then Value */
        for (int i = 0; i < 2; i++) {
            if (read_varint(&r, &field) < 0 || skip_field(&r, field) < 0)
                goto fail;
        }
        if (read_varint(&r, &headers) < 0)
            goto fail;
        if (headers < 0) {
            PyErr_Format(PyExc_ValueError, "negative header count %d", (int)headers);
            goto fail;
        }
        for (int32_t h = 0; h < headers; h++) {
            if (read_varint(&r, &field) < 0)
                goto fail;
            if (field < 0) {
                PyErr_Format(PyExc_ValueError, "negative header key length %d", (int)field);
                goto fail;
            }
            if (skip_field(&r, field) < 0 || read_varint(&r, &field) < 0 || skip_field(&r, field) < 0)
                goto fail;
        }
        if (r.pos - start != length) {
            PyErr_Format(PyExc_ValueError, "record declares %d bytes but holds %zd", (int)length, r.pos - start);
            goto fail;
        }
    }
    if (r.pos != r.end) {
        PyErr_Format(PyExc_ValueError, "%zd bytes left after %zd records", r.end - r.pos, count);
        goto fail;
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(in_order);
fail:
    PyBuffer_Release(&view);
    return NULL;
}

static int64_t
load_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return n == 8 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
}

/* Offsets in the v2 batch header (DefaultRecordBatch). */
#define LENGTH_AT 8
#define MAX_TIMESTAMP_AT 35
#define BATCH_HEADER 61
#define LOG_OVERHEAD 12

static PyObject *
seek_timestamp(PyObject *self, PyObject *args)
{
    Py_buffer view;
    long long target;
    if (!PyArg_ParseTuple(args, "y*L:seek_timestamp", &view, &target))
        return NULL;
    const uint8_t *buf = (const uint8_t *)view.buf;
    Py_ssize_t pos = 0, found = -1, bad = -1;
    Py_BEGIN_ALLOW_THREADS
    while (view.len - pos >= BATCH_HEADER) {
        int64_t length = load_be(buf + pos + LENGTH_AT, 4);
        if (length < BATCH_HEADER - LOG_OVERHEAD) {
            bad = pos;
            break;
        }
        Py_ssize_t size = (Py_ssize_t)(LOG_OVERHEAD + length);
        if (size > view.len - pos)
            break;
        if (load_be(buf + pos + MAX_TIMESTAMP_AT, 8) >= target) {
            found = pos;
            pos += size;
            break;
        }
        pos += size;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (bad >= 0)
        return PyErr_Format(PyExc_ValueError, "batch at %zd has an invalid length", bad);
    return Py_BuildValue("nn", found, pos);
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS, "walk(records, count) -> offset deltas in order; ValueError if malformed"},
    {"seek_timestamp", seek_timestamp, METH_VARARGS,
     "seek_timestamp(buf, target) -> (position of the first whole batch with MaxTimestamp >= target or -1, next)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__walk(void)
{
    return PyModule_Create(&module);
}
