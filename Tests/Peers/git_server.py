#!/usr/bin/env python3
"""A git smart-HTTP server on 127.0.0.1 for the credential-helper tests: Debian's
`git http-backend` (CGI) behind an authorization check that accepts only the OIDC test
provider's live access tokens, as the password of Basic auth (git 2.39) or as a Bearer
credential. Anything else gets 401 with `WWW-Authenticate: Basic`, so git asks its helpers.

With --resource URI it takes only tokens issued for that resource (RFC 8707: the provider's
issued item names it in its resources or audience), and with --resource-scope S only tokens
whose scopes include S; a token refused for either is answered 401 like any other, and its
request is listed with `reason` (`resource` or `scope`). Without them, any live access token.

Control API: POST /_test/reject {"count": N} answers the next N requests 401 whatever the
token (a token the server no longer takes, to make git call `erase`); GET /_test/requests
lists method, path, status and the user name seen (never a token).
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import threading

import flask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import resource_auth  # noqa: E402

app = flask.Flask("git-server")
log = logging.getLogger("git-server")
LOCK = threading.Lock()
STATE = {"reject": 0, "requests": [], "root": "", "provider": "", "resource": None, "resource_scope": None}


def unauthorized() -> flask.Response:
    return flask.Response("authentication required\n", status=401, headers={"WWW-Authenticate": 'Basic realm="authkit-test"'})


@app.route("/<path:path>", methods=["GET", "POST"])
def git(path: str):
    user, token = resource_auth.bearer_or_basic(flask.request.headers.get("Authorization", ""))
    with LOCK:
        reject = STATE["reject"] > 0 and token is not None
        if reject:
            STATE["reject"] -= 1
    reason = None
    if token is not None and not reject and (STATE["resource"] or STATE["resource_scope"]):
        item = resource_auth.access_token_item(STATE["provider"], token)
        reason = resource_auth.refusal(item, STATE["resource"], STATE["resource_scope"]) if item is not None else None
        ok = item is not None and reason is None
    else:
        ok = token is not None and not reject and resource_auth.live_access_token(STATE["provider"], token)
    entry = {"method": flask.request.method, "path": "/" + path, "status": 200 if ok else 401, "user": user}
    if reason:
        entry["reason"] = reason
    with LOCK:
        STATE["requests"].append(entry)
    if not ok:
        return unauthorized()
    environment = {
        "GIT_PROJECT_ROOT": STATE["root"],
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": "/" + path,
        "QUERY_STRING": flask.request.query_string.decode(),
        "REQUEST_METHOD": flask.request.method,
        "CONTENT_TYPE": flask.request.headers.get("Content-Type", ""),
        "REMOTE_USER": user or "bearer",
        "REMOTE_ADDR": "127.0.0.1",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": STATE["root"],
    }
    if encoding := flask.request.headers.get("Content-Encoding"):
        environment["HTTP_CONTENT_ENCODING"] = encoding
    if protocol := flask.request.headers.get("Git-Protocol"):
        environment["GIT_PROTOCOL"] = protocol
    body = flask.request.get_data()
    environment["CONTENT_LENGTH"] = str(len(body))
    result = subprocess.run(["git", "http-backend"], input=body, env=environment, capture_output=True, timeout=60)
    head, _, content = result.stdout.partition(b"\r\n\r\n")
    if not _:
        head, _, content = result.stdout.partition(b"\n\n")
    status = 200
    headers = {}
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers[name.strip()] = value.strip()
    return flask.Response(content, status=status, headers=headers)


@app.route("/_test/reject", methods=["POST"])
def test_reject():
    body = flask.request.get_json(silent=True) or {}
    with LOCK:
        STATE["reject"] = int(body.get("count", 1))
    return flask.jsonify({"reject": STATE["reject"]})


@app.route("/_test/requests", methods=["GET", "DELETE"])
def test_requests():
    with LOCK:
        if flask.request.method == "DELETE":
            STATE["requests"].clear()
        return flask.jsonify({"requests": list(STATE["requests"])})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--root", required=True, help="directory holding the bare repositories")
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL", help="the OIDC test provider's base URL")
    parser.add_argument("--resource", metavar="URI", help="take only tokens issued for this resource (RFC 8707)")
    parser.add_argument("--resource-scope", metavar="S", help="take only tokens whose scopes include S")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    STATE["root"] = os.path.abspath(args.root)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    STATE["resource"] = args.resource
    STATE["resource_scope"] = args.resource_scope
    peer = peerlib.Peer("git", app, args.port)
    ready = {"git_base_url": peer.base_url}
    if args.resource:
        ready["resource"] = args.resource
    if args.resource_scope:
        ready["resource_scope"] = args.resource_scope
    return peer.serve(ready, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    sys.exit(main())
