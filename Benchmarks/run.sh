#!/usr/bin/env bash
# Reproduces BENCHMARKS.md: builds the sample plugins and the benchmark in release mode, then runs it.
# Options are passed to missive-bench (for example --messages 200000 --runs 3 for a quick look).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v cc >/dev/null || { echo "run.sh: a C compiler (cc) is needed to generate the startup plugins" >&2; exit 1; }
for product in DemoMessages DemoMedia CRating; do
    swift build -c release --product "$product"
done
swift build -c release --package-path Benchmarks --product missive-bench
"$(swift build -c release --package-path Benchmarks --show-bin-path)/missive-bench" \
    --plugins "$(swift build -c release --show-bin-path)" --header "$root/Sources/CMissivePlugin/include" "$@"
