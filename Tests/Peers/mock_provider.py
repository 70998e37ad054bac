#!/usr/bin/env python3
"""oidc-provider-mock (PyPI 0.3.4) on 127.0.0.1 with the peers' ready-line convention.

    python mock_provider.py [--port 0] [--log FILE] [--require-nonce] [--require-registration]

A second, independent OpenID provider implementation. What it does and does not check was
read from its source (oidc_provider_mock/_app.py, _storage.py) and confirmed by
TestPeerTests; README.md has the table. In short: with the default (no registration) every
client_id is accepted, the token endpoint accepts any NON-EMPTY secret (client_secret_basic
or client_secret_post) and refuses a request with no secret (public clients cannot use it),
PKCE is never checked, refresh tokens are not rotated and no id_token is returned on
refresh, there is no revocation, device grant or RFC 9207 `iss`.

Added here (outside the mock's code, as WSGI wrappers): a sanitized request log
(`--log`), `GET /_test/log` (counts per endpoint and grant_type) and `GET /_test/issued`
(every code and token it handed out, read from its responses) so the leak scan covers it.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import secrets
import sys
import threading
import time
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
import warnings  # noqa: E402

warnings.filterwarnings("ignore")

import oidc_provider_mock  # noqa: E402
from oidc_provider_mock._storage import User  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

log = logging.getLogger("mock-provider")

ENDPOINTS = {
    "/.well-known/openid-configuration": "discovery",
    "/jwks": "jwks",
    "/oauth2/authorize": "authorize",
    "/oauth2/token": "token",
    "/userinfo": "userinfo",
    "/oauth2/clients": "registration",
    "/oauth2/end_session": "end_session",
}

DEFAULT_USERS = [
    {"sub": "ada", "name": "Ada Lovelace", "preferred_username": "ada@example.test", "email": "ada@example.test"},
    {"sub": "grace", "name": "Grace Hopper", "preferred_username": "grace@example.test", "email": "grace@example.test"},
    {"sub": "sean", "name": "Seán O'Brien", "preferred_username": "sean@example.test", "email": "sean@example.test"},
]

MAX_BODY = 1_000_000


class Observer:
    """Wraps the mock's WSGI app: logs requests without values, remembers what it issued."""

    def __init__(self, wsgi_app) -> None:
        self.wsgi_app = wsgi_app
        self.recorder = peerlib.RequestRecorder()
        self.lock = threading.Lock()
        self.issued: list[dict[str, Any]] = []

    def remember(self, kind: str, value: Any, **extra: Any) -> None:
        if isinstance(value, str) and value:
            with self.lock:
                self.issued.append({"kind": kind, "value": value, **extra})

    def control(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/_test/log":
            if environ.get("REQUEST_METHOD") == "DELETE":
                self.recorder.reset()
                body: Any = {"ok": True}
            else:
                body = self.recorder.snapshot()
        elif path == "/_test/issued":
            with self.lock:
                items = [dict(i) for i in self.issued]
            body = {"items": items, "values": sorted({i["value"] for i in items})}
        else:
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"error": "not_found"}']
        start_response("200 OK", [("Content-Type", "application/json"), ("Cache-Control", "no-store")])
        return [json.dumps(body).encode()]

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/_test/"):
            return self.control(environ, start_response)

        # Buffer a small form body so its parameter names and grant_type can be logged and its
        # secrets remembered for the leak scan; the mock then reads the same bytes.
        names = [k for k, _ in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)]
        grant_type = None
        form: dict[str, str] = {}
        if environ.get("CONTENT_TYPE", "").startswith("application/x-www-form-urlencoded"):
            try:
                length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_BODY)
            except ValueError:
                length = 0
            raw = environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(raw)
            form = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
            names += list(form)
            grant_type = form.get("grant_type")
        self.remember("client_secret", form.get("client_secret"), client_id=form.get("client_id"))
        self.remember("code_verifier", form.get("code_verifier"), client_id=form.get("client_id"))
        auth = environ.get("HTTP_AUTHORIZATION", "")
        if auth.lower().startswith("basic "):
            import base64

            try:
                user, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
                self.remember("client_secret", secret, client_id=user)
            except (ValueError, UnicodeDecodeError):
                pass

        captured: dict[str, Any] = {}

        def capture(status, headers, exc_info=None):
            captured["status"] = int(status.split()[0])
            location = dict(headers).get("Location")
            if location:
                query = dict(parse_qsl(urlsplit(location).query))
                self.remember("authorization_code", query.get("code"))
            return start_response(status, headers, exc_info)

        started = time.time()
        iterable = self.wsgi_app(environ, capture)
        try:
            chunks = list(iterable)
        finally:
            if hasattr(iterable, "close"):
                iterable.close()
        if ENDPOINTS.get(path) == "token" and captured.get("status") == 200:
            try:
                token = json.loads(b"".join(chunks))
                for kind in ("access_token", "refresh_token", "id_token"):
                    self.remember(kind, token.get(kind), client_id=form.get("client_id"))
            except ValueError:
                pass
        self.recorder.record(
            {
                "method": environ.get("REQUEST_METHOD"),
                "path": path,
                "endpoint": ENDPOINTS.get(path),
                "grant_type": grant_type,
                "status": captured.get("status"),
                "params": sorted(set(names)),
                "basic_auth": auth.lower().startswith("basic "),
                "at": started,
                "ms": int((time.time() - started) * 1000),
            }
        )
        return chunks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--require-nonce", action="store_true", help="the mock's require_nonce")
    parser.add_argument("--require-registration", action="store_true", help="the mock's require_client_registration")
    parser.add_argument("--no-refresh-token", action="store_true")
    parser.add_argument("--access-token-ttl", type=int, default=3600, help="the mock's access_token_max_age (also the id_token's)")
    parser.add_argument("--user-claims", action="append", help="JSON object with sub and claims (repeatable; default ada, grace, sean)")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)

    users = [json.loads(u) for u in args.user_claims] if args.user_claims else DEFAULT_USERS
    app = oidc_provider_mock.app(
        require_client_registration=args.require_registration,
        require_nonce=args.require_nonce,
        issue_refresh_token=not args.no_refresh_token,
        access_token_max_age=timedelta(seconds=args.access_token_ttl),
        user_claims=[User(sub=u["sub"], claims={k: v for k, v in u.items() if k != "sub"}) for u in users],
    )
    observer = Observer(app.wsgi_app)
    app.wsgi_app = observer
    peer = peerlib.Peer("oidc-provider-mock", app, args.port)
    issuer = peer.base_url
    ready = {
        "issuer": issuer,
        "discovery_url": issuer + "/.well-known/openid-configuration",
        "version": "0.3.4",
        "users": users,
        # Any id and any non-empty secret pass; these are only suggestions for tests to use.
        "clients": [
            {
                "client_id": "authkit-test-mock",
                "client_secret": secrets.token_urlsafe(24),
                "token_endpoint_auth_method": "client_secret_basic",
                "redirect_uris": ["any"],
                "pkce_required": False,
            }
        ],
        "control": issuer + "/_test",
    }
    return peer.serve(ready, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    peerlib.run_main(main)
