/* Broken: its composer action builds its result in one static buffer that every call shares, so calls from
 * several threads at once overwrite each other's text. On one thread it is right every time; actions.threads
 * fails. */
#include <sched.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionThreadUnsafe", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:thread-unsafe-action", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_COMPOSER_ACTION("fixture.label", "fixture:thread-unsafe-action", "Label", "tag", 0, "int32(string text, sink out)",
                                 "thread_unsafe_label");

static char shared[256];

MISSIVE_EXPORT int32_t thread_unsafe_label(const char *text, const missive_sink *out) {
    size_t length = strlen(text);
    if (length > 64) return missive_refuse_with_reason(out, "a label has at most 64 bytes");
    /* The defect: the buffer is shared, and another call may write it between these steps. */
    size_t at = 0;
    memcpy(shared, "{\"label\":\"", 10);
    at = 10;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        shared[at++] = (c == '"' || c == '\\' || (unsigned char)c < 0x20) ? '_' : c;
        sched_yield();
    }
    memcpy(shared + at, "\",\"fixture\":true}", 17);
    at += 17;
    out->write(out->context, (const uint8_t *)shared, at);
    return MISSIVE_OK;
}

static const missive_action label = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_COMPOSER, .id = "fixture.label", .object_name = "fixture:thread-unsafe-action",
    .title = "Label", .icon = "tag", .signature = "int32(string text, sink out)", .symbol = "thread_unsafe_label",
    .examples = "[[\"alpha\"],[\"a much longer label\"]]",
};
static const missive_action *const actions[] = {&label};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:thread-unsafe-action", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionThreadUnsafe", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
