#!/usr/bin/env bash
# A/B of bookpipe builds (and the Python baseline) on the 1M-row file: the builds take turns round by
# round, each run on a fresh library, so a busy moment of the shared machine hits all of them alike.
#
#   benchmarks/import/ab.sh ROUNDS NAME=BIN [NAME=BIN ...] [python]
#   benchmarks/import/ab.sh 6 old=/tmp/e37dcc6/bookpipe new=.build/release/bookpipe python
#
# Prints one line per run (name, wall s, CPU s, peak RSS MB), then per name the sorted wall times and
# their median. Needs GNU time at /usr/bin/time; the file is made by run.sh (benchmarks/data).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CSV="${CSV:-$ROOT/benchmarks/data/goodreads_1000000.csv}"
WORK="${WORK:-$(mktemp -d)}"
ROUNDS="$1"; shift
[[ -s "$CSV" ]] || { echo "ab.sh: $CSV is missing: run benchmarks/import/run.sh once to generate it" >&2; exit 2; }
RESULTS="$WORK/results.txt"
: >"$RESULTS"
for ((round = 1; round <= ROUNDS; round++)); do
    for entry in "$@"; do
        rm -f "$WORK"/lib.sqlite* "$WORK"/py.sqlite*
        if [[ "$entry" == python ]]; then
            name=python
            command=(python3 "$ROOT/benchmarks/import/python_baseline.py" "$CSV" --db "$WORK/py.sqlite")
        else
            name="${entry%%=*}"
            command=("${entry#*=}" import "$CSV" --no-enrich --library "$WORK/lib.sqlite" --progress none)
        fi
        /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "${command[@]}" >"$WORK/out.txt" 2>&1 \
            || { echo "ab.sh: $name failed:" >&2; tail -n 20 "$WORK/out.txt" >&2; exit 1; }
        read -r wall user system rss <"$WORK/time.txt"
        line="$name $wall $(awk "BEGIN{print $user + $system}") $((rss / 1024))"
        echo "$line" | tee -a "$RESULTS"
    done
done
echo "== wall times by name (sorted) and median"
sort -k1,1 -k2,2n "$RESULTS" | awk '
    { times[$1] = times[$1] " " $2; n[$1]++; v[$1, n[$1]] = $2 }
    END { for (k in times) { m = n[k]; med = (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2;
          printf "%-8s%s   median %.2f\n", k, times[k], med } }'
rm -rf "$WORK"
