#!/usr/bin/env bash
# Where a build's processor time goes, module by module (docs/TESTING.md, "Where CI's time goes"):
#
#   bash Scripts/build-cpu.sh [SCRATCH]     # SCRATCH: the build folder, by default a new one in /tmp
#
# Builds the package and its tests (`swift build --build-tests`) in SCRATCH with every compiler process wrapped:
# each Swift frontend job and each clang job writes down its module (a host copy marked `@host`) and the processor
# time it used. Then it prints the total and the modules that used the most. A build folder that is not empty
# measures only what is rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${1:-$(mktemp -d /tmp/missive-build-cpu.XXXXXX)}
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
frontend=$(command -v swift-frontend)
clang=$(command -v clang)
log=$scratch.cpu.log
: >"$log"

# The wrapper: runs the compiler, then appends "tool module seconds" for it and its children. (A shell's `times`
# would not do: the build system ignores SIGCHLD, so the shell is never told of its children's time.)
cat >"$tools/measure.py" <<'EOF'
import os, resource, signal, subprocess, sys
signal.signal(signal.SIGCHLD, signal.SIG_DFL)
tool, log, args = sys.argv[1], sys.argv[2], sys.argv[3:]
status = subprocess.call([tool] + args)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
module = "?"
for index, argument in enumerate(args[:-1]):
    if argument == "-module-name":
        module = args[index + 1]
    elif argument == "-o" and module == "?":
        # clang: the object file's folder names the module (`NAME.build/file.c.o`).
        parts = [part for part in args[index + 1].split("/") if part.endswith(".build")]
        module = parts[-1][: -len(".build")] if parts else "?"
if module.endswith("-tool"):
    module = module[: -len("-tool")] + "@host"
elif any("-tool.build/" in argument or "/Modules-tool" in argument for argument in args):
    module += "@host"
with open(log, "a") as file:
    file.write("%s %s %.3f\n" % (os.path.basename(tool), module or "?", usage.ru_utime + usage.ru_stime))
sys.exit(status)
EOF
# The swift driver finds the dependency scanner beside the frontend it is given, so the wrapper's folder has the
# toolchain's `lib` too.
mkdir -p "$tools/bin"
ln -s "$(dirname "$(dirname "$frontend")")/lib" "$tools/lib"
printf '#!/bin/sh\nexec python3 %s %s %s "$@"\n' "$tools/measure.py" "$frontend" "$log" >"$tools/bin/swift-frontend"
printf '#!/bin/sh\nexec python3 %s %s %s "$@"\n' "$tools/measure.py" "$clang" "$log" >"$tools/bin/clang"
chmod +x "$tools/bin/swift-frontend" "$tools/bin/clang"

start=$SECONDS
SWIFT_DRIVER_SWIFT_FRONTEND_EXEC=$tools/bin/swift-frontend CC=$tools/bin/clang \
    swift build --build-tests --scratch-path "$scratch" -q
echo "build-cpu: built in $((SECONDS - start)) s in $scratch; the compilers' processor time, by module:"
python3 - "$log" <<'EOF'
import collections, sys
seconds = collections.Counter()
for line in open(sys.argv[1]):
    fields = line.split()
    seconds[" ".join(fields[1:-1]) or "?"] += float(fields[-1])
print("  %.1f minutes in all" % (sum(seconds.values()) / 60))
for module, used in seconds.most_common(30):
    print("  %7.1f s  %s" % (used, module))
EOF
