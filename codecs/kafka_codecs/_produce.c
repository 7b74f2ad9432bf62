/* Included by _walk.c (one translation unit, one extension): a Produce request read, and the checks
 * of a produced batch's header, in C. Both read untrusted bytes; both have Python twins that give
 * the same answers (tests/codecs/test_codecs_native_produce.py holds them to it, and runs a build
 * with AddressSanitizer over a corpus of damaged requests and batches).
 *
 * produce_request(classes, frame, version) -> (header, request) | None
 *
 * The twin: shim.protocol.produce_wire.decode_py. Reads a ProduceRequest frame (request header and
 * body, v0-13) of the plain shape only: anything else -- a tagged field, a null where the plain
 * shape has a value, a non-ASCII string or one over 32767 bytes, a varint longer than four bytes
 * or not in its shortest form, a length or count that does not fit the bytes left, bytes after the body -- gives None,
 * and the caller takes kio's path, which decides as it always did. `classes` is (RequestHeader,
 * ProduceRequest, TopicData, PartitionData, UUID): the first four tuple subclasses (NamedTuples),
 * built here as tuple.__new__ builds them; UUID is called with bytes= for a v13 topic id that is
 * not all zeros (all zeros: None). Records are memoryview slices of the frame, not copies.
 *
 * check_batch(batch, max_message_bytes, BatchHeader) -> BatchHeader | None
 *
 * The twin: shim.storage.validation.validate_client_batch, less the CRC (computed by the caller
 * with the crc32c package). For an uncompressed v2 batch that passes every check that function
 * makes but the CRC, its header with MaxTimestamp set to the records' largest timestamp (at least
 * -1), as that function returns it; None for a compressed batch and for any batch that fails a
 * check: the caller then runs the Python checks, which say which one failed, in Kafka's order. */

#define PLAIN_OTHER 1 /* not of the plain shape: the caller takes kio's path */

typedef struct {
    const uint8_t *b;
    Py_ssize_t end;
    PyObject *view; /* memoryview of the frame, records are sliced from it */
} frame_t;

static int
need(const frame_t *f, Py_ssize_t p, Py_ssize_t n)
{
    return p >= 0 && n >= 0 && n <= f->end - p ? 0 : PLAIN_OTHER;
}

/* produce_wire._uvarint: at most four bytes, in the shortest form. */
static int
plain_uvarint(const frame_t *f, Py_ssize_t *p, int64_t *out)
{
    Py_ssize_t q = *p;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++, q++) {
        if (q >= f->end)
            return PLAIN_OTHER;
        uint32_t b = f->b[q];
        if (b < 0x80) {
            if (i > 0 && b == 0)
                return PLAIN_OTHER; /* overlong */
            *out = v | b << (7 * i);
            *p = q + 1;
            return 0;
        }
        v |= (b & 0x7F) << (7 * i);
    }
    return PLAIN_OTHER; /* wider than four bytes */
}

/* produce_wire._ascii: n bytes at p as a str, ASCII only, at most MAX_STRING bytes (longer: kio's
 * path, where wirecheck refuses it as Kafka's generated readers do). */
#define MAX_STRING 0x7fff

static int
plain_ascii(const frame_t *f, Py_ssize_t p, int64_t n, PyObject **out)
{
    if (n < 0 || n > MAX_STRING || n > f->end - p)
        return PLAIN_OTHER;
    for (Py_ssize_t i = p; i < p + n; i++)
        if (f->b[i] >= 0x80)
            return PLAIN_OTHER;
    *out = PyUnicode_DecodeASCII((const char *)f->b + p, (Py_ssize_t)n, NULL);
    return *out == NULL ? -1 : 0;
}

/* An instance of the tuple subclass `cls` holding `n` new references (stolen, also on failure). */
static PyObject *
make_tuple(PyObject *cls, Py_ssize_t n, PyObject **items)
{
    PyTypeObject *t = (PyTypeObject *)cls;
    PyObject *o = t->tp_alloc(t, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (o == NULL || items[i] == NULL)
            Py_XDECREF(items[i]);
        else
            PyTuple_SET_ITEM(o, i, items[i]);
    }
    for (Py_ssize_t i = 0; o != NULL && i < n; i++)
        if (PyTuple_GET_ITEM(o, i) == NULL) {
            Py_DECREF(o);
            return NULL;
        }
    return o;
}

static int32_t
be32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static int16_t
be16(const uint8_t *p)
{
    return (int16_t)((uint16_t)p[0] << 8 | p[1]);
}

static int64_t
be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)(uint32_t)be32(p) << 32 | (uint32_t)be32(p + 4));
}

typedef struct {
    PyObject *header, *request, *topic, *partition, *uuid;
} classes_t;

/* One partition: (index, records). rc 0, PLAIN_OTHER or -1. */
static int
read_partition(frame_t *f, Py_ssize_t *pp, int flexible, const classes_t *c, PyObject **out)
{
    Py_ssize_t p = *pp, q;
    int64_t n;
    if (need(f, p, flexible ? 4 : 8))
        return PLAIN_OTHER;
    int32_t index = be32(f->b + p);
    if (flexible) {
        p += 4;
        if (plain_uvarint(f, &p, &n) || !(0 < n && n <= f->end - p + 1))
            return PLAIN_OTHER; /* a null batch included: kio's path answers it */
        q = p + n - 1;
        if (q >= f->end || f->b[q]) /* the partition's tagged fields */
            return PLAIN_OTHER;
        *pp = q + 1;
    } else {
        n = be32(f->b + p + 4);
        p += 8;
        if (!(0 <= n && n <= f->end - p))
            return PLAIN_OTHER;
        q = p + n;
        *pp = q;
    }
    PyObject *items[2] = {PyLong_FromLong(index), PySequence_GetSlice(f->view, p, q)};
    *out = make_tuple(c->partition, 2, items);
    return *out == NULL ? -1 : 0;
}

/* A topic's name (before v13) or id (v13), into items[0] and items[1]. */
static int
read_topic_key(frame_t *f, Py_ssize_t *pp, int version, const classes_t *c, PyObject **items)
{
    Py_ssize_t p = *pp;
    int64_t n;
    int rc;
    items[0] = items[1] = NULL;
    if (version >= 13) {
        if (need(f, p, 16))
            return PLAIN_OTHER;
        int zero = 1;
        for (int i = 0; i < 16; i++)
            zero &= f->b[p + i] == 0;
        Py_INCREF(Py_None);
        items[0] = Py_None;
        if (zero) {
            Py_INCREF(Py_None);
            items[1] = Py_None;
        } else {
            PyObject *raw = PyBytes_FromStringAndSize((const char *)f->b + p, 16);
            PyObject *kw = raw == NULL ? NULL : Py_BuildValue("{s:O}", "bytes", raw);
            PyObject *none = PyTuple_New(0);
            items[1] = kw == NULL || none == NULL ? NULL : PyObject_Call(c->uuid, none, kw);
            Py_XDECREF(raw);
            Py_XDECREF(kw);
            Py_XDECREF(none);
            if (items[1] == NULL)
                return -1;
        }
        *pp = p + 16;
        return 0;
    }
    if (version >= 9) {
        if (plain_uvarint(f, &p, &n))
            return PLAIN_OTHER;
        n -= 1; /* a null name (n = -1): kio's path */
    } else {
        if (need(f, p, 2))
            return PLAIN_OTHER;
        n = be16(f->b + p);
        p += 2;
    }
    if ((rc = plain_ascii(f, p, n, &items[0])) != 0)
        return rc;
    Py_INCREF(Py_None);
    items[1] = Py_None;
    *pp = p + n;
    return 0;
}

/* An array count: compact (length + 1, 0 for null) from v9, int32 (-1 for null) before; a null
 * array, or more items than bytes left, is not the plain shape. Nor is one whose items, at
 * `least` bytes each, cannot fit in what is left: the twin would run out of bytes reading them,
 * and the tuple for them is allocated before they are read, so it stays within the frame's size. */
static int
read_count(frame_t *f, Py_ssize_t *pp, int flexible, Py_ssize_t least, Py_ssize_t *count)
{
    int64_t n;
    if (flexible) {
        if (plain_uvarint(f, pp, &n) || !(0 < n && n <= f->end - *pp + 1))
            return PLAIN_OTHER;
        n -= 1;
    } else {
        if (need(f, *pp, 4))
            return PLAIN_OTHER;
        n = be32(f->b + *pp);
        *pp += 4;
        if (!(0 <= n && n <= f->end - *pp))
            return PLAIN_OTHER;
    }
    if (n > (f->end - *pp) / least)
        return PLAIN_OTHER;
    *count = (Py_ssize_t)n;
    return 0;
}

static int
read_topic(frame_t *f, Py_ssize_t *pp, int version, const classes_t *c, PyObject **out)
{
    int flexible = version >= 9, rc;
    PyObject *items[3] = {NULL, NULL, NULL};
    Py_ssize_t count;
    /* a partition: index, records length (a varint from v9) and records, tagged fields from v9 */
    Py_ssize_t least = flexible ? 6 : 8;
    if ((rc = read_topic_key(f, pp, version, c, items)) != 0 ||
        (rc = read_count(f, pp, flexible, least, &count)) != 0)
        goto fail;
    if ((items[2] = PyTuple_New(count)) == NULL) {
        rc = -1;
        goto fail;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = NULL;
        if ((rc = read_partition(f, pp, flexible, c, &part)) != 0)
            goto fail;
        PyTuple_SET_ITEM(items[2], i, part);
    }
    if (flexible) {
        if (*pp >= f->end || f->b[*pp]) { /* the topic's tagged fields */
            rc = PLAIN_OTHER;
            goto fail;
        }
        *pp += 1;
    }
    *out = make_tuple(c->topic, 3, items);
    return *out == NULL ? -1 : 0;
fail:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(items[i]);
    return rc;
}

/* The body after the request header: (transactional_id, acks, timeout_ms, topics). */
static int
read_body(frame_t *f, Py_ssize_t p, int version, const classes_t *c, PyObject **out)
{
    int flexible = version >= 9, rc;
    int64_t n = -1;
    PyObject *items[4] = {NULL, NULL, NULL, NULL};
    Py_ssize_t count;
    if (flexible) {
        if (plain_uvarint(f, &p, &n))
            return PLAIN_OTHER;
        n -= 1; /* 0: null */
    } else if (version >= 3) {
        if (need(f, p, 2))
            return PLAIN_OTHER;
        n = be16(f->b + p);
        p += 2;
    }
    if (n == -1) {
        Py_INCREF(Py_None);
        items[0] = Py_None;
    } else if ((rc = plain_ascii(f, p, n, &items[0])) != 0) {
        return rc;
    } else {
        p += n;
    }
    rc = PLAIN_OTHER;
    if (need(f, p, 6))
        goto fail;
    items[1] = PyLong_FromLong(be16(f->b + p));
    items[2] = PyLong_FromLong(be32(f->b + p + 2));
    p += 6;
    if (items[1] == NULL || items[2] == NULL) {
        rc = -1;
        goto fail;
    }
    /* a topic: its id (v13) or name, its partition count, tagged fields from v9 */
    if ((rc = read_count(f, &p, flexible, version >= 13 ? 18 : flexible ? 3 : 6, &count)) != 0)
        goto fail;
    if ((items[3] = PyTuple_New(count)) == NULL) {
        rc = -1;
        goto fail;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *topic = NULL;
        if ((rc = read_topic(f, &p, version, c, &topic)) != 0)
            goto fail;
        PyTuple_SET_ITEM(items[3], i, topic);
    }
    rc = PLAIN_OTHER;
    if (flexible && (p >= f->end || f->b[p++])) /* the request's tagged fields */
        goto fail;
    if (p != f->end) /* bytes after the body */
        goto fail;
    *out = make_tuple(c->request, 4, items);
    return *out == NULL ? -1 : 0;
fail:
    for (int i = 0; i < 4; i++)
        Py_XDECREF(items[i]);
    return rc;
}

/* The request header: (api_key 0, version, correlation_id, client_id), the tagged fields from v9. */
static int
read_header(frame_t *f, Py_ssize_t *pp, int version, const classes_t *c, PyObject **out)
{
    int rc;
    if (need(f, 0, 10))
        return PLAIN_OTHER;
    int16_t n = be16(f->b + 8);
    PyObject *items[4] = {PyLong_FromLong(0), PyLong_FromLong(version), PyLong_FromLong(be32(f->b + 4)), NULL};
    *pp = 10;
    if (n == -1) {
        Py_INCREF(Py_None);
        items[3] = Py_None;
    } else if ((rc = plain_ascii(f, 10, n, &items[3])) != 0) {
        for (int i = 0; i < 3; i++)
            Py_XDECREF(items[i]);
        return rc;
    } else {
        *pp += n;
    }
    if (version >= 9 && (*pp >= f->end || f->b[(*pp)++])) { /* the header's tagged fields */
        for (int i = 0; i < 4; i++)
            Py_XDECREF(items[i]);
        return PLAIN_OTHER;
    }
    *out = make_tuple(c->header, 4, items);
    return *out == NULL ? -1 : 0;
}

static int
tuple_class(PyObject *o)
{
    return PyType_Check(o) && PyType_FastSubclass((PyTypeObject *)o, Py_TPFLAGS_TUPLE_SUBCLASS);
}

static PyObject *
produce_request(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    classes_t c;
    if (nargs != 3 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 5)
        return PyErr_Format(PyExc_TypeError, "produce_request(classes, frame, version): classes is a 5-tuple");
    long version = PyLong_AsLong(args[2]);
    if (version == -1 && PyErr_Occurred())
        return NULL;
    if (version < 0 || version > 0x7FFF)
        return PyErr_Format(PyExc_ValueError, "produce_request: version %ld", version);
    PyObject **k = &PyTuple_GET_ITEM(args[0], 0);
    c.header = k[0], c.request = k[1], c.topic = k[2], c.partition = k[3], c.uuid = k[4];
    if (!tuple_class(c.header) || !tuple_class(c.request) || !tuple_class(c.topic) || !tuple_class(c.partition))
        return PyErr_Format(PyExc_TypeError, "produce_request: the first four classes must subclass tuple");
    Py_buffer buf;
    if (PyObject_GetBuffer(args[1], &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    frame_t f = {(const uint8_t *)buf.buf, buf.len, PyMemoryView_FromObject(args[1])};
    PyObject *header = NULL, *body = NULL, *result = NULL;
    Py_ssize_t p = 0;
    int rc = f.view == NULL ? -1 : read_header(&f, &p, (int)version, &c, &header);
    if (rc == 0)
        rc = read_body(&f, p, (int)version, &c, &body);
    if (rc == 0)
        result = PyTuple_Pack(2, header, body);
    else if (rc == PLAIN_OTHER)
        result = Py_NewRef(Py_None);
    Py_XDECREF(header);
    Py_XDECREF(body);
    Py_XDECREF(f.view);
    PyBuffer_Release(&buf);
    return result;
}

/* ---- a produced batch's header ---------------------------------------------------------- */

#define CONTROL_FLAG 0x20
#define TIMESTAMP_TYPE_MASK 0x08
#define COMPRESSION_MASK 0x07

static PyObject *
check_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !tuple_class(args[2]))
        return PyErr_Format(PyExc_TypeError, "check_batch(batch, max_message_bytes, BatchHeader)");
    long long max_bytes = PyLong_AsLongLong(args[1]);
    if (max_bytes == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint8_t *b = (const uint8_t *)buf.buf;
    Py_ssize_t n = buf.len;
    int64_t size = 0, count = 0, max_ts = 0;
    int ok = n >= BATCH_HEADER;
    if (ok) {
        size = LOG_OVERHEAD + (int64_t)be32(b + 8);
        int16_t attributes = be16(b + 21);
        count = be32(b + 57);
        ok = b[16] == 2 && size == n && be64(b) == 0 && size <= max_bytes && count > 0 &&
             count == (int64_t)be32(b + 23) + 1 && !(attributes & (CONTROL_FLAG | TIMESTAMP_TYPE_MASK)) &&
             !(be64(b + 43) >= 0 && be32(b + 53) < 0) && !(attributes & COMPRESSION_MASK);
    }
    if (ok) {
        reader r = {b + BATCH_HEADER, 0, n - BATCH_HEADER};
        if (walk_records(&r, (Py_ssize_t)count, be64(b + 27), &max_ts, NULL) < 0) {
            PyErr_Clear(); /* a malformed record: the Python checks say so */
            ok = 0;
        }
    }
    PyObject *result;
    if (!ok) {
        result = Py_NewRef(Py_None);
    } else {
        PyObject *items[13] = {
            PyLong_FromLong(0),          PyLong_FromLong(be32(b + 8)),  PyLong_FromLong(be32(b + 12)),
            PyLong_FromLong((int8_t)b[16]), PyLong_FromUnsignedLong((uint32_t)be32(b + 17)),
            PyLong_FromLong(be16(b + 21)), PyLong_FromLong(be32(b + 23)), PyLong_FromLongLong(be64(b + 27)),
            PyLong_FromLongLong(max_ts), PyLong_FromLongLong(be64(b + 43)), PyLong_FromLong(be16(b + 51)),
            PyLong_FromLong(be32(b + 53)), PyLong_FromLong(be32(b + 57)),
        };
        result = make_tuple(args[2], 13, items);
    }
    PyBuffer_Release(&buf);
    return result;
}
