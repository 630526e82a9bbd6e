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
