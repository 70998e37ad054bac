#!/usr/bin/env python3
"""A container registry (OCI distribution API v2) on 127.0.0.1 for the podman/skopeo
credential-helper tests. Repositories under --private answer only requests whose Basic or
Bearer credential carries the OIDC test provider's live access token; the others answer
anyone. Every repository holds one image, `latest`: a tiny manifest and its config blob,
made at start-up (no image is ever pulled from anywhere).

Control API: GET /_test/requests lists method, path, status, the user name and whether the
credential was a live token (never a token).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
import threading

import flask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import resource_auth  # noqa: E402

app = flask.Flask("registry")
LOCK = threading.Lock()
STATE = {"provider": "", "private": [], "requests": []}

CONFIG = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Labels": {"authkit.test": "yes"}}, "rootfs": {"type": "layers", "diff_ids": []}}).encode()
CONFIG_DIGEST = "sha256:" + hashlib.sha256(CONFIG).hexdigest()
MANIFEST = json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": CONFIG_DIGEST, "size": len(CONFIG)},
    "layers": [],
}).encode()
MANIFEST_DIGEST = "sha256:" + hashlib.sha256(MANIFEST).hexdigest()


def private(name: str) -> bool:
    return any(name == p or name.startswith(p.rstrip("/") + "/") for p in STATE["private"])


def check(name: str | None) -> flask.Response | None:
    user, token = resource_auth.bearer_or_basic(flask.request.headers.get("Authorization", ""))
    live = token is not None and resource_auth.live_access_token(STATE["provider"], token)
    needed = name is None and bool(STATE["private"]) or name is not None and private(name)
    ok = live or not needed
    with LOCK:
        STATE["requests"].append({"method": flask.request.method, "path": flask.request.path, "status": 200 if ok else 401,
                                  "user": user, "live": live})
    if ok:
        return None
    return flask.Response(json.dumps({"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]}), status=401,
                          headers={"WWW-Authenticate": 'Basic realm="authkit-test"', "Content-Type": "application/json"})


@app.route("/v2/", methods=["GET", "HEAD"])
def base():
    # The anonymous probe: challenge only when a credential could matter.
    user, token = resource_auth.bearer_or_basic(flask.request.headers.get("Authorization", ""))
    if token is None and STATE["private"]:
        return check(None) or flask.jsonify({})
    return flask.jsonify({})


@app.route("/v2/<path:name>/manifests/<reference>", methods=["GET", "HEAD"])
def manifest(name: str, reference: str):
    denied = check(name)
    if denied:
        return denied
    if reference not in ("latest", MANIFEST_DIGEST):
        return flask.Response(json.dumps({"errors": [{"code": "MANIFEST_UNKNOWN", "message": "unknown"}]}), status=404)
    body = b"" if flask.request.method == "HEAD" else MANIFEST
    return flask.Response(body, headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json", "Docker-Content-Digest": MANIFEST_DIGEST,
                                         "Content-Length": str(len(MANIFEST))})


@app.route("/v2/<path:name>/blobs/<digest>", methods=["GET", "HEAD"])
def blob(name: str, digest: str):
    denied = check(name)
    if denied:
        return denied
    if digest != CONFIG_DIGEST:
        return flask.Response(json.dumps({"errors": [{"code": "BLOB_UNKNOWN", "message": "unknown"}]}), status=404)
    return flask.Response(b"" if flask.request.method == "HEAD" else CONFIG,
                          headers={"Content-Type": "application/octet-stream", "Docker-Content-Digest": CONFIG_DIGEST, "Content-Length": str(len(CONFIG))})


@app.route("/_test/requests", methods=["GET"])
def test_requests():
    with LOCK:
        return flask.jsonify({"requests": list(STATE["requests"])})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL", help="the OIDC test provider's base URL")
    parser.add_argument("--private", action="append", default=[], help="a repository prefix that needs a live token (repeatable)")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    STATE["private"] = args.private
    peer = peerlib.Peer("registry", app, args.port)
    return peer.serve({"registry": peer.base_url.split("://", 1)[1]}, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    sys.exit(main())
