#!/usr/bin/env bash
# Enrichment speed: a 1,500-row export against fake Open Library (3 requests/s) and Google Books
# (1 request/s) on loopback with 50 ms latency; Open Library knows 92 % of the books, so Google Books
# answers the rest. Prints each host's requests, the wall time, the bound (the busiest host's
# requests ÷ its rate: the hosts work at the same time), the ratio and peak RSS.
# Usage: bash benchmarks/enrichment/run.sh   (SKIP_BUILD=1 to reuse the release build; BIN_DIR=dir to run
# binaries copied elsewhere, e.g. while the checkout is being edited)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/data/enrichment}
OL_RATE=${OL_RATE:-3}
GOOGLE_RATE=${GOOGLE_RATE:-1}
COVERAGE=${COVERAGE:-0.92}
PIPELINE=${PIPELINE:-benchmarks/enrichment/bench-import.yaml}
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release --product bookpipe >/dev/null
    swift build -c release --product bookpipe-fake-services >/dev/null
fi
BIN=${BIN_DIR:-$(swift build -c release --show-bin-path)}
python3 benchmarks/matching/generate_noisy_export.py --out "$OUT/gen" >/dev/null
python3 benchmarks/enrichment/make_export.py "$OUT/gen/catalog.txt" "$OUT/export.csv"

"$BIN/bookpipe-fake-services" --dump "$OUT/gen/catalog.txt" --latency-ms 50 --rate "$OL_RATE" \
    --google-rate "$GOOGLE_RATE" --openlibrary-coverage "$COVERAGE" > "$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/server.log" 2>/dev/null && break; sleep 0.1; done
URL=$(awk '/listening/{print $2}' "$OUT/server.log")

rm -f "$OUT"/library.sqlite*
/usr/bin/time -v -o "$OUT/time.txt" "$BIN/bookpipe" run "$PIPELINE" "$OUT/export.csv" \
    --openlibrary-url "$URL" --googlebooks-url "$URL" --contact mailto:bench@example.org \
    --library "$OUT/library.sqlite" --progress none 2> "$OUT/bookpipe.log"
kill -TERM $SERVER; wait $SERVER 2>/dev/null || true
trap - EXIT

# The summary's lines ("openlibrary: 601 requests, 0 cache hits, …"), not the plan's ("… requests at 3/s").
grep -E "enriched in this run|openlibrary: [0-9]+ requests,|googlebooks: [0-9]+ requests," "$OUT/bookpipe.log" || true
OL=$(grep -oE "openlibrary: [0-9]+ requests," "$OUT/bookpipe.log" | tail -1 | grep -oE "[0-9]+" || echo 0)
GB=$(grep -oE "googlebooks: [0-9]+ requests," "$OUT/bookpipe.log" | tail -1 | grep -oE "[0-9]+" || echo 0)
WALL=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$OUT/time.txt")
RSS=$(awk -F': ' '/Maximum resident set size/{print $2}' "$OUT/time.txt")
python3 - "$OL" "$GB" "$WALL" "$RSS" "$OL_RATE" "$GOOGLE_RATE" "$(grep rate-limit-violations "$OUT/server.log")" <<'PY'
import sys
ol, gb, wall, rss, olr, gbr, server = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
parts = [float(p) for p in wall.split(":")]
seconds = parts[-1] + (parts[-2] * 60 if len(parts) > 1 else 0) + (parts[-3] * 3600 if len(parts) > 2 else 0)
bound = max(ol / olr, gb / gbr)
print(f"openlibrary {ol} requests ({ol / olr:.1f} s at {olr:g}/s), googlebooks {gb} ({gb / gbr:.1f} s at {gbr:g}/s); "
      f"wall {seconds:.1f} s, bound {bound:.1f} s (busiest host), ratio {seconds / bound:.3f}, "
      f"sum of hosts {ol / olr + gb / gbr:.1f} s, peak RSS {rss / 1024:.1f} MB; server: {server}")
PY
