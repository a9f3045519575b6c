#!/usr/bin/env bash
# Scan speed (issue 15): 100 12-megapixel shelf photos (3-4 MB, every other one stored turned with
# EXIF orientation 6) through `bookpipe scan FOLDER --backend URL --no-enrich` against the fake
# vision backend taking 3 s per job and accepting 4 at a time.
# Targets: wall <= 1.1 x (100 x 3 s / 4) = 82.5 s; peak RSS <= 150 MB; preparation never the
# bottleneck (its share is measured two ways, see README.md).
#
# Usage: bash benchmarks/scan/run.sh
#   BOOKPIPE_BIN=path   the bookpipe binary to measure (default: this checkout's release build)
#   SKIP_BUILD=1        reuse the release build
#   PHOTOS=100 JOB_SECONDS=3 MAX_JOBS=4 CONCURRENCY=4   the scenario
#   OUT=dir             work folder (default benchmarks/data/scan; photos are kept there and reused)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/benchmarks/data/scan}
PHOTOS=${PHOTOS:-100}
JOB_SECONDS=${JOB_SECONDS:-3}
MAX_JOBS=${MAX_JOBS:-4}
CONCURRENCY=${CONCURRENCY:-$MAX_JOBS}
mkdir -p "$OUT"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    [ -n "${BOOKPIPE_BIN:-}" ] || swift build -c release --product bookpipe >/dev/null
    swift build -c release --product bookpipe-fake-services >/dev/null
fi
BIN=$(swift build -c release --show-bin-path)
BOOKPIPE_BIN=${BOOKPIPE_BIN:-$BIN/bookpipe}
FAKE_BIN=${FAKE_BIN:-$BIN/bookpipe-fake-services}

# The photos: made once, kept in $OUT/photos (never committed).
PHOTO_DIR="$OUT/photos"
if [ "$(find "$PHOTO_DIR" -maxdepth 1 -name '*.jpg' 2>/dev/null | wc -l)" != "$PHOTOS" ]; then
    echo "drawing $PHOTOS 12 MP shelf photos into $PHOTO_DIR (about 3 s each) ..." >&2
    rm -rf "$PHOTO_DIR" "$OUT/generated"
    python3 benchmarks/imaging/make_shelf_photos.py "$OUT/generated" --count "$PHOTOS" --seed 15 2>/dev/null
    mkdir -p "$PHOTO_DIR"
    mv "$OUT"/generated/*.jpg "$PHOTO_DIR"/
    rm -rf "$OUT/generated"
fi
PHOTO_MB=$(du -sm "$PHOTO_DIR" | cut -f1)

# The fake backend.
"$FAKE_BIN" scan-backend --job-seconds "$JOB_SECONDS" --max-jobs "$MAX_JOBS" --record "$OUT/backend.json" \
    > "$OUT/backend.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$OUT/backend.log" 2>/dev/null && break; sleep 0.1; done
URL=$(awk '/listening/{print $2}' "$OUT/backend.log")

if ! "$BOOKPIPE_BIN" scan --help 2>&1 | grep -q -- "--backend"; then
    # No scan command in this binary yet: check the fake side with curl and stop.
    echo "$BOOKPIPE_BIN has no 'scan' command (issue 15); checking the backend with curl instead" >&2
    for photo in $(find "$PHOTO_DIR" -name '*.jpg' | sort | head -3); do
        STREAM=$(curl -s -F "image=@$photo;type=image/jpeg" -H "X-AI-Provider: gemini" "$URL/v3/jobs/scans" |
                 python3 -c 'import json,sys; print(json.load(sys.stdin)["streamUrl"])')
        BOOKS=$(curl -s -N -H "Accept: text/event-stream" "$STREAM" | grep -c '^event: result' || true)
        echo "  $(basename "$photo"): $(du -k "$photo" | cut -f1) KB uploaded, $BOOKS results streamed" >&2
    done
    kill -TERM $SERVER; wait $SERVER 2>/dev/null || true
    trap - EXIT
    cat "$OUT/backend.log" >&2
    exit 2
fi

rm -rf "$OUT"/library.sqlite*   # the library and its photo folder
rm -rf "$OUT/prepared"
START=$(date +%s.%N)
STATUS=0
/usr/bin/time -v -o "$OUT/time.txt" "$BOOKPIPE_BIN" scan "$PHOTO_DIR" --backend "$URL" --no-enrich \
    --concurrency "$CONCURRENCY" --library "$OUT/library.sqlite" --progress json \
    > "$OUT/scan.out" 2> "$OUT/scan.log" || STATUS=$?
grep '^{' "$OUT/scan.log" > "$OUT/progress.jsonl" || true   # the JSON progress lines come on standard error
kill -TERM $SERVER; wait $SERVER 2>/dev/null || true
trap - EXIT

# Preparation alone (gemini preset, every core): how long the photos take without any backend.
/usr/bin/time -v -o "$OUT/prepare-time.txt" "$BOOKPIPE_BIN" image prepare "$PHOTO_DIR"/*.jpg --preset gemini \
    --output-dir "$OUT/prepared" > /dev/null 2>&1 || echo "bookpipe image prepare failed" >&2
rm -rf "$OUT/prepared"

grep -v '^{' "$OUT/scan.log" | tail -n 15
python3 benchmarks/scan/report.py --record "$OUT/backend.json" --time "$OUT/time.txt" \
    --prepare-time "$OUT/prepare-time.txt" --start "$START" --photos "$PHOTOS" --photo-mb "$PHOTO_MB" \
    --job-seconds "$JOB_SECONDS" --max-jobs "$MAX_JOBS" --exit-status "$STATUS"
