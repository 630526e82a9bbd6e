/* Defect: the missive.text.v1 texts function disagrees with the separate functions. Its digest is the one
 * fixture_digest writes, but its words are not the ones searchable_words writes: a host that asks for the
 * texts in one call would index other words than one that asks searchable_words. */
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenTextsDisagree", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:texts-disagree", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t words(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    missive_write_string(out, "fixture");
    return MISSIVE_OK;
}

static int32_t texts(void *context, const missive_message *message, missive_text_out *out) {
    out->digest_status = fixture_digest(context, message, &out->digest);
    missive_write_string(&out->searchable_words, "another");
    missive_write_string(&out->searchable_words, "word");
    out->words_status = MISSIVE_OK;
    return MISSIVE_OK;
}

static const missive_text_v1 text_extension = {.struct_size = sizeof(missive_text_v1), .texts = texts};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    if (extension_id != NULL && strcmp(extension_id, MISSIVE_TEXT_EXTENSION) == 0) return &text_extension;
    return NULL;
}

static const char plain[] = "{\"fixture\":true}";
static const missive_bytes examples[] = {{(const uint8_t *)plain, sizeof plain - 1}};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:texts-disagree", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .searchable_words = words, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenTextsDisagree", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
