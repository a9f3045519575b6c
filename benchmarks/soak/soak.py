#!/usr/bin/env python3
"""The soak (issue 24): `bookpipe scan` against the fake vision backend with every fault on, then
`bookpipe import` of random mutations of the real exports, each for a time budget, watching the
processes' memory and file descriptors and accounting for every photo and row.

Not a timed test: it prints figures (benchmarks/soak/README.md keeps them) and exits 1 when a
check fails:
- memory stays flat: within each process, the resident set at the end is within --rss-growth of
  what it was a quarter of the way in, and the peaks of later rounds are within it of the first's;
- no descriptor leak: the most descriptors a process holds in a later round is within a few of
  the first round's;
- every photo is accounted for (scanned, failed, skipped, ... add up to the photos of the round)
  and every scanned photo has exactly its backend's books in the library, each once; a failed
  photo has none;
- every row is accounted for: each file's rows read = imported + rejected, and the library holds
  exactly the rows imported;
- no process dies of a signal.

Run through benchmarks/soak/run.sh, which builds the binaries and finds the fixtures.
"""
import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time


class Sampler:
    """Samples a process's resident set (MB) and open descriptors every `interval` seconds."""

    def __init__(self, pid, interval=0.25):
        self.pid, self.interval = pid, interval
        self.samples = []  # (seconds since start, rss MB, fds)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.start = time.monotonic()
        self.thread.start()

    def run(self):
        while not self.stopped.is_set():
            try:
                with open(f"/proc/{self.pid}/status") as status:
                    rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024
                fds = len(os.listdir(f"/proc/{self.pid}/fd"))
                self.samples.append((time.monotonic() - self.start, rss, fds))
            except (FileNotFoundError, ProcessLookupError, StopIteration):
                pass
            self.stopped.wait(self.interval)

    def finish(self):
        self.stopped.set()
        self.thread.join()
        return self.samples


def run_sampled(command, log_path):
    """Runs `command`, sampling it; returns (exit status, samples, output text)."""
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        sampler = Sampler(process.pid)
        status = process.wait()
        samples = sampler.finish()
    with open(log_path, errors="replace") as log:
        return status, samples, log.read()


def memory_figures(samples):
    """Peak RSS, RSS at a quarter of the run and at its end, most descriptors."""
    if not samples:
        return {"peak": 0, "quarter": 0, "end": 0, "fds": 0, "samples": 0}
    quarter = samples[len(samples) // 4][1]
    tail = [rss for _, rss, _ in samples[-max(1, len(samples) // 10):]]
    return {"peak": max(s[1] for s in samples), "quarter": quarter, "end": max(tail), "fds": max(s[2] for s in samples),
            "samples": len(samples)}


# --- scan -----------------------------------------------------------------------------------

def unique_photos(base, folder, count, start):
    """`count` copies of the JPEG `base`, each with its own comment segment (so its own content)."""
    os.makedirs(folder, exist_ok=True)
    data = open(base, "rb").read()
    paths = []
    for number in range(start, start + count):
        text = f"bookpipe soak photo {number}".encode()
        segment = b"\xff\xfe" + struct.pack(">H", len(text) + 2) + text
        path = os.path.join(folder, f"photo-{number:06d}.jpg")
        with open(path, "wb") as out:
            out.write(data[:2] + segment + data[2:])
        paths.append(path)
    return paths


def export_counts(bookpipe, library, work):
    """Records per source file (and per (file, index)) in the library, from `bookpipe export`."""
    out = os.path.join(work, "export.jsonl")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([bookpipe, "export", "--format", "jsonl", "--output", out, "--library", library],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    per_file = collections.Counter()
    per_place = collections.Counter()
    with open(out) as lines:
        for line in lines:
            record = json.loads(line)
            source = record.get("source", {})
            place = source.get("file")
            per_file[place] += 1
            per_place[(place, source.get("index", source.get("row")))] += 1
    return per_file, per_place


def scan_phase(args, failures):
    work = os.path.join(args.work, "scan")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    library = os.path.join(work, "library.sqlite")
    backend = subprocess.Popen([args.fake, "scan-backend", "--faults", "all", "--job-seconds", str(args.job_seconds),
                                "--max-jobs", "4", "--record", os.path.join(work, "backend.json")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = None
    for line in backend.stdout:
        if line.startswith("listening"):
            url = line.split()[1]
            break
    if url is None:
        failures.append("the fake backend did not start")
        return {}
    deadline = time.monotonic() + args.scan_minutes * 60
    rounds = []
    photos_by_round = []
    number = 0
    while time.monotonic() < deadline:
        folder = os.path.join(work, f"round-{len(rounds) + 1:03d}")
        photos = unique_photos(args.photo, folder, args.round_photos, number)
        number += len(photos)
        status, samples, output = run_sampled(
            [args.bookpipe, "scan", folder, "--backend", url, "--no-enrich", "--concurrency", "4",
             "--fallback-provider", "cloudflare", "--stream-timeout", "3", "--upload-retry-delays", "0.2,0.4,0.8",
             "--library", library, "--progress", "none"], os.path.join(folder + ".log"))
        figures = memory_figures(samples)
        figures.update(status=status, photos=len(photos), seconds=samples[-1][0] if samples else 0)
        summary = re.search(r"^scan: (\d+) photos?(.*)$", output, re.M)
        counts = {}
        if summary:
            for amount, what in re.findall(r"(\d+) ([a-z][a-z ()]*?)(?=,|$)", summary.group(2)):
                counts[what.strip()] = int(amount)
            found = int(summary.group(1))
            if not counts:
                counts["scanned"] = found
            if found != len(photos) or sum(counts.values()) != len(photos):
                failures.append(f"{folder}: {len(photos)} photos, summary says {summary.group(0)!r}")
        else:
            failures.append(f"{folder}: no scan summary (exit {status}); see {folder}.log")
        if status < 0 or status > 1:
            failures.append(f"{folder}: bookpipe scan ended with status {status}")
        figures["counts"] = counts
        # Each photo's line: "PHOTO: shelf photo, JPEG: 5 rows read, 5 imported, 0 rejected" or
        # "PHOTO: not imported (see the error above)".
        expected = {}
        for line in output.splitlines():
            match = re.match(r"^(\S+/photo-\d{6}\.jpg): (?:.*?(\d+) imported|not imported)", line)
            if match:
                expected[os.path.basename(match.group(1))] = int(match.group(2) or 0)
        missing = [photo for photo in photos if os.path.basename(photo) not in expected]
        if missing:
            failures.append(f"{folder}: {len(missing)} photos have no line of their own, e.g. {missing[0]}")
        rounds.append(figures)
        photos_by_round.append((photos, expected))
        print(f"  scan round {len(rounds)}: {len(photos)} photos in {figures['seconds']:.0f} s, {counts}, "
              f"peak {figures['peak']:.1f} MB, quarter {figures['quarter']:.1f} MB, end {figures['end']:.1f} MB, "
              f"fds {figures['fds']}, exit {status}", flush=True)
    backend.send_signal(signal.SIGTERM)
    backend.wait()

    # Every scanned photo has its backend's five books, once each; a failed one has none.
    per_file, per_place = export_counts(args.bookpipe, library, work)
    duplicates = sum(1 for count in per_place.values() if count > 1)
    wrong = 0
    stored_by_name = collections.Counter()
    for place, count in per_file.items():
        if place:
            stored_by_name[os.path.basename(place)] += count
    for photos, said in photos_by_round:
        for photo in photos:
            name = os.path.basename(photo)
            stored = stored_by_name[name]
            # A scanned photo has the backend's five books; a failed one none.
            expected = said.get(name, -1)
            if expected not in (0, 5) or stored != expected:
                wrong += 1
                if wrong <= 5:
                    failures.append(f"{photo}: {stored} books stored, expected {expected}")
    if duplicates:
        failures.append(f"{duplicates} detections stored more than once")
    return {"rounds": rounds, "photos": number, "records": sum(per_file.values()), "wrong": wrong,
            "duplicates": duplicates}


# --- import ---------------------------------------------------------------------------------

def mutate(data, rng):
    """A random mutation of an export's bytes: what hand edits, spreadsheets and broken copies do."""
    lines = data.split(b"\n")
    keep = rng.randint(2, min(len(lines), 400))
    lines = lines[:keep]
    for _ in range(rng.randint(1, 12)):
        kind = rng.randrange(12)
        index = rng.randrange(len(lines))
        line = lines[index]
        position = rng.randint(0, len(line))
        if kind == 0:
            lines[index] = line[:position] + b'"' + line[position:]
        elif kind == 1 and line:
            lines[index] = line[:position] + line[position + 1:]
        elif kind == 2:
            lines.insert(index, line)
        elif kind == 3:
            lines[index] = line[:position] + bytes([rng.randrange(256)]) + line[position:]
        elif kind == 4:
            lines[index] = line.replace(b",", b";")
        elif kind == 5:
            lines[index] = line[:position] + b"\r" + line[position:]
        elif kind == 6:
            lines[index] = line[:position] + rng.choice([b"=", b"+", b"@", b"-", b"=HYPERLINK(\"x\")"]) + line[position:]
        elif kind == 7:
            lines[index] = line[:position] + rng.choice([b"\xe9", b"\xc3", b"\xff\xfe", b"\xef\xbb\xbf"]) + line[position:]
        elif kind == 8:
            lines.insert(index, b"")
        elif kind == 9 and len(lines) > 2:
            other = rng.randrange(len(lines))
            lines[index], lines[other] = lines[other], lines[index]
        elif kind == 10:
            lines[index] = line + b"," * rng.randint(1, 30)
        else:
            lines[index] = line[:position]
    result = b"\n".join(lines)
    if rng.random() < 0.05:
        result = result.decode("utf-8", "replace").encode("utf-16")
    return result


def import_phase(args, failures):
    work = os.path.join(args.work, "import")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    library = os.path.join(work, "library.sqlite")
    rng = random.Random(args.seed)
    sources = [open(path, "rb").read() for path in args.exports]
    deadline = time.monotonic() + args.import_minutes * 60
    rounds = []
    imported_total = 0
    files_total = 0
    while time.monotonic() < deadline:
        folder = os.path.join(work, f"round-{len(rounds) + 1:03d}")
        os.makedirs(folder)
        files = []
        for _ in range(args.round_files):
            path = os.path.join(folder, f"export-{files_total:05d}.csv")
            files_total += 1
            with open(path, "wb") as out:
                out.write(mutate(rng.choice(sources), rng))
            files.append(path)
        status, samples, output = run_sampled(
            [args.bookpipe, "import", *files, "--no-enrich", "--library", library, "--progress", "none"],
            folder + ".log")
        figures = memory_figures(samples)
        figures.update(status=status, files=len(files), seconds=samples[-1][0] if samples else 0)
        read = imported = rejected = 0
        for match in re.finditer(r"^(\S+): .*?(\d+) rows? read, (\d+) imported, (\d+) rejected", output, re.M):
            rows, done, refused = int(match.group(2)), int(match.group(3)), int(match.group(4))
            read, imported, rejected = read + rows, imported + done, rejected + refused
            if done + refused != rows:
                failures.append(f"{match.group(1)}: {rows} rows read but {done} imported + {refused} rejected")
        not_imported = len(re.findall(r"^\S+: not imported", output, re.M))
        already = len(re.findall(r"^\S+: already imported", output, re.M))
        if status < 0 or status > 1:
            failures.append(f"{folder}: bookpipe import ended with status {status}; see {folder}.log")
        imported_total += imported
        figures.update(read=read, imported=imported, rejected=rejected, refused_files=not_imported, already=already)
        rounds.append(figures)
        print(f"  import round {len(rounds)}: {len(files)} files in {figures['seconds']:.0f} s, {read} rows read, "
              f"{imported} imported, {rejected} rejected, {not_imported} files refused, peak {figures['peak']:.1f} MB, "
              f"end {figures['end']:.1f} MB, fds {figures['fds']}, exit {status}", flush=True)
    # The library's own count, as the last import printed it ("library L: N records (...)"); an
    # export of half a million records in a debug build takes minutes.
    counts = re.findall(r"^library .*?: (\d+) records", output, re.M)
    records = int(counts[-1]) if counts else -1
    if records != imported_total:
        failures.append(f"the library holds {records} records; the imports said {imported_total} rows were imported")
    return {"rounds": rounds, "files": files_total, "records": records, "imported": imported_total}


def check_flat(name, rounds, args, failures):
    if not rounds:
        return
    first = rounds[0]
    for number, figures in enumerate(rounds, 1):
        # Within a process only when it ran long enough to have a steady state (40 samples, 10 s).
        if figures["samples"] >= 40 and figures["end"] > figures["quarter"] * (1 + args.rss_growth) + 5:
            failures.append(f"{name} round {number}: RSS grew from {figures['quarter']:.1f} MB to {figures['end']:.1f} MB")
        if number > 1 and figures["peak"] > first["peak"] * (1 + args.rss_growth) + 5:
            failures.append(f"{name} round {number}: peak RSS {figures['peak']:.1f} MB against {first['peak']:.1f} MB in round 1")
        if number > 1 and figures["fds"] > first["fds"] + 4:
            failures.append(f"{name} round {number}: {figures['fds']} descriptors against {first['fds']} in round 1")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bookpipe", required=True)
    parser.add_argument("--fake", required=True, help="bookpipe-fake-services")
    parser.add_argument("--photo", required=True, help="a small JPEG the photos are made from")
    parser.add_argument("--exports", nargs="+", required=True, help="real exports to mutate")
    parser.add_argument("--work", required=True)
    parser.add_argument("--scan-minutes", type=float, default=10)
    parser.add_argument("--import-minutes", type=float, default=10)
    parser.add_argument("--round-photos", type=int, default=120)
    parser.add_argument("--round-files", type=int, default=200)
    parser.add_argument("--job-seconds", type=float, default=0.3)
    parser.add_argument("--rss-growth", type=float, default=0.25, help="allowed growth, as a fraction")
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    failures = []
    started = time.monotonic()
    print(f"== scan: {args.scan_minutes} min against the fake backend with every fault (--faults all)", flush=True)
    scan = scan_phase(args, failures) if args.scan_minutes > 0 else {}
    print(f"== import: {args.import_minutes} min of mutated real exports", flush=True)
    imports = import_phase(args, failures) if args.import_minutes > 0 else {}
    check_flat("scan", scan.get("rounds", []), args, failures)
    check_flat("import", imports.get("rounds", []), args, failures)
    print(f"== figures ({time.monotonic() - started:.0f} s)")
    if scan:
        peaks = [r["peak"] for r in scan["rounds"]]
        print(f"scan: {len(scan['rounds'])} rounds, {scan['photos']} photos, {scan['records']} books stored, "
              f"{scan['wrong']} photos with a wrong number of books, {scan['duplicates']} duplicates; "
              f"peak RSS per round {min(peaks):.1f}-{max(peaks):.1f} MB; most fds {max(r['fds'] for r in scan['rounds'])}")
    if imports:
        peaks = [r["peak"] for r in imports["rounds"]]
        print(f"import: {len(imports['rounds'])} rounds, {imports['files']} mutated files, {imports['imported']} rows "
              f"imported = {imports['records']} records in the library; peak RSS per round {min(peaks):.1f}-{max(peaks):.1f} MB; "
              f"most fds {max(r['fds'] for r in imports['rounds'])}")
    for failure in failures:
        print("FAIL " + failure)
    print("soak: " + ("FAILED" if failures else "every check passed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
