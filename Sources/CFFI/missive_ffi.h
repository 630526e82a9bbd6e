/*
 * libffi for Missive's plugin boundary: the one header Swift imports to call plugin actions by a
 * signature known only at run time.
 *
 * libffi describes C types with global variables (ffi_type_sint32, ...). Swift 6 sees a mutable global
 * as shared mutable state and refuses to read it from concurrent code, although libffi never writes
 * them after load. These accessors return their addresses instead, so the Swift side needs no
 * @preconcurrency import and no unchecked global.
 */
#ifndef MISSIVE_FFI_H
#define MISSIVE_FFI_H

#include <ffi.h>

static inline ffi_type *missive_ffi_type_void(void) { return &ffi_type_void; }
static inline ffi_type *missive_ffi_type_uint8(void) { return &ffi_type_uint8; }
static inline ffi_type *missive_ffi_type_sint32(void) { return &ffi_type_sint32; }
static inline ffi_type *missive_ffi_type_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *missive_ffi_type_double(void) { return &ffi_type_double; }
static inline ffi_type *missive_ffi_type_pointer(void) { return &ffi_type_pointer; }

/* FFI_DEFAULT_ABI is a macro over an enum that Swift does not import as a constant. */
static inline ffi_abi missive_ffi_default_abi(void) { return FFI_DEFAULT_ABI; }

#endif
