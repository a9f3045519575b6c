#!/usr/bin/env python3
"""Make a "next month" version of a Goodreads export for the re-import benchmark.

Every 100th row (1 %) gets another rating (My Rating) and every 200th of those another shelf too;
the rest is written back byte for byte as Python's csv module writes it (so unchanged rows stay
unchanged values). Deterministic.

    python3 benchmarks/reimport/make_newer_export.py benchmarks/data/goodreads_1000000.csv \
        benchmarks/data/goodreads_1000000_newer.csv
"""
import csv
import sys


def main(source: str, target: str) -> None:
    with open(source, newline="", encoding="utf-8") as infile, open(target, "w", newline="", encoding="utf-8") as out:
        reader = csv.reader(infile)
        writer = csv.writer(out, lineterminator="\n")
        header = next(reader)
        writer.writerow(header)
        rating = header.index("My Rating")
        shelf = header.index("Exclusive Shelf")
        changed = 0
        for number, row in enumerate(reader, start=1):
            if number % 100 == 0:
                row[rating] = "5" if row[rating] != "5" else "4"
                if number % 20000 == 0:
                    row[shelf] = "to-read" if row[shelf] != "to-read" else "read"
                changed += 1
            writer.writerow(row)
    print(f"{target}: {changed} rows changed", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
