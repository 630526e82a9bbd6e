/* A plugin file with metadata and no code, small enough (about 2 KB) to be a seed of the metadata fuzz target
 * as a whole file: Fuzz/make-seeds.sh links it with lld, stripped. Its types sit in a container of its own with
 * integer values, and one is a media type, so that the seeds reach what the sample plugins do not. */
#include "missive_plugin.h"
MISSIVE_METADATA_PLUGIN("Tiny", "1.0.0", "Missive Fuzzing");
MISSIVE_METADATA_CONTAINER_INTEGER("tiny.box", "kind");
MISSIVE_METADATA_TYPE_IN("tiny:boxed", "tiny.box", "-7", MISSIVE_PERSISTENCE_PERSISTED, 0);
MISSIVE_METADATA_TYPE("tiny:note", MISSIVE_PERSISTENCE_STATUS, MISSIVE_TYPE_MEDIA);
