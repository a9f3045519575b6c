#!/usr/bin/env bash
# Builds every fuzz target with libFuzzer + AddressSanitizer, replays every committed crash case
# in FailCases/<target>/, then fuzzes each target for a time budget from its seed corpus.
# Fails on any crash, leak, timeout or out-of-memory, on a target built without coverage or
# without the address sanitizer, and on libFuzzer's "Is the code instrumented for coverage?".
# Prints each target's build time, executions, coverage and peak memory.
#
#   FuzzTesting/run.sh                    every target, 600 s of fuzzing in all (CI)
#   FUZZ_TOTAL_SECONDS=60 FuzzTesting/run.sh
#   FUZZ_SECONDS_PER_TARGET=300 FuzzTesting/run.sh FuzzCSVReader
#   FUZZ_SECONDS_PER_TARGET=0 FuzzTesting/run.sh      build and replay only
#
# New inputs found while fuzzing go to $FUZZ_WORK (default .build/fuzz-work), never into the
# committed corpus; a crash's input is written there as <target>-crash-<sha1> and its path printed:
# minimise it (./.build/debug/<target> -minimize_crash=1 -runs=10000 FILE), fix the bug and commit
# the minimised input under FailCases/<target>/.
set -euo pipefail
cd "$(dirname "$0")"

all_targets=(FuzzCSVReader FuzzScanResultJSON FuzzServerSentEvents FuzzJPEGDecode FuzzPipelineFile
             FuzzTextParsing FuzzOpenLibraryResponse FuzzGoogleBooksResponse)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

total_seconds=${FUZZ_TOTAL_SECONDS:-600}
per_target=${FUZZ_SECONDS_PER_TARGET:-$(( total_seconds / ${#targets[@]} ))}
work=${FUZZ_WORK:-.build/fuzz-work}
rm -rf "$work"
mkdir -p "$work"

# The one recipe that keeps coverage and ASan in every module on Swift 6.3 (see
# docs/decisions/0018-fuzzing-and-event-stream-cuts.md): two separate --sanitize flags lose one
# of them per module, in a different order each build.
build() {
    swift build --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --product "$1"
}

# A module built without coverage or without ASan links fine and fuzzes blind (the flags are
# applied per module); check that the code of every bookpipe module calls both the coverage hooks
# and the ASan checks (some files have no code, or no checked access: the module as a whole must).
check_instrumented() {
    local bad=0 module
    for module in .build/debug/Bookpipe*.build; do
        compgen -G "$module/*.o" >/dev/null || continue   # not needed by any fuzz target
        local undefined
        undefined=$(nm -u "$module"/*.o 2>/dev/null)
        if ! grep -q '__sanitizer_cov_' <<<"$undefined"; then echo "not instrumented for coverage: $module"; bad=1; fi
        if ! grep -q '__asan_report_\|__asan_load\|__asan_store' <<<"$undefined"; then
            echo "not built with the address sanitizer: $module"; bad=1
        fi
    done
    return $bad
}

echo "== fuzz: build (${#targets[@]} targets)"
for target in "${targets[@]}"; do
    started=$(date +%s)
    if ! build "$target" >"$work/$target.build.log" 2>&1; then
        cat "$work/$target.build.log"
        echo "FAIL $target: build failed"; exit 1
    fi
    echo "built $target in $(( $(date +%s) - started )) s"
done
check_instrumented || { echo "FAIL: rebuild with the recipe above (rm -rf FuzzTesting/.build)"; exit 1; }

# -rss_limit_mb: ASan's shadow memory included; a decode is held to the pixel limit by the
# targets' own guards, so anything near this is a leak or a bomb let through.
common=(-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -detect_leaks=1)

echo "== fuzz: replay FailCases"
for target in "${targets[@]}"; do
    cases=(FailCases/"$target"/*)
    [ -e "${cases[0]}" ] || continue
    if ! ".build/debug/$target" "${common[@]}" -runs=1 "${cases[@]}" >"$work/$target.replay.log" 2>&1; then
        tail -40 "$work/$target.replay.log"
        echo "FAIL $target: a committed crash case fails again (log: $work/$target.replay.log)"; exit 1
    fi
    echo "replayed $target: ${#cases[@]} cases"
done

[ "$per_target" -gt 0 ] || exit 0
echo "== fuzz: ${per_target} s per target"
printf '%-26s %12s %10s %8s %8s %8s\n' target executions exec/s cov ft peak-MB
failed=0
for target in "${targets[@]}"; do
    corpus="$work/$target.corpus"
    mkdir -p "$corpus"
    seeds=()
    [ -d "Corpus/$target" ] && seeds=("Corpus/$target")
    dictionary=()
    [ -f "Dictionaries/$target.dict" ] && dictionary=("-dict=Dictionaries/$target.dict")
    log="$work/$target.fuzz.log"
    status=0
    ".build/debug/$target" "${common[@]}" "${dictionary[@]}" -max_total_time="$per_target" -print_final_stats=1 \
        -artifact_prefix="$work/$target-" "$corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    speed=$(sed -n 's/.* exec\/s: \([0-9]*\).*/\1/p' <<<"$last")
    printf '%-26s %12s %10s %8s %8s %8s\n' "$target" "${executions:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${peak:-?}"
    if grep -q "Is the code instrumented for coverage" "$log"; then
        echo "FAIL $target: libFuzzer found no coverage (Is the code instrumented for coverage?)"; failed=1
    fi
    if [ "$status" -ne 0 ]; then
        grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY|Fatal error|Test unit written|Base64' "$log" | head -20 \
            | swift demangle --simplified || true
        echo "FAIL $target: exit $status (log: $log)"; failed=1
    fi
done
exit $failed
