#!/usr/bin/env python3
"""Regenerate the files in samples/ from samples/tools/sample_data.py (deterministic).

    python3 samples/tools/make_samples.py          # writes into samples/
    python3 samples/tools/validate_samples.py      # checks what was written

Writes:
    samples/goodreads_library_export.csv     Goodreads library export, 31-column header
    samples/storygraph_export.csv            StoryGraph export
    samples/shelf-scan/scan.json             bookshelf scan result (photo left out)
    samples/catalog/openlibrary-sample.txt   local catalogue, Open Library dump format
    samples/expected-matches.csv             what each row/detection should end as
"""
import csv
import json
import os
import sys
from datetime import datetime, timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from isbnlib import to10, to13  # noqa: E402
import sample_data as D  # noqa: E402

SAMPLES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GOODREADS_HEADER = [
    "Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13", "My Rating",
    "Average Rating", "Publisher", "Binding", "Number of Pages", "Year Published",
    "Original Publication Year", "Date Read", "Date Added", "Bookshelves", "Bookshelves with positions",
    "Exclusive Shelf", "My Review", "Spoiler", "Private Notes", "Read Count", "Recommended For",
    "Recommended By", "Owned Copies", "Original Purchase Date", "Original Purchase Location", "Condition",
    "Condition Description", "BCID",
]

STORYGRAPH_HEADER = [
    "Title", "Authors", "Contributors", "ISBN/UID", "Format", "Read Status", "Date Added", "Last Date Read",
    "Dates Read", "Read Count", "Moods", "Pace", "Character- or Plot-Driven?", "Strong Character Development?",
    "Loveable Characters?", "Diverse Characters?", "Flawed Characters?", "Star Rating", "Review",
    "Content Warnings", "Content Warning Description", "Tags", "Owned?",
]

# Invented key ranges (see samples/README.md): not real Open Library records.
AUTHOR_BASE, WORK_BASE, EDITION_BASE, COVER_BASE = 900001, 900001, 900001, 9000001
EPOCH = datetime(2021, 3, 1, 9, 0, 0)


def author_keys():
    return {aid: f"/authors/OL{AUTHOR_BASE + i}A" for i, aid in enumerate(D.AUTHORS)}


def catalogue_entries():
    """Yield (type, key, revision, last_modified, record) for every catalogue record, and a map
    work id -> work key, isbn13 -> (work id, edition key)."""
    akeys = author_keys()
    entries = []
    work_keys = {}
    isbn_index = {}
    n = 0

    def stamp(i, minutes):
        t = EPOCH + timedelta(days=i * 3, minutes=minutes, microseconds=(i * 7919) % 1000000)
        return t.strftime("%Y-%m-%dT%H:%M:%S.%f")

    for i, (aid, (name, personal, alternates)) in enumerate(D.AUTHORS.items()):
        created, modified = stamp(i, 1), stamp(i + 400, 2)
        rev = 2 + i % 5
        rec = {"type": {"key": "/type/author"}, "key": akeys[aid], "name": name}
        if personal:
            rec["personal_name"] = personal
        if alternates:
            rec["alternate_names"] = list(alternates)
        rec.update({
            "revision": rev, "latest_revision": rev,
            "created": {"type": "/type/datetime", "value": created},
            "last_modified": {"type": "/type/datetime", "value": modified},
        })
        entries.append(("/type/author", akeys[aid], rev, modified, rec))

    for w_i, w in enumerate(D.WORKS):
        wkey = f"/works/OL{WORK_BASE + w_i}W"
        work_keys[w["id"]] = wkey
        created, modified = stamp(w_i, 11), stamp(w_i + 500, 12)
        rev = 3 + w_i % 7
        rec = {"type": {"key": "/type/work"}, "key": wkey, "title": w["title"]}
        if w.get("subtitle"):
            rec["subtitle"] = w["subtitle"]
        rec["authors"] = [{"author": {"key": akeys[a]}, "type": {"key": "/type/author_role"}} for a in w["authors"]]
        rec["first_publish_date"] = w["first"]
        if not w.get("distractor") or w_i % 3 == 0:
            rec["covers"] = [COVER_BASE + w_i * 3, COVER_BASE + w_i * 3 + 1][: 1 + w_i % 2]
        rec.update({
            "revision": rev, "latest_revision": rev,
            "created": {"type": "/type/datetime", "value": created},
            "last_modified": {"type": "/type/datetime", "value": modified},
        })
        entries.append(("/type/work", wkey, rev, modified, rec))

        for ed in w["editions"]:
            ekey = f"/books/OL{EDITION_BASE + n}M"
            created, modified = stamp(n, 21), stamp(n + 600, 22)
            rev = 1 + n % 9
            title, subtitle = ed["title"], None
            if ": " in title and not title.startswith("2001:"):
                title, subtitle = title.split(": ", 1)
            rec = {"type": {"key": "/type/edition"}, "key": ekey, "title": title}
            if subtitle:
                rec["subtitle"] = subtitle
            rec["works"] = [{"key": wkey}]
            rec["authors"] = [{"key": akeys[a]} for a in w["authors"]]
            isbn10 = ed["isbn10"]
            isbn13 = ed["isbn13"] or (to13(isbn10) if isbn10 else None)
            if isbn13 and not isbn10 and not ed["only13"]:
                isbn10 = to10(isbn13)
            if isbn10:
                rec["isbn_10"] = [isbn10]
            if isbn13:
                rec["isbn_13"] = [isbn13]
                isbn_index[isbn13] = (w["id"], ekey)
            rec["publish_date"] = ed["publish_date"]
            rec["number_of_pages"] = ed["pages"]
            rec["publishers"] = [ed["publisher"]]
            rec["physical_format"] = ed["format"]
            rec["languages"] = [{"key": f"/languages/{ed['lang']}"}]
            rec.update({
                "revision": rev, "latest_revision": rev,
                "created": {"type": "/type/datetime", "value": created},
                "last_modified": {"type": "/type/datetime", "value": modified},
            })
            entries.append(("/type/edition", ekey, rev, modified, rec))
            n += 1
    return entries, work_keys, isbn_index


def write_catalogue(entries):
    # Open Library dumps are grouped by type (author < edition < work), so editions come
    # BEFORE the works they point at: an indexer must not assume works arrive first.
    order = {"/type/author": 0, "/type/edition": 1, "/type/work": 2}

    def knum(key):
        return int("".join(ch for ch in key if ch.isdigit()))

    entries = sorted(entries, key=lambda e: (order[e[0]], knum(e[1])))
    path = os.path.join(SAMPLES, "catalog", "openlibrary-sample.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for typ, key, rev, modified, rec in entries:
            f.write(f"{typ}\t{key}\t{rev}\t{modified}\t{json.dumps(rec, ensure_ascii=False)}\n")
    return path


def goodreads_isbns(spec):
    """(ISBN, ISBN13) cell values for a row's ISBN spec."""
    if spec is None:
        return '=""', '=""'
    if spec.startswith("13:"):
        return '=""', f'="{spec[3:]}"'
    return f'="{spec}"', f'="{to13(spec)}"'


def write_goodreads(table=None, name="goodreads_library_export.csv"):
    rows = sorted(table or D.GOODREADS, key=lambda r: (r[15], r[1]), reverse=True)  # newest added first
    positions = {}
    out = []
    for r in rows:
        (wid, book_id, title, author, lf, addl, isbn, rating, avg, publisher, binding, pages, year, orig,
         date_read, date_added, shelves, excl, review, read_count, owned) = r
        names = [s.strip() for s in shelves.split(",") if s.strip()]
        if excl != "read":
            names.append(excl)
        names = sorted(set(names))
        pos = []
        for s in names:
            positions[s] = positions.get(s, 0) + 1
            pos.append(f"{s} (#{positions[s]})")
        i10, i13 = goodreads_isbns(isbn)
        out.append([
            str(book_id), title, author, lf, addl, i10, i13, str(rating), f"{avg:.2f}", publisher, binding,
            str(pages), str(year), str(orig), date_read, date_added, ", ".join(names), ", ".join(pos), excl,
            review, "", "", str(read_count), "", "", str(owned), "", "", "", "", "",
        ])
    path = os.path.join(SAMPLES, name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(GOODREADS_HEADER)
        w.writerows(out)
    return path, rows


def december_goodreads():
    """The same Goodreads list exported a month later (what the README's quick start imports again):
    Norwegian Wood finished and rated, Children of Dune removed from the list, Kafka on the Shore added."""
    rows = []
    for r in D.GOODREADS:
        if r[0] == "childrenofdune":
            continue
        if r[0] == "norwegian":
            r = list(r)
            r[7], r[14], r[16], r[17], r[19] = 5, "2023/12/02", "translated", "read", 1
            r = tuple(r)
        rows.append(r)
    rows.append(("x_kafka", 4929, "Kafka on the Shore", "Haruki Murakami", "Murakami, Haruki", "Philip Gabriel",
                 "1400079276", 0, 4.15, "Vintage International", "Paperback", 467, 2006, 2002, "", "2023/11/20",
                 "translated", "to-read", "", 0, 0))
    return rows


def sg_cell(value, always_quote):
    if value == "":
        return '""' if always_quote else ""
    if any(ch in value for ch in ',"\n\r'):
        return '"' + value.replace('"', '""') + '"'
    return value


def write_storygraph():
    # StoryGraph writes some empty cells as "" and others as nothing (see the fixture).
    quote_empty = {"Contributors", "Last Date Read", "Dates Read", "Moods", "Review", "Content Warnings",
                   "Content Warning Description", "Tags"}
    lines = [",".join(STORYGRAPH_HEADER)]
    for (wid, title, authors, contrib, uid, fmt, status, added, last_read, stars, moods, pace, owned) in D.STORYGRAPH:
        start = ""
        if last_read:
            d = datetime.strptime(last_read, "%Y/%m/%d") - timedelta(days=11)
            start = d.strftime("%Y/%m/%d")
        vals = {
            "Title": title, "Authors": authors, "Contributors": contrib, "ISBN/UID": uid, "Format": fmt,
            "Read Status": status, "Date Added": added, "Last Date Read": last_read,
            "Dates Read": f"{start}-{last_read}" if last_read else "", "Read Count": "1" if status == "read" else "0",
            "Moods": moods, "Pace": pace, "Star Rating": stars, "Owned?": owned,
        }
        cells = [sg_cell(vals.get(h, ""), h in quote_empty) for h in STORYGRAPH_HEADER]
        lines.append(",".join(cells))
    path = os.path.join(SAMPLES, "storygraph_export.csv")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(lines) + "\n")
    return path


def write_scan():
    dets = []
    for wid, title, author, conf, box in D.SCAN:
        d = {"title": title, "author": author}
        if conf is not None:
            d["confidence"] = conf
        if box == "invalid":
            # y outside 0..1 and y + height > 1: kept, flagged, whole photo used for review.
            d["box"] = {"x": 0.527, "y": 1.15, "width": 0.055, "height": 0.8}
        elif box is not None:
            d["box"] = box
        dets.append(d)
    doc = {"photo": "shelf.jpg", "detections": dets}
    path = os.path.join(SAMPLES, "shelf-scan", "scan.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(doc, f, ensure_ascii=False, indent=2)
        f.write("\n")
    return path


def write_expected(gr_rows, work_keys):
    path = os.path.join(SAMPLES, "expected-matches.csv")
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["file", "row", "title", "expected_work_key", "note"])
        for i, r in enumerate(gr_rows, 1):
            wid = r[0]
            if wid in D.ABSENT:
                w.writerow(["goodreads_library_export.csv", i, r[2], "", "absent from catalogue: must end notFound or needsCandidateSelection, never enriched"])
            else:
                note = "ISBN match" if r[6] else "no ISBN: title/author match"
                w.writerow(["goodreads_library_export.csv", i, r[2], work_keys[wid], note])
        for i, r in enumerate(D.STORYGRAPH, 1):
            note = "ISBN match" if r[4] else "no ISBN: title/author match"
            w.writerow(["storygraph_export.csv", i, r[1], work_keys[r[0]], note])
        for i, r in enumerate(D.SCAN, 1):
            conf = r[3]
            review = "needsReview (confidence < 0.60)" if conf is not None and conf < 0.60 else "verified"
            extra = "; box invalid" if r[4] == "invalid" else ("; box missing" if r[4] is None else "")
            extra += "; confidence missing" if conf is None else ""
            w.writerow(["shelf-scan/scan.json", i, r[1], work_keys[r[0]], f"title/author match; {review}{extra}"])
    return path


def main():
    entries, work_keys, _ = catalogue_entries()
    print(write_catalogue(entries))
    gr_path, gr_rows = write_goodreads()
    print(gr_path)
    print(write_goodreads(december_goodreads(), "goodreads_library_export-december.csv")[0])
    print(write_storygraph())
    print(write_scan())
    print(write_expected(gr_rows, work_keys))


if __name__ == "__main__":
    main()
