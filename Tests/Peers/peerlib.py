"""Shared plumbing of the authkit test peers (see README.md, "Contracts").

Every peer binds 127.0.0.1 only, on a port the OS picks unless told otherwise, prints ONE
JSON line on stdout when it accepts connections, and from then on writes only to its log
file. It exits cleanly on SIGTERM/SIGINT, when its standard input reaches end-of-file (the
test process that owns the pipe died) and when its parent process goes away, so a crashed
test run leaves no server behind.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Callable

LOOPBACK = "127.0.0.1"

log = logging.getLogger("peer")


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: the OS picks one)")
    parser.add_argument("--log", metavar="FILE", help="append the request log here (default: stderr)")
    parser.add_argument(
        "--ignore-stdin",
        action="store_true",
        help="do not exit when standard input closes (for starting a peer by hand in the background)",
    )


def setup_logging(path: str | None) -> None:
    """One line per event, no token values ever (callers log names, never secrets)."""
    handler: logging.Handler
    if path:
        handler = logging.FileHandler(path, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    # werkzeug's access log prints query strings; the peers write their own sanitized line.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


def quiet_request_handler() -> Any:
    """werkzeug's handler without its access log (which would print query strings). werkzeug
    is imported here, not at the top: peers that serve no HTTP (KeePassXC's) use the rest."""
    import werkzeug.serving

    class QuietRequestHandler(werkzeug.serving.WSGIRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            return

        def log(self, type: str, message: str, *args: Any) -> None:
            log.info("http %s: %s", type, message % args if args else message)

    return QuietRequestHandler


class Lifetime:
    """Until when a peer runs: SIGTERM/SIGINT, end of stdin (unless ignored), parent gone."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._stop = threading.Event()
        self.reason = "?"

    def stop(self, reason: str) -> None:
        if not self._stop.is_set():
            self.reason = reason
        self._stop.set()

    def start_watching(self, watch_stdin: bool = True) -> None:
        signal.signal(signal.SIGTERM, lambda *_: self.stop("SIGTERM"))
        signal.signal(signal.SIGINT, lambda *_: self.stop("SIGINT"))
        # A parent may spawn us with these blocked (posix_spawn inherits the signal mask).
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        if watch_stdin:
            threading.Thread(target=self._watch_stdin, daemon=True).start()
        threading.Thread(target=self._watch_parent, args=(os.getppid(),), daemon=True).start()

    def announce(self, line: dict[str, Any]) -> None:
        """Prints the ready line, then never writes to stdout again."""
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        # A parent may stop reading stdout after the ready line.
        sys.stdout = open(os.devnull, "w")

    def wait(self, timeout: float | None = None) -> bool:
        """Until the peer is to stop (True), or `timeout` seconds (False)."""
        if timeout is not None:
            return self._stop.wait(timeout)
        while not self._stop.wait(0.5):
            pass
        log.info("%s stopping (%s)", self.name, self.reason)
        return True

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _watch_stdin(self) -> None:
        # os.read on the descriptor, not sys.stdin.buffer: a daemon thread blocked inside the
        # buffered reader holds its lock, and the interpreter then spends a second at exit.
        try:
            while os.read(sys.stdin.fileno(), 4096):
                pass
        except (OSError, ValueError):
            pass
        self.stop("stdin closed")

    def _watch_parent(self, parent: int) -> None:
        while not self._stop.is_set():
            if os.getppid() != parent:
                self.stop("parent exited")
                return
            time.sleep(0.5)


class Peer:
    """A threaded WSGI server on 127.0.0.1 with the ready-line and shutdown contract."""

    def __init__(self, name: str, app: Any, port: int = 0, ssl_context: Any = None):
        self.name = name
        import werkzeug.serving

        self.server = werkzeug.serving.make_server(
            LOOPBACK, port, app, threaded=True, request_handler=quiet_request_handler(), ssl_context=ssl_context
        )
        # Many concurrent token requests (the refresh race) must all be accepted.
        self.server.socket.listen(128)
        self.port: int = self.server.server_port
        self.base_url = f"{'https' if ssl_context else 'http'}://{LOOPBACK}:{self.port}"
        self.lifetime = Lifetime(name)

    def serve(self, ready: dict[str, Any], watch_stdin: bool = True) -> int:
        thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        thread.start()
        self.lifetime.start_watching(watch_stdin)
        line = {"ready": True, "peer": self.name, "port": self.port, "pid": os.getpid(), "base_url": self.base_url}
        line.update(ready)
        self.lifetime.announce(line)
        log.info("%s ready on %s", self.name, self.base_url)
        self.lifetime.wait()
        log.info("%s stopping (%s)", self.name, self.lifetime.reason)
        self.server.shutdown()
        self.server.server_close()
        return 0


class RequestRecorder:
    """Counts and lists requests without their values: method, path, endpoint, grant_type, status.

    Parameter *names* are kept (so a test can see that `code_verifier` was sent); values never are.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.requests: list[dict[str, Any]] = []
            self.by_endpoint: dict[str, int] = {}
            self.by_grant_type: dict[str, int] = {}

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            entry["seq"] = len(self.requests) + 1
            self.requests.append(entry)
            endpoint = entry.get("endpoint")
            if endpoint:
                self.by_endpoint[endpoint] = self.by_endpoint.get(endpoint, 0) + 1
            grant = entry.get("grant_type")
            if grant:
                self.by_grant_type[grant] = self.by_grant_type.get(grant, 0) + 1
        log.info(
            "%s %s endpoint=%s grant_type=%s status=%s params=%s",
            entry.get("method"),
            entry.get("path"),
            entry.get("endpoint") or "-",
            entry.get("grant_type") or "-",
            entry.get("status"),
            ",".join(entry.get("params", [])) or "-",
        )

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "counts": {"endpoints": dict(self.by_endpoint), "grant_types": dict(self.by_grant_type)},
                "total": len(self.requests),
                "requests": [dict(r) for r in self.requests],
            }


def run_main(main: Callable[[], int]) -> None:
    try:
        code = main()
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
