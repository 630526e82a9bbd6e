/* Defect: a hostile plugin that looks for what it was not handed (docs/PROTECTION.md, "The worker's own world").
   While loading, when the worker still may open files for reading, it looks at every other process it can see in
   /proc (environ, cmdline, maps, the files its descriptors name, and the mem of its parent and of Missive's processes, which it keeps open), reads /etc/passwd, and reads every file it can
   in its own folder and under /tmp, /root, /home and /var/tmp (but itself and the files its process maps: the worker
   and the libraries, which it was handed), looking for the marker "MISSIVE-SECRET-". Its decode then fails with a
   reason that says what it found:
     "report"          what loading found, with the process memory it kept open read again now (a server's tokens
                       appear after it started);
     "rescan"          the same, looking at /proc and the files again now (only without the seccomp filter);
     "connect:PORT"    whether a TCP connection to 127.0.0.1:PORT could be made and "snoop" sent on it;
     "write:PATH"      whether the file PATH could be created and written.
   The reason reads "snoops: pids=N proc=N passwd=0|1 files=N secrets=[...]", or "connect=ok|failed (errno)",
   "write=ok|failed (errno)". Other content decodes as the echo type. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenSnoops", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:snoops", MISSIVE_PERSISTENCE_COUNTED, 0);

#define MARKER "MISSIVE-SECRET-"
#define MAX_SECRETS 16
#define MAX_MEMORIES 64

static struct {
    int pids;          /* other processes seen in /proc */
    int proc_reads;    /* other processes' /proc files that opened */
    int passwd;        /* whether /etc/passwd could be read */
    int files;         /* files read under the folders above */
    char secrets[MAX_SECRETS][48];
    int secret_count;
    int memories[MAX_MEMORIES]; /* /proc/PID/mem of other processes, kept open */
    pid_t memory_pids[MAX_MEMORIES];
    int memory_count;
    /* The readable ranges of each kept memory, read from its maps at load (opening maps later may be forbidden). */
    unsigned long ranges[MAX_MEMORIES][256][2];
    int range_counts[MAX_MEMORIES];
    char self[4096]; /* the plugin's own file, which holds the marker as a constant */
    /* The files mapped into its own process (the worker executable, the libraries): what it was handed, not found. */
    char mapped[128][512];
    int mapped_count;
} loot;

/* Notes the files its own process maps, from /proc/self/maps. */
static void note_own_files(void) {
    loot.mapped_count = 0;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps) return;
    char line[1024];
    while (fgets(line, sizeof line, maps) && loot.mapped_count < 128) {
        char *path = strchr(line, '/');
        if (!path) continue;
        path[strcspn(path, "\n")] = '\0';
        int known = 0;
        for (int index = 0; index < loot.mapped_count && !known; index++) known = strcmp(loot.mapped[index], path) == 0;
        if (!known) snprintf(loot.mapped[loot.mapped_count++], sizeof loot.mapped[0], "%s", path);
    }
    fclose(maps);
}

/* Whether `path` is the plugin itself or a file its process maps. */
static int is_own(const char *path) {
    if (strcmp(path, loot.self) == 0) return 1;
    for (int index = 0; index < loot.mapped_count; index++) {
        if (strcmp(loot.mapped[index], path) == 0) return 1;
    }
    return 0;
}

static void note_secret(const char *at, size_t available) {
    size_t length = 0;
    /* The marker alone, or followed by what cannot be in a secret (source code that builds one), is not a secret. */
    if (available <= strlen(MARKER)) return;
    char next = at[strlen(MARKER)];
    if (!((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') || (next >= '0' && next <= '9'))) return;
    while (length < available && length < 47) {
        char c = at[length];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) break;
        length++;
    }
    char secret[48];
    memcpy(secret, at, length);
    secret[length] = '\0';
    for (int index = 0; index < loot.secret_count; index++) {
        if (strcmp(loot.secrets[index], secret) == 0) return;
    }
    if (loot.secret_count < MAX_SECRETS) strcpy(loot.secrets[loot.secret_count++], secret);
}

static void scan(const char *bytes, size_t length) {
    size_t marker = strlen(MARKER);
    for (size_t at = 0; at + marker <= length; at++) {
        if (bytes[at] == 'M' && memcmp(bytes + at, MARKER, marker) == 0) note_secret(bytes + at, length - at);
    }
}

static int scan_file(const char *path) {
    int file = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (file < 0) return 0;
    static char buffer[1 << 16];
    ssize_t count = read(file, buffer, sizeof buffer);
    close(file);
    if (count < 0) return 0;
    scan(buffer, (size_t)count);
    return 1;
}

/* Reads the readable ranges of the process `pid` from its maps into slot `slot`. */
static void read_ranges(int slot, pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "re");
    loot.range_counts[slot] = 0;
    if (!maps) return;
    char line[512];
    while (fgets(line, sizeof line, maps) && loot.range_counts[slot] < 256) {
        unsigned long start, end;
        char permissions[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, permissions) != 3 || permissions[0] != 'r') continue;
        loot.ranges[slot][loot.range_counts[slot]][0] = start;
        loot.ranges[slot][loot.range_counts[slot]][1] = end;
        loot.range_counts[slot]++;
    }
    fclose(maps);
}

static void scan_memory(int slot) {
    static char buffer[1 << 20];
    size_t total = 0;
    for (int range = 0; range < loot.range_counts[slot]; range++) {
        unsigned long start = loot.ranges[slot][range][0], end = loot.ranges[slot][range][1];
        for (unsigned long at = start; at < end && total < ((size_t)256 << 20); at += sizeof buffer) {
            size_t want = end - at < sizeof buffer ? end - at : sizeof buffer;
            ssize_t got = pread(loot.memories[slot], buffer, want, (off_t)at);
            if (got <= 0) break;
            total += (size_t)got;
            scan(buffer, (size_t)got);
        }
    }
}

static void walk(const char *folder, int depth, int *budget) {
    if (depth > 8 || *budget <= 0) return;
    DIR *directory = opendir(folder);
    if (!directory) return;
    struct dirent *entry;
    while ((entry = readdir(directory)) && *budget > 0) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        struct stat info;
        if (lstat(path, &info) != 0) continue;
        (*budget)--;
        if (S_ISDIR(info.st_mode)) {
            walk(path, depth + 1, budget);
        } else if (S_ISREG(info.st_mode) && info.st_size < (64 << 20) && !is_own(path)) {
            loot.files += scan_file(path);
        }
    }
    closedir(directory);
}

static void look_around(void) {
    loot.pids = loot.proc_reads = loot.files = 0;
    for (int index = 0; index < loot.memory_count; index++) close(loot.memories[index]);
    loot.memory_count = 0;
    Dl_info info;
    if (dladdr((void *)look_around, &info) && info.dli_fname) snprintf(loot.self, sizeof loot.self, "%s", info.dli_fname);
    pid_t self = getpid();
    DIR *proc = opendir("/proc");
    if (proc) {
        struct dirent *entry;
        while ((entry = readdir(proc))) {
            char *end;
            long pid = strtol(entry->d_name, &end, 10);
            if (*end != '\0' || pid <= 0 || pid == self) continue;
            loot.pids++;
            const char *parts[] = {"environ", "cmdline", "maps"};
            for (size_t index = 0; index < 3; index++) {
                char path[64];
                snprintf(path, sizeof path, "/proc/%ld/%s", pid, parts[index]);
                loot.proc_reads += scan_file(path);
            }
            char folder[64];
            snprintf(folder, sizeof folder, "/proc/%ld/fd", pid);
            DIR *descriptors = opendir(folder);
            if (descriptors) {
                loot.proc_reads++;
                struct dirent *descriptor;
                while ((descriptor = readdir(descriptors))) {
                    char path[128];
                    snprintf(path, sizeof path, "%s/%s", folder, descriptor->d_name);
                    struct stat info;
                    if (descriptor->d_name[0] != '.' && stat(path, &info) == 0 && S_ISREG(info.st_mode)) scan_file(path);
                }
                closedir(descriptors);
            }
            /* Memory is kept for the host (its parent) and Missive's own processes only: reading every process of a
               busy machine would take minutes. */
            char path[64], name[32] = "";
            snprintf(path, sizeof path, "/proc/%ld/comm", pid);
            int comm = open(path, O_RDONLY | O_CLOEXEC);
            if (comm >= 0) {
                ssize_t got = read(comm, name, sizeof name - 1);
                name[got > 0 ? got : 0] = '\0';
                close(comm);
            }
            if (pid != getppid() && strncmp(name, "missive", 7) != 0) continue;
            snprintf(path, sizeof path, "/proc/%ld/mem", pid);
            int memory = open(path, O_RDONLY | O_CLOEXEC);
            if (memory >= 0) {
                loot.proc_reads++;
                if (loot.memory_count < MAX_MEMORIES) {
                    loot.memory_pids[loot.memory_count] = (pid_t)pid;
                    read_ranges(loot.memory_count, (pid_t)pid);
                    loot.memories[loot.memory_count++] = memory;
                } else {
                    close(memory);
                }
            }
        }
        closedir(proc);
    }
    loot.passwd = scan_file("/etc/passwd");
    note_own_files();
    int budget = 20000;
    /* Its own folder first (what lies beside a plugin is the likeliest loot), then the usual places. */
    char own_folder[4096];
    snprintf(own_folder, sizeof own_folder, "%s", loot.self);
    char *slash = strrchr(own_folder, '/');
    if (slash && slash != own_folder) {
        *slash = '\0';
        walk(own_folder, 0, &budget);
    }
    const char *folders[] = {"/tmp", "/root", "/home", "/var/tmp"};
    for (size_t index = 0; index < sizeof folders / sizeof folders[0]; index++) walk(folders[index], 0, &budget);
}

/* The process memory it kept is read again, in the ranges its maps listed at load (opening maps now may be
   forbidden). */
static void read_memories_again(void) {
    for (int index = 0; index < loot.memory_count; index++) scan_memory(index);
}

static int32_t report(const missive_sink *error) {
    char text[1024];
    int used = snprintf(text, sizeof text, "snoops: pids=%d proc=%d passwd=%d files=%d secrets=[", loot.pids, loot.proc_reads, loot.passwd, loot.files);
    for (int index = 0; index < loot.secret_count && used < (int)sizeof text - 64; index++) {
        used += snprintf(text + used, sizeof text - (size_t)used, "%s%s", index ? "," : "", loot.secrets[index]);
    }
    snprintf(text + used, sizeof text - (size_t)used, "]");
    return missive_fail_with_reason(error, text);
}

/* The text after `word` in the content, up to the closing quote of its JSON string, or NULL. */
static const char *argument(const uint8_t *content, size_t length, const char *word, char *out, size_t size) {
    size_t word_length = strlen(word);
    for (size_t at = 0; at + word_length <= length; at++) {
        if (memcmp(content + at, word, word_length) != 0) continue;
        size_t used = 0;
        for (size_t from = at + word_length; from < length && content[from] != '"' && used + 1 < size; from++) {
            out[used++] = (char)content[from];
        }
        out[used] = '\0';
        return out;
    }
    return NULL;
}

static int32_t snoops_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    char value[512];
    if (fixture_holds(content, length, "rescan")) {
        look_around();
        read_memories_again();
        return report(error);
    }
    if (fixture_holds(content, length, "report")) {
        read_memories_again();
        return report(error);
    }
    if (argument(content, length, "connect:", value, sizeof value)) {
        int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(value))};
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        char text[64];
        if (sock >= 0 && connect(sock, (struct sockaddr *)&address, sizeof address) == 0 && write(sock, "snoop", 5) == 5) {
            snprintf(text, sizeof text, "connect=ok");
        } else {
            snprintf(text, sizeof text, "connect=failed (%s)", strerror(errno));
        }
        if (sock >= 0) close(sock);
        return missive_fail_with_reason(error, text);
    }
    if (argument(content, length, "write:", value, sizeof value)) {
        int file = open(value, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        char text[64];
        if (file >= 0 && write(file, "snoop", 5) == 5) {
            snprintf(text, sizeof text, "write=ok");
        } else {
            snprintf(text, sizeof text, "write=failed (%s)", strerror(errno));
        }
        if (file >= 0) close(file);
        return missive_fail_with_reason(error, text);
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:snoops", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = snoops_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenSnoops", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    look_around();
    return &plugin;
}
