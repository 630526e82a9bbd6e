#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

/* Accepts exactly {"fixture":true} and {"fixture":true,"round":N}, so that every malformed input is refused
 * and, up to strictness 6, each fixture fails only the check its defect is about. (At 7, the re-spelled
 * variations of roundtrip.variations are refused too.) */
int32_t fixture_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                       const missive_sink *error) {
    (void)context;
    *out = NULL;
    static const char base[] = "{\"fixture\":true", round[] = ",\"round\":";
    size_t at = sizeof base - 1;
    int valid = content && length > at && memcmp(content, base, at) == 0;
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
    echo *value = malloc(sizeof(echo) + length);
    if (!value) return MISSIVE_FAILED;
    value->length = length;
    memcpy(value->bytes, content, length);
    *out = (missive_message *)value;
    return MISSIVE_OK;
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

static const char example[] = "{\"fixture\":true}";
const missive_bytes fixture_examples[1] = {{(const uint8_t *)example, sizeof example - 1}};
