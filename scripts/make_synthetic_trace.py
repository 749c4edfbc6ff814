#!/usr/bin/env python3
"""A synthetic GPU job trace for `trainyard simulate`'s examples and tests (not a published one).

Chosen, not measured: Poisson arrivals; GPU counts weighted toward small jobs (most jobs of
published GPU-cluster traces use one GPU, a few use many); log-normal run times of about an hour
at the median with a long tail. Same arguments, same file.

    scripts/make_synthetic_trace.py --jobs 2000 --days 14 --seed 1 > payloads/simulate/synthetic.csv
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
    a = p.parse_args()
    rng = random.Random(a.seed)
    rate = a.jobs / (a.days * 86400)
    t = 0.0
    print("job_id,submit_time,duration,num_gpu,queue")
    for i in range(a.jobs):
        t += rng.expovariate(rate)
        gpus = pick(rng, GPUS)
        duration = min(6 * 86400, max(60, math.exp(rng.gauss(math.log(3600), 1.3))))
        print(f"{i},{int(t)},{int(duration)},{gpus},{pick(rng, PROJECTS)}")


if __name__ == "__main__":
    main()
