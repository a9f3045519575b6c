#!/usr/bin/env bash
# Local-catalogue enrichment on one PostgreSQL library (issue 28, "Speed"): ROWS records (100,000) of
# the synthetic export benchmarks/enrichment/run-catalog.sh uses, enriched with `bookpipe enrich
# --offline` by 1 worker, then (on a fresh copy of the same library) by 2 workers at once. No network:
# the CPU bounds the run. Prints, for each: wall time (from the workers' start to the last one's end),
# rows/s, the speed-up of 2 workers over 1, and CPU per row of the bookpipe processes and of the
# PostgreSQL server's backends (read from the postmaster's reaped-children time), with the load average.
# Usage: bash benchmarks/workers/run-catalog.sh   (ROWS=10000 for a shorter run; WORKER_COUNTS="1 2";
#        BIN_DIR=dir (default: a release build in SCRATCH, /work/.build-release-photos unless set);
#        SKIP_BUILD=1; ENRICH_ARGS="--pipeline FILE" to pass options to every worker; BOOKPIPE_TEST_POSTGRES=conninfo to use a running server, else a throwaway cluster)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/data/workers-catalog}
ROWS=${ROWS:-100000}
WORKER_COUNTS=${WORKER_COUNTS:-"1 2"}
SCRATCH=${SCRATCH:-$ROOT/.build-release}
mkdir -p "$OUT"
if [ -z "${BIN_DIR:-}" ]; then
    if [ "${SKIP_BUILD:-0}" != 1 ]; then
        swift build -c release --product bookpipe --scratch-path "$SCRATCH" >/dev/null
    fi
    BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
else
    BIN=$BIN_DIR
fi
source benchmarks/enrichment/catalog-data.sh

CLUSTER=""
if [ -z "${BOOKPIPE_TEST_POSTGRES:-}" ]; then
    bash scripts/postgres-test-cluster.sh start > "$OUT/pgenv.sh"
    # shellcheck disable=SC1091
    source "$OUT/pgenv.sh"
    CLUSTER=$BOOKPIPE_TEST_POSTGRES_DIR
fi
cleanup() {
    if [ -n "$CLUSTER" ]; then bash scripts/postgres-test-cluster.sh stop "$CLUSTER" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
HOST=$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<< "$BOOKPIPE_TEST_POSTGRES")
# The server's CPU: its backends' time, which the postmaster collects when each one exits.
POSTMASTER=$(psql "$BOOKPIPE_TEST_POSTGRES" -tAc "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'" \
    | xargs -I{} awk '{print $4}' /proc/{}/stat)
server_cpu() { awk '{print $16 + $17}' "/proc/$POSTMASTER/stat"; }
TICKS=$(getconf CLK_TCK)

# One library, imported once; each run enriches a fresh copy of it (CREATE DATABASE … TEMPLATE).
TEMPLATE=bench_catalog_template_$$
psql "$BOOKPIPE_TEST_POSTGRES" -q -c "CREATE DATABASE $TEMPLATE" >/dev/null
"$BIN/bookpipe" import "$OUT/export.csv" --no-enrich --library "postgresql:///$TEMPLATE?host=$HOST&user=bookpipe" \
    --progress none 2>&1 | tail -1

for WORKERS in $WORKER_COUNTS; do
    DATABASE=bench_catalog_${WORKERS}_$$
    psql "$BOOKPIPE_TEST_POSTGRES" -q -c "CREATE DATABASE $DATABASE TEMPLATE $TEMPLATE" >/dev/null
    LIBRARY="postgresql:///$DATABASE?host=$HOST&user=bookpipe"
    rm -f "$OUT"/worker-*.log "$OUT"/time-*.txt
    uptime > "$OUT/load-before.txt"
    SERVER_BEFORE=$(server_cpu)
    START=$(date +%s.%N)
    PIDS=()
    for n in $(seq "$WORKERS"); do
        /usr/bin/time -v -o "$OUT/time-$n.txt" "$BIN/bookpipe" enrich --offline --catalog "$OUT/catalog.sqlite" ${ENRICH_ARGS:-} \
            --library "$LIBRARY" --progress none > "$OUT/worker-$n.log" 2>&1 &
        PIDS+=($!)
    done
    for pid in "${PIDS[@]}"; do wait "$pid"; done
    END=$(date +%s.%N)
    SERVER_AFTER=$(server_cpu)
    uptime > "$OUT/load-after.txt"
    python3 - "$START" "$END" "$OUT" "$WORKERS" "$ROWS" "$SERVER_BEFORE" "$SERVER_AFTER" "$TICKS" <<'PY' | tee -a "$OUT/results.txt"
import re, sys
start, end, out, workers, rows = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
server = (int(sys.argv[7]) - int(sys.argv[6])) / int(sys.argv[8])
cpu, enriched = 0.0, []
for n in range(1, workers + 1):
    fields = dict(line.strip().split(": ", 1) for line in open(f"{out}/time-{n}.txt") if ": " in line)
    cpu += float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
    match = re.search(r"enriched in this run: (\d+) rows", open(f"{out}/worker-{n}.log").read())
    enriched.append(int(match.group(1)) if match else 0)
wall = end - start
load = open(f"{out}/load-before.txt").read().split("load average:")[1].strip()
after = open(f"{out}/load-after.txt").read().split("load average:")[1].strip()
print(f"{workers} worker(s): {rows} rows, wall {wall:.1f} s ({rows / wall:.0f} rows/s); rows by worker {enriched}; "
      f"CPU bookpipe {cpu:.1f} s ({cpu * 1000 / rows:.2f} ms a row), PostgreSQL backends {server:.1f} s "
      f"({server * 1000 / rows:.2f} ms a row); load before {load}, after {after}")
PY
    psql "$BOOKPIPE_TEST_POSTGRES" -q -c "DROP DATABASE $DATABASE" >/dev/null 2>&1 || true
done
psql "$BOOKPIPE_TEST_POSTGRES" -q -c "DROP DATABASE $TEMPLATE" >/dev/null 2>&1 || true
