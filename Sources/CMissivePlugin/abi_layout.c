// Pins the layout of the ABI structs on 64-bit targets, so that an accidental
// change to missive_plugin.h fails the build instead of breaking plugins.
#include "missive_plugin.h"

_Static_assert(sizeof(void *) == 8, "Missive's ABI is defined for 64-bit targets");
_Static_assert(sizeof(missive_bytes) == 16, "missive_bytes layout changed");
_Static_assert(sizeof(missive_sink) == 16, "missive_sink layout changed");
_Static_assert(sizeof(missive_media_out) == 64, "missive_media_out layout changed");
_Static_assert(sizeof(missive_type) == 112, "missive_type layout changed");
_Static_assert(sizeof(missive_plugin) == 56, "missive_plugin layout changed");
_Static_assert(sizeof(missive_host) == 24, "missive_host layout changed");
