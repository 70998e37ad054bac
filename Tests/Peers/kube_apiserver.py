#!/usr/bin/env python3
"""A stand-in for a Kubernetes API server on 127.0.0.1, over TLS (kubectl sends credentials
only over TLS), for the exec-plug-in tests: GET /api and /version answer as an API server
does, to a Bearer token the OIDC test provider issued and still takes — an access token
(AKS with Entra), or with --id-token-audience an unexpired id_token for that client (an API
server started with --oidc-issuer-url). Anything else is 401 with a Status object.

--cert and --key name a certificate for 127.0.0.1 (the test makes one with openssl; kubectl
trusts it as the cluster's certificate-authority).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import ssl
import sys
import threading

import flask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import resource_auth  # noqa: E402

app = flask.Flask("kube-apiserver")
log = logging.getLogger("kube-apiserver")
STATE = {"provider": "", "audience": None, "requests": []}
LOCK = threading.Lock()


def status(code: int, reason: str, message: str) -> flask.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}
    return flask.Response(json.dumps(body), status=code, mimetype="application/json")


def authorized() -> str | None:
    """The kind of credential that was accepted, or None."""
    header = flask.request.headers.get("Authorization", "")
    if header[:7].lower() != "bearer ":
        return None
    token = header[7:].strip()
    if resource_auth.live_access_token(STATE["provider"], token):
        return "access_token"
    if STATE["audience"] and resource_auth.live_id_token(STATE["provider"], token, STATE["audience"]):
        return "id_token"
    return None


@app.route("/api", methods=["GET"])
@app.route("/version", methods=["GET"])
def api():
    kind = authorized()
    with LOCK:
        STATE["requests"].append({"path": flask.request.path, "accepted": kind})
    if kind is None:
        return status(401, "Unauthorized", "Unauthorized")
    if flask.request.path == "/version":
        return flask.jsonify({"major": "1", "minor": "28", "gitVersion": "v1.28.0", "platform": "linux/amd64"})
    return flask.jsonify({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": flask.request.host}],
    })


@app.route("/_test/requests", methods=["GET"])
def test_requests():
    with LOCK:
        return flask.jsonify({"requests": list(STATE["requests"])})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL")
    parser.add_argument("--id-token-audience", metavar="CLIENT_ID", help="also accept id_tokens for this client")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    STATE["audience"] = args.id_token_audience
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    peer = peerlib.Peer("kube-apiserver", app, args.port, ssl_context=context)
    return peer.serve({"server": peer.base_url}, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    sys.exit(main())
