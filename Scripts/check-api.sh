#!/usr/bin/env bash
# Fails on a break of the public API since the last release that CHANGELOG.md does not announce (docs/API.md).
#
#   bash Scripts/check-api.sh [--record] [swift build options for the current package, such as --scratch-path .build-x]
#
# The last release is the one `.api-baseline` records (its version and the full hash of its commit: tags do not
# reach every clone). swift-api-digester compares the public API of the library products' modules, and of
# MissiveCore, which Missive and MissivePluginKit re-export, with that commit's. Every break it reports must name a
# symbol that CHANGELOG.md writes in backticks above the heading of the baseline's release (`## 0.6.0`, say), that
# is, in what the coming release announces: a removed `Name`, a renamed `Old` (which also covers the declarations
# whose types mention `Old`), a changed `Type.member`.
#
# The release's API comes from API/baselines/COMMIT-swift-TOOLCHAIN/ when the repository records it for this toolchain
# (the digester's dumps, public declarations only, gzipped: `--record` writes them). Otherwise the first run
# extracts the release's source into .build/api-baseline, builds those five modules there (about as long as a first
# `swift build`) and keeps their API. Later runs reuse it and only build the current modules, which `swift test` has
# built already, so they take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
record=no
if [[ ${1:-} == --record ]]; then
    record=yes
    shift
fi

# The release: the first line of .api-baseline that is not a comment, "VERSION COMMIT".
read -r version commit < <(grep -v '^\s*\(#\|$\)' .api-baseline | head -n 1) || true
if [[ ! "${version:-}" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ || ! "${commit:-}" =~ ^[0-9a-f]{40}$ ]]; then
    echo "check-api: .api-baseline must hold a line 'VERSION COMMIT' (0.6.0 and a full 40-digit commit hash)" >&2
    exit 2
fi
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
    # A shallow or partial clone: fetch the one commit, then give up with a clear message.
    git fetch --quiet origin "$commit" 2>/dev/null || true
    if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
        echo "check-api: the $version release commit $commit is not in this clone; fetch it (git fetch --unshallow)" >&2
        exit 2
    fi
fi

# Not a product, but every declaration of it is API through the products' `@_exported import`: MissiveCore.
modules=(Missive MissiveCore MissivePluginKit MissiveRendering MissiveStore)
digester=$(dirname "$(readlink -f "$(command -v swift)")")/swift-api-digester
[[ -x $digester ]] || digester=swift-api-digester
toolchain=$(swift --version 2>/dev/null | grep -o 'version [0-9][0-9.]*' | head -n 1 | sed 's/^version //')
work=.build/api-baseline
baselines=$work/$commit-swift-$toolchain
mkdir -p "$work"
start=$SECONDS

# The digester's search paths for a built package: its modules, and the module maps and headers of its C targets
# and of its dependencies' (not the host-tool copies SwiftPM builds for the command plugin, which would define
# every C module twice; that is why this script does not run `swift package diagnose-api-breaking-changes`).
search_paths() {
    local root=$1 bin=$2 scratch
    scratch=$(cd "$bin/../.." && pwd)
    paths=(-I "$bin/Modules")
    for dir in "$bin"/*.build; do
        [[ $dir != *-tool.build && -f $dir/module.modulemap ]] && paths+=(-I "$dir")
    done
    for dir in "$root"/Sources/*/include "$scratch"/checkouts/*/Sources/*/include; do
        [[ -d $dir ]] && paths+=(-I "$dir")
    done
    for map in "$root"/Sources/*/module.modulemap "$scratch"/checkouts/*/Sources/*/module.modulemap; do
        [[ -f $map ]] && paths+=(-Xcc "-fmodule-map-file=$map")
    done
    return 0
}

# The release's API, once per release and toolchain: recorded in the repository, or its source from git, built in a
# scratch folder that stays.
recorded=API/baselines/$commit-swift-$toolchain
if ! [[ -s $baselines/${modules[-1]}.json ]] && [[ -s $recorded/${modules[-1]}.json.gz ]]; then
    rm -rf "$baselines.partial"
    mkdir -p "$baselines.partial"
    for module in "${modules[@]}"; do
        gzip -dc "$recorded/$module.json.gz" >"$baselines.partial/$module.json"
    done
    rm -rf "$baselines"
    mv "$baselines.partial" "$baselines"
    echo "check-api: $version's API as recorded in $recorded"
fi
if ! [[ -s $baselines/${modules[-1]}.json ]]; then
    checkout=$work/checkout-$commit
    if [[ ! -f $checkout/Package.swift ]]; then
        mkdir -p "$checkout"
        git archive "$commit" | tar -x -C "$checkout"
    fi
    checkout=$(readlink -f "$checkout")
    echo "check-api: building $version's modules in $checkout (once; later runs reuse them)"
    for module in "${modules[@]}"; do
        swift build --package-path "$checkout" --target "$module" -q
    done
    search_paths "$checkout" "$(swift build --package-path "$checkout" --show-bin-path)"
    rm -rf "$baselines.partial"
    mkdir -p "$baselines.partial"
    for module in "${modules[@]}"; do
        "$digester" -dump-sdk -compiler-style-diags "${paths[@]}" -module "$module" -o "$baselines.partial/$module.json"
    done
    rm -rf "$baselines"
    mv "$baselines.partial" "$baselines"
fi

if [[ $record == yes ]]; then
    mkdir -p "$recorded"
    for module in "${modules[@]}"; do
        # Only what the comparison reads: the public declarations, without the dump's indentation.
        python3 Scripts/api-public-only.py "$baselines/$module.json" /dev/stdout | gzip -9n >"$recorded/$module.json.gz"
    done
    echo "check-api: recorded $version's API in $recorded; commit it, so that CI need not build $version"
fi

# The current API, compared with the release's.
for module in "${modules[@]}"; do
    swift build "$@" --target "$module" -q
done
search_paths "$PWD" "$(swift build "$@" --show-bin-path)"
log=$(mktemp)
dumps=$(mktemp -d)
trap 'rm -rf "$log" "$dumps"' EXIT
status=0
for module in "${modules[@]}"; do
    # Both dumps without their `package` declarations (Scripts/api-public-only.py), which are not API.
    "$digester" -dump-sdk -compiler-style-diags "${paths[@]}" -module "$module" -o "$dumps/$module.current.json" >>"$log" 2>&1 || status=$?
    python3 Scripts/api-public-only.py "$dumps/$module.current.json" "$dumps/$module.public.json"
    python3 Scripts/api-public-only.py "$baselines/$module.json" "$dumps/$module.baseline.json"
    "$digester" -diagnose-sdk -compiler-style-diags -input-paths "$dumps/$module.baseline.json" -input-paths "$dumps/$module.public.json" \
        >>"$log" 2>&1 || status=$?
done
echo "check-api: the comparison took $((SECONDS - start)) s"

# "<unknown>:0: error: API breakage: func Foo.bar() has been removed [#api-digester-breaking-change]"
mapfile -t breaks < <(grep -a 'API breakage: ' "$log" | sed -e 's/^.*API breakage: //' -e 's/ \[#api-digester-breaking-change\]$//')
if ((status != 0 && ${#breaks[@]} == 0)) || grep -a 'error: ' "$log" | grep -vq 'API breakage: '; then
    cat "$log" >&2
    echo "check-api: the API comparison itself failed" >&2
    exit 2
fi
if ((${#breaks[@]} == 0)); then
    echo "check-api: no API break since $version"
    exit 0
fi
printf 'check-api: API break: %s\n' "${breaks[@]}"

# What the coming release announces: CHANGELOG.md above the baseline release's heading, its `names` in backticks
# with any argument list or generic clause dropped (`Foo.bar(_:)` -> Foo.bar).
announced=()
if [[ -f CHANGELOG.md ]]; then
    escaped_version=${version//./\\.}
    mapfile -t announced < <(
        awk -v heading="^##[^#](.*[^0-9.])?$escaped_version([^0-9.]|\$)" '$0 ~ heading { exit } { print }' CHANGELOG.md \
            | grep -o '`[^`]*`' | tr -d '`' | sed -E 's/[(<].*$//' \
            | grep -E '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$' | sort -u
    )
fi

unannounced=()
for line in "${breaks[@]}"; do
    # Module names before a type say nothing: `Missive.MessageContentView` is `MessageContentView`.
    bare=$(sed -E 's/(^|[^A-Za-z0-9_.])(Swift|Foundation|Missive|MissiveCore|MissivePluginKit|MissiveRendering|MissiveStore)\./\1/g' <<<"$line")
    found=no
    for name in "${announced[@]}"; do
        if grep -qE "(^|[^A-Za-z0-9_.])${name//./\\.}([^A-Za-z0-9_]|\$)" <<<"$bare"; then
            found=yes
            break
        fi
    done
    [[ $found == yes ]] || unannounced+=("$line")
done

if ((${#unannounced[@]} > 0)); then
    echo "check-api: ${#unannounced[@]} of ${#breaks[@]} API breaks since $version are not announced in CHANGELOG.md:" >&2
    printf '  %s\n' "${unannounced[@]}" >&2
    echo "check-api: name each broken symbol in backticks in the coming release's section of CHANGELOG.md (above" >&2
    echo "  '## $version'), say how to migrate (docs/API.md), or restore the API." >&2
    exit 1
fi
echo "check-api: ${#breaks[@]} API breaks since $version, each announced in CHANGELOG.md"
