#!/usr/bin/env python3
"""Two reference matchers in plain Python, to calibrate the benchmark (not part of bookpipe).

    python3 benchmarks/matching/reference_matcher.py --mode naive > /tmp/naive.json
    python3 benchmarks/matching/reference_matcher.py --mode safe  > /tmp/safe.json
    python3 benchmarks/matching/score_matches.py /tmp/naive.json

Both read out/catalog.txt and out/noisy_export.csv and write bookpipe's export contract (JSON
array: source.file/row, title, authors, isbn13, status, match{workKey, title, score}, candidates).

naive: ISBN hit is accepted as is; otherwise the documented default scorer (title exact +100 /
       contains +50, author exact +50 / partial +25, year exact +30 / within 2 +15) and the best
       candidate is accepted at >= 60. Shows what the noise does to an unguarded scorer.
safe:  the same scores plus the safety rules of DESIGN.md §4: an ISBN hit is accepted only if
       title or author do not contradict it; otherwise acceptance needs an (almost) exact title,
       author agreement when the row names an author, and no runner-up that is as good. A row
       without an author never auto-matches by title alone. Everything else is
       needsCandidateSelection with the top 5 candidates.
"""
import argparse
import csv
import difflib
import html
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROMAN = {"i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"}
SERIES = re.compile(r"\s*\([^()]*#\s*\d+(\.\d+)?\)\s*$")


def fold(s):
    s = html.unescape(s or "")
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c))
    s = s.replace("ø", "o").replace("Ø", "O").replace("ł", "l").replace("Ł", "L").casefold()
    s = s.replace("&", " and ")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())


def title_forms(raw):
    t = SERIES.sub("", html.unescape(raw or ""))
    full = fold(t)
    main = fold(t.split(":", 1)[0]) if ":" in t and not re.match(r"^\d+:", t) else full
    return full, main


def author_key(raw):
    """(surname, first initial) from 'First Last', 'F. Last' or 'Last, First'."""
    raw = html.unescape(raw or "").strip()
    if "," in raw:
        last, first = [x.strip() for x in raw.split(",", 1)]
        raw = f"{first} {last}"
    toks = fold(raw).split()
    if not toks:
        return None
    return toks[-1], toks[0][0]


def to13(isbn10):
    core = "978" + isbn10[:9]
    return core + str((10 - sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(core)) % 10) % 10)


def load_catalogue(path):
    works, authors, editions = {}, {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            typ, key, _, _, js = line.rstrip("\n").split("\t", 4)
            rec = json.loads(js)
            if typ == "/type/work":
                works[key] = rec
            elif typ == "/type/author":
                authors[key] = rec
            elif typ == "/type/edition":
                editions.append(rec)
    isbn = {}
    for e in editions:
        for i in e.get("isbn_13", []):
            isbn[i] = e["works"][0]["key"]
        for i in e.get("isbn_10", []):
            isbn.setdefault(to13(i), e["works"][0]["key"])
    info = {}
    by_title, by_token = {}, {}
    for k, w in works.items():
        names = []
        for a in w.get("authors", []):
            rec = authors.get(a["author"]["key"], {})
            names += [rec.get("name", "")] + rec.get("alternate_names", [])
        full = fold(w["title"] + (": " + w["subtitle"] if w.get("subtitle") else ""))
        main = fold(w["title"])
        info[k] = {"title": w["title"], "full": full, "main": main,
                   "authors": {author_key(n) for n in names if author_key(n)},
                   "year": int(w["first_publish_date"][:4]) if w.get("first_publish_date", "")[:4].isdigit() else None}
        for form in {full, main}:
            by_title.setdefault(form, set()).add(k)
        for tok in set(main.split()):
            by_token.setdefault(tok, set()).add(k)
    return info, isbn, by_title, by_token


def author_agrees(row_author, cand):
    ak = author_key(row_author)
    if ak is None:
        return None
    if ak in cand["authors"]:
        return "exact"
    if any(ak[0] == s for s, _ in cand["authors"]):
        return "partial"
    return "no"


def score_candidate(row, cand):
    full, main = row["full"], row["main"]
    if full == cand["full"] or main == cand["main"] or full == cand["main"] or main == cand["full"]:
        t = 100
    elif (main and cand["main"]) and (main in cand["main"] or cand["main"] in main):
        t = 50
    else:
        t = 0
    ag = author_agrees(row["author"], cand)
    a = {"exact": 50, "partial": 25}.get(ag, 0)
    y = 0
    if row["year"] and cand["year"]:
        if row["year"] == cand["year"]:
            y = 30
        elif abs(row["year"] - cand["year"]) <= 2:
            y = 15
    return {"total": t + a + y, "title": t, "author": a, "year": y, "authorAgreement": ag,
            "similarity": difflib.SequenceMatcher(None, main, cand["main"]).ratio()}


def candidates_for(row, info, by_title, by_token):
    keys = set(by_title.get(row["full"], set())) | set(by_title.get(row["main"], set()))
    toks = [t for t in row["main"].split() if len(t) > 2 and len(by_token.get(t, ())) < 200]
    pool = set()
    for t in toks:
        pool |= by_token.get(t, set())
    for k in pool:
        c = info[k]
        if c["main"] in row["main"] or row["main"] in c["main"] or \
                difflib.SequenceMatcher(None, row["main"], c["main"]).ratio() >= 0.88:
            keys.add(k)
    return keys


def match_row(row, info, isbn, by_title, by_token, mode):
    hit = isbn.get(row["isbn13"]) if row["isbn13"] else None
    cands = candidates_for(row, info, by_title, by_token)
    if hit:
        cands.add(hit)
    scored = sorted(((score_candidate(row, info[k]), k) for k in cands),
                    key=lambda x: (-x[0]["total"], -x[0]["similarity"], x[1]))
    if mode == "naive":
        if hit:
            return "enriched", hit, scored
        if scored and scored[0][0]["total"] >= 60:
            return "enriched", scored[0][1], scored
        return ("needsCandidateSelection" if scored else "notFound"), None, scored

    # safe
    if hit:
        s = score_candidate(row, info[hit])
        contradicts = s["similarity"] < 0.6 and s["title"] < 50 and s["authorAgreement"] not in ("exact", "partial")
        if not contradicts:
            return "enriched", hit, scored
    good = []
    for s, k in scored:
        cand_main = info[k]["main"]
        same_shape = len(cand_main.split()) == len(row["main"].split()) and \
            [t for t in cand_main.split() if t.isdigit() or t in ROMAN] == \
            [t for t in row["main"].split() if t.isdigit() or t in ROMAN]
        title_ok = s["title"] == 100 or (s["similarity"] >= 0.92 and same_shape)
        author_ok = s["authorAgreement"] == "exact" or (s["authorAgreement"] == "partial" and s["title"] == 100)
        if title_ok and author_ok:
            good.append((s, k))
    if len(good) == 1 and row["author"]:
        return "enriched", good[0][1], scored
    return ("needsCandidateSelection" if scored else "notFound"), None, scored


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["naive", "safe"], default="safe")
    ap.add_argument("--catalog", default=os.path.join(HERE, "out", "catalog.txt"))
    ap.add_argument("--export", default=os.path.join(HERE, "out", "noisy_export.csv"))
    args = ap.parse_args()
    info, isbn, by_title, by_token = load_catalogue(args.catalog)
    out = []
    with open(args.export, encoding="utf-8", newline="") as f:
        for n, r in enumerate(csv.DictReader(f), 1):
            i13 = r["ISBN13"].strip('="')
            i10 = r["ISBN"].strip('="')
            if not i13 and len(i10) == 10:
                i13 = to13(i10)
            full, main = title_forms(r["Title"])
            year = r["Original Publication Year"] or r["Year Published"]
            row = {"full": full, "main": main, "author": r["Author"], "isbn13": i13,
                   "year": int(year) if year.isdigit() else None}
            status, key, scored = match_row(row, info, isbn, by_title, by_token, args.mode)
            obj = {"id": f"bench:{n}", "source": {"file": os.path.basename(args.export), "row": n, "line": n + 1},
                   "title": r["Title"], "authors": [r["Author"]] if r["Author"] else [],
                   "isbn13": i13 or None, "status": status, "match": None}
            if key:
                obj["match"] = {"workKey": key, "title": info[key]["title"],
                                "score": next((s["total"] for s, k in scored if k == key), None), "source": "catalog"}
            elif scored:
                obj["candidates"] = [{"workKey": k, "title": info[k]["title"], "score": s["total"],
                                      "breakdown": {x: s[x] for x in ("title", "author", "year")}}
                                     for s, k in scored[:5]]
            out.append(obj)
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
