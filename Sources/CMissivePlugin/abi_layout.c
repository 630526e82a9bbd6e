// Compiles the header once in the package's own build, so that its layout assertions (sizes and offsets of
// every ABI struct on 64-bit targets) and its metadata macros are checked even before any plugin is built.
#include "missive_plugin.h"

_Static_assert(sizeof(void *) == 8, "Missive's ABI is defined for 64-bit targets");

// The macros' compile-time refusal of unsafe strings accepts ordinary text, including non-ASCII.
MISSIVE_CHECK_TEXT_("Missive Samples — ünïcödé 链接")

