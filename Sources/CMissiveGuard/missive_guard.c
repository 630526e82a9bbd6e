#include "missive_guard.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct missive_guard_site {
    size_t length;
    char record[];
};

static _Thread_local missive_guard_mark current;

/* The journal, or -1. Read by the handler, so an atomic int. */
static atomic_int journal = -1;
static atomic_int installed = 0;

static const int guarded_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};
#define GUARDED_COUNT (sizeof guarded_signals / sizeof guarded_signals[0])
/* The actions in place before ours, by index in guarded_signals. */
static struct sigaction previous[GUARDED_COUNT];

static const char *const operation_names[MISSIVE_GUARD_OPERATION_COUNT] = {
    [0] = "unknown",
    [MISSIVE_GUARD_LOAD] = "load",
    [MISSIVE_GUARD_ENTRY] = "entry",
    [MISSIVE_GUARD_DECODE] = "decode",
    [MISSIVE_GUARD_RELEASE] = "release",
    [MISSIVE_GUARD_ENCODE] = "encode",
    [MISSIVE_GUARD_DIGEST] = "digest",
    [MISSIVE_GUARD_PUSH] = "push",
    [MISSIVE_GUARD_WORDS] = "words",
    [MISSIVE_GUARD_MEDIA] = "media",
    [MISSIVE_GUARD_VIEW] = "view",
    [MISSIVE_GUARD_ACTION] = "action",
    [MISSIVE_GUARD_TEXTS] = "texts",
};

const missive_guard_site *missive_guard_site_create(const char *record, size_t length) {
    struct missive_guard_site *site = malloc(sizeof *site + length);
    if (site == NULL) return NULL;
    site->length = length;
    memcpy(site->record, record, length);
    return site;
}

missive_guard_mark missive_guard_enter(const missive_guard_site *site, int operation) {
    missive_guard_mark previous_mark = current;
    current.site = site;
    current.operation = operation;
    return previous_mark;
}

void missive_guard_leave(missive_guard_mark previous_mark) { current = previous_mark; }

int missive_guard_installed(void) { return atomic_load(&installed); }

/* Appends `text` to the buffer, truncating at its end; async-signal-safe. */
static size_t append(char *buffer, size_t used, size_t capacity, const char *text, size_t length) {
    if (used >= capacity) return used;
    if (length > capacity - used) length = capacity - used;
    memcpy(buffer + used, text, length);
    return used + length;
}

static size_t append_number(char *buffer, size_t used, size_t capacity, long long value) {
    char digits[24];
    size_t count = 0;
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[sizeof digits - 1 - count++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0 && count < sizeof digits - 1);
    if (value < 0) digits[sizeof digits - 1 - count++] = '-';
    return append(buffer, used, capacity, digits + sizeof digits - count, count);
}

static void handle(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    const missive_guard_site *site = current.site;
    int fd = atomic_load(&journal);
    if (site != NULL && fd >= 0) {
        /* One write, so that lines from two crashing threads do not interleave. */
        char line[8192];
        size_t used = append(line, 0, sizeof line - 1, site->record, site->length);
        int operation = current.operation;
        const char *name = operation > 0 && operation < MISSIVE_GUARD_OPERATION_COUNT ? operation_names[operation] : operation_names[0];
        used = append(line, used, sizeof line - 1, "\t", 1);
        used = append(line, used, sizeof line - 1, name, strlen(name));
        used = append(line, used, sizeof line - 1, "\t", 1);
        used = append_number(line, used, sizeof line - 1, signal_number);
        used = append(line, used, sizeof line - 1, "\t", 1);
        used = append_number(line, used, sizeof line - 1, (long long)time(NULL));
        line[used++] = '\n';
        ssize_t written = write(fd, line, used);
        (void)written;
        /* Recorded once: a handler further down the chain may return here. */
        current.site = NULL;
    }
    /* Hand the signal on to whoever had it before (the default action, the Swift runtime's backtracer, a
       sanitizer). A fault re-executes the faulting instruction when this handler returns; a signal sent by
       raise or abort is sent again. */
    for (size_t index = 0; index < GUARDED_COUNT; index++) {
        if (guarded_signals[index] == signal_number) {
            sigaction(signal_number, &previous[index], NULL);
            break;
        }
    }
    errno = saved_errno;
    if (info == NULL || info->si_code <= 0) {
        raise(signal_number);
    }
    (void)context;
}

int missive_guard_install(int journal_fd) {
    atomic_store(&journal, journal_fd);
    int expected = 0;
    if (!atomic_compare_exchange_strong(&installed, &expected, 1)) return 0;

    /* An alternate stack for this thread, so that a stack overflow can run the handler. */
    stack_t stack = {0};
    stack.ss_size = 64 * 1024;
    stack.ss_sp = malloc(stack.ss_size);
    if (stack.ss_sp != NULL) {
        stack_t existing;
        if (sigaltstack(NULL, &existing) == 0 && (existing.ss_flags & SS_DISABLE)) {
            if (sigaltstack(&stack, NULL) != 0) free(stack.ss_sp);
        } else {
            free(stack.ss_sp);
        }
    }

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handle;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (size_t index = 0; index < GUARDED_COUNT; index++) {
        if (sigaction(guarded_signals[index], &action, &previous[index]) != 0) return -1;
    }
    return 0;
}

int missive_guard_end_with_parent(void) {
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    /* The parent may have ended before the request: then the kernel will never send the signal. */
    if (getppid() != parent || parent == 1) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}
