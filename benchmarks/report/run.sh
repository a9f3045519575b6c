#!/usr/bin/env bash
# Report and search benchmark (figures in README.md beside this file):
#   1. a 100,000-row Goodreads export imported with --no-enrich (release build);
#   2. `bookpipe export --format jsonl` of it vs `bookpipe report --html --json --csv` (wall time, peak RSS, sizes);
#   3. a 1,000,000-row library: the first `bookpipe search` (builds the index), then repeated searches.
#
#   benchmarks/report/run.sh                  # both parts
#   ROWS=100000 SEARCH_ROWS=0 benchmarks/report/run.sh   # skip the 1M search part
#   BOOKPIPE_BIN=/path/to/bookpipe benchmarks/report/run.sh
#   LARGE_CSV=/path/to/goodreads_1000000.csv SEARCH_ROWS=0 benchmarks/report/run.sh   # also the report at 1M
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ROWS="${ROWS:-100000}"
SEARCH_ROWS="${SEARCH_ROWS:-1000000}"
DATA="${DATA:-/tmp/bookpipe-report-bench}"
mkdir -p "$DATA"
if [[ -z "${BOOKPIPE_BIN:-}" ]]; then
    (cd "$ROOT" && swift build -c release --product bookpipe >/dev/null)
    BOOKPIPE_BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/bookpipe"
fi
timed() {  # label, command...: prints wall seconds, CPU seconds (user + system) and peak RSS
    local label="$1"; shift
    /usr/bin/time -f "$label: %e s, CPU %U + %S s, peak RSS %M KB" "$@" 2>&1 >/dev/null | grep -F "$label:" || true
}

CSV="$DATA/goodreads-$ROWS.csv"
LIB="$DATA/library-$ROWS.sqlite"
[[ -f "$CSV" ]] || python3 "$ROOT/benchmarks/import/generate_goodreads.py" --rows "$ROWS" --output "$CSV" >/dev/null 2>&1
rm -f "$LIB"*
"$BOOKPIPE_BIN" import "$CSV" --no-enrich --progress none --library "$LIB" 2>/dev/null
echo "== $ROWS records"
for run in 1 2 3; do
    timed "export jsonl (run $run)" "$BOOKPIPE_BIN" export --format jsonl --output "$DATA/export.jsonl" --library "$LIB"
    timed "report html+json+csv (run $run)" "$BOOKPIPE_BIN" report --no-history --html "$DATA/report.html" --json "$DATA/report.json" \
        --csv "$DATA/report.csv" --library "$LIB"
done
ls -l "$DATA/report.html" "$DATA/report.json" "$DATA/report.csv" | awk '{print $9 ": " $5 " bytes"}'

# The report at 1,000,000 records (issue 27: HTML at most 5 MB, peak RSS at most 250 MB). LARGE_CSV names an
# existing 1M-row export (e.g. /work/main/benchmarks/data/goodreads_1000000.csv), read where it is.
if [[ -n "${LARGE_CSV:-}" ]]; then
    LIB="$DATA/library-large.sqlite"
    rm -f "$LIB"*
    "$BOOKPIPE_BIN" import "$LARGE_CSV" --no-enrich --progress none --library "$LIB" 2>/dev/null
    echo "== $(basename "$LARGE_CSV")"
    timed "report html+json+csv, large" "$BOOKPIPE_BIN" report --no-history --html "$DATA/large.html" --json "$DATA/large.json" \
        --csv "$DATA/large.csv" --library "$LIB"
    timed "export jsonl, large" "$BOOKPIPE_BIN" export --format jsonl --output "$DATA/large.jsonl" --library "$LIB"
    ls -l "$DATA/large.html" "$DATA/large.json" "$DATA/large.csv" | awk '{print $9 ": " $5 " bytes"}'
fi

if [[ "$SEARCH_ROWS" -gt 0 ]]; then
    CSV="$DATA/goodreads-$SEARCH_ROWS.csv"
    LIB="$DATA/library-$SEARCH_ROWS.sqlite"
    [[ -f "$CSV" ]] || python3 "$ROOT/benchmarks/import/generate_goodreads.py" --rows "$SEARCH_ROWS" --output "$CSV" >/dev/null 2>&1
    rm -f "$LIB"*
    "$BOOKPIPE_BIN" import "$CSV" --no-enrich --progress none --library "$LIB" 2>/dev/null
    echo "== search, $SEARCH_ROWS records"
    timed "first search (builds the index)" "$BOOKPIPE_BIN" search --library "$LIB" "lantern harbour"
    # "the" and "a" match most of the library: they are ranked over the first 2,000 matches only.
    for query in "lantern harbour" "le guin" "murakami" "silver crown" "pippi långstrump" "9780000000002" "the" "a"; do
        timed "search '$query'" "$BOOKPIPE_BIN" search --library "$LIB" "$query"
    done
    ls -l "$LIB" | awk '{print "library file with index: " $5 " bytes"}'
fi
