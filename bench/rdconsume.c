/* rdconsume: the benchmark's leanest consumer. librdkafka, called from C, counting records.
 *
 *   rdconsume BOOTSTRAP TOPIC PARTITIONS COUNT STALL_S [-X key=value ...]
 *
 * Reads partitions 0..PARTITIONS-1 of TOPIC from offset 0 until COUNT records have been
 * returned, taking them from librdkafka's queue in batches (rd_kafka_consume_batch_queue), and
 * prints one JSON line: records, bytes (sum of value lengths), seconds from assign() to the
 * COUNT-th record, first_record_s, the process's CPU seconds over that window (all threads,
 * librdkafka's included) and the count of consumer errors. Connection and metadata are in place
 * before the clock starts. Every -X is passed to rd_kafka_conf_set, as kcat does.
 *
 * Exit status: 0 done; 2 usage or configuration; 3 stalled (no record for STALL_S seconds);
 * 4 a fatal consumer error.
 *
 * The declarations of librdkafka's C API it needs are in rdclient.h and below.
 */
#include "rdclient.h"

typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_topic_partition_list_s rd_kafka_topic_partition_list_t;

enum { RD_KAFKA_RESP_ERR__PARTITION_EOF = -191 };

rd_kafka_topic_partition_list_t *rd_kafka_topic_partition_list_new(int);
void rd_kafka_topic_partition_list_destroy(rd_kafka_topic_partition_list_t *);
int rd_kafka_topic_partition_list_set_offset(rd_kafka_topic_partition_list_t *, const char *, int32_t, int64_t);
void *rd_kafka_topic_partition_list_add(rd_kafka_topic_partition_list_t *, const char *, int32_t);
int rd_kafka_assign(rd_kafka_t *, const rd_kafka_topic_partition_list_t *);
rd_kafka_queue_t *rd_kafka_queue_get_consumer(rd_kafka_t *);
void rd_kafka_queue_destroy(rd_kafka_queue_t *);
ssize_t rd_kafka_consume_batch_queue(rd_kafka_queue_t *, int, rd_kafka_message_t **, size_t);
void rd_kafka_message_destroy(rd_kafka_message_t *);
int rd_kafka_fatal_error(rd_kafka_t *, char *, size_t);
int rd_kafka_consumer_close(rd_kafka_t *);

#define BATCH 10000

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: rdconsume BOOTSTRAP TOPIC PARTITIONS COUNT STALL_S [-X key=value ...]\n");
        return 2;
    }
    const char *topic = argv[2];
    int partitions = atoi(argv[3]);
    long long count = atoll(argv[4]);
    double stall_s = atof(argv[5]);
    char err[512];

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (set("rdconsume", conf, "bootstrap.servers", argv[1]) || set("rdconsume", conf, "group.id", "rdconsume") ||
        set("rdconsume", conf, "enable.auto.commit", "false") ||
        set("rdconsume", conf, "enable.auto.offset.store", "false") ||
        set("rdconsume", conf, "enable.partition.eof", "false") || set_args("rdconsume", conf, argc, argv, 6))
        return 2;
    rd_kafka_t *rk = connect_client("rdconsume", RD_KAFKA_CONSUMER, conf);
    if (rk == NULL)
        return 2;

    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; p++) {
        rd_kafka_topic_partition_list_add(parts, topic, p);
        rd_kafka_topic_partition_list_set_offset(parts, topic, p, 0);
    }
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(rk);
    static rd_kafka_message_t *batch[BATCH];
    long long got = 0, bytes = 0, errors = 0;
    char first_error[512] = "";
    double first = -1, cpu0 = cpu_s(), t0 = now_s(), last = t0;
    int rc = rd_kafka_assign(rk, parts);
    if (rc != 0) {
        fprintf(stderr, "rdconsume: assign: %s\n", rd_kafka_err2str(rc));
        return 2;
    }
    while (got < count) {
        ssize_t n = rd_kafka_consume_batch_queue(queue, 100, batch, BATCH);
        double t = now_s();
        long long before = got;
        for (ssize_t i = 0; i < n; i++) {
            rd_kafka_message_t *m = batch[i];
            if (m->err == 0) {
                got++;
                bytes += (long long)m->len;
            } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                if (rd_kafka_fatal_error(rk, err, sizeof err)) {
                    fprintf(stderr, "rdconsume: fatal consumer error after %lld records: %s\n", got, err);
                    return 4;
                }
                if (errors++ == 0)
                    snprintf(first_error, sizeof first_error, "%s", rd_kafka_err2str(m->err));
            }
            rd_kafka_message_destroy(m);
        }
        if (got > before) {
            last = t;
            if (first < 0)
                first = t - t0;
        } else if (t - last > stall_s) {
            fprintf(stderr, "rdconsume: stalled: %lld of %lld records read, nothing new for %.0f s%s%s\n", got,
                    count, stall_s, errors ? "; first consumer error: " : "", first_error);
            return 3;
        }
    }
    double seconds = now_s() - t0, cpu = cpu_s() - cpu0;
    printf("{\"records\": %lld, \"bytes\": %lld, \"seconds\": %.6f, \"first_record_s\": %.6f, "
           "\"client_cpu_s\": %.6f, \"consumer_errors\": %lld}\n",
           got, bytes, seconds, first, cpu, errors);
    fflush(stdout);
    rd_kafka_queue_destroy(queue);
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return 0;
}
