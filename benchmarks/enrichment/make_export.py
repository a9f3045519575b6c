#!/usr/bin/env python3
"""Write a 1,500-row Goodreads export drawn from an Open Library dump (for the enrichment speed benchmark).

    python3 benchmarks/enrichment/make_export.py CATALOG.txt OUT.csv [--rows 1500] [--absent 75] [--seed 1]

One row per work (first edition's ISBN-13 where the edition has one, as Goodreads writes it:
="978…"), plus `--absent` rows of invented books the catalogue does not hold. Standard library only;
the same arguments give the same file.
"""
import argparse
import csv
import json
import random

HEADER = [
    "Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13", "My Rating",
    "Average Rating", "Publisher", "Binding", "Number of Pages", "Year Published",
    "Original Publication Year", "Date Read", "Date Added", "Bookshelves", "Bookshelves with positions",
    "Exclusive Shelf", "My Review", "Spoiler", "Private Notes", "Read Count", "Recommended For",
    "Recommended By", "Owned Copies", "Original Purchase Date", "Original Purchase Location", "Condition",
    "Condition Description", "BCID",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("catalog")
    parser.add_argument("output")
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--absent", type=int, default=75)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    authors, works, editions = {}, {}, {}
    with open(args.catalog, encoding="utf-8") as handle:
        for line in handle:
            kind, key, _, _, text = line.rstrip("\n").split("\t", 4)
            record = json.loads(text)
            if kind == "/type/author":
                authors[key] = record.get("name", "")
            elif kind == "/type/work":
                works[key] = record
            elif kind == "/type/edition":
                for work in record.get("works", []):
                    editions.setdefault(work["key"], []).append(record)
    keys = sorted(works)
    rng.shuffle(keys)
    rows = []
    for key in keys[: args.rows - args.absent]:
        work = works[key]
        author_keys = [a["author"]["key"] for a in work.get("authors", []) if "author" in a]
        author = authors.get(author_keys[0], "") if author_keys else ""
        edition = (editions.get(key) or [{}])[0]
        isbn13 = (edition.get("isbn_13") or [""])[0]
        year = str(work.get("first_publish_date", ""))[:4]
        rows.append((work["title"], author, isbn13, year))
    for index in range(args.absent):
        rows.append((f"Unwritten Chronicle {index + 1} of the Hollow Sea", f"Nobody Author{index}", "", "2001"))
    rng.shuffle(rows)
    with open(args.output, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for number, (title, author, isbn13, year) in enumerate(rows, 1):
            last_first = ", ".join(reversed(author.rsplit(" ", 1))) if " " in author else author
            isbn_cell = f'="{isbn13}"' if isbn13 else '=""'
            writer.writerow([number, title, author, last_first, "", '=""', isbn_cell, 0, "4.00", "", "Paperback", "",
                             year, year, "", "2024/01/01", "", "", "read", "", "", "", 1, "", "", 0, "", "", "", "", ""])
    with_isbn = sum(1 for row in rows if row[2])
    print(f"{args.output}: {len(rows)} rows, {with_isbn} with an ISBN-13, {args.absent} books absent from the catalogue")


if __name__ == "__main__":
    main()
