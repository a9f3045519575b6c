#!/usr/bin/env python3
"""bookpipe vs vipsthumbnail vs Pillow on the same 12 MP shelf photos, in one sitting.

Runs each tool as a process, alternating the tools round by round, and prints wall times
(median of the rounds), ratios, peak RSS, and image quality: PSNR-Y and SSIM-Y of every
output against a float Lanczos-3 resize of the full-resolution decode (so speed never comes
from a worse picture). Output dimensions are checked to be identical.

    python3 make_shelf_photos.py /tmp/shelves --count 20
    swift build -c release --product bookpipe        # in the repository root
    python3 compare.py /tmp/shelves --bookpipe ../../.build/release/bookpipe

Needs: vipsthumbnail (Debian libvips-tools), Pillow, numpy, scipy.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageOps
from scipy import ndimage, sparse

PRESETS = {"cloudflare": (1536, 85), "gemini": (3072, 90)}

PILLOW_PREPARE = r"""
import sys
from PIL import Image, ImageOps
edge, quality, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for path in sys.argv[4:]:
    with Image.open(path) as im:
        im.thumbnail((edge, edge), Image.LANCZOS)          # uses JPEG draft (shrink-on-load) + reducing_gap
        im = ImageOps.exif_transpose(im)
        name = path.rsplit("/", 1)[-1]
        im.save(out + "/" + name, quality=quality)
"""

PILLOW_CROPS = r"""
import json, sys
from PIL import Image, ImageOps
path, boxes, edge, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with Image.open(path) as im:
    im = ImageOps.exif_transpose(im)                       # decodes once, upright
    width, height = im.size
    for index, box in enumerate(json.load(open(boxes))):
        left, top = round(box["x"] * width), round(box["y"] * height)
        right, bottom = round((box["x"] + box["width"]) * width), round((box["y"] + box["height"]) * height)
        crop = im.crop((left, top, right, bottom))
        crop.thumbnail((edge, edge), Image.LANCZOS)
        crop.save(f"{out}/spine_{index + 1:02d}.jpg", quality=85)
"""


def run(command):
    """Runs a process; returns (seconds, peak RSS in MB).

    Peak RSS comes from GNU time (/usr/bin/time -f %M) in a separate run: a child forked from
    this Python process would otherwise report Python's own pages as its RSS.
    """
    start = time.perf_counter()
    completed = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        sys.exit(f"failed ({completed.returncode}): {' '.join(command)}\n{completed.stderr.decode(errors='replace')}")
    return elapsed


def peak_rss(command):
    """Peak resident set size of `command` in MB, measured by GNU time."""
    with tempfile.NamedTemporaryFile("r") as report:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name, *command],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return int(report.read().split()[-1]) / 1024


def fresh(directory):
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    return directory


def lanczos_matrix(n_in, n_out):
    """Sparse Lanczos-3 resampling matrix (Pillow's/bookpipe's pixel-centre convention)."""
    scale = n_in / n_out
    filter_scale = max(scale, 1.0)
    support = 3.0 * filter_scale
    rows, cols, values = [], [], []
    for i in range(n_out):
        centre = (i + 0.5) * scale
        lo, hi = max(int(centre - support + 0.5), 0), min(int(centre + support + 0.5), n_in)
        j = np.arange(lo, hi)
        x = (j - centre + 0.5) / filter_scale
        w = np.sinc(x) * np.sinc(x / 3.0) * (np.abs(x) < 3)
        w /= w.sum()
        rows += [i] * len(j)
        cols += list(j)
        values += list(w)
    return sparse.csr_matrix((values, (rows, cols)), shape=(n_out, n_in))


def luma(rgb):
    rgb = rgb.astype(np.float64)
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


_reference_cache = {}


def reference_y(photo, size):
    key = (photo, size)
    if key not in _reference_cache:
        with Image.open(photo) as im:
            upright = np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
        y = luma(upright)
        vertical = lanczos_matrix(y.shape[0], size[1])
        horizontal = lanczos_matrix(y.shape[1], size[0])
        _reference_cache[key] = (horizontal @ (vertical @ y).T).T
    return _reference_cache[key]


def psnr(a, b):
    mse = np.mean((a - b) ** 2)
    return 10 * np.log10(255.0 ** 2 / mse)


def ssim(a, b):
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    blur = lambda x: ndimage.gaussian_filter(x, 1.5, truncate=3.5)
    mu_a, mu_b = blur(a), blur(b)
    var_a = blur(a * a) - mu_a ** 2
    var_b = blur(b * b) - mu_b ** 2
    cov = blur(a * b) - mu_a * mu_b
    value = ((2 * mu_a * mu_b + c1) * (2 * cov + c2)) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return float(np.mean(value[8:-8, 8:-8]))


def quality(photo, output):
    with Image.open(output) as im:
        size = im.size
        y = luma(np.asarray(im.convert("RGB")))
    reference = reference_y(photo, size)
    return size, psnr(y, reference), ssim(y, reference)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photos", help="folder with shelf_*.jpg (from make_shelf_photos.py)")
    parser.add_argument("--bookpipe", required=True, help="release build of bookpipe")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--singles", type=int, default=4, help="photos timed one process each")
    parser.add_argument("--quality-photos", type=int, default=4, help="photos whose outputs are scored")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    photos = sorted(glob.glob(os.path.join(args.photos, "shelf_*.jpg")))
    if not photos:
        sys.exit(f"no shelf_*.jpg in {args.photos}")
    work = tempfile.mkdtemp(prefix="bookpipe-compare-")
    pillow_prepare = os.path.join(work, "pillow_prepare.py")
    pillow_crops = os.path.join(work, "pillow_crops.py")
    open(pillow_prepare, "w").write(PILLOW_PREPARE)
    open(pillow_crops, "w").write(PILLOW_CROPS)

    def commands(preset, inputs, out):
        edge, q = PRESETS[preset]
        return {
            "bookpipe": [args.bookpipe, "image", "prepare", *inputs, "--preset", preset, "--fixed-quality",
                         "--output-dir", out + "/bookpipe"],
            "vips": ["vipsthumbnail", *inputs, "-s", str(edge), "-o", out + "/vips/%s.jpg[Q=%d,strip]" % ("%s", q)],
            "pillow": [sys.executable, pillow_prepare, str(edge), str(q), out + "/pillow", *inputs],
        }

    results = {}
    tools = ["bookpipe", "vips", "pillow"]

    for preset in PRESETS:
        for label, inputs_list in (("batch of %d" % len(photos), [photos]),
                                   ("single photo", [[p] for p in photos[:args.singles]])):
            times = {t: [] for t in tools}
            rss = {t: 0.0 for t in tools}
            for round_index in range(args.rounds):
                order = tools[round_index % 3:] + tools[:round_index % 3]   # alternate who goes first
                for inputs in inputs_list:
                    for tool in order:
                        out = fresh(os.path.join(work, "out"))
                        for sub in tools:
                            os.makedirs(os.path.join(out, sub))
                        times[tool].append(run(commands(preset, inputs, out)[tool]))
                        if round_index == 0 and inputs is inputs_list[0]:
                            out = fresh(os.path.join(work, "out"))
                            for sub in tools:
                                os.makedirs(os.path.join(out, sub))
                            rss[tool] = peak_rss(commands(preset, inputs, out)[tool])
            key = f"{preset}, {label}"
            results[key] = {t: {"ms": statistics.median(times[t]) * 1000, "rss_mb": rss[t]} for t in tools}
            print(f"{key}: " + ", ".join(f"{t} {results[key][t]['ms']:.0f} ms ({rss[t]:.0f} MB)" for t in tools), flush=True)

        # Quality: one more run of each tool on the scored photos, outputs kept.
        scored = photos[:args.quality_photos]
        out = fresh(os.path.join(work, "quality-" + preset))
        for sub in tools:
            os.makedirs(os.path.join(out, sub))
        for tool in tools:
            run(commands(preset, scored, out)[tool])
        scores = {t: [] for t in tools}
        for photo in scored:
            name = os.path.basename(photo)
            sizes = set()
            for tool in tools:
                size, p, s = quality(photo, os.path.join(out, tool, name))
                sizes.add(size)
                scores[tool].append((p, s, os.path.getsize(os.path.join(out, tool, name))))
            if len(sizes) != 1:
                print(f"  warning: {name}: output sizes differ: {sizes}")
        for tool in tools:
            results[f"{preset}, batch of {len(photos)}"][tool].update({
                "psnr_y": statistics.mean(x[0] for x in scores[tool]),
                "ssim_y": statistics.mean(x[1] for x in scores[tool]),
                "kb": statistics.mean(x[2] for x in scores[tool]) / 1000,
            })
        print(f"{preset} quality: " + ", ".join(
            f"{t} PSNR-Y {statistics.mean(x[0] for x in scores[t]):.2f} dB SSIM-Y {statistics.mean(x[1] for x in scores[t]):.4f}"
            for t in tools), flush=True)

    # 30 spine crops from one photo, max edge 800.
    times = {"bookpipe": [], "pillow": []}
    rss = {"bookpipe": 0.0, "pillow": 0.0}
    for round_index in range(args.rounds):
        for photo in photos[:args.singles]:
            boxes = photo[:-4] + ".boxes.json"
            for tool in (["bookpipe", "pillow"] if round_index % 2 == 0 else ["pillow", "bookpipe"]):
                out = fresh(os.path.join(work, "crops"))
                command = ([args.bookpipe, "image", "crops", photo, "--boxes", boxes, "--output-dir", out, "--max-edge", "800"]
                           if tool == "bookpipe" else [sys.executable, pillow_crops, photo, boxes, "800", out])
                times[tool].append(run(command))
                if round_index == 0:
                    rss[tool] = max(rss[tool], peak_rss(command))
    results["30 spine crops, max edge 800"] = {t: {"ms": statistics.median(times[t]) * 1000, "rss_mb": rss[t]} for t in times}
    print("30 crops: " + ", ".join(f"{t} {statistics.median(times[t]) * 1000:.0f} ms ({rss[t]:.0f} MB)" for t in times))

    print()
    print("| Case | bookpipe | vipsthumbnail | Pillow | bookpipe / vips | bookpipe / Pillow |")
    print("|---|---|---|---|---|---|")
    for key, row in results.items():
        b = row["bookpipe"]["ms"]
        v = row.get("vips", {}).get("ms")
        p = row["pillow"]["ms"]
        print(f"| {key} | {b:.0f} ms | {f'{v:.0f} ms' if v else '–'} | {p:.0f} ms | "
              f"{f'{b / v:.2f}×' if v else '–'} | {b / p:.2f}× |")
    print()
    print("| Preset | Tool | PSNR-Y (dB) | SSIM-Y | mean size (KB) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|")
    for key, row in results.items():
        if "psnr_y" not in row["bookpipe"]:
            continue
        for tool in tools:
            r = row[tool]
            print(f"| {key.split(',')[0]} | {tool} | {r['psnr_y']:.2f} | {r['ssim_y']:.4f} | {r['kb']:.0f} | {r['rss_mb']:.0f} |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
