// A parse-only reference for the decode benchmark: Debian's libsimdjson-dev, behind a C interface so
// that the Swift benchmark calls it without C++ interop.
#include "simdjson_reference.h"

#include <new>
#include <simdjson.h>

struct missive_simdjson_parser {
    simdjson::dom::parser parser;
};

missive_simdjson_parser *missive_simdjson_parser_create(void) {
    return new (std::nothrow) missive_simdjson_parser();
}

void missive_simdjson_parser_free(missive_simdjson_parser *parser) {
    delete parser;
}

size_t missive_simdjson_padding(void) {
    return simdjson::SIMDJSON_PADDING;
}

long missive_simdjson_parse(missive_simdjson_parser *parser, const char *bytes, size_t length, size_t capacity) {
    if (capacity < length + simdjson::SIMDJSON_PADDING) {
        return -1;
    }
    simdjson::dom::element root;
    // realloc_if_needed = false: the caller's buffer carries the padding.
    if (parser->parser.parse(bytes, length, false).get(root) != simdjson::SUCCESS) {
        return -1;
    }
    simdjson::dom::object object;
    if (root.get_object().get(object) != simdjson::SUCCESS) {
        return 0;
    }
    return static_cast<long>(object.size());
}
