/*
 * The isolated plugin worker's process: how the host starts it and the system-call filter it runs under.
 *
 * The host starts a worker with missive_sandbox_spawn: the worker gets its end of the host's socket as
 * descriptor 3, a pipe as standard error, /dev/null as standard input and output, no other descriptor and an
 * empty environment. The worker then restricts itself in two stages (docs/PROTECTION.md):
 *
 * 1. missive_sandbox_restrict_loading, before the plugin's library is opened: the library's initialisers and
 *    entry may read files (dlopen needs that), but not write or create them, open sockets, start programs or
 *    processes, trace, or signal another process.
 * 2. missive_sandbox_lock_down, once the plugin has loaded and handled its examples: from then on only the
 *    calls that decoding, answering and the worker's own loop need are allowed. Opening any file is not.
 *
 * A forbidden call is not made: the kernel raises SIGSYS, whose handler (installed by
 * missive_sandbox_report_to) writes one report frame naming the call to the host's socket and ends the worker
 * with MISSIVE_SANDBOX_STOPPED. Only Missive's Isolation code uses this header.
 */
#ifndef MISSIVE_SANDBOX_H
#define MISSIVE_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor the worker finds its end of the host's socket on. */
#define MISSIVE_SANDBOX_CHANNEL 3
/* The exit status of a worker the filter stopped. */
#define MISSIVE_SANDBOX_STOPPED 159
/* The kind byte of the frame the SIGSYS handler writes: the frame is the 4-byte length (13), this kind, an
   8-byte request id of 0 and the 4-byte system call number, little-endian. */
#define MISSIVE_SANDBOX_REPORT_KIND 0x7f

/* Starts `path` with `argv` (NULL-terminated) and an empty environment: `channel` becomes descriptor 3,
   `error_fd` descriptor 2, /dev/null descriptors 0 and 1, and every other descriptor is closed. Returns 0 and
   the child's process id in *pid, or an errno value. */
int missive_sandbox_spawn(const char *path, char *const argv[], int channel, int error_fd, pid_t *pid);

/* A pipe whose two ends are closed on exec (pipe2 with O_CLOEXEC): 0, or an errno value. */
int missive_sandbox_pipe(int ends[2]);

/* Installs the SIGSYS handler that reports a forbidden call on `report_fd` and ends the process. Returns 0,
   or an errno value. */
int missive_sandbox_report_to(int report_fd);

/* Stage 1 (see above). Returns 0, or a negative errno value from libseccomp. */
int missive_sandbox_restrict_loading(void);

/* Stage 2 (see above). Returns 0, or a negative errno value from libseccomp. */
int missive_sandbox_lock_down(void);

/* The name of a system call of this machine's architecture, copied into `buffer` (NUL-terminated): 0, or -1
   when the number names none. */
int missive_sandbox_syscall_name(int number, char *buffer, size_t size);

/* Sets the worker's limits: the address space (RLIMIT_AS) to `address_space_bytes` when it is above 0, no core
   files, and at most `descriptors` open descriptors. Returns 0, or an errno value. */
int missive_sandbox_limit(uint64_t address_space_bytes, uint64_t descriptors);

/* Starts a thread that ends the worker (status 0) once its parent, the host, has ended, even while the plugin hangs
   the worker's main thread: a worker never outlives its host. Returns 0, or an errno value. */
int missive_sandbox_watch_parent(void);

/* Resets the handlers of the fatal signals to the default, so that a crash ends the worker at once, with the
   signal, and the host sees which (the Swift runtime's backtracer would start a program, which the filter
   forbids). */
void missive_sandbox_default_fatal_signals(void);

#ifdef __cplusplus
}
#endif

#endif
