#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (issue 28; /work notes: 0.7 s to start).
#   eval "$(bash scripts/postgres-test-cluster.sh start)"   # exports BOOKPIPE_TEST_POSTGRES and BOOKPIPE_TEST_POSTGRES_DIR
#   bash scripts/postgres-test-cluster.sh stop "$BOOKPIPE_TEST_POSTGRES_DIR"
# The cluster lives in a new temporary folder, listens on a unix socket in that folder only (no TCP
# port, so parallel runs never clash), and runs with fsync and synchronous commits off: for tests
# only, never for a library. initdb refuses to run as root: as root the cluster is the `postgres`
# user's (the Debian package creates it), otherwise the current user's.
set -euo pipefail
command=${1:-}
bindir=$(pg_config --bindir 2>/dev/null || true)
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
fi
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
    echo "postgres-test-cluster.sh: no initdb found; run: bash scripts/install-system-packages.sh --tests" >&2
    exit 1
fi
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$command" in
    start)
        dir=$(mktemp -d -t bookpipe-pg.XXXXXX)
        [[ $(id -u) -eq 0 ]] && chown postgres "$dir"
        as_owner "$bindir/initdb" -D "$dir/data" -U bookpipe --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
            --no-instructions >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
        # One role must give a password (the tests of a refused password); every other connects on trust.
        hba="$dir/data/pg_hba.conf"
        { echo "local all bookpipe_password scram-sha-256"; cat "$hba"; } >"$hba.new" && mv "$hba.new" "$hba"
        [[ $(id -u) -eq 0 ]] && chown postgres "$hba"
        as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
            "-c listen_addresses='' -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
            start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
        "$bindir/psql" -q -h "$dir" -U bookpipe -d postgres \
            -c "CREATE ROLE bookpipe_password LOGIN PASSWORD 'right'" >/dev/null
        echo "export BOOKPIPE_TEST_POSTGRES='host=$dir user=bookpipe dbname=postgres'"
        echo "export BOOKPIPE_TEST_POSTGRES_DIR='$dir'"
        ;;
    stop)
        dir=${2:-${BOOKPIPE_TEST_POSTGRES_DIR:-}}
        [[ -n "$dir" && -d "$dir/data" ]] || { echo "postgres-test-cluster.sh stop: no cluster folder given" >&2; exit 1; }
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
        rm -rf "$dir"
        ;;
    *)
        echo "usage: postgres-test-cluster.sh start | stop [FOLDER]" >&2
        exit 2
        ;;
esac
