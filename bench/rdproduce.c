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
 * commit_seconds, commit_flush_seconds, commit_queued_records, delivery_errors and first_error,
 * and threads: each thread's name and CPU seconds over the window (/proc/self/task/<tid>/schedstat,
 * nanoseconds), so that the busiest of librdkafka's threads shows.
 *
 * Exit status: 0 done; 2 usage or configuration; 3 a delivery error or an undelivered record;
 * 4 a transactional call failed.
 *
 * The declarations of librdkafka's C API it needs are in rdclient.h and below.
 */
#include "rdclient.h"

#include <dirent.h>

typedef struct rd_kafka_error_s rd_kafka_error_t;

enum { RD_KAFKA_RESP_ERR__QUEUE_FULL = -184, RD_KAFKA_MSG_F_COPY = 2 };

void rd_kafka_conf_set_dr_msg_cb(rd_kafka_conf_t *, void (*)(rd_kafka_t *, const rd_kafka_message_t *, void *));
rd_kafka_topic_t *rd_kafka_topic_new(rd_kafka_t *, const char *, void *);
void rd_kafka_topic_destroy(rd_kafka_topic_t *);
int rd_kafka_produce(rd_kafka_topic_t *, int32_t, int, void *, size_t, const void *, size_t, void *);
int rd_kafka_last_error(void);
int rd_kafka_poll(rd_kafka_t *, int);
int rd_kafka_flush(rd_kafka_t *, int);
int rd_kafka_outq_len(rd_kafka_t *);
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

#define MAX_THREADS 64

struct thread_cpu {
    int tid;
    char name[32];
    double cpu_s;
};

/* CPU seconds of every thread of this process so far; returns how many (at most MAX_THREADS). */
static int threads_cpu(struct thread_cpu *out) {
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    while (dir != NULL && n < MAX_THREADS && (e = readdir(dir)) != NULL) {
        char path[96];
        unsigned long long ns = 0;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        int ok = fscanf(f, "%llu", &ns) == 1;
        fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        out[n].name[0] = 0;
        if ((f = fopen(path, "r")) != NULL) {
            if (fgets(out[n].name, sizeof out[n].name, f) != NULL)
                out[n].name[strcspn(out[n].name, "\n\"\\")] = 0;
            fclose(f);
        }
        if (ok)
            out[n].tid = atoi(e->d_name), out[n].cpu_s = ns / 1e9, n++;
    }
    if (dir != NULL)
        closedir(dir);
    return n;
}

/* Prints `"threads": [...]`: each thread's CPU between the two readings. */
static void print_threads(const struct thread_cpu *before, int nb, const struct thread_cpu *after, int na) {
    printf("\"threads\": [");
    for (int i = 0; i < na; i++) {
        double base = 0;
        for (int j = 0; j < nb; j++)
            if (before[j].tid == after[i].tid)
                base = before[j].cpu_s;
        printf("%s{\"name\": \"%s\", \"cpu_s\": %.6f}", i ? ", " : "", after[i].name, after[i].cpu_s - base);
    }
    printf("]");
}

struct commits {
    long long count, queued;
    double seconds, flush_seconds;
};

/* Deliver the queued records, then commit: the pause split into its two parts. Returns when it ended. */
static double commit(rd_kafka_t *rk, struct commits *stats) {
    double c0 = now_s();
    stats->queued += rd_kafka_outq_len(rk);
    deliver_all(rk, "flush before commit");
    double c1 = now_s();
    txn(rd_kafka_commit_transaction(rk, TIMEOUT_MS), "commit_transaction");
    double c2 = now_s();
    stats->count++, stats->flush_seconds += c1 - c0, stats->seconds += c2 - c0;
    return c2;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: rdproduce BOOTSTRAP TOPIC PARTITIONS COUNT COMMIT_MS WARMUP_TOPIC [-X key=value ...]\n");
        return 2;
    }
    int partitions = atoi(argv[3]);
    long long count = atoll(argv[4]);
    double commit_s = atof(argv[5]) / 1000.0;
    if (partitions < 1 || count < 1) {
        fprintf(stderr, "rdproduce: PARTITIONS and COUNT must be positive\n");
        return 2;
    }

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (set("rdproduce", conf, "bootstrap.servers", argv[1]) || set_args("rdproduce", conf, argc, argv, 7))
        return 2;
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = connect_client("rdproduce", RD_KAFKA_PRODUCER, conf);
    if (rk == NULL)
        return 2;

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

    struct commits stats = {0};
    static struct thread_cpu threads0[MAX_THREADS], threads1[MAX_THREADS];
    int nthreads0 = threads_cpu(threads0);
    double cpu0 = cpu_s(), t0 = now_s(), next_commit = t0 + commit_s;
    if (commit_s > 0)
        txn(rd_kafka_begin_transaction(rk), "begin_transaction");
    for (long long i = 0; i < count; i++) {
        produce_one(rk, rkt, (int32_t)(i % partitions), values[i % VALUES]);
        if (commit_s > 0 && (i & 63) == 0 && now_s() >= next_commit) {
            next_commit = commit(rk, &stats) + commit_s;
            txn(rd_kafka_begin_transaction(rk), "begin_transaction");
        }
    }
    if (commit_s > 0)
        commit(rk, &stats);
    else
        deliver_all(rk, "flush");
    double seconds = now_s() - t0, cpu = cpu_s() - cpu0;
    int nthreads1 = threads_cpu(threads1);
    printf("{\"records\": %lld, \"seconds\": %.6f, \"client_cpu_s\": %.6f, \"transactions\": %lld, "
           "\"commit_seconds\": %.6f, \"commit_flush_seconds\": %.6f, \"commit_queued_records\": %lld, "
           "\"delivery_errors\": %lld, ",
           count, seconds, cpu, stats.count, stats.seconds, stats.flush_seconds, stats.queued, delivery_errors);
    print_threads(threads0, nthreads0, threads1, nthreads1);
    printf("}\n");
    fflush(stdout);
    rd_kafka_topic_destroy(warmup);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return 0;
}
