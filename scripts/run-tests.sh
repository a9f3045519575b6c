#!/usr/bin/env bash
# Every test suite: the Swift tests (swift-testing; the report's browser test runs Chromium), then the
# Python ones (the review walk through a pseudo-terminal, the benchmark and sample helpers).
# Needs what `scripts/install-system-packages.sh --tests` installs.
set -euo pipefail
cd "$(dirname "$0")/.."
swift test --disable-xctest
python3 -m pytest -q benchmarks/import benchmarks/matching samples Tests/terminal
