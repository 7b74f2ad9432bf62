/* The record walk of kafka_codecs.records.validate_batch, in C.
 *
 * walk(records, count, base_timestamp) -> (in_order, max_timestamp)
 *
 * Reads `count` v2 records from `records` (the batch payload after the 61-byte header, already
 * decompressed) with Apache Kafka's rules (DefaultRecord.readFrom): zig-zag varints of at most 5
 * bytes and varlongs of at most 10, bits past 32 or 64 dropped; negative key and value lengths
 * are null; a negative header count or header key length is an error; each record must hold
 * exactly the bytes its length prefix declares; nothing may follow the last record. Raises
 * ValueError with the reason for a malformed payload. Returns whether the offset deltas run 0, 1,
 * 2, ... as Kafka expects of a compressed batch, and the batch's true MaxTimestamp: the largest
 * record timestamp (base_timestamp + delta, Java long arithmetic), at least -1 (NO_TIMESTAMP), as
 * LogValidator computes it to rewrite the header a producer sent (DefaultRecordBatch.setMaxTimestamp).
 *
 * records.py holds the same walk in Python (_walk_records_py), used when this module was not
 * built; the tests hold the two to the same verdicts and messages.
 *
 * scan(records, count, base_timestamp, compact, check_timestamps, now, before_max_ms, after_max_ms, cap)
 *
 * The same walk with the same verdicts, reporting in the same pass what the record checks of a
 * topic config need (kafka_codecs.records.scan_records: the Python twin, held to the same answers
 * by tests): the indexes of records without a key, the records whose timestamp is out of
 * [now - before, now + after] (index, timestamp, offset delta; with `compact`, only records
 * with a key, as a key error is a record's only error in Kafka), at most `cap` of each with the
 * totals, the first and largest timestamp deltas, whether the records are written exactly as
 * the broker writes them again (shortest varints, zero attributes, offset deltas 0, 1, 2, ..., a
 * first timestamp delta of 0, ASCII header keys), in which case a rebuild is the payload itself,
 * and walk's max_timestamp.
 *
 * The module's ABI attribute is 2 since walk and scan report max_timestamp: records.py takes a
 * build without it for one made from an older _walk.c and uses its Python twins instead. It is 3
 * since produce_request and check_batch (_produce.c, included below): kafka_codecs.native offers
 * them only from a build that has them, else their Python twins are used.
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

/* What scan() reports besides the walk's verdict: the per-record facts the topic-config checks of
 * LogValidator need (a compacted topic's key check, message.timestamp.before/after.max.ms), and
 * whether the records are written as the broker would rebuild them (so recompression may compress
 * the payload as it is). */
typedef struct {
    int check_ts, compact;
    int64_t now, before, after, base_ts;
    Py_ssize_t cap;
    PyObject *null_keys; /* indexes, at most cap */
    Py_ssize_t null_total;
    PyObject *bad_ts; /* (index, timestamp, offset delta), at most cap */
    Py_ssize_t bad_total;
    int canonical;
    int64_t first_delta, max_delta;
} scan_stats;

/* Whether the varint read from `start` up to r->pos is the shortest encoding of `raw` (as the
 * broker's own encoder would write it). */
static int
is_minimal(const reader *r, Py_ssize_t start, uint64_t raw)
{
    Py_ssize_t k = 1;
    uint64_t v = raw;
    while (v >= 0x80) {
        v >>= 7;
        k++;
    }
    return r->pos - start == k && r->buf[r->pos - 1] == v;
}

static int
stat_varint(reader *r, int32_t *out, scan_stats *st)
{
    Py_ssize_t start = r->pos;
    uint64_t raw;
    if (read_raw(r, 5, &raw) < 0)
        return -1;
    uint32_t u = (uint32_t)raw;
    *out = (int32_t)((u >> 1) ^ (~(u & 1) + 1));
    if (st && st->canonical && !is_minimal(r, start, u))
        st->canonical = 0;
    return 0;
}

static int
append_item(PyObject *list, PyObject *item)
{
    if (item == NULL)
        return -1;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

/* The timestamp facts of record `n` (Java long arithmetic, as LogValidator.validateTimestamp). */
static int
stat_timestamp(scan_stats *st, Py_ssize_t n, uint64_t raw, int32_t offset_delta, int keyless)
{
    int64_t delta = (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
    if (n == 0) {
        st->first_delta = st->max_delta = delta;
        if (delta != 0)
            st->canonical = 0;
    } else if (delta > st->max_delta) {
        st->max_delta = delta;
    }
    if (!st->check_ts || (keyless && st->compact))
        return 0; /* LogValidator.validateRecord: a key error is the record's only error */
    int64_t ts = (int64_t)((uint64_t)st->base_ts + (uint64_t)delta);
    if (ts == -1)
        return 0; /* RecordBatch.NO_TIMESTAMP is never out of range */
    int64_t diff = (int64_t)((uint64_t)st->now - (uint64_t)ts);
    if (diff > st->before || (int64_t)(0 - (uint64_t)diff) > st->after) {
        if (st->bad_total++ < st->cap)
            return append_item(st->bad_ts, Py_BuildValue("nLi", n, (long long)ts, (int)offset_delta));
    }
    return 0;
}

/* The walk of `count` records; with `st`, the scan's facts gathered in the same pass; the largest
 * of -1 and the records' timestamps in *max_ts. 1 or 0 (offset deltas in order or not); -1 with a
 * Python exception set. */
static int
walk_records(reader *rp, Py_ssize_t count, int64_t base_ts, int64_t *max_ts, scan_stats *st)
{
    reader r = *rp;
    int in_order = 1;
    int64_t top = -1, ts; /* LogValidator starts from RecordBatch.NO_TIMESTAMP */
    int32_t length, field, headers, offset_delta;
    int keyless;
    Py_ssize_t start, at;
    uint64_t raw;

    for (Py_ssize_t n = 0; n < count; n++) {
        if (r.pos >= r.end) {
            PyErr_Format(PyExc_ValueError, "batch declares %zd records, found %zd", count, n);
            return -1;
        }
        if (stat_varint(&r, &length, st) < 0)
            return -1;
        start = r.pos;
        if (length < 0 || length > r.end - r.pos) {
            PyErr_Format(PyExc_ValueError, "record length %d exceeds the batch", (int)length);
            return -1;
        }
        if (st && r.buf[r.pos] != 0)
            st->canonical = 0;
        r.pos += 1; /* Attributes: unused since magic 2 */
        at = r.pos;
        if (read_raw(&r, 10, &raw) < 0) /* TimestampDelta */
            return -1;
        if (st && st->canonical && !is_minimal(&r, at, raw))
            st->canonical = 0;
        ts = (int64_t)((uint64_t)base_ts + (raw >> 1 ^ (~(raw & 1) + 1)));
        if (ts > top)
            top = ts;
        if (stat_varint(&r, &field, st) < 0) /* OffsetDelta */
            return -1;
        if (field != n)
            in_order = 0;
        offset_delta = field;
        /* Key, then Value */
        for (int i = 0; i < 2; i++) {
            if (stat_varint(&r, &field, st) < 0 || skip_field(&r, field) < 0)
                return -1;
            if (i == 0 && st) {
                keyless = field < 0;
                if (keyless && st->null_total++ < st->cap && append_item(st->null_keys, PyLong_FromSsize_t(n)) < 0)
                    return -1;
                if (stat_timestamp(st, n, raw, offset_delta, keyless) < 0)
                    return -1;
            }
        }
        if (stat_varint(&r, &headers, st) < 0)
            return -1;
        if (headers < 0) {
            PyErr_Format(PyExc_ValueError, "negative header count %d", (int)headers);
            return -1;
        }
        for (int32_t h = 0; h < headers; h++) {
            if (stat_varint(&r, &field, st) < 0)
                return -1;
            if (field < 0) {
                PyErr_Format(PyExc_ValueError, "negative header key length %d", (int)field);
                return -1;
            }
            at = r.pos;
            if (skip_field(&r, field) < 0)
                return -1;
            /* a key the broker would decode and encode again; only ASCII is kept as it is */
            for (; st && st->canonical && at < r.pos; at++)
                if (r.buf[at] >= 0x80)
                    st->canonical = 0;
            if (stat_varint(&r, &field, st) < 0 || skip_field(&r, field) < 0)
                return -1;
        }
        if (r.pos - start != length) {
            PyErr_Format(PyExc_ValueError, "record declares %d bytes but holds %zd", (int)length, r.pos - start);
            return -1;
        }
    }
    if (r.pos != r.end) {
        PyErr_Format(PyExc_ValueError, "%zd bytes left after %zd records", r.end - r.pos, count);
        return -1;
    }
    if (st && !in_order)
        st->canonical = 0;
    *max_ts = top;
    return in_order;
}

static PyObject *
walk(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    long long base_ts;
    int64_t max_ts;
    if (!PyArg_ParseTuple(args, "y*nL:walk", &view, &count, &base_ts))
        return NULL;
    reader r = {(const uint8_t *)view.buf, 0, view.len};
    int in_order = walk_records(&r, count, (int64_t)base_ts, &max_ts, NULL);
    PyBuffer_Release(&view);
    return in_order < 0 ? NULL : Py_BuildValue("OL", in_order ? Py_True : Py_False, (long long)max_ts);
}

static PyObject *
scan(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    scan_stats st = {0};
    long long base_ts, now, before, after;
    if (!PyArg_ParseTuple(args, "y*nLppLLLn:scan", &view, &count, &base_ts, &st.compact, &st.check_ts, &now, &before,
                          &after, &st.cap))
        return NULL;
    st.base_ts = base_ts, st.now = now, st.before = before, st.after = after;
    st.canonical = 1;
    st.null_keys = PyList_New(0);
    st.bad_ts = PyList_New(0);
    PyObject *result = NULL;
    int64_t max_ts;
    if (st.null_keys && st.bad_ts) {
        reader r = {(const uint8_t *)view.buf, 0, view.len};
        int in_order = walk_records(&r, count, st.base_ts, &max_ts, &st);
        if (in_order >= 0)
            result = Py_BuildValue("OOOnOnLLL", in_order ? Py_True : Py_False, st.canonical ? Py_True : Py_False,
                                   st.null_keys, st.null_total, st.bad_ts, st.bad_total,
                                   (long long)st.first_delta, (long long)st.max_delta, (long long)max_ts);
    }
    Py_XDECREF(st.null_keys);
    Py_XDECREF(st.bad_ts);
    PyBuffer_Release(&view);
    return result;
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

#include "_produce.c"

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(records, count, base_timestamp) -> (offset deltas in order, max timestamp); ValueError if malformed"},
    {"scan", scan, METH_VARARGS,
     "scan(records, count, base_timestamp, compact, check_timestamps, now, before_max_ms, after_max_ms, cap) -> "
     "(in_order, canonical, null_key_indexes, null_keys, bad_timestamps, bad_timestamp_count, first_delta, "
     "max_delta, max_timestamp); ValueError if malformed"},
    {"seek_timestamp", seek_timestamp, METH_VARARGS,
     "seek_timestamp(buf, target) -> (position of the first whole batch with MaxTimestamp >= target or -1, next)"},
    {"produce_request", (PyCFunction)(void (*)(void))produce_request, METH_FASTCALL,
     "produce_request(classes, frame, version) -> (header, request), or None for a frame not of the plain shape"},
    {"check_batch", (PyCFunction)(void (*)(void))check_batch, METH_FASTCALL,
     "check_batch(batch, max_message_bytes, BatchHeader) -> the header of a valid uncompressed batch (CRC aside) "
     "with its true MaxTimestamp, else None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walk", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__walk(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", 3) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
