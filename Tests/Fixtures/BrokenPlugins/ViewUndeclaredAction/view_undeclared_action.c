/* Broken: the view draws a "Delete" button for an action "delete" that the type does not declare (it declares
 * only "pin"). The host cannot run it: the button does nothing. view.actions fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewUndeclaredAction", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-undeclared-action", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:view-undeclared-action", "pin", "Pin", "pin", 0, "content", "int32(message m, sink out)",
                                "undeclared_action_pin");

MISSIVE_EXPORT int32_t undeclared_action_pin(const missive_message *message, const missive_sink *out) {
    const echo *value = (const echo *)message;
    out->write(out->context, value->bytes, value->length);
    return MISSIVE_OK;
}

static int32_t buttons_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    missive_view_writer w;
    missive_view_begin(&w, out);
    missive_view_stack_begin(&w, "vertical", 0);
    missive_view_text(&w, "Fixture", "title", NULL, 0);
    missive_view_button(&w, "Pin", "pin", NULL);
    /* The defect: no action "delete" is declared for this type. */
    missive_view_button(&w, "Delete", "delete", NULL);
    missive_view_stack_end(&w);
    return missive_view_end(&w);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = buttons_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_action pin = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "pin", .object_name = "fixture:view-undeclared-action",
    .title = "Pin", .icon = "pin", .yields = MISSIVE_YIELDS_CONTENT, .signature = "int32(message m, sink out)", .symbol = "undeclared_action_pin",
};
static const missive_action *const actions[] = {&pin};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-undeclared-action", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("BrokenViewUndeclaredAction", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
