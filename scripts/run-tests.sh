#!/usr/bin/env bash
# Every test suite: the Swift tests (swift-testing; the report's browser test runs Chromium), then the
# Python ones (the review walk through a pseudo-terminal, `review serve` in headless Chromium, the
# benchmark and sample helpers).
# Needs what `scripts/install-system-packages.sh --tests` installs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Swift 6.3.1's Foundation reads past a readdir buffer when Process.run() scans /proc/self/fd
# (swift-corelibs-foundation PR #5472), which kills the test process when that buffer ends just
# before an unmapped page: rare, but our tests start hundreds of processes. With one malloc arena
# every buffer lies in the brk heap, whose top chunk is always mapped, so the stray read is harmless.
# (The tool under test links jemalloc and is not affected.)
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.arena_max=1"
# The PostgreSQL engine's contract cases need a real server: a throwaway cluster for this run
# (scripts/postgres-test-cluster.sh), stopped however the run ends. One already given is used as it is.
started_cluster=""
if [[ -z "${BOOKPIPE_TEST_POSTGRES:-}" ]]; then
    eval "$(bash scripts/postgres-test-cluster.sh start)"
    started_cluster="$BOOKPIPE_TEST_POSTGRES_DIR"
fi
# Every temporary file of the run (test libraries and catalogues, Chromium profiles, pytest's folders: the
# tests make them under TMPDIR and leave them for a failure to be looked at) goes into one folder of the
# run, removed when the run ends however it ends; its size is printed first. Without it each run left
# thousands of folders in /tmp.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/bookpipe-tests.XXXXXX")
# Open to every user as /tmp is (sticky): the read-only library tests run the tool as `nobody`.
chmod 1777 "$run_tmp"
end_run() {
    echo "run-tests: the run's temporary files: $(du -sh "$run_tmp" 2>/dev/null | cut -f1) in $run_tmp (removed)"
    rm -rf "$run_tmp"
    if [[ -n "$started_cluster" ]]; then bash scripts/postgres-test-cluster.sh stop "$started_cluster"; fi
}
trap end_run EXIT
export TMPDIR="$run_tmp"
# The command-line tests run the binary and wait for it on their test's thread: they go on their own,
# after the others, so they never hold the two threads of a two-core machine's task pool that the
# other targets' async tests (manual clocks, loopback servers) need. Together the two runs are every test.
swift test --disable-xctest --skip BookpipeCLITests
swift test --disable-xctest --skip-build --filter BookpipeCLITests --skip SeveralWorkersTests
# The several-workers test runs four bookpipe processes, a PostgreSQL library and a rate-limited server for
# seconds to a minute: beside the other command-line tests it made theirs exceed their time limits on a
# loaded two-core machine, so it runs alone.
swift test --disable-xctest --skip-build --filter SeveralWorkersTests
python3 -m pytest -q benchmarks/import benchmarks/matching samples Tests/terminal Tests/browser Tests/readme
