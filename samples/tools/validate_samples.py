#!/usr/bin/env python3
"""Check the files in samples/ for internal consistency. Exit status 1 on any problem.

Checks: ISBN check digits everywhere; ISBN-10 and ISBN-13 of a Goodreads row are the same
book; headers equal the shared fixtures' headers; every catalogue line has 5 tab-separated
fields whose type/key/revision agree with the JSON; keys unique; every edition's work and
author keys and every work's author keys resolve; every export/scan row's book is in the
catalogue (by ISBN when it has one, else by title + author) except the 3 deliberately absent
books, whose ISBNs and titles must NOT be in the catalogue; expected-matches.csv agrees.
"""
import csv
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from isbnlib import to13, valid10, valid13  # noqa: E402
import sample_data as D  # noqa: E402

SAMPLES = os.path.dirname(HERE)
FIXTURES = os.path.join(SAMPLES, "..", "..", "shared", "fixtures")
problems = []


def bad(msg):
    problems.append(msg)


def fold(s):
    s = unicodedata.normalize("NFKD", s.replace("&amp;", "&"))
    s = "".join(c for c in s if not unicodedata.combining(c)).casefold()
    return re.sub(r"[^a-z0-9]+", " ", s).strip()


def strip_series(title):
    return re.sub(r"\s*\([^()]*#\d+(\.\d+)?\)\s*$", "", title)


def clean_gr_isbn(v):
    m = re.fullmatch(r'="(.*)"', v)
    return m.group(1) if m else v


def load_catalogue():
    recs = {}
    path = os.path.join(SAMPLES, "catalog", "openlibrary-sample.txt")
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                bad(f"catalog line {ln}: {len(parts)} fields, want 5")
                continue
            typ, key, rev, modified, js = parts
            try:
                rec = json.loads(js)
            except json.JSONDecodeError as e:
                bad(f"catalog line {ln}: bad JSON: {e}")
                continue
            if rec.get("key") != key or rec.get("type", {}).get("key") != typ or str(rec.get("revision")) != rev:
                bad(f"catalog line {ln}: type/key/revision columns disagree with JSON")
            if rec.get("last_modified", {}).get("value") != modified:
                bad(f"catalog line {ln}: last_modified column disagrees with JSON")
            want = {"/type/edition": r"/books/OL\d+M", "/type/work": r"/works/OL\d+W", "/type/author": r"/authors/OL\d+A"}
            if typ not in want or not re.fullmatch(want[typ], key):
                bad(f"catalog line {ln}: key {key} does not fit type {typ}")
            if key in recs:
                bad(f"catalog line {ln}: duplicate key {key}")
            recs[key] = rec
    return recs


def main():
    recs = load_catalogue()
    editions = [r for r in recs.values() if r["type"]["key"] == "/type/edition"]
    works = {k: r for k, r in recs.items() if r["type"]["key"] == "/type/work"}
    authors = {k: r for k, r in recs.items() if r["type"]["key"] == "/type/author"}

    isbn_to_work = {}
    for e in editions:
        for w in e.get("works", []):
            if w["key"] not in works:
                bad(f"{e['key']}: work {w['key']} missing")
        for a in e.get("authors", []):
            if a["key"] not in authors:
                bad(f"{e['key']}: author {a['key']} missing")
        for i in e.get("isbn_10", []):
            if not valid10(i):
                bad(f"{e['key']}: invalid ISBN-10 {i}")
        for i in e.get("isbn_13", []):
            if not valid13(i):
                bad(f"{e['key']}: invalid ISBN-13 {i}")
            if i in isbn_to_work:
                bad(f"{e['key']}: ISBN-13 {i} on two editions")
            isbn_to_work[i] = e["works"][0]["key"]
        if e.get("isbn_10") and e.get("isbn_13") and to13(e["isbn_10"][0]) != e["isbn_13"][0]:
            bad(f"{e['key']}: ISBN-10 and ISBN-13 are different books")
    for k, w in works.items():
        for a in w.get("authors", []):
            if a["author"]["key"] not in authors or a["type"]["key"] != "/type/author_role":
                bad(f"{k}: bad author reference {a}")
    work_has_edition = {e["works"][0]["key"] for e in editions}
    for k in works:
        if k not in work_has_edition:
            bad(f"{k}: work without an edition")

    def author_names(work):
        out = set()
        for a in work["authors"]:
            rec = authors[a["author"]["key"]]
            out.add(fold(rec["name"]))
            out.update(fold(n) for n in rec.get("alternate_names", []))
        return out

    title_index = {}
    for k, w in works.items():
        title_index.setdefault(fold(w["title"]), []).append(k)
    for e in editions:
        t = e["title"] + (": " + e["subtitle"] if e.get("subtitle") else "")
        for form in {fold(e["title"]), fold(t)}:
            title_index.setdefault(form, []).append(e["works"][0]["key"])

    def find_by_title(title, author_list):
        t = fold(strip_series(title))
        cands = set(title_index.get(t, [])) | set(title_index.get(fold(strip_series(title).split(":")[0]), []))
        hits = []
        for k in cands:
            names = author_names(works[k])
            if any(fold(a) in names or any(fold(a).split()[-1] in n for n in names) for a in author_list):
                hits.append(k)
        return hits

    expected = {}
    with open(os.path.join(SAMPLES, "expected-matches.csv"), encoding="utf-8") as f:
        for r in csv.DictReader(f):
            expected[(r["file"], int(r["row"]))] = r["expected_work_key"]

    # ---- Goodreads --------------------------------------------------------------------
    gr_path = os.path.join(SAMPLES, "goodreads_library_export.csv")
    with open(gr_path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    with open(os.path.join(FIXTURES, "goodreads-export-bookwyrm.csv"), encoding="utf-8", newline="") as f:
        fixture_header = next(csv.reader(f))
    if rows[0] != fixture_header:
        bad("goodreads header differs from the fixture's 31-column header")
    absent_titles = {r[2] for r in D.GOODREADS if r[0] in D.ABSENT}
    seen_absent = set()
    n_no_isbn = n_only13 = 0
    for i, r in enumerate(rows[1:], 1):
        if len(r) != 31:
            bad(f"goodreads row {i}: {len(r)} fields")
            continue
        title, author = r[1], r[2]
        i10, i13 = clean_gr_isbn(r[5]), clean_gr_isbn(r[6])
        if not r[5].startswith('="') or not r[6].startswith('="'):
            bad(f"goodreads row {i}: ISBN cells not in =\"…\" form")
        if i10 and not valid10(i10):
            bad(f"goodreads row {i}: invalid ISBN-10 {i10}")
        if i13 and not valid13(i13):
            bad(f"goodreads row {i}: invalid ISBN-13 {i13}")
        if i10 and i13 and to13(i10) != i13:
            bad(f"goodreads row {i}: ISBN-10 {i10} and ISBN-13 {i13} are different books")
        if not i10 and not i13:
            n_no_isbn += 1
        if i13 and not i10:
            n_only13 += 1
        if r[18] not in ("read", "to-read", "currently-reading"):
            bad(f"goodreads row {i}: exclusive shelf {r[18]}")
        for col in (14, 15):
            if r[col] and not re.fullmatch(r"\d{4}/\d{2}/\d{2}", r[col]):
                bad(f"goodreads row {i}: date {r[col]}")
        exp = expected.get(("goodreads_library_export.csv", i))
        if exp is None:
            bad(f"goodreads row {i}: not in expected-matches.csv")
        if title in absent_titles:
            seen_absent.add(title)
            if i13 in isbn_to_work:
                bad(f"goodreads row {i}: absent book {title!r} has its ISBN in the catalogue")
            if find_by_title(title, [author]):
                bad(f"goodreads row {i}: absent book {title!r} found in the catalogue by title+author")
            if exp:
                bad(f"goodreads row {i}: absent book has an expected work")
            continue
        if i13:
            got = isbn_to_work.get(i13)
            if got is None:
                bad(f"goodreads row {i}: ISBN {i13} ({title}) not in the catalogue")
            elif got != exp:
                bad(f"goodreads row {i}: ISBN {i13} is work {got}, expected {exp}")
        else:
            hits = find_by_title(title, [author])
            if exp not in hits:
                bad(f"goodreads row {i}: {title!r} by {author} not found by title/author (hits {hits})")
    if seen_absent != absent_titles:
        bad(f"absent books missing from export: {absent_titles - seen_absent}")
    for needle in ("2001: A Space Odyssey", "&amp;"):
        if not any(needle in r[1] for r in rows[1:]):
            bad(f"goodreads: no title with {needle!r}")
    for t in ("It", "Emma"):
        if not any(r[1] == t for r in rows[1:]):
            bad(f"goodreads: no row titled {t!r}")
    if not any("\n" in r[19] and "," in r[19] and '"' in r[19] for r in rows[1:]):
        bad("goodreads: no review with comma, quote and newline")
    if n_no_isbn < 3 or n_only13 != 1:
        bad(f"goodreads: {n_no_isbn} rows without ISBN, {n_only13} with only ISBN-13")

    # ---- StoryGraph -------------------------------------------------------------------
    with open(os.path.join(SAMPLES, "storygraph_export.csv"), encoding="utf-8", newline="") as f:
        sg = list(csv.reader(f))
    with open(os.path.join(FIXTURES, "storygraph-export-bookwyrm.csv"), encoding="utf-8", newline="") as f:
        if sg[0] != next(csv.reader(f)):
            bad("storygraph header differs from the fixture's")
    for i, r in enumerate(sg[1:], 1):
        if len(r) != len(sg[0]):
            bad(f"storygraph row {i}: {len(r)} fields")
            continue
        uid = r[3]
        exp = expected.get(("storygraph_export.csv", i))
        if uid:
            i13 = uid if len(uid) == 13 else to13(uid)
            if not (valid13(uid) if len(uid) == 13 else valid10(uid)):
                bad(f"storygraph row {i}: invalid ISBN {uid}")
            if isbn_to_work.get(i13) != exp:
                bad(f"storygraph row {i}: ISBN {uid} -> {isbn_to_work.get(i13)}, expected {exp}")
        elif exp not in find_by_title(r[0], [a.strip() for a in r[1].split(",")]):
            bad(f"storygraph row {i}: {r[0]!r} not found by title/author")

    # ---- Scan -------------------------------------------------------------------------
    with open(os.path.join(SAMPLES, "shelf-scan", "scan.json"), encoding="utf-8") as f:
        scan = json.load(f)
    if not isinstance(scan.get("photo"), str) or os.path.isabs(scan["photo"]) or ".." in scan["photo"]:
        bad("scan: photo must be a relative path inside the scan folder")
    confs = [d.get("confidence") for d in scan["detections"]]
    if confs.count(None) != 1 or confs.count(0.6) != 1 or sum(1 for c in confs if c is not None and c < 0.6) < 2:
        bad(f"scan: confidence mix wrong: {confs}")
    n_missing_box = sum(1 for d in scan["detections"] if "box" not in d)
    n_invalid_box = 0
    for d in scan["detections"]:
        b = d.get("box")
        if b is not None:
            ok = all(0 <= b[k] <= 1 for k in ("x", "y", "width", "height")) and b["x"] + b["width"] <= 1 \
                and b["y"] + b["height"] <= 1 and b["width"] > 0 and b["height"] > 0
            n_invalid_box += not ok
    if n_missing_box != 1 or n_invalid_box != 1:
        bad(f"scan: {n_missing_box} missing and {n_invalid_box} invalid boxes, want 1 and 1")
    for i, d in enumerate(scan["detections"], 1):
        exp = expected.get(("shelf-scan/scan.json", i))
        names = [d["author"]] if "PRATCHETT" not in d["author"] else ["Terry Pratchett", "Neil Gaiman"]
        if exp not in find_by_title(d["title"], names):
            bad(f"scan detection {i}: {d['title']!r} not found by title/author")

    n_distractors = sum(1 for w in D.WORKS if w.get("distractor"))
    print(f"catalogue: {len(authors)} authors, {len(works)} works ({n_distractors} distractors), {len(editions)} editions")
    print(f"goodreads: {len(rows) - 1} rows ({n_no_isbn} without ISBN, {n_only13} ISBN-13 only, {len(absent_titles)} absent: {sorted(absent_titles)})")
    print(f"storygraph: {len(sg) - 1} rows; scan: {len(scan['detections'])} detections")
    if problems:
        print(f"{len(problems)} PROBLEM(S):")
        for p in problems:
            print("  -", p)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
