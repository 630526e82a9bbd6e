#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_length(const uint8_t *p, size_t n) {
    if (p[0] < 0x80) return 1;
    size_t length = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (!length || length > n || p[0] > 0xF4) return 0;
    uint32_t code = p[0] & (0x7F >> length);
    for (size_t i = 1; i < length; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        code = code << 6 | (p[i] & 0x3F);
    }
    if ((length == 3 && (code < 0x800 || (code >= 0xD800 && code < 0xE000))) || (length == 4 && (code < 0x10000 || code > 0x10FFFF))) return 0;
    return length;
}

/* Length of the escape at p[0] == '\\': two bytes, or six for \uXXXX; 0 when it is not one JSON has. */
static size_t escape_length(const uint8_t *p, size_t n) {
    if (n < 2) return 0;
    if (p[1] != 'u') return p[1] && strchr("\"\\/bfnrt", p[1]) ? 2 : 0;
    if (n < 6) return 0;
    for (size_t i = 2; i < 6; i++) {
        if (!p[i] || !strchr("0123456789abcdefABCDEF", p[i])) return 0;
    }
    return 6;
}

/* Length of the JSON string at p[0] == '"' (escapes checked, UTF-8 validated), or 0. */
static size_t string_length(const uint8_t *p, size_t n) {
    size_t i = 1;
    while (i < n && p[i] != '"') {
        if (p[i] < 0x20) return 0;
        size_t step = p[i] == '\\' ? escape_length(p + i, n - i) : utf8_length(p + i, n - i);
        if (!step) return 0;
        i += step;
    }
    return i < n ? i + 1 : 0;
}

/* Length of the JSON number at p, by JSON's grammar, or 0. */
static size_t number_length(const uint8_t *p, size_t n) {
    size_t i = 0;
#define DIGIT(at) ((at) < n && p[at] >= '0' && p[at] <= '9')
    if (i < n && p[i] == '-') i++;
    if (!DIGIT(i)) return 0;
    if (p[i] == '0') i++;
    else while (DIGIT(i)) i++;
    if (i < n && p[i] == '.') {
        if (!DIGIT(i + 1)) return 0;
        for (i++; DIGIT(i); i++) {}
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        if (!DIGIT(i)) return 0;
        while (DIGIT(i)) i++;
    }
#undef DIGIT
    return i;
}

/* Length of the literal true, false or null at p, or 0. */
static size_t literal_length(const uint8_t *p, size_t n) {
    static const char *const literals[] = {"true", "false", "null"};
    for (size_t k = 0; k < 3; k++) {
        size_t length = strlen(literals[k]);
        if (n >= length && memcmp(p, literals[k], length) == 0) return length;
    }
    return 0;
}

/* Length of the JSON value at p: a string, a bracketed object or array (balanced, strings checked, at most 16
 * deep), a number or a literal; 0 when it is none. Enough to step over the members a conformance check adds:
 * the scalars and strings are checked as JSON has them, but what is inside brackets only for balance. */
static size_t value_length(const uint8_t *p, size_t n) {
    if (n == 0) return 0;
    if (p[0] == '"') return string_length(p, n);
    if (p[0] == '{' || p[0] == '[') {
        int depth = 0;
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '"') {
                size_t s = string_length(p + i, n - i);
                if (!s) return 0;
                i += s - 1;
            } else if (p[i] == '{' || p[i] == '[') {
                if (++depth > 16) return 0;
            } else if (p[i] == '}' || p[i] == ']') {
                if (--depth == 0) return i + 1;
            }
        }
        return 0;
    }
    return p[0] == 't' || p[0] == 'f' || p[0] == 'n' ? literal_length(p, n) : number_length(p, n);
}

/* Accepts {"fixture":true} and {"fixture":true,"round":N}, after any members it does not know (so that, like
 * any plugin, it takes MS:Custom content and a newer sender's), and refuses everything else, so that every
 * malformed input is refused and, up to strictness 6, each fixture fails only the check its defect is about.
 * (At 7, the re-spelled variations of roundtrip.variations are refused too.) With strict, no unknown member
 * is accepted. */
static int32_t decode_echo(const uint8_t *content, size_t length, missive_message **out, const missive_sink *error, int strict) {
    *out = NULL;
    static const char base[] = "\"fixture\":true", round[] = ",\"round\":";
    size_t at = 1;
    int valid = content && length > 1 && content[0] == '{';
    /* Members before "fixture": a string key, a colon, a value and a comma each. */
    while (valid && !strict && at < length && !(length - at >= sizeof base - 1 && memcmp(content + at, base, sizeof base - 1) == 0)) {
        size_t key = content[at] == '"' ? string_length(content + at, length - at) : 0;
        if (!key || at + key >= length || content[at + key] != ':') { valid = 0; break; }
        at += key + 1;
        size_t value = value_length(content + at, length - at);
        if (!value || at + value >= length || content[at + value] != ',') { valid = 0; break; }
        at += value + 1;
    }
    valid = valid && length - at >= sizeof base - 1 && memcmp(content + at, base, sizeof base - 1) == 0;
    at += sizeof base - 1;
    if (valid && length > at + sizeof round - 1 && memcmp(content + at, round, sizeof round - 1) == 0) {
        at += sizeof round - 1;
        size_t digits = 0;
        while (at < length && content[at] >= '0' && content[at] <= '9' && digits < 9) { at++; digits++; }
        valid = digits > 0;
    }
    if (!valid || at + 1 != length || content[at] != '}') {
        const char *reason = "content must be {\"fixture\":true}";
        error->write(error->context, (const uint8_t *)reason, strlen(reason));
        return MISSIVE_INVALID_CONTENT;
    }
    return fixture_keep(content, length, out);
}

int32_t fixture_keep(const uint8_t *content, size_t length, missive_message **out) {
    echo *value = malloc(sizeof(echo) + length);
    if (!value) return MISSIVE_FAILED;
    value->length = length;
    memcpy(value->bytes, content, length);
    *out = (missive_message *)value;
    return MISSIVE_OK;
}

int32_t fixture_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                       const missive_sink *error) {
    (void)context;
    return decode_echo(content, length, out, error, 0);
}

int32_t fixture_decode_strict(void *context, const uint8_t *content, size_t length, missive_message **out,
                              const missive_sink *error) {
    (void)context;
    return decode_echo(content, length, out, error, 1);
}

void fixture_release(void *context, missive_message *message) {
    (void)context;
    free(message);
}

int32_t fixture_encode(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const echo *value = (const echo *)message;
    out->write(out->context, value->bytes, value->length);
    return MISSIVE_OK;
}

int32_t fixture_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    out->write(out->context, (const uint8_t *)"[fixture]", 9);
    return MISSIVE_OK;
}

const void *fixture_view_extension(const missive_view_v1 *view, const char *extension_id) {
    return extension_id != NULL && strcmp(extension_id, MISSIVE_VIEW_EXTENSION) == 0 ? view : NULL;
}

const void *fixture_actions_extension(const missive_actions_v1 *actions, const char *extension_id) {
    return extension_id != NULL && strcmp(extension_id, MISSIVE_ACTIONS_EXTENSION) == 0 ? actions : NULL;
}

int32_t fixture_write_view(const missive_sink *out, const char *text) {
    missive_view_writer w;
    missive_view_begin(&w, out);
    missive_view_stack_begin(&w, "vertical", 0);
    missive_view_text(&w, "Fixture", "title", NULL, 0);
    missive_view_text(&w, text, "body", NULL, 0);
    missive_view_stack_end(&w);
    return missive_view_end(&w);
}

int fixture_contains(const missive_message *message, const char *text) {
    const echo *value = (const echo *)message;
    size_t length = strlen(text);
    for (size_t at = 0; length <= value->length && at <= value->length - length; at++) {
        if (memcmp(value->bytes + at, text, length) == 0) return 1;
    }
    return 0;
}

static const char example[] = "{\"fixture\":true}";
const missive_bytes fixture_examples[1] = {{(const uint8_t *)example, sizeof example - 1}};

int fixture_holds(const uint8_t *content, size_t length, const char *word) {
    size_t size = strlen(word);
    for (size_t index = 0; content && index + size <= length; index++) {
        if (memcmp(content + index, word, size) == 0) return 1;
    }
    return 0;
}
