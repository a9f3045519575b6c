"""Compares two bookpipe libraries column by column: a SHA-256 of every column of every row of the
tables an import writes (records, record_origins, source_files, record_counts, rejected_rows),
in key order. The run's timestamps (records.updated_at, source_files.completed_at) are left out.

    python3 benchmarks/import/compare_libraries.py before.sqlite after.sqlite

Exits 1 when a column differs. Used to show that a speed change stores the same bytes.
"""
import hashlib
import sqlite3
import sys

TABLES = ["records", "record_origins", "source_files", "record_counts", "rejected_rows"]
TIMESTAMPS = {"records.updated_at", "source_files.completed_at"}


def digests(path):
    db = sqlite3.connect(path)
    result = {}
    for table in TABLES:
        columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
        order = ", ".join(columns[:2])
        rows = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for column in columns:
            digest = hashlib.sha256()
            for (value,) in db.execute(f"SELECT quote(hex({column})) || typeof({column}) FROM {table} ORDER BY {order}"):
                digest.update(value.encode() + b"\0")
            result[f"{table}.{column}"] = (rows, digest.hexdigest())
    return result


def main():
    before, after = digests(sys.argv[1]), digests(sys.argv[2])
    differing = [name for name in before if name not in TIMESTAMPS and before[name] != after.get(name)]
    compared = len([name for name in before if name not in TIMESTAMPS])
    for name in differing:
        print(f"differs: {name} {before[name]} {after.get(name)}")
    print(f"{compared - len(differing)} of {compared} columns identical "
          f"({before['records.key'][0]} records; timestamps not compared)")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
