#!/usr/bin/env python3
"""Crash soak: the server under steady create/get/cancel load (Python clients, the trainyard CLI
and wrk), killed with SIGKILL at random moments and restarted on the same data, then its
PostgreSQL restarted under it. Afterwards every acknowledged create exists exactly once, every
job is terminal, and no job ran two copies at once, judged from the replicas' own record: each
replica (a process of the local runtime) appends start and end lines to a file we read here.

  tests/soak/crash_soak.py TRAINYARD_BIN [--kills 100] [--pg-restarts 10] [--seed N]

Exits 0 when every check holds, and prints the figures (requests by outcome, kills survived,
jobs checked, restart and reconnect times)."""
import argparse
import collections
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PROJECT = "soak"
PARENT = f"/v1/projects/{PROJECT}/locations/us-central1"
TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.dir = tempfile.mkdtemp(prefix="trainyard-soak.")
        os.chmod(self.dir, 0o755)  # the embedded PostgreSQL runs as the postgres user
        self.data = os.path.join(self.dir, "data")
        self.record = os.path.join(self.dir, "replicas.record")
        open(self.record, "w").close()
        os.chmod(self.record, 0o666)
        self.servers = {}  # name -> {"proc", "port", "roles", "log"}
        self.port = None  # where requests go: an API server's port
        self.start_load = lambda: None  # the scenario calls it once its servers are up
        self.lock = threading.Lock()
        self.acknowledged = {}  # display name -> job name, for every create answered 200
        self.unanswered = set()  # display names whose create got no answer (may exist, once)
        self.outcomes = collections.Counter()  # "create 200", "get 503", "cancel conn", ...
        self.failures = []
        self.stop = threading.Event()
        self.kills = 0
        self.terms = 0
        self.restart_seconds = []
        self.reconnect_seconds = []

    # --- the server -----------------------------------------------------------------------------
    def start_server(self, name="server", roles="api,scheduler,executor", port=None,
                     retried=False):
        """Starts (or restarts) a server on the shared data directory; the seconds to ready."""
        port = port or self.servers.get(name, {}).get("port") or free_port()
        log = os.path.join(self.dir, f"{name}.log")
        offset = os.path.getsize(log) if os.path.exists(log) else 0
        cmd = [self.args.bin, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir",
               self.data, "--runtime", "local", "--lease-seconds", "2", "--stop-grace", "1",
               "--roles", roles]
        with open(log, "ab") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=out)
        self.servers[name] = {"proc": proc, "port": port, "roles": roles, "log": log,
                              "offset": offset}
        begin = time.monotonic()
        while time.monotonic() - begin < 60:
            if self.request("GET", "/readyz", timeout=1, port=port)[0] == 200:
                return time.monotonic() - begin
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        with open(log, "rb") as f:
            f.seek(offset)
            lines = f.read()
        if b"Address already in use" in lines and not retried:
            # Another program took the port while the server was down: come back on a new one.
            return self.start_server(name, roles, free_port(), retried=True)
        # The log's last lines say why: CI keeps no temporary directory.
        tail = "\n".join(lines.decode(errors="replace").splitlines()[-8:])
        raise SystemExit(f"{name} did not become ready; see {log}; its last lines:\n{tail}")

    def kill_server(self, name="server", sig=signal.SIGKILL):
        proc = self.servers[name]["proc"]
        proc.send_signal(sig)
        if sig == signal.SIGKILL:
            proc.wait()
            self.kills += 1
        else:
            self.terms += 1

    def stop_servers(self):
        for name, server in reversed(list(self.servers.items())):
            if server["proc"].poll() is None:
                server["proc"].send_signal(signal.SIGTERM)
                server["proc"].wait(timeout=60)

    def api_ports(self):
        return [s["port"] for s in self.servers.values()
                if "api" in s["roles"] and s["proc"].poll() is None]

    # --- HTTP ------------------------------------------------------------------------------------
    def request(self, method, path, body=None, timeout=5, port=None):
        if port is None:
            ports = self.api_ports()
            port = self.rng.choice(ports) if ports else self.port
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            headers = {"content-type": "application/json"} if body is not None else {}
            conn.request(method, path, body=None if body is None else json.dumps(body),
                         headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            try:
                return resp.status, json.loads(data) if data else {}
            except ValueError:
                return resp.status, {"raw": data[:200].decode(errors="replace")}
        except (OSError, http.client.HTTPException):
            return None, None
        finally:
            conn.close()

    def note(self, what, status):
        key = f"{what} {status if status is not None else 'no answer'}"
        with self.lock:
            self.outcomes[key] += 1
        if status is not None and status >= 500 and status != 503:
            self.fail(f"{what} answered {status}")

    def fail(self, message):
        with self.lock:
            self.failures.append(message)

    # --- load ------------------------------------------------------------------------------------
    def job_body(self, display_name):
        seconds = self.rng.choice([1, 2, 3, 4])
        script = (
            f'r={self.record}; echo "start $CLOUD_ML_JOB_ID $$ $(date +%s%N)" >>$r; '
            f'trap \'echo "end $CLOUD_ML_JOB_ID $$ $(date +%s%N)" >>$r; exit 143\' TERM; '
            f'sleep {seconds} & wait $!; echo "end $CLOUD_ML_JOB_ID $$ $(date +%s%N)" >>$r')
        return {
            "displayName": display_name,
            "jobSpec": {"workerPoolSpecs": [{
                "machineSpec": {"machineType": "n2-standard-8"},
                "replicaCount": "1",
                "containerSpec": {"imageUri": "debian:12", "command": ["sh", "-c", script]},
            }]},
        }

    def creator(self, index):
        n = 0
        while not self.stop.is_set():
            n += 1
            display = f"soak-{index}-{n}"
            status, body = self.request("POST", f"{PARENT}/customJobs", self.job_body(display))
            self.note("create", status)
            with self.lock:
                if status == 200:
                    self.acknowledged[display] = body["name"]
                elif status is None or status >= 500:
                    self.unanswered.add(display)
                else:
                    self.failures.append(f"create {display} answered {status}: {body}")
            self.stop.wait(self.args.create_interval)

    def sdk_creator(self):
        """Creates through the trainyard CLI (the C++ SDK), which prints the job's name."""
        n = 0
        spec = os.path.join(self.dir, "sdk-job.json")
        while not self.stop.is_set():
            n += 1
            display = f"soak-sdk-{n}"
            with open(spec, "w") as f:
                json.dump(self.job_body(display), f)
            out = subprocess.run(
                [self.args.bin, "jobs", "create", "-f", spec, "--endpoint",
                 f"http://127.0.0.1:{self.rng.choice(self.api_ports() or [self.port])}",
                 "--project", PROJECT, "--location",
                 "us-central1"], capture_output=True, text=True, timeout=60)
            name = next((w for w in out.stdout.split() if "/customJobs/" in w), None)
            with self.lock:
                self.outcomes[f"sdk create {'ok' if out.returncode == 0 else 'error'}"] += 1
                if out.returncode == 0 and name:
                    self.acknowledged[display] = name
                else:
                    self.unanswered.add(display)
            self.stop.wait(self.args.create_interval * 4)

    def reader(self):
        while not self.stop.is_set():
            with self.lock:
                names = list(self.acknowledged.values())
            if names:
                name = self.rng.choice(names)
                status, _ = self.request("GET", f"/v1/{name}")
                self.note("get", status)
                if status == 404:
                    self.fail(f"acknowledged {name} was not found")
            self.stop.wait(0.02)

    def canceller(self):
        while not self.stop.is_set():
            with self.lock:
                names = list(self.acknowledged.values())
            if names:
                status, _ = self.request("POST", f"/v1/{self.rng.choice(names)}:cancel", {})
                self.note("cancel", status)
            self.stop.wait(0.3)

    # --- PostgreSQL restarts -----------------------------------------------------------------------
    def restart_postgres(self):
        pgdata = os.path.join(self.data, "pg", "data")
        cmd = ["/usr/lib/postgresql/15/bin/pg_ctl", "restart", "-D", pgdata, "-m", "fast", "-w",
               "-l", os.path.join(self.data, "pg", "log", "restart.log")]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def wait_create_works(self, deadline=60):
        begin = time.monotonic()
        while time.monotonic() - begin < deadline:
            display = f"soak-probe-{self.kills}-{len(self.reconnect_seconds)}-{time.monotonic()}"
            status, body = self.request("POST", f"{PARENT}/customJobs", self.job_body(display))
            self.note("probe create", status)
            if status == 200:
                with self.lock:
                    self.acknowledged[display] = body["name"]
                return time.monotonic() - begin
            if status is None or status >= 500:
                with self.lock:
                    self.unanswered.add(display)
            time.sleep(0.05)
        raise SystemExit("creates did not work again after a PostgreSQL restart")

    # --- the checks ------------------------------------------------------------------------------
    def list_all(self):
        jobs, token = [], ""
        while True:
            status, body = self.request("GET", f"{PARENT}/customJobs?pageSize=1000"
                                        + (f"&pageToken={token}" if token else ""), timeout=30)
            if status != 200:
                raise SystemExit(f"list answered {status}: {body}")
            jobs += body.get("customJobs", [])
            token = body.get("nextPageToken", "")
            if not token:
                return jobs

    def wait_terminal(self, deadline):
        begin = time.monotonic()
        while True:
            jobs = self.list_all()
            open_jobs = [j for j in jobs if j["state"] not in TERMINAL]
            if not open_jobs:
                return jobs
            if time.monotonic() - begin > deadline:
                self.fail(f"{len(open_jobs)} jobs not terminal after {deadline}s, e.g. "
                          f"{open_jobs[0]['name']} {open_jobs[0]['state']}")
                return jobs
            time.sleep(1)

    def check_jobs(self, jobs):
        by_display = collections.Counter(j["displayName"] for j in jobs)
        names = {j["name"] for j in jobs}
        for display, name in self.acknowledged.items():
            if by_display[display] != 1 or name not in names:
                self.fail(f"acknowledged {display} ({name}) exists {by_display[display]} times")
        for display in self.unanswered:
            if by_display[display] > 1:
                self.fail(f"unanswered {display} exists {by_display[display]} times")
        known = set(self.acknowledged) | self.unanswered
        for display in by_display:
            if display not in known:
                self.fail(f"{display} exists but was never sent")

    def check_record(self):
        """Per job, each replica process's [start, end] must end before the next one starts."""
        runs = collections.defaultdict(dict)  # job id -> pid -> [start, end]
        with open(self.record) as f:
            for line in f:
                parts = line.split()
                if len(parts) != 4:
                    continue
                kind, job, pid, t = parts[0], parts[1], parts[2], int(parts[3])
                span = runs[job].setdefault(pid, [None, None])
                span[0 if kind == "start" else 1] = t
        overlaps = 0
        for job, spans in runs.items():
            ordered = sorted(spans.values(), key=lambda s: s[0] or 0)
            for a, b in zip(ordered, ordered[1:]):
                if a[1] is None or b[0] is None or a[1] > b[0]:
                    overlaps += 1
                    self.fail(f"job {job} ran two copies at once: {ordered}")
        return len(runs), sum(len(s) for s in runs.values()), overlaps

    def leader(self):
        """The live server whose current run logged the latest scheduler_leading line."""
        best, best_ts = None, 0.0
        for name, server in self.servers.items():
            if server["proc"].poll() is not None:
                continue
            with open(server["log"], "rb") as f:
                f.seek(server["offset"])
                for line in f:
                    if b'"scheduler_leading"' in line:
                        ts = json.loads(line)["ts"]
                        if ts > best_ts:
                            best, best_ts = name, ts
        return best

    def wait_new_leader(self, dead, before, begin, deadline=30):
        """After `dead` was stopped at `begin`: the seconds until another server logs that it
        leads (more scheduler_leading lines than `before`, its counts from before the stop)."""
        while time.monotonic() - begin < deadline:
            for name, count in before.items():
                if self.leading_lines(name) > count:
                    return name, time.monotonic() - begin
            time.sleep(0.02)
        raise SystemExit(f"no server took the scheduler over within {deadline}s")

    def leading_lines(self, name):
        with open(self.servers[name]["log"], "rb") as f:
            return sum(1 for line in f if b'"scheduler_leading"' in line)

    def crash_scenario(self):
        """One server, killed and restarted; then its PostgreSQL restarted under it."""
        args = self.args
        self.restart_seconds.append(self.start_server())
        self.port = self.servers["server"]["port"]
        self.start_load()
        for _ in range(args.kills):
            time.sleep(self.rng.uniform(args.min_up, args.max_up))
            self.kill_server()
            self.restart_seconds.append(self.start_server())
        for _ in range(args.pg_restarts):
            time.sleep(self.rng.uniform(args.min_up, args.max_up))
            self.restart_postgres()
            self.reconnect_seconds.append(self.wait_create_works())

    def handover_scenario(self):
        """Two full servers and an API-only one (--all-full: three full ones) on one database;
        the scheduler leader is killed or stopped and comes back as a follower, again and again."""
        args = self.args
        self.restart_seconds.append(self.start_server("a"))
        self.restart_seconds.append(self.start_server("b"))
        third = "c" if args.all_full else "api"
        self.restart_seconds.append(
            self.start_server(third, roles="api,scheduler,executor" if args.all_full else "api"))
        self.port = self.servers[third]["port"]
        self.start_load()
        for i in range(args.kills):
            time.sleep(self.rng.uniform(args.min_up, args.max_up))
            dead = self.leader()
            if dead is None:
                raise SystemExit("no server leads the scheduler")
            # Every other time a graceful stop: the leader resigns and drains.
            graceful = i % 2 == 1
            before = {n: self.leading_lines(n) for n in self.servers if n != dead}
            begin = time.monotonic()
            self.kill_server(dead, signal.SIGTERM if graceful else signal.SIGKILL)
            _, seconds = self.wait_new_leader(dead, before, begin)
            (self.term_handover_seconds if graceful else self.handover_seconds).append(seconds)
            self.servers[dead]["proc"].wait(timeout=60)
            self.restart_seconds.append(self.start_server(dead, self.servers[dead]["roles"]))

    def run(self):
        args = self.args
        self.handover_seconds = []
        self.term_handover_seconds = []
        threads = [threading.Thread(target=self.creator, args=(i,)) for i in range(2)]
        threads += [threading.Thread(target=f) for f in (self.sdk_creator, self.reader,
                                                           self.canceller)]
        wrk, wrk_out = None, ""
        try:
            scenario = self.handover_scenario if args.scenario == "handover" else self.crash_scenario
            def start_load():
                nonlocal wrk
                wrk_seconds = int(args.kills * (args.max_up + 3) + args.pg_restarts * 10 + 60)
                if shutil.which("wrk"):
                    wrk = subprocess.Popen(
                        ["wrk", "-t1", "-c4", f"-d{wrk_seconds}s", "--timeout", "5s",
                         f"http://127.0.0.1:{self.port}{PARENT}/customJobs?pageSize=20"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for t in threads:
                    t.start()
            self.start_load = start_load
            scenario()
        finally:
            self.stop.set()
            for t in threads:
                if t.is_alive():
                    t.join()
            if wrk:
                wrk.send_signal(signal.SIGINT)
                wrk_out = wrk.communicate(timeout=30)[0]
        jobs = self.wait_terminal(args.settle)
        self.check_jobs(jobs)
        record_jobs, replicas, overlaps = self.check_record()
        fives = 0
        for server in self.servers.values():
            with open(server["log"], "rb") as f:
                fives += sum(1 for line in f if b'"status":500' in line)
        if fives:
            self.fail(f"the servers logged {fives} responses with status 500")
        self.stop_servers()

        print(f"scenario {args.scenario}{' (all full)' if args.all_full else ''}: kills survived: {self.kills}; graceful stops: "
              f"{self.terms}; PostgreSQL restarts: {len(self.reconnect_seconds)}")
        print("requests: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.outcomes.items())))
        if wrk_out:
            lines = [l.strip() for l in wrk_out.splitlines()
                     if "requests in" in l or "Socket errors" in l or "Non-2xx" in l]
            print("wrk (list, 4 connections): " + "; ".join(lines))
        print(f"jobs checked: {len(jobs)} ({len(self.acknowledged)} acknowledged, "
              f"{len(self.unanswered)} unanswered); replica processes recorded: {replicas} for "
              f"{record_jobs} jobs; overlapping copies: {overlaps}")
        rs = sorted(self.restart_seconds)
        print(f"start to ready: median {rs[len(rs) // 2]:.2f}s, max {rs[-1]:.2f}s")
        if self.reconnect_seconds:
            print(f"PostgreSQL restart to a working create: max {max(self.reconnect_seconds):.2f}s")
        for what, hs in (("kill -9", self.handover_seconds),
                         ("SIGTERM", self.term_handover_seconds)):
            if not hs:
                continue
            hs = sorted(hs)
            print(f"scheduler handover after the leader's {what}: median {hs[len(hs) // 2]:.2f}s,"
                  f" max {hs[-1]:.2f}s over {len(hs)}")
            if hs[-1] > args.handover_bound:
                self.fail(f"a handover took {hs[-1]:.2f}s, over the {args.handover_bound}s bound")
        for f in self.failures[:20]:
            print(f"FAILED: {f}", file=sys.stderr)
        passed = not self.failures
        print(f"{1 if passed else 0} passed, {0 if passed else 1} failed")
        if passed and not args.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            print(f"kept {self.dir}", file=sys.stderr)
        return 0 if passed else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bin")
    p.add_argument("--kills", type=int, default=100)
    p.add_argument("--pg-restarts", type=int, default=10)
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--min-up", type=float, default=0.3, help="least seconds between crashes")
    p.add_argument("--max-up", type=float, default=3.0, help="most seconds between crashes")
    p.add_argument("--create-interval", type=float, default=0.1)
    p.add_argument("--settle", type=float, default=180, help="seconds for every job to end")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--scenario", choices=["crash", "handover"], default="crash")
    p.add_argument("--all-full", action="store_true",
                   help="handover: the third server runs every role too, not only the API")
    p.add_argument("--handover-bound", type=float, default=5.0,
                   help="most seconds from the leader's kill to another server leading")
    args = p.parse_args()
    print(f"seed {args.seed}")
    soak = Soak(args)
    try:
        return soak.run()
    finally:
        for server in soak.servers.values():
            if server["proc"].poll() is None:
                server["proc"].kill()


if __name__ == "__main__":
    sys.exit(main())
