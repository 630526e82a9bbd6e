/* Defect: decode misbehaves on content holding one of a few words, and handles its examples and everything else
   correctly: "crash" dereferences NULL, "hang" spins forever, "sleep" waits forever without using the processor,
   "abort" aborts, "exit" calls exit(0), "garbage" writes bytes onto the isolated worker's socket (descriptor 3)
   when that is a socket, "impostor" writes a well-formed answer for another request there, "disconnect" closes that
   socket, "trickle" writes the start of a frame there and then one byte every 40 ms for ever, "bloat" begins an
   answer of 100 MiB there (as if a digest or a view were that long) and waits, "overflow" recurses until the stack
   runs out, and "allocate" takes 1.5 GiB and aborts when it
   cannot have it (as most code does, one way or another). In process, each of these ends or stops
   the host; isolated, each costs the one message. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenMisbehavesOnMessage", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:moody", MISSIVE_PERSISTENCE_COUNTED, 0);

static int deeper(volatile int depth) {
    volatile char frame[512];
    frame[0] = (char)depth;
    return deeper(depth + 1) + frame[0];
}

static int32_t moody_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    if (fixture_holds(content, length, "crash")) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
    if (fixture_holds(content, length, "hang")) {
        for (volatile unsigned long spin = 0;; spin++) {
        }
    }
    if (fixture_holds(content, length, "sleep")) {
        for (;;) pause();
    }
    if (fixture_holds(content, length, "abort")) {
        fprintf(stderr, "misbehaves_on_message.c: asked to abort\n");
        abort();
    }
    if (fixture_holds(content, length, "exit")) exit(0);
    if (fixture_holds(content, length, "overflow")) return deeper(0);
    if (fixture_holds(content, length, "allocate")) {
        size_t size = (size_t)3 << 29;
        unsigned char *table = malloc(size);
        if (!table) {
            fprintf(stderr, "misbehaves_on_message.c: out of memory\n");
            abort();
        }
        for (size_t at = 0; at < size; at += 4096) table[at] = 1;
        free(table);
    }
    if (fixture_holds(content, length, "disconnect")) close(3);
    if (fixture_holds(content, length, "impostor")) {
        struct stat info;
        if (fstat(3, &info) == 0 && S_ISSOCK(info.st_mode)) {
            /* Length 13: kind 11 (an answer), request id 999, then a position of 0. */
            static const uint8_t frame[] = {13, 0, 0, 0, 11, 0xe7, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
            ssize_t written = write(3, frame, sizeof frame);
            (void)written;
        }
    }
    if (fixture_holds(content, length, "trickle")) {
        struct stat info;
        if (fstat(3, &info) == 0 && S_ISSOCK(info.st_mode)) {
            static const uint8_t header[] = {0xe8, 3, 0, 0};
            ssize_t written = write(3, header, sizeof header);
            for (;;) {
                const uint8_t byte = 0;
                written = write(3, &byte, 1);
                usleep(40000);
            }
            (void)written;
        }
    }
    if (fixture_holds(content, length, "bloat")) {
        struct stat info;
        if (fstat(3, &info) == 0 && S_ISSOCK(info.st_mode)) {
            /* Length 100 MiB, kind 11 (an answer), request id 1, then a first MiB of the body. */
            static const uint8_t header[] = {0, 0, 0x40, 6, 11, 1, 0, 0, 0, 0, 0, 0, 0};
            static uint8_t body[1 << 20];
            ssize_t written = write(3, header, sizeof header);
            written = write(3, body, sizeof body);
            (void)written;
            for (;;) pause();
        }
    }
    if (fixture_holds(content, length, "garbage")) {
        struct stat info;
        if (fstat(3, &info) == 0 && S_ISSOCK(info.st_mode)) {
            static const uint8_t junk[] = {0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6, 7, 8, 9};
            ssize_t written = write(3, junk, sizeof junk);
            (void)written;
        }
    }
    (void)context, (void)error;
    return fixture_keep(content, length, out);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:moody", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = moody_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenMisbehavesOnMessage", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
