#!/usr/bin/env bash
# Matching on a HELD-OUT set, through the network path (issue 23): a noisy export drawn with a seed the matcher
# was never tuned on (default 4242; the tuned one is 20240611), enriched from the fake Open Library and Google
# Books on loopback (Open Library knows 92 % of the editions, so Google Books answers the rest), then scored
# against the ground truth. Rates are raised (quality does not depend on them) so a run takes about a minute.
# Usage: bash benchmarks/matching/run-held-out.sh            (BIN_DIR=dir: binaries built elsewhere;
#        SEED=N ROWS=N COVERAGE=S OUT=dir to change the set; CATALOG=1: a local catalogue of the same dump is
#        configured, outside the chain, so Google Books volumes are tied to their works through it)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SEED=${SEED:-4242}
ROWS=${ROWS:-1500}
COVERAGE=${COVERAGE:-0.92}
OUT=${OUT:-$ROOT/benchmarks/data/held-out-$SEED}
BIN=${BIN_DIR:-$(swift build --show-bin-path)}
mkdir -p "$OUT"
python3 benchmarks/matching/generate_noisy_export.py --seed "$SEED" --rows "$ROWS" --out "$OUT/gen" >/dev/null

"$BIN/bookpipe-fake-services" --dump "$OUT/gen/catalog.txt" --rate 60 --google-rate 60 \
    --openlibrary-coverage "$COVERAGE" > "$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/server.log" 2>/dev/null && break; sleep 0.1; done
URL=$(awk '/listening/{print $2}' "$OUT/server.log")

rm -f "$OUT"/library.sqlite*
CATALOG_ARGS=()
if [ "${CATALOG:-0}" = 1 ]; then
    rm -f "$OUT"/catalog.sqlite*
    "$BIN/bookpipe" catalog import "$OUT/gen/catalog.txt" --catalog "$OUT/catalog.sqlite" --progress none >/dev/null 2>&1
    CATALOG_ARGS=(--catalog "$OUT/catalog.sqlite")
fi
cat > "$OUT/held-out.yaml" <<'YAML'
name: held-out-import
source:
  stage: read-csv
  with:
    files: $inputs
    batchSize: 50
steps:
  - stage: normalize-records
  - stage: store-records
    on-failure: stop
  - stage: enrich-records
    concurrency: 8
    with:
      sources: [openlibrary, googlebooks]
      openlibraryRate: 50
      googlebooksRate: 50
  - stage: save-enrichment
    on-failure: stop
YAML
"$BIN/bookpipe" run "$OUT/held-out.yaml" "$OUT/gen/noisy_export.csv" --openlibrary-url "$URL" --googlebooks-url "$URL" \
    --contact mailto:bench@example.org --library "$OUT/library.sqlite" --progress none "${CATALOG_ARGS[@]}" \
    2> "$OUT/bookpipe.log" || true
kill -TERM $SERVER; wait $SERVER 2>/dev/null || true
trap - EXIT
"$BIN/bookpipe" export --format json --output "$OUT/export.json" --library "$OUT/library.sqlite"
grep -E "enriched in this run|openlibrary: [0-9]+ requests,|googlebooks: [0-9]+ requests," "$OUT/bookpipe.log" || true
python3 benchmarks/matching/score_matches.py "$OUT/export.json" --truth "$OUT/gen/ground_truth.csv" || true
python3 - "$OUT/export.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
enriched = [r for r in rows if r["status"] == "enriched"]
empty = sum(1 for r in rows for c in ([r["match"]] if r.get("match") else []) + (r.get("candidates") or []) if c.get("workKey") == "")
workless = sum(1 for r in enriched if not r["match"].get("workKey"))
print(f"enriched rows without a work: {workless} of {len(enriched)}; workKey \"\" anywhere: {empty}")
PY
