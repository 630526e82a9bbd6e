#define _GNU_SOURCE
#include "missive_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <ucontext.h>
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
    [MISSIVE_GUARD_THREAD] = "thread",
};

/* The loaded segments of the plugin libraries. Entries below `range_count` are complete and never change:
   a writer fills the next entry under `range_lock`, then publishes it by storing the count (release). */
struct range {
    uintptr_t start, end;
    const missive_guard_site *site;
};
static struct range ranges[MISSIVE_GUARD_RANGE_CAPACITY];
static atomic_size_t range_count = 0;
static pthread_mutex_t range_lock = PTHREAD_MUTEX_INITIALIZER;

/* Set once a fault on an unmarked thread was recorded, so that a handler further down the chain that
   returns here does not record it twice. */
static _Thread_local int recorded_unmarked;

/* The first fatal signal this process handled, or 0: once one arrives the process is dying, so an exit() that
   races with the crash's end (another thread finishing its work while a backtracer runs) must not end it with
   a status that says all went well. */
static atomic_int fatal_signal = 0;

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

/* The site whose ranges hold `address`; async-signal-safe. */
static const missive_guard_site *site_at(uintptr_t address) {
    size_t count = atomic_load_explicit(&range_count, memory_order_acquire);
    for (size_t index = 0; index < count; index++) {
        if (address >= ranges[index].start && address < ranges[index].end) return ranges[index].site;
    }
    return NULL;
}

const missive_guard_site *missive_guard_site_at(const void *address) { return site_at((uintptr_t)address); }

/* How far up the faulting thread's stack the handler looks for a return address into a plugin. */
#define STACK_SCAN_BYTES (64 * 1024)

/* The plugin a fault on an unmarked thread is attributed to: the one holding the faulting PC, or the first
   whose range holds a word of the stack above the stack pointer. Memory is read with process_vm_readv on
   this process, which fails on an unmapped or protected page instead of faulting. */
static const missive_guard_site *attribute(void *context) {
    if (context == NULL || atomic_load_explicit(&range_count, memory_order_acquire) == 0) return NULL;
    const ucontext_t *ucontext = context;
    uintptr_t pc, sp;
#if defined(__x86_64__)
    pc = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RIP];
    sp = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    pc = (uintptr_t)ucontext->uc_mcontext.pc;
    sp = (uintptr_t)ucontext->uc_mcontext.sp;
#else
    (void)ucontext;
    return NULL;
#endif
    const missive_guard_site *site = site_at(pc);
    if (site != NULL) return site;
    uintptr_t words[256];
    uintptr_t address = sp & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    pid_t self = getpid();
    for (size_t scanned = 0; scanned < STACK_SCAN_BYTES; scanned += sizeof words) {
        struct iovec local = {.iov_base = words, .iov_len = sizeof words};
        struct iovec remote = {.iov_base = (void *)(address + scanned), .iov_len = sizeof words};
        ssize_t read_bytes = process_vm_readv(self, &local, 1, &remote, 1, 0);
        if (read_bytes <= 0) break;
        for (size_t index = 0; index < (size_t)read_bytes / sizeof(uintptr_t); index++) {
            if ((site = site_at(words[index])) != NULL) return site;
        }
        if ((size_t)read_bytes < sizeof words) break;
    }
    return NULL;
}

static void handle(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    int none = 0;
    atomic_compare_exchange_strong(&fatal_signal, &none, signal_number);
    const missive_guard_site *site = current.site;
    int operation = current.operation;
    int fd = atomic_load(&journal);
    if (site == NULL && fd >= 0 && !recorded_unmarked) {
        site = attribute(context);
        operation = MISSIVE_GUARD_THREAD;
        if (site != NULL) recorded_unmarked = 1;
    }
    if (site != NULL && fd >= 0) {
        /* One write, so that lines from two crashing threads do not interleave. */
        char line[8192];
        size_t used = append(line, 0, sizeof line - 1, site->record, site->length);
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

/* The guard's atexit handler: exit() called while this thread runs a plugin ends the process with
   MISSIVE_GUARD_EXIT_STATUS, after recording it. */
static void at_exit(void) {
    int fatal = atomic_load(&fatal_signal);
    if (fatal != 0) {
        /* A crash is under way on another thread (it is in the journal already when a plugin caused it). */
        static const char message[] = "missive: exit() was called while the process was ending by a fatal signal; it ends with 128 + that signal\n";
        ssize_t written = write(STDERR_FILENO, message, sizeof message - 1);
        (void)written;
        _exit(128 + fatal);
    }
    const missive_guard_site *site = current.site;
    if (site == NULL) return;
    int operation = current.operation;
    const char *name = operation > 0 && operation < MISSIVE_GUARD_OPERATION_COUNT ? operation_names[operation] : operation_names[0];
    int fd = atomic_load(&journal);
    if (fd >= 0) {
        char line[8192];
        size_t used = append(line, 0, sizeof line - 1, site->record, site->length);
        used = append(line, used, sizeof line - 1, "\t", 1);
        used = append(line, used, sizeof line - 1, name, strlen(name));
        used = append(line, used, sizeof line - 1, "\texit\t", 6);
        used = append_number(line, used, sizeof line - 1, (long long)time(NULL));
        line[used++] = '\n';
        ssize_t written = write(fd, line, used);
        (void)written;
    }
    /* The record is `crash<TAB>path<TAB>five identity fields<TAB>objectName`: the message names the file and
       the type (`-` for the file's own calls), as written there (tabs, newlines and backslashes escaped). */
    const char *record = site->record;
    size_t length = site->length;
    size_t path_start = 0, path_end = 0, name_start = 0;
    for (size_t index = 0, field = 0; index < length; index++) {
        if (record[index] != '\t') continue;
        field++;
        if (field == 1) path_start = index + 1;
        if (field == 2) path_end = index;
        name_start = index + 1;
    }
    char message[8192];
    static const char before[] = "missive: the plugin ";
    static const char middle[] = " called exit() during ";
    static const char of[] = " of ";
    static const char after[] = "; the process ends with status 70\n";
    size_t used = append(message, 0, sizeof message - 64, before, sizeof before - 1);
    if (path_end > path_start) used = append(message, used, sizeof message - 64, record + path_start, path_end - path_start);
    used = append(message, used, sizeof message - 64, middle, sizeof middle - 1);
    used = append(message, used, sizeof message - 64, name, strlen(name));
    if (name_start > 0 && name_start < length && !(length - name_start == 1 && record[name_start] == '-')) {
        used = append(message, used, sizeof message - 64, of, sizeof of - 1);
        used = append(message, used, sizeof message - 64, record + name_start, length - name_start);
    }
    used = append(message, used, sizeof message, after, sizeof after - 1);
    ssize_t written = write(STDERR_FILENO, message, used);
    (void)written;
    _exit(MISSIVE_GUARD_EXIT_STATUS);
}

static pthread_once_t exit_handler_once = PTHREAD_ONCE_INIT;
static void register_exit_handler(void) { (void)atexit(at_exit); }

int missive_guard_install(int journal_fd) {
    pthread_once(&exit_handler_once, register_exit_handler);
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

/* Loaded segments ------------------------------------------------------------------------------------- */

struct range_search {
    uintptr_t address;
    const missive_guard_site *site;
    int recorded;
};

static int record_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct range_search *search = data;
    int holds = 0;
    for (int index = 0; index < info->dlpi_phnum && !holds; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        holds = header->p_type == PT_LOAD && search->address >= start && search->address < start + header->p_memsz;
    }
    if (!holds) return 0;
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        /* Only code: a return address or a PC lies there, while pointers to a plugin's data (its strings, its
           descriptors) are common on any thread's stack. */
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X)) continue;
        size_t count = atomic_load_explicit(&range_count, memory_order_relaxed);
        if (count >= MISSIVE_GUARD_RANGE_CAPACITY) break;
        ranges[count].start = info->dlpi_addr + header->p_vaddr;
        ranges[count].end = ranges[count].start + header->p_memsz;
        ranges[count].site = search->site;
        atomic_store_explicit(&range_count, count + 1, memory_order_release);
        search->recorded++;
    }
    return 1;
}

int missive_guard_record_ranges(const void *address, const missive_guard_site *site) {
    if (address == NULL || site == NULL) return 0;
    struct range_search search = {.address = (uintptr_t)address, .site = site, .recorded = 0};
    pthread_mutex_lock(&range_lock);
    if (site_at(search.address) == NULL) dl_iterate_phdr(record_object, &search);
    pthread_mutex_unlock(&range_lock);
    return search.recorded;
}

/* Process state --------------------------------------------------------------------------------------- */

struct missive_guard_state {
    struct {
        int open, flags, copy;
        dev_t device;
        ino_t inode;
    } fds[3];
    int directory; /* whether the directory's device and inode are known */
    dev_t directory_device;
    ino_t directory_inode;
    struct sigaction actions[GUARDED_COUNT];
    int has_locale;
    char locale[512];
    int umask;
};

int missive_guard_signal_count(void) { return (int)GUARDED_COUNT; }

int missive_guard_signal_at(int index) { return index >= 0 && (size_t)index < GUARDED_COUNT ? guarded_signals[index] : 0; }

/* The umask as last seen, or -1 before the first state. */
static atomic_int known_umask = -1;

/* The umask, read without changing it: from /proc/self/status the first time (about 30 µs), then by setting
   the value last seen, which gives the one in place and leaves it unchanged when it is the same; only when it
   differs is it set back, and only then is another value in place for a moment. -1 when unknown. */
static int read_umask(void) {
    int known = atomic_load(&known_umask);
    if (known >= 0) {
        int now = (int)umask((mode_t)known);
        if (now != known) {
            umask((mode_t)now);
            atomic_store(&known_umask, now);
        }
        return now;
    }
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[4096];
    ssize_t length = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (length <= 0) return -1;
    buffer[length] = 0;
    const char *line = strstr(buffer, "\nUmask:");
    if (line == NULL) return -1;
    int value = (int)strtol(line + 7, NULL, 8);
    atomic_store(&known_umask, value);
    return value;
}

/* A descriptor of the working directory (O_PATH), kept while the directory stays the same: opening one costs
   more than the rest of a state. Guarded by directory_lock. */
static int directory_fd = -1;
static dev_t directory_fd_device;
static ino_t directory_fd_inode;
static pthread_mutex_t directory_lock = PTHREAD_MUTEX_INITIALIZER;

/* A descriptor above 2, so that a copy never takes the place of a standard stream; the original is closed. */
static int above_standard(int fd) {
    if (fd < 0 || fd > 2) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return moved;
}

missive_guard_state *missive_guard_state_take(void) {
    pthread_once(&exit_handler_once, register_exit_handler);
    missive_guard_state *state = calloc(1, sizeof *state);
    if (state == NULL) return NULL;
    for (int fd = 0; fd < 3; fd++) {
        struct stat status;
        state->fds[fd].copy = -1;
        if (fstat(fd, &status) != 0) continue;
        state->fds[fd].open = 1;
        state->fds[fd].device = status.st_dev;
        state->fds[fd].inode = status.st_ino;
        state->fds[fd].flags = fcntl(fd, F_GETFL);
        state->fds[fd].copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    }
    struct stat directory;
    if (stat(".", &directory) == 0) {
        state->directory_device = directory.st_dev;
        state->directory_inode = directory.st_ino;
        pthread_mutex_lock(&directory_lock);
        if (directory_fd < 0 || directory_fd_device != directory.st_dev || directory_fd_inode != directory.st_ino) {
            int opened = above_standard(open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
            struct stat check;
            if (opened >= 0 && fstat(opened, &check) == 0 && check.st_dev == directory.st_dev && check.st_ino == directory.st_ino) {
                if (directory_fd >= 0) close(directory_fd);
                directory_fd = opened;
                directory_fd_device = check.st_dev;
                directory_fd_inode = check.st_ino;
            } else if (opened >= 0) {
                close(opened);
            }
        }
        pthread_mutex_unlock(&directory_lock);
        state->directory = 1;
    }
    for (size_t index = 0; index < GUARDED_COUNT; index++) sigaction(guarded_signals[index], NULL, &state->actions[index]);
    const char *locale = setlocale(LC_ALL, NULL);
    if (locale != NULL && strlen(locale) < sizeof state->locale) {
        strcpy(state->locale, locale);
        state->has_locale = 1;
    }
    state->umask = read_umask();
    return state;
}

static int same_action(const struct sigaction *a, const struct sigaction *b) {
    void *first = (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction : (void *)a->sa_handler;
    void *second = (b->sa_flags & SA_SIGINFO) ? (void *)b->sa_sigaction : (void *)b->sa_handler;
    return first == second;
}

unsigned missive_guard_state_restore(missive_guard_state *state) {
    if (state == NULL) return 0;
    unsigned changed = 0;
    for (int fd = 0; fd < 3; fd++) {
        struct stat status;
        int open_now = fstat(fd, &status) == 0;
        if (!state->fds[fd].open) {
            /* Nothing to compare with; a plugin that opens a closed standard stream is left alone. */
        } else if (!open_now || status.st_dev != state->fds[fd].device || status.st_ino != state->fds[fd].inode) {
            changed |= MISSIVE_STATE_FD0 << fd;
            if (!open_now) changed |= MISSIVE_STATE_CLOSED0 << fd;
            if (state->fds[fd].copy < 0 || dup2(state->fds[fd].copy, fd) < 0) changed |= MISSIVE_STATE_NOT_RESTORED;
        } else if (fcntl(fd, F_GETFL) != state->fds[fd].flags) {
            changed |= MISSIVE_STATE_FD0 << fd;
            if (fcntl(fd, F_SETFL, state->fds[fd].flags) != 0) changed |= MISSIVE_STATE_NOT_RESTORED;
        }
        if (state->fds[fd].copy >= 0) close(state->fds[fd].copy);
    }
    if (state->directory) {
        struct stat directory;
        if (stat(".", &directory) != 0 || directory.st_dev != state->directory_device || directory.st_ino != state->directory_inode) {
            changed |= MISSIVE_STATE_DIRECTORY;
            pthread_mutex_lock(&directory_lock);
            int same = directory_fd >= 0 && directory_fd_device == state->directory_device && directory_fd_inode == state->directory_inode;
            if (!same || fchdir(directory_fd) != 0) changed |= MISSIVE_STATE_NOT_RESTORED;
            pthread_mutex_unlock(&directory_lock);
        }
    }
    for (size_t index = 0; index < GUARDED_COUNT; index++) {
        struct sigaction now;
        if (sigaction(guarded_signals[index], NULL, &now) != 0 || same_action(&now, &state->actions[index])) continue;
        changed |= MISSIVE_STATE_SIGNAL0 << index;
        /* The action from before goes back, and so does what the guard hands the signal on to: the plugin is
           refused, so its handler is not kept in the chain, where it could end a later crash with status 0. */
        if (sigaction(guarded_signals[index], &state->actions[index], NULL) != 0) changed |= MISSIVE_STATE_NOT_RESTORED;
    }
    if (state->has_locale) {
        const char *locale = setlocale(LC_ALL, NULL);
        if (locale == NULL || strcmp(locale, state->locale) != 0) {
            changed |= MISSIVE_STATE_LOCALE;
            if (setlocale(LC_ALL, state->locale) == NULL) changed |= MISSIVE_STATE_NOT_RESTORED;
        }
    }
    if (state->umask >= 0) {
        mode_t now = umask((mode_t)state->umask);
        if ((int)now != state->umask) changed |= MISSIVE_STATE_UMASK;
    }
    free(state);
    return changed;
}

void missive_guard_state_free(missive_guard_state *state) {
    if (state == NULL) return;
    for (int fd = 0; fd < 3; fd++) {
        if (state->fds[fd].copy >= 0) close(state->fds[fd].copy);
    }
    free(state);
}
