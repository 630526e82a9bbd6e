/* Defects: a media type whose outputs are all malformed. encode gives text that is not JSON, a searchable
 * word is empty and another is invalid UTF-8, the push content has a line break, and the media reference has
 * no location and a MIME type without a subtype. decode itself is correct. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenBadOutputs", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:outputs", MISSIVE_PERSISTENCE_COUNTED, MISSIVE_TYPE_MEDIA);

static void put(const missive_sink *sink, const char *text, size_t length) {
    sink->write(sink->context, (const uint8_t *)text, length);
}

static int32_t not_json(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    put(out, "fixture=true", 12);
    return MISSIVE_OK;
}

static int32_t bad_words(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    put(out, "", 0);
    put(out, "\xC3\x28", 2);
    return MISSIVE_OK;
}

static int32_t two_line_push(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    put(out, "line one\nline two", 17);
    return MISSIVE_OK;
}

static int32_t bad_media(void *context, const missive_message *message, missive_media_out *out) {
    (void)context, (void)message;
    put(&out->mime_type, "image", 5);
    out->size_bytes = 10;
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .flags = MISSIVE_TYPE_MEDIA, .object_name = "fixture:outputs",
    .persistence = MISSIVE_PERSISTENCE_COUNTED, .example_count = 1, .examples = fixture_examples,
    .decode = fixture_decode, .release = fixture_release, .encode = not_json, .digest = fixture_digest,
    .push_content = two_line_push, .searchable_words = bad_words, .media = bad_media,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenBadOutputs", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
