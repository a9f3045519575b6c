#!/usr/bin/env bash
# Every test suite: the Swift tests (swift-testing; the report's browser test runs Chromium), then the
# Python ones (the review walk through a pseudo-terminal, the benchmark and sample helpers).
# Needs what `scripts/install-system-packages.sh --tests` installs.
set -euo pipefail
cd "$(dirname "$0")/.."
# The command-line tests run the binary and wait for it on their test's thread: they go on their own,
# after the others, so they never hold the two threads of a two-core machine's task pool that the
# other targets' async tests (manual clocks, loopback servers) need. Together the two runs are every test.
swift test --disable-xctest --skip BookpipeCLITests
swift test --disable-xctest --skip-build --filter BookpipeCLITests
python3 -m pytest -q benchmarks/import benchmarks/matching samples Tests/terminal
