/* Broken: its composer action dereferences past an empty string (it reads text[len - 1] without checking
 * len), and crashes on "". Its examples pass; actions.strings, which sends empty, long and odd strings,
 * crashes. */
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionCrashesOnOddString", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:odd-string", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_COMPOSER_ACTION("fixture.note", "fixture:odd-string", "Note", "note", 0, "int32(string text, sink out)", "odd_string_note");

MISSIVE_EXPORT int32_t odd_string_note(const char *text, const missive_sink *out) {
    size_t length = strlen(text);
    /* The defect: an empty text makes this index SIZE_MAX, far outside the string. */
    volatile const char *last = length > 0 ? &text[length - 1] : (const char *)(uintptr_t)0x10;
    if (*last == '!') return missive_fail_with_reason(out, "no shouting");
    missive_write_string(out, "{\"fixture\":true}");
    return MISSIVE_OK;
}

static const missive_action note = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_COMPOSER, .id = "fixture.note", .object_name = "fixture:odd-string",
    .title = "Note", .icon = "note", .signature = "int32(string text, sink out)", .symbol = "odd_string_note", .examples = "[[\"hello\"]]",
};
static const missive_action *const actions[] = {&note};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:odd-string", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionCrashesOnOddString", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
