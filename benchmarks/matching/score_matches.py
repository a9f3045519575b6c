#!/usr/bin/env python3
"""Score bookpipe's matches against the ground truth of the noisy export.

    bookpipe export --format json --output run.json
    python3 benchmarks/matching/score_matches.py run.json [--truth out/ground_truth.csv]
        [--file noisy_export.csv] [--min-precision 0.995] [--min-recall 0.95] [--json]

Reads the export contract of DESIGN.md §6: a JSON array (or JSON lines) of objects with
`source.row` (1-based data row), `source.file`, `status` (enriched / notFound / failed /
needsCandidateSelection / pending) and `match.workKey` (or match null). Only objects whose
source.file's base name equals --file are scored (default noisy_export.csv; "" scores all).

A row counts as MATCHED when status is "enriched" and match.workKey is set. Then:
    precision = correct matches / all matches (matches of absent books count as wrong)
    recall    = correct matches / rows whose book is in the catalogue
Exit status: 0 if precision >= --min-precision, recall >= --min-recall and no absent book was
matched; 1 otherwise; 2 on unreadable input.
"""
import argparse
import csv
import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STATUSES = ["enriched", "notFound", "failed", "needsCandidateSelection", "pending"]


def norm_key(k):
    """'/works/OL1W', 'OL1W' and 'works/OL1W' all mean the same work."""
    if not k:
        return ""
    return k.strip().rsplit("/", 1)[-1]


def load_export(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = json.loads(stripped)
    else:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not isinstance(data, list):
        raise ValueError("expected a JSON array or JSON lines of objects")
    return data


def load_truth(path):
    truth = {}
    with open(path, encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            truth[int(r["row"])] = r
    return truth


def score(export, truth, file_name="noisy_export.csv"):
    """Return a dict of figures. Pure function (used by the tests)."""
    by_row, duplicates, unknown_rows, skipped = {}, [], [], 0
    for obj in export:
        src = obj.get("source") or {}
        if file_name and os.path.basename(str(src.get("file", ""))) != file_name:
            skipped += 1
            continue
        row = src.get("row")
        if not isinstance(row, int) or row not in truth:
            unknown_rows.append(row)
            continue
        if row in by_row:
            duplicates.append(row)
        by_row[row] = obj

    status_counts = {s: 0 for s in STATUSES}
    status_counts["other"] = 0
    correct, wrong, absent_matched, missing = [], [], [], []
    present_total = sum(1 for t in truth.values() if t["expected_work_key"])
    per_tag = {}
    for row, t in sorted(truth.items()):
        expected = norm_key(t["expected_work_key"])
        tags = [x for x in t["noise"].split(";") if x] or ["clean"]
        for tag in tags:
            per_tag.setdefault(tag, {"rows": 0, "correct": 0, "wrong": 0, "unmatched": 0})["rows"] += 1
        obj = by_row.get(row)
        if obj is None:
            missing.append(row)
            for tag in tags:
                per_tag[tag]["unmatched"] += 1
            continue
        status = obj.get("status")
        status_counts[status if status in STATUSES else "other"] += 1
        match = obj.get("match") or {}
        got = norm_key(match.get("workKey")) if isinstance(match, dict) else ""
        matched = status == "enriched" and bool(got)
        entry = {"row": row, "title": t["title"], "author": t["author"], "expected": expected, "got": got,
                 "status": status, "noise": t["noise"]}
        if not matched:
            for tag in tags:
                per_tag[tag]["unmatched"] += 1
            continue
        if not expected:
            absent_matched.append(entry)
            for tag in tags:
                per_tag[tag]["wrong"] += 1
        elif got == expected:
            correct.append(entry)
            for tag in tags:
                per_tag[tag]["correct"] += 1
        else:
            wrong.append(entry)
            for tag in tags:
                per_tag[tag]["wrong"] += 1

    n_matched = len(correct) + len(wrong) + len(absent_matched)
    return {
        "rows_in_truth": len(truth),
        "rows_in_export": len(by_row),
        "present_in_catalogue": present_total,
        "absent_from_catalogue": len(truth) - present_total,
        "matched": n_matched,
        "correct": len(correct),
        "wrong_matches": len(wrong),
        "absent_matched": len(absent_matched),
        "precision": (len(correct) / n_matched) if n_matched else 1.0,
        "recall": (len(correct) / present_total) if present_total else 1.0,
        "status_counts": status_counts,
        "missing_rows": missing,
        "duplicate_rows": duplicates,
        "unknown_rows": unknown_rows,
        "skipped_other_files": skipped,
        "wrong": wrong,
        "absent": absent_matched,
        "per_noise": per_tag,
    }


def print_report(s, out=sys.stdout):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"rows: {s['rows_in_truth']} in ground truth ({s['present_in_catalogue']} in catalogue, "
      f"{s['absent_from_catalogue']} absent), {s['rows_in_export']} in export")
    p("status: " + ", ".join(f"{k} {v}" for k, v in s["status_counts"].items() if v))
    p(f"matched {s['matched']}: correct {s['correct']}, WRONG {s['wrong_matches']}, "
      f"ABSENT BOOKS MATCHED {s['absent_matched']}")
    p(f"precision {s['precision']:.4f}   recall {s['recall']:.4f}")
    if s["missing_rows"]:
        p(f"rows missing from the export: {len(s['missing_rows'])} (first: {s['missing_rows'][:10]})")
    if s["duplicate_rows"]:
        p(f"rows present more than once: {len(s['duplicate_rows'])} (first: {s['duplicate_rows'][:10]})")
    if s["unknown_rows"]:
        p(f"objects with a row not in the ground truth: {len(s['unknown_rows'])}")
    p("")
    p(f"{'noise':34} {'rows':>5} {'correct':>8} {'wrong':>6} {'unmatched':>10}")
    for tag, c in sorted(s["per_noise"].items()):
        p(f"{tag:34} {c['rows']:5d} {c['correct']:8d} {c['wrong']:6d} {c['unmatched']:10d}")
    for label, items in (("WRONG MATCHES", s["wrong"]), ("ABSENT BOOKS MATCHED", s["absent"])):
        if items:
            p("")
            p(f"{label}:")
            for e in items:
                p(f"  row {e['row']}: {e['title']!r} by {e['author']!r} -> {e['got']} "
                  f"(expected {e['expected'] or 'none: absent'}; noise {e['noise'] or '-'})")


def main():
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` must not print a traceback
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export", help="bookpipe export --format json (or jsonl) output")
    ap.add_argument("--truth", default=os.path.join(HERE, "out", "ground_truth.csv"))
    ap.add_argument("--file", default="noisy_export.csv",
                    help="score only objects whose source.file has this base name ('' = all)")
    ap.add_argument("--min-precision", type=float, default=0.995)
    ap.add_argument("--min-recall", type=float, default=0.95)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = ap.parse_args()
    try:
        export = load_export(args.export)
        truth = load_truth(args.truth)
    except (OSError, ValueError, KeyError) as e:
        print(f"score_matches: cannot read input: {e}", file=sys.stderr)
        return 2
    s = score(export, truth, args.file)
    if args.json:
        print(json.dumps({k: v for k, v in s.items()}, indent=2))
    else:
        print_report(s)
    ok = s["precision"] >= args.min_precision and s["recall"] >= args.min_recall and s["absent_matched"] == 0
    if not args.json:
        print("")
        print(f"{'PASS' if ok else 'FAIL'}: precision >= {args.min_precision}, recall >= {args.min_recall}, "
              f"no absent book matched")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
