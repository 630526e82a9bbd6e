/*
 * missive_plugin.h: the Missive plugin ABI, major version 1.
 *
 * This header is the whole contract between a Missive host and a message-type
 * plugin (a shared library). Only C scalars, UTF-8 strings and byte buffers
 * cross it; no Swift type does. A plugin may be written in C, in Swift (through
 * MissivePluginKit) or in any language that can export a C function.
 *
 * Life cycle
 *   1. The host reads the plugin's metadata from the ELF section
 *      MISSIVE_METADATA_SECTION without loading the file (see "Metadata").
 *   2. It loads the file with dlopen(RTLD_NOW | RTLD_LOCAL). It never unloads it.
 *   3. It looks up MISSIVE_ENTRY_SYMBOL and calls it once. The entry returns a
 *      descriptor that must stay valid, unchanged, for the life of the process.
 *   4. It checks abi_version and struct_size before reading any other field,
 *      then registers the types the descriptor lists.
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
 * Versions and names
 * ------------------------------------------------------------------------- */

/* The ABI major version. A change here renames the entry symbol. */
#define MISSIVE_ABI_MAJOR 1
/* The ABI minor version. Minor versions only append fields to the structs
 * below; a host reads a field only when struct_size says it is there. */
#define MISSIVE_ABI_MINOR 0
/* The value of missive_plugin.abi_version: major in the high 16 bits. */
#define MISSIVE_ABI_VERSION ((MISSIVE_ABI_MAJOR << 16) | MISSIVE_ABI_MINOR)

/* The exported entry symbol. Its name carries the ABI major version. */
#define MISSIVE_ENTRY_SYMBOL "missive_plugin_entry_v1"

/* The ELF section that holds the plugin's metadata. */
#define MISSIVE_METADATA_SECTION "missive_meta"

/* ---------------------------------------------------------------------------
 * Status codes returned by plugin functions
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
 * ------------------------------------------------------------------------- */

/* The type is a media type: its media function gives a media reference. */
#define MISSIVE_TYPE_MEDIA 1

/* ---------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------- */

/* A byte range. Who owns it is stated where it is used. */
typedef struct missive_bytes {
    const uint8_t *bytes;
    size_t length;
} missive_bytes;

/* A writer the host lends to the plugin for one call.
 * write copies `length` bytes before it returns; it may be called several
 * times, and the pieces are joined in order unless the function that received
 * the sink says otherwise. */
typedef struct missive_sink {
    void *context;
    void (*write)(void *context, const uint8_t *bytes, size_t length);
} missive_sink;

/* A decoded message: an opaque, immutable, plugin-side value. */
typedef struct missive_message missive_message;

/* The media reference a media type gives. The host fills struct_size and
 * size_bytes = -1 before the call; the plugin writes each field it knows
 * into its sink and sets size_bytes when it knows the size. */
typedef struct missive_media_out {
    uint32_t struct_size;
    missive_sink remote_url;
    missive_sink local_path;
    missive_sink mime_type;
    int64_t size_bytes;
} missive_media_out;

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

    /* Parses `length` bytes of JSON content. On MISSIVE_OK stores a new handle
     * in *out_message. On failure returns MISSIVE_INVALID_CONTENT (or
     * MISSIVE_FAILED), leaves *out_message NULL, and may write a one-line
     * reason into `error`. The host takes ownership of *out_message only with
     * MISSIVE_OK. Must never crash on any input. Required. */
    int32_t (*decode)(void *context, const uint8_t *content, size_t length,
                      missive_message **out_message, const missive_sink *error);

    /* Frees a handle that decode returned. Required. */
    void (*release)(void *context, missive_message *message);

    /* Writes the message's JSON content. Required. */
    int32_t (*encode)(void *context, const missive_message *message,
                      const missive_sink *out);

    /* Writes the one-line conversation digest. Required. */
    int32_t (*digest)(void *context, const missive_message *message,
                      const missive_sink *out);

    /* Writes the push text, or returns MISSIVE_ABSENT. NULL means "use the
     * digest". Status types give none, whatever this returns. */
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

    /* Returns the versioned extension named `extension_id` (for example a
     * rendered view or actions, in later ABI minors), or NULL when the type
     * lacks it. May be NULL itself. */
    const void *(*get_extension)(void *context, const char *extension_id);
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
    /* Plugin-wide versioned extensions, or NULL. */
    const void *(*get_extension)(const char *extension_id);
} missive_plugin;

/* What the host tells the plugin about itself when it calls the entry. The
 * struct and its strings are valid only during that call; copy what you keep. */
typedef struct missive_host {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;
    const char *version;
} missive_host;

/* The entry function's type. It may return NULL to refuse the host. */
typedef const missive_plugin *(*missive_plugin_entry_fn)(const missive_host *host);

/* ---------------------------------------------------------------------------
 * Metadata
 *
 * The section MISSIVE_METADATA_SECTION holds JSON records, each followed by a
 * NUL byte (padding NULs between records are allowed):
 *   {"record":"plugin","abi":1,"abiMinor":0,"name":"...","version":"...","vendor":"..."}
 *   {"record":"type","objectName":"...","businessID":"...","persistence":3,"flags":0}
 * Exactly one plugin record and one type record per type; "businessID" is
 * left out when the type has none. "abi" is the ABI major version and
 * "abiMinor" the minor (0 when left out). Plugins built with the Swift SDK
 * also record "swift":"6.3.1", the version of the compiler that built them:
 * they share the host's Swift runtime, which has no stable ABI on Linux, so a
 * host refuses one built by another Swift major.minor version. Plugins that do
 * not use the Swift runtime (C, Rust, ...) leave "swift" out and load in any
 * host. Members a host does not know are ignored. The host reads it straight from the file,
 * without running any of the plugin's code, and refuses the plugin when it
 * disagrees with the runtime descriptor.
 *
 * C plugins write it with the macros below, whose arguments must be string
 * literals (name, version, vendor, names) and integer literals or the
 * MISSIVE_* constants (persistence, flags):
 *   MISSIVE_METADATA_PLUGIN("CRating", "1.0.0", "Missive Samples");
 *   MISSIVE_METADATA_TYPE_BUSINESS("demo:rating", "evaluation",
 *                                  MISSIVE_PERSISTENCE_COUNTED, 0);
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

/* Places one NUL-terminated record in the metadata section. */
#define MISSIVE_METADATA_RECORD(text)                                              \
    __attribute__((used, section(MISSIVE_METADATA_SECTION))) MISSIVE_RETAIN_      \
        static const char MISSIVE_CONCAT(missive_metadata_record_, __COUNTER__)[] = text

#define MISSIVE_METADATA_PLUGIN(name, version, vendor)                             \
    MISSIVE_METADATA_RECORD("{\"record\":\"plugin\",\"abi\":"                      \
                            MISSIVE_STRINGIFY(MISSIVE_ABI_MAJOR)                   \
                            ",\"abiMinor\":" MISSIVE_STRINGIFY(MISSIVE_ABI_MINOR)  \
                            ",\"name\":\"" name "\",\"version\":\"" version        \
                            "\",\"vendor\":\"" vendor "\"}")

#define MISSIVE_METADATA_TYPE(object_name, persistence, flags)                     \
    MISSIVE_METADATA_RECORD("{\"record\":\"type\",\"objectName\":\"" object_name   \
                            "\",\"persistence\":" MISSIVE_STRINGIFY(persistence)   \
                            ",\"flags\":" MISSIVE_STRINGIFY(flags) "}")

#define MISSIVE_METADATA_TYPE_BUSINESS(object_name, business_id, persistence, flags) \
    MISSIVE_METADATA_RECORD("{\"record\":\"type\",\"objectName\":\"" object_name     \
                            "\",\"businessID\":\"" business_id                       \
                            "\",\"persistence\":" MISSIVE_STRINGIFY(persistence)     \
                            ",\"flags\":" MISSIVE_STRINGIFY(flags) "}")

/* The entry every plugin exports. */
const missive_plugin *missive_plugin_entry_v1(const missive_host *host);

#ifdef __cplusplus
}
#endif

#endif /* MISSIVE_PLUGIN_H */
