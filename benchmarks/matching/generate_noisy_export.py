#!/usr/bin/env python3
"""Write a realistic NOISY Goodreads export and the catalogue it is drawn from (deterministic).

    python3 benchmarks/matching/generate_noisy_export.py [--out DIR] [--seed N] [--works N] [--rows N]

Writes into DIR (default benchmarks/matching/out/):
    catalog.txt             ~1500 fictional works in Open Library dump format
                            (type \\t key \\t revision \\t last_modified \\t JSON; authors, editions, works)
    noisy_export.csv        ~600-row Goodreads library export (31-column header) with noise
    ground_truth.csv        row,expected_work_key,title,author,isbn13,noise
                            (row = 1-based data row; expected_work_key empty = book absent from
                             the catalogue, which must never be matched)

Everything is invented: titles, people, publishers and ISBNs (valid check digits, random
digits). Keys: authors /authors/OL7000001A…, works /works/OL7000001W…, editions /books/OL7000001M…
Standard library only; the same seed gives byte-identical files.
"""
import argparse
import csv
import hashlib
import json
import os
import random
import unicodedata
from datetime import datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))

GOODREADS_HEADER = [
    "Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13", "My Rating",
    "Average Rating", "Publisher", "Binding", "Number of Pages", "Year Published",
    "Original Publication Year", "Date Read", "Date Added", "Bookshelves", "Bookshelves with positions",
    "Exclusive Shelf", "My Review", "Spoiler", "Private Notes", "Read Count", "Recommended For",
    "Recommended By", "Owned Copies", "Original Purchase Date", "Original Purchase Location", "Condition",
    "Condition Description", "BCID",
]

# ---- vocabulary ---------------------------------------------------------------------------
ADJ = """Silent Hollow Crimson Glass Broken Hidden Last Forgotten Quiet Burning Winter Summer Distant
Golden Silver Iron Paper Salt Lonely Wild Secret Drowned Narrow Painted Borrowed Bitter Gentle Restless
Sleeping Falling Northern Southern Empty Lost Second Final Little Long Bright Dark Velvet Copper Stone
Midnight Morning Wandering Shattered Hungry Patient Invisible Crooked Amber Ashen Frozen Scarlet Tender
Fragile Heavy Luminous Ordinary Private Sudden""".split()
NOUN = """Harbor Orchard River Garden Lantern Mirror Kingdom Winter House Lighthouse Forest Island Letter
Daughter Son Widow Keeper Cartographer Clockmaker Tide Storm Bridge Compass Country Road Field Shore Sea
Mountain Valley Archive Library Crown Feather Thread Needle Bone Ember Orchid Falcon Raven Fox Wolf
Lantern Station Harvest Silence Promise Atlas Map Chapel Tower Gate Well Cellar Meadow Marsh Hour Season
Ledger Song Choir Alphabet Kitchen Window Door Ashes Vineyard Quarry Engine Circus Ballroom""".split()
PLACE = """Elsinore Marrow Vell Ashby Corrin Dunmere Halloway Kestrel Lanford Mirewood Norrath Oldcastle
Pellham Quarrin Ravensworth Saltmarsh Thornbury Umber Vantry Wexley Yarrow Zennor Brightwater Calder
Fenwick Glenrock Hartwell Islington Jarrow""".split()
ABSTRACT = """Grief Memory Hope Light Water Fire Time Distance Wonder Longing Mercy Courage Exile Home
Silence Chance Salt Belonging Gravity Witness""".split()
FIRST = """Anna Thomas Clara James Eleanor Samuel Margaret Daniel Ruth Henry Alice Peter Helen Jonah Iris
Oliver Nora Felix Ada Simon Maya Leo Hannah Isaac Vera Paul Lena Marcus Grace Adrian Rosa Hugo Julia
Victor Ingrid Tobias Miriam Elias Leah Arthur Sylvia Rafael Esther Owen Camille Nathan Lydia Martin Zoë
José Chloé Søren Björn Renée Łucja Agnès Andrés Günter Inés Malgorzata Dagný Hélène François""".split()
LAST = """Halloway Whitaker Pembrooke Ashworth Calloway Dunmore Everly Fairbanks Greaves Hartley Ingram
Jessop Kendrick Lockwood Marlowe Norcross Oakley Prescott Quinlan Radcliffe Sutherland Thornton Underwood
Vance Wetherby Yardley Abernathy Blackwood Carrington Davenport Ellsworth Fenwick Garrison Holloway Kingsley
Lindqvist Morrow Nightingale Osborne Pryce Rowntree Sinclair Tremaine Vasquez Winslow Müller García Novák
Dvořák Østergaard Ibáñez Çelik Lefèvre Sørensen Gómez Łukasiewicz Brontë Jiménez Nuñez Kowalczyk Åberg
Szabó Peña Ferreira""".split()
SUBTITLES = ["A Novel", "A Memoir", "Stories", "A History", "An Investigation",
             "The Untold Story of {n}", "A Journey Through {p}", "Notes from {p}", "How {a} Shapes Us",
             "On {a} and {a2}", "A Natural History of the {n}"]
PUBLISHERS = """Harbor Lane Press; Northgate Books; Kestrel & Finch; Saltmarsh House; Brightwater Editions;
Oldcastle Publishing; Pellham Review Press; Thornbury & Sons; Calder Street Books; Vantry Press;
Wexley Paperbacks; Fenwick House""".replace("\n", " ").split("; ")
BINDINGS = ["Paperback", "Hardcover", "Mass Market Paperback", "Kindle Edition", "Paperback", "Hardcover"]

# Short titles shared by several different authors in the catalogue (and by absent books).
SHARED_SHORT = ["It", "Emma", "Home", "Beloved", "Room", "Us", "Wild", "Dune", "Atonement", "Them"]


def fold(s):
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c))
    return s.replace("ø", "o").replace("Ø", "O").replace("ł", "l").replace("Ł", "L")


def isbn13_check(d12):
    return str((10 - sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(d12)) % 10) % 10)


def isbn10_check(d9):
    r = (11 - sum((10 - i) * int(c) for i, c in enumerate(d9)) % 11) % 11
    return "X" if r == 10 else str(r)


class Gen:
    def __init__(self, seed, n_works, n_rows):
        self.r = random.Random(seed)
        self.n_works = n_works
        self.n_rows = n_rows
        self.used_isbns = set()
        self.used_titles = set()

    # ---- identifiers ----
    def new_isbn13(self):
        while True:
            core = "978" + self.r.choice("01") + "".join(self.r.choice("0123456789") for _ in range(8))
            isbn = core + isbn13_check(core)
            if isbn not in self.used_isbns:
                self.used_isbns.add(isbn)
                return isbn

    @staticmethod
    def isbn10_of(isbn13):
        return isbn13[3:12] + isbn10_check(isbn13[3:12])

    # ---- people and titles ----
    def person(self):
        first, last = self.r.choice(FIRST), self.r.choice(LAST)
        roll = self.r.random()
        if roll < 0.12:
            return f"{first} {self.r.choice(FIRST)[0]}. {last}"       # middle initial
        if roll < 0.18:
            return f"{first[0]}. {self.r.choice(FIRST)[0]}. {last}"  # initials only
        if roll < 0.24:
            return f"{first} {self.r.choice(FIRST)} {last}"          # middle name
        return f"{first} {last}"

    def title(self):
        r = self.r
        for _ in range(1000):
            p = r.random()
            if p < 0.25:
                t = f"The {r.choice(ADJ)} {r.choice(NOUN)}"
            elif p < 0.40:
                t = f"The {r.choice(NOUN)} of {r.choice(PLACE)}"
            elif p < 0.52:
                t = f"{r.choice(ADJ)} {r.choice(NOUN)}s"
            elif p < 0.62:
                t = f"The {r.choice(NOUN)}'s {r.choice(NOUN)}"
            elif p < 0.70:
                noun = r.choice(NOUN)
                t = f"{'An' if noun[0] in 'AEIOU' else 'A'} {noun} for {r.choice(FIRST)}"
            elif p < 0.78:
                t = f"{r.choice(ABSTRACT)} and {r.choice(ABSTRACT)}"
            elif p < 0.84:
                t = f"The {r.choice(ADJ)} {r.choice(NOUN)} & the {r.choice(NOUN)}"
            elif p < 0.90:
                t = f"{r.choice(PLACE)}"
            elif p < 0.95:
                t = f"What the {r.choice(NOUN)} Knew"
            else:
                t = f"The {r.choice(NOUN)} at the End of the {r.choice(NOUN)}"
            if t.lower() not in self.used_titles:
                self.used_titles.add(t.lower())
                return t
        raise RuntimeError("title space exhausted")

    def subtitle(self):
        s = self.r.choice(SUBTITLES)
        return s.format(n=self.r.choice(NOUN), p=self.r.choice(PLACE), a=self.r.choice(ABSTRACT),
                        a2=self.r.choice(ABSTRACT))

    # ---- catalogue ----
    def build_catalogue(self):
        r = self.r
        authors = []          # dicts: name, alternates
        author_by_name = {}

        def author(name=None):
            name = name or self.person()
            if name in author_by_name:
                return author_by_name[name]
            a = {"i": len(authors), "name": name, "alternates": []}
            if fold(name) != name and r.random() < 0.5:
                a["alternates"].append(fold(name))
            authors.append(a)
            author_by_name[name] = a["i"]
            return a["i"]

        works = []

        def add_work(title, subtitle, auths, series=None, pos=None):
            year = r.randint(1890, 1969) if r.random() < 0.2 else r.randint(1970, 2023)
            w = {"i": len(works), "title": title, "subtitle": subtitle, "authors": auths, "year": year,
                 "series": series, "pos": pos, "editions": []}
            for e_i in range(r.choice([1, 1, 1, 2, 2, 3])):
                ed_year = min(2024, year + (0 if e_i == 0 else r.randint(1, 30)))
                has_isbn = ed_year >= 1970 and r.random() < 0.93
                isbn13 = self.new_isbn13() if has_isbn else None
                w["editions"].append({
                    "year": ed_year, "isbn13": isbn13,
                    "isbn10": self.isbn10_of(isbn13) if isbn13 and r.random() < 0.9 else None,
                    "pages": r.randint(96, 880), "publisher": r.choice(PUBLISHERS),
                    "binding": r.choice(BINDINGS if ed_year >= 2008 else BINDINGS[:3]),
                })
            works.append(w)
            return w

        # 1) shared short titles: 3-4 different authors each
        for t in SHARED_SHORT:
            for _ in range(r.randint(3, 4)):
                self.used_titles.add(t.lower())
                add_work(t, None, [author()])
        # 2) series
        while len(works) < int(self.n_works * 0.18):
            name = r.choice([f"The {r.choice(NOUN)} Chronicles", f"{r.choice(PLACE)} Trilogy",
                             f"The {r.choice(ADJ)} {r.choice(NOUN)} Saga", f"{r.choice(PLACE)} Mysteries"])
            a = author()
            for pos in range(1, r.randint(2, 5) + 1):
                add_work(self.title(), None, [a], name, pos)
        # 3) same full title, different authors (real catalogues have these)
        for _ in range(20):
            t = self.title()
            for _ in range(2):
                add_work(t, None, [author()])
        # 4) everything else; some prolific authors, some co-authored, some with subtitles
        prolific = [author() for _ in range(60)]
        while len(works) < self.n_works:
            auths = [r.choice(prolific) if r.random() < 0.35 else author()]
            if r.random() < 0.06:
                auths.append(author())
            sub = self.subtitle() if r.random() < 0.16 else None
            add_work(self.title(), sub, auths)
        return authors, works

    def write_catalogue(self, path, authors, works):
        epoch = datetime(2022, 1, 3, 8, 0, 0)
        lines = []

        def ts(i, salt):
            return (epoch + timedelta(minutes=i * 37 + salt, microseconds=(i * 104729 + salt) % 1000000)).strftime(
                "%Y-%m-%dT%H:%M:%S.%f")

        def meta(rec, typ, i, salt):
            rev = 1 + (i + salt) % 6
            rec["revision"] = rev
            rec["latest_revision"] = rev
            rec["created"] = {"type": "/type/datetime", "value": ts(i, salt)}
            mod = ts(i + 20000, salt)
            rec["last_modified"] = {"type": "/type/datetime", "value": mod}
            lines.append((typ, rec["key"], rev, mod, rec))

        for a in authors:
            a["key"] = f"/authors/OL{7000001 + a['i']}A"
            rec = {"type": {"key": "/type/author"}, "key": a["key"], "name": a["name"]}
            if a["alternates"]:
                rec["alternate_names"] = a["alternates"]
            meta(rec, "/type/author", a["i"], 1)
        n_ed = 0
        for w in works:
            w["key"] = f"/works/OL{7000001 + w['i']}W"
            rec = {"type": {"key": "/type/work"}, "key": w["key"], "title": w["title"]}
            if w["subtitle"]:
                rec["subtitle"] = w["subtitle"]
            rec["authors"] = [{"author": {"key": authors[a]["key"]}, "type": {"key": "/type/author_role"}}
                              for a in w["authors"]]
            rec["first_publish_date"] = str(w["year"])
            if w["series"]:
                rec["series"] = [f"{w['series']} #{w['pos']}"]
            if w["i"] % 3:
                rec["covers"] = [8000001 + w["i"]]
            meta(rec, "/type/work", w["i"], 2)
            for e in w["editions"]:
                e["key"] = f"/books/OL{7000001 + n_ed}M"
                rec = {"type": {"key": "/type/edition"}, "key": e["key"], "title": w["title"]}
                if w["subtitle"] and self.r.random() < 0.7:
                    rec["subtitle"] = w["subtitle"]
                rec["works"] = [{"key": w["key"]}]
                rec["authors"] = [{"key": authors[a]["key"]} for a in w["authors"]]
                if e["isbn10"]:
                    rec["isbn_10"] = [e["isbn10"]]
                if e["isbn13"]:
                    rec["isbn_13"] = [e["isbn13"]]
                rec["publish_date"] = str(e["year"])
                rec["number_of_pages"] = e["pages"]
                rec["publishers"] = [e["publisher"]]
                rec["physical_format"] = e["binding"]
                rec["languages"] = [{"key": "/languages/eng"}]
                meta(rec, "/type/edition", n_ed, 3)
                n_ed += 1
        order = {"/type/author": 0, "/type/edition": 1, "/type/work": 2}
        lines.sort(key=lambda l: (order[l[0]], l[1]))
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for typ, key, rev, mod, rec in lines:
                f.write(f"{typ}\t{key}\t{rev}\t{mod}\t{json.dumps(rec, ensure_ascii=False)}\n")
        return n_ed

    # ---- noise ----
    def typo(self, title):
        words = title.split(" ")
        idx = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if not idx:
            return title, False
        i = self.r.choice(idx)
        w = words[i]
        k = self.r.randint(1, len(w) - 2)
        op = self.r.choice(["swap", "drop", "double", "replace"])
        if op == "swap":
            w = w[:k] + w[k + 1] + w[k] + w[k + 2:]
        elif op == "drop":
            w = w[:k] + w[k + 1:]
        elif op == "double":
            w = w[:k] + w[k] + w[k:]
        else:
            w = w[:k] + self.r.choice("aeiourstn") + w[k + 1:]
        words[i] = w
        new = " ".join(words)
        return new, new != title

    def author_variant(self, name, tags):
        r = self.r
        parts = name.split()
        roll = r.random()
        if fold(name) != name and r.random() < 0.5:
            name = fold(name)
            parts = name.split()
            tags.append("diacritics_dropped")
        if roll < 0.06:
            tags.append("author_last_first")
            return f"{parts[-1]}, {' '.join(parts[:-1])}"
        if roll < 0.13:
            if parts[0].endswith("."):
                return name
            tags.append("author_initials")
            return " ".join([p[0] + "." if j < len(parts) - 1 else p for j, p in enumerate(parts)])
        if roll < 0.17:
            if len(parts) != 3:
                return name
            tags.append("author_middle_dropped")
            return f"{parts[0]} {parts[2]}"
        if roll < 0.19:
            tags.append("author_missing")
            return ""
        return name

    def absent_books(self, works, authors, n):
        r = self.r
        out = []
        kinds = ["absent_novel"] * 8 + ["absent_same_title_other_author"] * 4 + ["absent_sequel"] * 5 + \
                ["absent_near_title"] * 3
        catalogue_titles = {w["title"].lower() for w in works}
        def other_person(base):
            """A person whose surname differs from every author of `base` (clearly another author)."""
            surnames = {fold(authors[a]["name"]).split()[-1].lower() for a in base["authors"]}
            while True:
                p = self.person()
                if fold(p).split()[-1].lower() not in surnames:
                    return p

        for _ in range(n):
            kind = r.choice(kinds)
            base = r.choice(works)
            if kind == "absent_novel":
                title, auth = self.title(), self.person()
            elif kind == "absent_same_title_other_author":
                if r.random() < 0.4:
                    base = r.choice([w for w in works if w["title"] in SHARED_SHORT])
                title, auth = base["title"], other_person(base)
            elif kind == "absent_sequel":
                auth = authors[base["authors"][0]]["name"]
                inner = base["title"][0].lower() + base["title"][1:] if base["title"].startswith(("The ", "A ", "An ")) \
                    else base["title"]
                title = r.choice([f"Return to {inner}", f"{base['title']} II", f"After {inner}",
                                  f"Beyond {inner}", f"The Road to {base['title'].removeprefix('The ')}"])
                if base["series"]:
                    title = self.title()
            else:
                words = base["title"].split()
                j = r.randrange(len(words))
                repl = r.choice(ADJ + NOUN)
                words[j] = repl if words[j] not in ("The", "A", "of", "the", "and", "&") else words[j]
                title, auth = " ".join(words), other_person(base)
                if title == base["title"]:
                    title = f"{base['title']} Returns"
            if kind != "absent_same_title_other_author" and title.lower() in catalogue_titles:
                title, kind = self.title(), "absent_novel"
            series = None
            if kind == "absent_sequel" and base["series"]:
                last = max(w["pos"] for w in works if w["series"] == base["series"])
                series = (base["series"], last + 1)
            out.append({"title": title, "author": auth, "kind": kind, "series": series,
                        "year": r.randint(1950, 2024)})
        return out

    def build_export(self, authors, works):
        r = self.r
        n_absent = round(self.n_rows * 0.10)
        n_present = self.n_rows - n_absent
        short = [w for w in works if w["title"] in SHARED_SHORT]
        others = [w for w in works if w["title"] not in SHARED_SHORT]
        picked = r.sample(short, min(len(short), 24)) + r.sample(others, n_present - min(len(short), 24))
        all_isbn_editions = [(w, e) for w in works for e in w["editions"] if e["isbn13"]]
        items = [("present", w) for w in picked] + [("absent", a) for a in self.absent_books(works, authors, n_absent)]
        r.shuffle(items)

        rows, truth = [], []
        added = datetime(2024, 6, 1)
        for n, (kind, obj) in enumerate(items, 1):
            tags = []
            if kind == "present":
                w = obj
                title = w["title"]
                if w["title"] in SHARED_SHORT:
                    tags.append("short_title")
                if w["subtitle"]:
                    if r.random() < 0.5:
                        title = f"{title}: {w['subtitle']}"
                    else:
                        tags.append("subtitle_removed")
                elif r.random() < 0.04 and title not in SHARED_SHORT:
                    title = f"{title}: A Novel"
                    tags.append("subtitle_added")
                if len(title) > 8 and r.random() < 0.07:
                    title, did = self.typo(title)
                    if did:
                        tags.append("typo")
                if w["series"] and r.random() < 0.8:
                    title = f"{title} ({w['series']}, #{w['pos']})"
                    tags.append("series_suffix")
                if "&" in title:
                    title = title.replace("&", "&amp;")
                    tags.append("html_entity")
                names = [authors[a]["name"] for a in w["authors"]]
                author = self.author_variant(names[0], tags)
                additional = ", ".join(names[1:])
                ed = r.choice(w["editions"])
                if len([e for e in w["editions"] if e["isbn13"]]) > 1 and ed is not w["editions"][0]:
                    tags.append("isbn_other_edition")
                isbn13 = ed["isbn13"]
                isbn10 = ed["isbn10"]
                roll = r.random()
                if isbn13 is None:
                    tags.append("isbn_missing")
                elif roll < 0.18:
                    isbn13 = isbn10 = None
                    tags.append("isbn_missing")
                elif roll < 0.21:
                    while True:
                        ow, oe = r.choice(all_isbn_editions)
                        if ow is not w:
                            break
                    isbn13, isbn10 = oe["isbn13"], oe["isbn10"]
                    tags.append("isbn_wrong")
                elif roll < 0.23:
                    isbn13 = self.new_isbn13()
                    isbn10 = self.isbn10_of(isbn13)
                    tags.append("isbn_unknown")
                if isbn13 and not isbn10 and "isbn_wrong" not in tags:
                    tags.append("isbn13_only")
                year, orig = ed["year"], w["year"]
                pages, publisher, binding = ed["pages"], ed["publisher"], ed["binding"]
                expected = w["key"]
            else:
                a = obj
                tags.append(a["kind"])
                title = a["title"]
                if a["series"]:
                    title = f"{title} ({a['series'][0]}, #{a['series'][1]})"
                    tags.append("series_suffix")
                author = a["author"]
                additional = ""
                if r.random() < 0.5:
                    isbn13 = self.new_isbn13()
                    isbn10 = self.isbn10_of(isbn13)
                    tags.append("isbn_unknown")
                else:
                    isbn13 = isbn10 = None
                    tags.append("isbn_missing")
                year = orig = a["year"]
                pages, publisher, binding = r.randint(120, 600), r.choice(PUBLISHERS), r.choice(BINDINGS)
                expected = ""
            if author and "," not in author and author.split():
                parts = author.split()
                lf = f"{parts[-1]}, {' '.join(parts[:-1])}" if len(parts) > 1 else author
            else:
                lf = author
            shelf = r.choices(["read", "to-read", "currently-reading"], [0.62, 0.34, 0.04])[0]
            date_added = added - timedelta(days=n * 2 + r.randint(0, 1))
            date_read = (date_added + timedelta(days=r.randint(3, 60))).strftime("%Y/%m/%d") if shelf == "read" else ""
            rating = r.choice([0, 2, 3, 3, 4, 4, 4, 5, 5]) if shelf == "read" else 0
            rows.append([
                str(10000000 + r.randint(0, 89999999)), title, author, lf, additional,
                f'="{isbn10 or ""}"', f'="{isbn13 or ""}"', str(rating), f"{r.uniform(3.2, 4.6):.2f}",
                publisher, binding, str(pages), str(year), str(orig) if r.random() < 0.9 else "",
                date_read, date_added.strftime("%Y/%m/%d"), "" if shelf == "read" else shelf,
                "" if shelf == "read" else f"{shelf} (#{n})", shelf, "", "", "",
                "1" if shelf == "read" else "0", "", "", str(r.choice([0, 0, 1])), "", "", "", "", "",
            ])
            truth.append([str(n), expected, title, author, isbn13 or "", ";".join(tags)])
        return rows, truth


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--works", type=int, default=1500)
    ap.add_argument("--rows", type=int, default=600)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    g = Gen(args.seed, args.works, args.rows)
    authors, works = g.build_catalogue()
    cat_path = os.path.join(args.out, "catalog.txt")
    n_ed = g.write_catalogue(cat_path, authors, works)
    rows, truth = g.build_export(authors, works)

    csv_path = os.path.join(args.out, "noisy_export.csv")
    with open(csv_path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(GOODREADS_HEADER)
        w.writerows(rows)
    gt_path = os.path.join(args.out, "ground_truth.csv")
    with open(gt_path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["row", "expected_work_key", "title", "author", "isbn13", "noise"])
        w.writerows(truth)

    n_absent = sum(1 for t in truth if not t[1])
    print(f"catalogue: {len(authors)} authors, {len(works)} works, {n_ed} editions -> {cat_path}")
    print(f"export: {len(rows)} rows ({len(rows) - n_absent} in catalogue, {n_absent} absent) -> {csv_path}")
    print(f"ground truth -> {gt_path}")
    counts = {}
    for t in truth:
        for tag in filter(None, t[5].split(";")):
            counts[tag] = counts.get(tag, 0) + 1
    print("noise: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for p in (cat_path, csv_path, gt_path):
        print(f"sha256 {sha256(p)}  {os.path.basename(p)}")


if __name__ == "__main__":
    main()
