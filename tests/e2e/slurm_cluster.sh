# A throwaway two-node Slurm cluster on loopback for the end-to-end tests, with slurmrestd
# (openapi/v0.0.38, JWT auth) in front of it. The first node (this host's name) is in partitions
# debug and gpu; the second (SLURM_NODE2_NAME, "localhost") alone in partition cpu, so that a job
# whose pools lie on two partitions runs as a heterogeneous job. Source it after tests/e2e/lib.sh (which gives
# E2E_DIR and free_port), then:
#
#   slurm_cluster_start || { echo "SKIP: $SLURM_SKIP_REASON"; exit 77; }
#   trap 'slurm_cluster_stop; cleanup' EXIT   # lib.sh's own trap is replaced by this one
#   curl -H "X-SLURM-USER-NAME: $SLURM_USER_NAME" -H "X-SLURM-USER-TOKEN: $SLURM_JWT_TOKEN" \
#     "$SLURM_REST_URL/slurm/v0.0.38/ping"
#
# Exports: SLURM_CONF (every Slurm command line tool then talks to this cluster), SLURM_REST_URL,
# SLURM_JWT_TOKEN (the token only, no "SLURM_JWT=" prefix), SLURM_USER_NAME (root),
# SLURM_NODE_NAME, SLURM_NODE2_NAME, SLURM_CLUSTER_DIR. Also written: $SLURM_CLUSTER_DIR/token (mode 600).
#
# Facts this relies on (Debian 12, Slurm 22.05; see docs/runtimes.md, "slurmrestd v0.0.38, as
# Trainyard speaks it", and what slurm_cluster_selftest.sh records):
# - Packages: slurm-wlm slurm-wlm-jwt-plugin slurmrestd munge (`scripts/setup slurm`). auth/jwt
#   lives in slurm-wlm-jwt-plugin, which apt's --no-install-recommends leaves out.
# - Debian's slurmd is built without --enable-multiple-slurmd, yet two slurmd run on one host when
#   each is started for its own node (-N) with its own Port and %n in its spool, pid and log
#   paths. The second node is named localhost so that its address in a CLUSTER_SPEC resolves.
# - Only the backfill scheduler starts heterogeneous jobs: bf_interval=1 (default 30 s).
# - The node claims CPUs=8 whatever the hardware (SlurmdParameters=config_overrides), so a 3-task
#   job and a few one-task jobs run at once on a 2-core machine. Jobs here are `sleep`/`echo`.
# - The Slurm daemons run as root (SlurmUser=root), munged as munge; slurmrestd drops to nobody,
#   because it refuses to run as root or as SlurmUser.
# - Every wait polls with a deadline; no fixed sleeps.

SLURM_SKIP_REASON=""
SLURM_CLUSTER_DIR=""
SLURM_REST_URL=""
SLURM_JWT_TOKEN=""
SLURM_USER_NAME=root
SLURM_REST_VERSION=v0.0.38
_slurm_ctld_pid=""
_slurm_d_pid=""
_slurm_d2_pid=""
SLURM_NODE2_NAME=localhost
_slurm_rest_pid=""
_slurm_rest_port=""
_slurm_munged_pid=""   # set only when we started munged ourselves

# _slurm_step NAME CMD…: runs CMD and prints how long it took (stderr), so a slow start is
# visible in the test log.
_slurm_step() {
  local name=$1 t0=$EPOCHREALTIME rc=0
  shift
  "$@" || rc=$?
  printf 'slurm_cluster: %-20s %6.2fs%s\n' "$name" \
    "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" \
    "$([ $rc -eq 0 ] || echo " (failed: $rc)")" >&2
  return $rc
}

# _slurm_skip REASON: records why the cluster cannot run, tears down what started, returns 1.
_slurm_skip() {
  SLURM_SKIP_REASON=$1
  echo "slurm_cluster: $1" >&2
  local log
  for log in "$SLURM_CLUSTER_DIR"/log/*.log; do
    [ -s "$log" ] && { echo "--- $log" >&2; tail -n 15 "$log" >&2; }
  done
  slurm_cluster_stop
  return 1
}

# _slurm_wait PID SECONDS WHAT CMD…: retries CMD until it succeeds (like lib.sh's wait_until), but
# gives up at once when the daemon PID has exited (a bad slurm.conf kills slurmctld in 0.1 s).
_slurm_wait() {
  local pid=$1 deadline=$((SECONDS + $2)) what=$3
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "slurm_cluster: $what: the daemon exited" >&2
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "slurm_cluster: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.05
  done
}

_slurm_binaries_present() {
  local b
  for b in slurmctld slurmd slurmrestd scontrol sinfo sbatch squeue munge unmunge munged; do
    command -v "$b" >/dev/null 2>&1 ||
      { SLURM_SKIP_REASON="$b is not installed (scripts/setup slurm)"; return 1; }
  done
  # Without the plugin slurmctld refuses AuthAltTypes=auth/jwt and no token can be made.
  if ! compgen -G '/usr/lib/*/slurm*/auth_jwt.so' >/dev/null &&
    ! compgen -G '/usr/lib*/slurm/auth_jwt.so' >/dev/null; then
    SLURM_SKIP_REASON="auth/jwt plugin missing (apt-get install slurm-wlm-jwt-plugin)"
    return 1
  fi
}

_slurm_munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

# munged must run for auth/munge (slurmctld <-> slurmd <-> command line tools). A munged that is
# already up (a developer machine) is used as it is and left alone at the end.
_slurm_ensure_munged() {
  _slurm_munge_ok && return 0
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    mungekey -c -k /etc/munge/munge.key || return 1
    chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
  fi
  # Debian's systemd unit would create /run/munge; without systemd (containers, CI) we do. munged
  # refuses to run as root and checks that its socket directory belongs to its user.
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  chmod 755 /run/munge
  # Foreground (-F) under setpriv (which execs, so $! is munged itself): we can stop it by pid.
  setpriv --reuid munge --regid munge --init-groups "$(command -v munged || echo /usr/sbin/munged)" -F \
    >>"$SLURM_CLUSTER_DIR/log/munged.log" 2>&1 &
  _slurm_munged_pid=$!
  _slurm_wait "$_slurm_munged_pid" 20 "munged" _slurm_munge_ok
}

# _slurm_free_ports N: N distinct free loopback ports in one python start (a second each on a
# loaded 2-core machine); all sockets are bound at once, so the ports differ.
_slurm_free_ports() {
  python3 -c 'import socket,sys
ss=[socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

_slurm_write_conf() {
  local d=$SLURM_CLUSTER_DIR host mem ctld_port slurmd_port slurmd2_port
  read -r ctld_port slurmd_port slurmd2_port _slurm_rest_port < <(_slurm_free_ports 4)
  host=$(hostname -s)
  SLURM_NODE_NAME=$host
  # RealMemory is the node's memory in MB minus a margin, so that jobs asking for memory fit.
  mem=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
  # The key that signs and checks tokens: only slurmctld reads it (SlurmUser, here root).
  head -c 32 /dev/urandom >"$d/etc/jwt.key"
  chmod 600 "$d/etc/jwt.key"
  chown root:root "$d/etc/jwt.key"
  cat >"$d/etc/slurm.conf" <<EOF
# Written by tests/e2e/slurm_cluster.sh for one test run.
ClusterName=trainyard-e2e
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$d/etc/jwt.key
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups in a container: plain /proc process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
# Start batch jobs at the next scheduler tick (about 1 s) instead of up to 3 s later: 100 trivial
# jobs take ~14 s instead of ~36 s on 8 slots, and every test waits less.
SchedulerParameters=batch_sched_delay=0,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Trust the node line below rather than the hardware: 8 task slots on a 2-core machine.
SlurmdParameters=config_overrides
# A node that was DOWN comes back by itself when its slurmd registers again.
ReturnToService=2
# Finished jobs stay visible to GET /job/{id} for 5 minutes (the default, said here on purpose).
MinJobAge=300
# A timed-out or cancelled job is SIGKILLed 2 s after SIGTERM (default 30 s).
KillWait=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host Default=NO MaxTime=INFINITE State=UP
NodeName=$SLURM_NODE2_NAME NodeHostname=$host NodeAddr=127.0.0.1 Port=$slurmd2_port CPUs=4 RealMemory=$mem State=UNKNOWN
PartitionName=cpu Nodes=$SLURM_NODE2_NAME Default=NO MaxTime=INFINITE State=UP
EOF
  mkdir -p "$d/spool/$host" "$d/spool/$SLURM_NODE2_NAME"
  # A test may add or override settings (the last occurrence of a key wins).
  [ -z "${SLURM_CLUSTER_EXTRA_CONF:-}" ] || printf '%s\n' "$SLURM_CLUSTER_EXTRA_CONF" >>"$d/etc/slurm.conf"
  # slurmrestd runs as nobody and must read the configuration (not the key).
  chmod 644 "$d/etc/slurm.conf"
}

_slurm_node_idle() {
  [ "$(sinfo -h -N -n "$SLURM_NODE_NAME,$SLURM_NODE2_NAME" -o '%N %t' 2>/dev/null | sort -u |
    awk '$2 == "idle"' | wc -l)" = 2 ]
}

_slurm_start_daemons() {
  local d=$SLURM_CLUSTER_DIR
  # -D keeps them in the foreground, so $! is the daemon and stop is a kill by pid.
  slurmctld -D -f "$d/etc/slurm.conf" >>"$d/log/slurmctld.out" 2>&1 &
  _slurm_ctld_pid=$!
  _slurm_wait "$_slurm_ctld_pid" 30 "slurmctld" scontrol ping || return 1
  slurmd -D -N "$SLURM_NODE_NAME" -f "$d/etc/slurm.conf" >>"$d/log/slurmd.out" 2>&1 &
  _slurm_d_pid=$!
  slurmd -D -N "$SLURM_NODE2_NAME" -f "$d/etc/slurm.conf" >>"$d/log/slurmd2.out" 2>&1 &
  _slurm_d2_pid=$!
  _slurm_wait "$_slurm_d2_pid" 60 "nodes $SLURM_NODE_NAME and $SLURM_NODE2_NAME idle" \
    _slurm_node_idle
}

_slurm_make_token() {
  local out
  out=$(scontrol token username="$SLURM_USER_NAME" lifespan=7200) || return 1
  SLURM_JWT_TOKEN=${out#SLURM_JWT=}
  [ -n "$SLURM_JWT_TOKEN" ] || return 1
  (umask 077 && printf '%s\n' "$SLURM_JWT_TOKEN" >"$SLURM_CLUSTER_DIR/token")
  export SLURM_JWT_TOKEN
}

# slurm_rest ARGS…: curl against slurmrestd with the token headers (for tests and the selftest).
slurm_rest() {
  curl -sS -H "X-SLURM-USER-NAME: $SLURM_USER_NAME" -H "X-SLURM-USER-TOKEN: $SLURM_JWT_TOKEN" "$@"
}

_slurm_rest_ping() {
  slurm_rest -f "$SLURM_REST_URL/slurm/$SLURM_REST_VERSION/ping" | grep -q '"ping"'
}

# slurmrestd_start: starts slurmrestd on the port chosen with the others (the same port again
# after slurmrestd_stop, so a client configured with SLURM_REST_URL sees an outage, then the
# service back).
slurmrestd_start() {
  [ -n "$_slurm_rest_port" ] || _slurm_rest_port=$(free_port)
  SLURM_REST_URL=http://127.0.0.1:$_slurm_rest_port
  export SLURM_REST_URL
  # slurmrestd refuses to run as root (or SlurmUser); -u drops to nobody after it opened its
  # socket. SLURM_JWT=daemon (a literal sentinel, not a token) makes it talk to slurmctld with
  # auth/jwt, forwarding each request's token; without it it uses AuthType (munge), and munge
  # rejects every forwarded token ("Rejecting thread config token for user root").
  SLURM_JWT=daemon SLURM_CONF="$SLURM_CLUSTER_DIR/etc/slurm.conf" \
    slurmrestd -a rest_auth/jwt -s "openapi/$SLURM_REST_VERSION" -u nobody \
    "127.0.0.1:$_slurm_rest_port" >>"$SLURM_CLUSTER_DIR/log/slurmrestd.log" 2>&1 &
  _slurm_rest_pid=$!
  _slurm_wait "$_slurm_rest_pid" 30 "slurmrestd ping" _slurm_rest_ping
}

slurmrestd_stop() {
  _slurm_kill_pid "$_slurm_rest_pid"
  _slurm_rest_pid=""
}

# _slurm_kill_pid PID: TERM, then KILL after 10 s; waits for it to be gone.
_slurm_kill_pid() {
  local pid=$1 deadline=$((SECONDS + 10))
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

slurm_cluster_start() {
  local t0=$EPOCHREALTIME
  SLURM_SKIP_REASON=""
  # The daemons live in /usr/sbin, which a CI user's PATH may lack.
  case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac
  _slurm_binaries_present || { echo "slurm_cluster: $SLURM_SKIP_REASON" >&2; return 1; }
  if [ "$(id -u)" -ne 0 ]; then
    SLURM_SKIP_REASON="needs root (munged setup, SlurmUser=root, slurmd launching jobs)"
    return 1
  fi
  SLURM_CLUSTER_DIR=$E2E_DIR/slurm
  mkdir -p "$SLURM_CLUSTER_DIR"/{state,spool,log,etc}
  # nobody (slurmrestd) walks down to etc/slurm.conf; E2E_DIR itself is 755 (lib.sh).
  chmod 755 "$SLURM_CLUSTER_DIR" "$SLURM_CLUSTER_DIR/etc"
  export SLURM_CLUSTER_DIR SLURM_USER_NAME SLURM_REST_VERSION SLURM_NODE2_NAME
  _slurm_step munged _slurm_ensure_munged || { _slurm_skip "munged does not run"; return 1; }
  _slurm_step slurm.conf _slurm_write_conf || { _slurm_skip "cannot write slurm.conf"; return 1; }
  export SLURM_CONF=$SLURM_CLUSTER_DIR/etc/slurm.conf SLURM_NODE_NAME
  _slurm_step "slurmctld+slurmd" _slurm_start_daemons ||
    { _slurm_skip "slurmctld/slurmd did not come up"; return 1; }
  _slurm_step token _slurm_make_token || { _slurm_skip "scontrol token failed"; return 1; }
  _slurm_step slurmrestd slurmrestd_start || { _slurm_skip "slurmrestd did not answer"; return 1; }
  printf 'slurm_cluster: %-20s %6.2fs (%s)\n' "started" \
    "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$SLURM_REST_URL" >&2
}

# slurm_cluster_stop: stops what slurm_cluster_start started, newest first. Idempotent and safe
# in an EXIT trap (never fails). Jobs still queued or running are cancelled first.
slurm_cluster_stop() {
  slurmrestd_stop
  if [ -n "$_slurm_d_pid" ]; then
    # Cancel what is left and wait (bounded) until the jobs are gone: their processes belong to
    # slurmstepd, which outlives slurmd, so they must end while slurmd still manages them.
    # Every user's: a root token can submit jobs as any user.
    local user deadline=$((SECONDS + 15))
    if [ -n "$_slurm_ctld_pid" ] && kill -0 "$_slurm_ctld_pid" 2>/dev/null; then
      for user in $(squeue -h -o %u 2>/dev/null | sort -u); do
        scancel --full --quiet --user="$user" 2>/dev/null || true
      done
      while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do
        sleep 0.1
      done
    fi
    _slurm_kill_pid "$_slurm_d_pid"
    _slurm_d_pid=""
    _slurm_kill_pid "$_slurm_d2_pid"
    _slurm_d2_pid=""
  fi
  _slurm_kill_pid "$_slurm_ctld_pid"
  _slurm_ctld_pid=""
  _slurm_kill_pid "$_slurm_munged_pid"
  _slurm_munged_pid=""
  return 0
}
