#!/usr/bin/env python3
"""Baseline for the 1M-row import benchmark: plain Python `csv` + `sqlite3`.

    python3 benchmarks/import/python_baseline.py EXPORT.csv [--db PATH]

Does work comparable to `bookpipe import EXPORT.csv --no-enrich`: hashes the file's content,
parses every data row with the csv module and inserts one row per data row into SQLite in ONE
transaction with `executemany` (fed by a generator, so memory does not grow with the file):

    rows(id TEXT PRIMARY KEY   -- "<first 16 hex of the file's SHA-256>:<row>"
         file, row,            -- path as given, 1-based data row
         title, authors,       -- Title; Author + Additional Authors joined with "; "
         isbn13,               -- ISBN13 cleaned of Goodreads' ="…" (NULL when empty)
         raw)                  -- the row's fields joined by \\x1f

The database file is replaced if it exists (default: EXPORT.csv.baseline.sqlite). Prints
`rows=N seconds=S` (S covers hashing, parsing and inserting, not interpreter start-up) and the
peak RSS from getrusage.
"""
import argparse
import csv
import hashlib
import os
import re
import resource
import sqlite3
import sys
import time

NON_ISBN = re.compile(r"[^0-9Xx]")


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def clean_isbn(cell):
    """'="9780441013593"' -> '9780441013593'; '=""' or '' -> None."""
    digits = NON_ISBN.sub("", cell).upper()
    return digits or None


def rows(path, prefix):
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            return
        col = {name.strip(): i for i, name in enumerate(header)}
        i_title = col.get("Title")
        i_author = col.get("Author")
        i_more = col.get("Additional Authors")
        i_isbn13 = col.get("ISBN13")

        def cell(fields, i):
            return fields[i] if i is not None and i < len(fields) else ""

        for n, fields in enumerate(reader, 1):
            author, more = cell(fields, i_author), cell(fields, i_more)
            authors = author if not more else "; ".join([author] + [a.strip() for a in more.split(",") if a.strip()])
            yield (f"{prefix}:{n}", path, n, cell(fields, i_title), authors,
                   clean_isbn(cell(fields, i_isbn13)), "\x1f".join(fields))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export", help="Goodreads library export (CSV)")
    ap.add_argument("--db", help="SQLite file to (re)create (default: EXPORT.baseline.sqlite)")
    args = ap.parse_args()
    db = args.db or args.export + ".baseline.sqlite"
    for suffix in ("", "-journal", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    csv.field_size_limit(2**31 - 1)

    start = time.perf_counter()
    prefix = file_digest(args.export)[:16]
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE rows (id TEXT PRIMARY KEY, file TEXT NOT NULL, row INTEGER NOT NULL, "
                "title TEXT, authors TEXT, isbn13 TEXT, raw TEXT NOT NULL)")
    with con:  # one transaction
        con.executemany("INSERT INTO rows (id, file, row, title, authors, isbn13, raw) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        rows(args.export, prefix))
    count = con.execute("SELECT count(*) FROM rows").fetchone()[0]
    con.close()
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows={count} seconds={seconds:.2f} peak_rss_mb={peak_mb:.1f} db={db}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
