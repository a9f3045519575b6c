#!/usr/bin/env python3
"""Draws realistic 12-megapixel bookshelf photos for bookpipe's imaging benchmarks.

Each photo is 4032x3024 (landscape) or 3024x4032 upright (portrait, stored landscape with
EXIF orientation 6, as a phone writes it): wooden shelves with many spines of varied width and
colour, text-like glyph detail, a light gradient, lens softness and sensor noise, saved as JPEG
quality 92 4:2:0, which compresses like a phone photo (3-5 MB).

Next to every photo it writes <name>.boxes.json: 30 spine boxes in the upright picture,
normalised to 0..1, for `bookpipe image crops`.

    python3 make_shelf_photos.py OUTPUT_DIR [--count 20] [--seed 1]
"""
import argparse
import json
import os
import sys

import numpy as np
from PIL import Image
from scipy import ndimage


def wood(rng, height, width, base):
    """A wood texture: stretched noise for the grain plus slow variation."""
    grain = rng.normal(0, 1, (max(height // 8, 2), max(width // 64, 2))).astype(np.float32)
    grain = ndimage.zoom(grain, (height / grain.shape[0], width / grain.shape[1]), order=1)[:height, :width]
    rings = np.sin(np.linspace(0, rng.uniform(20, 60), width, dtype=np.float32)[None, :]
                   + grain * 1.5 + np.linspace(0, 3, height, dtype=np.float32)[:, None])
    shade = 1.0 + 0.10 * rings + 0.06 * grain
    return np.asarray(base, np.float32)[None, None, :] * shade[:, :, None]


def draw_spine(rng, image, top, bottom, left, right):
    """One book spine: a colour, a rounded shading, bands and a column of glyphs."""
    width = right - left
    height = bottom - top
    hue = rng.uniform(0, 1)
    saturation = rng.uniform(0.3, 0.9)
    value = rng.uniform(0.25, 0.95)
    colour = np.array(hsv_to_rgb(hue, saturation, value), np.float32) * 255
    x = np.linspace(-1, 1, width, dtype=np.float32)
    roundness = (0.75 + 0.25 * np.sqrt(np.clip(1 - x * x, 0, 1)))[None, :, None]
    spine = np.ones((height, width, 3), np.float32) * colour * roundness
    # Cloth / paper texture.
    spine *= (1 + 0.04 * rng.normal(0, 1, (height, 1, 1))).astype(np.float32)
    # Decorative bands near top and bottom.
    ink = np.array(hsv_to_rgb(rng.uniform(0, 1), rng.uniform(0, 0.5), rng.choice([0.1, 0.95])), np.float32) * 255
    for band_top in (int(height * rng.uniform(0.04, 0.1)), int(height * rng.uniform(0.82, 0.9))):
        thickness = int(rng.integers(3, 12))
        spine[band_top:band_top + thickness] = ink * roundness[0]
    # Title: a column of glyph-like strokes, rotated text as on a real spine.
    glyph_height = max(int(width * rng.uniform(0.35, 0.6)), 6)
    stroke = max(glyph_height // 7, 1)
    y = int(height * 0.15)
    end = int(height * rng.uniform(0.55, 0.8))
    cx0 = int(width * 0.2)
    cx1 = max(int(width * 0.8), cx0 + 3)
    while y + glyph_height < end:
        glyph_width = int(glyph_height * rng.uniform(0.5, 0.9))
        for _ in range(int(rng.integers(2, 5))):
            if rng.uniform() < 0.5:   # horizontal stroke (across the spine)
                yy = y + int(rng.integers(0, glyph_width))
                spine[yy:yy + stroke, cx0:cx1] = ink
            else:                     # vertical stroke
                xx = cx0 + int(rng.integers(0, max(cx1 - cx0 - stroke, 1)))
                spine[y:y + glyph_width, xx:xx + stroke] = ink
        y += glyph_width + int(stroke * rng.uniform(1, 3))
        if rng.uniform() < 0.12:
            y += glyph_height        # word gap
    # A dark gap between books.
    spine[:, :2] *= 0.35
    spine[:, -2:] *= 0.35
    image[top:bottom, left:right] = spine


def hsv_to_rgb(h, s, v):
    i = int(h * 6) % 6
    f = h * 6 - int(h * 6)
    p, q, t = v * (1 - s), v * (1 - f * s), v * (1 - (1 - f) * s)
    return [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)][i]


def shelf_picture(rng, width, height):
    """An upright shelf picture (float32 RGB 0..255) and the boxes of all spines."""
    image = wood(rng, height, width, (150, 100, 60))
    shelves = 3 if height <= width else 4
    board = int(height * 0.045)
    row_height = (height - board * (shelves + 1)) // shelves
    boxes = []
    for row in range(shelves):
        shelf_top = board + row * (row_height + board)
        image[shelf_top - board:shelf_top] = wood(rng, board, width, (110, 70, 40)) * 0.8
        x = int(rng.integers(10, 60))
        while x < width - 40:
            spine_width = int(rng.integers(35, 140))
            if x + spine_width > width - 10:
                break
            spine_height = int(row_height * rng.uniform(0.68, 0.97))
            top = shelf_top + row_height - spine_height
            if rng.uniform() < 0.04:       # a gap
                x += spine_width
                continue
            draw_spine(rng, image, top, shelf_top + row_height, x, x + spine_width)
            boxes.append((x, top, spine_width, spine_height))
            x += spine_width + int(rng.integers(0, 4))
    image[height - board:] = wood(rng, board, width, (110, 70, 40)) * 0.8
    # Light: brighter towards one corner, vignette.
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    cx, cy = rng.uniform(0.2, 0.8) * width, rng.uniform(0.1, 0.5) * height
    distance = np.sqrt(((xx - cx) / width) ** 2 + ((yy - cy) / height) ** 2)
    light = (1.15 - 0.55 * distance).clip(0.45, 1.2)
    image *= light[:, :, None]
    # Lens softness, then sensor noise (luma and some chroma).
    image = ndimage.gaussian_filter(image, sigma=(0.8, 0.8, 0))
    image += rng.normal(0, 3.2, (height, width, 1)).astype(np.float32)
    image += rng.normal(0, 1.6, (height, width, 3)).astype(np.float32)
    return image.clip(0, 255).astype(np.uint8), boxes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output_dir")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    for index in range(args.count):
        rng = np.random.default_rng(args.seed * 1000 + index)
        portrait = index % 2 == 1
        width, height = (3024, 4032) if portrait else (4032, 3024)
        picture, boxes = shelf_picture(rng, width, height)
        name = f"shelf_{index + 1:02d}"
        path = os.path.join(args.output_dir, name + ".jpg")
        image = Image.fromarray(picture)
        exif = Image.Exif()
        if portrait:
            # Store it the way a phone held upright does: sensor landscape, EXIF says turn 90° CW.
            image = image.transpose(Image.Transpose.ROTATE_90)   # counter-clockwise
            exif[0x0112] = 6
        else:
            exif[0x0112] = 1
        exif[0x010F] = "bookpipe"
        image.save(path, quality=92, subsampling="4:2:0", exif=exif.tobytes())
        picks = [boxes[i] for i in np.linspace(0, len(boxes) - 1, 30).astype(int)] if len(boxes) >= 30 else boxes
        normalised = [{"x": x / width, "y": y / height, "width": w / width, "height": h / height}
                      for (x, y, w, h) in picks]
        with open(os.path.join(args.output_dir, name + ".boxes.json"), "w") as handle:
            json.dump(normalised, handle, indent=1)
        print(f"{path}: {'portrait' if portrait else 'landscape'} {width}x{height} upright, "
              f"{os.path.getsize(path)} bytes, {len(boxes)} spines", file=sys.stderr)


if __name__ == "__main__":
    main()
