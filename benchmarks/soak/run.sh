#!/usr/bin/env bash
# The soak (issue 24): `bookpipe scan` against the fake vision backend with every fault on for
# SCAN_MINUTES, then `bookpipe import` of random mutations of the real exports for IMPORT_MINUTES,
# checking that memory stays flat, no descriptor leaks, and every photo and row is accounted for
# (benchmarks/soak/soak.py says how). Not a timed test: it prints figures; exit 1 when a check fails.
#
#   bash benchmarks/soak/run.sh                        # 10 + 10 minutes, debug build
#   SCAN_MINUTES=3 IMPORT_MINUTES=3 bash benchmarks/soak/run.sh
#   CONFIGURATION=release bash benchmarks/soak/run.sh
#   SKIP_BUILD=1 ...                                   # reuse the build
# Fixtures: the real exports in ../shared/fixtures/real (FIXTURES=dir to point elsewhere).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
CONFIGURATION=${CONFIGURATION:-debug}
WORK=${WORK:-$ROOT/benchmarks/data/soak}
FIXTURES=${FIXTURES:-$ROOT/../shared/fixtures/real}
[ -d "$FIXTURES" ] || FIXTURES=/work/shared/fixtures/real
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    swift build -c "$CONFIGURATION" --product bookpipe >/dev/null
    swift build -c "$CONFIGURATION" --product bookpipe-fake-services >/dev/null
fi
BIN=$(swift build -c "$CONFIGURATION" --show-bin-path)
mkdir -p "$WORK"

# The photos: 240-pixel crops of a sample shelf photo (each copy gets its own comment segment).
PHOTO="$WORK/base/spine_01.jpg"
if [ ! -f "$PHOTO" ]; then
    echo '[{"x": 0, "y": 0, "width": 1, "height": 1}]' > "$WORK/box.json"
    "$BIN/bookpipe" image crops samples/scan-photos/shelf1.jpg --boxes "$WORK/box.json" --output-dir "$WORK/base" \
        --max-edge 240 --quality 80 >/dev/null
fi

exec python3 benchmarks/soak/soak.py --bookpipe "$BIN/bookpipe" --fake "$BIN/bookpipe-fake-services" --photo "$PHOTO" \
    --exports "$FIXTURES"/*.csv "$FIXTURES"/*.tsv --work "$WORK" \
    --scan-minutes "${SCAN_MINUTES:-10}" --import-minutes "${IMPORT_MINUTES:-10}" \
    --round-photos "${ROUND_PHOTOS:-120}" --round-files "${ROUND_FILES:-200}"
