#!/usr/bin/env bash
# Instructions (valgrind's Ir, every thread) of one `bookpipe import --no-enrich`: a measure of
# the import's CPU work that does not move with the machine's load, for comparing two builds on a
# busy machine. See benchmarks/import/README.md ("Counting instructions").
#
#   benchmarks/import/instructions.sh BINARY [CSV] [OUT]
#       BINARY  a release build of bookpipe
#       CSV     the input (default benchmarks/data/goodreads_200000.csv, generated when missing)
#       OUT     prefix of the files written (default benchmarks/data/instructions): OUT.callgrind,
#               OUT.functions.txt (self cost per function), OUT.sqlite (the library)
#
# Needs valgrind (Debian package `valgrind`) and a C compiler. Takes about a minute for 200k rows.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${1:?usage: instructions.sh BINARY [CSV] [OUT]}"
CSV="${2:-$ROOT/benchmarks/data/goodreads_200000.csv}"
OUT="${3:-$ROOT/benchmarks/data/instructions}"
mkdir -p "$(dirname "$OUT")"
if [[ ! -s "$CSV" ]]; then
    python3 "$ROOT/benchmarks/import/generate_goodreads.py" --rows 200000 --output "$CSV"
fi
SHIM="$OUT.dispatch_main_shim.so"
cc -O2 -shared -fPIC "$ROOT/benchmarks/import/dispatch_main_shim.c" -o "$SHIM"
# valgrind 3.19 cannot read the DWARF Swift writes; the symbol table is enough for function names.
objcopy --strip-debug "$BIN" "$OUT.bin"
rm -f "$OUT.sqlite" "$OUT.sqlite-wal" "$OUT.sqlite-shm"
LD_PRELOAD="$SHIM" valgrind --tool=callgrind --callgrind-out-file="$OUT.callgrind" \
    "$OUT.bin" import "$CSV" --no-enrich --library "$OUT.sqlite" --progress none > "$OUT.log" 2>&1 \
    || { cat "$OUT.log"; exit 1; }
callgrind_annotate --threshold=100 "$OUT.callgrind" 2>/dev/null | swift demangle --simplified > "$OUT.functions.txt"
grep -v '^==' "$OUT.log" | tail -1
grep -o 'refs: .*' "$OUT.log" | sed 's/refs:/instructions (Ir, all threads):/'
