#!/usr/bin/env python3
"""A synthetic GPU job trace for `trainyard simulate`'s examples and tests (not a published one).

Chosen, not measured: Poisson arrivals; GPU counts weighted toward small jobs (most jobs of
published GPU-cluster traces use one GPU, a few use many); log-normal run times of about an hour
at the median with a long tail. Same arguments, same file.

    scripts/make_synthetic_trace.py --jobs 2000 --days 14 --seed 1 > payloads/simulate/synthetic.csv

`--format swf` writes the same jobs in the Parallel Workloads Archive's Standard Workload Format
v2.2 (18 fields; GPUs as processors, the project as the user number), which the tests use to run
the SWF reader end to end without shipping a published log.
"""
import argparse
import math
import random

GPUS = [(1, 0.50), (2, 0.12), (4, 0.12), (8, 0.14), (16, 0.06), (32, 0.04), (64, 0.02)]
PROJECTS = [("research", 0.4), ("product", 0.3), ("platform", 0.2), ("interns", 0.1)]


def pick(rng, weighted):
    x, total = rng.random(), 0.0
    for value, weight in weighted:
        total += weight
        if x < total:
            return value
    return weighted[-1][0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--days", type=float, default=14)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--format", choices=["csv", "swf"], default="csv")
    a = p.parse_args()
    rng = random.Random(a.seed)
    rate = a.jobs / (a.days * 86400)
    t = 0.0
    if a.format == "csv":
        print("job_id,submit_time,duration,num_gpu,queue")
    else:
        print("; Version: 2.2\n; Note: synthetic (scripts/make_synthetic_trace.py), not a published log")
    for i in range(a.jobs):
        t += rng.expovariate(rate)
        gpus = pick(rng, GPUS)
        duration = min(6 * 86400, max(60, math.exp(rng.gauss(math.log(3600), 1.3))))
        project = pick(rng, PROJECTS)
        if a.format == "csv":
            print(f"{i},{int(t)},{int(duration)},{gpus},{project}")
        else:
            # job submit wait run procs cpu mem req-procs req-time req-mem status user group
            # app queue partition preceding think
            user = [name for name, _ in PROJECTS].index(project) + 1
            print(f"{i + 1} {int(t)} 0 {int(duration)} {gpus} -1 -1 {gpus} -1 -1 1 {user} 1 -1 1 -1 -1 -1")


if __name__ == "__main__":
    main()
