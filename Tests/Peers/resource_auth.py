"""Shared by the resource-server stand-ins (git, kube API, docker engine): which tokens are
live. A token is accepted only when the OIDC test provider at --accept-tokens-from lists it
as issued and still active (access tokens) or unexpired (id_tokens for --id-tokens)."""

from __future__ import annotations

import base64
import json
import logging
import time
import urllib.request

log = logging.getLogger("resource-auth")


def issued(provider: str) -> list[dict]:
    # Loopback only: never through a proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(provider.rstrip("/") + "/_test/issued", timeout=5) as response:
            return json.load(response)["items"]
    except (OSError, ValueError) as error:
        log.warning("could not read issued tokens: %s", type(error).__name__)
        return []


def access_token_item(provider: str, token: str) -> dict | None:
    """The provider's record of a live access token (never printed: it holds the value)."""
    return next((i for i in issued(provider) if i["kind"] == "access_token" and i["value"] == token and i.get("active")), None)


def token_scopes(item: dict) -> list[str]:
    return list(item.get("scopes") or (item.get("scope") or "").split())


def live_access_token(provider: str, token: str, resource: str | None = None, scope: str | None = None) -> bool:
    """A live access token; with `resource`, one issued for it (RFC 8707: the item names it in
    its resources or audience); with `scope`, one whose scopes include it."""
    item = access_token_item(provider, token)
    return item is not None and refusal(item, resource, scope) is None


def refusal(item: dict, resource: str | None = None, scope: str | None = None) -> str | None:
    """Why a live access token's item is not for `resource` / `scope`: "resource", "scope" or None."""
    if resource is not None and resource not in (item.get("resources") or []) + (item.get("audience") or []):
        return "resource"
    if scope is not None and scope not in token_scopes(item):
        return "scope"
    return None


def live_id_token(provider: str, token: str, audience: str | None = None) -> bool:
    """An id_token the provider issued, not expired, for `audience` (the client id) if given.
    (The provider signed it; a real API server would check the signature against the JWKS.)"""
    if not any(i["kind"] == "id_token" and i["value"] == token for i in issued(provider)):
        return False
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return False
    if claims.get("exp", 0) <= time.time():
        return False
    return audience is None or claims.get("aud") == audience or audience in (claims.get("aud") or [])


def bearer_or_basic(header: str) -> tuple[str | None, str | None]:
    """(user, token) from `Bearer T` or `Basic base64(user:T)`; (None, None) otherwise."""
    if header[:7].lower() == "bearer ":
        return None, header[7:].strip()
    if header[:6].lower() == "basic ":
        try:
            user, _, password = base64.b64decode(header[6:].strip()).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None, None
        return user, password
    return None, None
