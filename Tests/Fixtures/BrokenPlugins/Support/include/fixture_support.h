/* Shared parts of the deliberately broken test plugins: a trivial "echo" message type whose handle
 * keeps a copy of the content. Each fixture uses it to differ from a valid plugin in one way only. */
#ifndef FIXTURE_SUPPORT_H
#define FIXTURE_SUPPORT_H

#include "missive_plugin.h"

/* The handle fixture_decode returns: a copy of the content. */
typedef struct echo {
    size_t length;
    uint8_t bytes[];
} echo;

int32_t fixture_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                       const missive_sink *error);
/* The same, but refusing any member other than "fixture" and "round". */
int32_t fixture_decode_strict(void *context, const uint8_t *content, size_t length, missive_message **out,
                              const missive_sink *error);
void fixture_release(void *context, missive_message *message);
/* Stores a new echo handle holding a copy of the content in *out: MISSIVE_OK, or MISSIVE_FAILED without memory. */
int32_t fixture_keep(const uint8_t *content, size_t length, missive_message **out);
int32_t fixture_encode(void *context, const missive_message *message, const missive_sink *out);
int32_t fixture_digest(void *context, const missive_message *message, const missive_sink *out);

/* The get_extension of a type whose missive.view.v1 extension is `view`: `view` for MISSIVE_VIEW_EXTENSION,
 * NULL for any other id. */
const void *fixture_view_extension(const missive_view_v1 *view, const char *extension_id);

/* The get_plugin_extension of a plugin whose missive.actions.v1 extension is `actions`: `actions` for
 * MISSIVE_ACTIONS_EXTENSION, NULL for any other id. */
const void *fixture_actions_extension(const missive_actions_v1 *actions, const char *extension_id);

/* Defines a missive.actions.v1 extension listing `action_array` (a static array of missive_action pointers)
 * and `function_name`, a get_plugin_extension that returns it. */
#define FIXTURE_ACTIONS(action_array, function_name)                                              \
    static const missive_actions_v1 function_name##_extension = {                               \
        .struct_size = sizeof(missive_actions_v1),                                              \
        .action_count = sizeof(action_array) / sizeof((action_array)[0]),                       \
        .actions = (action_array),                                                               \
    };                                                                                           \
    static const void *function_name(void *context, const char *extension_id) {                 \
        (void)context;                                                                           \
        return fixture_actions_extension(&function_name##_extension, extension_id);             \
    }

/* A plugin descriptor initializer like FIXTURE_PLUGIN, whose get_plugin_extension is `extension_function`. */
#define FIXTURE_PLUGIN_WITH_ACTIONS(plugin_name, type_array, extension_function)                  \
    {                                                                                            \
        .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin),               \
        .name = (plugin_name), .version = "0.0.1", .vendor = "Missive Tests",                    \
        .type_count = sizeof(type_array) / sizeof((type_array)[0]), .types = (type_array),       \
        .get_plugin_extension = (extension_function),                                            \
    }

/* Writes a valid view with the header's helpers, a vertical stack of the title "Fixture" and `text` as body
 * text, and returns what missive_view_end returns. */
int32_t fixture_write_view(const missive_sink *out, const char *text);

/* Whether `length` bytes of `content` hold the NUL-terminated `word`. */
int fixture_holds(const uint8_t *content, size_t length, const char *word);

/* Whether an echo handle's content holds `text`. */
int fixture_contains(const missive_message *message, const char *text);

/* One example content: {"fixture":true}. */
extern const missive_bytes fixture_examples[1];

/* A valid type descriptor initializer with the given names and persistence. */
#define FIXTURE_TYPE(name, business, persistence_value)                                          \
    {                                                                                            \
        .struct_size = sizeof(missive_type), .flags = 0, .object_name = (name),                  \
        .business_id = (business), .persistence = (persistence_value), .example_count = 1,       \
        .examples = fixture_examples, .context = NULL, .decode = fixture_decode,                 \
        .release = fixture_release, .encode = fixture_encode, .digest = fixture_digest,          \
    }

/* A valid plugin descriptor initializer for a static array of type pointers. */
#define FIXTURE_PLUGIN(plugin_name, type_array)                                                  \
    {                                                                                            \
        .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin),               \
        .name = (plugin_name), .version = "0.0.1", .vendor = "Missive Tests",                    \
        .type_count = sizeof(type_array) / sizeof((type_array)[0]), .types = (type_array),       \
    }

#endif
