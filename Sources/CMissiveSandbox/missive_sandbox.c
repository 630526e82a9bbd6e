/* The isolated plugin worker's process: see missive_sandbox.h. */
#define _GNU_SOURCE
#include "missive_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef ST_VALID
#define ST_VALID 0x0020
#endif

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

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

/* Spawning in namespaces -------------------------------------------------------------------------------- */

/* Everything the child needs, made by the parent before the clone: the child copies the parent's memory and
   allocates nothing, since another thread of the parent may have held the allocator's lock at the clone. */
struct confined_plan {
    const char *path;
    char *const *argv;
    int channel, error_fd, report_fd;
    const missive_sandbox_view_step *steps;
    size_t count;
    int *sources;       /* one descriptor per step, opened by the child */
    char uid_map[64], gid_map[64];
    char *scratch;      /* room for one path under the new root */
    size_t scratch_size;
};

/* Where the new root is made before it becomes "/": a tmpfs mounted over this folder of the child's own copy of the
   mount table (the host's folder is untouched; the sources were opened before, so it may hide some). */
static const char new_root[] = "/tmp";

/* What went wrong in the child: the step (-1 for the setup around the steps), the stage and the errno. */
struct confined_failure {
    int32_t step, stage, error;
};

static void fail_child(const struct confined_plan *plan, int step, int stage) {
    struct confined_failure failure = {step, stage, errno};
    ssize_t written = write(plan->report_fd, &failure, sizeof failure);
    (void)written;
    _exit(127);
}

/* Writes `text` to `descriptor` and closes it; -1 with errno when the descriptor is not open or the write fell short. */
static int write_text(int descriptor, const char *text) {
    if (descriptor < 0) return -1;
    size_t length = strlen(text);
    ssize_t written = write(descriptor, text, length);
    int saved = errno;
    close(descriptor);
    errno = saved;
    return written == (ssize_t)length ? 0 : -1;
}

/* new_root followed by `path` in the plan's scratch buffer. */
static const char *under_root(const struct confined_plan *plan, const char *path) {
    size_t prefix = sizeof new_root - 1, length = strlen(path);
    if (prefix + length + 1 > plan->scratch_size) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    memcpy(plan->scratch, new_root, prefix);
    memcpy(plan->scratch + prefix, path, length + 1);
    return plan->scratch;
}

/* The flags a read-only remount of a bind mount of `source` must keep: the kernel refuses to clear, in a user
   namespace, the flags the source's mount has (nosuid, nodev, noexec and the access-time ones). */
static unsigned long kept_flags(int source) {
    /* fstatfs is the system call alone (fstatvfs may read /proc/mounts, which allocates); its f_flags carry the
       ST_ mount flags. */
    struct statfs info;
    if (fstatfs(source, &info) != 0 || !(info.f_flags & ST_VALID)) return 0;
    unsigned long flags = 0;
    if (info.f_flags & ST_NOSUID) flags |= MS_NOSUID;
    if (info.f_flags & ST_NODEV) flags |= MS_NODEV;
    if (info.f_flags & ST_NOEXEC) flags |= MS_NOEXEC;
    if (info.f_flags & ST_NOATIME) flags |= MS_NOATIME;
    if (info.f_flags & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (info.f_flags & ST_RELATIME) flags |= MS_RELATIME;
    return flags;
}

static int confined_child(void *argument) {
    const struct confined_plan *plan = argument;
    /* The child is root of a new user namespace that maps only its user: it may mount in its own mount namespace.
       A host that is not dumpable owns its /proc files as root, so the child could not open its own maps: it is
       dumpable just while it opens them (its memory is still a copy of the host's), and not again until the exec
       gives it a memory of its own. */
    int was_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (was_dumpable == 0) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    int setgroups = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
    int uid_map = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    int gid_map = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
    if (was_dumpable == 0) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (write_text(setgroups, "deny") != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_USER_MAP);
    if (write_text(uid_map, plan->uid_map) != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_USER_MAP);
    if (write_text(gid_map, plan->gid_map) != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_USER_MAP);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_MOUNT);
    for (size_t index = 0; index < plan->count; index++) {
        plan->sources[index] = -1;
        int kind = plan->steps[index].kind;
        if (kind != MISSIVE_SANDBOX_VIEW_FILE && kind != MISSIVE_SANDBOX_VIEW_DEVICE) continue;
        plan->sources[index] = open(plan->steps[index].source, O_PATH | O_CLOEXEC);
        if (plan->sources[index] < 0) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_OPEN);
    }
    int null_device = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_device < 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_OPEN);
    if (mount("missive-worker", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k,nr_inodes=4096") != 0)
        fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_MOUNT);
    char source_path[64];
    for (size_t index = 0; index < plan->count; index++) {
        const missive_sandbox_view_step *step = &plan->steps[index];
        const char *target = under_root(plan, step->path);
        if (!target) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_STEP);
        switch (step->kind) {
        case MISSIVE_SANDBOX_VIEW_DIRECTORY:
            if (mkdir(target, 0755) != 0 && errno != EEXIST) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_STEP);
            break;
        case MISSIVE_SANDBOX_VIEW_SYMLINK:
            if (symlink(step->source, target) != 0 && errno != EEXIST) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_STEP);
            break;
        case MISSIVE_SANDBOX_VIEW_FILE:
        case MISSIVE_SANDBOX_VIEW_DEVICE: {
            int placeholder = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
            if (placeholder < 0) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_STEP);
            close(placeholder);
            /* The descriptor's magic link names the source opened before the tmpfs hid anything. */
            int source = plan->sources[index];
            const char digits[] = "0123456789";
            char number[16];
            int length = 0;
            for (int value = source; length == 0 || value > 0; value /= 10) number[length++] = digits[value % 10];
            memcpy(source_path, "/proc/self/fd/", 14);
            for (int at = 0; at < length; at++) source_path[14 + at] = number[length - 1 - at];
            source_path[14 + length] = '\0';
            if (mount(source_path, target, NULL, MS_BIND, NULL) != 0) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_BIND);
            unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | kept_flags(source);
            if (step->kind == MISSIVE_SANDBOX_VIEW_FILE) flags |= MS_NODEV;
            if (mount(NULL, target, NULL, flags, NULL) != 0) fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_BIND);
            close(source);
            break;
        }
        default:
            errno = EINVAL;
            fail_child(plan, (int)index, MISSIVE_SANDBOX_STAGE_STEP);
        }
    }
    /* A /proc of the worker's own PID namespace: it shows the worker and nothing of the host. A kernel that refuses it
       (a /proc with parts hidden by the container around the host) leaves the view without one. */
    const char *proc = under_root(plan, "/proc");
    if (!proc || (mkdir(proc, 0555) != 0 && errno != EEXIST)) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_PROC);
    if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") != 0) {
        if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) rmdir(proc);
    }
    /* The new root read-only, then made "/", and the host's file system let go of. */
    if (mount(NULL, new_root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755") != 0)
        fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_ROOT);
    if (chdir(new_root) != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_ROOT);
    if (syscall(SYS_pivot_root, ".", ".") != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_ROOT);
    if (umount2(".", MNT_DETACH) != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_ROOT);
    if (chdir("/") != 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_ROOT);
    /* Descriptors as missive_sandbox_spawn sets them; the others are closed at exec, the failure pipe with them. */
    int channel = fcntl(plan->channel, F_DUPFD_CLOEXEC, 64), errors = fcntl(plan->error_fd, F_DUPFD_CLOEXEC, 64);
    if (channel < 0 || errors < 0) fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_DESCRIPTORS);
    if (dup2(channel, MISSIVE_SANDBOX_CHANNEL) < 0 || dup2(errors, STDERR_FILENO) < 0 || dup2(null_device, STDIN_FILENO) < 0
        || dup2(null_device, STDOUT_FILENO) < 0)
        fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_DESCRIPTORS);
    if (syscall(SYS_close_range, MISSIVE_SANDBOX_CHANNEL + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
        fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_DESCRIPTORS);
    /* No signal blocked and every signal at its default action, as missive_sandbox_spawn does. */
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int number = 1; number < NSIG; number++) {
        if (number != SIGKILL && number != SIGSTOP) sigaction(number, &default_action, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char *const environment[] = {NULL};
    execve(plan->path, plan->argv, environment);
    fail_child(plan, -1, MISSIVE_SANDBOX_STAGE_EXEC);
    return 127;
}

int missive_sandbox_spawn_confined(
    const char *path, char *const argv[], int channel, int error_fd, const missive_sandbox_view_step *steps, size_t count, pid_t *pid,
    missive_sandbox_failure *failure) {
    memset(failure, 0, sizeof *failure);
    failure->step = -1;
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    struct confined_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.path = path;
    plan.argv = argv;
    plan.channel = channel;
    plan.error_fd = error_fd;
    plan.report_fd = report[1];
    plan.steps = steps;
    plan.count = count;
    /* Root outside maps to nobody inside, so that the worker holds no capability in its namespace after exec; any other
       user maps to itself. Either way the kernel checks files against the host's user. */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    snprintf(plan.uid_map, sizeof plan.uid_map, "%u %u 1\n", uid == 0 ? 65534u : (unsigned)uid, (unsigned)uid);
    snprintf(plan.gid_map, sizeof plan.gid_map, "%u %u 1\n", gid == 0 ? 65534u : (unsigned)gid, (unsigned)gid);
    plan.sources = calloc(count ? count : 1, sizeof(int));
    plan.scratch_size = 8192;
    plan.scratch = malloc(plan.scratch_size);
    const size_t stack_size = 256 << 10;
    char *stack = malloc(stack_size);
    int status = 0;
    if (!plan.sources || !plan.scratch || !stack) {
        status = ENOMEM;
    } else {
        int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD;
        pid_t child = clone(confined_child, stack + stack_size, flags, &plan);
        if (child < 0) {
            status = errno;
            failure->stage = MISSIVE_SANDBOX_STAGE_CLONE;
            failure->error = status;
        } else {
            close(report[1]);
            report[1] = -1;
            struct confined_failure reported;
            ssize_t got;
            do got = read(report[0], &reported, sizeof reported);
            while (got < 0 && errno == EINTR);
            if (got == (ssize_t)sizeof reported) {
                /* The child failed before exec and has exited: reap it, and say where. */
                int ignored;
                while (waitpid(child, &ignored, 0) < 0 && errno == EINTR) {}
                failure->step = reported.step;
                failure->stage = reported.stage;
                failure->error = reported.error;
                status = reported.error ? reported.error : EIO;
            } else {
                *pid = child;
            }
        }
    }
    if (report[1] >= 0) close(report[1]);
    close(report[0]);
    free(stack);
    free(plan.scratch);
    free(plan.sources);
    return status;
}

int missive_sandbox_pipe(int ends[2]) {
    return pipe2(ends, O_CLOEXEC) == 0 ? 0 : errno;
}

/* Reporting a forbidden call ---------------------------------------------------------------------------- */

static int report_descriptor = -1;

/* Writes one 13-byte report frame of `kind` carrying `number` on the report descriptor (from a signal handler: one
   write, nothing allocated). */
static void write_report(uint8_t kind, int32_t number) {
    uint8_t frame[4 + 13];
    uint32_t length = 13;
    memcpy(frame, &length, 4);
    frame[4] = kind;
    memset(frame + 5, 0, 8);
    memcpy(frame + 13, &number, 4);
    if (report_descriptor >= 0) {
        ssize_t written = write(report_descriptor, frame, sizeof frame);
        (void)written;
    }
}

static void report_forbidden_call(int signal, siginfo_t *info, void *context) {
    (void)signal, (void)context;
    write_report(MISSIVE_SANDBOX_REPORT_KIND, info->si_syscall);
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

static void *watch_parent(void *unused) {
    (void)unused;
    /* The host's end of the socket closes when the host ends, however it ends (its descriptors close with it): the
       channel then reports a hang-up, without the worker reading what the host sent. In a PID namespace of its own the
       worker has no parent it could look at. */
    struct pollfd channel = {.fd = MISSIVE_SANDBOX_CHANNEL, .events = POLLRDHUP};
    for (;;) {
        int ready = poll(&channel, 1, -1);
        if (ready > 0 && (channel.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) _exit(0);
        if (ready < 0 && errno != EINTR) _exit(0);
    }
    return NULL;
}

int missive_sandbox_watch_parent(void) {
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

/* Relaying a signal a worker sends itself ---------------------------------------------------------------- */

static void relay_own_signal(int signal, siginfo_t *info, void *context) {
    (void)context;
    if (info->si_code > 0 && signal != SIGTRAP) {
        /* A fault the kernel raised: SA_RESETHAND has put the default action back, and the faulting instruction
           runs again on return and ends the worker with the signal, as it ends any process. */
        return;
    }
    write_report(MISSIVE_SANDBOX_SIGNAL_KIND, signal);
    _exit(MISSIVE_SANDBOX_SIGNALLED);
}

int missive_sandbox_relay_own_signals(void) {
    /* Only the first process of a PID namespace needs it: the kernel drops the signals such a process sends itself
       while their action is the default. */
    if (getpid() != 1) return 0;
    const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t index = 0; index < sizeof fatal / sizeof fatal[0]; index++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = relay_own_signal;
        action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        if (sigaction(fatal[index], &action, NULL) != 0) return errno;
    }
    return 0;
}

void missive_sandbox_default_fatal_signals(void) {
    const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t index = 0; index < sizeof fatal / sizeof fatal[0]; index++) signal(fatal[index], SIG_DFL);
}

/* Dumpability ------------------------------------------------------------------------------------------- */

int missive_sandbox_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0) == 0 ? 0 : errno;
}

int missive_sandbox_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

/* Whether the kernel gives namespaces ------------------------------------------------------------------- */

static int probe_child(void *unused) {
    (void)unused;
    _exit(0);
}

int missive_sandbox_probe_namespaces(void) {
    const size_t stack_size = 64 << 10;
    char *stack = malloc(stack_size);
    if (!stack) return ENOMEM;
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD;
    pid_t child = clone(probe_child, stack + stack_size, flags, NULL);
    int status = 0;
    if (child < 0) {
        status = errno;
    } else {
        int ignored;
        while (waitpid(child, &ignored, 0) < 0 && errno == EINTR) {}
    }
    free(stack);
    return status;
}

/* Noting what a plugin tries to open while it loads --------------------------------------------------------- */

#include <semaphore.h>
#include <sys/uio.h>

#define AUDIT_PATHS 64
#define AUDIT_PATH_LENGTH 256

static int audit_descriptor = -1;
static sem_t audit_started;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static char audit_paths[AUDIT_PATHS][AUDIT_PATH_LENGTH];
static int audit_count, audit_dropped;

/* Whether `path` is one the dynamic loader looks for while it searches its folders for a library: a missing one
   is the loader's search, not the plugin's. */
static int loader_probe(const char *path) {
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    if (strstr(path, "/glibc-hwcaps/") || strstr(path, "/tls/") || strstr(path, "/haswell/") || strstr(path, "/x86_64/")) return 1;
    return strncmp(name, "lib", 3) == 0 && strstr(name, ".so") != NULL;
}

static void audit_note(const char *path) {
    pthread_mutex_lock(&audit_lock);
    int known = 0;
    for (int index = 0; index < audit_count && !known; index++) known = strcmp(audit_paths[index], path) == 0;
    if (!known) {
        if (audit_count < AUDIT_PATHS) snprintf(audit_paths[audit_count++], AUDIT_PATH_LENGTH, "%s", path);
        else audit_dropped++;
    }
    pthread_mutex_unlock(&audit_lock);
}

/* The thread that answers the filter's notifications: it was started before the filter, so its own calls are not
   filtered. It reads the path from the worker's memory (its own process, without trusting the pointer), notes it
   when no such file is in the worker's view, and lets the call go on. */
static void *audit_supervise(void *unused) {
    (void)unused;
    while (sem_wait(&audit_started) != 0 && errno == EINTR) {}
    struct seccomp_notif *request;
    struct seccomp_notif_resp *response;
    if (audit_descriptor < 0 || seccomp_notify_alloc(&request, &response) != 0) return NULL;
    int open_number = seccomp_syscall_resolve_name("open");
    for (;;) {
        memset(request, 0, sizeof *request);
        if (seccomp_notify_receive(audit_descriptor, request) != 0) {
            if (errno == EINTR) continue;
            break;
        }
        char path[AUDIT_PATH_LENGTH];
        uint64_t pointer = (int)request->data.nr == open_number ? request->data.args[0] : request->data.args[1];
        struct iovec local = {path, sizeof path - 1}, remote = {(void *)(uintptr_t)pointer, sizeof path - 1};
        ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        /* A path that ends near the end of its page reads short: read it again up to the page's end. */
        if (got < 0) {
            size_t room = 4096 - (pointer & 4095);
            remote.iov_len = local.iov_len = room < sizeof path - 1 ? room : sizeof path - 1;
            got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        }
        path[got > 0 ? got : 0] = '\0';
        struct stat info;
        if (path[0] == '/' && stat(path, &info) != 0 && errno == ENOENT && !loader_probe(path)) audit_note(path);
        response->id = request->id;
        response->error = 0;
        response->val = 0;
        response->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        if (seccomp_notify_respond(audit_descriptor, response) != 0 && errno != ENOENT) break;
    }
    seccomp_notify_free(request, response);
    return NULL;
}

int missive_sandbox_audit_opens(void) {
    if (sem_init(&audit_started, 0, 0) != 0) return errno;
    pthread_t thread;
    pthread_attr_t attributes;
    int status = pthread_attr_init(&attributes);
    if (status != 0) return status;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 256 << 10);
    status = pthread_create(&thread, &attributes, audit_supervise, NULL);
    pthread_attr_destroy(&attributes);
    if (status != 0) return status;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) {
        sem_post(&audit_started);
        return ENOMEM;
    }
    int added = rule(filter, SCMP_ACT_NOTIFY, "openat", 0, NULL);
    if (added == 0) added = rule(filter, SCMP_ACT_NOTIFY, "open", 0, NULL);
    if (added == 0) added = seccomp_load(filter);
    if (added == 0) audit_descriptor = seccomp_notify_fd(filter);
    seccomp_release(filter);
    sem_post(&audit_started);
    return added < 0 ? -added : added;
}

size_t missive_sandbox_audited_paths(char *buffer, size_t size, int *dropped) {
    pthread_mutex_lock(&audit_lock);
    size_t used = 0;
    for (int index = 0; index < audit_count; index++) {
        size_t length = strlen(audit_paths[index]) + 1;
        if (used + length > size) break;
        memcpy(buffer + used, audit_paths[index], length);
        used += length;
    }
    if (dropped) *dropped = audit_dropped;
    pthread_mutex_unlock(&audit_lock);
    return used;
}
