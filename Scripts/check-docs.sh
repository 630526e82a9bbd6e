#!/usr/bin/env bash
# Builds the DocC documentation of the eight library products (and MissiveCore's) with the swift-docc-plugin, and fails on any
# warning: a ``Symbol`` link that resolves to nothing or to several symbols, an unknown <doc:Article>, a malformed
# Topics section. docc treats its warnings as errors (--warnings-as-errors); the output is also searched for
# "warning:", so that a warning from another stage (the symbol graphs' build) fails the run too.
set -euo pipefail
cd "$(dirname "$0")/.."

# The eight library products, and MissiveCore, which has no catalog of its own (its symbols are documented where
# Missive and MissivePluginKit re-export them) but whose doc comments' links are checked all the same.
products=(Missive MissivePluginKit MissiveRendering MissiveStore MissivePostgresStore MissiveServer MissiveClient MissiveWire MissiveCore)
arguments=()
for product in "${products[@]}"; do arguments+=(--target "$product"); done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
swift package generate-documentation "${arguments[@]}" --warnings-as-errors 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
    echo "check-docs: the documentation build failed (exit $status)" >&2
    exit 1
fi
# SwiftPM's note about a dependency's own manifest (swift-distributed-tracing, which Hummingbird brings, leaves a
# file undeclared) is about that package, which this one cannot change; every other warning counts, this
# package's own undeclared files too. The dependencies are the folders SwiftPM checked them out into.
dependencies=$(ls .build/checkouts 2>/dev/null | paste -sd '|' -)
dependency_manifest="^warning: '(${dependencies:-none})': found [0-9]+ file\(s\) which are unhandled"
if grep 'warning:' "$log" | grep -Evq "$dependency_manifest"; then
    echo "check-docs: the documentation build has warnings:" >&2
    grep 'warning:' "$log" | grep -Ev "$dependency_manifest" >&2
    exit 1
fi
echo "check-docs: the documentation of ${products[*]} builds with no warning"
