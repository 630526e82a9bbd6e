/*
 * The crash guard: which plugin a thread is running, and a fatal-signal handler that writes it down.
 *
 * A host calls into plugin code on many threads. Before each call it marks the thread with the plugin's
 * site (a record of the plugin file, made once at load) and the operation; after the call it restores the
 * previous mark. When a fatal signal arrives on a marked thread, the handler appends one line (the site's
 * record, the operation, the signal and the time) to a journal file opened before, using only write(2),
 * then hands the signal to the handler that was installed before it. The next start reads the journal and
 * quarantines the plugin.
 *
 * Only Missive's PluginBoundary uses this header.
 */
#ifndef MISSIVE_GUARD_H
#define MISSIVE_GUARD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a plugin is running. The numbers are written into the journal by name. */
enum {
    MISSIVE_GUARD_LOAD = 1,   /* dlopen: the library's initialisers */
    MISSIVE_GUARD_ENTRY,      /* missive_plugin_entry_v1 */
    MISSIVE_GUARD_DECODE,
    MISSIVE_GUARD_RELEASE,
    MISSIVE_GUARD_ENCODE,
    MISSIVE_GUARD_DIGEST,
    MISSIVE_GUARD_PUSH,
    MISSIVE_GUARD_WORDS,
    MISSIVE_GUARD_MEDIA,
    MISSIVE_GUARD_VIEW,
    MISSIVE_GUARD_ACTION,
    MISSIVE_GUARD_TEXTS,
    MISSIVE_GUARD_THREAD,     /* not a call: a fault on an unmarked thread, attributed by address */
    MISSIVE_GUARD_OPERATION_COUNT
};

/* One plugin file (or one type of it): the bytes written for it. Made once, never freed. */
typedef struct missive_guard_site missive_guard_site;

/* A thread's mark: the site it runs and the operation. */
typedef struct missive_guard_mark {
    const missive_guard_site *site;
    int operation;
} missive_guard_mark;

/* Makes a site whose journal record is `record` (copied; no newline). NULL when out of memory. */
const missive_guard_site *missive_guard_site_create(const char *record, size_t length);

/* Marks the calling thread as running `site`'s `operation`; returns the previous mark. */
missive_guard_mark missive_guard_enter(const missive_guard_site *site, int operation);

/* Restores the mark `enter` returned. */
void missive_guard_leave(missive_guard_mark previous);

/*
 * Installs the handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGSYS, writing to `journal_fd`
 * (opened with O_APPEND), and an alternate signal stack for the calling thread, so that a stack overflow on
 * it can still be recorded. Installing again only changes the journal. Returns 0, or -1 with errno set.
 */
int missive_guard_install(int journal_fd);

/* Whether the handler is installed. */
int missive_guard_installed(void);

/*
 * Records the loaded code (the executable PT_LOAD segments) of the object that holds `address` (a symbol of a
 * plugin library), attributed to `site`. The handler reads them, with async-signal-safe code only, when a
 * fatal signal arrives on a thread that is not marked: the faulting PC, or failing that the first return
 * address found in the faulting thread's stack (a bounded scan upward from its stack pointer, read with
 * process_vm_readv so that an unmapped or protected page ends the scan instead of faulting), names the
 * plugin. The table is fixed (MISSIVE_GUARD_RANGE_CAPACITY segments) and never shrinks: libraries are never
 * unloaded. Returns the number of segments recorded: 0 when the object is not found or the table is full.
 */
#define MISSIVE_GUARD_RANGE_CAPACITY 4096
int missive_guard_record_ranges(const void *address, const missive_guard_site *site);

/* The site whose recorded ranges hold `address`, or NULL (for the tests). */
const missive_guard_site *missive_guard_site_at(const void *address);

/*
 * The process state the host depends on, taken before plugin code runs and compared after.
 *
 * A state holds: for each of the descriptors 0, 1 and 2, whether it is open, the file it refers to (device
 * and inode) and its status flags, and a copy of it (made with F_DUPFD_CLOEXEC above 2); the working directory
 * (its device and inode; the guard keeps one descriptor of it, opened with O_PATH, while it stays the same); the
 * actions of the guarded signals; the locale (setlocale(LC_ALL, NULL)); the umask (from /proc/self/status the
 * first time, then by setting the value last seen, which changes nothing while it is the one in place). Taking
 * one the first time also registers the guard's atexit handler (see MISSIVE_GUARD_EXIT_STATUS). A state and its
 * comparison cost about 10 µs on the 2-core development machine.
 */
typedef struct missive_guard_state missive_guard_state;

/* What changed, as bits of the value missive_guard_state_restore returns. */
#define MISSIVE_STATE_FD0 0x1U          /* standard input: closed, another file, or other status flags */
#define MISSIVE_STATE_FD1 0x2U          /* standard output */
#define MISSIVE_STATE_FD2 0x4U          /* standard error */
#define MISSIVE_STATE_DIRECTORY 0x8U    /* the working directory */
#define MISSIVE_STATE_LOCALE 0x10U      /* the locale, LC_ALL */
#define MISSIVE_STATE_UMASK 0x20U       /* the umask */
#define MISSIVE_STATE_CLOSED0 0x40U     /* with MISSIVE_STATE_FD0: it was closed; shifted left by the descriptor */
#define MISSIVE_STATE_NOT_RESTORED 0x200U /* something could not be put back */
/* The action of the guarded signal at index i (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS) changed:
   this bit shifted left by i. */
#define MISSIVE_STATE_SIGNAL0 0x10000U

/* The number of guarded signals, and the signal at an index of the MISSIVE_STATE_SIGNAL0 bits. */
int missive_guard_signal_count(void);
int missive_guard_signal_at(int index);

/* Takes the state now. NULL when out of memory. */
missive_guard_state *missive_guard_state_take(void);

/*
 * Compares the process with `state`, puts back what changed, frees `state` and returns the bits of what
 * changed (0 when nothing did). A descriptor is put back with dup2 from its copy (and its status flags with
 * F_SETFL), the directory with fchdir, the locale with setlocale, the umask with umask. A signal action is put
 * back; when the action taken was the guard's own, the new one (the plugin's) becomes the one the guard hands
 * the signal on to, so that it still runs after the crash is recorded.
 */
unsigned missive_guard_state_restore(missive_guard_state *state);

/* Frees `state` without comparing it. */
void missive_guard_state_free(missive_guard_state *state);

/*
 * The status the guard's atexit handler ends the process with when exit() is called on a thread marked as
 * running a plugin (after writing a journal line whose signal field is `exit`, when a journal is open, and a
 * line to standard error): 70, never 0.
 */
#define MISSIVE_GUARD_EXIT_STATUS 70

/*
 * For a child process the host started (a plugin scanner, a check): asks the kernel to kill this process with
 * SIGKILL when the thread that started it ends, so that an interrupted host leaves no child behind, however
 * long a plugin would hang. Returns 0, or -1 with errno set; -1 with errno ESRCH when the parent is already
 * gone.
 */
int missive_guard_end_with_parent(void);

#ifdef __cplusplus
}
#endif

#endif
