#!/usr/bin/env python3
"""Writes a synthetic Open Library dump for measuring `bookpipe catalog import`.

The shape follows the real all-types dump (ol_dump_latest.txt.gz): one record per line,
`type \t key \t revision \t last_modified \t JSON`, grouped by type (authors, then editions, then
works, so editions come before the works they name), with the fields and irregularities of real
records: 1-3 authors per work, 1-4 editions per work, ISBN-10 and/or ISBN-13 (some editions
without), free-text publish dates, subtitles, publishers, descriptions of realistic length, and
a few dozen `/type/redirect` and `/type/delete` lines. Average line lengths are in the range of
the real dumps' (here: authors about 550 bytes, editions about 710, works about 900).

Deterministic: the same arguments always write the same file.

    python3 benchmarks/catalog/make_dump.py 200000 /tmp/ol-200k.txt
    python3 benchmarks/catalog/make_dump.py 200000 /tmp/ol-200k.txt.gz   # gzip-compressed
"""

import gzip
import json
import random
import sys

WORDS = (
    "river night house garden stone shadow light winter summer king queen city sea star road fire "
    "glass silver iron paper book letter secret memory island mountain forest storm dream song war "
    "peace heart moon sun wind rain bird wolf fox tower bridge door window journey return last first "
    "lost hidden broken golden little great old new dark bright silent wild long short red blue green "
    "black white empire kingdom history science life death love time world children daughter son "
    "mother father brother sister friend stranger traveller keeper maker thief hunter wanderer"
).split()
NAMES = (
    "Anna Ben Clara David Elena Farid Greta Hugo Ines Jonas Karin Luis Maya Nils Olga Pavel Rosa "
    "Sami Tove Ugo Vera Walter Xenia Yusuf Zoe Åsa Björn Chloé Dvořák Émile Łucja Søren Jürgen Noël"
).split()
SURNAMES = (
    "Andersen Berg Castro Dahl Eriksen Fischer García Hansen Ivanova Jensen Kowalski Lindqvist "
    "Müller Nakamura Okafor Petrov Quinn Rossi Schmidt Tanaka Urbano Varga Wójcik Xu Yilmaz Zhou "
    "Østergaard Brontë Márquez Dostoevsky"
).split()
PUBLISHERS = ["Penguin", "Vintage", "HarperCollins", "Gallimard", "Suhrkamp", "Ace Books", "Tor", "Bloomsbury"]
MONTHS = ["January", "March", "May", "June", "September", "October", "December"]


def isbn10(body9):
    total = sum((10 - i) * int(d) for i, d in enumerate(body9))
    check = (11 - total % 11) % 11
    return body9 + ("X" if check == 10 else str(check))


def isbn13(body12):
    total = sum((1 if i % 2 == 0 else 3) * int(d) for i, d in enumerate(body12))
    return body12 + str((10 - total % 10) % 10)


def title(rng):
    words = rng.sample(WORDS, rng.randint(1, 6))
    text = " ".join(words).capitalize()
    if rng.random() < 0.3:
        text = "The " + text[0].lower() + text[1:]
    return text


def stamp(rng, year):
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00.{rng.randint(0, 999999):06d}"


def line(kind, key, revision, modified, record):
    record = dict(record)
    record.update({"type": {"key": kind}, "key": key, "revision": revision, "latest_revision": revision,
                   "created": {"type": "/type/datetime", "value": "2008-04-01T03:28:50.625462"},
                   "last_modified": {"type": "/type/datetime", "value": modified}})
    return f"{kind}\t{key}\t{revision}\t{modified}\t{json.dumps(record, ensure_ascii=False)}\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} LINES OUTPUT(.txt|.txt.gz)")
    total = int(sys.argv[1])
    output = sys.argv[2]
    rng = random.Random(20260101)
    # Proportions close to the real dump: about 10 % authors, 55 % editions, 35 % works.
    authors = max(1, total // 10)
    works = max(1, total * 35 // 100)
    editions = max(1, total - authors - works - 40)
    opener = gzip.open if output.endswith(".gz") else open
    with opener(output, "wt", encoding="utf-8") as out:
        for number in range(1, authors + 1):
            name = f"{rng.choice(NAMES)} {rng.choice(SURNAMES)}"
            record = {"name": name, "personal_name": name,
                      "bio": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))}
            if rng.random() < 0.3:
                record["alternate_names"] = [name.upper(), name.split()[-1] + ", " + name.split()[0]]
            if rng.random() < 0.5:
                record["birth_date"] = str(rng.randint(1800, 1990))
            out.write(line("/type/author", f"/authors/OL{number}A", rng.randint(1, 12), stamp(rng, 2024), record))
        work_titles = [title(rng) for _ in range(works)]
        work_authors = [[f"/authors/OL{rng.randint(1, authors)}A" for _ in range(rng.choice([1, 1, 1, 2, 3]))]
                        for _ in range(works)]
        isbn_serial = 0
        for number in range(1, editions + 1):
            work = rng.randint(1, works)
            record = {"title": work_titles[work - 1] if rng.random() < 0.8 else title(rng),
                      "works": [{"key": f"/works/OL{work}W"}],
                      "authors": [{"key": key} for key in work_authors[work - 1]],
                      "publishers": [rng.choice(PUBLISHERS)],
                      "number_of_pages": rng.randint(80, 1200) if rng.random() < 0.8 else str(rng.randint(80, 900)),
                      "physical_format": rng.choice(["Paperback", "Hardcover", "Mass Market Paperback"]),
                      "languages": [{"key": "/languages/eng"}],
                      "publish_date": rng.choice([str(rng.randint(1900, 2025)),
                                                  f"{rng.choice(MONTHS)} {rng.randint(1950, 2025)}",
                                                  f"c{rng.randint(1900, 2000)}"]),
                      "source_records": [f"bwb:{rng.randint(10**12, 10**13)}"],
                      "covers": [rng.randint(1, 10**7)]}
            if rng.random() < 0.2:
                record["subtitle"] = title(rng)
            if rng.random() < 0.75:
                isbn_serial += 1
                body = f"{isbn_serial:09d}"
                if rng.random() < 0.8:
                    record["isbn_10"] = [isbn10(body)]
                if rng.random() < 0.8:
                    record["isbn_13"] = [isbn13("978" + body)]
            if rng.random() < 0.01:
                record["isbn_10"] = ["1234567890"]         # invalid: the check digit should be X
            out.write(line("/type/edition", f"/books/OL{number}M", rng.randint(1, 20), stamp(rng, 2025), record))
        for number in range(1, works + 1):
            record = {"title": work_titles[number - 1],
                      "authors": [{"author": {"key": key}, "type": {"key": "/type/author_role"}}
                                  for key in work_authors[number - 1]],
                      "first_publish_date": str(rng.randint(1800, 2025)),
                      "subjects": [rng.choice(WORDS).capitalize() for _ in range(rng.randint(0, 8))],
                      "description": {"type": "/type/text",
                                      "value": " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 80)))}}
            if rng.random() < 0.1:
                record["subtitle"] = title(rng)
            out.write(line("/type/work", f"/works/OL{number}W", rng.randint(1, 15), stamp(rng, 2025), record))
        for number in range(1, 41):
            kind = "/type/redirect" if number % 2 else "/type/delete"
            key = f"/works/OL{works + number}W"
            record = {"location": f"/works/OL{number}W"} if kind == "/type/redirect" else {}
            out.write(line(kind, key, 2, stamp(rng, 2025), record))


if __name__ == "__main__":
    main()
