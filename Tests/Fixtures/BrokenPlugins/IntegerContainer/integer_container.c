/* A valid plugin that declares a container dispatching on an integer key, as call signalling does with an
 * integer businessID: content {"businessID":1,...} is a call invitation, {"businessID":2,...} a
 * cancellation. Its decoder takes any JSON object and keeps it; the host has validated the JSON already. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("IntegerContainer", "1.0.0", "Missive Tests");
MISSIVE_METADATA_CONTAINER_INTEGER("call:signal", "businessID");
MISSIVE_METADATA_TYPE_IN("call:invite", "call:signal", "1", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_TYPE_IN("call:cancel", "call:signal", "2", MISSIVE_PERSISTENCE_PERSISTED, 0);

static int32_t object_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                             const missive_sink *error) {
    (void)context;
    *out = NULL;
    if (length < 2 || content[0] != '{' || content[length - 1] != '}') {
        missive_write_string(error, "content must be a JSON object");
        return MISSIVE_INVALID_CONTENT;
    }
    return fixture_keep(content, length, out);
}

static int32_t invite_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    missive_write_string(out, "[Call] invitation");
    return MISSIVE_OK;
}

static int32_t cancel_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    missive_write_string(out, "[Call] cancelled");
    return MISSIVE_OK;
}

static const char invite_example[] = "{\"businessID\":1,\"inviter\":\"alice\"}";
static const char cancel_example[] = "{\"businessID\":2,\"inviter\":\"alice\"}";
static const missive_bytes invite_examples[] = {{(const uint8_t *)invite_example, sizeof invite_example - 1}};
static const missive_bytes cancel_examples[] = {{(const uint8_t *)cancel_example, sizeof cancel_example - 1}};

static const missive_container signal_container = {
    .struct_size = sizeof(missive_container), .key_kind = MISSIVE_KEY_INTEGER, .object_name = "call:signal", .key = "businessID",
};
static const missive_type invite = {
    .struct_size = sizeof(missive_type), .object_name = "call:invite", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = invite_examples, .decode = object_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = invite_digest, .container = "call:signal", .container_value = "1",
};
static const missive_type cancel = {
    .struct_size = sizeof(missive_type), .object_name = "call:cancel", .persistence = MISSIVE_PERSISTENCE_PERSISTED,
    .example_count = 1, .examples = cancel_examples, .decode = object_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = cancel_digest, .container = "call:signal", .container_value = "2",
};
static const missive_container *const containers[] = {&signal_container};
static const missive_type *const types[] = {&invite, &cancel};
static const missive_plugin plugin = {
    .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin), .name = "IntegerContainer", .version = "1.0.0",
    .vendor = "Missive Tests", .type_count = 2, .types = types, .container_count = 1, .containers = containers,
};

MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
