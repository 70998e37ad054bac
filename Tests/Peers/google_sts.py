#!/usr/bin/env python3
"""Google's Security Token Service (RFC 8693 token exchange, as sts.googleapis.com/v1/token
answers it) on 127.0.0.1, for the `credential gcloud` tests: a subject token is exchanged only
when it is an id_token whose signature checks against the OIDC test provider's JWKS, whose
issuer is that provider, whose audience is --client-id and which has not expired, and only for
the --audience pool provider. The access tokens it issues are opaque and recorded for the leak
scan (GET /_test/exchanges; never printed by the test).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import threading
import time
import urllib.request

import flask
from joserfc import jwt
from joserfc.jwk import KeySet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

app = flask.Flask("google-sts")
LOCK = threading.Lock()
STATE = {"provider": "", "issuer": "", "client_id": "", "audience": "", "exchanges": []}


def provider_json(path: str) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(STATE["provider"] + path, timeout=5) as response:
        return json.load(response)


def verified(token: str) -> str | None:
    """Why the token is refused, or None."""
    try:
        discovery = provider_json("/.well-known/openid-configuration")
        keys = KeySet.import_key_set(provider_json(discovery["jwks_uri"][len(STATE["provider"]):]))
        decoded = jwt.decode(token, keys, algorithms=["RS256", "ES256", "PS256", "EdDSA"])
    except Exception as error:  # noqa: BLE001 - any failure is a refusal
        return f"signature: {type(error).__name__}"
    claims = decoded.claims
    audience = claims.get("aud")
    if claims.get("iss") != discovery["issuer"]:
        return "issuer"
    if STATE["client_id"] not in (audience if isinstance(audience, list) else [audience]):
        return "audience"
    if claims.get("exp", 0) <= time.time():
        return "expired"
    return None


def error(code: str, description: str, status: int = 400) -> flask.Response:
    return flask.Response(json.dumps({"error": code, "error_description": description}), status=status, content_type="application/json")


@app.route("/v1/token", methods=["POST"])
def token():
    form = flask.request.form
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
        return error("unsupported_grant_type", "token exchange only")
    if form.get("subject_token_type") not in ("urn:ietf:params:oauth:token-type:id_token", "urn:ietf:params:oauth:token-type:jwt"):
        return error("invalid_request", "subject_token_type")
    if form.get("audience") != STATE["audience"]:
        return error("invalid_target", "unknown pool provider")
    reason = verified(form.get("subject_token", ""))
    if reason:
        with LOCK:
            STATE["exchanges"].append({"accepted": False, "reason": reason})
        return error("invalid_grant", "The subject token was refused: " + reason)
    access = "ya29.test-" + secrets.token_urlsafe(24)
    with LOCK:
        STATE["exchanges"].append({"accepted": True, "access_token": access})
    return flask.jsonify({"access_token": access, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                          "token_type": "Bearer", "expires_in": 3600})


@app.route("/_test/exchanges")
def exchanges():
    with LOCK:
        return flask.jsonify({"exchanges": list(STATE["exchanges"])})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL", help="the OIDC test provider's base URL")
    parser.add_argument("--client-id", required=True, help="the audience the id_token must carry")
    parser.add_argument("--audience", required=True, help="the workload identity pool provider it serves")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    STATE["client_id"] = args.client_id
    STATE["audience"] = args.audience
    peer = peerlib.Peer("google-sts", app, args.port)
    return peer.serve({"token_url": peer.base_url + "/v1/token"}, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    sys.exit(main())
