#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for the store tests (docs/TESTING.md).
#
#   eval "$(bash Scripts/postgres.sh)"       start one (or find the one already running) and export its URL
#   bash Scripts/postgres.sh --port 55000    the same on another loopback port
#   bash Scripts/postgres.sh stop            stop it and delete its folder
#   bash Scripts/postgres.sh status          print its export line if it runs (exit status 3 if not)
#
# The cluster lives in a temporary folder (a new `mktemp -d` under /tmp, or $MISSIVE_PG_DIR): its data, its log
# and its unix socket. It listens on that socket, where every local connection is trusted, and on 127.0.0.1,
# where a role must give its password. It has one ordinary role, `missive` (password `missive`), which owns the
# database `missive_test` and may create databases, one per test. Durability is off (fsync, synchronous commit,
# full-page writes): a crash loses the cluster, which is thrown away anyway.
#
# The last line on stdout is `export MISSIVE_TEST_POSTGRES=postgres://missive:missive@127.0.0.1:PORT/missive_test`;
# everything else goes to stderr. Run again while the cluster runs, it prints the same line and exits 0.
# The folder and port are kept in $MISSIVE_PG_STATE (default /tmp/missive-postgres.env), which `stop` and later
# runs read. PostgreSQL refuses to run as root: run as root, the script runs the server as the `postgres` user.
set -euo pipefail

bin=/usr/lib/postgresql/15/bin
state=${MISSIVE_PG_STATE:-/tmp/missive-postgres.env}
default_port=54329
marker=.missive-postgres   # in the folders this script made, so that `stop` deletes only those

# The server outlives this script: it must not keep open any descriptor the caller gave the script beyond the
# standard three (a test harness waits for its pipes to close, and would wait for the server).
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
done

say() { echo "postgres.sh: $*" >&2; }
fail() { say "$*"; exit 1; }

usage() {
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
}

command=start
port=
while (($#)); do
    case $1 in
        start | stop | status) command=$1 ;;
        --port)
            (($# >= 2)) || fail "--port needs a number"
            port=$2
            shift
            ;;
        --port=*) port=${1#--port=} ;;
        -h | --help) usage; exit 0 ;;
        *) usage; fail "unknown argument: $1" ;;
    esac
    shift
done
if [[ -n $port ]]; then
    [[ $port =~ ^[1-9][0-9]{0,4}$ ]] && ((port <= 65535)) || fail "--port needs a port number (1-65535), not '$port'"
fi

# Runs a PostgreSQL program as the user that owns the cluster: `postgres` when this script runs as root,
# otherwise the current user. From /, which every user may enter.
as_owner() {
    if ((EUID == 0)); then
        (cd / && runuser -u postgres -- "$@")
    else
        (cd / && "$@")
    fi
}

url_for() { echo "postgres://missive:missive@127.0.0.1:$1/missive_test"; }

# Whether something accepts TCP connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The recorded folder and port, if a state file exists: sets `dir` and `recorded_port`.
dir=
recorded_port=
read_state() {
    [[ -f $state ]] || return 1
    dir=$(sed -n 's/^MISSIVE_PG_DIR=//p' "$state")
    recorded_port=$(sed -n 's/^MISSIVE_PG_PORT=//p' "$state")
    [[ -n $dir && -n $recorded_port ]] || fail "$state is not a state file of this script; delete it"
}

running() { [[ -f $dir/data/PG_VERSION ]] && as_owner "$bin/pg_ctl" status -D "$dir/data" >/dev/null 2>&1; }

stop_cluster() {
    if ! read_state; then
        say "no cluster recorded in $state: nothing to stop"
        return 0
    fi
    if running; then
        as_owner "$bin/pg_ctl" stop -D "$dir/data" -m fast -w >/dev/null
        say "stopped the cluster in $dir (port $recorded_port)"
    fi
    if [[ -e $dir/$marker ]]; then
        rm -rf -- "$dir"
    elif [[ -e $dir ]]; then
        say "left $dir in place: this script did not make it"
    fi
    rm -f -- "$state"
}

case $command in
    stop)
        stop_cluster
        exit 0
        ;;
    status)
        if read_state && running; then
            say "running in $dir"
            echo "export MISSIVE_TEST_POSTGRES=$(url_for "$recorded_port")"
            exit 0
        fi
        say "not running"
        exit 3
        ;;
esac

[[ -x $bin/postgres ]] || fail "no PostgreSQL 15 in $bin: apt-get install -y postgresql-15"
if ((EUID == 0)); then
    id postgres >/dev/null 2>&1 || fail "running as root, but there is no 'postgres' user to run the server as"
fi

# A cluster this state file knows about: the same URL if it runs, restarted if its folder is still there.
if read_state; then
    if [[ -n $port && $port != "$recorded_port" ]]; then
        fail "a cluster from $state is on port $recorded_port, not $port: run 'bash Scripts/postgres.sh stop' first"
    fi
    if [[ -n ${MISSIVE_PG_DIR:-} && $MISSIVE_PG_DIR != "$dir" ]]; then
        fail "a cluster from $state is in $dir, not $MISSIVE_PG_DIR: run 'bash Scripts/postgres.sh stop' first"
    fi
    if running; then
        say "already running in $dir"
        echo "export MISSIVE_TEST_POSTGRES=$(url_for "$recorded_port")"
        exit 0
    fi
    if [[ -f $dir/data/PG_VERSION && -e $dir/$marker ]]; then
        port_in_use "$recorded_port" && fail "port $recorded_port, recorded in $state, is taken by another program"
        say "restarting the stopped cluster in $dir"
        as_owner "$bin/pg_ctl" start -D "$dir/data" -l "$dir/postgres.log" -w -t 60 >/dev/null ||
            fail "the server did not start; its log is $dir/postgres.log"
        echo "export MISSIVE_TEST_POSTGRES=$(url_for "$recorded_port")"
        exit 0
    fi
    say "forgetting $state: no cluster in $dir"
    [[ -e $dir/$marker ]] && rm -rf -- "$dir"
    rm -f -- "$state"
fi

# The port: the one asked for, which must be free, or the first free one from 54329.
if [[ -n $port ]]; then
    port_in_use "$port" && fail "port $port on 127.0.0.1 is taken; choose another with --port"
else
    port=$default_port
    while port_in_use "$port"; do
        ((port < default_port + 50)) || fail "ports $default_port to $port on 127.0.0.1 are all taken; choose one with --port"
        port=$((port + 1))
    done
fi

# The folder.
if [[ -n ${MISSIVE_PG_DIR:-} ]]; then
    dir=$MISSIVE_PG_DIR
    if [[ -e $dir ]] && [[ -n $(ls -A -- "$dir") ]]; then
        fail "$dir (MISSIVE_PG_DIR) is not empty; give an empty or new folder"
    fi
    mkdir -p -- "$dir"
    dir=$(cd -- "$dir" && pwd -P)
else
    dir=$(mktemp -d /tmp/missive-postgres.XXXXXX)
fi
touch -- "$dir/$marker"
# A failure from here on leaves nothing behind: no server, no folder, no state.
created=false
cleanup() {
    [[ $created == true ]] && return
    if [[ -f $dir/data/PG_VERSION ]]; then as_owner "$bin/pg_ctl" stop -D "$dir/data" -m immediate >/dev/null 2>&1 || true; fi
    rm -rf -- "$dir"
    rm -f -- "$state"
}
trap cleanup EXIT
# A unix socket's path is limited to 107 bytes: the socket is $dir/.s.PGSQL.PORT.
socket="$dir/.s.PGSQL.$port"
((${#socket} <= 107)) || fail "the socket path $socket is longer than 107 bytes; give a shorter MISSIVE_PG_DIR"
chmod 700 -- "$dir"
((EUID == 0)) && chown -R postgres: -- "$dir"
{
    echo "MISSIVE_PG_DIR=$dir"
    echo "MISSIVE_PG_PORT=$port"
} >"$state"

say "creating a PostgreSQL 15 cluster in $dir"
# Local (socket) connections are trusted; TCP connections must give a password, checked with SCRAM.
if ! output=$(as_owner "$bin/initdb" -D "$dir/data" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 2>&1); then
    echo "$output" >&2
    fail "initdb failed"
fi
cat >>"$dir/data/postgresql.conf" <<EOF

# Scripts/postgres.sh: a throwaway cluster for the tests.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 500
fsync = off
synchronous_commit = off
full_page_writes = off
password_encryption = 'scram-sha-256'
EOF

as_owner "$bin/pg_ctl" start -D "$dir/data" -l "$dir/postgres.log" -w -t 60 >/dev/null || {
    cat "$dir/postgres.log" >&2 || true
    fail "the server did not start (its log is above)"
}

# The role and database the tests use, made through the socket as the superuser.
as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres <<'SQL' >/dev/null
CREATE ROLE missive LOGIN PASSWORD 'missive' NOSUPERUSER CREATEDB NOCREATEROLE;
CREATE DATABASE missive_test OWNER missive;
SQL

created=true
say "running on 127.0.0.1:$port and on the socket in $dir (stop: bash Scripts/postgres.sh stop)"
echo "export MISSIVE_TEST_POSTGRES=$(url_for "$port")"
