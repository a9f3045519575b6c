#!/usr/bin/env python3
"""Tests for python_baseline.py (stdlib unittest; uses a tiny generator of its own).

    python3 -m unittest benchmarks/import/test_python_baseline.py -v
"""
import csv
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "python_baseline.py")
HEADER = ("Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,"
          "Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,"
          "Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Recommended For,"
          "Recommended By,Owned Copies,Original Purchase Date,Original Purchase Location,Condition,"
          "Condition Description,BCID").split(",")


def tiny_export(path, n):
    """n Goodreads rows: quoted ISBN cells, an empty ISBN every 7th row, a multi-line review every 5th."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        for i in range(1, n + 1):
            core = f"978{i:09d}"[:12]
            check = str((10 - sum((1 if k % 2 == 0 else 3) * int(c) for k, c in enumerate(core)) % 10) % 10)
            isbn13 = "" if i % 7 == 0 else core + check
            review = f'Line one, "quoted"\nline two of {i}' if i % 5 == 0 else ""
            w.writerow([str(i), f"Title {i} (Series, #{i % 3 + 1})", f"Author {i}", f"{i}, Author",
                        "Co Author, Other Person" if i % 4 == 0 else "", f'="{isbn13[3:12] if isbn13 else ""}"',
                        f'="{isbn13}"', "4", "3.90", "Pub", "Paperback", "300", "2001", "1999", "", "2020/01/02", "",
                        "", "read", review, "", "", "1", "", "", "0", "", "", "", "", ""])


class PythonBaseline(unittest.TestCase):
    def run_baseline(self, csv_path, db):
        res = subprocess.run([sys.executable, BASELINE, csv_path, "--db", db], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        return res.stdout

    def test_inserts_one_row_per_data_row_with_cleaned_fields(self):
        with tempfile.TemporaryDirectory() as d:
            src, db = os.path.join(d, "gr.csv"), os.path.join(d, "b.sqlite")
            tiny_export(src, 200)
            out = self.run_baseline(src, db)
            self.assertIn("rows=200 ", out)
            con = sqlite3.connect(db)
            self.assertEqual(con.execute("SELECT count(*), count(DISTINCT id), min(row), max(row) FROM rows").fetchone(),
                             (200, 200, 1, 200))
            title, authors, isbn13, raw, rid = con.execute(
                "SELECT title, authors, isbn13, raw, id FROM rows WHERE row = 20").fetchone()
            self.assertEqual(title, "Title 20 (Series, #3)")
            self.assertEqual(authors, "Author 20; Co Author; Other Person")
            self.assertRegex(isbn13, r"^978\d{10}$")
            self.assertEqual(len(raw.split("\x1f")), 31)
            self.assertIn('Line one, "quoted"\nline two of 20', raw)
            self.assertRegex(rid, r"^[0-9a-f]{16}:20$")
            self.assertIsNone(con.execute("SELECT isbn13 FROM rows WHERE row = 14").fetchone()[0])

    def test_rerun_replaces_the_database_and_ids_follow_file_content(self):
        with tempfile.TemporaryDirectory() as d:
            a, b, db = os.path.join(d, "a.csv"), os.path.join(d, "b.csv"), os.path.join(d, "x.sqlite")
            tiny_export(a, 30)
            tiny_export(b, 31)
            self.run_baseline(a, db)
            self.run_baseline(a, db)
            con = sqlite3.connect(db)
            ids_a = {r[0] for r in con.execute("SELECT id FROM rows")}
            self.assertEqual(len(ids_a), 30)
            con.close()
            self.run_baseline(b, db)
            con = sqlite3.connect(db)
            ids_b = {r[0] for r in con.execute("SELECT id FROM rows")}
            self.assertEqual(len(ids_b), 31)
            self.assertFalse(ids_a & ids_b, "different content must give different id prefixes")

    def test_header_only_file_gives_zero_rows(self):
        with tempfile.TemporaryDirectory() as d:
            src, db = os.path.join(d, "h.csv"), os.path.join(d, "h.sqlite")
            tiny_export(src, 0)
            self.assertIn("rows=0 ", self.run_baseline(src, db))


if __name__ == "__main__":
    unittest.main()
