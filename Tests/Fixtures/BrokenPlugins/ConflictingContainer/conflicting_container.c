/* Broken: it declares the built-in container MS:Custom again, with another key ("kind" instead of "businessID").
 * A host refuses that declaration and the type declared under it (fixture:conflict-poll), but the plugin's other
 * type (fixture:conflict-note, businessID "note" in the built-in MS:Custom, not under the declaration) and its
 * action ("pin") register and work. The checker fails names.reserved: no plugin may declare an MS: container. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenConflictingContainer", "0.0.1", "Missive Tests");
MISSIVE_METADATA_CONTAINER_STRING("MS:Custom", "kind");
MISSIVE_METADATA_TYPE_IN("fixture:conflict-poll", "MS:Custom", "poll", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_TYPE_BUSINESS("fixture:conflict-note", "note", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:conflict-note", "pin", "Pin", "pin", 0, "content", "int32(message m, sink out)", "conflict_note_pin");

/* Gives the note's content back with "pinned" added: {"fixture":true} becomes {"pinned":true,"fixture":true}. */
MISSIVE_EXPORT int32_t conflict_note_pin(const missive_message *message, const missive_sink *out) {
    const echo *value = (const echo *)message;
    missive_write_string(out, "{\"pinned\":true,");
    out->write(out->context, value->bytes + 1, value->length - 1);
    return MISSIVE_OK;
}

static const char poll_example[] = "{\"kind\":\"poll\",\"fixture\":true}";
static const missive_bytes poll_examples[] = {{(const uint8_t *)poll_example, sizeof poll_example - 1}};

static const missive_container custom_again = {
    .struct_size = sizeof(missive_container), .key_kind = MISSIVE_KEY_STRING, .object_name = "MS:Custom", .key = "kind",
};
static const missive_type poll = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:conflict-poll", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = poll_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .container = "MS:Custom", .container_value = "poll",
};
static const missive_type note = FIXTURE_TYPE("fixture:conflict-note", "note", MISSIVE_PERSISTENCE_COUNTED);

static const missive_action pin = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "pin", .object_name = "fixture:conflict-note",
    .title = "Pin", .icon = "pin", .yields = MISSIVE_YIELDS_CONTENT, .signature = "int32(message m, sink out)", .symbol = "conflict_note_pin",
};
static const missive_action *const actions[] = {&pin};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_container *const containers[] = {&custom_again};
static const missive_type *const types[] = {&poll, &note};
static const missive_plugin plugin = {
    .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin), .name = "BrokenConflictingContainer", .version = "0.0.1",
    .vendor = "Missive Tests", .type_count = 2, .types = types, .container_count = 1, .containers = containers,
    .get_plugin_extension = get_plugin_extension,
};

MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
