#!/usr/bin/env python3
"""The restore drill: a point-in-time restore of Coffer's cluster from its base backup and WAL archive, onto a fresh
node, and what devices do when their server comes back older than they are.

Run by scripts/ha-restore-drill.sh, which brings the loopback cluster up and down around it (scripts/ha-cluster.sh).

1. A base backup of the primary (pg_basebackup through HAProxy, as the replication role).
2. A device registers and pushes note "Before"; the drill notes the time T; the device pushes note "After".
3. The primary switches WAL segments and the drill waits until the archive holds the one with "After".
4. The backup is copied to a fresh data directory and started with `recovery_target_time = T` from the archive; once
   promoted, it must hold "Before" and must not hold "After".
5. Both coffer-servers are restarted on the restored node. The device's next `coffer sync` must refuse the older
   server (exit 76: its session is newer than the backup); `coffer sync login` must say the server shows an older
   state this device verified; `coffer sync republish` puts "After" back, and a new device that logs in then holds
   both notes, unchanged.

Exit status 0 when every check holds; the failed check on standard error otherwise.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ha_chaos", os.path.join(HERE, "ha-chaos.py"))
chaos = importlib.util.module_from_spec(spec)
spec.loader.exec_module(chaos)
chaos.PROGRAM = "ha-restore-drill"

DIRECTORY = os.environ.get("COFFER_HA_DIR", "/tmp/coffer-ha")
OFFSET = int(os.environ.get("COFFER_HA_PORT_OFFSET", "0"))
PRIMARY = 5000 + OFFSET
RESTORED = 54324 + OFFSET


class DrillFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise DrillFailure(message)
    chaos.log("ok: " + message)


def secret(role):
    with open(os.path.join(DIRECTORY, "secrets", role + ".password")) as handle:
        return handle.read().strip()


def as_postgres(arguments, environment=None):
    """Runs a PostgreSQL tool as the daemons' user (root runs them as `postgres`). `environment` (a password) reaches it
    through the environment, which runuser passes on, never through a command line."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    env = dict(os.environ, **(environment or {}))
    result = subprocess.run(prefix + arguments, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise DrillFailure("%s failed: %s" % (os.path.basename(arguments[0]), result.stderr.strip()[-400:]))
    return result.stdout


def pg_bin():
    versions = sorted(os.listdir("/usr/lib/postgresql"), key=lambda v: [int(p) for p in v.split(".") if p.isdigit()])
    return "/usr/lib/postgresql/%s/bin" % versions[-1]


def main():
    binary = os.path.join(os.path.dirname(HERE), ".build", "debug", "coffer")
    sync_url = dict(line.split("=", 1) for line in chaos.cluster("env").splitlines())["COFFER_HA_SYNC_URL"]
    bin_dir = pg_bin()
    backup = os.path.join(DIRECTORY, "drill-backup")
    restored = os.path.join(DIRECTORY, "drill-restored")
    archive = os.path.join(DIRECTORY, "archive", "coffer")

    # 1. The base backup (the replication role's password reaches pg_basebackup through its environment).
    as_postgres([bin_dir + "/pg_basebackup", "-h", "127.0.0.1", "-p", str(PRIMARY), "-U", "replicator", "-D", backup,
                 "-X", "stream", "-c", "fast"], {"PGPASSWORD": secret("replicator")})
    chaos.log("base backup taken")

    # 2. Before, T, After.
    email = "drill-%d@example.org" % os.getpid()
    passphrase = "orbit lantern meadow harbour drill"
    device = chaos.Device(binary, "drill-device")
    device.ok(["init"])
    device.ok(["add", "note", "Before"], stdin="written before the restore point\n")
    device.ok(["sync", "register", "--server", sync_url, "--email", email], stdin=passphrase + "\n")
    restore_point = chaos.query(
        PRIMARY, "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'")[0]
    time.sleep(1)
    device.ok(["add", "note", "After"], stdin="written after the restore point\n")
    device.ok(["sync"])
    ids = {item["name"]: item["id"] for item in json.loads(device.ok(["list", "--json"]))}
    chaos.log("pushed Before and After around %s" % restore_point)

    # 3. The segment holding "After" reaches the archive.
    segment = chaos.query(PRIMARY, "SELECT pg_walfile_name(pg_switch_wal())")[0]
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(archive, segment)):
        if time.monotonic() > deadline:
            raise DrillFailure("segment %s never reached the archive" % segment)
        time.sleep(0.5)
    chaos.log("segment %s archived" % segment)

    # 4. Restore to T on a fresh node.
    as_postgres(["cp", "-a", backup, restored])
    settings = {
        "port": str(RESTORED), "listen_addresses": "'127.0.0.1'", "unix_socket_directories": "'%s'" % DIRECTORY,
        "restore_command": "'cp %s/%%f %%p'" % archive, "recovery_target_time": "'%s'" % restore_point,
        "recovery_target_action": "'promote'", "archive_mode": "'off'", "synchronous_standby_names": "''",
        "hba_file": "'%s/pg_hba.conf'" % restored, "ident_file": "'%s/pg_ident.conf'" % restored,
        "cluster_name": "'drill'",
    }
    lines = "".join("%s = %s\n" % pair for pair in settings.items())
    subprocess.run((["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []) + [
        "bash", "-c", "cat >> '%s/postgresql.auto.conf' && touch '%s/recovery.signal' && rm -f '%s/standby.signal'"
        % (restored, restored, restored)], input=lines, text=True, check=True)
    as_postgres([bin_dir + "/pg_ctl", "-D", restored, "-l", os.path.join(DIRECTORY, "logs", "drill-restored.log"),
                 "-w", "-t", "120", "start"])
    deadline = time.monotonic() + 120
    while chaos.query(RESTORED, "SELECT pg_is_in_recovery()") != ["f"]:
        if time.monotonic() > deadline:
            raise DrillFailure("the restored node was never promoted")
        time.sleep(0.5)
    present = set(chaos.query(RESTORED, "SELECT id FROM items"))
    check(ids["Before"] in present, "the restored node holds the note written before the restore point")
    check(ids["After"] not in present, "the restored node does not hold the note written after it")

    # 5. The servers come back on the restored node; the device notices and republishes.
    for server in ("1", "2"):
        chaos.cluster("stop-server", server)
    for server in ("1", "2"):
        subprocess.run([chaos.CLUSTER, "start-server", server], check=True,
                       env=dict(os.environ, COFFER_HA_DATABASE_PORT=str(RESTORED)))
    result, _, _ = device.run(["sync"])
    check(result.returncode == 76, "the device refuses the older server (exit %d: %s)" % (
        result.returncode, chaos.last_line(result.stderr)))
    # Logging in again starts a session and says what the device found: the state it verified, older.
    result, _, _ = device.run(["sync", "login", "--server", sync_url, "--email", email], stdin=passphrase + "\n")
    check(result.returncode == 76 and "restored from a backup" in result.stderr,
          "a new login names the older state (exit %d: %s)" % (result.returncode, chaos.last_line(result.stderr)[:120]))
    device.ok(["sync", "republish"])
    chaos.log("the device republished its state")
    fresh = chaos.Device(binary, "drill-fresh")
    fresh.ok(["sync", "login", "--server", sync_url, "--email", email], stdin=passphrase + "\n")
    names = sorted(item["name"] for item in json.loads(fresh.ok(["list", "--json"])))
    check(names == ["After", "Before"], "a new device holds both notes after the republish (%s)" % ", ".join(names))
    check("written after the restore point" in fresh.ok(["show", "After"]), "the republished note is unchanged")

    as_postgres([bin_dir + "/pg_ctl", "-D", restored, "-m", "fast", "-w", "stop"])
    shutil.rmtree(backup, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DrillFailure as failure:
        chaos.log("drill failed: %s" % failure)
        sys.exit(1)
