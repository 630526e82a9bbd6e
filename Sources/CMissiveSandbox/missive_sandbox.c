/* The isolated plugin worker's process: see missive_sandbox.h. */
#define _GNU_SOURCE
#include "missive_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

#ifndef CLOCK_REALTIME_ALARM
#define CLOCK_REALTIME_ALARM 8
#endif

#ifndef CLONE_THREAD
#define CLONE_THREAD 0x00010000
#endif

/* Spawning ---------------------------------------------------------------------------------------------- */

int missive_sandbox_spawn(const char *path, char *const argv[], int channel, int error_fd, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    char *const environment[] = {NULL};
    /* dup2 onto another number clears FD_CLOEXEC on the copy; the originals are closed with the rest. */
    if ((status = posix_spawn_file_actions_adddup2(&actions, channel, MISSIVE_SANDBOX_CHANNEL)) == 0
        && (status = posix_spawn_file_actions_adddup2(&actions, error_fd, STDERR_FILENO)) == 0
        && (status = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)) == 0
        && (status = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)) == 0
        && (status = posix_spawn_file_actions_addclosefrom_np(&actions, MISSIVE_SANDBOX_CHANNEL + 1)) == 0) {
        posix_spawnattr_t attributes;
        if ((status = posix_spawnattr_init(&attributes)) == 0) {
            /* The worker starts with no signal blocked and every signal at its default action, whatever the
               host's threads have set. */
            sigset_t none, all;
            sigemptyset(&none);
            sigfillset(&all);
            posix_spawnattr_setsigmask(&attributes, &none);
            posix_spawnattr_setsigdefault(&attributes, &all);
            posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
            status = posix_spawn(pid, path, &actions, &attributes, argv, environment);
            posix_spawnattr_destroy(&attributes);
        }
    }
    posix_spawn_file_actions_destroy(&actions);
    return status;
}

int missive_sandbox_pipe(int ends[2]) {
    return pipe2(ends, O_CLOEXEC) == 0 ? 0 : errno;
}

/* Reporting a forbidden call ---------------------------------------------------------------------------- */

static int report_descriptor = -1;

static void report_forbidden_call(int signal, siginfo_t *info, void *context) {
    (void)signal, (void)context;
    int32_t number = info->si_syscall;
    uint8_t frame[4 + 13];
    uint32_t length = 13;
    memcpy(frame, &length, 4);
    frame[4] = MISSIVE_SANDBOX_REPORT_KIND;
    memset(frame + 5, 0, 8);
    memcpy(frame + 13, &number, 4);
    if (report_descriptor >= 0) {
        ssize_t written = write(report_descriptor, frame, sizeof frame);
        (void)written;
    }
    _exit(MISSIVE_SANDBOX_STOPPED);
}

int missive_sandbox_report_to(int report_fd) {
    report_descriptor = report_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = report_forbidden_call;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSYS, &action, NULL) == 0 ? 0 : errno;
}

/* The filters ------------------------------------------------------------------------------------------- */

/* Adds a rule for the call `name` when this architecture has it; a call it lacks (open on arm64) is skipped. */
static int rule(scmp_filter_ctx filter, uint32_t action, const char *name, unsigned count, const struct scmp_arg_cmp *comparisons) {
    int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR) return 0;
    int status = seccomp_rule_add_array(filter, action, number, count, comparisons);
    /* -EDOM: the call is not on this architecture after all (a pseudo number). */
    return status == -EDOM ? 0 : status;
}

static int rules(scmp_filter_ctx filter, uint32_t action, const char *const names[]) {
    for (const char *const *name = names; *name; name++) {
        int status = rule(filter, action, *name, 0, NULL);
        if (status != 0) return status;
    }
    return 0;
}

/* What neither stage allows, whatever a plugin does: networking, programs and processes, tracing, the kernel's
   own administration, and calls that get around a filter (io_uring). */
static const char *const never[] = {
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "execve", "execveat", "fork", "vfork",
    "ptrace", "process_vm_writev", "tkill", "mount", "umount2", "pivot_root", "chroot", "reboot", "init_module",
    "finit_module", "delete_module", "kexec_load", "kexec_file_load", "swapon", "swapoff", "setns", "unshare", "bpf",
    "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "open_by_handle_at", "name_to_handle_at", "quotactl", "acct", "settimeofday",
    "clock_settime", "adjtimex", "sethostname", "setdomainname", "iopl", "ioperm", "pidfd_open", "pidfd_send_signal",
    "pidfd_getfd", "process_madvise", "setrlimit", "setpriority", "ioprio_set", NULL,
};

/* What changes the file system: refused while loading, and not allowed afterwards. */
static const char *const file_changes[] = {
    "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link",
    "linkat", "symlink", "symlinkat", "chmod", "fchmodat", "chown", "lchown", "fchownat", "truncate", "mknod",
    "mknodat", "utimes", "utimensat", "futimesat", "utime", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
    "lremovexattr", "fremovexattr", "fchmod", "fchown", "fchmodat2", NULL,
};

/* Rules both stages share: another process may not be signalled, a new process not started (a thread may),
   and the handler that reports a forbidden call not replaced. */
static int common_rules(scmp_filter_ctx filter, uint32_t refuse) {
    pid_t self = getpid();
    int status;
    struct scmp_arg_cmp other_process = SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self);
    struct scmp_arg_cmp not_a_thread = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0);
    /* The kernel reads the signal number as an int: compared on 32 bits, so that high bits cannot slip past. */
    struct scmp_arg_cmp sigsys_set[] = {SCMP_A0_32(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0)};
    /* Setting any process's resource limits; reading them (a NULL new limit) is harmless. */
    struct scmp_arg_cmp setting_limits = SCMP_A2(SCMP_CMP_NE, 0);
    if ((status = rules(filter, refuse, never)) != 0) return status;
    if ((status = rule(filter, refuse, "kill", 1, &other_process)) != 0) return status;
    if ((status = rule(filter, refuse, "tgkill", 1, &other_process)) != 0) return status;
    if ((status = rule(filter, refuse, "rt_sigqueueinfo", 1, &other_process)) != 0) return status;
    if ((status = rule(filter, refuse, "rt_tgsigqueueinfo", 1, &other_process)) != 0) return status;
    if ((status = rule(filter, refuse, "process_vm_readv", 1, &other_process)) != 0) return status;
    if ((status = rule(filter, refuse, "clone", 1, &not_a_thread)) != 0) return status;
    if ((status = rule(filter, refuse, "rt_sigaction", 2, sigsys_set)) != 0) return status;
    if ((status = rule(filter, refuse, "prlimit64", 1, &setting_limits)) != 0) return status;
    /* clone3 passes its flags in a structure a filter cannot read: ENOSYS makes the C library use clone. */
    return rule(filter, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
}

int missive_sandbox_restrict_loading(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) return -ENOMEM;
    int status = common_rules(filter, SCMP_ACT_TRAP);
    if (status == 0) status = rules(filter, SCMP_ACT_TRAP, file_changes);
    /* Opening for writing, or creating: refused; reading is what dlopen does. */
    const int writing[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC};
    for (size_t index = 0; status == 0 && index < sizeof writing / sizeof writing[0]; index++) {
        struct scmp_arg_cmp at = SCMP_A2(SCMP_CMP_MASKED_EQ, (scmp_datum_t)writing[index], (scmp_datum_t)writing[index]);
        struct scmp_arg_cmp plain = SCMP_A1(SCMP_CMP_MASKED_EQ, (scmp_datum_t)writing[index], (scmp_datum_t)writing[index]);
        status = rule(filter, SCMP_ACT_TRAP, "openat", 1, &at);
        if (status == 0) status = rule(filter, SCMP_ACT_TRAP, "open", 1, &plain);
    }
    /* ioctl: only whether a descriptor is a terminal (TIOCSTI on an open terminal could type into the user's shell). */
    struct scmp_arg_cmp not_terminal_query = SCMP_A1(SCMP_CMP_NE, TCGETS);
    if (status == 0) status = rule(filter, SCMP_ACT_TRAP, "ioctl", 1, &not_terminal_query);
    /* openat2 passes its flags in a structure: ENOSYS, and the C library's open uses openat. */
    if (status == 0) status = rule(filter, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL);
    if (status == 0) status = seccomp_load(filter);
    seccomp_release(filter);
    return status;
}

/* What a worker that has loaded its plugin may call: memory, threads, time, signals to itself, its standard
   descriptors and its socket, what reads its own identity and limits without changing them, and what the crash
   guard's process-state checks read and put back. Harmless calls that libraries make on their own (sched_getcpu's
   getcpu, select) are here so that a plugin is not stopped for them; timers are below, by clock. */
static const char *const allowed[] = {
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "recvfrom", "sendto", "close",
    "close_range", "lseek", "fstat", "newfstatat", "stat", "lstat", "statx", "fstatfs", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getcwd", "fcntl", "dup", "dup2", "dup3", "fchdir", "umask", "fsync",
    "fdatasync", "poll", "ppoll", "pipe", "pipe2", "eventfd2", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "mmap", "mprotect", "munmap", "mremap", "brk", "madvise", "mincore", "msync", "membarrier",
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "set_tid_address", "rseq", "sched_yield",
    "sched_getaffinity", "sched_getparam", "sched_getscheduler", "getpid", "gettid", "getppid", "getuid",
    "geteuid", "getgid", "getegid", "getgroups", "getrandom", "clock_gettime", "clock_getres", "clock_nanosleep",
    "nanosleep", "pause", "gettimeofday", "time", "times", "getrusage", "uname", "sysinfo", "rt_sigprocmask",
    "rt_sigreturn", "rt_sigsuspend", "sigaltstack", "restart_syscall", "prctl", "arch_prctl", "exit",
    "exit_group", "getcpu", "select", "pselect6", "epoll_pwait2", "timerfd_settime", "timerfd_gettime",
    "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete", "setitimer", "getitimer", "alarm",
    "rt_sigtimedwait", "rt_sigpending", "getrlimit", "getpgrp", "getresuid", "getresgid", "sched_get_priority_max",
    "sched_get_priority_min", "statfs", "getdents64", "get_mempolicy", NULL,
};

int missive_sandbox_lock_down(void) {
    /* Anything not allowed below is refused, so each call has one rule (or several with the same action). */
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_TRAP);
    if (!filter) return -ENOMEM;
    pid_t self = getpid();
    int status = rules(filter, SCMP_ACT_ALLOW, allowed);
    /* Signals and memory reads to itself only (abort, raise, and the crash guard reading its own stack). */
    struct scmp_arg_cmp itself = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self);
    const char *const own[] = {"kill", "tgkill", "process_vm_readv"};
    for (size_t index = 0; status == 0 && index < sizeof own / sizeof own[0]; index++) status = rule(filter, SCMP_ACT_ALLOW, own[index], 1, &itself);
    /* Threads, not processes. */
    struct scmp_arg_cmp thread = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "clone", 1, &thread);
    if (status == 0) status = rule(filter, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
    /* Any signal's action may be read or set, except that SIGSYS's may only be read. */
    struct scmp_arg_cmp other_signal = SCMP_A0_32(SCMP_CMP_NE, SIGSYS);
    struct scmp_arg_cmp sigsys_read[] = {SCMP_A0_32(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_EQ, 0)};
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "rt_sigaction", 1, &other_signal);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "rt_sigaction", 2, sigsys_read);
    /* Reading its resource limits (pthread_create does), never setting them. */
    struct scmp_arg_cmp reading = SCMP_A2(SCMP_CMP_EQ, 0);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "prlimit64", 1, &reading);
    /* Timers on the clocks up to CLOCK_BOOTTIME (a dispatch timer's timerfd, timer_create): not the alarm clocks,
       which wake a suspended machine, nor another process's processor clock (a negative id). */
    struct scmp_arg_cmp own_clocks = SCMP_A0_32(SCMP_CMP_LT, CLOCK_REALTIME_ALARM);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "timerfd_create", 1, &own_clocks);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "timer_create", 1, &own_clocks);
    /* isatty: whether a descriptor is a terminal, and nothing else of ioctl. */
    struct scmp_arg_cmp terminal = SCMP_A1(SCMP_CMP_EQ, TCGETS);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "ioctl", 1, &terminal);
    if (status == 0) status = seccomp_load(filter);
    seccomp_release(filter);
    return status;
}

int missive_sandbox_syscall_name(int number, char *buffer, size_t size) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
    if (!name) return -1;
    snprintf(buffer, size, "%s", name);
    free(name);
    return 0;
}

/* Limits ------------------------------------------------------------------------------------------------ */

int missive_sandbox_limit(uint64_t address_space_bytes, uint64_t descriptors) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return errno;
    if (address_space_bytes > 0) {
        struct rlimit space = {(rlim_t)address_space_bytes, (rlim_t)address_space_bytes};
        if (setrlimit(RLIMIT_AS, &space) != 0) return errno;
    }
    if (descriptors > 0) {
        struct rlimit open_files = {(rlim_t)descriptors, (rlim_t)descriptors};
        if (setrlimit(RLIMIT_NOFILE, &open_files) != 0) return errno;
    }
    return 0;
}

static pid_t watched_parent;

static void *watch_parent(void *unused) {
    (void)unused;
    const struct timespec second = {1, 0};
    for (;;) {
        nanosleep(&second, NULL);
        /* An orphan is adopted by init (or a subreaper): its parent is no longer the host. */
        if (getppid() != watched_parent) _exit(0);
    }
    return NULL;
}

int missive_sandbox_watch_parent(void) {
    watched_parent = getppid();
    pthread_t thread;
    pthread_attr_t attributes;
    int status = pthread_attr_init(&attributes);
    if (status != 0) return status;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    status = pthread_create(&thread, &attributes, watch_parent, NULL);
    pthread_attr_destroy(&attributes);
    return status;
}

void missive_sandbox_default_fatal_signals(void) {
    const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t index = 0; index < sizeof fatal / sizeof fatal[0]; index++) signal(fatal[index], SIG_DFL);
}
