# The local-catalogue benchmarks' data, sourced by benchmarks/enrichment/run-catalog.sh and
# benchmarks/workers/run-catalog.sh: a synthetic Open Library dump of 320,000 lines, a 100,000-row
# Goodreads export drawn from it (1,000 books it does not hold), the catalogue built from the dump,
# and the first ROWS rows of the export as "$OUT/export.csv". Each file is made only when missing.
# Needs OUT, ROWS and BIN (the folder of the bookpipe binary); run from the repository's root.
[ -f "$OUT/ol-320k.txt" ] || python3 benchmarks/catalog/make_dump.py 320000 "$OUT/ol-320k.txt"
[ -f "$OUT/export-100k.csv" ] || python3 benchmarks/enrichment/make_export.py "$OUT/ol-320k.txt" "$OUT/export-100k.csv" \
    --rows 100000 --absent 1000
if [ ! -f "$OUT/catalog.sqlite" ]; then
    "$BIN/bookpipe" catalog import "$OUT/ol-320k.txt" --catalog "$OUT/catalog.sqlite" --progress none >/dev/null
fi
head -n $((ROWS + 1)) "$OUT/export-100k.csv" > "$OUT/export.csv"
