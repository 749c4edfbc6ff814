#!/usr/bin/env python3
"""Reads bench/create-tail's files and sets the slowest 1% of creates beside all of them.

trace: "start_us end_us pid statements words" per PostgreSQL round trip (pid 0: a create's whole
group commit, queue included); runq: "time_us procs_running"; postgres.log: autovacuum lines.
"""
import bisect
import collections
import re
import sys
from datetime import datetime, timezone

CREATE = "WITH j AS (INSERT INTO custom_jobs"


def label(words):
    """A short name for a round trip from its opening words."""
    w = words.strip()
    if w in ("BEGIN", "COMMIT", "ROLLBACK") or w.startswith("BEGIN "):
        return w.split()[0]
    return w[:48]


def main(trace_path, runq_path, pglog_path, samples_path=None):
    trips = []
    for line in open(trace_path):
        parts = line.rstrip("\n").split(" ", 4)
        if len(parts) < 4:
            continue
        trips.append((int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]),
                      parts[4] if len(parts) > 4 else ""))
    commits = sorted(t for t in trips if t[2] == 0)
    pipelines = sorted(t for t in trips if t[4].startswith(CREATE))
    create_pids = {t[2] for t in pipelines}
    others = sorted(t for t in trips if t[2] > 0 and t[2] not in create_pids)
    starts = [t[0] for t in pipelines]
    rows = []
    for c in commits:
        i = bisect.bisect_left(starts, c[0])
        own = next((p for p in pipelines[i:i + 3] if p[0] >= c[0] and p[1] <= c[1]), None)
        rows.append((c[1] - c[0], (own[1] - own[0]) if own else 0, c))
    if not rows:
        print("no creates traced")
        return
    runq = []
    for line in open(runq_path):
        t, n, io = line.split()
        runq.append((int(float(t)), int(n), int(io)))
    runq_t = [r[0] for r in runq]
    vacuums = []
    for line in open(pglog_path, errors="replace"):
        m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) (\w+) .*automatic (vacuum|analyze) of table \"([^\"]+)\"", line)
        if m:
            end = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
            vacuums.append((int(end.timestamp() * 1e6), m.group(3) + " " + m.group(4)))
    samples = collections.defaultdict(list)  # pid -> [(at, wait/event)]
    if samples_path:
        for line in open(samples_path):
            at, pid, wait, event, _ = line.rstrip("\n").split("\t", 4)
            samples[int(pid)].append((int(at), f"{wait}/{event}"))
    other_starts = [t[0] for t in others]
    longest_other = max((t[1] - t[0] for t in others), default=0)

    def beside(c):
        """Other backends' round trips overlapping create commit c."""
        lo = bisect.bisect_left(other_starts, c[0] - longest_other)
        hi = bisect.bisect_right(other_starts, c[1])
        return [t for t in others[lo:hi] if t[1] > c[0]]

    def runnable(c):
        lo, hi = bisect.bisect_left(runq_t, c[0]), bisect.bisect_right(runq_t, c[1])
        window = runq[max(lo - 1, 0):max(hi, lo + 1)]
        return (max(w[1] for w in window), max(w[2] for w in window)) if window else (0, 0)

    rows.sort(key=lambda r: r[0])
    n = len(rows)
    tail = rows[-max(n // 100, 1):]

    def describe(name, group):
        k = len(group)
        pct = lambda x: f"{100.0 * x / k:.0f}%"
        tot = sorted(r[0] for r in group)
        own = sorted(r[1] for r in group)
        print(f"-- {name}: {k} creates; commit (queue + pipeline) p50 {tot[k // 2] / 1000:.2f} ms, "
              f"max {tot[-1] / 1000:.2f} ms; own pipeline p50 {own[k // 2] / 1000:.2f} ms, "
              f"max {own[-1] / 1000:.2f} ms; wait before it mean "
              f"{sum(r[0] - r[1] for r in group) / k / 1000:.2f} ms")
        labels = collections.Counter()
        overlapping_commit = overlapping_any = 0
        runq_sum = io_sum = 0
        vac = 0
        waits = collections.Counter()
        for _, _, c in group:
            i = bisect.bisect_left(starts, c[0])
            own = next((p for p in pipelines[i:i + 3] if p[0] >= c[0] and p[1] <= c[1]), None)
            if own:
                for at, what in samples.get(own[2], []):
                    if own[0] <= at <= own[1]:
                        waits[what] += 1
            near = beside(c)
            overlapping_any += bool(near)
            overlapping_commit += any(label(t[4]) == "COMMIT" or t[3] > 1 for t in near)
            for lab in {label(t[4]) for t in near}:
                labels[lab] += 1
            running, inflight = runnable(c)
            runq_sum += running
            io_sum += inflight
            vac += any(c[0] - 50_000 <= v[0] <= c[1] + 50_000 for v in vacuums)
        print(f"   beside another backend's round trip: {pct(overlapping_any)}; beside a pass's "
              f"commit or pipeline: {pct(overlapping_commit)}; runnable threads (max in the "
              f"window) mean {runq_sum / k:.1f}; disk requests in flight (max) mean {io_sum / k:.1f}; an autovacuum ending within 50 ms: {pct(vac)}")
        if waits:
            print("   the create's backend, sampled during its pipeline: " +
                  ", ".join(f"{w} {n}" for w, n in waits.most_common(6)))
        for lab, count in labels.most_common(8):
            print(f"   {pct(count):>4} beside: {lab}")

    requests = sorted(t for t in trips if t[2] == -1)
    handlers = sorted(t for t in trips if t[2] == -2)
    if requests:
        h_starts = [h[0] for h in handlers]
        c_starts = [c[0] for c in commits]

        def inside(spans, span_starts, outer):
            i = bisect.bisect_left(span_starts, outer[0])
            return next((x for x in spans[i:i + 3] if x[1] <= outer[1]), None)

        split = []
        for r in requests:
            h = inside(handlers, h_starts, r)
            c = inside(commits, c_starts, h) if h else None
            total = r[1] - r[0]
            hd = (h[1] - h[0]) if h else 0
            cd = (c[1] - c[0]) if c else 0
            split.append((total, hd - cd, cd, total - hd, r))
        split.sort(key=lambda x: x[0])
        k = len(split)
        print(f"-- the server's write requests, read to replied: {k}; p50 {split[k // 2][0] / 1000:.2f} "
              f"ms, p99 {split[int(k * 0.99)][0] / 1000:.2f} ms, max {split[-1][0] / 1000:.2f} ms")
        for name, group in (("all", split), ("the slowest 1%", split[-max(k // 100, 1):])):
            g = len(group)
            print(f"   {name}: mean ms in the handler outside its commit "
                  f"{sum(x[1] for x in group) / g / 1000:.2f}, its commit {sum(x[2] for x in group) / g / 1000:.2f}, "
                  f"outside the handler (a writer thread's queue, the reply) {sum(x[3] for x in group) / g / 1000:.2f}")
    describe("all", rows)
    describe("the slowest 1%", tail)
    print("-- the slowest ten: commit ms | own pipeline ms | runnable | beside (backend pid: ms, words)")
    for total, own, c in tail[-10:][::-1]:
        near = beside(c)
        text = "; ".join(f"{t[2]}: {(t[1] - t[0]) / 1000:.1f} {label(t[4])[:30]}" for t in near[:4])
        print(f"   {total / 1000:.2f} | {own / 1000:.2f} | {runnable(c)} | {text}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
