/* Defect: the entry installs its own SIGSEGV and SIGABRT handler, which does not hand the signal on and ends
   the process with status 0; decode then crashes on content that holds the text "crash". A host whose crash
   handler it replaced would never learn of the crash, and would end "successfully". */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenOwnSignalHandler", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:own-handler", MISSIVE_PERSISTENCE_COUNTED, 0);

static void quiet_exit(int signal_number) {
    (void)signal_number;
    _exit(0);
}

static int32_t crashing_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    for (size_t index = 0; index + 5 <= length; index++) {
        if (memcmp(content + index, "crash", 5) == 0) {
            volatile int *nowhere = NULL;
            *nowhere = 1;
        }
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:own-handler", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = crashing_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenOwnSignalHandler", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = quiet_exit;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGABRT, &action, NULL);
    return &plugin;
}
