#!/usr/bin/env python3
"""Runs commands in alternating rounds and prints, per command, the median and minimum wall and CPU seconds
(user + system of the process and its children, from wait4) and the peak RSS. CPU time is the figure to compare
on a shared machine: wall-clock time grows with other processes' load, CPU time much less.

    benchmarks/report/rounds.py 7 '{"export": ["bookpipe", "export", "--format", "jsonl", "--output", "/tmp/x.jsonl"]}'
"""
import json
import os
import statistics
import subprocess
import sys
import time


def run(command):
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    rounds, cases = int(sys.argv[1]), json.loads(sys.argv[2])
    results = {name: [] for name in cases}
    loads = []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        for name, command in cases.items():
            results[name].append(run(command))
    for name, runs in results.items():
        wall, cpu, rss = ([run[i] for run in runs] for i in range(3))
        print(f"{name:32s} wall median {statistics.median(wall):.3f} (min {min(wall):.3f})"
              f"  CPU median {statistics.median(cpu):.3f} (min {min(cpu):.3f})  peak RSS {max(rss):.0f} MB")
    print(f"load average (1 min) during the rounds: {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
