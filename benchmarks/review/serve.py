#!/usr/bin/env python3
"""`bookpipe review serve` with 10,000 queued items: from a decision's POST to the next item shown.

    python3 benchmarks/review/serve.py [--bin PATH] [--work DIR] [--decisions 200]

Makes a library of 10,000 unsure detections of the sample shelf photo (`import-scan --no-enrich`),
starts the server, loads the queue once as the page does, then for each decision times what the page
waits for before the next item is on screen: the POST /api/decide (verify, with the version it saw)
and the GET /api/item of the next item; the next spine crop (GET /crop) is timed on its own (the page
draws it when it arrives). Then the terminal walk's rate for comparison: `bookpipe review` fed 200
`v` lines on standard input (one process, each decision written at once). Figures only; the browser
test (Tests/browser, run with -s) prints the scripted browser reviewer's decisions per minute.
Standard library only.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=None)
    parser.add_argument("--work", default="/tmp/bookpipe-review-serve-bench")
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--decisions", type=int, default=200)
    arguments = parser.parse_args()
    binary = arguments.bin or os.path.join(subprocess.run(
        ["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip(), "bookpipe")

    shutil.rmtree(arguments.work, ignore_errors=True)
    os.makedirs(arguments.work)
    shutil.copy(os.path.join(ROOT, "samples", "shelf-scan", "shelf.jpg"), os.path.join(arguments.work, "shelf.jpg"))
    with open(os.path.join(ROOT, "samples", "shelf-scan", "scan.json")) as sample:
        boxes = [detection["box"] for detection in json.load(sample)["detections"] if "box" in detection]
    detections = [{"title": f"Title {index}", "author": f"Author {index % 97}", "confidence": 0.1 + (index % 50) / 100,
                   "box": boxes[index % len(boxes)]} for index in range(arguments.items)]
    with open(os.path.join(arguments.work, "scan.json"), "w") as out:
        json.dump({"photo": "shelf.jpg", "detections": detections}, out)
    subprocess.run([binary, "import-scan", "scan.json", "--no-enrich", "--progress", "none", "--library", "lib.sqlite"],
                   cwd=arguments.work, check=True, capture_output=True)

    server = subprocess.Popen([binary, "review", "serve", "--library", "lib.sqlite"], cwd=arguments.work,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        base, token = url.split("/?token=")
        cookie = {"Cookie": f"bookpipe_review={token}"}

        def call(method, path, body=None, headers=None):
            request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                             headers={**cookie, **(headers or {}), "Content-Type": "application/json"})
            with urllib.request.urlopen(request) as response:
                return response.read()

        page = call("GET", "/").decode()
        csrf = page.split('name="csrf-token" content="')[1].split('"')[0]
        started = time.perf_counter()
        queue = json.loads(call("GET", "/api/queue"))["items"]
        queue_ms = (time.perf_counter() - started) * 1000
        assert len(queue) == arguments.items, len(queue)
        started = time.perf_counter()
        call("GET", "/api/select")
        select_ms = (time.perf_counter() - started) * 1000
        # As the page does: the list has no versions; the item shown carries its own.
        version = json.loads(call("GET", "/api/item?id=" + queue[0]["id"]))["summary"]["version"]

        next_item, crops = [], []
        for index in range(arguments.decisions):
            current, following = queue[index], queue[index + 1]
            started = time.perf_counter()
            call("POST", "/api/decide", {"action": "verify", "items": [{"id": current["id"], "version": version}]},
                 {"X-CSRF-Token": csrf})
            version = json.loads(call("GET", "/api/item?id=" + following["id"]))["summary"]["version"]
            next_item.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            call("GET", "/crop?id=" + following["id"])
            crops.append((time.perf_counter() - started) * 1000)
    finally:
        server.terminate()
        server.wait()

    def describe(values):
        ordered = sorted(values)
        return (f"median {statistics.median(ordered):.1f} ms, p90 {ordered[int(len(ordered) * 0.9)]:.1f} ms, "
                f"max {ordered[-1]:.1f} ms")

    print(f"queue of {arguments.items:,} items: GET /api/queue {queue_ms:.0f} ms (once, when the page opens); "
          f"GET /api/select (all, with versions, as a bulk count does) {select_ms:.0f} ms")
    print(f"decision POST -> next item's JSON ({arguments.decisions} decisions): {describe(next_item)}")
    print(f"next spine crop (GET /crop, 3024x2268 photo): {describe(crops)}")

    walk = min(arguments.decisions, 200)
    started = time.perf_counter()
    subprocess.run([binary, "review", "--library", "lib.sqlite"], cwd=arguments.work, input="v\n" * walk + "q\n",
                   capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    print(f"terminal walk, {walk} scripted `v` answers on stdin: {seconds:.2f} s = {walk / seconds * 60:.0f} decisions per minute")
    print(f"browser, same queue, scripted: {len(next_item)} decisions in {sum(next_item) / 1000:.2f} s of waiting = "
          f"{len(next_item) / (sum(next_item) / 1000) * 60:.0f} decisions per minute (server side only)")


if __name__ == "__main__":
    sys.exit(main())
