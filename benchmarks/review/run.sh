#!/usr/bin/env bash
# The review queue's speed figures (issue 12), release build, with hyperfine.
#   benchmarks/review/run.sh [WORK_DIR]     (default /tmp/bookpipe-review-bench)
# Needs python3 with Pillow, numpy, scipy (pip install pillow numpy scipy) and hyperfine.
# Every figure is a whole `bookpipe` process (start-up, opening the library, the start-of-run photo
# cleanup included), as a person sees it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-/tmp/bookpipe-review-bench}"

swift build -c release --product bookpipe --package-path "$root" 2>&1 | grep -E "error|warning: " || true
bin="$(swift build -c release --package-path "$root" --show-bin-path)/bookpipe"

rm -rf "$work" && mkdir -p "$work"
python3 "$here/make_inputs.py" "$work" > /dev/null
hf() { hyperfine --style basic --export-json "$work/$1.json" "${@:2}"; }

echo "== 0. process start (bookpipe --help: loading, no library)"
hf start --warmup 2 --runs 15 "$bin --help > /dev/null"

echo "== 1. review list, 10,000 queued items"
(cd "$work/queue10k" && "$bin" import-scan scan.json --no-enrich --progress none --library lib.sqlite 2>/dev/null | tail -1
 test "$("$bin" review list --library lib.sqlite | head -1)" = "10000 items to review (newest first)"
 hf list --warmup 2 --runs 15 "$bin review list --library lib.sqlite > /dev/null"
 hf list-json --warmup 2 --runs 15 "$bin review list --json --library lib.sqlite > /dev/null")

echo "== 2. one spine crop from a 12 MP photo (review show --crop); 3. all 30 crops (review sheet)"
(cd "$work/shelf30" && "$bin" import-scan scan.json --no-enrich --progress none --library lib.sqlite 2>/dev/null
 id="$("$bin" review list --json --library lib.sqlite | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')"
 hf crop1 --warmup 2 --runs 15 "$bin review show $id --crop one.jpg --library lib.sqlite > /dev/null"
 hf show1 --warmup 2 --runs 15 "$bin review show $id --library lib.sqlite > /dev/null"
 hf list30 --warmup 2 --runs 15 "$bin review list --library lib.sqlite > /dev/null"
 hf crops30 --warmup 1 --runs 10 "$bin review sheet --output sheet --library lib.sqlite 2> /dev/null"
 "$bin" review sheet --output sheet --library lib.sqlite)

echo "== 4. cleanup of 100 fully reviewed scans (review verify --all: verify 500 items, then delete 100 photos)"
(cd "$work/cleanup"
 prepare="rm -rf lib.sqlite* && $bin import-scan scan.json --no-enrich --progress none --library lib.sqlite > /dev/null 2>&1"
 hf cleanup --runs 10 --prepare "$prepare" "$bin review verify --all --yes --library lib.sqlite 2> /dev/null"
 test "$(ls lib.sqlite.photos | wc -l)" = 0)

echo "== 5. import-scan, 1,000 scans x 20 detections, --no-enrich (pretty-printed JSON, then minified)"
(cd "$work/import"
 hf import-indented --runs 5 --prepare "rm -rf lib.sqlite*" "$bin import-scan scan-indented.json --no-enrich --progress none --library lib.sqlite 2> /dev/null"
 hf import --runs 5 --prepare "rm -rf lib.sqlite*" "$bin import-scan scan.json --no-enrich --progress none --library lib.sqlite 2> /dev/null"
 "$bin" import-scan scan.json --no-enrich --progress none --library lib.sqlite 2>&1 | tail -2)

python3 - "$work" <<'PY'
import json, sys, os
work = sys.argv[1]
for name in ["start", "list", "list-json", "crop1", "show1", "list30", "crops30", "cleanup", "import-indented", "import"]:
    result = json.load(open(os.path.join(work, name + ".json")))["results"][0]
    print(f"{name:15} median {result['median'] * 1000:8.1f} ms  mean {result['mean'] * 1000:8.1f} ms  "
          f"min {result['min'] * 1000:8.1f} ms  CPU (user+sys, mean) {(result['user'] + result['system']) * 1000:7.1f} ms  "
          f"({len(result['times'])} runs)")
PY
