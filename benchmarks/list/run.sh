#!/usr/bin/env bash
# Listing benchmark (figures in README.md beside this file): a 1,000,000-row Goodreads export imported
# with --no-enrich (release build), then
#   1. the first `bookpipe list` with a field query (builds the listing and numbers every record),
#   2. the first `list` with words (builds the search index it shares with `bookpipe search`),
#   3. warm field queries, each run RUNS times, beside a scan of the records table by `sqlite3` for the same
#      ISBN (what a listing without its own index would cost at least).
#
#   benchmarks/list/run.sh
#   CSV=/path/to/goodreads_1000000.csv BOOKPIPE_BIN=/path/to/bookpipe RUNS=5 benchmarks/list/run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ROWS="${ROWS:-1000000}"
RUNS="${RUNS:-3}"
DATA="${DATA:-/tmp/bookpipe-list-bench}"
CSV="${CSV:-$ROOT/benchmarks/data/goodreads_$ROWS.csv}"
mkdir -p "$DATA"
if [[ -z "${BOOKPIPE_BIN:-}" ]]; then
    (cd "$ROOT" && swift build -c release --product bookpipe >/dev/null)
    BOOKPIPE_BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/bookpipe"
fi
if [[ ! -f "$CSV" ]]; then
    mkdir -p "$(dirname "$CSV")"
    python3 "$ROOT/benchmarks/import/generate_goodreads.py" --rows "$ROWS" --output "$CSV" >/dev/null 2>&1
fi
timed() {  # label, command...: prints wall seconds, CPU seconds (user + system) and peak RSS
    local label="$1"; shift
    /usr/bin/time -f "$label: %e s, CPU %U + %S s, peak RSS %M KB" "$@" 2>&1 >/dev/null | grep -F "$label:" || true
}

LIB="$DATA/library-$ROWS.sqlite"
rm -f "$LIB"*
echo "== $ROWS records ($(basename "$CSV")), load $(cut -d' ' -f1-3 /proc/loadavg)"
timed "import --no-enrich" "$BOOKPIPE_BIN" import "$CSV" --no-enrich --progress none --library "$LIB"
# Values that occur in the generated file: the ISBN-13 and the author of its first and of a late row.
ISBN="$(sed -n 2p "$CSV" | grep -o '=""97[89][0-9]*' | head -1 | tr -dc 0-9)"
LATE_ISBN="$(sed -n "$((ROWS - 10))p" "$CSV" | grep -o '=""97[89][0-9]*' | head -1 | tr -dc 0-9)"
AUTHOR="$(sed -n 2p "$CSV" | cut -d, -f3 | awk '{print $NF}')"
ls -l "$LIB" | awk '{print "library file before listing: " $5 " bytes"}'
timed "first list isbn:$ISBN (builds the listing)" "$BOOKPIPE_BIN" list --library "$LIB" "isbn:$ISBN"
timed "first list author:$AUTHOR year:1977 --limit 20 (builds the search index)" \
    "$BOOKPIPE_BIN" list --library "$LIB" "author:$AUTHOR" year:1977 --limit 20
ls -l "$LIB" | awk '{print "library file with listing and search index: " $5 " bytes"}'
for run in $(seq "$RUNS"); do
    timed "list isbn:$LATE_ISBN (run $run)" "$BOOKPIPE_BIN" list --library "$LIB" "isbn:$LATE_ISBN"
    timed "list year:1977 shelf:to-read (run $run)" "$BOOKPIPE_BIN" list --library "$LIB" year:1977 shelf:to-read
    timed "list rating:5 year:1977 (run $run)" "$BOOKPIPE_BIN" list --library "$LIB" rating:5 year:1977
    timed "list author:$AUTHOR title:letter (run $run)" "$BOOKPIPE_BIN" list --library "$LIB" "author:$AUTHOR" title:letter
    timed "list status:failed (none; run $run)" "$BOOKPIPE_BIN" list --library "$LIB" status:failed
    timed "remove 999999 --dry-run (a number resolved and listed; run $run)" "$BOOKPIPE_BIN" remove --library "$LIB" 999999 --dry-run
    timed "scan: sqlite3 records WHERE isbn13 = … (run $run)" sqlite3 "$LIB" "SELECT key FROM records WHERE isbn13 = '$LATE_ISBN'"
done
echo "matches: isbn:$LATE_ISBN $("$BOOKPIPE_BIN" list --library "$LIB" "isbn:$LATE_ISBN" | wc -l)," \
    "year:1977 shelf:to-read $("$BOOKPIPE_BIN" list --library "$LIB" year:1977 shelf:to-read | wc -l)," \
    "rating:5 year:1977 $("$BOOKPIPE_BIN" list --library "$LIB" rating:5 year:1977 | wc -l)," \
    "author:$AUTHOR title:letter $("$BOOKPIPE_BIN" list --library "$LIB" "author:$AUTHOR" title:letter | wc -l)"
