/* A valid plugin for the tests of actions: one action per parameter type of the signature grammar, so that
 * every way an argument is marshalled runs through libffi for real, and a composer action that takes 16
 * values of every type (more than the registers hold, so some go on the stack).
 *
 * Each action writes back what it received as content of its type, {...,"fixture":true}, and counts the call.
 * fixture.calls gives the count, {"calls":N,"fixture":true}, without counting itself: a test reads it, tries
 * bad arguments, reads it again, and sees that none of them reached the plugin. Every other action's result
 * depends only on its arguments; fixture.calls, by design, on what ran before, so actions.threads reports
 * it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionTypes", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:actions", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "int32", "Int32", "number", 6, "content", "int32(message m, int32 value, sink out)", "types_int32");
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "int64", "Int64", "number", 5, "content", "int32(message m, int64 value, sink out)", "types_int64");
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "double", "Double", "number", 4, "content", "int32(message m, double value, sink out)", "types_double");
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "bool", "Bool", "toggle", 3, "content", "int32(message m, bool value, sink out)", "types_bool");
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "string", "String", "text", 2, "content", "int32(message m, string value, sink out)", "types_string");
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "around", "Around", "text", 1, "content",
                                "int32(int32 before, message m, string after, sink out)", "types_around");
MISSIVE_METADATA_MESSAGE_ACTION("fixture:actions", "link", "Link", "link", 0, "url", "int32(message m, string path, sink out)", "types_link");
MISSIVE_METADATA_COMPOSER_ACTION("fixture.mixed", "fixture:actions", "Mixed", "grid", 0,
                                 "int32(int32 a, double b, int64 c, bool d, string e, double f, double g, double h, int64 i, bool j, "
                                 "string k, double l, double m, double n, double o, double p, sink out)",
                                 "types_mixed");
MISSIVE_METADATA_COMPOSER_ACTION("fixture.calls", "fixture:actions", "Calls", "number", -1, "int32(sink out)", "types_calls");

static uint64_t calls;

/* Counts a call: the number of earlier ones. */
static uint64_t count(void) { return __atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST); }

static void put(const missive_sink *out, const char *text) { missive_write_string(out, text); }

__attribute__((format(printf, 2, 3)))
static void put_number(const missive_sink *out, const char *format, ...) {
    char buffer[64];
    va_list list;
    va_start(list, format);
    int length = vsnprintf(buffer, sizeof buffer, format, list);
    va_end(list);
    out->write(out->context, (const uint8_t *)buffer, (size_t)length);
}

/* A JSON string of the NUL-terminated UTF-8 `text`: quotes, backslashes and controls escaped. */
static void put_string(const missive_sink *out, const char *text) {
    put(out, "\"");
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; out->write(out->context, (const uint8_t *)e, 2); }
        else if (c < 0x20) put_number(out, "\\u%04x", c);
        else out->write(out->context, &c, 1);
    }
    put(out, "\"");
}

static void begin(const missive_sink *out) { put(out, "{"); }
static int32_t end(const missive_sink *out) { put(out, "\"fixture\":true}"); return MISSIVE_OK; }

/* A message action must be given a message: the host passes the handle of the message acted on. */
#define NEED_MESSAGE(m) if ((m) == NULL) return missive_fail_with_reason(out, "no message")

MISSIVE_EXPORT int32_t types_int32(const missive_message *m, int32_t value, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    begin(out); put_number(out, "\"int32\":%" PRId32 ",", value); return end(out);
}

MISSIVE_EXPORT int32_t types_int64(const missive_message *m, int64_t value, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    begin(out); put_number(out, "\"int64\":%" PRId64 ",", value); return end(out);
}

MISSIVE_EXPORT int32_t types_double(const missive_message *m, double value, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    begin(out); put_number(out, "\"double\":%.17g,", value); return end(out);
}

MISSIVE_EXPORT int32_t types_bool(const missive_message *m, bool value, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    begin(out); put(out, value ? "\"bool\":true," : "\"bool\":false,"); return end(out);
}

MISSIVE_EXPORT int32_t types_string(const missive_message *m, const char *value, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    if (value == NULL) return missive_fail_with_reason(out, "a NULL string");
    begin(out); put(out, "\"string\":"); put_string(out, value); put_number(out, ",\"length\":%zu,", strlen(value)); return end(out);
}

/* The message between two values: the order of the parameters is the signature's, not a fixed one. It also
 * checks that the handle is the message's own: an echo of content that holds "fixture". */
MISSIVE_EXPORT int32_t types_around(int32_t before, const missive_message *m, const char *after, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    if (!fixture_contains(m, "fixture")) return missive_fail_with_reason(out, "the handle is not this type's");
    begin(out); put_number(out, "\"before\":%" PRId32 ",\"after\":", before); put_string(out, after); put(out, ","); return end(out);
}

/* A page on example.com: a path of letters, digits and - . _ ~ /, which needs no escaping in a URL. */
MISSIVE_EXPORT int32_t types_link(const missive_message *m, const char *path, const missive_sink *out) {
    count();
    NEED_MESSAGE(m);
    size_t length = strlen(path);
    if (length > 256 || strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/") != length)
        return missive_refuse_with_reason(out, "a path is at most 256 letters, digits and - . _ ~ /");
    put(out, "https://example.com/");
    put(out, path);
    return MISSIVE_OK;
}

MISSIVE_EXPORT int32_t types_mixed(int32_t a, double b, int64_t c, bool d, const char *e, double f, double g, double h, int64_t i, bool j,
                                   const char *k, double l, double m, double n, double o, double p, const missive_sink *out) {
    count();
    begin(out);
    put_number(out, "\"mixed\":[%" PRId32 ",%.17g,%" PRId64 ",", a, b, c);
    put(out, d ? "true," : "false,");
    put_string(out, e);
    put_number(out, ",%.17g,%.17g,%.17g,%" PRId64 ",", f, g, h, i);
    put(out, j ? "true," : "false,");
    put_string(out, k);
    put_number(out, ",%.17g,%.17g,%.17g,%.17g,%.17g],", l, m, n, o, p);
    return end(out);
}

MISSIVE_EXPORT int32_t types_calls(const missive_sink *out) {
    put_number(out, "{\"calls\":%" PRIu64 ",", __atomic_load_n(&calls, __ATOMIC_SEQ_CST));
    return end(out);
}

#define ACTION(kind_, id_, title_, icon_, priority_, yields_, signature_, symbol_, examples_)                         \
    {                                                                                                                \
        .struct_size = sizeof(missive_action), .kind = (kind_), .id = (id_), .object_name = "fixture:actions",      \
        .title = (title_), .icon = (icon_), .priority = (priority_), .yields = (yields_), .signature = (signature_), \
        .symbol = (symbol_), .function = NULL, .examples = (examples_),                                            \
    }

static const missive_action actions[] = {
    ACTION(MISSIVE_ACTION_MESSAGE, "int32", "Int32", "number", 6, MISSIVE_YIELDS_CONTENT, "int32(message m, int32 value, sink out)", "types_int32",
           "[[-2147483648],[2147483647]]"),
    ACTION(MISSIVE_ACTION_MESSAGE, "int64", "Int64", "number", 5, MISSIVE_YIELDS_CONTENT, "int32(message m, int64 value, sink out)", "types_int64",
           "[[-9223372036854775808],[9223372036854775807]]"),
    ACTION(MISSIVE_ACTION_MESSAGE, "double", "Double", "number", 4, MISSIVE_YIELDS_CONTENT, "int32(message m, double value, sink out)", "types_double",
           "[[0.1],[-2.5e300]]"),
    ACTION(MISSIVE_ACTION_MESSAGE, "bool", "Bool", "toggle", 3, MISSIVE_YIELDS_CONTENT, "int32(message m, bool value, sink out)", "types_bool",
           "[[true],[false]]"),
    ACTION(MISSIVE_ACTION_MESSAGE, "string", "String", "text", 2, MISSIVE_YIELDS_CONTENT, "int32(message m, string value, sink out)", "types_string",
           "[[\"\"],[\"héllo \\\"wörld\\\" ✓\"]]"),
    ACTION(MISSIVE_ACTION_MESSAGE, "around", "Around", "text", 1, MISSIVE_YIELDS_CONTENT, "int32(int32 before, message m, string after, sink out)",
           "types_around", "[[7,\"after\"]]"),
    ACTION(MISSIVE_ACTION_MESSAGE, "link", "Link", "link", 0, MISSIVE_YIELDS_URL, "int32(message m, string path, sink out)", "types_link",
           "[[\"docs\"]]"),
    ACTION(MISSIVE_ACTION_COMPOSER, "fixture.mixed", "Mixed", "grid", 0, MISSIVE_YIELDS_CONTENT,
           "int32(int32 a, double b, int64 c, bool d, string e, double f, double g, double h, int64 i, bool j, "
           "string k, double l, double m, double n, double o, double p, sink out)",
           "types_mixed", "[[1,2.5,3,true,\"e\",6.5,7.5,8.5,9,false,\"k\",12.5,13.5,14.5,15.5,16.5]]"),
    ACTION(MISSIVE_ACTION_COMPOSER, "fixture.calls", "Calls", "number", -1, MISSIVE_YIELDS_CONTENT, "int32(sink out)", "types_calls", NULL),
};

static const missive_action *const action_pointers[] = {&actions[0], &actions[1], &actions[2], &actions[3], &actions[4],
                                                        &actions[5], &actions[6], &actions[7], &actions[8]};

static const missive_actions_v1 actions_extension = {
    .struct_size = sizeof(missive_actions_v1),
    .action_count = sizeof action_pointers / sizeof action_pointers[0],
    .actions = action_pointers,
};

static const void *get_plugin_extension(void *context, const char *extension_id) {
    (void)context;
    return strcmp(extension_id, MISSIVE_ACTIONS_EXTENSION) == 0 ? &actions_extension : NULL;
}

static const missive_type type = FIXTURE_TYPE("fixture:actions", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = {
    .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin), .name = "ActionTypes", .version = "0.0.1",
    .vendor = "Missive Tests", .type_count = 1, .types = types, .get_plugin_extension = get_plugin_extension,
};

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
