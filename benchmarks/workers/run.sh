#!/usr/bin/env bash
# Several workers, one rate budget (issue 28): WORKERS `bookpipe enrich` processes (8) work one
# PostgreSQL library against the fake Open Library on loopback, which allows 3 requests/s (50 ms
# latency) and counts every request that comes too early. Prints the requests, the wall time from
# the workers' start to the last one's end, the bound (requests ÷ 3), their ratio, the violations,
# and the rows each worker enriched.
# Usage: bash benchmarks/workers/run.sh   (ROWS=300 rows of the 1,500-row export; WORKERS=8;
#        BIN_DIR=dir (default: the debug build, `swift build` first; the run is bound by the rate);
#        BOOKPIPE_TEST_POSTGRES=conninfo to use a running server, else a throwaway cluster is started)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/data/workers}
ROWS=${ROWS:-300}
WORKERS=${WORKERS:-8}
BIN=${BIN_DIR:-$ROOT/.build/debug}
mkdir -p "$OUT"
rm -f "$OUT"/worker-*.log
python3 benchmarks/matching/generate_noisy_export.py --out "$OUT/gen" >/dev/null
python3 benchmarks/enrichment/make_export.py "$OUT/gen/catalog.txt" "$OUT/export-all.csv"
head -n $((ROWS + 1)) "$OUT/export-all.csv" > "$OUT/export.csv"

CLUSTER=""
if [ -z "${BOOKPIPE_TEST_POSTGRES:-}" ]; then
    bash scripts/postgres-test-cluster.sh start > "$OUT/pgenv.sh"
    # shellcheck disable=SC1091
    source "$OUT/pgenv.sh"
    CLUSTER=$BOOKPIPE_TEST_POSTGRES_DIR
fi
"$BIN/bookpipe-fake-services" --dump "$OUT/gen/catalog.txt" --latency-ms 50 --rate 3 --openlibrary-coverage 1 \
    > "$OUT/server.log" &
SERVER=$!
cleanup() {
    kill "$SERVER" 2>/dev/null || true
    if [ -n "$CLUSTER" ]; then bash scripts/postgres-test-cluster.sh stop "$CLUSTER" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
for _ in $(seq 100); do grep -q listening "$OUT/server.log" 2>/dev/null && break; sleep 0.1; done
URL=$(awk '/listening/{print $2}' "$OUT/server.log")

DATABASE=bench_workers_$$
psql "$BOOKPIPE_TEST_POSTGRES" -q -c "CREATE DATABASE $DATABASE" >/dev/null
HOST=$(sed -n 's/.*host=\([^ ]*\).*/\1/p' <<< "$BOOKPIPE_TEST_POSTGRES")
LIBRARY="postgresql:///$DATABASE?host=$HOST&user=bookpipe"
"$BIN/bookpipe" import "$OUT/export.csv" --no-enrich --library "$LIBRARY" --progress none 2>&1 | tail -1

START=$(date +%s.%N)
PIDS=()
for n in $(seq "$WORKERS"); do
    "$BIN/bookpipe" enrich --pipeline benchmarks/workers/enrich-workers.yaml --openlibrary-url "$URL" \
        --library "$LIBRARY" --contact "mailto:worker$n@example.org" --progress none > "$OUT/worker-$n.log" 2>&1 &
    PIDS+=($!)
done
for pid in "${PIDS[@]}"; do wait "$pid"; done
END=$(date +%s.%N)
kill -TERM "$SERVER"; wait "$SERVER" 2>/dev/null || true
SERVED=$(grep -E "^requests" "$OUT/server.log")
python3 - "$START" "$END" "$SERVED" "$OUT" "$WORKERS" <<'PY'
import re, sys, glob
start, end, served, out, workers = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
requests = int(re.search(r"requests (\d+)", served).group(1))
violations = int(re.search(r"rate-limit-violations (\d+)", served).group(1))
rows = []
for n in range(1, workers + 1):
    text = open(f"{out}/worker-{n}.log").read()
    match = re.search(r"enriched in this run: (\d+) rows", text)
    rows.append(int(match.group(1)) if match else 0)
wall, bound = end - start, requests / 3
print(f"{workers} workers: {requests} requests, wall {wall:.1f} s, bound {bound:.1f} s (requests / 3), "
      f"ratio {wall / bound:.3f}, violations {violations}; rows by worker {rows} (sum {sum(rows)})")
PY
psql "$BOOKPIPE_TEST_POSTGRES" -q -c "DROP DATABASE $DATABASE" >/dev/null 2>&1 || true
