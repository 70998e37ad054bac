#!/usr/bin/env python3
"""A Microsoft Graph fixture server for `authkit search` tests.

    python graph_server.py [--port 0] [--log FILE] [--accept-tokens-from PROVIDER_BASE_URL]

Serves GET /v1.0/users from Fixtures/graph/users.json in Graph's shape, honouring $select,
$top (page size, 1..999, default 100), $skiptoken paging with an absolute @odata.nextLink,
and $filter made ONLY of `startswith(<property>,'<literal>')` clauses joined by ` or `
(OData string literals, '' for a quote; case-insensitive prefix match, like Graph). Anything
else in $filter is a Graph-shaped 400: that is how an unescaped quote (filter injection)
shows. Errors use the shapes in Fixtures/graph/errors.json.

A bearer token is required. With --accept-tokens-from, only access tokens that the OIDC test
provider at that URL lists as active under /_test/issued are accepted.

Control API: POST /_test/next {"status": 401|403|429|503, "count": N, "retry_after": S};
GET/DELETE /_test/requests; POST /_test/reset.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import logging
import os
import sys
import threading
import time
import urllib.request
import uuid
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlencode

import flask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

log = logging.getLogger("graph-server")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "Fixtures", "graph")
FILTERABLE = ("givenName", "surname", "displayName", "mail", "userPrincipalName")
DEFAULT_PAGE_SIZE = 100


class FilterError(Exception):
    def __init__(self, shape: str, detail: str = ""):
        super().__init__(detail)
        self.shape = shape
        self.detail = detail


def parse_filter(text: str) -> list[tuple[str, str]]:
    """Parses `startswith(prop,'lit') [or startswith(prop,'lit')]*` into (prop, literal) pairs.

    Strict like Graph's OData parser: a lone quote ends the literal, so `'O'Brien'` is a
    syntax error at the `B`, and `'O''Brien'` is the literal O'Brien.
    """
    pos = 0
    n = len(text)
    clauses: list[tuple[str, str]] = []

    def fail(message: str) -> FilterError:
        return FilterError("400-filter-syntax", f"Syntax error at position {pos} in '{text}'. {message}".strip())

    def skip_spaces() -> None:
        nonlocal pos
        while pos < n and text[pos] == " ":
            pos += 1

    def expect(token: str) -> None:
        nonlocal pos
        if text[pos : pos + len(token)].lower() != token.lower():
            raise fail(f"Expected '{token}'.")
        pos += len(token)

    while True:
        skip_spaces()
        start = pos
        while pos < n and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
        function = text[start:pos]
        if function.lower() != "startswith":
            if function:
                # A function or operator Graph knows but this fixture does not serve.
                raise FilterError("400-unsupported-query", function)
            raise fail("Expected a function call.")
        skip_spaces()
        expect("(")
        skip_spaces()
        start = pos
        while pos < n and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
        prop = text[start:pos]
        if not prop:
            raise fail("Expected a property name.")
        if prop not in FILTERABLE:
            if prop.lower() in (p.lower() for p in FILTERABLE):
                prop = next(p for p in FILTERABLE if p.lower() == prop.lower())
            else:
                raise FilterError("400-unknown-property", prop)
        skip_spaces()
        expect(",")
        skip_spaces()
        if pos >= n or text[pos] != "'":
            raise fail("Expected a string literal.")
        pos += 1
        literal = []
        while True:
            if pos >= n:
                raise fail("Unterminated string literal.")
            if text[pos] == "'":
                if pos + 1 < n and text[pos + 1] == "'":
                    literal.append("'")
                    pos += 2
                    continue
                pos += 1
                break
            literal.append(text[pos])
            pos += 1
        skip_spaces()
        expect(")")
        clauses.append((prop, "".join(literal)))
        skip_spaces()
        if pos == n:
            return clauses
        if text[pos : pos + 3].lower() == "or " and pos + 3 <= n:
            pos += 3
            continue
        raise fail("Expected 'or' or the end of the clause.")


class GraphState:
    def __init__(self, users: list[dict[str, Any]], errors: dict[str, Any]) -> None:
        self.lock = threading.Lock()
        self.users = users
        self.errors = errors
        self.accept_from: str | None = None
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.next: list[dict[str, Any]] = []
            self.requests: list[dict[str, Any]] = []
            # Misbehaviours: "empty_loop" answers every page empty with a nextLink to
            # itself; "flaky_401" answers every other request 401 whatever the token.
            self.misbehave: dict[str, bool] = {}
            self.served = 0

    def take_next(self) -> dict[str, Any] | None:
        with self.lock:
            if not self.next:
                return None
            entry = self.next[0]
            entry["count"] -= 1
            if entry["count"] <= 0:
                self.next.pop(0)
            return dict(entry)


def graph_error(shape: str, detail: str = "", retry_after: int | None = None) -> flask.Response:
    template = copy.deepcopy(STATE.errors[shape])
    body = template["body"]
    body["error"]["message"] = body["error"]["message"].replace("{detail}", detail)
    body["error"]["innerError"] = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
        "request-id": str(uuid.uuid4()),
        "client-request-id": flask.request.headers.get("client-request-id") or str(uuid.uuid4()),
    }
    response = flask.Response(json.dumps(body), status=template["status"], mimetype="application/json")
    for key, value in template["headers"].items():
        response.headers[key] = value
    if retry_after is not None and "Retry-After" in template["headers"]:
        response.headers["Retry-After"] = str(retry_after)
    response.headers["request-id"] = body["error"]["innerError"]["request-id"]
    return response


def token_is_accepted(token: str) -> bool:
    if not STATE.accept_from:
        return True
    try:
        # Loopback only: never through a proxy from the environment.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(STATE.accept_from + "/_test/issued", timeout=5) as r:
            issued = json.load(r)
    except (OSError, ValueError) as error:
        log.warning("could not read issued tokens: %s", type(error).__name__)
        return False
    return any(i["kind"] == "access_token" and i["value"] == token and i.get("active") for i in issued["items"])


def encode_skiptoken(offset: int) -> str:
    raw = json.dumps({"o": offset, "v": 1}).encode()
    return base64.urlsafe_b64encode(b"RFNwdA" + raw).decode().rstrip("=")


def decode_skiptoken(token: str) -> int | None:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        if not raw.startswith(b"RFNwdA"):
            return None
        value = json.loads(raw[6:])
        offset = value["o"]
        return offset if isinstance(offset, int) and offset >= 0 else None
    except (ValueError, KeyError, TypeError):
        return None


app = flask.Flask(__name__)
STATE: GraphState


@app.before_request
def record_request():
    if flask.request.path.startswith("/_test/"):
        return None
    auth = flask.request.headers.get("Authorization", "")
    entry = {
        "method": flask.request.method,
        "path": flask.request.path,
        "query": flask.request.query_string.decode("utf-8", "replace"),
        "filter": flask.request.args.get("$filter"),
        "select": flask.request.args.get("$select"),
        "top": flask.request.args.get("$top"),
        "skiptoken": flask.request.args.get("$skiptoken") is not None,
        "bearer": auth[:7].lower() == "bearer " and len(auth) > 7,
        "at": time.time(),
    }
    flask.g.entry = entry
    return None


@app.after_request
def finish_request(response):
    entry = flask.g.pop("entry", None)
    if entry is not None:
        entry["status"] = response.status_code
        with STATE.lock:
            entry["seq"] = len(STATE.requests) + 1
            STATE.requests.append(entry)
        log.info("%s %s status=%s filter=%r bearer=%s", entry["method"], entry["path"], entry["status"], entry["filter"], entry["bearer"])
    return response


@app.route("/v1.0/users", methods=["GET"])
def users():
    auth = flask.request.headers.get("Authorization", "")
    if auth[:7].lower() != "bearer " or not auth[7:].strip():
        return graph_error("401-empty")
    if nxt := STATE.take_next():
        return graph_error(str(nxt["status"]), retry_after=nxt.get("retry_after"))
    with STATE.lock:
        STATE.served += 1
        served, misbehave = STATE.served, dict(STATE.misbehave)
    if misbehave.get("flaky_401") and served % 2 == 1:
        return graph_error("401")
    if misbehave.get("empty_loop"):
        params = [(k, v) for k, v in flask.request.args.items(multi=True) if k != "$skiptoken"]
        params.append(("$skiptoken", encode_skiptoken(0)))
        link = BASE_URL + "/v1.0/users?" + urlencode(params, safe="$,'()", quote_via=quote)
        return flask.Response(json.dumps({"@odata.nextLink": link, "value": []}), mimetype="application/json")
    if not token_is_accepted(auth[7:].strip()):
        return graph_error("401")

    args = flask.request.args
    for name in args:
        if name.startswith("$") and name not in ("$filter", "$select", "$top", "$skiptoken"):
            return graph_error("400-unsupported-query")
    selected: list[str] | None = None
    if (select := args.get("$select")) is not None:
        selected = [s.strip() for s in select.split(",") if s.strip()]
        known = set(STATE.users[0]) if STATE.users else set()
        for prop in selected:
            if prop not in known:
                return graph_error("400-unknown-property", prop)
    page_size = DEFAULT_PAGE_SIZE
    if (top := args.get("$top")) is not None:
        if not top.isdigit() or not 1 <= int(top) <= 999:
            return graph_error("400-page-size", top)
        page_size = int(top)
    offset = 0
    if (skiptoken := args.get("$skiptoken")) is not None:
        decoded = decode_skiptoken(skiptoken)
        if decoded is None:
            return graph_error("400-skiptoken")
        offset = decoded

    matches = STATE.users
    if (filter_text := args.get("$filter")) is not None:
        try:
            clauses = parse_filter(filter_text)
        except FilterError as error:
            return graph_error(error.shape, error.detail)
        matches = [
            u
            for u in STATE.users
            if any(isinstance(u.get(p), str) and u[p].casefold().startswith(lit.casefold()) for p, lit in clauses)
        ]

    page = matches[offset : offset + page_size]
    if selected is not None:
        page = [{k: u.get(k) for k in selected} for u in page]
        context = "https://graph.microsoft.com/v1.0/$metadata#users(" + ",".join(selected) + ")"
    else:
        context = "https://graph.microsoft.com/v1.0/$metadata#users"
    body: dict[str, Any] = {"@odata.context": context}
    if offset + page_size < len(matches):
        params = [(k, v) for k, v in args.items(multi=True) if k != "$skiptoken"]
        params.append(("$skiptoken", encode_skiptoken(offset + page_size)))
        body["@odata.nextLink"] = BASE_URL + "/v1.0/users?" + urlencode(params, safe="$,'()", quote_via=quote)
    body["value"] = page
    return flask.Response(json.dumps(body, ensure_ascii=False), mimetype="application/json")


@app.route("/_test/next", methods=["POST"])
def test_next():
    body = flask.request.get_json(silent=True)
    if not isinstance(body, dict) or str(body.get("status")) not in ("401", "403", "429", "503"):
        return flask.jsonify({"error": "body must be {status: 401|403|429|503, count?, retry_after?}"}), 400
    entry = {"status": int(body["status"]), "count": int(body.get("count", 1)), "retry_after": body.get("retry_after")}
    with STATE.lock:
        STATE.next.append(entry)
        pending = [dict(e) for e in STATE.next]
    log.info("next responses: %s", pending)
    return flask.jsonify({"next": pending})


@app.route("/_test/misbehave", methods=["POST"])
def test_misbehave():
    body = flask.request.get_json(silent=True)
    if not isinstance(body, dict) or not set(body) <= {"empty_loop", "flaky_401"}:
        return flask.jsonify({"error": "body must be {empty_loop?: bool, flaky_401?: bool}"}), 400
    with STATE.lock:
        STATE.misbehave = {k: bool(v) for k, v in body.items()}
        STATE.served = 0
    return flask.jsonify({"misbehave": body})


@app.route("/_test/requests", methods=["GET", "DELETE"])
def test_requests():
    if flask.request.method == "DELETE":
        with STATE.lock:
            STATE.requests.clear()
        return flask.jsonify({"ok": True})
    with STATE.lock:
        return flask.jsonify({"requests": [dict(r) for r in STATE.requests], "total": len(STATE.requests)})


@app.route("/_test/reset", methods=["POST"])
def test_reset():
    STATE.reset()
    return flask.jsonify({"ok": True})


@app.errorhandler(404)
def not_found(_):
    return graph_error_404()


def graph_error_404() -> flask.Response:
    body = {
        "error": {
            "code": "Request_ResourceNotFound",
            "message": f"Resource '{flask.request.path}' does not exist or one of its queried reference-property objects are not present.",
            "innerError": {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"), "request-id": str(uuid.uuid4()), "client-request-id": str(uuid.uuid4())},
        }
    }
    return flask.Response(json.dumps(body), status=404, mimetype="application/json")


BASE_URL = ""


def main() -> int:
    global STATE, BASE_URL
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--users", default=os.path.join(FIXTURES, "users.json"), help="Graph users collection (JSON with a value array)")
    parser.add_argument("--errors", default=os.path.join(FIXTURES, "errors.json"))
    parser.add_argument("--accept-tokens-from", metavar="URL", help="base URL of the OIDC test provider whose active access tokens are accepted")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    with open(args.users, encoding="utf-8") as f:
        users = json.load(f)["value"]
    with open(args.errors, encoding="utf-8") as f:
        errors = json.load(f)
    STATE = GraphState(users, errors)
    STATE.accept_from = (args.accept_tokens_from or "").rstrip("/") or None
    peer = peerlib.Peer("graph", app, args.port)
    BASE_URL = peer.base_url
    ready = {"graph_base_url": peer.base_url + "/v1.0", "users": len(users), "control": peer.base_url + "/_test"}
    return peer.serve(ready, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    peerlib.run_main(main)
