#!/usr/bin/env python3
"""Tests for the matching benchmark's generator and scorer (stdlib unittest).

    python3 -m unittest benchmarks/matching/test_matching_bench.py -v
"""
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import score_matches  # noqa: E402
from generate_noisy_export import fold, isbn10_check, isbn13_check  # noqa: E402


def generate(out, seed=20240611):
    subprocess.run([sys.executable, os.path.join(HERE, "generate_noisy_export.py"), "--out", out, "--seed", str(seed)],
                   check=True, capture_output=True)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class GeneratedData(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = cls.tmp.name
        generate(cls.out)
        cls.works, cls.authors, cls.editions = {}, {}, []
        with open(os.path.join(cls.out, "catalog.txt"), encoding="utf-8") as f:
            for line in f:
                typ, key, rev, mod, js = line.rstrip("\n").split("\t")
                rec = json.loads(js)
                assert rec["key"] == key and rec["type"]["key"] == typ and str(rec["revision"]) == rev
                {"/type/work": cls.works, "/type/author": cls.authors}.get(typ, {})[key] = rec
                if typ == "/type/edition":
                    cls.editions.append(rec)
        cls.isbn_work = {i: e["works"][0]["key"] for e in cls.editions for i in e.get("isbn_13", [])}
        with open(os.path.join(cls.out, "noisy_export.csv"), encoding="utf-8", newline="") as f:
            cls.rows = list(csv.DictReader(f))
        with open(os.path.join(cls.out, "ground_truth.csv"), encoding="utf-8", newline="") as f:
            cls.truth = list(csv.DictReader(f))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_same_seed_gives_identical_files_and_another_seed_does_not(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            generate(a)
            generate(b, seed=7)
            for name in ("catalog.txt", "noisy_export.csv", "ground_truth.csv"):
                self.assertEqual(digest(os.path.join(self.out, name)), digest(os.path.join(a, name)), name)
            self.assertNotEqual(digest(os.path.join(a, "noisy_export.csv")), digest(os.path.join(b, "noisy_export.csv")))

    def test_sizes(self):
        self.assertEqual(len(self.works), 1500)
        self.assertEqual(len(self.rows), 600)
        absent = sum(1 for t in self.truth if not t["expected_work_key"])
        self.assertEqual(absent, 60)

    def test_catalogue_references_resolve(self):
        for e in self.editions:
            self.assertIn(e["works"][0]["key"], self.works)
            for a in e["authors"]:
                self.assertIn(a["key"], self.authors)
        for w in self.works.values():
            for a in w["authors"]:
                self.assertIn(a["author"]["key"], self.authors)

    def test_every_isbn_has_a_valid_check_digit_and_rows_agree(self):
        for e in self.editions:
            for i in e.get("isbn_13", []):
                self.assertEqual(isbn13_check(i[:12]), i[12], i)
            for i in e.get("isbn_10", []):
                self.assertEqual(isbn10_check(i[:9]), i[9], i)
        for r in self.rows:
            i10, i13 = r["ISBN"][2:-1], r["ISBN13"][2:-1]
            self.assertTrue(r["ISBN"].startswith('="') and r["ISBN"].endswith('"'))
            if i13:
                self.assertEqual(isbn13_check(i13[:12]), i13[12])
            if i10:
                self.assertEqual(i13[3:12], i10[:9])
                self.assertEqual(isbn10_check(i10[:9]), i10[9])

    def test_ground_truth_agrees_with_isbns(self):
        for t in self.truth:
            tags = t["noise"].split(";")
            hit = self.isbn_work.get(t["isbn13"])
            if not t["expected_work_key"]:
                self.assertIsNone(hit, f"absent row {t['row']} has an ISBN in the catalogue")
                continue
            self.assertIn(t["expected_work_key"], self.works)
            if "isbn_wrong" in tags:
                self.assertIsNotNone(hit)
                self.assertNotEqual(hit, t["expected_work_key"])
            elif "isbn_unknown" in tags:
                self.assertIsNone(hit)
            elif t["isbn13"]:
                self.assertEqual(hit, t["expected_work_key"], f"row {t['row']}")

    def test_absent_books_never_share_title_and_author_with_a_catalogue_work(self):
        by_title = {}
        for w in self.works.values():
            by_title.setdefault(fold(w["title"]).lower(), []).append(w)
        for t in self.truth:
            if t["expected_work_key"]:
                continue
            title = t["title"].split(" (")[0]
            surname = fold(t["author"]).split()[-1].lower()
            for w in by_title.get(fold(title).lower(), []):
                names = [fold(self.authors[a["author"]["key"]]["name"]).split()[-1].lower() for a in w["authors"]]
                self.assertNotIn(surname, names, f"absent row {t['row']} {title!r} looks like {w['key']}")

    def test_required_noise_is_present(self):
        tags = {}
        for t in self.truth:
            for tag in filter(None, t["noise"].split(";")):
                tags[tag] = tags.get(tag, 0) + 1
        for tag in ("series_suffix", "subtitle_removed", "subtitle_added", "author_last_first", "author_initials",
                    "diacritics_dropped", "isbn_missing", "isbn_wrong", "typo", "short_title",
                    "absent_same_title_other_author", "absent_near_title", "absent_sequel", "absent_novel"):
            self.assertGreaterEqual(tags.get(tag, 0), 5, tag)
        titles = {r["Title"] for r in self.rows}
        for short in ("It", "Emma", "Home", "Beloved"):
            self.assertIn(short, titles)

    def test_reference_safe_matcher_reaches_the_targets_and_naive_does_not(self):
        def run(mode):
            res = subprocess.run([sys.executable, os.path.join(HERE, "reference_matcher.py"), "--mode", mode,
                                  "--catalog", os.path.join(self.out, "catalog.txt"),
                                  "--export", os.path.join(self.out, "noisy_export.csv")],
                                 check=True, capture_output=True, text=True)
            truth = score_matches.load_truth(os.path.join(self.out, "ground_truth.csv"))
            return score_matches.score(json.loads(res.stdout), truth)
        safe, naive = run("safe"), run("naive")
        self.assertGreaterEqual(safe["precision"], 0.995)
        self.assertGreaterEqual(safe["recall"], 0.95)
        self.assertEqual(safe["absent_matched"], 0)
        self.assertGreater(naive["absent_matched"], 0)
        self.assertLess(naive["precision"], 0.995)


class Scorer(unittest.TestCase):
    TRUTH = {
        1: {"row": "1", "expected_work_key": "/works/OL1W", "title": "A", "author": "x", "isbn13": "", "noise": "typo"},
        2: {"row": "2", "expected_work_key": "/works/OL2W", "title": "B", "author": "y", "isbn13": "", "noise": ""},
        3: {"row": "3", "expected_work_key": "", "title": "C", "author": "z", "isbn13": "", "noise": "absent_novel"},
        4: {"row": "4", "expected_work_key": "/works/OL4W", "title": "D", "author": "w", "isbn13": "", "noise": ""},
    }

    @staticmethod
    def obj(row, status, key=None, file="out/noisy_export.csv"):
        return {"source": {"file": file, "row": row}, "status": status,
                "match": {"workKey": key} if key else None}

    def test_counts_correct_wrong_and_absent_matches(self):
        export = [self.obj(1, "enriched", "/works/OL1W"), self.obj(2, "enriched", "OL9W"),
                  self.obj(3, "enriched", "/works/OL3W"), self.obj(4, "needsCandidateSelection"),
                  self.obj(1, "enriched", "/works/OL1W", file="other.csv")]
        s = score_matches.score(export, self.TRUTH)
        self.assertEqual((s["correct"], s["wrong_matches"], s["absent_matched"]), (1, 1, 1))
        self.assertAlmostEqual(s["precision"], 1 / 3)
        self.assertAlmostEqual(s["recall"], 1 / 3)
        self.assertEqual(s["skipped_other_files"], 1)
        self.assertEqual(s["status_counts"]["needsCandidateSelection"], 1)

    def test_a_matched_key_without_enriched_status_is_not_a_match_and_missing_rows_are_reported(self):
        export = [self.obj(1, "needsCandidateSelection", "/works/OL1W"), self.obj(2, "enriched", "/works/OL2W")]
        s = score_matches.score(export, self.TRUTH)
        self.assertEqual(s["matched"], 1)
        self.assertEqual(s["missing_rows"], [3, 4])
        self.assertEqual(s["precision"], 1.0)
        self.assertAlmostEqual(s["recall"], 1 / 3)

    def test_cli_exit_status_follows_the_thresholds(self):
        with tempfile.TemporaryDirectory() as d:
            truth = os.path.join(d, "gt.csv")
            with open(truth, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(self.TRUTH[1]))
                w.writeheader()
                w.writerows(self.TRUTH.values())
            perfect = [self.obj(1, "enriched", "/works/OL1W"), self.obj(2, "enriched", "/works/OL2W"),
                       self.obj(3, "notFound"), self.obj(4, "enriched", "/works/OL4W")]
            bad = perfect[:2] + [self.obj(3, "enriched", "/works/OL4W"), perfect[3]]
            for export, want in ((perfect, 0), (bad, 1)):
                p = os.path.join(d, "run.jsonl")
                with open(p, "w") as f:
                    f.write("\n".join(json.dumps(o) for o in export))
                res = subprocess.run([sys.executable, os.path.join(HERE, "score_matches.py"), p, "--truth", truth],
                                     capture_output=True, text=True)
                self.assertEqual(res.returncode, want, res.stdout + res.stderr)
            res = subprocess.run([sys.executable, os.path.join(HERE, "score_matches.py"), os.path.join(d, "nope.json"),
                                  "--truth", truth], capture_output=True, text=True)
            self.assertEqual(res.returncode, 2)


if __name__ == "__main__":
    unittest.main()
