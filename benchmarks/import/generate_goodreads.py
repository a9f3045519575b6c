#!/usr/bin/env python3
"""Generate a synthetic Goodreads library export for import benchmarks.

The file looks like what Goodreads writes: the 31-column header, ISBNs as Excel formulas
(the cell value is ="0439023483", with valid check digits; some rows have empty ="" ones), titles with
commas, quotes and series parentheticals, some non-ASCII titles and authors, and some reviews
with embedded newlines, quotes and HTML. The output is deterministic for a given seed.

    python3 benchmarks/import/generate_goodreads.py                      # 1,000,000 rows, about 220 MB
    python3 benchmarks/import/generate_goodreads.py --rows 1500 --output samples/big.csv

Only the standard library is used.
"""
import argparse
import csv
import os
import random
import sys

HEADER = [
    "Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13", "My Rating",
    "Average Rating", "Publisher", "Binding", "Number of Pages", "Year Published", "Original Publication Year",
    "Date Read", "Date Added", "Bookshelves", "Bookshelves with positions", "Exclusive Shelf", "My Review",
    "Spoiler", "Private Notes", "Read Count", "Recommended For", "Recommended By", "Owned Copies",
    "Original Purchase Date", "Original Purchase Location", "Condition", "Condition Description", "BCID",
]

WORDS = (
    "night river house garden winter stone shadow light city queen king empire song fire sea glass "
    "silver iron paper secret forgotten last first lost hidden wild quiet broken golden dark long "
    "little great other strange small northern southern burning falling rising endless"
).split()
NOUNS = (
    "Road Wind Heart Tower Crown Island Mirror Library Machine Station Orchard Harbour Forest Mountain "
    "Archive Letter Daughter Son Thief Witch Engineer Map Clock Bridge Door Lantern"
).split()
SERIES = ["The Locked Tomb", "Dune", "Discworld", "Earthsea", "The Expanse", "Pippi Långstrump", "Wayfarers",
          "Murderbot Diaries", "Broken Earth", "Inspector Maigret"]
FIRST = ["Ursula", "Octavia", "Tamsyn", "Frank", "Terry", "Astrid", "N. K.", "Becky", "Martha", "Georges",
         "Zoë", "José", "Mélanie", "Haruki", "Chimamanda Ngozi", "Jorge Luis", "Olga", "Kazuo", "Ted", "Ann"]
LAST = ["Le Guin", "Butler", "Muir", "Herbert", "Pratchett", "Lindgren", "Jemisin", "Chambers", "Wells",
        "Simenon", "Ünal", "Saramago", "Dupuis", "Murakami", "Adichie", "Borges", "Tokarczuk", "Ishiguro",
        "Chiang", "Leckie"]
UNICODE_TITLES = ["Cien años de soledad", "Le Petit Prince", "Преступление и наказание", "ノルウェイの森",
                  "我穿我自己", "Smilla’s Sense of Snow", "Æsir and Vanir", "שלום עולם"]
PUBLISHERS = ["Tor", "Ace", "Penguin Books", "Harper Design", "Gallimard", "Vintage", "Orbit", "Faber", "Puffin"]
BINDINGS = ["Hardcover", "Paperback", "Kindle Edition", "Mass Market Paperback", "Audiobook", "ebook"]
SHELVES = ["read", "to-read", "currently-reading", "did-not-finish"]
REVIEW_BITS = [
    "Loved it.", "Mixed feelings.", "The \"twist\" was obvious, but fine.", "A clever,\nfunny ride.",
    "Slow start<br/><br/>great ending.", "Would read again; 5/5.", "Not for me,\n\nsorry.",
]


def isbn10_check(digits9):
    total = sum((10 - i) * int(d) for i, d in enumerate(digits9))
    check = (11 - total % 11) % 11
    return "X" if check == 10 else str(check)


def isbn13_check(digits12):
    total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits12))
    return str((10 - total % 10) % 10)


def title(rng):
    roll = rng.random()
    if roll < 0.05:
        base = rng.choice(UNICODE_TITLES)
    elif roll < 0.15:
        base = f"The {rng.choice(WORDS).title()}, the {rng.choice(NOUNS)}, and the {rng.choice(NOUNS)}"
    elif roll < 0.20:
        base = f"\"{rng.choice(WORDS).title()}\" {rng.choice(NOUNS)}"
    else:
        base = f"The {rng.choice(WORDS).title()} {rng.choice(NOUNS)}"
    if rng.random() < 0.3:
        series = rng.choice(SERIES)
        base += f" ({series}, #{rng.randint(1, 12)})" if rng.random() < 0.7 else f" ({series} #{rng.randint(1, 12)})"
    return base


def row(rng, book_id):
    first, last = rng.choice(FIRST), rng.choice(LAST)
    additional = ""
    if rng.random() < 0.15:
        additional = ", ".join(f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.08:
        isbn, isbn13 = '=""', '=""'
    else:
        core = f"{rng.randint(0, 10**9 - 1):09d}"
        isbn = f'="{core}{isbn10_check(core)}"'
        twelve = "978" + core
        isbn13 = f'="{twelve}{isbn13_check(twelve)}"'
    shelf = rng.choice(SHELVES)
    rating = rng.randint(0, 5) if shelf == "read" else 0
    year = rng.randint(1850, 2025)
    original = year - rng.randint(0, 80) if rng.random() < 0.6 else ""
    added = f"{rng.randint(2008, 2025)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}"
    read = f"{rng.randint(2008, 2025)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}" if shelf == "read" else ""
    review = ""
    if rng.random() < 0.12:
        review = " ".join(rng.choice(REVIEW_BITS) for _ in range(rng.randint(1, 3)))
    position = rng.randint(1, 400)
    return [
        str(book_id), title(rng), f"{first} {last}", f"{last}, {first}", additional, isbn, isbn13, str(rating),
        f"{rng.uniform(2.5, 4.9):.2f}", rng.choice(PUBLISHERS), rng.choice(BINDINGS), str(rng.randint(60, 1200)),
        str(year), str(original), read, added, shelf if shelf not in ("read",) else "", f"{shelf} (#{position})",
        shelf, review, "", "", "1" if shelf == "read" else "0", "", "", str(rng.randint(0, 1)), "", "", "", "", "",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="data rows (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=20261122, help="random seed (default 20261122)")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "..", "data",
                                                          "goodreads-1m.csv"),
                        help="output file ('-' for stdout; default benchmarks/data/goodreads-1m.csv)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.output == "-":
        out = sys.stdout
    else:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        out = open(args.output, "w", encoding="utf-8", newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for book_id in range(1, args.rows + 1):
        writer.writerow(row(rng, 10_000_000 + book_id * 7))
    if out is not sys.stdout:
        out.close()
        print(f"wrote {args.rows} rows, {os.path.getsize(args.output):,} bytes to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
