#!/usr/bin/env bash
# Enrichment against the local catalogue only (no network): a 100,000-row Goodreads export drawn from a
# synthetic Open Library dump of 320,000 lines (112,000 works, 175,960 editions), enriched with
# `bookpipe enrich --offline`. Prints rows/s, CPU time and peak RSS; the import (--no-enrich) is timed apart.
# Usage: bash benchmarks/enrichment/run-catalog.sh   (SKIP_BUILD=1 to reuse the release build; BIN_DIR=dir;
#        ROWS=10000 for a shorter run; PERF=1 to record a profile of the enrichment with perf)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$(pwd)/benchmarks/data/enrichment-catalog}
ROWS=${ROWS:-100000}
mkdir -p "$OUT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then swift build -c release --product bookpipe >/dev/null; fi
BIN=${BIN_DIR:-$(swift build -c release --show-bin-path)}
source benchmarks/enrichment/catalog-data.sh
rm -f "$OUT"/library.sqlite*
"$BIN/bookpipe" import "$OUT/export.csv" --no-enrich --library "$OUT/library.sqlite" --progress none 2>&1 | tail -1
uptime
RUN=("$BIN/bookpipe" enrich --offline --catalog "$OUT/catalog.sqlite" --library "$OUT/library.sqlite" --progress none)
if [ "${PERF:-0}" = 1 ]; then
    perf record -F 300 --call-graph dwarf,16384 -o "$OUT/perf.data" -- "${RUN[@]}" 2> "$OUT/enrich.log"
    echo "profile: perf report -i $OUT/perf.data --children --sort symbol -g none"
else
    /usr/bin/time -v -o "$OUT/time.txt" "${RUN[@]}" 2> "$OUT/enrich.log"
    grep -E "enriched in this run|catalog:" "$OUT/enrich.log" || true
    python3 - "$ROWS" "$OUT/time.txt" <<'PY'
import sys
rows, path = int(sys.argv[1]), sys.argv[2]
fields = dict(line.strip().split(": ", 1) for line in open(path) if ": " in line)
parts = [float(p) for p in fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")]
wall = parts[-1] + (parts[-2] * 60 if len(parts) > 1 else 0) + (parts[-3] * 3600 if len(parts) > 2 else 0)
cpu = float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
print(f"{rows} rows: wall {wall:.1f} s ({rows / wall:.0f} rows/s), CPU {cpu:.1f} s ({cpu * 1000 / rows:.2f} ms a row, "
      f"{cpu / wall * 100:.0f} % of one core), peak RSS {int(fields['Maximum resident set size (kbytes)']) / 1024:.0f} MB")
PY
fi
uptime
