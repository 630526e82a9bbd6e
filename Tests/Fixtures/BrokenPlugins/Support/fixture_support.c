#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

typedef struct echo {
    size_t length;
    uint8_t bytes[];
} echo;

int32_t fixture_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                       const missive_sink *error) {
    (void)context;
    *out = NULL;
    if (length == 0 || content[0] != '{') {
        const char *reason = "content must be a JSON object";
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
