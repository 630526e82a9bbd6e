#!/usr/bin/env bash
# Reproduces BENCHMARKS.md: builds the sample plugins and the benchmark in release mode, then runs it.
# Options are passed to missive-bench (for example --messages 200000 --runs 3 for a quick look).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
command -v cc >/dev/null || { echo "run.sh: a C compiler (cc) is needed to generate the startup plugins" >&2; exit 1; }
# The decode table's parse-only reference is simdjson, from Debian's libsimdjson-dev.
if ! dpkg -s libsimdjson-dev >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsimdjson-dev || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsimdjson-dev; }
    else
        echo "run.sh: the benchmark needs Debian's libsimdjson-dev (sudo apt-get install libsimdjson-dev)" >&2
        exit 1
    fi
fi
only=() wants_postgres=1
for ((i = 1; i <= $#; i++)); do
    case ${!i} in
        --postgres) wants_postgres=0 ;;
        --only) j=$((i + 1)); only+=("${!j:-}") ;;
    esac
done
# The server load section (--only server) alone needs no sample plugin.
if [[ " ${only[*]-} " != " server " ]]; then
    for product in DemoMessages DemoMedia CRating missive-plugin-worker; do
        swift build -c release --product "$product"
    done
fi
swift build -c release --package-path Benchmarks --product missive-bench
# The PostgreSQL sections (--only postgres, --only feed, or everything) need a server whose role may create
# databases: --postgres URL or $MISSIVE_BENCH_POSTGRES, else the throwaway one of Scripts/postgres.sh (fsync off),
# started here on port 54360 and left running (stop it: MISSIVE_PG_STATE=/tmp/missive-bench-postgres.env
# bash Scripts/postgres.sh stop).
postgres=()
if ((${#only[@]})) && [[ " ${only[*]} " != *" postgres "* && " ${only[*]} " != *" feed "* ]]; then wants_postgres=0; fi
if ((wants_postgres)) && [[ -z ${MISSIVE_BENCH_POSTGRES:-} ]]; then
    line=$(MISSIVE_PG_STATE=/tmp/missive-bench-postgres.env bash Scripts/postgres.sh --port 54360 | tail -n 1)
    postgres=(--postgres "${line#*=}")
fi
"$(swift build -c release --package-path Benchmarks --show-bin-path)/missive-bench" \
    --plugins "$(swift build -c release --show-bin-path)" --header "$root/Sources/CMissivePlugin/include" ${postgres[@]+"${postgres[@]}"} "$@"
