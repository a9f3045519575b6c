#!/usr/bin/env bash
# Re-import benchmark (issue 22): a 1M-row Goodreads export, then its "next month" version with 1 % of the
# rows changed (make_newer_export.py), into the same library. Target: the re-import takes at most 1.5x the
# first import's wall time. Prints per round: first import and re-import wall/CPU seconds, peak RSS MB, ratio.
#
#   benchmarks/import/run.sh once (it generates benchmarks/data/goodreads_1000000.csv), then
#   BOOKPIPE_BIN=.build/release/bookpipe ROUNDS=3 benchmarks/reimport/run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${BOOKPIPE_BIN:-$ROOT/.build/release/bookpipe}"
CSV="${CSV:-$ROOT/benchmarks/data/goodreads_1000000.csv}"
NEWER="${NEWER:-${CSV%.csv}_newer.csv}"
ROUNDS="${ROUNDS:-2}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
[[ -s "$CSV" ]] || { echo "run.sh: $CSV is missing: run benchmarks/import/run.sh once" >&2; exit 2; }
[[ -s "$NEWER" ]] || python3 "$ROOT/benchmarks/reimport/make_newer_export.py" "$CSV" "$NEWER"
for ((round = 1; round <= ROUNDS; round++)); do
    rm -f "$WORK"/lib.sqlite*
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/first.txt" "$BIN" import "$CSV" --no-enrich --library "$WORK/lib.sqlite" \
        --progress none >"$WORK/first.out" 2>&1
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/second.txt" "$BIN" import "$NEWER" --no-enrich --library "$WORK/lib.sqlite" \
        --progress none >"$WORK/second.out" 2>&1
    read -r fw fu fs fm <"$WORK/first.txt"
    read -r sw su ss sm <"$WORK/second.txt"
    echo "round $round: first $fw s (CPU $(awk "BEGIN{print $fu + $fs}") s, $((fm / 1024)) MB)," \
        "re-import $sw s (CPU $(awk "BEGIN{print $su + $ss}") s, $((sm / 1024)) MB), ratio $(awk "BEGIN{printf \"%.2f\", $sw / $fw}")"
done
grep -h "rows read" "$WORK/second.out" | head -1
