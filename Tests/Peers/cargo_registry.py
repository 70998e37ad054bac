#!/usr/bin/env python3
"""A cargo sparse registry (RFC 2789 index, RFC 3139 authentication) on 127.0.0.1 for the
cargo credential-provider tests. Everything — config.json, index files, downloads, the search
API — needs `Authorization: Bearer <the OIDC test provider's live access token>`; without one
it answers 401 with `WWW-Authenticate: Cargo login_url=…`, so cargo asks its provider. It holds
one crate, `authkit-probe` 0.1.0, packed at start-up.

Control API: GET /_test/requests lists path, status, whether the credential was a live token
and its scheme (never a token).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import tarfile
import threading

import flask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import resource_auth  # noqa: E402

app = flask.Flask("cargo-registry")
LOCK = threading.Lock()
STATE = {"provider": "", "base": "", "requests": []}
NAME, VERSION = "authkit-probe", "0.1.0"


def pack() -> bytes:
    files = {
        f"{NAME}-{VERSION}/Cargo.toml": f'[package]\nname = "{NAME}"\nversion = "{VERSION}"\nedition = "2021"\n',
        f"{NAME}-{VERSION}/src/lib.rs": "pub fn probe() -> u32 { 42 }\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


CRATE = pack()


def authorized() -> flask.Response | None:
    header = flask.request.headers.get("Authorization", "")
    user, token = resource_auth.bearer_or_basic(header)
    live = token is not None and resource_auth.live_access_token(STATE["provider"], token)
    with LOCK:
        STATE["requests"].append({"path": flask.request.path, "status": 200 if live else 401, "live": live,
                                  "scheme": header.split(" ", 1)[0] if header else None})
    if live:
        return None
    return flask.Response(json.dumps({"errors": [{"detail": "authentication required"}]}), status=401,
                          headers={"WWW-Authenticate": f'Cargo login_url="{STATE["base"]}/login"', "Content-Type": "application/json"})


@app.route("/index/config.json")
def config():
    return authorized() or flask.jsonify({"dl": STATE["base"] + "/dl/{crate}/{version}", "api": STATE["base"], "auth-required": True})


@app.route("/index/<path:path>")
def index(path: str):
    denied = authorized()
    if denied:
        return denied
    if path != f"{NAME[:2]}/{NAME[2:4]}/{NAME}":
        return flask.Response("not found\n", status=404)
    entry = {"name": NAME, "vers": VERSION, "deps": [], "cksum": hashlib.sha256(CRATE).hexdigest(), "features": {}, "yanked": False}
    return flask.Response(json.dumps(entry) + "\n", headers={"Content-Type": "text/plain"})


@app.route("/dl/<crate>/<version>")
def download(crate: str, version: str):
    denied = authorized()
    if denied:
        return denied
    if (crate, version) != (NAME, VERSION):
        return flask.Response("not found\n", status=404)
    return flask.Response(CRATE, headers={"Content-Type": "application/octet-stream"})


@app.route("/api/v1/crates")
def search():
    denied = authorized()
    if denied:
        return denied
    query = flask.request.args.get("q", "")
    crates = [{"name": NAME, "max_version": VERSION, "description": "authkit's test crate"}] if query in NAME else []
    return flask.jsonify({"crates": crates, "meta": {"total": len(crates)}})


@app.route("/_test/requests")
def test_requests():
    with LOCK:
        return flask.jsonify({"requests": list(STATE["requests"])})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL", help="the OIDC test provider's base URL")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    peer = peerlib.Peer("cargo-registry", app, args.port)
    STATE["base"] = peer.base_url
    return peer.serve({"index": f"sparse+{peer.base_url}/index/"}, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    sys.exit(main())
