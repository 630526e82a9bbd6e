/* Defect: decode tries what an isolated worker's seccomp filter forbids when the content names it: "open" opens a
   file, "socket" makes a socket, "exec" starts a program, "ptrace" asks to be traced and "fork" starts a process.
   When the call is let through, decode fails with a reason saying so; under the filter, the worker is stopped at the
   call. "descriptors" and "environment" fail with a reason that lists the descriptors open in the process and
   counts its environment variables, so that a test sees what a worker inherits. "harmless" makes calls that
   libraries make on their own and that change nothing outside the process (threads, timers, getcpu, select,
   reading its ids and limits), and fails with "harmless calls were allowed" once all returned. Its examples and other
   content decode as the echo type. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenForbiddenCalls", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:forbidden", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t allowed(const missive_sink *error, const char *what) {
    return missive_fail_with_reason(error, what);
}

extern char **environ;

static void *nothing(void *argument) {
    return argument;
}

/* Calls a library may make during a decode; each must return, none may stop the worker. */
static int32_t harmless_calls(const missive_sink *error) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, nothing, NULL) == 0) pthread_join(thread, NULL);
    (void)sched_getcpu();
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (timer >= 0) {
        struct itimerspec later = {{0, 0}, {60, 0}};
        timerfd_settime(timer, 0, &later, NULL);
        close(timer);
    }
    timer_t posix_timer;
    struct sigevent event = {.sigev_notify = SIGEV_NONE};
    if (timer_create(CLOCK_MONOTONIC, &event, &posix_timer) == 0) timer_delete(posix_timer);
    struct itimerval interval;
    getitimer(ITIMER_REAL, &interval);
    struct timeval zero = {0, 0};
    select(0, NULL, NULL, NULL, &zero);
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    uid_t real, effective, saved;
    getresuid(&real, &effective, &saved);
    (void)sched_get_priority_max(SCHED_OTHER);
    struct statfs file_system;
    statfs("/", &file_system);
    struct timespec instant = {0, 1000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &instant, NULL);
    sigset_t pending;
    sigpending(&pending);
    return allowed(error, "harmless calls were allowed");
}

static int32_t forbidden_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    if (fixture_holds(content, length, "descriptors")) {
        char text[512] = "descriptors:";
        size_t used = strlen(text);
        for (int descriptor = 0; descriptor < 1024 && used + 8 < sizeof text; descriptor++) {
            if (fcntl(descriptor, F_GETFD) >= 0) used += (size_t)snprintf(text + used, sizeof text - used, " %d", descriptor);
        }
        return allowed(error, text);
    }
    if (fixture_holds(content, length, "environment")) {
        int count = 0;
        for (char **variable = environ; variable && *variable; variable++) count++;
        char text[64];
        snprintf(text, sizeof text, "environment: %d variables", count);
        return allowed(error, text);
    }
    if (fixture_holds(content, length, "harmless")) return harmless_calls(error);
    if (fixture_holds(content, length, "open")) {
        int file = open("/etc/hostname", O_RDONLY);
        if (file >= 0) close(file);
        return allowed(error, "open was allowed");
    }
    if (fixture_holds(content, length, "socket")) {
        int sock = socket(AF_INET, SOCK_STREAM, 0);
        if (sock >= 0) close(sock);
        return allowed(error, "socket was allowed");
    }
    if (fixture_holds(content, length, "exec")) {
        char *const arguments[] = {"true", NULL};
        char *const environment[] = {NULL};
        execve("/bin/true", arguments, environment);
        return allowed(error, "execve returned");
    }
    if (fixture_holds(content, length, "ptrace")) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        return allowed(error, "ptrace was allowed");
    }
    if (fixture_holds(content, length, "fork")) {
        pid_t child = fork();
        if (child == 0) _exit(0);
        if (child > 0) waitpid(child, NULL, 0);
        return allowed(error, "fork was allowed");
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:forbidden", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = forbidden_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenForbiddenCalls", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
