/* What rdconsume.c and rdproduce.c share: the part of librdkafka's public C API (rdkafka.h,
 * stable since 1.x) that both call, repeated here so that building needs only a C compiler and the
 * shared library inside the confluent-kafka wheel, not the library's development package; the
 * clocks; and the configuration from `-X key=value` arguments, as kcat takes them.
 */
#ifndef BENCH_RDCLIENT_H
#define BENCH_RDCLIENT_H

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

enum { RD_KAFKA_PRODUCER = 0, RD_KAFKA_CONSUMER = 1, RD_KAFKA_CONF_OK = 0 };

rd_kafka_conf_t *rd_kafka_conf_new(void);
int rd_kafka_conf_set(rd_kafka_conf_t *, const char *, const char *, char *, size_t);
rd_kafka_t *rd_kafka_new(int, rd_kafka_conf_t *, char *, size_t);
void rd_kafka_destroy(rd_kafka_t *);
int rd_kafka_metadata(rd_kafka_t *, int, rd_kafka_topic_t *, const rd_kafka_metadata_t **, int);
void rd_kafka_metadata_destroy(const rd_kafka_metadata_t *);
const char *rd_kafka_err2str(int);

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds of the whole process, librdkafka's threads included */
static inline double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static inline int set(const char *prog, rd_kafka_conf_t *conf, const char *key, const char *value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "%s: %s=%s: %s\n", prog, key, value, err);
        return -1;
    }
    return 0;
}

/* Every `-X key=value` in argv[first..argc-1] into conf; -1 (said on stderr) on anything else. */
static inline int set_args(const char *prog, rd_kafka_conf_t *conf, int argc, char **argv, int first) {
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "-X") != 0 || i + 1 >= argc) {
            fprintf(stderr, "%s: expected -X key=value, got %s\n", prog, argv[i]);
            return -1;
        }
        char *kv = argv[++i], *eq = strchr(kv, '=');
        if (eq == NULL) {
            fprintf(stderr, "%s: expected key=value, got %s\n", prog, kv);
            return -1;
        }
        *eq = '\0';
        if (set(prog, conf, kv, eq + 1))
            return -1;
    }
    return 0;
}

/* The client with its connection and metadata in place, or NULL (said on stderr). */
static inline rd_kafka_t *connect_client(const char *prog, int type, rd_kafka_conf_t *conf) {
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);
    if (rk == NULL) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return NULL;
    }
    const rd_kafka_metadata_t *md;
    int rc = rd_kafka_metadata(rk, 1, NULL, &md, 30000);
    if (rc != 0) {
        fprintf(stderr, "%s: metadata: %s\n", prog, rd_kafka_err2str(rc));
        return NULL;
    }
    rd_kafka_metadata_destroy(md);
    return rk;
}

#endif
