#!/usr/bin/env bash
# Enrichment speed: a 1,500-row export against fake Open Library on loopback with 50 ms latency and
# a 5 requests/s limit. Prints requests, wall time, the rate bound (requests ÷ 5/s), the ratio and
# peak RSS. Usage: bash benchmarks/enrichment/run.sh   (SKIP_BUILD=1 to reuse the release build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/data/enrichment}
RATE=5
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    swift build -c release --product bookpipe >/dev/null
    swift build -c release --product bookpipe-fake-services >/dev/null
fi
BIN=$(swift build -c release --show-bin-path)
python3 benchmarks/matching/generate_noisy_export.py --out "$OUT/gen" >/dev/null
python3 benchmarks/enrichment/make_export.py "$OUT/gen/catalog.txt" "$OUT/export.csv"

"$BIN/bookpipe-fake-services" --dump "$OUT/gen/catalog.txt" --latency-ms 50 --rate $RATE > "$OUT/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/server.log" 2>/dev/null && break; sleep 0.1; done
URL=$(awk '/listening/{print $2}' "$OUT/server.log")

rm -f "$OUT"/library.sqlite*
/usr/bin/time -v -o "$OUT/time.txt" "$BIN/bookpipe" run benchmarks/enrichment/bench-import.yaml "$OUT/export.csv" \
    --openlibrary-url "$URL" --library "$OUT/library.sqlite" --progress none 2> "$OUT/bookpipe.log"
kill -TERM $SERVER; wait $SERVER 2>/dev/null || true
trap - EXIT

cat "$OUT/bookpipe.log" | grep -E "enriched in this run|openlibrary:" || true
REQUESTS=$(grep -oE "openlibrary: [0-9]+ requests" "$OUT/bookpipe.log" | grep -oE "[0-9]+")
WALL=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$OUT/time.txt")
RSS=$(awk -F': ' '/Maximum resident set size/{print $2}' "$OUT/time.txt")
python3 - "$REQUESTS" "$WALL" "$RSS" "$RATE" "$(grep rate-limit-violations "$OUT/server.log")" <<'PY'
import sys
requests, wall, rss, rate, server = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
parts = [float(p) for p in wall.split(":")]
seconds = parts[-1] + (parts[-2] * 60 if len(parts) > 1 else 0) + (parts[-3] * 3600 if len(parts) > 2 else 0)
bound = requests / rate
print(f"requests {requests}, wall {seconds:.1f} s, bound {bound:.1f} s (requests / {rate:g}/s), "
      f"ratio {seconds / bound:.3f}, peak RSS {rss / 1024:.1f} MB; server: {server}")
PY
