#!/usr/bin/env python3
"""A stand-in for the Docker engine API on a unix socket, for the docker credential-helper
tests: the docker CLI resolves a registry's credentials through its credential helper and
sends them to the engine (X-Registry-Auth on `docker pull`, the body of `/auth` on
`docker login`). This stand-in answers as the engine does and records what it was sent: a
pull is accepted only with the OIDC test provider's live access token as the password, or
anonymously for a registry that is not --private. No image is ever stored or run.

--record FILE gets one JSON line per request: path, registry, user name and whether its
password was a live token (never a token).
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import sys
import threading

import flask
import werkzeug.serving

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import resource_auth  # noqa: E402

app = flask.Flask("docker-engine")
LOCK = threading.Lock()
STATE = {"provider": "", "private": set(), "requests": []}
API = "1.43"


def record(**entry) -> None:
    with LOCK:
        STATE["requests"].append(entry)
        if STATE.get("record"):
            with open(STATE["record"], "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")


@app.after_request
def version_headers(response):
    response.headers["Api-Version"] = API
    response.headers["Docker-Experimental"] = "false"
    response.headers["Ostype"] = "linux"
    return response


@app.route("/_ping", methods=["GET", "HEAD"])
@app.route("/v<version>/_ping", methods=["GET", "HEAD"])
def ping(version=None):
    return flask.Response("OK", mimetype="text/plain")


@app.route("/v<version>/version", methods=["GET"])
@app.route("/version", methods=["GET"])
def engine_version(version=None):
    return flask.jsonify({"Version": "28.0.0-standin", "ApiVersion": API, "MinAPIVersion": "1.24", "Os": "linux", "Arch": "amd64"})


@app.route("/v<version>/auth", methods=["POST"])
def auth(version):
    body = flask.request.get_json(silent=True) or {}
    registry = body.get("serveraddress", "")
    live = resource_auth.live_access_token(STATE["provider"], body.get("password", ""))
    record(path="/auth", registry=registry, user=body.get("username"), live=live)
    return flask.jsonify({"Status": "Login Succeeded", "IdentityToken": ""})


@app.route("/v<version>/images/create", methods=["POST"])
def pull(version):
    image = flask.request.args.get("fromImage", "")
    registry = image.split("/")[0] if "/" in image else "docker.io"
    header = flask.request.headers.get("X-Registry-Auth", "")
    user, live = None, False
    if header:
        try:
            credentials = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
        except ValueError:
            credentials = {}
        user = credentials.get("username")
        live = resource_auth.live_access_token(STATE["provider"], credentials.get("password", ""))
    record(path="/images/create", registry=registry, user=user, live=live, credentials=bool(header))
    if registry in STATE["private"] and not live:
        message = {"message": f"Head \"https://{registry}/v2/{image}/manifests/latest\": unauthorized: authentication required"}
        return flask.Response(json.dumps(message), status=500, mimetype="application/json")
    lines = [{"status": f"Pulling from {image}"}, {"status": "Digest: sha256:" + "0" * 64}, {"status": f"Status: Downloaded newer image for {image}:latest"}]
    return flask.Response("".join(json.dumps(line) + "\r\n" for line in lines), mimetype="application/json")


@app.route("/_test/requests", methods=["GET"])
def test_requests():
    with LOCK:
        return flask.jsonify({"requests": list(STATE["requests"])})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--socket", required=True, help="the unix socket to serve (DOCKER_HOST=unix://PATH)")
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL")
    parser.add_argument("--private", action="append", default=[], help="a registry whose pulls need a live token")
    parser.add_argument("--record", help="append one JSON line per request here (no token, only whether it was live)")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    STATE["private"] = set(args.private)
    STATE["record"] = args.record
    server = werkzeug.serving.make_server("unix://" + args.socket, 0, app, threaded=True, request_handler=peerlib.quiet_request_handler())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    lifetime = peerlib.Lifetime("docker-engine")
    lifetime.start_watching(not args.ignore_stdin)
    lifetime.announce({"ready": True, "peer": "docker-engine", "port": 0, "pid": os.getpid(), "base_url": "http://127.0.0.1:1", "socket": args.socket})
    lifetime.wait()
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
