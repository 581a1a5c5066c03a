#!/usr/bin/env python3
"""The failover test: Coffer clients push and pull through two coffer-servers on a Patroni cluster while faults are
injected, then every acknowledged item must be on the new primary, on every standby and on every device.

Run by scripts/ha-chaos.sh, which brings the cluster up (scripts/ha-cluster.sh) and down around it. Each client is the
real `coffer` CLI in a home of its own; two accounts with two devices each sync through HAProxy's port in front of
both servers, so a device sees what a user would: a `coffer sync` that succeeds, or one that fails (a user-visible
error, goal 0: the client's retries should hide every fault). An item counts as acknowledged once a `coffer sync` that
started after it was added exits 0.

Faults, each `--rounds` times: kill-postgres (SIGKILL the primary's postmaster), freeze (SIGSTOP every process of the
primary's PostgreSQL for the leader lease and 10 s more, then SIGCONT), stop-patroni (SIGTERM the primary's Patroni,
which stops its PostgreSQL; started again once another node leads), machine-loss (SIGKILL the primary's Patroni and
PostgreSQL together; started again later), lagging-loss (the primary's WAL senders stopped for 6 s under load, then a
machine-loss: what synchronous replication is for) and restart-server (stop one coffer-server, start it again).

Reported (JSON on standard output, a summary on standard error): acknowledged writes and how many are missing (goal
0), per fault the time to the first successful sync that started after it (goal <= 15 s) and whether the old primary
came back as a streaming standby, and every failed sync with its exit status. Exit status 1 when anything is lost, a
device disagrees, a node does not rejoin or a sync failed; 0 otherwise.
"""

import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "scripts", "ha-cluster.sh")
FAULTS = ["kill-postgres", "freeze", "stop-patroni", "machine-loss", "lagging-loss", "restart-server"]


PROGRAM = "ha-chaos"


def log(message):
    print(PROGRAM + ": " + message, file=sys.stderr, flush=True)


def cluster(*arguments, check=True):
    result = subprocess.run([CLUSTER, *arguments], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError("ha-cluster.sh %s failed: %s" % (" ".join(arguments), result.stderr.strip()))
    return result.stdout.strip()


def cluster_members():
    offset = int(os.environ.get("COFFER_HA_PORT_OFFSET", "0"))
    for rest in (8011, 8012, 8013):
        try:
            output = subprocess.run(
                ["curl", "-fsS", "--max-time", "1", "http://127.0.0.1:%d/cluster" % (rest + offset)],
                capture_output=True, text=True, timeout=3)
            if output.returncode == 0:
                return json.loads(output.stdout)["members"]
        except (subprocess.TimeoutExpired, ValueError):
            continue
    return []


def healthy(members, synchronous):
    leaders = [m for m in members if m["role"] == "leader" and m["state"] == "running"]
    streaming = [m for m in members if m["role"] != "leader" and m["state"] == "streaming"]
    sync = [m for m in members if m["role"] == "sync_standby"]
    return len(leaders) == 1 and len(streaming) == 2 and (sync or not synchronous)


class Device:
    """One `coffer` CLI home."""

    def __init__(self, binary, name):
        self.binary = binary
        self.name = name
        self.home = tempfile.mkdtemp(prefix="ha-chaos-%s-" % name)
        self.environment = {
            "HOME": self.home, "XDG_DATA_HOME": self.home + "/data", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
            "NO_COLOR": "1",
        }

    def run(self, arguments, stdin="", timeout=180):
        started = time.time()
        result = subprocess.run(
            [self.binary, *arguments], input=stdin, capture_output=True, text=True, env=self.environment,
            timeout=timeout)
        return result, started, time.time()

    def ok(self, arguments, stdin=""):
        result, _, _ = self.run(arguments, stdin)
        if result.returncode != 0:
            raise RuntimeError("%s: coffer %s exited %d: %s" % (
                self.name, " ".join(arguments), result.returncode, result.stderr.strip()))
        return result.stdout


class Worker(threading.Thread):
    """A device adding notes and syncing until told to stop."""

    def __init__(self, device, prefix, report):
        super().__init__(daemon=True)
        self.device = device
        self.prefix = prefix
        self.report = report
        self.stop = threading.Event()
        self.added = []          # (name, content) added locally
        self.acknowledged = {}   # name -> content, once a later sync succeeded
        self.syncs = []          # (started, ended, status)
        self.failures = []       # (at, status, stderr's last line)
        self.busy_notices = 0

    def run(self):
        counter = 0
        while not self.stop.is_set():
            counter += 1
            name = "%s-%04d" % (self.prefix, counter)
            content = "%s %s\n" % (name, uuid.uuid4())
            result, _, _ = self.device.run(["add", "note", name], stdin=content)
            if result.returncode != 0:
                self.failures.append((time.time(), result.returncode, "add: " + last_line(result.stderr)))
                continue
            pending = list(self.added) + [(name, content)]
            self.added = pending
            result, started, ended = self.device.run(["sync"])
            self.syncs.append((started, ended, result.returncode))
            if "retrying" in result.stderr:
                self.busy_notices += 1
            if result.returncode == 0:
                for added_name, added_content in pending:
                    self.acknowledged[added_name] = added_content
                self.added = []
            else:
                self.failures.append((time.time(), result.returncode, last_line(result.stderr)))
                time.sleep(0.5)


def last_line(text):
    """The error line of a failed command's standard error (its hints follow it), else its last line."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    return (errors or lines or [""])[-1][:200]


def node_pids(node):
    """The postmaster of NODE and every process whose parent it is."""
    try:
        postmaster = int(cluster("pid", "postgres", node))
    except (RuntimeError, ValueError):
        return []
    return [postmaster] + children(postmaster)


def children(parent):
    """The processes whose parent is `parent`, from /proc (procps may not be installed)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as handle:
                # "pid (comm) state ppid …": the name may hold spaces and parentheses, so split after the last ")".
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


def walsenders(node):
    """The WAL sender processes of a primary's PostgreSQL (one per standby)."""
    found = []
    for pid in node_pids(node)[1:]:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as handle:
                if b"walsender" in handle.read():
                    found.append(pid)
        except OSError:
            continue
    return found


def signal_all(pids, signum):
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # a node mid-restart answers nothing; keep asking
            pass
        time.sleep(0.5)
    log("gave up waiting for " + what)
    return False


def inject(fault, ttl, synchronous, round_index):
    """Injects one fault; returns (start time, details). Restores what it stopped once another node leads."""
    leader = cluster("leader")
    started = time.time()
    details = {"fault": fault, "round": round_index, "old_leader": leader, "at": round(started, 1)}
    if fault == "kill-postgres":
        killed = node_pids(leader)[:1]
        signal_all(killed, signal.SIGKILL)
        wait_for(lambda: node_pids(leader)[:1] not in ([], killed), 60, "Patroni to start PostgreSQL again")
    elif fault == "freeze":
        pids = node_pids(leader)
        signal_all(pids, signal.SIGSTOP)
        # Long enough for the lease to expire and a standby to take writes before the old primary wakes: the case
        # where Debian's Patroni 3.0.2 let the woken leader take its key back and the new primary's writes were lost.
        time.sleep(ttl + 10)
        signal_all(pids, signal.SIGCONT)
    elif fault in ("stop-patroni", "machine-loss", "lagging-loss"):
        patroni = int(cluster("pid", "patroni", leader))
        receivers = []
        if fault == "lagging-loss":
            # The primary stops sending WAL for a few seconds while clients keep pushing, then its machine is lost.
            # With synchronous replication no commit was acknowledged meanwhile; without it, every push acknowledged
            # in those seconds existed only on the lost machine. (Stopping the standbys' receivers instead shows
            # nothing: the WAL already sent waits in their sockets and arrives when they wake.)
            receivers = walsenders(leader)
            signal_all(receivers, signal.SIGSTOP)
            time.sleep(6)
        if fault in ("machine-loss", "lagging-loss"):
            pids = node_pids(leader)
            os.kill(patroni, signal.SIGKILL)
            signal_all(pids, signal.SIGKILL)
        else:
            os.kill(patroni, signal.SIGTERM)
        signal_all(receivers, signal.SIGCONT)
        wait_for(lambda: not alive(patroni), 60, "the old leader's Patroni to stop")
        wait_for(lambda: any(m["role"] == "leader" and m["name"] != leader and m["state"] == "running"
                             for m in cluster_members()), 60, "a new leader")
        cluster("start-node", leader)
    elif fault == "restart-server":
        which = str(1 + round_index % 2)
        details["server"] = which
        cluster("stop-server", which)
        time.sleep(2)
        cluster("start-server", which)
    details["new_leader"] = cluster("leader", check=False) or None
    details["rejoined"] = wait_for(lambda: healthy(cluster_members(), synchronous), 120, "the cluster to heal")
    details["healed_after_s"] = round(time.time() - started, 1)
    return started, details


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def first_success_after(workers, moment):
    ends = [ended for worker in workers for (started, ended, status) in worker.syncs
            if status == 0 and started >= moment]
    return min(ends) - moment if ends else None


def query(port, sql):
    """Rows of `sql` on one PostgreSQL node, as the superuser (row-level security bypassed), one per line."""
    directory = os.environ.get("COFFER_HA_DIR", "/tmp/coffer-ha")
    with open(os.path.join(directory, "secrets", "postgres.password")) as handle:
        password = handle.read().strip()
    environment = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT="3")
    result = subprocess.run(
        ["psql", "-X", "-At", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "coffer", "-c", sql],
        capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise RuntimeError("psql on port %d: %s" % (port, result.stderr.strip()))
    return result.stdout.splitlines()


def node_item_ids(port):
    """Every live item id on one node."""
    return set(query(port, "SELECT id FROM items WHERE NOT deleted"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coffer", default=os.path.join(ROOT, ".build", "debug", "coffer"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--settle", type=float, default=4.0, help="seconds of load between faults")
    parser.add_argument("--ttl", type=int, default=int(os.environ.get("COFFER_HA_TTL", "20")))
    parser.add_argument("--synchronous", default=os.environ.get("COFFER_HA_SYNCHRONOUS", "on"))
    arguments = parser.parse_args()
    synchronous = arguments.synchronous == "on"
    faults = [fault for fault in arguments.faults.split(",") if fault]
    unknown = [fault for fault in faults if fault not in FAULTS]
    if unknown:
        parser.error("unknown fault: " + ", ".join(unknown))

    sync_url = dict(line.split("=", 1) for line in cluster("env").splitlines())["COFFER_HA_SYNC_URL"]
    run_tag = uuid.uuid4().hex[:8]
    accounts = []
    for index in range(2):
        email = "chaos-%s-%d@example.org" % (run_tag, index)
        passphrase = "orbit lantern meadow harbour %s %d" % (run_tag, index)
        first = Device(arguments.coffer, "a%d-first" % index)
        first.ok(["init"])
        first.ok(["sync", "register", "--server", sync_url, "--email", email], stdin=passphrase + "\n")
        second = Device(arguments.coffer, "a%d-second" % index)
        second.ok(["sync", "login", "--server", sync_url, "--email", email], stdin=passphrase + "\n")
        accounts.append({"email": email, "passphrase": passphrase, "devices": [first, second]})
    workers = [Worker(device, "%s-%s" % (run_tag, device.name), None)
               for account in accounts for device in account["devices"]]
    for worker in workers:
        worker.start()
    time.sleep(arguments.settle)

    injected = []
    for round_index in range(arguments.rounds):
        for fault in faults:
            log("round %d: %s (leader %s)" % (round_index + 1, fault, cluster("leader", check=False)))
            started, details = inject(fault, arguments.ttl, synchronous, round_index)
            time.sleep(arguments.settle)
            details["first_sync_after_s"] = (
                round(first_success_after(workers, started), 2) if first_success_after(workers, started) is not None
                else None)
            injected.append(details)
            log("  new leader %s, healed in %s s, first sync %s s after the fault" % (
                details["new_leader"], details["healed_after_s"], details["first_sync_after_s"]))

    for worker in workers:
        worker.stop.set()
    for worker in workers:
        worker.join(timeout=300)

    # Every device syncs twice (the second pulls what the other device pushed last), then shows what it holds.
    problems = []
    for _ in range(2):
        for account in accounts:
            for device in account["devices"]:
                result, _, _ = device.run(["sync"])
                if result.returncode != 0:
                    problems.append("%s: final sync exited %d: %s" % (device.name, result.returncode,
                                                                    last_line(result.stderr)))
    acknowledged_total = 0
    missing_total = 0
    for account in accounts:
        expected = {}
        for worker in workers:
            if worker.device in account["devices"]:
                expected.update(worker.acknowledged)
        acknowledged_total += len(expected)
        # A new device reads the account from the server: the new primary's copy.
        fresh = Device(arguments.coffer, "fresh-" + account["email"].split("@")[0])
        fresh.ok(["sync", "login", "--server", sync_url, "--email", account["email"]],
                 stdin=account["passphrase"] + "\n")
        for device in account["devices"] + [fresh]:
            listed = {item["name"]: item for item in json.loads(device.ok(["list", "--json"]))}
            missing = sorted(set(expected) - set(listed))
            missing_total += len(missing) if device is fresh else 0
            if missing:
                problems.append("%s lacks %d acknowledged items (first: %s)" % (device.name, len(missing), missing[0]))
            if device is fresh:
                changed = [name for name, content in expected.items()
                           if name in listed and device.ok(["show", name]).find(content.strip()) < 0]
                if changed:
                    problems.append("%s: %d items differ from what was written (first: %s)" % (
                        device.name, len(changed), changed[0]))
                ids = {listed[name]["id"] for name in expected if name in listed}
                account["ids"] = ids

    # Every node holds every acknowledged item (the standbys caught up with the primary).
    offset = int(os.environ.get("COFFER_HA_PORT_OFFSET", "0"))
    wait_for(lambda: healthy(cluster_members(), synchronous), 120, "the cluster to heal before the node check")
    wanted = set().union(*(account.get("ids", set()) for account in accounts))
    for node, port in (("pg1", 54321), ("pg2", 54322), ("pg3", 54323)):
        def holds_all():
            return not (wanted - node_item_ids(port + offset))
        if not wait_for(holds_all, 30, node + " to hold every acknowledged item"):
            absent = wanted - node_item_ids(port + offset)
            problems.append("%s lacks %d acknowledged items" % (node, len(absent)))

    # Sessions: every device refreshed its one-minute access token through the faults, and no family was revoked
    # (a refresh token taken as reused would have revoked its device's session).
    accounts_sql = "SELECT id FROM users WHERE email LIKE 'chaos-%s-%%'" % run_tag
    primary_port = 5000 + offset
    revoked = int(query(primary_port, "SELECT count(*) FROM sessions WHERE revoked AND user_id IN (%s)" % accounts_sql)[0])
    refreshes = int(query(primary_port, "SELECT count(*) FROM refresh_tokens WHERE used_at IS NOT NULL "
                                        "AND user_id IN (%s)" % accounts_sql)[0])
    if revoked:
        problems.append("%d session families were revoked" % revoked)
    if refreshes == 0:
        problems.append("no session was refreshed: the test did not exercise refresh tokens")

    # The servers' answers through it all: 503 (with Retry-After) while the database was away, never another 5xx.
    statuses = {}
    for log_file in glob.glob(os.path.join(os.environ.get("COFFER_HA_DIR", "/tmp/coffer-ha"), "logs", "server-*.log")):
        with open(log_file, errors="replace") as handle:
            for match in re.finditer(r"status=(5\d\d)", handle.read()):
                statuses[match.group(1)] = statuses.get(match.group(1), 0) + 1
    other_errors = {status: count for status, count in statuses.items() if status != "503"}
    if other_errors:
        problems.append("the servers answered %s" % ", ".join("%d × %s" % (n, s) for s, n in sorted(other_errors.items())))

    failures = [{"device": worker.device.name, "at": round(at, 1), "status": status, "message": message}
                for worker in workers for (at, status, message) in worker.failures]
    refused_states = [failure for failure in failures if failure["status"] == 76]
    report = {
        "synchronous_replication": synchronous,
        "acknowledged_writes": acknowledged_total,
        "lost_writes": missing_total,
        "syncs": sum(len(worker.syncs) for worker in workers),
        "client_errors": len(failures),
        "refused_states": len(refused_states),
        "syncs_that_retried": sum(worker.busy_notices for worker in workers),
        "server_5xx": statuses,
        "refreshes": refreshes,
        "revoked_sessions": revoked,
        "faults": injected,
        "failures": failures,
        "problems": problems,
    }
    print(json.dumps(report, indent=2))
    slow = [fault for fault in injected if fault["first_sync_after_s"] is None or fault["first_sync_after_s"] > 15]
    not_rejoined = [fault for fault in injected if not fault["rejoined"]]
    log("%d acknowledged writes, %d lost; %d syncs, %d failed (%d retried a busy server); server 5xx: %s; %d "
        "refreshes, %d sessions revoked; %d faults, %d slower than 15 s to the first sync, %d not healed" % (
            acknowledged_total, missing_total, report["syncs"], len(failures), report["syncs_that_retried"],
            ", ".join("%d × %s" % (n, s) for s, n in sorted(statuses.items())) or "none", refreshes, revoked,
            len(injected), len(slow), len(not_rejoined)))
    for problem in problems:
        log("problem: " + problem)
    for failure in failures[:20]:
        log("failed sync: %(device)s exit %(status)s: %(message)s" % failure)
    return 1 if problems or failures or missing_total or not_rejoined else 0


if __name__ == "__main__":
    sys.exit(main())
