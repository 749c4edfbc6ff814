#!/usr/bin/env python3
"""The monitoring pictures of docs/operations.md, from a real run (`make pictures`).

Starts the server (embedded PostgreSQL, the default simulated fleet) and Debian's Prometheus with
docs/monitoring/prometheus.yml and its rules, runs a mixed workload for a few minutes (an 8-host
pre-training job with one slow host, LoRA fine-tunes on reservations, spot jobs hit by a spot
preemption, another team's 8-host runs queueing for on-demand capacity), then plots panels of the Grafana
dashboard from Prometheus's own range queries (the same PromQL as docs/monitoring/
grafana-dashboard.json) into PNG files.

Usage: scripts/dashboard_pictures.py BUILD/trainyard OUT_DIR [--minutes N]
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MONITORING = os.path.join(ROOT, "docs", "monitoring")
PAYLOADS = os.path.join(ROOT, "payloads", "jobs")

# Panels of the dashboard, by title, laid out as the overview picture.
OVERVIEW = [
    "Fleet accelerator duty cycle by machine type",
    "Queue depth by project",
    "Queued jobs by reason",
    "Admissions, preemptions and fleet events",
    "Cost by consumption model",
    "API latency p99 by route",
]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http(url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"{}")


def wait_ready(url, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"not ready: {url}")


def job(payload, display, env=(), strategy=None):
    body = json.load(open(os.path.join(PAYLOADS, payload)))
    body["displayName"] = display
    spec = body["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    spec["env"] = [e for e in spec.get("env", []) if e["name"] not in dict(env)] + [
        {"name": k, "value": v} for k, v in env
    ]
    if strategy:
        body["jobSpec"].setdefault("scheduling", {})["strategy"] = strategy
    return body


def legend_of(metric, fmt):
    out = fmt
    for k, v in metric.items():
        out = out.replace("{{" + k + "}}", v)
    return out if "{{" not in out else json.dumps(metric)


def plot_panel(ax, prom, panel, start, end, step):
    for target in panel["targets"]:
        q = urllib.parse.urlencode({"query": target["expr"], "start": start, "end": end, "step": step})
        result = http(f"{prom}/api/v1/query_range?{q}")["data"]["result"]
        for series in result:
            xs = [(float(t) - start) / 60 for t, _ in series["values"]]
            ys = [float(v) for _, v in series["values"]]
            ax.plot(xs, ys, label=legend_of(series["metric"], target.get("legendFormat", "")))
    ax.set_title(panel["title"], fontsize=10)
    ax.set_xlabel("minutes", fontsize=8)
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
    if unit:
        ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(labelsize=7)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6, loc="upper left")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("out_dir")
    ap.add_argument("--minutes", type=float, default=4)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="trainyard-pictures.")
    os.chmod(work, 0o755)  # the embedded PostgreSQL runs as the postgres user
    port, prom_port = free_port(), free_port()
    base, prom = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{prom_port}"
    procs = []
    try:
        log = open(os.path.join(work, "server.log"), "w")
        procs.append(subprocess.Popen(
            [args.binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir",
             os.path.join(work, "data"), "--sim-speed", "60"], stdout=log, stderr=log))
        wait_ready(f"{base}/readyz", 120)
        config = open(os.path.join(MONITORING, "prometheus.yml")).read()
        config = (config.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
                  .replace("scrape_interval: 15s", "scrape_interval: 2s")
                  .replace("evaluation_interval: 15s", "evaluation_interval: 2s")
                  .replace("trainyard.rules.yml", os.path.join(MONITORING, "trainyard.rules.yml")))
        open(os.path.join(work, "prometheus.yml"), "w").write(config)
        plog = open(os.path.join(work, "prometheus.log"), "w")
        procs.append(subprocess.Popen(
            ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/tsdb",
             f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=plog, stderr=plog))
        wait_ready(f"{prom}/-/ready", 60)

        jobs = f"{base}/v1/projects/demo/locations/us-central1/customJobs"
        research = f"{base}/v1/projects/research/locations/us-central1/customJobs"
        start = time.time()
        big = http(jobs, job("nemo-pretrain-multinode.json", "pretrain-70b",
                             [("TRAINYARD_SIM_DURATION", "36000s"),
                              ("TRAINYARD_SIM_SLOW_HOST", "5")]))
        wave = 0
        while time.time() - start < args.minutes * 60:
            minute = (time.time() - start) / 60
            # A growing stream of fine-tunes that outgrows the reservation, and spot jobs.
            for i in range(2 + wave // 3):
                http(jobs, job("lora-single-node.json", f"lora-{wave}-{i}",
                               [("TRAINYARD_SIM_DURATION", f"{1200 + 600 * (i % 3)}s")]))
            http(jobs, job("lora-single-node.json", f"spot-{wave}", [("TRAINYARD_SIM_DURATION", "1800s")],
                           strategy="SPOT"))
            # Another team's 8-host runs on on-demand A3 Mega (16 nodes): more than fit, so its
            # queue grows and waits for capacity.
            http(research, job("nemo-pretrain-multinode.json", f"research-{wave}",
                               [("TRAINYARD_SIM_DURATION", "2400s")]))
            if wave == 6:
                http(f"{base}/trainyard/v1/fleet:injectSpotPreemption",
                     {"zone": "us-central1-a", "count": 2})
            wave += 1
            time.sleep(max(0.0, start + wave * 10 - time.time()))
            print(f"minute {minute:.1f}: {wave} waves", file=sys.stderr)
        end = time.time()
        time.sleep(4)  # the last scrape and rule evaluation

        dashboard = json.load(open(os.path.join(MONITORING, "grafana-dashboard.json")))
        by_title = {p["title"]: p for p in dashboard["panels"]}
        fig, axes = plt.subplots(3, 2, figsize=(13, 11))
        for ax, title in zip(axes.flat, OVERVIEW):
            plot_panel(ax, prom, by_title[title], start, end, 4)
        fig.suptitle("Trainyard fleet: a real run of make pictures (simulated fleet at 60x)")
        fig.tight_layout()
        fig.savefig(os.path.join(args.out_dir, "dashboard.png"), dpi=80)

        # The slow host: every host of the big job, its duty cycle over the run.
        util = http(f"{base}/trainyard/v1/{big['name']}/utilization")
        gang = util["hosts"][0]["host"] if util.get("hosts") else ""
        fig, ax = plt.subplots(figsize=(10, 4))
        plot_panel(ax, prom, {"title": "Duty cycle of each host of the 8-host job (host 5 is slow)",
                              "fieldConfig": {"defaults": {"unit": "percentunit"}},
                              "targets": [{"expr": f'trainyard_accelerator_duty_cycle{{gang="{gang}"}}',
                                           "legendFormat": "{{host}}"}]}, start, end, 4)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out_dir, "slow-host.png"), dpi=80)
        print(f"wrote {args.out_dir}/dashboard.png and slow-host.png; outliers: {util.get('outliers')}")
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
