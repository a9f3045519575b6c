#!/usr/bin/env python3
"""Turns one benchmarks/scan run into its figures (stdlib only).

Reads the fake backend's record (`bookpipe-fake-services scan-backend --record`), `/usr/bin/time -v`
of the scan and of `bookpipe image prepare` alone, and prints the wall time against the target
(1.1 x photos x job seconds / jobs at once), peak RSS, and preparation's share:

- *prepare alone*: `bookpipe image prepare` of every photo with the gemini preset on every core,
  as a share of the scan's wall time (the most preparation could occupy);
- *backend waiting*: job-slot time the backend spent idle while photos were still to be
  uploaded (from the first upload to the last), as a share of the scan's wall time. Near 0 means
  uploads kept every slot busy: preparation was not the bottleneck.
"""
import argparse
import json


def seconds_of(clock):
    parts = [float(p) for p in clock.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def read_time(path):
    fields = {}
    try:
        with open(path) as handle:
            for line in handle:
                name, _, value = line.strip().rpartition(": ")
                fields[name] = value
    except FileNotFoundError:
        return None
    return dict(wall=seconds_of(fields.get("Elapsed (wall clock) time (h:mm:ss or m:ss)", "0")),
                rss_mb=int(fields.get("Maximum resident set size (kbytes)", "0")) / 1024,
                cpu=float(fields.get("User time (seconds)", "0")) + float(fields.get("System time (seconds)", "0")))


def idle_slot_seconds(arrivals, job_seconds, slots, until):
    """Integral of (slots - running jobs)+ from the first arrival to `until`, in slot-seconds."""
    if not arrivals:
        return 0.0
    events = sorted([(t, 1) for t in arrivals] + [(t + job_seconds, -1) for t in arrivals])
    idle, running, previous = 0.0, 0, arrivals[0]
    for time, change in events:
        if time > until:
            break
        idle += max(0, slots - running) * (time - previous)
        running += change
        previous = time
    idle += max(0, slots - running) * max(0.0, until - previous)
    return idle


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", required=True)
    parser.add_argument("--time", required=True)
    parser.add_argument("--prepare-time", required=True)
    parser.add_argument("--start", type=float, required=True, help="epoch seconds when the scan started")
    parser.add_argument("--photos", type=int, required=True)
    parser.add_argument("--photo-mb", type=float, default=0)
    parser.add_argument("--job-seconds", type=float, required=True)
    parser.add_argument("--max-jobs", type=int, required=True)
    parser.add_argument("--exit-status", type=int, default=0)
    args = parser.parse_args()

    record = json.load(open(args.record))
    scan = read_time(args.time)
    prepare = read_time(args.prepare_time)
    offset = record["startedAt"] - args.start          # backend clock -> seconds since the scan started
    uploads = record["uploads"]
    accepted = [u for u in uploads if u["status"] == 202]
    arrivals = sorted(u["arrival"] + offset for u in accepted)
    bound = args.photos * args.job_seconds / args.max_jobs
    target = 1.1 * bound
    wall = scan["wall"]
    waiting = idle_slot_seconds(arrivals, args.job_seconds, args.max_jobs, arrivals[-1] if arrivals else 0) / args.max_jobs
    long_edges = sorted({max(u.get("width") or 0, u.get("height") or 0) for u in accepted})
    tagged = sum(1 for u in accepted if u["hasOrientationTag"])
    mean_upload_kb = sum(u["bytes"] for u in accepted) / max(1, len(accepted)) / 1024

    if args.exit_status != 0:
        print(f"WARNING: bookpipe scan exited with status {args.exit_status}; see scan.log")
    print(f"photos {args.photos} ({args.photo_mb:.0f} MB), jobs {len(accepted)} accepted of {len(uploads)} uploads, "
          f"429s {record['tooManyRequests']}, peak jobs {record['peakConcurrentJobs']}, cleanups {len(record['cleanups'])}, "
          f"scan exit status {args.exit_status}")
    print(f"wall {wall:.1f} s vs target {target:.1f} s (bound {bound:.1f} s): ratio to bound {wall / bound:.3f} "
          f"-> {'OK' if wall <= target else 'OVER'}")
    print(f"peak RSS {scan['rss_mb']:.1f} MB vs 150 MB -> {'OK' if scan['rss_mb'] <= 150 else 'OVER'}; "
          f"CPU {scan['cpu']:.1f} s")
    if arrivals:
        print(f"first upload at {arrivals[0]:.2f} s, last at {arrivals[-1]:.2f} s; backend waiting for uploads "
              f"{waiting:.1f} s ({100 * waiting / wall:.1f} % of the wall)")
    if prepare:
        print(f"prepare alone (gemini, every core): {prepare['wall']:.1f} s wall, {prepare['cpu']:.1f} s CPU, "
              f"{prepare['rss_mb']:.0f} MB = {100 * prepare['wall'] / wall:.1f} % of the scan's wall")
    print(f"uploads: long edges {long_edges} px, mean {mean_upload_kb:.0f} KB, {tagged} with an orientation tag")


if __name__ == "__main__":
    main()
