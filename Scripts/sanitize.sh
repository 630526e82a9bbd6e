#!/usr/bin/env bash
# Runs the whole test suite under a sanitizer, as the users of a plugin host run theirs:
#
#   bash Scripts/sanitize.sh thread|address [swift test options, such as --filter QuarantineTests]
#
# Each sanitizer builds into a scratch folder of its own (.build-tsan, .build-asan), so it never rebuilds
# .build. docs/SANITIZERS.md says what the flags are for, how long a run takes and what the last one gave.
# Too slow for CI, which does not run it.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
thread)
    scratch=.build-tsan
    # The executables link the ThreadSanitizer runtime statically and export only part of it. Swift code
    # compiled with the sanitizer, as the sample plugins are, also calls these four, so a plugin would not
    # load (undefined symbol: __tsan_external_write) unless the host exports them too.
    exports=(__tsan_external_read __tsan_external_write __tsan_ignore_thread_begin __tsan_ignore_thread_end)
    # The suppressions name what ThreadSanitizer cannot see the synchronisation of; see the file.
    export TSAN_OPTIONS="suppressions=$PWD/Scripts/tsan-suppressions.txt${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ;;
address)
    scratch=.build-asan
    exports=()
    # AddressSanitizer runs LeakSanitizer at every exit; its suppressions name leaks outside Missive; see the file.
    # Without print_suppressions=0 it lists the suppressions it used on standard error, which tests read.
    export LSAN_OPTIONS="suppressions=$PWD/Scripts/lsan-suppressions.txt:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    ;;
*)
    echo "usage: bash Scripts/sanitize.sh thread|address [swift test options]" >&2
    exit 2
    ;;
esac
sanitizer=$1
shift

# The sanitizer reports crashes itself. The Swift runtime's backtracer, started for a host that a plugin aborts,
# hung under both sanitizers (its swift-backtrace process ran for 25 minutes and held a test), and under
# AddressSanitizer its reading of the crashed process's stacks is reported as a stack-use-after-return.
export SWIFT_BACKTRACE=enable=no

flags=(--sanitize="$sanitizer")
for symbol in "${exports[@]}"; do
    flags+=(-Xlinker "--export-dynamic-symbol=$symbol")
done
# For the tests that build a host of their own that must load the instrumented sample plugins (ExamplesTests).
export MISSIVE_SANITIZER_BUILD_FLAGS="${flags[*]}"

started=$(date +%s)
swift build --build-tests --scratch-path "$scratch" "${flags[@]}"
built=$(date +%s)
status=0
swift test --skip-build --scratch-path "$scratch" "${flags[@]}" "$@" || status=$?
finished=$(date +%s)
echo "sanitize.sh: $sanitizer: build $((built - started)) s, tests $((finished - built)) s, exit status $status" >&2
exit "$status"
