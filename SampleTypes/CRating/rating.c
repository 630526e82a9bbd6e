/*
 * demo:rating, a Missive message type written in plain C.
 *
 * Content: {"score": 1..5, "comment": "text"}. Other members are ignored, as missive_plugin.h requires
 * ("Content, and what a type must not lose"): MS:Custom content carries "businessID": "evaluation", and a
 * newer sender may add members. encode writes the two members it knows; the host keeps the rest. The
 * decoded handle is an immutable struct, so every function may run on any thread at once.
 *
 * It also describes how a rating is drawn, through the missive.view.v1 extension (rating_view below),
 * written with the header's missive_view_* helpers: the stars as a title, then the comment.
 *
 * And it offers a composer action, "Rate" (rating_rate below): a plain C function with native parameters,
 * int32_t score and const char *comment, that the host calls through libffi by the signature it declares in
 * the metadata and in the missive.actions.v1 extension.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "missive_plugin.h"

/* The plugin's identity, written once for the metadata and the descriptor, which must agree. A build may
 * override them (the tests build an older copy and a rival plugin with the same types this way). */
#ifndef RATING_PLUGIN_NAME
#define RATING_PLUGIN_NAME "CRating"
#endif
#ifndef RATING_PLUGIN_VERSION
#define RATING_PLUGIN_VERSION "1.0.0"
#endif

MISSIVE_METADATA_PLUGIN(RATING_PLUGIN_NAME, RATING_PLUGIN_VERSION, "Missive Samples");
MISSIVE_METADATA_TYPE_BUSINESS("demo:rating", "evaluation", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_COMPOSER_ACTION("demo.rating.create", "demo:rating", "Rate", "star", 40,
                                 "int32(int32 score, string comment, sink out)", "rating_rate");

typedef struct rating {
    int score;
    char *comment; /* UTF-8, NUL-terminated, owned by the rating */
    size_t comment_length;
} rating;

/* ---- A small JSON reader: enough to validate any document and read one flat object. ---- */

typedef struct reader {
    const uint8_t *p;
    const uint8_t *end;
    const char *error;
} reader;

enum { MAX_DEPTH = 64 };

static void skip_space(reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')) r->p++;
}

static int fail(reader *r, const char *message) {
    if (!r->error) r->error = message;
    return 0;
}

static int hex_value(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of a valid UTF-8 sequence starting at p, or 0. */
static size_t utf8_sequence(const uint8_t *p, const uint8_t *end) {
    uint8_t c = p[0];
    size_t n;
    uint32_t min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { n = 2; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; min = 0x10000; }
    else return 0;
    if ((size_t)(end - p) < n) return 0;
    uint32_t code = c & (0xFF >> (n + 1));
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        code = (code << 6) | (p[i] & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
    return n;
}

static void put_utf8(uint32_t code, char *out, size_t *length) {
    if (code < 0x80) { out[(*length)++] = (char)code; }
    else if (code < 0x800) { out[(*length)++] = (char)(0xC0 | (code >> 6)); out[(*length)++] = (char)(0x80 | (code & 0x3F)); }
    else if (code < 0x10000) {
        out[(*length)++] = (char)(0xE0 | (code >> 12));
        out[(*length)++] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[(*length)++] = (char)(0x80 | (code & 0x3F));
    } else {
        out[(*length)++] = (char)(0xF0 | (code >> 18));
        out[(*length)++] = (char)(0x80 | ((code >> 12) & 0x3F));
        out[(*length)++] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[(*length)++] = (char)(0x80 | (code & 0x3F));
    }
}

static int read_hex4(reader *r, uint32_t *code) {
    if (r->end - r->p < 4) return fail(r, "truncated \\u escape");
    *code = 0;
    for (int i = 0; i < 4; i++) {
        int v = hex_value(r->p[i]);
        if (v < 0) return fail(r, "invalid \\u escape");
        *code = (*code << 4) | (uint32_t)v;
    }
    r->p += 4;
    return 1;
}

/* Reads a string. With out != NULL, stores a malloc'd NUL-terminated copy. */
static int read_string(reader *r, char **out, size_t *out_length) {
    if (r->p >= r->end || *r->p != '"') return fail(r, "expected a string");
    r->p++;
    /* Unescaped output is never longer than the input. */
    char *buffer = out ? malloc((size_t)(r->end - r->p) + 1) : NULL;
    if (out && !buffer) return fail(r, "out of memory");
    size_t length = 0;
    while (r->p < r->end) {
        uint8_t c = *r->p;
        if (c == '"') {
            r->p++;
            if (out) { buffer[length] = 0; *out = buffer; *out_length = length; }
            return 1;
        }
        if (c < 0x20) { free(buffer); return fail(r, "control character in string"); }
        if (c == '\\') {
            r->p++;
            if (r->p >= r->end) break;
            uint8_t e = *r->p++;
            uint32_t code;
            switch (e) {
            case '"': case '\\': case '/': code = e; break;
            case 'b': code = '\b'; break;
            case 'f': code = '\f'; break;
            case 'n': code = '\n'; break;
            case 'r': code = '\r'; break;
            case 't': code = '\t'; break;
            case 'u':
                if (!read_hex4(r, &code)) { free(buffer); return 0; }
                if (code >= 0xD800 && code < 0xDC00) {
                    uint32_t low;
                    if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u') { free(buffer); return fail(r, "lone surrogate"); }
                    r->p += 2;
                    if (!read_hex4(r, &low) || low < 0xDC00 || low > 0xDFFF) { free(buffer); return fail(r, "lone surrogate"); }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                } else if (code >= 0xDC00 && code <= 0xDFFF) {
                    free(buffer);
                    return fail(r, "lone surrogate");
                }
                break;
            default: free(buffer); return fail(r, "invalid escape");
            }
            if (out) put_utf8(code, buffer, &length);
            continue;
        }
        size_t n = utf8_sequence(r->p, r->end);
        if (n == 0) { free(buffer); return fail(r, "string is not valid UTF-8"); }
        if (out) { memcpy(buffer + length, r->p, n); length += n; }
        r->p += n;
    }
    free(buffer);
    return fail(r, "unterminated string");
}

static int read_number(reader *r, double *out) {
    const uint8_t *start = r->p;
    if (r->p < r->end && *r->p == '-') r->p++;
    if (r->p >= r->end || *r->p < '0' || *r->p > '9') return fail(r, "invalid number");
    if (*r->p == '0') r->p++;
    else while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9') return fail(r, "invalid number");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-')) r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9') return fail(r, "invalid number");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    }
    if (out) {
        char text[64];
        size_t n = (size_t)(r->p - start);
        if (n >= sizeof text) return fail(r, "number too long");
        memcpy(text, start, n);
        text[n] = 0;
        *out = strtod(text, NULL);
    }
    return 1;
}

static int skip_value(reader *r, int depth);

static int skip_container(reader *r, int depth, uint8_t close, int keyed) {
    if (depth >= MAX_DEPTH) return fail(r, "JSON nested too deeply");
    r->p++;
    skip_space(r);
    if (r->p < r->end && *r->p == close) { r->p++; return 1; }
    for (;;) {
        skip_space(r);
        if (keyed) {
            if (!read_string(r, NULL, NULL)) return 0;
            skip_space(r);
            if (r->p >= r->end || *r->p != ':') return fail(r, "expected ':'");
            r->p++;
            skip_space(r);
        }
        if (!skip_value(r, depth + 1)) return 0;
        skip_space(r);
        if (r->p >= r->end) return fail(r, "unexpected end of input");
        uint8_t c = *r->p++;
        if (c == ',') continue;
        if (c == close) return 1;
        return fail(r, "expected ',' or a closing bracket");
    }
}

static int skip_literal(reader *r, const char *literal) {
    size_t n = strlen(literal);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, literal, n) != 0) return fail(r, "invalid literal");
    r->p += n;
    return 1;
}

static int skip_value(reader *r, int depth) {
    if (r->p >= r->end) return fail(r, "unexpected end of input");
    switch (*r->p) {
    case '"': return read_string(r, NULL, NULL);
    case '{': return skip_container(r, depth, '}', 1);
    case '[': return skip_container(r, depth, ']', 0);
    case 't': return skip_literal(r, "true");
    case 'f': return skip_literal(r, "false");
    case 'n': return skip_literal(r, "null");
    default: return read_number(r, NULL);
    }
}

/* ---- The type's functions ---- */

/* The host never passes a NULL sink (missive_plugin.h, "Pointers and lengths"). */
static void report(const missive_sink *sink, const char *message) { missive_write_string(sink, message); }

static int32_t rating_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                             const missive_sink *error) {
    (void)context;
    *out = NULL;
    reader r = {content, content + length, NULL};
    if (!content && length) { report(error, "no content"); return MISSIVE_INVALID_CONTENT; }
    int score = 0, have_score = 0;
    char *comment = NULL;
    size_t comment_length = 0;
    skip_space(&r);
    if (r.p >= r.end || *r.p != '{') { report(error, "content must be a JSON object"); return MISSIVE_INVALID_CONTENT; }
    r.p++;
    skip_space(&r);
    if (r.p < r.end && *r.p == '}') {
        r.p++;
    } else {
        for (;;) {
            char *key = NULL;
            size_t key_length = 0;
            skip_space(&r);
            if (!read_string(&r, &key, &key_length)) break;
            skip_space(&r);
            if (r.p >= r.end || *r.p != ':') { free(key); fail(&r, "expected ':'"); break; }
            r.p++;
            skip_space(&r);
            int ok;
            /* Compare with the length: an escaped \u0000 may put a NUL inside a key. */
            if (key_length == 5 && memcmp(key, "score", 5) == 0) {
                double value;
                ok = r.p < r.end && (*r.p == '-' || (*r.p >= '0' && *r.p <= '9')) ? read_number(&r, &value)
                                                                                 : fail(&r, "score must be a number");
                /* Range first: converting an out-of-range double to int is undefined. */
                if (ok && (!(value >= 1 && value <= 5) || value != (double)(int)value))
                    ok = fail(&r, "score must be a whole number from 1 to 5");
                if (ok) { score = (int)value; have_score = 1; }
            } else if (key_length == 7 && memcmp(key, "comment", 7) == 0) {
                free(comment);
                comment = NULL;
                ok = read_string(&r, &comment, &comment_length);
            } else {
                ok = skip_value(&r, 1);
            }
            free(key);
            if (!ok) break;
            skip_space(&r);
            if (r.p < r.end && *r.p == ',') { r.p++; continue; }
            if (r.p < r.end && *r.p == '}') { r.p++; break; }
            fail(&r, "expected ',' or '}'");
            break;
        }
    }
    skip_space(&r);
    if (!r.error && r.p != r.end) fail(&r, "unexpected data after the object");
    if (!r.error && !have_score) fail(&r, "missing field 'score'");
    if (r.error) {
        free(comment);
        report(error, r.error);
        return MISSIVE_INVALID_CONTENT;
    }
    rating *value = malloc(sizeof *value);
    if (!value) { free(comment); report(error, "out of memory"); return MISSIVE_FAILED; }
    value->score = score;
    value->comment = comment ? comment : strdup("");
    value->comment_length = comment ? comment_length : 0;
    *out = (missive_message *)value;
    return MISSIVE_OK;
}

static void rating_release(void *context, missive_message *message) {
    (void)context;
    rating *value = (rating *)message;
    if (!value) return;
    free(value->comment);
    free(value);
}

/* The stars for each score (decode accepts 1 to 5 only). */
static const char *const stars[] = {"", "★☆☆☆☆", "★★☆☆☆", "★★★☆☆", "★★★★☆", "★★★★★"};

static void write_text(const missive_sink *sink, const char *text, size_t length) {
    sink->write(sink->context, (const uint8_t *)text, length);
}

/* Writes {"comment":...,"score":...}: the content of a rating, as encode and the Rate action give it. */
static void write_rating(const missive_sink *out, int score, const char *comment, size_t comment_length) {
    write_text(out, "{\"comment\":\"", 12);
    /* Escape what JSON requires; everything else (valid UTF-8) is written as is. */
    const char *p = comment;
    size_t run = 0;
    for (size_t i = 0; i < comment_length; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c != '"' && c != '\\' && c >= 0x20) { run++; continue; }
        write_text(out, p + i - run, run);
        run = 0;
        char escape[8];
        switch (c) {
        case '"': write_text(out, "\\\"", 2); break;
        case '\\': write_text(out, "\\\\", 2); break;
        case '\n': write_text(out, "\\n", 2); break;
        case '\r': write_text(out, "\\r", 2); break;
        case '\t': write_text(out, "\\t", 2); break;
        default:
            snprintf(escape, sizeof escape, "\\u%04x", c);
            write_text(out, escape, 6);
        }
    }
    write_text(out, p + comment_length - run, run);
    char tail[32];
    int n = snprintf(tail, sizeof tail, "\",\"score\":%d}", score);
    write_text(out, tail, (size_t)n);
}

static int32_t rating_encode(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const rating *value = (const rating *)message;
    write_rating(out, value->score, value->comment, value->comment_length);
    return MISSIVE_OK;
}

static int32_t rating_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const rating *value = (const rating *)message;
    write_text(out, "[Rating] ", 9);
    write_text(out, stars[value->score], strlen(stars[value->score]));
    if (value->comment_length > 0) {
        write_text(out, " ", 1);
        /* One line: newlines and other control characters become spaces. */
        const char *p = value->comment;
        size_t run = 0;
        for (size_t i = 0; i < value->comment_length; i++) {
            if ((unsigned char)p[i] >= 0x20) { run++; continue; }
            write_text(out, p + i - run, run);
            write_text(out, " ", 1);
            run = 0;
        }
        write_text(out, p + value->comment_length - run, run);
    }
    return MISSIVE_OK;
}

static int32_t rating_words(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const rating *value = (const rating *)message;
    if (value->comment_length == 0) return MISSIVE_ABSENT;
    write_text(out, value->comment, value->comment_length);
    return MISSIVE_OK;
}

/* ---- The view (missive.view.v1) ---- */

/* A vertical stack: the stars and the score as a title ("★★★★☆ 4/5"), then the comment, when there is one,
 * as body text of at most 6 lines. The content names nothing else (no rated item), so there is no caption.
 * The helpers escape the comment (its line breaks and any \u0000 it decoded to) and check the tree. */
static int32_t rating_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const rating *value = (const rating *)message;
    char title[32];
    int length = snprintf(title, sizeof title, "%s %d/5", stars[value->score], value->score);
    if (length < 0 || (size_t)length >= sizeof title) return missive_fail_with_reason(out, "the title does not fit");
    missive_view_writer w;
    missive_view_begin(&w, out);
    missive_view_stack_begin(&w, "vertical", 1);
    missive_view_text_n(&w, title, (size_t)length, "title", NULL, 0);
    if (value->comment_length > 0) missive_view_text_n(&w, value->comment, value->comment_length, "body", NULL, 6);
    missive_view_stack_end(&w);
    return missive_view_end(&w);
}

/* The extension, the same pointer for every call, as missive_plugin.h ("Extensions") requires. */
static const missive_view_v1 rating_view_extension = {
    .struct_size = sizeof(missive_view_v1),
    .view = rating_view,
};

/* ---- The digest and words in one call (missive.text.v1) ---- */

/* The same functions as the separate ones, each into its own sink, so the two ways agree by construction.
 * The type has no push_content (the host pushes the digest), so the push part is left alone. */
static int32_t rating_texts(void *context, const missive_message *message, missive_text_out *out) {
    out->digest_status = rating_digest(context, message, &out->digest);
    out->words_status = rating_words(context, message, &out->searchable_words);
    return MISSIVE_OK;
}

static const missive_text_v1 rating_text_extension = {
    .struct_size = sizeof(missive_text_v1),
    .texts = rating_texts,
};

static const void *rating_get_extension(void *context, const char *extension_id) {
    (void)context;
    if (extension_id == NULL) return NULL;
    if (strcmp(extension_id, MISSIVE_VIEW_EXTENSION) == 0) return &rating_view_extension;
    if (strcmp(extension_id, MISSIVE_TEXT_EXTENSION) == 0) return &rating_text_extension;
    return NULL;
}

/* ---- The composer action "Rate" (missive.actions.v1) ---- */

/* A new rating from a score and a comment. The host has checked the arguments against the signature: score
 * is an int32_t, and comment valid UTF-8 with no NUL inside, never NULL. A score outside 1 to 5 fits the
 * signature but not the type, so it is refused as MISSIVE_INVALID_CONTENT, with the reason. */
MISSIVE_EXPORT int32_t rating_rate(int32_t score, const char *comment, const missive_sink *out) {
    if (score < 1 || score > 5) return missive_refuse_with_reason(out, "a score is a whole number from 1 to 5");
    write_rating(out, score, comment, strlen(comment));
    return MISSIVE_OK;
}

static const missive_action rating_rate_action = {
    .struct_size = sizeof(missive_action),
    .kind = MISSIVE_ACTION_COMPOSER,
    .id = "demo.rating.create",
    .object_name = "demo:rating",
    .title = "Rate",
    .icon = "star",
    .priority = 40,
    .yields = MISSIVE_YIELDS_CONTENT,
    .signature = "int32(int32 score, string comment, sink out)",
    .symbol = "rating_rate", /* found with dlsym; the metadata names it too */
    .function = NULL,
    .examples = "[[5,\"Quick and friendly support\"],[1,\"\"],[3,\"Slow, but \\\"solved\\\" it\\nin the end\"]]",
};

static const missive_action *const rating_actions[] = {&rating_rate_action};

/* The plugin-wide extensions: the same pointer every time, as missive_plugin.h ("Extensions") requires. */
static const missive_actions_v1 rating_actions_extension = {
    .struct_size = sizeof(missive_actions_v1),
    .action_count = 1,
    .actions = rating_actions,
};

static const void *rating_get_plugin_extension(void *context, const char *extension_id) {
    (void)context;
    if (extension_id != NULL && strcmp(extension_id, MISSIVE_ACTIONS_EXTENSION) == 0) return &rating_actions_extension;
    return NULL;
}

static const char example_good[] = "{\"comment\":\"Quick and friendly support\",\"score\":5}";
static const char example_mixed[] = "{\"comment\":\"Slow, but \\\"solved\\\" it\\nin the end\",\"score\":3}";

static const missive_bytes rating_examples[] = {
    {(const uint8_t *)example_good, sizeof example_good - 1},
    {(const uint8_t *)example_mixed, sizeof example_mixed - 1},
};

static const missive_type rating_type = {
    .struct_size = sizeof(missive_type),
    .flags = 0,
    .object_name = "demo:rating",
    .business_id = "evaluation",
    .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 2,
    .examples = rating_examples,
    .context = NULL,
    .decode = rating_decode,
    .release = rating_release,
    .encode = rating_encode,
    .digest = rating_digest,
    .push_content = NULL,
    .searchable_words = rating_words,
    .media = NULL,
    .get_extension = rating_get_extension,
    .container = NULL, /* business_id registers it in MS:Custom */
    .container_value = NULL,
};

static const missive_type *const rating_types[] = {&rating_type};

static const missive_plugin rating_plugin = {
    .abi_version = MISSIVE_ABI_VERSION,
    .struct_size = sizeof(missive_plugin),
    .name = RATING_PLUGIN_NAME,
    .version = RATING_PLUGIN_VERSION,
    .vendor = "Missive Samples",
    .type_count = 1,
    .types = rating_types,
    .get_extension = NULL,
    .container_count = 0,
    .containers = NULL,
    .context = NULL,
    .get_plugin_extension = rating_get_plugin_extension,
};

/* No version check: the entry's name carries the ABI major, and a host refuses a plugin of a newer minor
 * from its metadata before calling it. */
MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &rating_plugin;
}
