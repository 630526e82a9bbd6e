/* Defect: decode checks the JSON with a recursive parser that has no depth limit. Each level of nesting
 * costs a stack frame: 10,000 levels fit in a main thread's 8 MiB, but not in the 256 KiB stack of a thread
 * pool's worker, where a deep enough input overflows the stack (SIGSEGV). */
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenDeepRecursion", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:deep", MISSIVE_PERSISTENCE_COUNTED, 0);

typedef struct parser {
    const uint8_t *bytes;
    size_t length, at;
} parser;

static void skip_space(parser *p) {
    while (p->at < p->length && strchr(" \t\r\n", p->bytes[p->at]) && p->bytes[p->at]) p->at++;
}

static int parse_string(parser *p) {
    for (p->at++; p->at < p->length; p->at++) {
        if (p->bytes[p->at] == '\\') p->at++;
        else if (p->bytes[p->at] == '"') return p->at++, 1;
        else if (p->bytes[p->at] < 0x20) return 0;
    }
    return 0;
}

/* One value; arrays and objects recurse into their elements, without counting how deep. */
static int parse_value(parser *p) {
    skip_space(p);
    if (p->at >= p->length) return 0;
    uint8_t first = p->bytes[p->at];
    if (first == '"') return parse_string(p);
    if (first == '[' || first == '{') {
        uint8_t close = first == '[' ? ']' : '}';
        p->at++;
        skip_space(p);
        if (p->at < p->length && p->bytes[p->at] == close) return p->at++, 1;
        for (;;) {
            if (close == '}') {
                skip_space(p);
                if (p->at >= p->length || p->bytes[p->at] != '"' || !parse_string(p)) return 0;
                skip_space(p);
                if (p->at >= p->length || p->bytes[p->at++] != ':') return 0;
            }
            if (!parse_value(p)) return 0;
            skip_space(p);
            if (p->at >= p->length) return 0;
            uint8_t next = p->bytes[p->at++];
            if (next == close) return 1;
            if (next != ',') return 0;
        }
    }
    size_t start = p->at;
    while (p->at < p->length && strchr("-+.0123456789eEtrufalsn", p->bytes[p->at]) && p->bytes[p->at]) p->at++;
    return p->at > start;
}

static int32_t recursive_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                                const missive_sink *error) {
    parser p = {content, length, 0};
    if (!content || !parse_value(&p)) {
        *out = NULL;
        missive_write_string(error, "content is not JSON");
        return MISSIVE_INVALID_CONTENT;
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:deep", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = recursive_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenDeepRecursion", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
