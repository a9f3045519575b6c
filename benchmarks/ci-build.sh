#!/bin/sh
# Builds the benchmark package (release, as `swift package benchmark` does) without running it.
# CI runs this; the long comparisons (imaging/compare.py) are run by hand.
set -eu
cd "$(dirname "$0")"
swift build -c release --product ImagingBenchmarks
