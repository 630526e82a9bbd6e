#!/usr/bin/env bash
# Builds the fuzz targets and runs each of them for a while: bash Fuzz/run.sh [options]
#
#   --seconds N    run each target N seconds (default 60)
#   --runs N       run each target for N inputs instead
#   --asan         build and run with AddressSanitizer too (a build folder of its own)
#   --only NAME    run one target: envelope, metadata or decoders
#   --build-only   build the fuzz targets' release package and stop: no sample plugins, no run (.ci/run builds
#                  it while its API and documentation checks leave a core free, then runs this script again)
#   -- ARGS        pass ARGS to every libFuzzer run (for example -- -jobs=2 -workers=2)
#
# New inputs go to Fuzz/.build/corpus/TARGET, kept between runs; the committed seeds in Fuzz/Corpus/TARGET
# are read and never written. An input that breaks an invariant or crashes is saved in
# Fuzz/.build/artifacts/TARGET/ and the script fails; reproduce it by giving the file to the target, as the
# failure message shows. Each run's full log is Fuzz/.build/logs/TARGET.log. See docs/FUZZING.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds=60 runs="" asan=no only="" build_only=no extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --asan) asan=yes; shift ;;
        --only) only="$2"; shift 2 ;;
        --build-only) build_only=yes; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
targets=(envelope metadata decoders)
[[ -n "$only" ]] && targets=("$only")
for target in "${targets[@]}"; do
    [[ -d "Fuzz/Corpus/$target" ]] || { echo "run.sh: no target '$target' (envelope, metadata or decoders)" >&2; exit 2; }
done

mode=plain sanitizers=(--sanitize=fuzzer) cflags=(-fsanitize=fuzzer-no-link)
if [[ "$asan" == yes ]]; then
    # Not `--sanitize=fuzzer --sanitize=address`: SwiftPM passes them as two options and swiftc keeps only the
    # last, so the Swift code would go without coverage. --sanitize=fuzzer stays, for SwiftPM to leave `main`
    # to libFuzzer; the -Xswiftc option comes after it and wins.
    mode=asan sanitizers=(--sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address) cflags=(-fsanitize=fuzzer-no-link,address)
fi
build="Fuzz/.build/$mode"

# The fuzz package depends on this one by path, so on the same packages: without a Package.resolved of its own
# (a fresh clone), it starts from the versions the package's own build resolved, which the tests ran with, rather
# than resolving every dependency again (about 20 s less; SwiftPM still checks them and rewrites the file).
if [[ ! -f Fuzz/Package.resolved && -f Package.resolved ]]; then
    cp Package.resolved Fuzz/Package.resolved
fi
# The targets, in release, in a build folder of their own (so this build never waits for SwiftPM's lock on
# .build, and can run beside a build or a check there).
swift build -c release -q --package-path Fuzz --scratch-path "$build" "${sanitizers[@]}" \
    -Xlinker --dynamic-list="$root/Fuzz/sanitizer-symbols.list"
if [[ "$build_only" == yes ]]; then exit 0; fi
# The sample plugins the decoders target loads, built as `swift build` builds them. The Swift ones are used as
# built; the C one is compiled again with the targets' instrumentation, so that libFuzzer sees its JSON reader's
# branches and AddressSanitizer its reads.
swift build -q --product DemoMessages
swift build -q --product DemoMedia
swift build -q --product MatrixBridge
bin="$build/release"
plugins="$build/plugins"
mkdir -p "$plugins"
for name in DemoMessages DemoMedia MatrixBridge; do
    cp "$(swift build --show-bin-path)/lib$name.so" "$plugins/"
done
"$(dirname "$(command -v swift)")/clang" -shared -fPIC -fvisibility=hidden -O1 -g "${cflags[@]}" \
    -I Sources/CMissivePlugin/include SampleTypes/CRating/rating.c -o "$plugins/libCRating.so"
export MISSIVE_FUZZ_PLUGINS="$root/$plugins"
# Swift keeps some allocations for the life of the process (metadata caches, the registry), which
# LeakSanitizer would report; leaks are not what these targets look for.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

limit=(-max_total_time="$seconds")
[[ -n "$runs" ]] && limit=(-runs="$runs")
mkdir -p Fuzz/.build/logs
failed=0
printf '%-9s %10s %6s %7s %6s %6s %16s  %s\n' target runs secs exec/s cov ft corpus result
for target in "${targets[@]}"; do
    corpus="Fuzz/.build/corpus/$target" artifacts="Fuzz/.build/artifacts/$target/" log="Fuzz/.build/logs/$target.log"
    mkdir -p "$corpus" "$artifacts"
    status=0 started=$SECONDS
    "$bin/fuzz-$target" "${limit[@]}" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
        -dict="Fuzz/Dictionaries/$target.dict" -artifact_prefix="$artifacts" "${extra[@]}" \
        "$corpus" "Fuzz/Corpus/$target" >"$log" 2>&1 || status=$?
    elapsed=$((SECONDS - started))
    # libFuzzer's last status line: "#RUNS DONE cov: N ft: N corp: UNITS/SIZE ..." (or the last before a failure).
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [[ -z "$executed" ]] && executed=$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | cut -d' ' -f2 || true)
    ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | cut -d' ' -f2 || true)
    units=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' <<<"$last" | cut -d' ' -f2 || true)
    if [[ $status -eq 0 ]]; then
        result="no crash"
    else
        failed=1
        crash=$(grep -o "Test unit written to .*" "$log" | tail -1 | sed 's/Test unit written to //' || true)
        result="FAILED: $(grep -m1 -E 'invariant violated|ERROR: (AddressSanitizer|libFuzzer)|Fatal error' "$log" || echo "exit $status")"
        result+="; input: ${crash:-none saved}; reproduce: MISSIVE_FUZZ_PLUGINS=$plugins $bin/fuzz-$target ${crash:-INPUT}"
    fi
    printf '%-9s %10s %6s %7s %6s %6s %16s  %s\n' "$target" "${executed:-?}" "$elapsed" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${units:-?}" "$result"
done
exit $failed
