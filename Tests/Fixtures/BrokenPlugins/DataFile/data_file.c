/* A valid plugin that declares a data file of its own, DataFile/words.txt beside the library, and reads it when a
 * message asks, so that a test sees which files a plugin can read where it runs (in process, or isolated in a view
 * of the file system that holds its declared files only):
 *   - {"file":"read","fixture":true} reads the declared file: the digest is its first line (at most 200 bytes,
 *     without the line break); when it cannot be read, decode fails with a reason that names it and why;
 *   - {"file":"sibling","fixture":true} tries DataFile/undeclared.txt, a file it does not declare, next to it: the
 *     digest says whether it could ("undeclared file read: FIRST LINE" or "undeclared file not read: REASON").
 * Any other content decodes as the echo type ({"fixture":true}, its example, touches no file), so that every check
 * runs without the files; like every fixture on the echo decoder, it passes the checks up to strictness 6 (the
 * re-spelled content of roundtrip.variations, at 7, is refused). The library finds its own folder with dladdr,
 * which makes no system call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("DataFile", "1.0.0", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:datafile", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_FILE("DataFile/words.txt");

/* The handle: the content as received, and the digest decode worked out. */
typedef struct data_message {
    char digest[256];
    size_t length;
    uint8_t bytes[];
} data_message;

/* Something of this library's own whose address dladdr can look up. */
static const char anchor = 0;

/* Reads the first line of `relative`, a path relative to this library's folder, into `line` (NUL-terminated, at
 * most 200 bytes); returns 0, or the errno of what failed. */
static int first_line(const char *relative, char *line, size_t size) {
    Dl_info info;
    if (dladdr(&anchor, &info) == 0 || info.dli_fname == NULL) return ENOENT;
    char path[4096];
    const char *slash = strrchr(info.dli_fname, '/');
    int written = slash ? snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, relative)
                        : snprintf(path, sizeof path, "%s", relative);
    if (written < 0 || written >= (int)sizeof path) return ENAMETOOLONG;
    int file = open(path, O_RDONLY | O_CLOEXEC);
    if (file < 0) return errno;
    char buffer[201];
    ssize_t count = read(file, buffer, sizeof buffer - 1);
    int failure = count < 0 ? errno : 0;
    close(file);
    if (failure) return failure;
    buffer[count] = 0;
    buffer[strcspn(buffer, "\r\n")] = 0;
    snprintf(line, size, "%s", buffer);
    return 0;
}

static int32_t data_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    missive_message *echo_handle = NULL;
    int32_t status = fixture_decode(context, content, length, &echo_handle, error);
    *out = NULL;
    if (status != MISSIVE_OK) return status;
    fixture_release(context, echo_handle);
    data_message *message = calloc(1, sizeof(data_message) + length);
    if (!message) return MISSIVE_FAILED;
    message->length = length;
    memcpy(message->bytes, content, length);
    char line[201] = "";
    if (fixture_holds(content, length, "\"file\":\"read\"")) {
        int failure = first_line("DataFile/words.txt", line, sizeof line);
        if (failure) {
            free(message);
            char reason[300];
            snprintf(reason, sizeof reason, "cannot read its data file DataFile/words.txt: %s", strerror(failure));
            return missive_fail_with_reason(error, reason);
        }
        snprintf(message->digest, sizeof message->digest, "%s", line[0] ? line : "(an empty first line)");
    } else if (fixture_holds(content, length, "\"file\":\"sibling\"")) {
        int failure = first_line("DataFile/undeclared.txt", line, sizeof line);
        if (failure) {
            snprintf(message->digest, sizeof message->digest, "undeclared file not read: %s", strerror(failure));
        } else {
            snprintf(message->digest, sizeof message->digest, "undeclared file read: %s", line);
        }
    } else {
        snprintf(message->digest, sizeof message->digest, "[fixture]");
    }
    *out = (missive_message *)message;
    return MISSIVE_OK;
}

static int32_t data_encode(void *context, const missive_message *handle, const missive_sink *out) {
    (void)context;
    const data_message *message = (const data_message *)handle;
    out->write(out->context, message->bytes, message->length);
    return MISSIVE_OK;
}

static int32_t data_digest(void *context, const missive_message *handle, const missive_sink *out) {
    (void)context;
    missive_write_string(out, ((const data_message *)handle)->digest);
    return MISSIVE_OK;
}

static void data_release(void *context, missive_message *handle) {
    (void)context;
    free(handle);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:datafile", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = data_decode, .release = data_release,
    .encode = data_encode, .digest = data_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = {
    .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin), .name = "DataFile", .version = "1.0.0",
    .vendor = "Missive Tests", .type_count = 1, .types = types,
};

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
