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

/* The kind byte of the frame a worker that is the first process of its PID namespace writes when it sends itself a
   fatal signal (abort() does): the same layout as the report frame, with the signal number in place of the call. */
#define MISSIVE_SANDBOX_SIGNAL_KIND 0x7e
/* The exit status of a worker that relayed such a signal. */
#define MISSIVE_SANDBOX_SIGNALLED 158

/* What one step of building a confined worker's file system does. */
enum {
    /* Makes the folder `path`. */
    MISSIVE_SANDBOX_VIEW_DIRECTORY = 1,
    /* Makes `path` a symbolic link to `source`, as it is on the host. */
    MISSIVE_SANDBOX_VIEW_SYMLINK = 2,
    /* Binds the host's regular file `source` at `path`, read-only, with no device nodes. */
    MISSIVE_SANDBOX_VIEW_FILE = 3,
    /* Binds the host's device node `source` at `path`, read-only (/dev/null and the like). */
    MISSIVE_SANDBOX_VIEW_DEVICE = 4,
};

/* One step of building the view; the steps run in order, so a folder comes before what is in it. Paths are
   absolute, as in the view (and on the host: a file keeps its host path). */
typedef struct missive_sandbox_view_step {
    int kind;
    const char *path;
    const char *source;
} missive_sandbox_view_step;

/* The stages of a confined start, for the reason of a failure. */
enum {
    MISSIVE_SANDBOX_STAGE_CLONE = 1,
    MISSIVE_SANDBOX_STAGE_USER_MAP = 2,
    MISSIVE_SANDBOX_STAGE_MOUNT = 3,
    MISSIVE_SANDBOX_STAGE_OPEN = 4,
    MISSIVE_SANDBOX_STAGE_STEP = 5,
    MISSIVE_SANDBOX_STAGE_BIND = 6,
    MISSIVE_SANDBOX_STAGE_PROC = 7,
    MISSIVE_SANDBOX_STAGE_ROOT = 8,
    MISSIVE_SANDBOX_STAGE_DESCRIPTORS = 9,
    MISSIVE_SANDBOX_STAGE_EXEC = 10,
};

/* Where a confined start failed: the stage, the step (-1 when not at a step) and the errno value. */
typedef struct missive_sandbox_failure {
    int32_t stage, step, error;
} missive_sandbox_failure;

/* Starts `path` as missive_sandbox_spawn does, but as the first process of new user, mount, PID, network, IPC, UTS
   and cgroup namespaces, in a file system made by `steps` on an empty tmpfs, with a /proc of its own namespace
   (when the kernel allows one), made read-only and pivoted to before the exec. Inside, the host's user is the
   worker's user (root maps to nobody), with no capability once it has run `path`. `path` and every file the worker
   reads must be in the view. Returns 0 and the child's process id (as the host sees it) in *pid, or an errno value
   with *failure saying where (stage MISSIVE_SANDBOX_STAGE_CLONE: the kernel refused the namespaces). */
int missive_sandbox_spawn_confined(
    const char *path, char *const argv[], int channel, int error_fd, const missive_sandbox_view_step *steps, size_t count, pid_t *pid,
    missive_sandbox_failure *failure);

/* Whether the kernel lets this process make the namespaces missive_sandbox_spawn_confined makes: 0, or the errno
   value of its refusal (EPERM or ENOSPC where user namespaces are off or used up, EINVAL where the kernel lacks one). */
int missive_sandbox_probe_namespaces(void);

/* In a worker that is the first process of its PID namespace, installs handlers for the fatal signals that relay a
   signal the worker sends itself (abort(), raise()) as a MISSIVE_SANDBOX_SIGNAL_KIND frame on the report descriptor
   (missive_sandbox_report_to) and end it with MISSIVE_SANDBOX_SIGNALLED: the kernel would otherwise drop it. A fault
   still ends the worker with its signal. Elsewhere it does nothing. Returns 0, or an errno value. */
int missive_sandbox_relay_own_signals(void);

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

/* Starts a thread that ends the worker (status 0) once the host's end of the socket on descriptor 3 has closed (the
   host ended), even while the plugin hangs the worker's main thread: a worker never outlives its host. Returns 0, or
   an errno value. */
int missive_sandbox_watch_parent(void);

/* Resets the handlers of the fatal signals to the default, so that a crash ends the worker at once, with the
   signal, and the host sees which (the Swift runtime's backtracer would start a program, which the filter
   forbids). */
void missive_sandbox_default_fatal_signals(void);

/* In a confined worker, before stage 1: notes every path the worker then opens (open and openat) that is not in its
   view, so that the host can say what a plugin looked for while it loaded. A thread started first (and so under no
   filter) answers a seccomp user notification for each open, notes a missing absolute path that is not one the
   dynamic loader searches for, and lets the call go on as if unwatched; stage 2 ends it, since it forbids opening.
   Returns 0, or an errno value. */
int missive_sandbox_audit_opens(void);

/* Copies the paths noted so far into `buffer`, each followed by a NUL, as many as fit in `size` bytes; the count of
   paths past the 64 kept goes in *dropped. Returns the bytes used. */
size_t missive_sandbox_audited_paths(char *buffer, size_t size, int *dropped);

/* Marks the calling process dumpable or not (prctl PR_SET_DUMPABLE). A process that is not cannot be traced, and its
   /proc/PID/mem, environ, maps and fd are closed to the other processes of its user; it writes no core file. Returns
   0, or an errno value. */
int missive_sandbox_set_dumpable(int dumpable);

/* 1 when the calling process is dumpable, 0 when not, -1 on error. */
int missive_sandbox_is_dumpable(void);

#ifdef __cplusplus
}
#endif

#endif
