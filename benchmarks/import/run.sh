#!/usr/bin/env bash
# The 1M-row import benchmark: bookpipe `import --no-enrich` vs the plain Python csv + sqlite3
# baseline, same file, same machine, same sitting. See benchmarks/import/README.md.
#
#   benchmarks/import/run.sh                # 1,000,000 rows, 2 runs each, alternating
#   ROWS=100000 RUNS=3 benchmarks/import/run.sh
#   SKIP_BUILD=1 benchmarks/import/run.sh   # reuse the existing release build
#   BOOKPIPE_BIN=/path/to/bookpipe GENERATOR=/path/to/gen.py benchmarks/import/run.sh   # overrides
#
# Needs: swift, python3, GNU time at /usr/bin/time (Debian package `time`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROWS="${ROWS:-1000000}"
RUNS="${RUNS:-2}"
DATA="$ROOT/benchmarks/data"            # gitignored
CSV="$DATA/goodreads_${ROWS}.csv"
GENERATOR="${GENERATOR:-$ROOT/benchmarks/import/generate_goodreads.py}"
BASELINE="$ROOT/benchmarks/import/python_baseline.py"
TIME=/usr/bin/time

if [[ ! -x "$TIME" ]] || ! "$TIME" -v true 2>/dev/null; then
    echo "run.sh: GNU time is needed at $TIME for wall time and peak RSS; install it with: sudo apt-get install -y time" >&2
    exit 2
fi
mkdir -p "$DATA"

if [[ -n "${BOOKPIPE_BIN:-}" ]]; then
    BIN="$BOOKPIPE_BIN"
else
    if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
        echo "== swift build -c release"
        (cd "$ROOT" && swift build -c release)
    fi
    BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)/bookpipe"
fi
if [[ ! -x "$BIN" ]]; then
    echo "run.sh: no release binary at $BIN; run without SKIP_BUILD=1" >&2
    exit 2
fi

if [[ ! -s "$CSV" ]]; then
    if [[ ! -f "$GENERATOR" ]]; then
        echo "run.sh: $CSV is missing and the generator $GENERATOR does not exist yet" >&2
        exit 2
    fi
    echo "== generating $CSV ($ROWS rows)"
    python3 "$GENERATOR" --rows "$ROWS" --output "$CSV"
fi
echo "== input: $CSV ($(du -h "$CSV" | cut -f1), $(($(wc -l < "$CSV") - 1)) physical lines after the header)"

# field FILE NAME -> value of a /usr/bin/time -v line
field() { sed -n "s/^[[:space:]]*$2: //p" "$1" | head -n1; }
# seconds from "h:mm:ss" or "m:ss.ss"
to_seconds() { awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }' <<<"$1"; }

declare -a BP_T PY_T BP_RSS PY_RSS BP_CPU PY_CPU
for ((i = 1; i <= RUNS; i++)); do
    rm -f "$DATA"/bench-bookpipe.sqlite*
    echo "== run $i/$RUNS: bookpipe"
    if ! "$TIME" -v -o "$DATA/time-bookpipe-$i.txt" \
        "$BIN" import "$CSV" --no-enrich --library "$DATA/bench-bookpipe.sqlite" --progress none \
        >"$DATA/out-bookpipe-$i.txt" 2>&1; then
        echo "run.sh: bookpipe failed (exit $(field "$DATA/time-bookpipe-$i.txt" 'Exit status')); output:" >&2
        tail -n 20 "$DATA/out-bookpipe-$i.txt" >&2
        exit 1
    fi
    BP_T[i]=$(to_seconds "$(field "$DATA/time-bookpipe-$i.txt" 'Elapsed (wall clock) time (h:mm:ss or m:ss)')")
    BP_RSS[i]=$(field "$DATA/time-bookpipe-$i.txt" 'Maximum resident set size (kbytes)')
    BP_CPU[i]=$(awk "BEGIN{print $(field "$DATA/time-bookpipe-$i.txt" 'User time (seconds)') + $(field "$DATA/time-bookpipe-$i.txt" 'System time (seconds)')}")

    echo "== run $i/$RUNS: python baseline"
    "$TIME" -v -o "$DATA/time-python-$i.txt" \
        python3 "$BASELINE" "$CSV" --db "$DATA/bench-python.sqlite" >"$DATA/out-python-$i.txt" 2>&1
    cat "$DATA/out-python-$i.txt"
    PY_T[i]=$(to_seconds "$(field "$DATA/time-python-$i.txt" 'Elapsed (wall clock) time (h:mm:ss or m:ss)')")
    PY_RSS[i]=$(field "$DATA/time-python-$i.txt" 'Maximum resident set size (kbytes)')
    PY_CPU[i]=$(awk "BEGIN{print $(field "$DATA/time-python-$i.txt" 'User time (seconds)') + $(field "$DATA/time-python-$i.txt" 'System time (seconds)')}")
done

echo
echo "rows: $ROWS   machine: $(nproc) cores, $(uname -sr), load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %11s %13s %16s %11s %13s %16s %8s\n' run "bookpipe s" "bookpipe CPU s" "bookpipe RSS MB" \
    "python s" "python CPU s" "python RSS MB" "ratio"
for ((i = 1; i <= RUNS; i++)); do
    printf '%-6s %11.2f %13.2f %16.1f %11.2f %13.2f %16.1f %7.2fx\n' "$i" "${BP_T[i]}" "${BP_CPU[i]}" \
        "$(awk "BEGIN{print ${BP_RSS[i]}/1024}")" "${PY_T[i]}" "${PY_CPU[i]}" "$(awk "BEGIN{print ${PY_RSS[i]}/1024}")" \
        "$(awk "BEGIN{print ${PY_T[i]} / ${BP_T[i]}}")"
done
echo "(CPU s = user + system time; a ratio far from its neighbours means the machine was busy during that round)"
BP_BEST=$(printf '%s\n' "${BP_T[@]}" | sort -g | head -n1)
PY_BEST=$(printf '%s\n' "${PY_T[@]}" | sort -g | head -n1)
BP_PEAK=$(printf '%s\n' "${BP_RSS[@]}" | sort -g | tail -n1)
RATIO=$(awk "BEGIN{printf \"%.2f\", $PY_BEST / $BP_BEST}")
PEAK_MB=$(awk "BEGIN{printf \"%.1f\", $BP_PEAK / 1024}")
echo
echo "best wall time: bookpipe ${BP_BEST}s, python ${PY_BEST}s"
echo "ratio (python / bookpipe): ${RATIO}x   (target >= 2.0)"
ROUND_RATIOS=$(for ((i = 1; i <= RUNS; i++)); do awk "BEGIN{print ${PY_T[i]} / ${BP_T[i]}}"; done | sort -g)
echo "per-round ratios, sorted: $(printf '%.2f ' $ROUND_RATIOS)  median: $(printf '%s\n' $ROUND_RATIOS \
    | awk '{v[NR] = $1} END {printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')x"
echo "bookpipe peak RSS: ${PEAK_MB} MB   (target <= 150)"
echo "raw /usr/bin/time -v reports: $DATA/time-*.txt"
