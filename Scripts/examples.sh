#!/usr/bin/env bash
# Sets up the README's examples as a user's own packages, in .build/examples, for ExamplesTests (docs/TESTING.md):
#
#   bash Scripts/examples.sh            # the snapshot, the packages and their configuration
#   bash Scripts/examples.sh --build    # and build them as the test does (.ci/run starts this beside `swift test`)
#
# - .build/examples/missive: this checkout's files (not its build folders, Examples or Benchmarks) as a git repository
#   tagged with the current version, the URL the examples depend on resolving to it. Its commit has fixed dates and
#   author, so the same files make the same commit: a second run keeps it, and the packages' checkouts of it stay
#   up to date instead of being built again.
# - .build/examples/AcmeMessages and ChatHost: the example packages' files (their build folders are kept).
# - .build/examples/swiftpm-configuration/mirrors.json: the mirror from Missive's URL to the snapshot.
#
# With --build it builds what the test then builds: the plugin's package with its tests, `missive-check` for it, and
# the host in the plugin's build folder; the test finds them up to date (or waits on SwiftPM's lock for this build).
# It prints the examples' folder.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=no
if [[ ${1:-} == --build ]]; then
    build=yes
    shift
fi
work=$root/.build/examples
url=https://github.com/missive-chat/missive
version=$(sed -n 's/.*public static let string = "\([0-9.]*\)".*/\1/p' Sources/Missive/MissiveVersion.swift)
[[ -n $version ]] || { echo "examples: no version in Sources/Missive/MissiveVersion.swift" >&2; exit 2; }
mkdir -p "$work"

# The snapshot, made anew beside the old one and kept only when its commit differs.
fresh=$(mktemp -d "$work/missive.new.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
# Package.resolved files are left out: a dependency's is not read, and the root's appears while `swift test` resolves.
tar -C "$root" --exclude='./.build*' --exclude=./.git --exclude=./Examples --exclude=./Benchmarks --exclude='./Fuzz/.build*' \
    --exclude=.swiftpm --exclude=Package.resolved -cf - . | tar -C "$fresh" -xf -
export GIT_AUTHOR_NAME="Missive Tests" GIT_AUTHOR_EMAIL=tests@missive.invalid GIT_AUTHOR_DATE="2000-01-01T00:00:00+0000"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL" GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
git -C "$fresh" init -q
git -C "$fresh" add -A
git -C "$fresh" -c commit.gpgsign=false commit -q -m snapshot
git -C "$fresh" tag "$version"
if [[ $(git -C "$work/missive" rev-parse HEAD 2>/dev/null || true) != $(git -C "$fresh" rev-parse HEAD) ]]; then
    rm -rf "$work/missive"
    mv "$fresh" "$work/missive"
fi

# The example packages, over what is there: a file is copied only when it differs, so that a build of them that is
# running (CI's, beside the test's) is not disturbed and finds its inputs unchanged; their build folders stay.
for example in AcmeMessages ChatHost; do
    (cd "$root/Examples" && find "$example" -path "$example/.build" -prune -o -type f -print) | while IFS= read -r file; do
        if ! cmp -s "$root/Examples/$file" "$work/$file"; then
            mkdir -p "$(dirname "$work/$file")"
            cp -p "$root/Examples/$file" "$work/$file"
        fi
    done
done
mkdir -p "$work/swiftpm-configuration"
printf '{"object":[{"mirror":"file://%s","original":"%s"}],"version":1}\n' "$work/missive" "$url" >"$work/swiftpm-configuration/mirrors.json"

if [[ $build == yes ]]; then
    # SwiftPM records the revision each version of a package resolved to (~/.swiftpm/security/fingerprints) and by
    # default refuses a version whose revision changed; the snapshot's 0.7.0 is a new revision whenever the checkout
    # changes, so the check only warns here (ExamplesTests passes the same).
    configuration=(--config-path "$work/swiftpm-configuration" --resolver-fingerprint-checking warn)
    (cd "$work/AcmeMessages" && swift build "${configuration[@]}" -q --build-tests && swift build "${configuration[@]}" -q --product missive-check)
    (cd "$work/ChatHost" && swift build "${configuration[@]}" -q --scratch-path "$work/AcmeMessages/.build" "$@")
fi
echo "$work"
