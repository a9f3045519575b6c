#!/usr/bin/env python3
"""Makes the inputs of benchmarks/review/run.sh in OUTPUT_DIR.

    python3 make_inputs.py OUTPUT_DIR

- queue10k/scan.json + shelf.jpg: 500 scans x 20 detections, all below 0.60 (10,000 queued items).
- import/scan.json + shelf.jpg: 1,000 scans x 20 detections (a third below 0.60), one shared photo, on one
  line (minified); import/scan-indented.json: the same, pretty-printed.
- cleanup/scan.json + p000.jpg..p099.jpg: 100 scans, each with its own small photo and 5 unsure detections.
- shelf30/: one 12 MP photo (benchmarks/imaging/make_shelf_photos.py) and a scan of its 30 boxes,
  all below 0.60.
Needs Pillow, numpy and scipy (make_shelf_photos.py).
"""
import json
import os
import random
import subprocess
import sys

from PIL import Image

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(7)
WORDS = "shadow river night glass winter garden stone silver house machine ocean letters fire empire".split()


def title():
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))).upper()


def detection(index, confidence):
    x = (index % 20) * 0.05
    return {"title": title(), "author": f"AUTHOR {rng.randint(1, 5000)}", "confidence": confidence,
            "boundingBox": {"x": round(x + 0.005, 4), "y": 0.1, "width": 0.04, "height": 0.8}}


def small_photo(path, colour):
    Image.new("RGB", (640, 480), colour).save(path, quality=85)


def envelope(scans):
    return {"format": "bookshelf-scan", "version": 1, "scans": scans}


def write(folder, scans):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "scan.json"), "w") as handle:
        json.dump(envelope(scans), handle)


# 10,000 queued items.
folder = os.path.join(out, "queue10k")
write(folder, [{"scanId": f"q{s}", "originalImagePath": "shelf.jpg",
                "books": [detection(i, round(rng.uniform(0.05, 0.59), 2)) for i in range(20)]} for s in range(500)])
small_photo(os.path.join(folder, "shelf.jpg"), (120, 90, 60))

# 1,000 scans x 20 detections.
folder = os.path.join(out, "import")
write(folder, [{"scanId": f"s{s}", "originalImagePath": "shelf.jpg",
                "books": [detection(i, round(rng.uniform(0.3, 0.99), 2)) for i in range(20)]} for s in range(1000)])
small_photo(os.path.join(folder, "shelf.jpg"), (100, 80, 50))
# The same content pretty-printed (one detection field per line), as many backends write it.
with open(os.path.join(folder, "scan.json")) as handle:
    content = json.load(handle)
with open(os.path.join(folder, "scan-indented.json"), "w") as handle:
    json.dump(content, handle, indent=1)

# 100 scans, each its own photo, to be fully reviewed and cleaned up.
folder = os.path.join(out, "cleanup")
os.makedirs(folder, exist_ok=True)
for s in range(100):
    small_photo(os.path.join(folder, f"p{s:03}.jpg"), (s, 255 - s, (s * 7) % 256))
write(folder, [{"scanId": f"c{s}", "originalImagePath": f"p{s:03}.jpg",
                "books": [detection(i, 0.3) for i in range(5)]} for s in range(100)])

# One 12 MP shelf photo with 30 boxes.
folder = os.path.join(out, "shelf30")
os.makedirs(folder, exist_ok=True)
subprocess.run([sys.executable, os.path.join(here, "..", "imaging", "make_shelf_photos.py"), folder, "--count", "1"], check=True)
photo = sorted(name for name in os.listdir(folder) if name.endswith(".jpg"))[0]
with open(os.path.join(folder, photo.rsplit(".", 1)[0] + ".boxes.json")) as handle:
    boxes = json.load(handle)
if isinstance(boxes, dict):
    boxes = boxes.get("boxes", boxes)
books = [{"title": title(), "author": "SOMEONE", "confidence": 0.3, "boundingBox": box} for box in boxes]
write(folder, [{"scanId": "shelf30", "originalImagePath": photo, "books": books}])
print("inputs in", out)
