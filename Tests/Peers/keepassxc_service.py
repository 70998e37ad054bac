"""Test peer: a real, headless KeePassXC acting as the freedesktop Secret Service.

Runs on the bus in $DBUS_SESSION_BUS_ADDRESS (the caller starts it inside `dbus-run-session`;
never a real user's bus: the peer refuses to start when org.freedesktop.secrets is already
owned there). It

  1. makes a private 0700 directory (HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME,
     XDG_RUNTIME_DIR and TMPDIR of KeePassXC all point inside it),
  2. writes KeePassXC's config there with the Secret Service integration on and its
     confirmation dialogs off (each key is explained in README.md, "KeePassXC"),
  3. writes a KDBX 4 database with pykeepass whose group GROUP (default `authkit`) is exposed
     to the Secret Service (Meta/CustomData FDO_SECRETS_EXPOSED_GROUP = "{group-uuid}"),
  4. starts `keepassxc --pw-stdin DB` with QT_QPA_PLATFORM=offscreen (no display server),
  5. waits until org.freedesktop.secrets is owned, ReadAlias("default") names the collection
     and its Locked property is false (the name is owned ~0.1 s before the database is
     unlocked), then prints ONE JSON line on stdout:

     {"ready": true, "peer": "keepassxc", "pid": <this peer>, "keepassxc_pid": ...,
      "database": ".../authkit.kdbx", "password": "...", "group": "authkit",
      "collection": "/org/freedesktop/secrets/collection/authkit", "alias": "default",
      "bus": "<DBUS_SESSION_BUS_ADDRESS>", "version": "2.7.4", "startup_seconds": 0.4}

and then waits. It stops (KeePassXC gets SIGTERM, then SIGKILL after --kill-after seconds,
because KeePassXC 2.7.4 ignores SIGTERM while one of its headless dialogs is open and, at
random, right after a change; then the directory is removed) on SIGTERM/SIGINT, at end of standard input (unless --ignore-stdin), and
when its parent process exits. KeePassXC itself is started with PR_SET_PDEATHSIG=SIGKILL, so it
dies even if this peer is killed with SIGKILL.

Its lifetime is peerlib's (Tests/Peers/peerlib.py). Needs Python >= 3.9,
pykeepass (4.2.0 tested; lxml comes with it) and Debian's keepassxc and dbus-bin (dbus-send).

Usage (inside a private bus):
  dbus-run-session -- python3 keepassxc_service.py [--group authkit] [--log FILE]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

log = logging.getLogger("keepassxc-peer")

BUS_NAME = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
EXPOSED_GROUP_KEY = "FDO_SECRETS_EXPOSED_GROUP"

# KeePassXC 2.7.4 reads these from $XDG_CONFIG_HOME/keepassxc/keepassxc.ini (QSettings ini).
CONFIG_TEMPLATE = """\
[General]
ConfigVersion=2
SingleInstance=false
RememberLastDatabases=false
RememberLastKeyFiles=false
OpenPreviousDatabasesOnStartup=false
AutoSaveAfterEveryChange=true
AutoReloadOnChange=false
BackupBeforeSave=false
UpdateCheckMessageShown=true

[GUI]
CheckForUpdates=false
ShowTrayIcon=false
ShowExpiredEntriesOnDatabaseUnlock=false

[Security]
LockDatabaseIdle=false
LockDatabaseScreenLock=false
ClearClipboard=false

[Browser]
Enabled=false

[SSHAgent]
Enabled=false

[FdoSecrets]
Enabled=true
ShowNotification=false
ConfirmDeleteItem={confirm_delete}
ConfirmAccessItem={confirm_access}
UnlockBeforeSearch={unlock_before_search}
"""


# --------------------------------------------------------------------------- D-Bus (dbus-send)
def dbus_send(dest: str, path: str, method: str, *args: str, timeout_ms: int = 2000) -> str | None:
    """One method call with Debian's dbus-send; the printed reply, or None on any error."""
    cmd = ["dbus-send", "--session", "--print-reply", f"--reply-timeout={timeout_ms}", f"--dest={dest}", path, method]
    cmd += list(args)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_ms / 1000 + 2)
    except subprocess.TimeoutExpired:
        return None
    return done.stdout if done.returncode == 0 else None


def name_has_owner(name: str) -> bool:
    out = dbus_send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}")
    return bool(out) and "boolean true" in out


def default_collection() -> str | None:
    out = dbus_send(BUS_NAME, SERVICE_PATH, "org.freedesktop.Secret.Service.ReadAlias", "string:default")
    if not out:
        return None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("object path "):
            path = line[len("object path "):].strip('"')
            return None if path == "/" else path
    return None


def collection_locked(path: str) -> bool | None:
    out = dbus_send(BUS_NAME, path, "org.freedesktop.DBus.Properties.Get",
                    "string:org.freedesktop.Secret.Collection", "string:Locked")
    if not out:
        return None
    if "boolean false" in out:
        return False
    if "boolean true" in out:
        return True
    return None


# --------------------------------------------------------------------------- setup
def write_database(path: str, password: str, group_name: str, recycle_bin: bool, history_max_items: int) -> str:
    """A KDBX 4 database whose group `group_name` is exposed to the Secret Service.

    Returns the exposed group's UUID in the form KeePassXC itself writes ("{8-4-4-4-12}").
    """
    from lxml import etree  # pykeepass's own dependency
    from pykeepass import PyKeePass

    try:
        # create_database() opens pykeepass's blank template and then saves it, both with the
        # template's Argon2d 14 rounds / 64 MiB (~0.6 s each); do its steps with one save.
        from pykeepass.pykeepass import BLANK_DATABASE_LOCATION, BLANK_DATABASE_PASSWORD
    except ImportError:  # a pykeepass without these names: the public, slower way
        from pykeepass import create_database
        kp = create_database(path, password=password)
    else:
        kp = PyKeePass(BLANK_DATABASE_LOCATION, BLANK_DATABASE_PASSWORD)
        kp.filename, kp.password, kp.keyfile = path, password, None
    # A test database needs no strength: KeePassXC unlocks 2 rounds / 8 MiB in milliseconds.
    kdf = kp.kdbx.header.value.dynamic_header.kdf_parameters.data.dict
    kdf.I.value = 2
    kdf.M.value = 8 * 1024 * 1024
    kp.database_name = group_name  # the collection's Label while unlocked
    group = kp.add_group(kp.root_group, group_name)
    group_uuid = "{%s}" % group.uuid  # QUuid::toString(): lower-case, dashes, braces

    meta = kp.tree.find("Meta")
    meta.find("RecycleBinEnabled").text = "True" if recycle_bin else "False"
    meta.find("HistoryMaxItems").text = str(history_max_items)
    custom = meta.find("CustomData")
    if custom is None:
        custom = etree.SubElement(meta, "CustomData")
    item = etree.SubElement(custom, "Item")
    etree.SubElement(item, "Key").text = EXPOSED_GROUP_KEY
    etree.SubElement(item, "Value").text = group_uuid
    kp.save()
    os.chmod(path, 0o600)
    return group_uuid


def keepassxc_version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "keepassxc"], capture_output=True, text=True)
        return out.stdout.split("+")[0] if out.returncode == 0 else "?"
    except OSError:
        return "?"


_prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before fork: the child only calls it
PR_SET_PDEATHSIG = 1


def _pdeathsig() -> None:
    """In the child before exec: SIGKILL when the peer (the forking thread) goes away."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def stop_process(proc: subprocess.Popen, kill_after: float) -> str:
    if proc.poll() is not None:
        return f"already exited ({proc.returncode})"
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(kill_after)
        return f"exited on SIGTERM ({proc.returncode})"
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        # KeePassXC 2.7.4 drops a SIGTERM for good (its quit is aborted and its signal notifier
        # stays disabled) while a dialog is open or when the signal lands right after a change
        # (its autosave runs 150 ms after each change).
        return f"killed after ignoring SIGTERM for {kill_after}s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", default="authkit", help="name of the exposed group; also the database file's and collection's name")
    parser.add_argument("--password", help="database password (default: a random one, printed in the ready line)")
    parser.add_argument("--log", metavar="FILE", help="append the peer's and KeePassXC's messages here (default: stderr)")
    parser.add_argument("--ignore-stdin", action="store_true", help="do not exit when standard input closes")
    parser.add_argument("--ready-timeout", type=float, default=30.0, help="seconds to wait for the collection")
    parser.add_argument("--kill-after", type=float, default=1.5, help="seconds between SIGTERM and SIGKILL at stop")
    parser.add_argument("--keepassxc", default="keepassxc", help="the keepassxc binary")
    # KeePassXC's own defaults, to reproduce what a user with a fresh install has:
    parser.add_argument("--confirm-access", action="store_true", help="FdoSecrets/ConfirmAccessItem=true (KeePassXC's default)")
    parser.add_argument("--confirm-delete", action="store_true", help="FdoSecrets/ConfirmDeleteItem=true (KeePassXC's default)")
    parser.add_argument("--unlock-before-search", action="store_true", help="FdoSecrets/UnlockBeforeSearch=true (KeePassXC's default)")
    parser.add_argument("--recycle-bin", action="store_true", help="keep the database's recycle bin on (deleted items are moved there, not erased)")
    parser.add_argument("--history-max-items", type=int, default=0, help="entry history kept per item (KeePassXC's default: 10; 0: old secrets are not kept)")
    args = parser.parse_args()

    handler: logging.Handler = logging.FileHandler(args.log, encoding="utf-8") if args.log else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger().handlers[:] = [handler]
    logging.getLogger().setLevel(logging.INFO)

    bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not bus:
        print("keepassxc peer: DBUS_SESSION_BUS_ADDRESS is not set; run me inside dbus-run-session", file=sys.stderr)
        return 2
    if name_has_owner(BUS_NAME):
        print(f"keepassxc peer: {BUS_NAME} is already owned on this bus; refusing (use a private dbus-run-session)", file=sys.stderr)
        return 2

    lifetime = peerlib.Lifetime("keepassxc peer")
    lifetime.start_watching(watch_stdin=not args.ignore_stdin)

    started = time.monotonic()
    root = tempfile.mkdtemp(prefix="authkit-keepassxc-")
    os.chmod(root, 0o700)
    proc: subprocess.Popen | None = None
    log_file = open(args.log, "ab") if args.log else None
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "KPXC_CONFIG", "KPXC_CONFIG_LOCAL")}
        dirs = {"HOME": "home", "XDG_CONFIG_HOME": "config", "XDG_CACHE_HOME": "cache", "XDG_DATA_HOME": "data",
                "XDG_RUNTIME_DIR": "runtime", "TMPDIR": "tmp"}
        for var, sub in dirs.items():
            path = os.path.join(root, sub)
            os.makedirs(path, mode=0o700)
            env[var] = path
        env["QT_QPA_PLATFORM"] = "offscreen"
        os.makedirs(os.path.join(env["XDG_CONFIG_HOME"], "keepassxc"), mode=0o700)
        with open(os.path.join(env["XDG_CONFIG_HOME"], "keepassxc", "keepassxc.ini"), "w", encoding="utf-8") as f:
            f.write(CONFIG_TEMPLATE.format(
                confirm_access=str(args.confirm_access).lower(),
                confirm_delete=str(args.confirm_delete).lower(),
                unlock_before_search=str(args.unlock_before_search).lower(),
            ))

        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in args.group) or "collection"
        database = os.path.join(root, "db", safe + ".kdbx")
        os.makedirs(os.path.dirname(database), mode=0o700)
        password = args.password or secrets.token_urlsafe(18)
        group_uuid = write_database(database, password, args.group, args.recycle_bin, args.history_max_items)
        log.info("database %s written (exposed group %s %s) in %.2fs", database, args.group, group_uuid, time.monotonic() - started)

        launch = time.monotonic()
        proc = subprocess.Popen(
            [args.keepassxc, "--pw-stdin", database],
            stdin=subprocess.PIPE,
            stdout=log_file or sys.stderr,
            stderr=log_file or sys.stderr,
            env=env,
            cwd=root,
            preexec_fn=_pdeathsig,
        )
        try:
            proc.stdin.write(password.encode() + b"\n")
            proc.stdin.close()  # --pw-stdin reads one line
        except BrokenPipeError:
            pass  # keepassxc already exited: reported just below

        collection = None
        deadline = launch + args.ready_timeout
        while True:
            if lifetime.stopping:
                print(f"keepassxc peer: stopped before ready ({lifetime.reason})", file=sys.stderr)
                return 0
            if proc.poll() is not None:
                print(f"keepassxc peer: keepassxc exited with {proc.returncode} before it was ready", file=sys.stderr)
                return 1
            if time.monotonic() > deadline:
                print(f"keepassxc peer: no unlocked default collection after {args.ready_timeout}s", file=sys.stderr)
                return 1
            if name_has_owner(BUS_NAME):
                collection = default_collection()
                if collection and collection_locked(collection) is False:
                    break
            time.sleep(0.05)
        ready_secs = time.monotonic() - launch
        log.info("keepassxc %d ready in %.2fs: %s", proc.pid, ready_secs, collection)

        lifetime.announce({
            "ready": True,
            "peer": "keepassxc",
            "pid": os.getpid(),
            "keepassxc_pid": proc.pid,
            "database": database,
            "password": password,
            "group": args.group,
            "group_uuid": group_uuid,
            "collection": collection,
            "alias": "default",
            "bus": bus,
            "version": keepassxc_version(),
            "startup_seconds": round(ready_secs, 3),
            "setup_seconds": round(launch - started, 3),
        })
        while not lifetime.wait(0.5):
            if proc.poll() is not None:
                log.warning("keepassxc exited by itself with %s", proc.returncode)
                break
        log.info("keepassxc peer stopping (%s)", lifetime.reason)
        return 0
    finally:
        if proc is not None:
            log.info("keepassxc %s", stop_process(proc, args.kill_after))
        shutil.rmtree(root, ignore_errors=True)
        if log_file:
            log_file.close()


if __name__ == "__main__":
    try:
        code = main()
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
