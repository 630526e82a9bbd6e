/* Defect: the library needs a symbol that nothing defines, so dlopen with RTLD_NOW fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenUnresolvedSymbol", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:unresolved", MISSIVE_PERSISTENCE_COUNTED, 0);

/* Declared, never defined: the shared object links, and loading it fails. */
extern const missive_plugin *missive_fixture_symbol_that_does_not_exist(void);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return missive_fixture_symbol_that_does_not_exist();
}
