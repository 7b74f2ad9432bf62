/* rdproduce: the benchmark's leanest producer. librdkafka, called from C.
 *
 *   rdproduce BOOTSTRAP TOPIC PARTITIONS COUNT COMMIT_MS WARMUP_TOPIC [-X key=value ...]
 *
 * Produces COUNT records of 1 KiB (64 different random values, partitions 0..PARTITIONS-1 in
 * turn) to TOPIC, the same loop as the Python producer of bench/workloads.py: when librdkafka's
 * queue is full it waits in rd_kafka_poll() for 1 ms and tries again. With COMMIT_MS > 0 the
 * producer is transactional (a transactional.id must be given with -X): it commits whenever
 * COMMIT_MS have passed since the last commit returned, first delivering the queued records
 * (rd_kafka_flush) and then committing, so that the pause splits into the two.
 *
 * Before the clock: metadata, then one record delivered to WARMUP_TOPIC (a whole one-record
 * transaction for a transactional producer, after init_transactions). The clock stops when the
 * last record is delivered (or the last commit returns). Prints one JSON line: records, seconds,
 * client_cpu_s (the process's CPU over the window, librdkafka's threads included), transactions,
 * commit_seconds, commit_flush_seconds, commit_queued_records, delivery_errors and first_error.
 *
 * Exit status: 0 done; 2 usage or configuration; 3 a delivery error or an undelivered record;
 * 4 a transactional call failed.
 *
 * As in rdconsume.c, the declarations below repeat librdkafka's public C API (rdkafka.h), so that
 * building needs only a C compiler and the shared library inside the confluent-kafka wheel.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_error_s rd_kafka_error_t;
typedef struct rd_kafka_metadata rd_kafka_metadata_t;

typedef struct rd_kafka_message_s {
    int err;
    rd_kafka_topic_t *rkt;
    int32_t partition;
    void *payload;
    size_t len;
    void *key;
    size_t key_len;
    int64_t offset;
    void *_private;
} rd_kafka_message_t;

enum { RD_KAFKA_PRODUCER = 0, RD_KAFKA_CONF_OK = 0, RD_KAFKA_RESP_ERR__QUEUE_FULL = -184, RD_KAFKA_MSG_F_COPY = 2 };

rd_kafka_conf_t *rd_kafka_conf_new(void);
int rd_kafka_conf_set(rd_kafka_conf_t *, const char *, const char *, char *, size_t);
void rd_kafka_conf_set_dr_msg_cb(rd_kafka_conf_t *, void (*)(rd_kafka_t *, const rd_kafka_message_t *, void *));
rd_kafka_t *rd_kafka_new(int, rd_kafka_conf_t *, char *, size_t);
void rd_kafka_destroy(rd_kafka_t *);
int rd_kafka_metadata(rd_kafka_t *, int, rd_kafka_topic_t *, const rd_kafka_metadata_t **, int);
void rd_kafka_metadata_destroy(const rd_kafka_metadata_t *);
rd_kafka_topic_t *rd_kafka_topic_new(rd_kafka_t *, const char *, void *);
void rd_kafka_topic_destroy(rd_kafka_topic_t *);
int rd_kafka_produce(rd_kafka_topic_t *, int32_t, int, void *, size_t, const void *, size_t, void *);
int rd_kafka_last_error(void);
int rd_kafka_poll(rd_kafka_t *, int);
int rd_kafka_flush(rd_kafka_t *, int);
int rd_kafka_outq_len(rd_kafka_t *);
const char *rd_kafka_err2str(int);
rd_kafka_error_t *rd_kafka_init_transactions(rd_kafka_t *, int);
rd_kafka_error_t *rd_kafka_begin_transaction(rd_kafka_t *);
rd_kafka_error_t *rd_kafka_commit_transaction(rd_kafka_t *, int);
const char *rd_kafka_error_string(const rd_kafka_error_t *);
void rd_kafka_error_destroy(rd_kafka_error_t *);

#define RECORD_SIZE 1024
#define VALUES 64
#define TIMEOUT_MS 120000

static long long delivery_errors = 0;
static char first_error[512] = "";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int set(rd_kafka_conf_t *conf, const char *key, const char *value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "rdproduce: %s=%s: %s\n", key, value, err);
        return -1;
    }
    return 0;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
    (void)rk, (void)opaque;
    if (m->err != 0 && delivery_errors++ == 0)
        snprintf(first_error, sizeof first_error, "%s", rd_kafka_err2str(m->err));
}

static void txn(rd_kafka_error_t *error, const char *what) {
    if (error != NULL) {
        fprintf(stderr, "rdproduce: %s: %s\n", what, rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
        exit(4);
    }
}

static void produce_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, int32_t partition, void *value) {
    while (rd_kafka_produce(rkt, partition, RD_KAFKA_MSG_F_COPY, value, RECORD_SIZE, NULL, 0, NULL) == -1) {
        int err = rd_kafka_last_error();
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            fprintf(stderr, "rdproduce: produce: %s\n", rd_kafka_err2str(err));
            exit(3);
        }
        rd_kafka_poll(rk, 1);
    }
}

static void deliver_all(rd_kafka_t *rk, const char *what) {
    int err = rd_kafka_flush(rk, TIMEOUT_MS);
    if (err != 0 || delivery_errors) {
        fprintf(stderr, "rdproduce: %s: %d undelivered, %lld delivery errors%s%s\n", what, rd_kafka_outq_len(rk),
                delivery_errors, delivery_errors ? "; first: " : "", first_error);
        exit(3);
    }
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: rdproduce BOOTSTRAP TOPIC PARTITIONS COUNT COMMIT_MS WARMUP_TOPIC [-X key=value ...]\n");
        return 2;
    }
    int partitions = atoi(argv[3]);
    long long count = atoll(argv[4]);
    double commit_s = atof(argv[5]) / 1000.0;
    char err[512];
    if (partitions < 1 || count < 1) {
        fprintf(stderr, "rdproduce: PARTITIONS and COUNT must be positive\n");
        return 2;
    }

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (set(conf, "bootstrap.servers", argv[1]))
        return 2;
    for (int i = 7; i < argc; i++) {
        if (strcmp(argv[i], "-X") != 0 || i + 1 >= argc) {
            fprintf(stderr, "rdproduce: expected -X key=value, got %s\n", argv[i]);
            return 2;
        }
        char *kv = argv[++i], *eq = strchr(kv, '=');
        if (eq == NULL) {
            fprintf(stderr, "rdproduce: expected key=value, got %s\n", kv);
            return 2;
        }
        *eq = '\0';
        if (set(conf, kv, eq + 1))
            return 2;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == NULL) {
        fprintf(stderr, "rdproduce: %s\n", err);
        return 2;
    }
    const rd_kafka_metadata_t *md;
    int rc = rd_kafka_metadata(rk, 1, NULL, &md, 30000);
    if (rc != 0) {
        fprintf(stderr, "rdproduce: metadata: %s\n", rd_kafka_err2str(rc));
        return 2;
    }
    rd_kafka_metadata_destroy(md);

    static unsigned char values[VALUES][RECORD_SIZE];
    FILE *random = fopen("/dev/urandom", "rb");
    if (random == NULL || fread(values, RECORD_SIZE, VALUES, random) != VALUES) {
        fprintf(stderr, "rdproduce: cannot read /dev/urandom\n");
        return 2;
    }
    fclose(random);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, argv[2], NULL);
    rd_kafka_topic_t *warmup = rd_kafka_topic_new(rk, argv[6], NULL);

    if (commit_s > 0) {
        txn(rd_kafka_init_transactions(rk, 30000), "init_transactions");
        txn(rd_kafka_begin_transaction(rk), "begin_transaction");
    }
    produce_one(rk, warmup, 0, values[0]);
    if (commit_s > 0)
        txn(rd_kafka_commit_transaction(rk, 30000), "warm-up commit_transaction");
    else
        deliver_all(rk, "warm-up");

    long long commits = 0, queued = 0;
    double commit_time = 0, flush_time = 0;
    double cpu0 = cpu_s(), t0 = now_s(), next_commit = t0 + commit_s;
    if (commit_s > 0)
        txn(rd_kafka_begin_transaction(rk), "begin_transaction");
    for (long long i = 0; i < count; i++) {
        produce_one(rk, rkt, (int32_t)(i % partitions), values[i % VALUES]);
        if (commit_s > 0 && (i & 63) == 0 && now_s() >= next_commit) {
            double c0 = now_s();
            queued += rd_kafka_outq_len(rk);
            deliver_all(rk, "flush before commit");
            double c1 = now_s();
            txn(rd_kafka_commit_transaction(rk, TIMEOUT_MS), "commit_transaction");
            double c2 = now_s();
            commits++, flush_time += c1 - c0, commit_time += c2 - c0;
            txn(rd_kafka_begin_transaction(rk), "begin_transaction");
            next_commit = c2 + commit_s;
        }
    }
    if (commit_s > 0) {
        double c0 = now_s();
        queued += rd_kafka_outq_len(rk);
        deliver_all(rk, "flush before commit");
        double c1 = now_s();
        txn(rd_kafka_commit_transaction(rk, TIMEOUT_MS), "commit_transaction");
        double c2 = now_s();
        commits++, flush_time += c1 - c0, commit_time += c2 - c0;
    } else {
        deliver_all(rk, "flush");
    }
    double seconds = now_s() - t0, cpu = cpu_s() - cpu0;
    printf("{\"records\": %lld, \"seconds\": %.6f, \"client_cpu_s\": %.6f, \"transactions\": %lld, "
           "\"commit_seconds\": %.6f, \"commit_flush_seconds\": %.6f, \"commit_queued_records\": %lld, "
           "\"delivery_errors\": %lld}\n",
           count, seconds, cpu, commits, commit_time, flush_time, queued, delivery_errors);
    fflush(stdout);
    rd_kafka_topic_destroy(warmup);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return 0;
}
