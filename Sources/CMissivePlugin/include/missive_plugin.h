/*
 * missive_plugin.h: the Missive plugin ABI, version 1.1.
 *
 * This header is the whole contract between a Missive host and a message-type
 * plugin (a shared library). Only C scalars, UTF-8 strings and byte buffers
 * cross it; no Swift type does. A plugin may be written in C, in Swift (through
 * MissivePluginKit) or in any language that can export a C function; the
 * section "Layout" gives every size and offset for writing bindings by hand.
 *
 * Life cycle
 *   1. The host reads the plugin's metadata from the ELF section
 *      MISSIVE_METADATA_SECTION without loading the file (see "Metadata"). It
 *      refuses the file there if the ABI major differs from its own or the
 *      minor is newer than its own.
 *   2. It loads the file with dlopen(RTLD_NOW | RTLD_LOCAL). It never unloads it.
 *   3. It looks up MISSIVE_ENTRY_SYMBOL and calls it once. The entry returns a
 *      descriptor that must stay valid, unchanged, for the life of the process.
 *   4. It checks abi_version and struct_size before reading any other field,
 *      then registers the containers and types the descriptor lists.
 *
 * Versions
 *   The major version is in the entry's name: a host of major 2 looks up
 *   missive_plugin_entry_v2 and never calls a v1 entry, so an entry need not
 *   check the host's major. Minor versions only add: fields appended to the
 *   structs below, new extension ids, new metadata members. A host of minor M
 *   loads plugins of minor 0 to M (ABI 1.1 hosts load every 1.0 plugin), and
 *   reads an appended field only when the struct's struct_size covers it
 *   (MISSIVE_HAS_FIELD). A plugin built with this header records minor 1 in
 *   its metadata and descriptor. An optional extension that only answers
 *   faster what the core functions answer (missive.text.v1) may join an
 *   existing minor: a host that does not know its id never asks for it, and
 *   a plugin that offers it keeps every core function, so it loads and works
 *   in every host of that minor. So may a metadata record that a host may
 *   ignore without harm, such as the file record ("Data files"): a host
 *   that does not know it skips it, and the plugin works there as before.
 *
 * Ownership
 *   - Every pointer in a descriptor (strings, arrays, examples, contexts) is
 *     owned by the plugin and must stay valid for the life of the process.
 *   - Content bytes passed to decode are owned by the host and are valid only
 *     during that call. The plugin copies what it keeps.
 *   - A message handle returned by decode is owned by the host from then on.
 *     The host releases it exactly once, through the same type's release
 *     function, after every other call on it has returned.
 *   - Variable-length results (encoded JSON, digest, push content, words, media
 *     fields, error text) are written into a missive_sink that the host lends
 *     for the duration of one call. The sink copies the bytes before write
 *     returns, so the plugin may pass pointers to its own stack or temporaries.
 *     The plugin never hands the host memory to free, apart from the handle.
 *
 * Pointers and lengths
 *   - The host never passes a NULL sink, a sink whose write is NULL, or a NULL
 *     out_message; a plugin need not test for them.
 *   - Content is `length` bytes of UTF-8 JSON, not NUL-terminated: read exactly
 *     `length` bytes. When length is 0, content may be NULL.
 *   - A plugin may call write with length 0; bytes may then be NULL.
 *
 * Threading
 *   - The entry function is called once, before any other call.
 *   - Every function of a missive_type may be called at the same time from any
 *     number of threads, on different handles or on the same handle.
 *     A handle must therefore not change after decode returns (or must guard
 *     its own changes). Only release is never concurrent with another call on
 *     the same handle.
 *   - A sink must be used only on the thread, and during the call, it was
 *     given on.
 *
 * Failures never cross the boundary
 *   No function may unwind into the host: a C++ exception, a Rust panic or a
 *   longjmp past the call is undefined behaviour and usually aborts the whole
 *   host. Catch them at the boundary (catch (...), std::panic::catch_unwind)
 *   and return MISSIVE_FAILED with a reason instead. No function may call
 *   exit, abort on bad input, or write to stdout/stderr.
 *
 * Strings
 *   All strings are UTF-8. Descriptor strings are NUL-terminated. Sink output
 *   carries an explicit length and need not be NUL-terminated.
 */
#ifndef MISSIVE_PLUGIN_H
#define MISSIVE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Versions, names and symbols
 * ------------------------------------------------------------------------- */

/* The ABI major version. A change here renames the entry symbol. */
#define MISSIVE_ABI_MAJOR 1
/* The ABI minor version (see "Versions" above). */
#define MISSIVE_ABI_MINOR 1
/* The value of missive_plugin.abi_version and missive_host.abi_version:
 * the major in the high 16 bits, the minor in the low 16. */
#define MISSIVE_ABI_VERSION ((MISSIVE_ABI_MAJOR << 16) | MISSIVE_ABI_MINOR)

/* The exported entry symbol. Its name carries the ABI major version. */
#define MISSIVE_ENTRY_SYMBOL "missive_plugin_entry_v1"

/* The ELF section that holds the plugin's metadata. */
#define MISSIVE_METADATA_SECTION "missive_meta"

/* Exports a symbol even when the plugin is compiled with -fvisibility=hidden.
 * The entry's prototype below carries it, so a definition of the entry is
 * exported whatever the compiler flags. */
#if defined(_WIN32)
#define MISSIVE_EXPORT __declspec(dllexport)
#else
#define MISSIVE_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------
 * Status codes returned by plugin functions
 *
 * What each function may return, and what the host does otherwise:
 *
 *   function          OK            ABSENT              INVALID_CONTENT / FAILED
 *   decode            handle set    (not allowed)       unknown message + reason
 *   encode            content       (not allowed)       error with the reason
 *   digest            the digest    (not allowed)       fallback digest
 *   push_content      push text     no push at all      push the digest
 *   searchable_words  the words     not searchable      not searchable
 *   media             the fields    no media reference  no media reference
 *
 * A status that is not allowed for a function, and any value other than the
 * four below, counts as MISSIVE_FAILED. decode returning MISSIVE_OK without
 * setting *out_message counts as MISSIVE_FAILED too. A NULL push_content means
 * "push the digest"; a NULL searchable_words means "not searchable".
 * ------------------------------------------------------------------------- */

/* The call succeeded and wrote its result. */
#define MISSIVE_OK 0
/* The call succeeded but has no value to give: no push content, not
 * searchable, no media reference. */
#define MISSIVE_ABSENT 1
/* decode: the content is not valid for this type. The error sink says why. */
#define MISSIVE_INVALID_CONTENT 2
/* Any other failure inside the plugin. */
#define MISSIVE_FAILED 3

/* ---------------------------------------------------------------------------
 * Persistence flags (the established chat-SDK values, so envelopes interoperate)
 * ------------------------------------------------------------------------- */

/* Not stored locally. */
#define MISSIVE_PERSISTENCE_NONE 0
/* Stored, not counted as unread. */
#define MISSIVE_PERSISTENCE_PERSISTED 1
/* Stored and counted as unread. */
#define MISSIVE_PERSISTENCE_COUNTED 3
/* Transient: never stored, never pushed. */
#define MISSIVE_PERSISTENCE_STATUS 16

/* ---------------------------------------------------------------------------
 * Type flags
 *
 * Bits this header does not define must be 0. A host ignores bits it does
 * not define, so a later minor can give them a meaning older hosts skip.
 * ------------------------------------------------------------------------- */

/* The type is a media type: its media function gives a media reference. */
#define MISSIVE_TYPE_MEDIA 1

/* ---------------------------------------------------------------------------
 * Text shown to people: the digest and the push content
 *
 * Both are one line of valid UTF-8: not empty, at most MISSIVE_TEXT_MAX_CODE_POINTS
 * Unicode code points (count the bytes that are not 10xxxxxx continuation
 * bytes), and none of these code points:
 *   U+0000..U+001F (C0 controls, including tab, line feed and carriage return),
 *   U+007F..U+009F (delete and the C1 controls, including U+0085 next line),
 *   U+2028 line separator and U+2029 paragraph separator.
 * The conformance suite checks these rules. A host repairs text that breaks
 * them rather than failing: invalid UTF-8 becomes U+FFFD, each forbidden code
 * point becomes a space, and text longer than the limit is cut to 255 code
 * points plus U+2026. An empty digest, or a failing digest function, gives the
 * fallback digest "[objectName]". Empty push text counts as MISSIVE_ABSENT.
 *
 * Searchable words are indexed, not shown: each is valid UTF-8 and not
 * empty, and may hold any character. Empty words are dropped.
 * ------------------------------------------------------------------------- */

#define MISSIVE_TEXT_MAX_CODE_POINTS 256

/* ---------------------------------------------------------------------------
 * Buffers and sinks
 * ------------------------------------------------------------------------- */

/* A byte range. Who owns it is stated where it is used. */
typedef struct missive_bytes {
    const uint8_t *bytes;
    size_t length;
} missive_bytes;

/* A writer the host lends to the plugin for one call.
 * write copies `length` bytes before it returns; it may be called several
 * times, and the pieces are joined in order unless the function that received
 * the sink says otherwise.
 *
 * Reasons for failures (ABI 1.1). A function other than decode that fails
 * may say why in its output sink: it calls write(context, NULL, 0), the
 * reason mark, and then writes a one-line reason, and returns MISSIVE_FAILED.
 * On a failure status the host discards what was written before the mark and
 * keeps what follows it as the reason; on MISSIVE_OK a NULL write with length
 * 0 writes nothing (as in ABI 1.0). missive_fail_with_reason does both steps.
 * decode has a sink of its own for its reason and needs no mark. */
typedef struct missive_sink {
    void *context;
    void (*write)(void *context, const uint8_t *bytes, size_t length);
} missive_sink;

/* Writes a NUL-terminated string into a sink. */
static inline void missive_write_string(const missive_sink *sink, const char *text) {
    size_t length = 0;
    while (text[length]) length++;
    sink->write(sink->context, (const uint8_t *)text, length);
}

/* Marks the rest of the output as the reason for a failure, writes `reason`
 * and returns MISSIVE_FAILED: `return missive_fail_with_reason(out, "...");`. */
static inline int32_t missive_fail_with_reason(const missive_sink *sink, const char *reason) {
    sink->write(sink->context, NULL, 0);
    missive_write_string(sink, reason);
    return MISSIVE_FAILED;
}

/* The same for an action that refuses its arguments (see "The actions extension"): marks, writes `reason`
 * and returns MISSIVE_INVALID_CONTENT. */
static inline int32_t missive_refuse_with_reason(const missive_sink *sink, const char *reason) {
    sink->write(sink->context, NULL, 0);
    missive_write_string(sink, reason);
    return MISSIVE_INVALID_CONTENT;
}

/* A decoded message: an opaque, immutable, plugin-side value. */
typedef struct missive_message missive_message;

/* The media reference a media type gives. The host fills struct_size and
 * size_bytes = -1 before the call; the plugin writes each field it knows
 * into its sink and sets size_bytes when it knows the size. A failing media
 * function gives its reason (after the mark) in mime_type. */
typedef struct missive_media_out {
    uint32_t struct_size;
    missive_sink remote_url;
    missive_sink local_path;
    missive_sink mime_type;
    int64_t size_bytes;
} missive_media_out;

/* ---------------------------------------------------------------------------
 * Containers (ABI 1.1)
 *
 * A container is an objectName whose content names its real type in one
 * top-level member, the key: MS:Custom, built into every host, dispatches on
 * the string member "businessID"; a Matrix bridge can declare
 * "m.room.message" dispatching on "msgtype"; a signalling container may
 * dispatch on an integer. A type registers under a container with the value
 * of the key that selects it: missive_type.business_id for MS:Custom, else
 * missive_type.container and container_value.
 *
 * Grammar: a container's objectName follows the objectName grammar (and may
 * not start with "MS:"); its key has 1 to 64 printable ASCII characters other
 * than '"' and '\'. Values of a string key follow the businessID grammar;
 * values of an integer key are written as the decimal spelling of an int64
 * ("1001", "-3", no '+' and no leading zeros) and match JSON integers without
 * a fraction or exponent. Content whose key is missing, of the wrong JSON
 * type or registered by no type becomes an unknown message whose reason names
 * the container and the key.
 *
 * Clashes: a container's objectName is an objectName like any other. Two
 * plugins may declare the same container when they agree on its key and key
 * kind; a declaration that disagrees is refused, with the types under it.
 * A value is taken by the first type registered under it in that container.
 * ------------------------------------------------------------------------- */

#define MISSIVE_KEY_STRING 0
#define MISSIVE_KEY_INTEGER 1

typedef struct missive_container {
    /* sizeof(missive_container) as the plugin was compiled. */
    uint32_t struct_size;
    /* MISSIVE_KEY_STRING or MISSIVE_KEY_INTEGER. */
    uint32_t key_kind;
    /* The container's objectName, for example "m.room.message". */
    const char *object_name;
    /* The top-level member to dispatch on, for example "msgtype". */
    const char *key;
} missive_container;

/* ---------------------------------------------------------------------------
 * Content, and what a type must not lose
 *
 * decode receives the content as sent. Content that arrived in a container
 * still holds the container's key (MS:Custom content holds its "businessID"),
 * and content from a newer sender may hold members this version of the type
 * has never seen. A decoder must ignore top-level members it does not know;
 * one that refuses them makes every container message an unknown message.
 *
 * Content that reaches decode from an envelope was validated by the host as
 * exactly one RFC 8259 JSON value in UTF-8, but decode must still refuse
 * anything else (invalid UTF-8, a NUL outside a string, trailing bytes): the
 * conformance suite sends it, and not every caller validates. A \u escape
 * that makes a lone surrogate may be refused or read as U+FFFD. Where a key
 * appears twice, the host dispatches on the first.
 *
 * encode writes one JSON object: the content as the type understands it,
 * with every member it read (a member it read but leaves out would look
 * unknown to the host). It need not write the container's key, which the
 * host keeps as a member the type does not know; a type may also know it
 * (the MatrixBridge sample writes "msgtype"), and must then write it. It need
 * not keep members it does not know; the host does, by these rules:
 *   - The host keeps the bytes each message was received with. Sending a
 *     received message again sends those bytes; encode is not called.
 *   - When a type makes new content for a received message (an edit, an
 *     action), the host writes the new content's members first, then every
 *     top-level member of the received content that neither the new content
 *     nor the type's encoding of the received message contains, in received
 *     order and spelling (the protobuf rule for unknown fields).
 *   - Content a host makes itself goes out as the type encodes it; sent
 *     under a container, it gets the container's key first when the
 *     encoding lacks it.
 * So no helper is needed on the plugin's side.
 *
 * Evolving a type: add members, never remove, rename or retype them; make new
 * members optional with a default, so that content from older senders stays
 * valid; an older host keeps a newer sender's members through edits. A change
 * older content cannot follow takes a new objectName.
 * ------------------------------------------------------------------------- */

/* ---------------------------------------------------------------------------
 * Extensions
 *
 * Features beyond the core (a rendered view, actions) are extensions: a
 * versioned struct the host asks for by id. Missive's own are
 * "missive.view.v1" and "missive.text.v1" (per type) and
 * "missive.actions.v1" (per plugin).
 *   - Ids are spelled "missive.<name>.v<N>" for Missive's own (for example
 *     "missive.view.v1") and "<reverse-domain>.<name>.v<N>" for anyone else's,
 *     with <name> made of lowercase ASCII letters, digits and '_'.
 *   - Every extension struct starts with uint32_t struct_size, set to its
 *     sizeof as compiled. Within one id, later minors only append fields; an
 *     incompatible change takes a new id (v<N+1>), and a plugin may offer both.
 *   - The host reads a field only if MISSIVE_HAS_FIELD says it is there.
 *   - get_extension returns NULL for an id it does not know. For a known id it
 *     returns a pointer owned by the plugin, valid and unchanged for the life
 *     of the process, the same pointer each time; it may be called from any
 *     thread at any time after the entry returned.
 *   - Per type: missive_type.get_extension(type->context, id). Per plugin:
 *     missive_plugin.get_plugin_extension(plugin->context, id) (ABI 1.1); a
 *     1.1 host calls the 1.0 get_extension(id) only when it is NULL.
 * ------------------------------------------------------------------------- */

/* Whether the struct at `pointer` (of type `type`, starting with struct_size)
 * is large enough to hold `field`. */
#define MISSIVE_HAS_FIELD(pointer, type, field) \
    ((pointer)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* ---------------------------------------------------------------------------
 * The view extension: "missive.view.v1" (ABI 1.1)
 *
 * A type that describes how its messages are drawn returns a missive_view_v1
 * from missive_type.get_extension(type->context, MISSIVE_VIEW_EXTENSION).
 * Its view function writes the message's view into `out` as one JSON
 * element: a tree of the portable elements text, link, image, stack, facts,
 * progress, button, divider and badge, whose members docs/VIEWS.md lists.
 * The host reads it, holds it to the documented limits (depth 8, 256
 * elements, 64 KiB), cleans every string, keeps only http and https URLs,
 * then measures, lays out and draws it. An element of a kind the host does
 * not know is replaced by its "fallback" member (an element) or skipped.
 *
 * view returns MISSIVE_OK with the document, MISSIVE_ABSENT when this message
 * has no view of its own (the host then draws its default view: the digest,
 * and the media for a media type), or MISSIVE_FAILED, with a reason after
 * the mark; a failure or an unreadable document also gives the default view.
 * It follows the threading rules of the type's other functions. Status
 * types are not drawn, and need no view.
 *
 * The missive_view_* helpers below write the document for C authors: they
 * escape strings, place commas and brackets, and check that the tree is
 * closed. Strings are NUL-terminated UTF-8 (missive_view_text_n takes a
 * length); a NULL string counts as empty.
 *
 *   missive_view_writer w;
 *   missive_view_begin(&w, out);
 *   missive_view_stack_begin(&w, "vertical", 0);
 *   missive_view_text(&w, "★★★★☆", "title", NULL, 0);
 *   missive_view_text(&w, comment, "body", NULL, 3);
 *   missive_view_stack_end(&w);
 *   return missive_view_end(&w);
 * ------------------------------------------------------------------------- */

#define MISSIVE_VIEW_EXTENSION "missive.view.v1"

typedef struct missive_view_v1 {
    /* sizeof(missive_view_v1) as the plugin was compiled. */
    uint32_t struct_size;
    /* Writes the message's view: one JSON element (see above). */
    int32_t (*view)(void *context, const missive_message *message, const missive_sink *out);
} missive_view_v1;

/* The state of one view being written. Fields are private to the helpers. */
typedef struct missive_view_writer {
    const missive_sink *out;
    /* How many stacks and fact lists are open. */
    uint32_t depth;
    /* Elements written outside any stack: a document has exactly one. */
    uint32_t roots;
    /* Bit d: something was written at depth d, so the next item needs a comma. */
    uint64_t written;
    /* Bit d: the container open at depth d is a fact list. */
    uint64_t in_facts;
    /* The first misuse, reported by missive_view_end, or NULL. */
    const char *error;
} missive_view_writer;

static inline void missive_view_put_(missive_view_writer *w, const char *bytes, size_t length) {
    w->out->write(w->out->context, (const uint8_t *)bytes, length);
}

static inline void missive_view_put_literal_(missive_view_writer *w, const char *text) {
    size_t length = 0;
    while (text[length]) length++;
    missive_view_put_(w, text, length);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static inline void missive_view_put_string_n_(missive_view_writer *w, const char *text, size_t length) {
    static const char hex[] = "0123456789abcdef";
    size_t start = 0, i;
    missive_view_put_(w, "\"", 1);
    for (i = 0; text != NULL && i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\' || c < 0x20) {
            char escape[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (i > start) missive_view_put_(w, text + start, i - start);
            if (c == '"' || c == '\\') {
                escape[1] = (char)c;
                missive_view_put_(w, escape, 2);
            } else {
                missive_view_put_(w, escape, 6);
            }
            start = i + 1;
        }
    }
    if (text != NULL && length > start) missive_view_put_(w, text + start, length - start);
    missive_view_put_(w, "\"", 1);
}

static inline void missive_view_put_string_(missive_view_writer *w, const char *text) {
    size_t length = 0;
    while (text != NULL && text[length]) length++;
    missive_view_put_string_n_(w, text, length);
}

static inline void missive_view_put_uint_(missive_view_writer *w, uint64_t value) {
    char digits[20];
    int count = 0;
    do {
        digits[19 - count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    missive_view_put_(w, digits + 20 - count, (size_t)count);
}

/* `,"key":` */
static inline void missive_view_put_key_(missive_view_writer *w, const char *key) {
    missive_view_put_(w, ",\"", 2);
    missive_view_put_literal_(w, key);
    missive_view_put_(w, "\":", 2);
}

/* Opens an element of `kind` in the current container: `{"type":"kind"`. */
static inline int missive_view_open_(missive_view_writer *w, const char *kind) {
    if (w->depth > 0 && (w->in_facts >> w->depth & 1)) {
        if (w->error == NULL) w->error = "an element was written inside a fact list; only facts go there";
        return 0;
    }
    if (w->depth == 0) w->roots++;
    if (w->written >> w->depth & 1) missive_view_put_(w, ",", 1);
    w->written |= (uint64_t)1 << w->depth;
    missive_view_put_(w, "{\"type\":", 8);
    missive_view_put_string_(w, kind);
    return 1;
}

/* Starts a view written into `out`. */
static inline void missive_view_begin(missive_view_writer *w, const missive_sink *out) {
    w->out = out;
    w->depth = 0;
    w->roots = 0;
    w->written = 0;
    w->in_facts = 0;
    w->error = NULL;
}

/* Text with a role ("body", "title", "caption", "code" or NULL for body), an
 * emphasis ("strong", "italic" or NULL) and a line limit (0 for none). */
static inline void missive_view_text_n(missive_view_writer *w, const char *text, size_t length, const char *role,
                                       const char *emphasis, uint32_t max_lines) {
    if (!missive_view_open_(w, "text")) return;
    missive_view_put_key_(w, "text");
    missive_view_put_string_n_(w, text, length);
    if (role != NULL) { missive_view_put_key_(w, "role"); missive_view_put_string_(w, role); }
    if (emphasis != NULL) { missive_view_put_key_(w, "emphasis"); missive_view_put_string_(w, emphasis); }
    if (max_lines > 0) { missive_view_put_key_(w, "maxLines"); missive_view_put_uint_(w, max_lines); }
    missive_view_put_(w, "}", 1);
}

static inline void missive_view_text(missive_view_writer *w, const char *text, const char *role, const char *emphasis,
                                     uint32_t max_lines) {
    size_t length = 0;
    while (text != NULL && text[length]) length++;
    missive_view_text_n(w, text, length, role, emphasis, max_lines);
}

/* A link: its text and an http or https URL. */
static inline void missive_view_link(missive_view_writer *w, const char *text, const char *url) {
    if (!missive_view_open_(w, "link")) return;
    missive_view_put_key_(w, "text");
    missive_view_put_string_(w, text);
    missive_view_put_key_(w, "url");
    missive_view_put_string_(w, url);
    missive_view_put_(w, "}", 1);
}

/* An image: an http or https URL, its size in pixels (a negative value for
 * unknown) and its alternative text. */
static inline void missive_view_image(missive_view_writer *w, const char *url, int32_t width, int32_t height, const char *alt) {
    if (!missive_view_open_(w, "image")) return;
    missive_view_put_key_(w, "url");
    missive_view_put_string_(w, url);
    if (width >= 0) { missive_view_put_key_(w, "width"); missive_view_put_uint_(w, (uint64_t)width); }
    if (height >= 0) { missive_view_put_key_(w, "height"); missive_view_put_uint_(w, (uint64_t)height); }
    missive_view_put_key_(w, "alt");
    missive_view_put_string_(w, alt);
    missive_view_put_(w, "}", 1);
}

/* Opens a stack ("vertical", "horizontal" or NULL for vertical); spacing is
 * 0 to 8. Close it with missive_view_stack_end. */
static inline void missive_view_stack_begin(missive_view_writer *w, const char *axis, uint32_t spacing) {
    if (w->depth >= 63) { if (w->error == NULL) w->error = "stacks nested deeper than 63"; return; }
    if (!missive_view_open_(w, "stack")) return;
    if (axis != NULL) { missive_view_put_key_(w, "axis"); missive_view_put_string_(w, axis); }
    missive_view_put_key_(w, "spacing");
    missive_view_put_uint_(w, spacing);
    missive_view_put_key_(w, "children");
    missive_view_put_(w, "[", 1);
    w->depth++;
    w->written &= ~((uint64_t)1 << w->depth);
    w->in_facts &= ~((uint64_t)1 << w->depth);
}

/* Closes a container opened by missive_view_stack_begin or missive_view_facts_begin. */
static inline void missive_view_close_(missive_view_writer *w, int facts) {
    if (w->depth == 0 || (int)(w->in_facts >> w->depth & 1) != facts) {
        if (w->error == NULL) w->error = facts ? "missive_view_facts_end without an open fact list" : "missive_view_stack_end without an open stack";
        return;
    }
    w->depth--;
    missive_view_put_(w, "]}", 2);
}

static inline void missive_view_stack_end(missive_view_writer *w) { missive_view_close_(w, 0); }

/* Opens a fact list; add rows with missive_view_fact, close it with missive_view_facts_end. */
static inline void missive_view_facts_begin(missive_view_writer *w) {
    if (w->depth >= 63) { if (w->error == NULL) w->error = "stacks nested deeper than 63"; return; }
    if (!missive_view_open_(w, "facts")) return;
    missive_view_put_key_(w, "facts");
    missive_view_put_(w, "[", 1);
    w->depth++;
    w->written &= ~((uint64_t)1 << w->depth);
    w->in_facts |= (uint64_t)1 << w->depth;
}

static inline void missive_view_fact(missive_view_writer *w, const char *label, const char *value) {
    if (w->depth == 0 || !(w->in_facts >> w->depth & 1)) {
        if (w->error == NULL) w->error = "missive_view_fact outside a fact list";
        return;
    }
    if (w->written >> w->depth & 1) missive_view_put_(w, ",", 1);
    w->written |= (uint64_t)1 << w->depth;
    missive_view_put_(w, "{\"label\":", 9);
    missive_view_put_string_(w, label);
    missive_view_put_(w, ",\"value\":", 9);
    missive_view_put_string_(w, value);
    missive_view_put_(w, "}", 1);
}

static inline void missive_view_facts_end(missive_view_writer *w) { missive_view_close_(w, 1); }

/* A progress bar: its label, the fraction numerator/denominator (written with
 * four decimals; 0 when denominator is 0) and a detail such as "3 votes" (or NULL). */
static inline void missive_view_progress(missive_view_writer *w, const char *label, uint64_t numerator, uint64_t denominator,
                                         const char *detail) {
    uint64_t scaled = 0;
    char fraction[6] = {'0', '.', '0', '0', '0', '0'};
    int i;
    if (!missive_view_open_(w, "progress")) return;
    if (denominator != 0) scaled = numerator >= denominator ? 10000 : (uint64_t)((double)numerator / (double)denominator * 10000.0 + 0.5);
    if (scaled >= 10000) { fraction[0] = '1'; scaled = 0; }
    for (i = 5; i >= 2; i--) { fraction[i] = (char)('0' + scaled % 10); scaled /= 10; }
    missive_view_put_key_(w, "label");
    missive_view_put_string_(w, label);
    missive_view_put_key_(w, "fraction");
    missive_view_put_(w, fraction, 6);
    if (detail != NULL) { missive_view_put_key_(w, "detail"); missive_view_put_string_(w, detail); }
    missive_view_put_(w, "}", 1);
}

/* A button: its title, the id of the action it names, and the action's
 * arguments as one JSON array written out (for example "[2]"), or NULL. */
static inline void missive_view_button(missive_view_writer *w, const char *title, const char *action, const char *arguments_json) {
    if (!missive_view_open_(w, "button")) return;
    missive_view_put_key_(w, "title");
    missive_view_put_string_(w, title);
    missive_view_put_key_(w, "action");
    missive_view_put_string_(w, action);
    if (arguments_json != NULL) { missive_view_put_key_(w, "arguments"); missive_view_put_literal_(w, arguments_json); }
    missive_view_put_(w, "}", 1);
}

static inline void missive_view_divider(missive_view_writer *w) {
    if (!missive_view_open_(w, "divider")) return;
    missive_view_put_(w, "}", 1);
}

/* A badge: its text and a tone ("neutral", "info", "success", "warning",
 * "danger" or NULL for neutral). */
static inline void missive_view_badge(missive_view_writer *w, const char *text, const char *tone) {
    if (!missive_view_open_(w, "badge")) return;
    missive_view_put_key_(w, "text");
    missive_view_put_string_(w, text);
    if (tone != NULL) { missive_view_put_key_(w, "tone"); missive_view_put_string_(w, tone); }
    missive_view_put_(w, "}", 1);
}

/* One element written out as JSON by the caller: for example one of a kind
 * newer than these helpers, with a "fallback" member for older hosts. A NULL
 * or empty element is a misuse, which missive_view_end reports. */
static inline void missive_view_raw(missive_view_writer *w, const char *element_json) {
    if (element_json == NULL || element_json[0] == 0) {
        if (w->error == NULL) w->error = "missive_view_raw without an element";
        return;
    }
    if (w->depth > 0 && (w->in_facts >> w->depth & 1)) {
        if (w->error == NULL) w->error = "an element was written inside a fact list; only facts go there";
        return;
    }
    if (w->depth == 0) w->roots++;
    if (w->written >> w->depth & 1) missive_view_put_(w, ",", 1);
    w->written |= (uint64_t)1 << w->depth;
    missive_view_put_literal_(w, element_json);
}

/* Finishes the view: MISSIVE_OK when exactly one element was written and
 * every stack and fact list is closed; otherwise MISSIVE_FAILED with the
 * reason after the mark (see "Buffers and sinks"). */
static inline int32_t missive_view_end(missive_view_writer *w) {
    if (w->error != NULL) return missive_fail_with_reason(w->out, w->error);
    if (w->depth != 0) return missive_fail_with_reason(w->out, "a stack or fact list was left open");
    if (w->roots == 0) return missive_fail_with_reason(w->out, "the view has no element");
    if (w->roots > 1) return missive_fail_with_reason(w->out, "the view has several top-level elements; put them in a stack");
    return MISSIVE_OK;
}

/* ---------------------------------------------------------------------------
 * The text extension: "missive.text.v1" (ABI 1.1, optional)
 *
 * A host that lists a conversation and indexes it for search asks each
 * message for its digest, its push text and its words: three calls into the
 * plugin. A type may answer all three in one call instead, by returning a
 * missive_text_v1 from missive_type.get_extension(type->context,
 * MISSIVE_TEXT_EXTENSION). Its texts function writes into `out`:
 *   - into out->digest, what digest writes, and sets out->digest_status to
 *     what digest returns;
 *   - into out->push_content, what push_content writes, and sets
 *     out->push_status to what it returns (MISSIVE_ABSENT for no push);
 *   - into out->searchable_words, what searchable_words writes, one word per
 *     write call, and sets out->words_status to what it returns.
 * Every rule of the separate functions holds for its part: the statuses of
 * the table in "Status codes", the one-line rules of "Text shown to people"
 * for the digest and the push text, words as pieces, and a reason after the
 * mark in the part's own sink on a failure status. A part whose function is
 * NULL in the descriptor (no push_content, no searchable_words) is not read:
 * the descriptor says what the type offers, and the extension only answers
 * it faster. Writes to the three sinks may come in any order.
 *
 * The host fills struct_size and the three sinks, and sets the status of
 * each part it wants to MISSIVE_FAILED before the call. It sets push_status
 * to MISSIVE_ABSENT when it does not want the push text now (a conversation
 * list and a search index need only the digest and the words): texts may
 * then skip that part, and the host does not read it. texts returns
 * MISSIVE_OK when it set the statuses; on any other return the host ignores
 * `out` and calls the separate functions. The separate functions stay required (digest) or
 * optional as before, and must agree with texts: the conformance suite
 * compares them on every example, variation and mutation. A host without
 * the extension never asks for it, so a plugin that offers it loses nothing
 * there; a plugin without it (a 1.0 plugin, a C plugin that leaves it out)
 * is answered through the separate functions. It follows the threading
 * rules of the type's other functions.
 * ------------------------------------------------------------------------- */

#define MISSIVE_TEXT_EXTENSION "missive.text.v1"

/* Where texts writes. Filled by the host for one call; the sinks follow the
 * rules of "Buffers and sinks". */
typedef struct missive_text_out {
    /* sizeof(missive_text_out) as the host was compiled. */
    uint32_t struct_size;
    /* What digest, push_content and searchable_words would return. */
    int32_t digest_status;
    int32_t push_status;
    int32_t words_status;
    missive_sink digest;
    missive_sink push_content;
    missive_sink searchable_words;
} missive_text_out;

typedef struct missive_text_v1 {
    /* sizeof(missive_text_v1) as the plugin was compiled. */
    uint32_t struct_size;
    /* Writes the digest, push text and words in one call (see above). */
    int32_t (*texts)(void *context, const missive_message *message, missive_text_out *out);
} missive_text_v1;

/* ---------------------------------------------------------------------------
 * The actions extension: "missive.actions.v1" (ABI 1.1)
 *
 * People act on messages (vote in a poll, open a link) and create them from
 * a composer's "more" menu (a poll, a rating). A plugin declares these
 * actions twice: in its metadata ("action" records, see "Metadata"), so a
 * host can list them without running the plugin, and in this extension,
 * returned by missive_plugin.get_plugin_extension(context,
 * MISSIVE_ACTIONS_EXTENSION). The loader refuses an action whose two
 * declarations disagree.
 *
 *   - A message action (kind MISSIVE_ACTION_MESSAGE) acts on a message of one
 *     of the plugin's own types, object_name. It yields new content for that
 *     message (MISSIVE_YIELDS_CONTENT) or a URL to open (MISSIVE_YIELDS_URL).
 *     Its id is unique within its type ("vote").
 *   - A composer action (kind MISSIVE_ACTION_COMPOSER) creates new content of
 *     the type object_name. Its id is unique in the host, so namespace it
 *     ("demo.poll.create"); the first plugin to declare an id keeps it.
 *
 * An action is a plain C function with native parameters, which the host
 * calls through libffi by its signature, after checking and converting the
 * caller's arguments (JSON values) against it. The signature is a string:
 *
 *   signature  = "int32" "(" [ parameter *( "," parameter ) ] ")"
 *   parameter  = type name
 *   type       = "int32" / "int64" / "double" / "bool" / "string"
 *              / "message" / "sink"
 *   name       = 1 to 32 of a-z 0-9 _, starting with a letter or _
 *
 * Spaces and tabs may separate tokens; names are unique in a signature. The
 * types, as the function receives them:
 *
 *   int32    int32_t                  a JSON integer from -2^31 to 2^31-1
 *   int64    int64_t                  a JSON integer from -2^63 to 2^63-1
 *   double   double                   a finite JSON number
 *   bool     bool (<stdbool.h>)       true or false
 *   string   const char *             a JSON string: see below
 *   message  const missive_message *  the message acted on (message actions)
 *   sink     const missive_sink *     where the result goes
 *
 * A string arrives as a pointer to NUL-terminated, valid UTF-8 holding no
 * NUL of its own, so strlen gives its length in bytes; it is never NULL (an
 * empty string is ""), at most MISSIVE_ACTION_STRING_MAX bytes long, owned
 * by the host and valid only during the call. The host refuses an argument
 * that is not so (a JSON string holding \u0000, a lone surrogate, invalid
 * UTF-8) before calling.
 *
 * A message action's signature has exactly one message and one sink; a
 * composer action's has one sink and no message. Parameters may come in any
 * order; at most MISSIVE_ACTION_MAX_VALUES are of the value types (int32 to
 * string), and the caller gives those, in order. The function returns
 * int32_t. A signature with a type outside this grammar, or that breaks these
 * rules, refuses the action at load time, with the reason.
 *
 *   MISSIVE_EXPORT int32_t demo_poll_vote(const missive_message *poll,
 *       int32_t option, const char *voter, const missive_sink *out);
 *   signature "int32(message poll, int32 option, string voter, sink out)"
 *
 * The function is found through `function` or, when that is NULL, by
 * dlsym of `symbol` (export it with MISSIVE_EXPORT); when both are set they
 * must be the same function. It writes its result into the sink:
 *   - content (message actions yielding content, and composer actions): one
 *     JSON object, the whole content as the type's encode would write it.
 *     The host decodes it with the type before accepting it; for a message
 *     it then keeps the members of the received content that the type does
 *     not know (see "Content"), and the message keeps its id and envelope.
 *   - a URL: an http or https URL, at most 2048 bytes.
 *
 *   function returns   the host
 *   MISSIVE_OK         takes the result
 *   MISSIVE_INVALID_CONTENT
 *                      refuses the arguments: valid C values that make no
 *                      sense for this message (option 7 of a 3-option
 *                      poll); the reason follows the mark
 *   MISSIVE_FAILED     reports the failure; the reason follows the mark
 *   anything else counts as MISSIVE_FAILED.
 *
 * Actions follow the threading rules of a type's functions: any thread, at
 * the same time, on the same handle, which they must not change (they write
 * new content instead). Their result depends only on the message and the
 * arguments: the host gives new messages their id, sender and time.
 *
 * `examples` holds arguments the conformance suite calls the action with: a
 * JSON array of argument arrays, such as "[[0,\"alice\"],[1,\"bob\"]]"
 * (NULL: none). Each must fit the signature, and a message action must
 * succeed with each of them on each example of its type. An action without
 * value parameters runs with [] when it declares none.
 * ------------------------------------------------------------------------- */

#define MISSIVE_ACTIONS_EXTENSION "missive.actions.v1"

/* missive_action.kind */
#define MISSIVE_ACTION_MESSAGE 0
#define MISSIVE_ACTION_COMPOSER 1

/* missive_action.yields, for message actions (composer actions yield content). */
#define MISSIVE_YIELDS_CONTENT 0
#define MISSIVE_YIELDS_URL 1

/* The longest string argument, in bytes, and the most value parameters. */
#define MISSIVE_ACTION_STRING_MAX 1048576
#define MISSIVE_ACTION_MAX_VALUES 16

/* Any action function, whatever its signature; the host casts it back. */
typedef void (*missive_action_function)(void);

typedef struct missive_action {
    /* sizeof(missive_action) as the plugin was compiled. */
    uint32_t struct_size;
    /* MISSIVE_ACTION_MESSAGE or MISSIVE_ACTION_COMPOSER. */
    uint32_t kind;
    /* 1 to 64 of A-Z a-z 0-9 . _ - */
    const char *id;
    /* The type acted on (message) or created (composer). */
    const char *object_name;
    /* What a menu or button shows: one line, 1 to 64 code points (text rules). */
    const char *title;
    /* An icon name from the host's set, 1 to 64 of A-Z a-z 0-9 . _ -; hosts
     * that lack it show a generic icon. */
    const char *icon;
    /* Higher comes first, then by title. */
    int32_t priority;
    /* MISSIVE_YIELDS_CONTENT or MISSIVE_YIELDS_URL (message actions; 0 for composer actions). */
    uint32_t yields;
    /* The C signature (see above). */
    const char *signature;
    /* The exported name of the function, or NULL when function is set. */
    const char *symbol;
    /* The function, or NULL to have the host look up symbol. */
    missive_action_function function;
    /* Example arguments for the conformance suite, or NULL. */
    const char *examples;
} missive_action;

typedef struct missive_actions_v1 {
    /* sizeof(missive_actions_v1) as the plugin was compiled. */
    uint32_t struct_size;
    uint32_t action_count;
    /* The actions, as an array of pointers so that missive_action may grow. */
    const missive_action *const *actions;
} missive_actions_v1;

/* ---------------------------------------------------------------------------
 * A message type
 * ------------------------------------------------------------------------- */

typedef struct missive_type {
    /* sizeof(missive_type) as the plugin was compiled. */
    uint32_t struct_size;
    /* MISSIVE_TYPE_* bits. */
    uint32_t flags;
    /* The type's unique name (see the README for its grammar). */
    const char *object_name;
    /* The business identifier that MS:Custom content may carry, or NULL. */
    const char *business_id;
    /* One of the MISSIVE_PERSISTENCE_* values. */
    uint32_t persistence;
    /* At least one valid encoded content, for the conformance suite. */
    uint32_t example_count;
    const missive_bytes *examples;
    /* Passed unchanged as the first argument of every function below. */
    void *context;

    /* Parses `length` bytes of JSON content (see "Content"). The host sets
     * *out_message to NULL before the call. On MISSIVE_OK stores a new handle
     * in *out_message. On failure returns MISSIVE_INVALID_CONTENT (or
     * MISSIVE_FAILED), leaves *out_message NULL, and may write a one-line
     * reason into `error`. The host takes ownership of *out_message only with
     * MISSIVE_OK. Must never crash on any input, and must refuse content that
     * is not exactly one JSON value (trailing bytes included). Required. */
    int32_t (*decode)(void *context, const uint8_t *content, size_t length,
                      missive_message **out_message, const missive_sink *error);

    /* Frees a handle that decode returned. Required. */
    void (*release)(void *context, missive_message *message);

    /* Writes the message's JSON content: one object (see "Content"). Required. */
    int32_t (*encode)(void *context, const missive_message *message,
                      const missive_sink *out);

    /* Writes the one-line conversation digest (see "Text shown to people").
     * Required. */
    int32_t (*digest)(void *context, const missive_message *message,
                      const missive_sink *out);

    /* Writes the push text, or returns MISSIVE_ABSENT for no push. NULL means
     * "push the digest". Status types give none, whatever this returns. */
    int32_t (*push_content)(void *context, const missive_message *message,
                            const missive_sink *out);

    /* Writes the searchable words or phrases, one per write call, or returns
     * MISSIVE_ABSENT. NULL means the type is not searchable. */
    int32_t (*searchable_words)(void *context, const missive_message *message,
                                const missive_sink *out);

    /* Fills the media reference. Required when flags has MISSIVE_TYPE_MEDIA,
     * ignored otherwise. */
    int32_t (*media)(void *context, const missive_message *message,
                     missive_media_out *out);

    /* Returns the extension named `extension_id` (see "Extensions"), or NULL
     * when the type lacks it. May be NULL itself. */
    const void *(*get_extension)(void *context, const char *extension_id);

    /* ---- ABI 1.1 ---- */

    /* The objectName of a container this plugin declares that the type
     * registers under, or NULL (then business_id, if set, is its MS:Custom
     * value). With a container, business_id must be NULL. */
    const char *container;
    /* The value of the container's key that selects this type; set exactly
     * when container is. */
    const char *container_value;
} missive_type;

/* ---------------------------------------------------------------------------
 * The plugin
 * ------------------------------------------------------------------------- */

typedef struct missive_plugin {
    /* MISSIVE_ABI_VERSION as the plugin was compiled. Checked first. */
    uint32_t abi_version;
    /* sizeof(missive_plugin) as the plugin was compiled. Checked second. */
    uint32_t struct_size;
    /* The plugin's name, version and vendor; none may be NULL or empty. */
    const char *name;
    const char *version;
    const char *vendor;
    /* The message types, as an array of pointers so that missive_type may grow. */
    uint32_t type_count;
    const missive_type *const *types;
    /* ABI 1.0's plugin-wide extensions, without a context, or NULL. A 1.1
     * plugin sets get_plugin_extension instead and leaves this NULL. */
    const void *(*get_extension)(const char *extension_id);

    /* ---- ABI 1.1 ---- */

    /* The containers the plugin declares, as an array of pointers. */
    uint32_t container_count;
    const missive_container *const *containers;
    /* Passed unchanged as the first argument of get_plugin_extension. */
    void *context;
    /* Returns the plugin-wide extension named `extension_id`, or NULL. May be
     * NULL itself. */
    const void *(*get_plugin_extension)(void *context, const char *extension_id);
} missive_plugin;

/* What the host tells the plugin about itself when it calls the entry. The
 * struct and its strings are valid only during that call; copy what you keep. */
typedef struct missive_host {
    /* The host's MISSIVE_ABI_VERSION. */
    uint32_t abi_version;
    /* sizeof(missive_host) as the host was compiled. */
    uint32_t struct_size;
    /* The host library's name and version, for example "Missive", "0.3.0". */
    const char *name;
    const char *version;
} missive_host;

/* The entry function's type. It returns the descriptor, or NULL to refuse to
 * run (for example when the plugin's own initialisation failed); the host then
 * refuses the file. It need not check the host's major version (see
 * "Versions"). Missive always passes a host; other tools might pass NULL, so
 * an entry that reads it tests it first. */
typedef const missive_plugin *(*missive_plugin_entry_fn)(const missive_host *host);

/* ---------------------------------------------------------------------------
 * Layout, for bindings in other languages (64-bit Linux, LP64)
 *
 * Natural C alignment; pointers, size_t and function pointers are 8 bytes.
 *   missive_bytes       16: bytes 0, length 8
 *   missive_sink        16: context 0, write 8
 *   missive_media_out   64: struct_size 0, remote_url 8, local_path 24,
 *                           mime_type 40, size_bytes 56
 *   missive_container   24: struct_size 0, key_kind 4, object_name 8, key 16
 *   missive_type       128: struct_size 0, flags 4, object_name 8,
 *                           business_id 16, persistence 24, example_count 28,
 *                           examples 32, context 40, decode 48, release 56,
 *                           encode 64, digest 72, push_content 80,
 *                           searchable_words 88, media 96, get_extension 104,
 *                           container 112, container_value 120
 *                           (ABI 1.0: 112, ending after get_extension)
 *   missive_plugin      88: abi_version 0, struct_size 4, name 8, version 16,
 *                           vendor 24, type_count 32, types 40,
 *                           get_extension 48, container_count 56,
 *                           containers 64, context 72,
 *                           get_plugin_extension 80
 *                           (ABI 1.0: 56, ending after get_extension)
 *   missive_host        24: abi_version 0, struct_size 4, name 8, version 16
 *   missive_view_v1     16: struct_size 0, view 8
 *   missive_text_out    64: struct_size 0, digest_status 4, push_status 8,
 *                           words_status 12, digest 16, push_content 32,
 *                           searchable_words 48
 *   missive_text_v1     16: struct_size 0, texts 8
 *   missive_action      80: struct_size 0, kind 4, id 8, object_name 16,
 *                           title 24, icon 32, priority 40, yields 44,
 *                           signature 48, symbol 56, function 64,
 *                           examples 72
 *   missive_actions_v1  16: struct_size 0, action_count 4, actions 8
 * The assertions below keep this table true for every build of this header.
 * ------------------------------------------------------------------------- */

/* The sizes of ABI 1.0's structs, which 1.1 hosts accept. */
#define MISSIVE_TYPE_SIZE_1_0 112
#define MISSIVE_PLUGIN_SIZE_1_0 56

#if defined(__cplusplus)
#define MISSIVE_STATIC_ASSERT_(condition, message) static_assert(condition, message)
#else
#define MISSIVE_STATIC_ASSERT_(condition, message) _Static_assert(condition, message)
#endif

#if defined(__LP64__) || defined(_LP64)
MISSIVE_STATIC_ASSERT_(sizeof(missive_bytes) == 16 && offsetof(missive_bytes, length) == 8, "missive_bytes layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_sink) == 16 && offsetof(missive_sink, write) == 8, "missive_sink layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_media_out) == 64 && offsetof(missive_media_out, remote_url) == 8
                           && offsetof(missive_media_out, local_path) == 24 && offsetof(missive_media_out, mime_type) == 40
                           && offsetof(missive_media_out, size_bytes) == 56,
                       "missive_media_out layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_container) == 24 && offsetof(missive_container, key_kind) == 4
                           && offsetof(missive_container, object_name) == 8 && offsetof(missive_container, key) == 16,
                       "missive_container layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_type) == 128 && offsetof(missive_type, flags) == 4
                           && offsetof(missive_type, object_name) == 8 && offsetof(missive_type, business_id) == 16
                           && offsetof(missive_type, persistence) == 24 && offsetof(missive_type, example_count) == 28
                           && offsetof(missive_type, examples) == 32 && offsetof(missive_type, context) == 40
                           && offsetof(missive_type, decode) == 48 && offsetof(missive_type, release) == 56
                           && offsetof(missive_type, encode) == 64 && offsetof(missive_type, digest) == 72
                           && offsetof(missive_type, push_content) == 80 && offsetof(missive_type, searchable_words) == 88
                           && offsetof(missive_type, media) == 96 && offsetof(missive_type, get_extension) == 104
                           && offsetof(missive_type, container) == MISSIVE_TYPE_SIZE_1_0
                           && offsetof(missive_type, container_value) == 120,
                       "missive_type layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_plugin) == 88 && offsetof(missive_plugin, struct_size) == 4
                           && offsetof(missive_plugin, name) == 8 && offsetof(missive_plugin, version) == 16
                           && offsetof(missive_plugin, vendor) == 24 && offsetof(missive_plugin, type_count) == 32
                           && offsetof(missive_plugin, types) == 40 && offsetof(missive_plugin, get_extension) == 48
                           && offsetof(missive_plugin, container_count) == MISSIVE_PLUGIN_SIZE_1_0
                           && offsetof(missive_plugin, containers) == 64 && offsetof(missive_plugin, context) == 72
                           && offsetof(missive_plugin, get_plugin_extension) == 80,
                       "missive_plugin layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_host) == 24 && offsetof(missive_host, name) == 8
                           && offsetof(missive_host, version) == 16,
                       "missive_host layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_view_v1) == 16 && offsetof(missive_view_v1, view) == 8, "missive_view_v1 layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_text_out) == 64 && offsetof(missive_text_out, digest_status) == 4
                           && offsetof(missive_text_out, push_status) == 8 && offsetof(missive_text_out, words_status) == 12
                           && offsetof(missive_text_out, digest) == 16 && offsetof(missive_text_out, push_content) == 32
                           && offsetof(missive_text_out, searchable_words) == 48,
                       "missive_text_out layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_text_v1) == 16 && offsetof(missive_text_v1, texts) == 8, "missive_text_v1 layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_action) == 80 && offsetof(missive_action, kind) == 4
                           && offsetof(missive_action, id) == 8 && offsetof(missive_action, object_name) == 16
                           && offsetof(missive_action, title) == 24 && offsetof(missive_action, icon) == 32
                           && offsetof(missive_action, priority) == 40 && offsetof(missive_action, yields) == 44
                           && offsetof(missive_action, signature) == 48 && offsetof(missive_action, symbol) == 56
                           && offsetof(missive_action, function) == 64 && offsetof(missive_action, examples) == 72,
                       "missive_action layout");
MISSIVE_STATIC_ASSERT_(sizeof(missive_actions_v1) == 16 && offsetof(missive_actions_v1, action_count) == 4
                           && offsetof(missive_actions_v1, actions) == 8,
                       "missive_actions_v1 layout");
#endif

/* ---------------------------------------------------------------------------
 * Metadata
 *
 * The section MISSIVE_METADATA_SECTION holds JSON records, each followed by a
 * NUL byte (padding NULs between records are allowed):
 *   {"record":"plugin","abi":1,"abiMinor":1,"name":"...","version":"...","vendor":"..."}
 *   {"record":"container","objectName":"m.room.message","key":"msgtype","keyKind":"string"}
 *   {"record":"type","objectName":"...","businessID":"...","persistence":3,"flags":0}
 *   {"record":"type","objectName":"...","container":"m.room.message",
 *    "containerValue":"m.text","persistence":3,"flags":0}
 *   {"record":"action","kind":"message","objectName":"demo:poll","id":"vote",
 *    "title":"Vote","icon":"checkmark","priority":10,"yields":"content",
 *    "signature":"int32(message poll, int32 option, string voter, sink out)",
 *    "symbol":"demo_poll_vote"}
 *   {"record":"action","kind":"composer","objectName":"demo:rating",
 *    "id":"demo.rating.create","title":"Rate","icon":"star","priority":40,
 *    "signature":"int32(int32 score, string comment, sink out)",
 *    "symbol":"rating_rate"}
 *   {"record":"file","path":"data/words.txt"}
 * Exactly one plugin record, one container record per declared container,
 * one type record per type, one action record per action (see "The
 * actions extension") and one file record per data file (see "Data
 * files"). An action record's "kind" is "message" or "composer"
 * and its "yields" is "content" or "url" ("content" when left out; composer
 * actions leave it out); "symbol" is left out for an action the extension
 * gives only as a function pointer. Its examples are in the extension only. "businessID" (an MS:Custom value) and the
 * "container"/"containerValue" pair are left out when the type has none; a
 * type has at most one of the two. "keyKind" is "string" or "integer".
 * "abi" is the ABI major version and "abiMinor" the minor (0 when left out).
 * Plugins built with the Swift SDK also record "swift":"6.3.1", the version of
 * the compiler that built them: they share the host's Swift runtime, which has
 * no stable ABI on Linux, so a host refuses one built by another Swift
 * major.minor version. Plugins that do not use the Swift runtime (C, Rust, ...)
 * leave "swift" out and load in any host.
 *
 * Members may come in any order, with any JSON whitespace between tokens.
 * Members and record kinds a host does not know are ignored, so later minors
 * may add them. The host reads the section straight from the file, without
 * running any of the plugin's code, and refuses the plugin when it disagrees
 * with the runtime descriptor.
 *
 * C plugins write it with the macros below. Their arguments must be string
 * literals (name, version, vendor, names, keys, values) and integer literals
 * or the MISSIVE_* constants (persistence, flags). The macros paste the
 * strings into JSON unescaped, so an empty string, or one holding '"', '\',
 * a NUL or another control character, is refused while compiling (GCC and
 * Clang, C and C++); invalid UTF-8 is refused when the host reads the
 * metadata. A value under an integer key is written as a string too:
 *   MISSIVE_METADATA_PLUGIN("CRating", "1.0.0", "Missive Samples");
 *   MISSIVE_METADATA_TYPE_BUSINESS("demo:rating", "evaluation",
 *                                  MISSIVE_PERSISTENCE_COUNTED, 0);
 *   MISSIVE_METADATA_CONTAINER_STRING("m.room.message", "msgtype");
 *   MISSIVE_METADATA_TYPE_IN("matrix:text", "m.room.message", "m.text",
 *                            MISSIVE_PERSISTENCE_COUNTED, 0);
 *   MISSIVE_METADATA_CONTAINER_INTEGER("call:signal", "businessID");
 *   MISSIVE_METADATA_TYPE_IN("call:invite", "call:signal", "1",
 *                            MISSIVE_PERSISTENCE_COUNTED, 0);
 *   MISSIVE_METADATA_MESSAGE_ACTION("demo:poll", "vote", "Vote", "checkmark",
 *       10, "content", "int32(message poll, int32 option, string voter, sink out)",
 *       "demo_poll_vote");
 *   MISSIVE_METADATA_COMPOSER_ACTION("demo.rating.create", "demo:rating",
 *       "Rate", "star", 40, "int32(int32 score, string comment, sink out)",
 *       "rating_rate");
 * An action's priority is an integer literal; its yields is "content" or
 * "url".
 *
 * Data files
 *   A plugin that reads a file of its own (a dictionary, a font) declares it,
 *   once per file, with a path relative to the folder that holds the plugin
 *   file:
 *     MISSIVE_METADATA_FILE("data/words.txt");
 *   A host that confines the plugin (runs it isolated, in a file system view
 *   of its own) lets it read the files it declares, read-only, and no other
 *   file; in process nothing changes. The plugin finds its folder itself, for
 *   example with dladdr on a function or object of its own. A path is 1 to 1024 bytes,
 *   each component 1 to 255, in its one normal spelling: not absolute, no
 *   empty component ("//", a trailing "/"), no "." or ".." component, no
 *   control character. A plugin declares at most 64 files, each once. The
 *   macro refuses an absolute path while compiling; a host refuses metadata
 *   that breaks any other rule (invalid-metadata), naming the path and the
 *   rule, so the plugin is not loaded. The file record joins
 *   ABI 1.1: a host that does not know it ignores it, as it ignores every
 *   record kind it does not know, and such a host (Missive 0.7 and earlier)
 *   runs every plugin in process, where the plugin reads its files as it
 *   always could. missive check's metadata.files checks that each declared
 *   file is a readable regular file inside the folder.
 * ------------------------------------------------------------------------- */

#define MISSIVE_STRINGIFY_(x) #x
#define MISSIVE_STRINGIFY(x) MISSIVE_STRINGIFY_(x)
#define MISSIVE_CONCAT_(a, b) a##b
#define MISSIVE_CONCAT(a, b) MISSIVE_CONCAT_(a, b)

/* `retain` marks the section SHF_GNU_RETAIN, so that the linker's --gc-sections (used by release
 * builds) keeps it although no code refers to it; `used` alone only stops the compiler dropping it. */
#if defined(__has_attribute)
#if __has_attribute(retain)
#define MISSIVE_RETAIN_ __attribute__((retain))
#endif
#endif
#ifndef MISSIVE_RETAIN_
#define MISSIVE_RETAIN_
#endif

/* Whether a string literal is safe to paste between JSON quotes: not empty,
 * no NUL inside, no '"', no '\' and no other control character. GCC and Clang
 * fold __builtin_strchr and __builtin_strlen on a literal at compile time. */
#define MISSIVE_NO_(s, c) (__builtin_strchr((s), (c)) == 0)
#define MISSIVE_JSON_SAFE_(s)                                                                        \
    (sizeof(s) > 1 && __builtin_strlen(s) + 1 == sizeof(s)                                           \
     && MISSIVE_NO_(s, '"') && MISSIVE_NO_(s, '\\') && MISSIVE_NO_(s, '\x01') && MISSIVE_NO_(s, '\x02') \
     && MISSIVE_NO_(s, '\x03') && MISSIVE_NO_(s, '\x04') && MISSIVE_NO_(s, '\x05') && MISSIVE_NO_(s, '\x06') \
     && MISSIVE_NO_(s, '\x07') && MISSIVE_NO_(s, '\x08') && MISSIVE_NO_(s, '\x09') && MISSIVE_NO_(s, '\x0a') \
     && MISSIVE_NO_(s, '\x0b') && MISSIVE_NO_(s, '\x0c') && MISSIVE_NO_(s, '\x0d') && MISSIVE_NO_(s, '\x0e') \
     && MISSIVE_NO_(s, '\x0f') && MISSIVE_NO_(s, '\x10') && MISSIVE_NO_(s, '\x11') && MISSIVE_NO_(s, '\x12') \
     && MISSIVE_NO_(s, '\x13') && MISSIVE_NO_(s, '\x14') && MISSIVE_NO_(s, '\x15') && MISSIVE_NO_(s, '\x16') \
     && MISSIVE_NO_(s, '\x17') && MISSIVE_NO_(s, '\x18') && MISSIVE_NO_(s, '\x19') && MISSIVE_NO_(s, '\x1a') \
     && MISSIVE_NO_(s, '\x1b') && MISSIVE_NO_(s, '\x1c') && MISSIVE_NO_(s, '\x1d') && MISSIVE_NO_(s, '\x1e') \
     && MISSIVE_NO_(s, '\x1f'))
/* A file-scope declaration that refuses, while compiling, a literal unsafe for the metadata. Folding a
 * builtin is a GNU extension that -Wpedantic reports; it is the point here. */
#if defined(__GNUC__) || defined(__clang__)
#define MISSIVE_CHECK_TEXT_(s)                                                                       \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wpedantic\"")                  \
    MISSIVE_STATIC_ASSERT_(MISSIVE_JSON_SAFE_(s), "Missive metadata: " #s " must be a non-empty string literal without a quote, a backslash, a NUL or a control character"); \
    _Pragma("GCC diagnostic pop")
#else
#define MISSIVE_CHECK_TEXT_(s)
#endif

/* Places one NUL-terminated record in the metadata section. */
#define MISSIVE_METADATA_RECORD(text)                                              \
    __attribute__((used, section(MISSIVE_METADATA_SECTION))) MISSIVE_RETAIN_      \
        static const char MISSIVE_CONCAT(missive_metadata_record_, __COUNTER__)[] = text

#define MISSIVE_METADATA_PLUGIN(name, version, vendor)                             \
    MISSIVE_CHECK_TEXT_(name) MISSIVE_CHECK_TEXT_(version) MISSIVE_CHECK_TEXT_(vendor) \
    MISSIVE_METADATA_RECORD("{\"record\":\"plugin\",\"abi\":"                      \
                            MISSIVE_STRINGIFY(MISSIVE_ABI_MAJOR)                   \
                            ",\"abiMinor\":" MISSIVE_STRINGIFY(MISSIVE_ABI_MINOR)  \
                            ",\"name\":\"" name "\",\"version\":\"" version        \
                            "\",\"vendor\":\"" vendor "\"}")

#define MISSIVE_METADATA_TYPE(object_name, persistence, flags)                     \
    MISSIVE_CHECK_TEXT_(object_name)                                               \
    MISSIVE_METADATA_RECORD("{\"record\":\"type\",\"objectName\":\"" object_name   \
                            "\",\"persistence\":" MISSIVE_STRINGIFY(persistence)   \
                            ",\"flags\":" MISSIVE_STRINGIFY(flags) "}")

#define MISSIVE_METADATA_TYPE_BUSINESS(object_name, business_id, persistence, flags) \
    MISSIVE_CHECK_TEXT_(object_name) MISSIVE_CHECK_TEXT_(business_id)                \
    MISSIVE_METADATA_RECORD("{\"record\":\"type\",\"objectName\":\"" object_name     \
                            "\",\"businessID\":\"" business_id                       \
                            "\",\"persistence\":" MISSIVE_STRINGIFY(persistence)     \
                            ",\"flags\":" MISSIVE_STRINGIFY(flags) "}")

#define MISSIVE_METADATA_TYPE_IN(object_name, container, value, persistence, flags)  \
    MISSIVE_CHECK_TEXT_(object_name) MISSIVE_CHECK_TEXT_(container) MISSIVE_CHECK_TEXT_(value) \
    MISSIVE_METADATA_RECORD("{\"record\":\"type\",\"objectName\":\"" object_name     \
                            "\",\"container\":\"" container                          \
                            "\",\"containerValue\":\"" value                         \
                            "\",\"persistence\":" MISSIVE_STRINGIFY(persistence)     \
                            ",\"flags\":" MISSIVE_STRINGIFY(flags) "}")

#define MISSIVE_METADATA_CONTAINER_(object_name, key, kind)                           \
    MISSIVE_CHECK_TEXT_(object_name) MISSIVE_CHECK_TEXT_(key)                         \
    MISSIVE_METADATA_RECORD("{\"record\":\"container\",\"objectName\":\"" object_name \
                            "\",\"key\":\"" key "\",\"keyKind\":\"" kind "\"}")
#define MISSIVE_METADATA_CONTAINER_STRING(object_name, key) MISSIVE_METADATA_CONTAINER_(object_name, key, "string")
#define MISSIVE_METADATA_CONTAINER_INTEGER(object_name, key) MISSIVE_METADATA_CONTAINER_(object_name, key, "integer")

#define MISSIVE_METADATA_MESSAGE_ACTION(object_name, id, title, icon, priority, yields, signature, symbol)      \
    MISSIVE_CHECK_TEXT_(object_name) MISSIVE_CHECK_TEXT_(id) MISSIVE_CHECK_TEXT_(title) MISSIVE_CHECK_TEXT_(icon) \
    MISSIVE_CHECK_TEXT_(yields) MISSIVE_CHECK_TEXT_(signature) MISSIVE_CHECK_TEXT_(symbol)                     \
    MISSIVE_METADATA_RECORD("{\"record\":\"action\",\"kind\":\"message\",\"objectName\":\"" object_name    \
                            "\",\"id\":\"" id "\",\"title\":\"" title "\",\"icon\":\"" icon                \
                            "\",\"priority\":" MISSIVE_STRINGIFY(priority) ",\"yields\":\"" yields           \
                            "\",\"signature\":\"" signature "\",\"symbol\":\"" symbol "\"}")

#define MISSIVE_METADATA_COMPOSER_ACTION(id, object_name, title, icon, priority, signature, symbol)              \
    MISSIVE_CHECK_TEXT_(id) MISSIVE_CHECK_TEXT_(object_name) MISSIVE_CHECK_TEXT_(title) MISSIVE_CHECK_TEXT_(icon) \
    MISSIVE_CHECK_TEXT_(signature) MISSIVE_CHECK_TEXT_(symbol)                                                 \
    MISSIVE_METADATA_RECORD("{\"record\":\"action\",\"kind\":\"composer\",\"objectName\":\"" object_name   \
                            "\",\"id\":\"" id "\",\"title\":\"" title "\",\"icon\":\"" icon                \
                            "\",\"priority\":" MISSIVE_STRINGIFY(priority)                                  \
                            ",\"signature\":\"" signature "\",\"symbol\":\"" symbol "\"}")

/* A data file the plugin reads (see "Data files" above): a path relative to
 * the plugin file's folder. Refuses an absolute path while compiling. */
#if defined(__GNUC__) || defined(__clang__)
#define MISSIVE_CHECK_RELATIVE_(path)                                                               \
    MISSIVE_STATIC_ASSERT_(__builtin_strncmp((path), "/", 1) != 0,                                  \
                           "Missive metadata: the data file " #path " must be a path relative to the folder that holds the plugin");
#else
#define MISSIVE_CHECK_RELATIVE_(path)
#endif
#define MISSIVE_METADATA_FILE(path)                                                                 \
    MISSIVE_CHECK_TEXT_(path) MISSIVE_CHECK_RELATIVE_(path)                                         \
    MISSIVE_METADATA_RECORD("{\"record\":\"file\",\"path\":\"" path "\"}")

/* The entry every plugin exports: define it with this exact signature. */
MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host);

#ifdef __cplusplus
}
#endif

#endif /* MISSIVE_PLUGIN_H */
