#!/usr/bin/env python3
"""Writes "next month's" dump from a dump written by make_dump.py, for measuring a re-import.

Every hundredth author, work or edition gets a new revision (and a changed title or name), 1,000 new
works (one edition each, with an ISBN-13) are appended, and 100 existing editions are removed by
`/type/delete` lines, as the all-types dump removes them. Everything else is copied unchanged.
Deterministic.

    python3 benchmarks/catalog/make_newer_dump.py /tmp/ol-320k.txt /tmp/ol-320k-next.txt
"""

import json
import sys

DATE = "2026-12-01T00:00:00.000000"


def isbn13(number):
    digits = f"979{number:09d}"
    total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits))
    return digits + str((10 - total % 10) % 10)


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} DUMP NEWER_DUMP")
    records = changed = deleted = 0
    with open(sys.argv[1], encoding="utf-8") as source, open(sys.argv[2], "w", encoding="utf-8") as out:
        for line in source:
            fields = line.rstrip("\n").split("\t", 4)
            kind = fields[0]
            if kind in ("/type/author", "/type/work", "/type/edition"):
                records += 1
                if kind == "/type/edition" and records % 1000 == 7 and deleted < 100:
                    deleted += 1
                    body = {"type": {"key": "/type/delete"}, "key": fields[1], "revision": int(fields[2]) + 1}
                    out.write("\t".join(["/type/delete", fields[1], str(int(fields[2]) + 1), DATE, json.dumps(body)]) + "\n")
                    continue
                if records % 100 == 0:
                    changed += 1
                    body = json.loads(fields[4])
                    field = "name" if kind == "/type/author" else "title"
                    body[field] = body.get(field, "") + " revised"
                    body["revision"] = int(fields[2]) + 1
                    fields[2] = str(int(fields[2]) + 1)
                    fields[3] = DATE
                    fields[4] = json.dumps(body, ensure_ascii=False)
                    line = "\t".join(fields) + "\n"
            out.write(line)
        for number in range(1, 1001):
            work = f"/works/OL{900000 + number}W"
            edition = f"/books/OL{900000 + number}M"
            title = f"Newly added work number {number}"
            out.write("\t".join(["/type/edition", edition, "1", DATE, json.dumps({
                "key": edition, "title": title, "works": [{"key": work}], "isbn_13": [isbn13(number)],
                "authors": [{"key": "/authors/OL1A"}]})]) + "\n")
            out.write("\t".join(["/type/work", work, "1", DATE, json.dumps({
                "key": work, "title": title, "authors": [{"author": {"key": "/authors/OL1A"}}]})]) + "\n")
    print(f"{sys.argv[2]}: {changed} records with a new revision, 1000 works and editions added, {deleted} editions deleted")


if __name__ == "__main__":
    main()
