#ifndef MISSIVE_SIMDJSON_REFERENCE_H
#define MISSIVE_SIMDJSON_REFERENCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A simdjson DOM parser, reused for every line, as a parse-only reference for the decode benchmark.
typedef struct missive_simdjson_parser missive_simdjson_parser;

/// Creates a parser; NULL when memory runs out. Free it with missive_simdjson_parser_free.
missive_simdjson_parser *missive_simdjson_parser_create(void);

/// Frees a parser made by missive_simdjson_parser_create.
void missive_simdjson_parser_free(missive_simdjson_parser *parser);

/// The number of bytes of padding simdjson reads past the end of a document; `capacity` below must be at
/// least `length` plus this.
size_t missive_simdjson_padding(void);

/// Parses one JSON document of `length` bytes in a buffer of `capacity` bytes. Returns the number of
/// members of its top-level object (0 for another kind of value), or -1 when it is not valid JSON.
long missive_simdjson_parse(missive_simdjson_parser *parser, const char *bytes, size_t length, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
