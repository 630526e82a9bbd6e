/* Defect: the entry starts a thread of the plugin's own, which crashes (SIGSEGV, outside any call the host
   makes) as soon as a decode of content holding the text "crash" wakes it; that decode waits for the crash.
   Everything else decodes correctly. Its second example holds "crash", so that the checker meets it. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenCrashOnOwnThread", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:thread-crash", MISSIVE_PERSISTENCE_COUNTED, 0);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t woken = PTHREAD_COND_INITIALIZER;
static int crash_requested;

static void *worker(void *argument) {
    (void)argument;
    pthread_mutex_lock(&lock);
    while (!crash_requested) pthread_cond_wait(&woken, &lock);
    pthread_mutex_unlock(&lock);
    volatile int *nowhere = NULL;
    *nowhere = 1;
    return NULL;
}

static int32_t waking_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    for (size_t index = 0; index + 5 <= length; index++) {
        if (memcmp(content + index, "crash", 5) == 0) {
            pthread_mutex_lock(&lock);
            crash_requested = 1;
            pthread_cond_signal(&woken);
            pthread_mutex_unlock(&lock);
            /* The worker ends the process long before this. */
            sleep(10);
        }
    }
    return fixture_decode(context, content, length, out, error);
}

static const char good[] = "{\"fixture\":true}", crash[] = "{\"say\":\"crash\",\"fixture\":true}";
static const missive_bytes examples[] = {
    {.bytes = (const uint8_t *)good, .length = sizeof good - 1},
    {.bytes = (const uint8_t *)crash, .length = sizeof crash - 1},
};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:thread-crash", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 2, .examples = examples, .decode = waking_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenCrashOnOwnThread", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return NULL;
    pthread_detach(thread);
    return &plugin;
}
