#!/usr/bin/env python3
"""Draws the sample shelf photos and their detection sidecars, deterministically.

    python3 samples/scan-photos/make_photos.py   # samples/scan-photos/*.jpg + *.json, samples/shelf-scan/shelf.jpg

(12-megapixel photos for benchmarks come from benchmarks/imaging/make_shelf_photos.py.)

The photos are synthetic: a wall, a shelf board, and book spines as coloured bars with the title
and author written along them, so a spine crop looks like a spine. Each sidecar `<stem>.json` is
what the fake vision backend (`bookpipe-fake-services scan-backend --sidecars DIR`) sends for
`<stem>.jpg`: a JSON list of `{title, author, isbn, confidence, boundingBox}`, titles in capitals
as spines show them, boxes normalised to the upright photo. Needs Pillow (`pip install pillow`).
"""
import argparse
import json
import random
import struct
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent
SHELF_SCAN = HERE.parent / "shelf-scan"

# (title as the spine shows it, author or None, ISBN or None, confidence or None)
# Every title is a work of samples/catalog/openlibrary-sample.txt.
SHELVES = {
    "shelf1": dict(size=(1600, 1200), orientation=None, books=[
        ("DUNE", "FRANK HERBERT", None, 0.95),
        ("THE HOBBIT", "J.R.R. TOLKIEN", None, 0.92),
        ("PROJECT HAIL MARY", "ANDY WEIR", "9780593135204", 0.90),
        ("CIRCE", "MADELINE MILLER", None, 0.57),
        ("THE MARTIAN", "ANDY WEIR", None, 0.88),
        ("KLARA AND THE SUN", "KAZUO ISHIGURO", None, 0.81),
        ("FAHRENHEIT 451", "RAY BRADBURY", None, 0.93),
    ]),
    "shelf2": dict(size=(1600, 1200), orientation=None, books=[
        ("JANE EYRE", "CHARLOTTE BRONTË", None, 0.89),
        ("EMMA", "JANE AUSTEN", None, 0.60),
        ("FRANKENSTEIN", "MARY SHELLEY", None, 0.86),
        ("WUTHERING HEIGHTS", None, None, 0.44),
        ("PRIDE AND PREJUDICE", "JANE AUSTEN", None, 0.97),
        ("THE GREAT GATSBY", "F. SCOTT FITZGERALD", None, None),
    ]),
    # Taken with the phone upright: stored landscape, EXIF orientation 6 (turn 90° clockwise).
    "shelf3-portrait": dict(size=(1200, 1600), orientation=6, books=[
        ("THE FIFTH SEASON", "N. K. JEMISIN", "9780316229296", 0.91),
        ("MEXICAN GOTHIC", "SILVIA MORENO-GARCIA", None, 0.84),
        ("CATCH-22", "JOSEPH HELLER", None, 0.52),
        ("EDUCATED", "TARA WESTOVER", None, 0.90),
        ("SAPIENS", "YUVAL NOAH HARARI", None, 0.87),
    ]),
    "shelf4": dict(size=(1600, 1200), orientation=None, books=[
        ("GOOD OMENS", "GAIMAN PRATCHETT", None, 0.74),
        ("NORWEGIAN WOOD", "HARUKI MURAKAMI", None, 0.91),
        ("SLAUGHTERHOUSE-FIVE", "KURT VONNEGUT", None, 0.86),
        ("THE ROAD", "CORMAC MCCARTHY", None, 0.38),
        ("GONE GIRL", "GILLIAN FLYNN", None, 0.83),
        ("1984", "GEORGE ORWELL", None, 0.95),
        ("THE LEFT HAND OF DARKNESS", "URSULA K. LE GUIN", None, 0.58),
        ("STATION ELEVEN", "EMILY ST. JOHN MANDEL", None, 0.79),
    ]),
}

SPINE_COLOURS = [(122, 30, 38), (24, 58, 104), (196, 160, 62), (36, 92, 60), (210, 205, 190), (70, 48, 96),
                 (168, 80, 34), (30, 30, 34), (150, 40, 90), (60, 120, 140), (230, 120, 40), (90, 90, 96)]


def font(size):
    return ImageFont.load_default(size=size)


def text_colour(fill):
    return (245, 240, 228) if sum(fill) < 360 else (28, 24, 22)


def draw_spine(image, rect, title, author, fill, rng):
    """A spine in `rect` (pixels, upright): bar, two bands, title and author written bottom to top."""
    x0, y0, x1, y1 = rect
    draw = ImageDraw.Draw(image)
    shade = tuple(max(0, c - 28) for c in fill)
    draw.rectangle(rect, fill=fill, outline=shade, width=max(2, (x1 - x0) // 40))
    band = max(6, (y1 - y0) // 30)
    for top in (y0 + (y1 - y0) // 12, y1 - (y1 - y0) // 12 - band):
        draw.rectangle((x0 + 3, top, x1 - 3, top + band), fill=shade)
    # Lettering: rendered horizontally, turned to run bottom to top like most spines.
    width, height = x1 - x0, y1 - y0
    label = title + ("   " + author if author else "")
    size = max(10, int(width * 0.42))
    while size > 10 and font(size).getlength(label) > height * 0.78:
        size -= 1
    strip = Image.new("RGBA", (int(height * 0.8), int(width * 0.8)), (0, 0, 0, 0))
    ImageDraw.Draw(strip).text((strip.width / 2, strip.height / 2), label, font=font(size),
                               fill=text_colour(fill) + (255,), anchor="mm")
    turned = strip.rotate(90, expand=True)
    image.paste(turned, (x0 + (width - turned.width) // 2, y0 + (height - turned.height) // 2), turned)


def shelf_background(size, rng):
    width, height = size
    # A wall lit from above: a smooth vertical gradient (one column, stretched).
    column = Image.new("RGB", (1, height))
    column.putdata([(222 + 10 * y // height, 214 + 10 * y // height, 198 + 10 * y // height) for y in range(height)])
    image = column.resize(size, Image.Resampling.NEAREST)
    draw = ImageDraw.Draw(image)
    board = int(height * 0.93)
    draw.rectangle((0, board, width, height), fill=(120, 84, 52))
    draw.line((0, board, width, board), fill=(92, 62, 36), width=max(3, height // 200))
    return image, board


def layout(books, size, rng):
    """Spine rectangles left to right, resting on the board; returns (rect, box) per book."""
    width, height = size
    board = int(height * 0.93)
    x = int(width * 0.03)
    placed = []
    for _ in books:
        spine = int(width * rng.uniform(0.045, 0.085))
        top = int(height * rng.uniform(0.06, 0.2))
        rect = (x, top, x + spine, board - 1)
        box = dict(x=round(rect[0] / width, 4), y=round(rect[1] / height, 4),
                   width=round((rect[2] - rect[0]) / width, 4), height=round((rect[3] - rect[1]) / height, 4))
        placed.append((rect, box))
        x += spine + rng.randint(2, max(3, width // 200))
    return placed


def exif_orientation(value):
    """An EXIF block (big-endian TIFF) holding only the orientation tag."""
    ifd = struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, value, 0) + struct.pack(">I", 0)
    return b"Exif\x00\x00" + b"MM\x00\x2a" + struct.pack(">I", 8) + ifd


def save(image, path, quality, orientation=None):
    """Saves the upright `image`; with an orientation, stores it turned and tagged."""
    extra = {}
    if orientation == 6:
        image = image.transpose(Image.Transpose.ROTATE_90)   # counter-clockwise: shown upright after a clockwise turn
        extra["exif"] = exif_orientation(6)
    image.save(path, "JPEG", quality=quality, optimize=True, **extra)


def make_samples():
    rng = random.Random(15)
    for stem, shelf in SHELVES.items():
        image, _ = shelf_background(shelf["size"], rng)
        detections = []
        for (title, author, isbn, confidence), (rect, box), colour in zip(
                shelf["books"], layout(shelf["books"], shelf["size"], rng), rng.sample(SPINE_COLOURS, len(shelf["books"]))):
            draw_spine(image, rect, title, author, colour, rng)
            detection = dict(title=title, author=author, isbn=isbn)
            if confidence is not None:
                detection["confidence"] = confidence
            detection["boundingBox"] = box
            detections.append(detection)
        save(image, HERE / f"{stem}.jpg", quality=82, orientation=shelf["orientation"])
        (HERE / f"{stem}.json").write_text(json.dumps(detections, indent=2, ensure_ascii=False) + "\n")
    make_shelf_scan_photo(rng)


def make_shelf_scan_photo(rng):
    """samples/shelf-scan/shelf.jpg: spines exactly where samples/shelf-scan/scan.json's boxes are.

    3024 x 2268 (4:3 like the 4032 x 3024 the envelope sample names, smaller to stay under
    300 KB; the boxes are normalised, so they fit either). SLAUGHTERHOUSE-FIVE's box is deliberately invalid
    (y 1.15), so its spine is drawn at y 0.15; The Left Hand of Darkness has no box and stands in
    the gap after Piranesi."""
    scan = json.loads((SHELF_SCAN / "scan.json").read_text())
    size = (3024, 2268)
    image, _ = shelf_background(size, rng)
    extra_slots = iter([dict(x=0.652, y=0.12, width=0.052, height=0.81)])
    for detection, colour in zip(scan["detections"], SPINE_COLOURS * 2):
        box = detection.get("box") or next(extra_slots)
        y = box["y"] if box["y"] + box["height"] <= 1 else 0.15
        rect = (round(box["x"] * size[0]), round(y * size[1]),
                round((box["x"] + box["width"]) * size[0]) - 1, round((y + box["height"]) * size[1]) - 1)
        draw_spine(image, rect, detection["title"].upper(), (detection.get("author") or "").upper(), colour, rng)
    save(image, SHELF_SCAN / "shelf.jpg", quality=70)


def main():
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    make_samples()


if __name__ == "__main__":
    main()
