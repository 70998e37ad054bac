#!/usr/bin/env python3
"""A strict OpenID provider for authkit's tests, wired from authlib's server grants.

    python oidc_provider.py [--port 0] [--log FILE] [--issuer-path /tenant/v2.0] [--alg RS256] ...

Prints one JSON ready line (issuer, clients, ...) on stdout, then logs to --log only.
Strict where real providers are strict: PKCE S256 required for public clients (plain, a
missing or a wrong code_verifier are rejected), redirect URIs matched exactly (any port for
loopback IP literals, RFC 8252 §7.3), codes single-use (a replay revokes what the code
issued), refresh tokens rotated, token parameters only in a form-encoded body.

Everything under /_test/ is a control API for tests (README.md, "Control API"); it is
what makes this a test peer and not a provider to deploy.
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import hmac
import html
import json
import logging
import os
import secrets
import socket
import sys
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit, parse_qsl, urlunsplit

# authlib refuses http:// unless told; the provider is loopback-only by construction.
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
warnings.filterwarnings("ignore")

import flask  # noqa: E402
from authlib.integrations.flask_oauth2 import AuthorizationServer  # noqa: E402
from authlib.oauth2 import OAuth2Error  # noqa: E402
from authlib.oauth2.rfc6749 import (  # noqa: E402
    AccessDeniedError,
    ClientMixin,
    InvalidGrantError,
    InvalidRequestError,
    grants,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from authlib.oauth2.rfc7636.challenge import CODE_CHALLENGE_PATTERN, CODE_VERIFIER_PATTERN  # noqa: E402
from authlib.oauth2.rfc8628 import (  # noqa: E402
    DeviceAuthorizationEndpoint,
    DeviceCodeGrant,
    DeviceCredentialDict,
)
from authlib.oidc.core import OpenIDCode  # noqa: E402
from joserfc import jwt as jose_jwt  # noqa: E402
from joserfc.jwk import ECKey, OKPKey, RSAKey  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

log = logging.getLogger("oidc-provider")

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
MICROSOFT_TENANT_ALIASES = ("common", "organizations", "consumers")
ALL_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

# ---------------------------------------------------------------------------------------------
# Keys


@dataclass
class SigningKey:
    kid: str
    alg: str
    key: Any  # joserfc key

    def public_jwk(self) -> dict[str, Any]:
        jwk = self.key.as_dict(private=False)
        jwk["kid"] = self.kid
        jwk["alg"] = self.alg
        jwk["use"] = "sig"
        return jwk


def generate_key(alg: str, kid_prefix: str = "key") -> SigningKey:
    kid = f"{kid_prefix}-{alg.lower()}-{secrets.token_hex(4)}"
    if alg in ("RS256", "RS384", "RS512", "PS256"):
        key = RSAKey.generate_key(2048, private=True)
    elif alg == "ES256":
        key = ECKey.generate_key("P-256", private=True)
    elif alg == "ES384":
        key = ECKey.generate_key("P-384", private=True)
    elif alg == "EdDSA":
        key = OKPKey.generate_key("Ed25519", private=True)
    else:
        raise ValueError(f"unsupported alg {alg}")
    return SigningKey(kid=kid, alg=alg, key=key)


def sign_jwt(signing: SigningKey, claims: dict[str, Any], typ: str = "JWT") -> str:
    header = {"alg": signing.alg, "kid": signing.kid, "typ": typ}
    return jose_jwt.encode(header, claims, signing.key, algorithms=[signing.alg])


def half_hash(value: str, alg: str) -> str | None:
    """at_hash (OIDC Core §3.1.3.6) for the SHA-256 algorithms; None where the hash is ambiguous."""
    if alg not in ("RS256", "ES256", "PS256"):
        return None
    digest = hashlib.sha256(value.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode("ascii")


# ---------------------------------------------------------------------------------------------
# Clients and users


def is_loopback_ip_host(host: str | None) -> bool:
    return host in ("127.0.0.1", "::1")


def redirect_uri_matches(registered: str, presented: str) -> bool:
    """Exact match, except that the port of a loopback IP literal is ignored (RFC 8252 §7.3)."""
    if registered == presented:
        return True
    r, p = urlsplit(registered), urlsplit(presented)
    if r.scheme != "http" or p.scheme != "http":
        return False
    if not is_loopback_ip_host(r.hostname) or r.hostname != p.hostname:
        return False
    try:
        p.port  # noqa: B018 — raises on a malformed port
    except ValueError:
        return False
    return (r.path or "/") == (p.path or "/") and r.query == p.query and not p.fragment and not p.username


@dataclass
class Client(ClientMixin):
    client_id: str
    redirect_uris: list[str]
    token_endpoint_auth_method: str = "none"  # none | client_secret_basic | client_secret_post
    client_secret: str | None = None
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token", DEVICE_GRANT])
    require_pkce: bool | None = None  # default: required for public clients

    @property
    def is_public(self) -> bool:
        return self.token_endpoint_auth_method == "none"

    @property
    def pkce_required(self) -> bool:
        return self.is_public if self.require_pkce is None else self.require_pkce

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        # No default: the authorization request must name its redirect_uri (OIDC Core §3.1.2.1).
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return ""
        return " ".join(s for s in scope.split() if s in STATE.config["scopes_supported"])

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return any(redirect_uri_matches(r, redirect_uri) for r in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        if self.client_secret is None:
            return False
        return hmac.compare_digest(self.client_secret.encode(), client_secret.encode())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.is_public:
            return method == "none"
        # A confidential client may use either secret method, never "none".
        return method in ("client_secret_basic", "client_secret_post")

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def describe(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "redirect_uris": self.redirect_uris,
            "grant_types": self.grant_types,
            "pkce_required": self.pkce_required,
        }


@dataclass
class User:
    username: str
    sub: str
    claims: dict[str, Any]

    def get_user_id(self) -> str:
        return self.sub


DEFAULT_USERS = [
    ("ada", "Ada Lovelace", "Ada", "Lovelace"),
    ("grace", "Grace Hopper", "Grace", "Hopper"),
    ("alan", "Alan Turing", "Alan", "Turing"),
    ("sean", "Seán O'Brien", "Seán", "O'Brien"),
]


def default_users(domain: str) -> list[User]:
    users = []
    for username, name, given, family in DEFAULT_USERS:
        sub = str(uuid.uuid5(uuid.NAMESPACE_URL, f"authkit-test-peer/{username}"))
        email = f"{username}@{domain}"
        users.append(
            User(
                username=username,
                sub=sub,
                claims={
                    "name": name,
                    "given_name": given,
                    "family_name": family,
                    "preferred_username": email,
                    "email": email,
                    "email_verified": True,
                },
            )
        )
    return users


# ---------------------------------------------------------------------------------------------
# State


@dataclass
class TokenRecord:
    kind: str  # access_token | refresh_token
    value: str
    client_id: str
    sub: str
    scope: str
    issued_at: float
    expires_at: float | None
    family: str  # one authorization grant: every token descending from one code or device login
    auth_time: int
    original_sub: str
    revoked: bool = False
    rotated: bool = False

    def check_client(self, client: Client) -> bool:
        return self.client_id == client.get_client_id()

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return int((self.expires_at or time.time()) - time.time())

    def is_expired(self) -> bool:
        return self.expires_at is not None and time.time() >= self.expires_at

    def is_revoked(self) -> bool:
        return self.revoked

    @property
    def active(self) -> bool:
        return not self.revoked and not self.is_expired()


@dataclass
class CodeRecord:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: User
    nonce: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    auth_time: int
    expires_at: float
    family: str
    used: bool = False

    # authlib's AuthorizationCodeMixin / OIDC mixin surface
    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self) -> str | None:
        return self.nonce

    def get_auth_time(self) -> int:
        return self.auth_time

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None


DEFAULT_CONFIG: dict[str, Any] = {
    "access_token_ttl": 3600,
    "id_token_ttl": 3600,
    "refresh_token_ttl": None,  # None: refresh tokens do not expire
    "authorization_code_ttl": 600,
    "authorization_response_iss_parameter_supported": True,
    "refresh_token_rotation": True,
    "refresh_token_reuse_revokes_family": False,
    "id_token_on_refresh": True,
    "require_nonce": True,
    "device_interval": 5,
    "device_expires_in": 600,
    "scopes_supported": [
        "openid",
        "profile",
        "email",
        "offline_access",
        "User.Read",
        "User.ReadBasic.All",
    ],
}

FAULT_KINDS = {
    # id_token contents (on any token response that carries an id_token)
    "id_token_wrong_nonce",
    "id_token_wrong_iss",
    "id_token_wrong_aud",
    "id_token_expired",
    "id_token_unknown_key",
    "id_token_bad_signature",
    "id_token_omitted",
    "refresh_different_sub",
    # a refreshed id_token that breaks one OIDC Core §12.2 rule
    "refresh_older_iat",
    "refresh_other_auth_time",
    "refresh_with_nonce",
    # the token endpoint, after the grant was processed (a refresh token rotated): the answer
    # repeats a member ("member", "value"), or is held until POST /_test/release
    "duplicate_member",
    "hold",
    # the redirect back to the client after the login form
    "authorize_wrong_iss",
    "authorize_no_iss",
    "authorize_error",
    # any endpoint (filter with "endpoint", and "grant_type" on the token endpoint)
    "error",
    "http_500",
    "malformed",
    "close",
    "delay",
    "patch_json",
    # device grant
    "device_slow_down",
}

ENDPOINT_NAMES = {
    "discovery",
    "jwks",
    "authorize",
    "token",
    "userinfo",
    "revocation",
    "device_authorization",
    "device",
}


class State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.recorder = peerlib.RequestRecorder()
        self.config: dict[str, Any] = copy.deepcopy(DEFAULT_CONFIG)
        self.clients: dict[str, Client] = {}
        self.users: dict[str, User] = {}
        self.keys: list[SigningKey] = []  # published in the JWKS; keys[0] signs
        self.decoys: list[SigningKey] = []  # published, never used to sign
        self.base_url = ""
        self.issuer_path = ""
        self.tenant_id: str | None = None
        self.clear_grants()

    def clear_grants(self) -> None:
        self.codes: dict[str, CodeRecord] = {}
        self.tokens: dict[str, TokenRecord] = {}
        self.id_tokens: list[dict[str, Any]] = []
        self.devices: dict[str, DeviceCredentialDict] = {}
        self.user_grants: dict[str, tuple[User, bool]] = {}
        self.seen_secrets: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []
        self.nonces: set[str] = set()

    # --- issuer ---------------------------------------------------------------------------

    @property
    def template_issuer(self) -> bool:
        return "{tenantid}" in self.issuer_path

    def issuer_for_tokens(self) -> str:
        return self.base_url + self.issuer_path.replace("{tenantid}", self.tenant_id or "")

    def issuer_for_request(self, tenant: str | None) -> str:
        """The issuer a discovery document at this path announces (Microsoft: a template for
        the multi-tenant aliases, the concrete issuer for a tenant id)."""
        if not self.template_issuer:
            return self.base_url + self.issuer_path
        if tenant in MICROSOFT_TENANT_ALIASES:
            return self.base_url + self.issuer_path
        return self.base_url + self.issuer_path.replace("{tenantid}", tenant or "")

    def prefix_for_request(self, tenant: str | None) -> str:
        return self.base_url + self.issuer_path.replace("{tenantid}", tenant or "")

    # --- faults ---------------------------------------------------------------------------

    def take_fault(
        self, kind: str, endpoint: str | None = None, grant_type: str | None = None, after: bool = False,
        named_only: bool = False,
    ) -> dict | None:
        """The first active fault of this kind matching the endpoint/grant filters (and
        `after`: applied once the request was processed); one-shot faults are consumed here.
        `named_only`: only a fault that names this endpoint (the pre-flight probe)."""
        with self.lock:
            for fault in self.faults:
                if fault["kind"] != kind or bool(fault.get("after")) != after:
                    continue
                if named_only and fault.get("endpoint") != endpoint:
                    continue
                if fault.get("endpoint") and endpoint and fault["endpoint"] != endpoint:
                    continue
                if fault.get("endpoint") and not endpoint:
                    continue
                if fault.get("grant_type") and fault["grant_type"] != grant_type:
                    continue
                if not fault.get("until_cleared"):
                    fault["count"] = fault.get("count", 1) - 1
                    if fault["count"] <= 0:
                        self.faults.remove(fault)
                fault_copy = dict(fault)
                log.info("fault applied: %s endpoint=%s grant_type=%s", kind, endpoint or "-", grant_type or "-")
                return fault_copy
        return None

    # --- records ----------------------------------------------------------------------------

    def note_secret(self, kind: str, value: str | None, client_id: str | None = None) -> None:
        if value:
            with self.lock:
                self.seen_secrets.append({"kind": kind, "value": value, "client_id": client_id, "at": time.time()})

    def issued(self) -> dict[str, Any]:
        with self.lock:
            items: list[dict[str, Any]] = []
            for code in self.codes.values():
                items.append(
                    {
                        "kind": "authorization_code",
                        "value": code.code,
                        "client_id": code.client_id,
                        "sub": code.user.sub,
                        "active": not code.used and time.time() < code.expires_at,
                    }
                )
            for token in self.tokens.values():
                items.append(
                    {
                        "kind": token.kind,
                        "value": token.value,
                        "client_id": token.client_id,
                        "sub": token.sub,
                        "scope": token.scope,
                        "issued_at": token.issued_at,
                        "expires_at": token.expires_at,
                        "active": token.active,
                        "revoked": token.revoked,
                        "rotated": token.rotated,
                    }
                )
            items.extend(dict(t) for t in self.id_tokens)
            for device in self.devices.values():
                items.append(
                    {
                        "kind": "device_code",
                        "value": device["device_code"],
                        "client_id": device["client_id"],
                        "active": not device.get("consumed") and not device.is_expired(),
                    }
                )
            for client in self.clients.values():
                if client.client_secret:
                    items.append({"kind": "client_secret", "value": client.client_secret, "client_id": client.client_id})
            items.extend({"kind": s["kind"], "value": s["value"], "client_id": s["client_id"]} for s in self.seen_secrets)
            values = sorted({i["value"] for i in items if i.get("value")})
            return {"items": items, "values": values}

    def revoke_family(self, family: str, reason: str) -> int:
        count = 0
        with self.lock:
            for token in self.tokens.values():
                if token.family == family and not token.revoked:
                    token.revoked = True
                    count += 1
        log.info("revoked %d token(s) of one grant: %s", count, reason)
        return count


STATE = State()

# ---------------------------------------------------------------------------------------------
# Token generation and id_tokens


def random_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def generate_bearer_token(grant_type, client, user=None, scope=None, expires_in=None, include_refresh_token=True):
    """Opaque random access and refresh tokens (not JWTs: a client must not read them)."""
    ttl = int(STATE.config["access_token_ttl"])
    token: dict[str, Any] = {
        "token_type": "Bearer",
        "access_token": random_token(),
        "expires_in": ttl,
    }
    if scope:
        token["scope"] = scope
    if include_refresh_token and client.check_grant_type("refresh_token"):
        token["refresh_token"] = random_token(48)
    return token


def mint_id_token(
    *,
    client_id: str,
    user: User,
    scope: str,
    nonce: str | None,
    auth_time: int,
    access_token: str | None,
    sub_override: str | None = None,
) -> str:
    now = int(time.time())
    shift = int(flask.g.get("issued_at_shift", 0)) if flask.has_request_context() else 0
    claims: dict[str, Any] = {
        "iss": STATE.issuer_for_tokens(),
        "sub": sub_override or user.sub,
        "aud": client_id,
        "azp": client_id,
        "iat": now + shift,
        "nbf": now + shift,
        "exp": now + int(STATE.config["id_token_ttl"]),
        "auth_time": auth_time,
    }
    if nonce:
        claims["nonce"] = nonce
    for name in ("name", "preferred_username", "email", "given_name", "family_name"):
        if name in user.claims:
            claims[name] = user.claims[name]
    if STATE.tenant_id:
        claims["tid"] = STATE.tenant_id
        claims["oid"] = user.sub
        claims["ver"] = "2.0"
    with STATE.lock:
        signing = STATE.keys[0]
    if access_token and (at_hash := half_hash(access_token, signing.alg)):
        claims["at_hash"] = at_hash

    if STATE.take_fault("id_token_wrong_nonce"):
        claims["nonce"] = random_token(16)
    if STATE.take_fault("id_token_wrong_iss"):
        claims["iss"] = STATE.base_url + "/not-the-issuer"
    if STATE.take_fault("id_token_wrong_aud"):
        claims["aud"] = "someone-else"
        claims["azp"] = "someone-else"
    if STATE.take_fault("id_token_expired"):
        claims["iat"] = claims["nbf"] = now - 7200
        claims["exp"] = now - 3600
    if STATE.take_fault("id_token_unknown_key"):
        # A key of the same algorithm whose kid the JWKS never lists.
        signing = generate_key(signing.alg, kid_prefix="unpublished")
    token = sign_jwt(signing, claims)
    if STATE.take_fault("id_token_bad_signature"):
        head, payload, signature = token.split(".")
        raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
        raw[0] ^= 0x01
        token = ".".join([head, payload, base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()])
    with STATE.lock:
        STATE.id_tokens.append(
            {"kind": "id_token", "value": token, "client_id": client_id, "sub": claims["sub"], "kid": signing.kid}
        )
    return token


def attach_id_token(grant, response):
    """after_create_token_response hook for every grant: add an id_token when `openid` was granted."""
    status, token, headers = response
    scope = token.get("scope") or ""
    if status != 200 or "openid" not in scope.split():
        return token
    request = grant.request
    client: Client = request.client
    user: User = request.user
    nonce = None
    auth_time = int(time.time())
    sub_override = None
    code = getattr(request, "authorization_code", None)
    refresh: TokenRecord | None = getattr(request, "refresh_token", None)
    if code is not None:
        nonce = code.get_nonce()
        auth_time = code.get_auth_time()
    elif refresh is not None:
        # OIDC Core §12.2: same iss/sub/aud, auth_time of the original login, no nonce.
        if not STATE.config["id_token_on_refresh"]:
            return token
        auth_time = refresh.auth_time
        if STATE.take_fault("refresh_different_sub"):
            sub_override = user.sub + "-someone-else"
        if STATE.take_fault("refresh_other_auth_time"):
            auth_time = auth_time + 17
        if STATE.take_fault("refresh_with_nonce"):
            nonce = random_token(16)
        if STATE.take_fault("refresh_older_iat"):
            issued_at_shift = -3600
            flask.g.issued_at_shift = issued_at_shift
    if STATE.take_fault("id_token_omitted"):
        return token
    token["id_token"] = mint_id_token(
        client_id=client.get_client_id(),
        user=user,
        scope=scope,
        nonce=nonce,
        auth_time=auth_time,
        access_token=token.get("access_token"),
        sub_override=sub_override,
    )
    return token


def save_token(token: dict[str, Any], request) -> None:
    now = time.time()
    client: Client = request.client
    user: User = request.user
    code: CodeRecord | None = getattr(request, "authorization_code", None)
    refresh: TokenRecord | None = getattr(request, "refresh_token", None)
    credential = getattr(request, "credential", None)
    if code is not None:
        family, auth_time, original_sub = code.family, code.auth_time, user.sub
    elif refresh is not None:
        family, auth_time, original_sub = refresh.family, refresh.auth_time, refresh.original_sub
    else:
        family = credential["family"] if credential is not None else uuid.uuid4().hex
        auth_time, original_sub = int(now), user.sub
    scope = token.get("scope", "")
    with STATE.lock:
        STATE.tokens[token["access_token"]] = TokenRecord(
            kind="access_token",
            value=token["access_token"],
            client_id=client.get_client_id(),
            sub=user.sub,
            scope=scope,
            issued_at=now,
            expires_at=now + int(token["expires_in"]),
            family=family,
            auth_time=auth_time,
            original_sub=original_sub,
        )
        if "refresh_token" in token:
            ttl = STATE.config["refresh_token_ttl"]
            STATE.tokens[token["refresh_token"]] = TokenRecord(
                kind="refresh_token",
                value=token["refresh_token"],
                client_id=client.get_client_id(),
                sub=user.sub,
                scope=scope,
                issued_at=now,
                expires_at=(now + int(ttl)) if ttl else None,
                family=family,
                auth_time=auth_time,
                original_sub=original_sub,
            )


# ---------------------------------------------------------------------------------------------
# Grants


class StrictCodeChallenge(CodeChallenge):
    """RFC 7636 with S256 only; required for public clients (and clients configured so)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "plain"  # what RFC 7636 §4.3 says a missing method means

    def validate_code_challenge(self, grant, redirect_uri):
        request = grant.request
        data = request.payload.data
        challenge = data.get("code_challenge")
        method = data.get("code_challenge_method")
        client: Client = grant.server.query_client(request.payload.client_id)
        state = request.payload.state
        if not challenge and not method:
            if client is not None and client.pkce_required:
                raise InvalidRequestError(
                    "PKCE is required for this client: send code_challenge with code_challenge_method=S256",
                    redirect_uri=redirect_uri,
                    state=state,
                )
            return
        if not challenge:
            raise InvalidRequestError("Missing 'code_challenge'", redirect_uri=redirect_uri, state=state)
        if len(request.payload.datalist.get("code_challenge", [])) > 1:
            raise InvalidRequestError("Multiple 'code_challenge' in request", redirect_uri=redirect_uri, state=state)
        if not CODE_CHALLENGE_PATTERN.match(challenge):
            raise InvalidRequestError("Invalid 'code_challenge'", redirect_uri=redirect_uri, state=state)
        if (method or self.DEFAULT_CODE_CHALLENGE_METHOD) not in self.SUPPORTED_CODE_CHALLENGE_METHOD:
            raise InvalidRequestError(
                "Unsupported 'code_challenge_method': only S256 is accepted",
                redirect_uri=redirect_uri,
                state=state,
            )

    def validate_code_verifier(self, grant, result):
        request = grant.request
        verifier = request.form.get("code_verifier")
        code: CodeRecord = request.authorization_code
        client: Client = request.client
        STATE.note_secret("code_verifier", verifier, client.get_client_id())
        if code.code_challenge is None:
            if client.pkce_required:
                # Cannot happen through /authorize; kept so a mis-stored code cannot bypass PKCE.
                raise InvalidGrantError("PKCE is required for this client")
            if verifier:
                raise InvalidGrantError("code_verifier sent for a code issued without code_challenge")
            return
        if not verifier:
            raise InvalidGrantError("Missing 'code_verifier'")
        if not CODE_VERIFIER_PATTERN.match(verifier):
            raise InvalidGrantError("Invalid 'code_verifier'")
        expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()
        if not hmac.compare_digest(expected, code.code_challenge):
            raise InvalidGrantError("PKCE verification failed: code_verifier does not match code_challenge")

    def get_authorization_code_challenge(self, authorization_code):
        return authorization_code.code_challenge

    def get_authorization_code_challenge_method(self, authorization_code):
        return authorization_code.code_challenge_method


class ProviderOpenIDCode(OpenIDCode):
    def __init__(self) -> None:
        super().__init__(require_nonce=False)  # checked per request below, config may change

    def validate_openid_authorization_request(self, grant, redirect_uri):
        nonce = grant.request.payload.data.get("nonce")
        if not nonce and STATE.config["require_nonce"]:
            raise InvalidRequestError("Missing 'nonce' in request", redirect_uri=redirect_uri, state=grant.request.payload.state)
        super().validate_openid_authorization_request(grant, redirect_uri)

    def exists_nonce(self, nonce, request) -> bool:
        with STATE.lock:
            return nonce in STATE.nonces

    def get_jwt_config(self, grant):  # not used: attach_id_token signs
        raise NotImplementedError

    def generate_user_info(self, user, scope):
        raise NotImplementedError

    def process_token(self, grant, response):
        return attach_id_token(grant, response)


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS

    def save_authorization_code(self, code, request):
        data = request.payload.data
        client: Client = request.client
        nonce = data.get("nonce")
        record = CodeRecord(
            code=code,
            client_id=client.get_client_id(),
            redirect_uri=request.payload.redirect_uri,
            scope=client.get_allowed_scope(request.payload.scope),
            user=request.user,
            nonce=nonce,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
            auth_time=int(time.time()),
            expires_at=time.time() + int(STATE.config["authorization_code_ttl"]),
            family=uuid.uuid4().hex,
        )
        with STATE.lock:
            STATE.codes[code] = record
            if nonce:
                STATE.nonces.add(nonce)

    def query_authorization_code(self, code, client):
        with STATE.lock:
            record = STATE.codes.get(code)
            if record is None or record.client_id != client.get_client_id():
                return None
            if record.used:
                # RFC 6749 §4.1.2: deny, and revoke what the code already issued.
                STATE.revoke_family(record.family, "authorization code replayed")
                return None
            if time.time() >= record.expires_at:
                return None
            return record

    def delete_authorization_code(self, authorization_code):
        with STATE.lock:
            authorization_code.used = True

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS

    def authenticate_refresh_token(self, refresh_token):
        with STATE.lock:
            record = STATE.tokens.get(refresh_token)
            if record is None or record.kind != "refresh_token":
                return None
            if record.rotated and STATE.config["refresh_token_reuse_revokes_family"]:
                STATE.revoke_family(record.family, "rotated refresh token reused")
                return None
            if not record.active:
                return None
            return record

    def authenticate_user(self, refresh_token):
        for user in STATE.users.values():
            if user.sub == refresh_token.original_sub:
                return user
        return None

    def issue_token(self, user, refresh_token):
        scope = self.request.payload.scope or refresh_token.get_scope()
        return self.generate_token(
            user=user, scope=scope, include_refresh_token=bool(STATE.config["refresh_token_rotation"])
        )

    def revoke_old_credential(self, refresh_token):
        if STATE.config["refresh_token_rotation"]:
            with STATE.lock:
                refresh_token.revoked = True
                refresh_token.rotated = True


class ProviderDeviceCodeGrant(DeviceCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS

    def query_device_credential(self, device_code):
        with STATE.lock:
            credential = STATE.devices.get(device_code)
            if credential is None or credential.get("consumed"):
                return None
            return credential

    def query_user_grant(self, user_code):
        with STATE.lock:
            return STATE.user_grants.get(user_code)

    def should_slow_down(self, credential):
        now = time.time()
        with STATE.lock:
            last = credential.get("last_poll")
            credential["last_poll"] = now
            too_fast = last is not None and now - last < credential["interval"]
            if too_fast:
                credential["interval"] += 5  # RFC 8628 §3.5
        return too_fast or STATE.take_fault("device_slow_down") is not None

    def create_token_response(self):
        response = super().create_token_response()
        with STATE.lock:
            self.request.credential["consumed"] = True
        return response


class ProviderDeviceAuthorizationEndpoint(DeviceAuthorizationEndpoint):
    CLIENT_AUTH_METHODS = ALL_AUTH_METHODS

    def create_endpoint_response(self, request):
        client = self.authenticate_client(request)
        if not client.check_grant_type(DEVICE_GRANT):
            raise InvalidRequestError("The client may not use the device authorization grant")
        self.server.validate_requested_scope(request.payload.scope)
        device_code = self.generate_device_code()
        user_code = self.generate_user_code()
        verification_uri = STATE.prefix_for_request(flask.g.get("tenant")) + "/device"
        interval = int(STATE.config["device_interval"])
        expires_in = int(STATE.config["device_expires_in"])
        data = {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": verification_uri,
            "verification_uri_complete": verification_uri + "?" + urlencode({"user_code": user_code}),
            "expires_in": expires_in,
            "interval": interval,
        }
        credential = DeviceCredentialDict(
            device_code=device_code,
            user_code=user_code,
            client_id=client.get_client_id(),
            scope=client.get_allowed_scope(request.payload.scope),
            expires_at=time.time() + expires_in,
            interval=interval,
            family=uuid.uuid4().hex,
        )
        with STATE.lock:
            STATE.devices[device_code] = credential
        return 200, data, [("Content-Type", "application/json"), ("Cache-Control", "no-store")]


class ProviderRevocationEndpoint(RevocationEndpoint):
    CLIENT_AUTH_METHODS = ALL_AUTH_METHODS

    def query_token(self, token_string, token_type_hint):
        with STATE.lock:
            return STATE.tokens.get(token_string)

    def revoke_token(self, token, request):
        with STATE.lock:
            token.revoked = True
            if token.kind == "refresh_token":
                # RFC 7009 §2.1: also invalidate access tokens of the same grant.
                STATE.revoke_family(token.family, "refresh token revoked")


# ---------------------------------------------------------------------------------------------
# Flask application

server = AuthorizationServer()
app = flask.Flask(__name__)
app.config["OAUTH2_SCOPES_SUPPORTED"] = DEFAULT_CONFIG["scopes_supported"]


def query_client(client_id: str) -> Client | None:
    return STATE.clients.get(client_id)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> flask.Response:
    response = flask.Response(json.dumps(body), status=status, mimetype="application/json")
    response.headers["Cache-Control"] = "no-store"
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def mark(endpoint: str, grant_type: str | None = None) -> None:
    env = flask.request.environ
    env["peer.endpoint"] = endpoint
    if grant_type:
        env["peer.grant_type"] = grant_type


def drop_connection() -> None:
    flask.request.environ["peer.closed"] = True
    sock = flask.request.environ.get("werkzeug.socket")
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    flask.abort(500)


def apply_transport_faults(endpoint: str, grant_type: str | None = None, named_only: bool = False) -> flask.Response | None:
    """Delay, HTTP 500, error, malformed body or a dropped connection, as the tests asked.
    These act before the request is processed: nothing (no code, no refresh token) is used up."""
    if fault := STATE.take_fault("delay", endpoint, grant_type, named_only=named_only):
        time.sleep(max(0, int(fault.get("ms", 1000))) / 1000)
    if STATE.take_fault("close", endpoint, grant_type, named_only=named_only):
        drop_connection()
    if fault := STATE.take_fault("http_500", endpoint, grant_type, named_only=named_only):
        return flask.Response(fault.get("body", "Internal Server Error"), status=500, mimetype="text/plain")
    if fault := STATE.take_fault("malformed", endpoint, grant_type, named_only=named_only):
        body = fault.get("body", '{"access_token": "truncated')
        return flask.Response(body, status=int(fault.get("status", 200)), mimetype=fault.get("content_type", "application/json"))
    if fault := STATE.take_fault("error", endpoint, grant_type, named_only=named_only):
        body = {"error": fault.get("error", "server_error")}
        if "error_description" in fault:
            body["error_description"] = fault["error_description"]
        return json_response(body, int(fault.get("status", 400)))
    return None


def patch_json(endpoint: str, body: dict[str, Any], grant_type: str | None = None) -> dict[str, Any]:
    if fault := STATE.take_fault("patch_json", endpoint, grant_type):
        for key, value in fault.get("patch", {}).items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
    return body


@app.url_value_preprocessor
def pull_tenant(endpoint, values):
    if values and "tenant" in values:
        flask.g.tenant = values.pop("tenant")


def tenant_ok() -> bool:
    if not STATE.template_issuer:
        return True
    tenant = flask.g.get("tenant")
    return tenant in MICROSOFT_TENANT_ALIASES or tenant == STATE.tenant_id


def discovery_document() -> dict[str, Any]:
    tenant = flask.g.get("tenant")
    prefix = STATE.prefix_for_request(tenant)
    with STATE.lock:
        algs = list(dict.fromkeys(k.alg for k in STATE.keys + STATE.decoys))
    return {
        "issuer": STATE.issuer_for_request(tenant),
        "authorization_endpoint": prefix + "/authorize",
        "token_endpoint": prefix + "/token",
        "jwks_uri": prefix + "/jwks",
        "userinfo_endpoint": prefix + "/userinfo",
        "revocation_endpoint": prefix + "/revoke",
        "device_authorization_endpoint": prefix + "/device_authorization",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": algs,
        "scopes_supported": list(STATE.config["scopes_supported"]),
        "claims_supported": [
            "iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "name",
            "given_name", "family_name", "preferred_username", "email", "email_verified",
        ] + (["tid", "oid"] if STATE.tenant_id else []),
        "token_endpoint_auth_methods_supported": ALL_AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": ALL_AUTH_METHODS,
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": bool(
            STATE.config["authorization_response_iss_parameter_supported"]
        ),
    }


def route(rule: str, **options):
    """Register an OpenID endpoint under the issuer's path (with a <tenant> segment for the
    Microsoft-style template issuer)."""
    prefix = STATE.issuer_path.replace("{tenantid}", "<tenant>")

    def decorator(view):
        return app.route(prefix + rule, **options)(view)

    return decorator


def install_routes() -> None:
    @route("/.well-known/openid-configuration", methods=["GET"])
    def openid_configuration():
        mark("discovery")
        if not tenant_ok():
            return json_response({"error": "invalid_tenant"}, 400)
        if response := apply_transport_faults("discovery"):
            return response
        return json_response(patch_json("discovery", discovery_document()))

    @route("/jwks", methods=["GET"])
    def jwks():
        mark("jwks")
        if response := apply_transport_faults("jwks"):
            return response
        with STATE.lock:
            keys = [k.public_jwk() for k in STATE.keys + STATE.decoys]
        return json_response(patch_json("jwks", {"keys": keys}), headers={"Cache-Control": "public, max-age=300"})

    @route("/authorize", methods=["GET", "POST"])
    def authorize():
        mark("authorize")
        if not tenant_ok():
            return error_page(400, "invalid_tenant", "unknown tenant")
        if response := apply_transport_faults("authorize"):
            return response
        return handle_authorize()

    @route("/token", methods=["POST"])
    def token():
        grant_type = flask.request.form.get("grant_type")
        code = flask.request.form.get("code")
        if grant_type == "authorization_code" and code is not None:
            with STATE.lock:
                issued = code in STATE.codes
            if not issued:
                # authkit's client pre-flight (a code this provider never issued, sent before
                # the browser opens): logged as its own endpoint, so the tests' counts of code
                # exchanges and their faults ("the next token request fails") see only the
                # real exchange; a fault reaches it only if it names "token_preflight".
                mark("token_preflight")
                if response := apply_transport_faults("token_preflight", named_only=True):
                    return response
                return handle_token(grant_type)
        mark("token", grant_type)
        if response := apply_transport_faults("token", grant_type):
            return response
        return handle_token(grant_type)

    @route("/revoke", methods=["POST"])
    def revoke():
        mark("revocation")
        if response := apply_transport_faults("revocation"):
            return response
        if response := reject_query_parameters():
            return response
        note_client_secret()
        with STATE.lock:
            return server.create_endpoint_response("revocation")

    @route("/device_authorization", methods=["POST"])
    def device_authorization():
        mark("device_authorization")
        if response := apply_transport_faults("device_authorization"):
            return response
        if response := reject_query_parameters():
            return response
        note_client_secret()
        return server.create_endpoint_response("device_authorization")

    @route("/device", methods=["GET", "POST"])
    def device():
        mark("device")
        return handle_device_verification()

    @route("/userinfo", methods=["GET", "POST"])
    def userinfo():
        mark("userinfo")
        if response := apply_transport_faults("userinfo"):
            return response
        header = flask.request.headers.get("Authorization", "")
        value = header[7:] if header[:7].lower() == "bearer " else ""
        with STATE.lock:
            record = STATE.tokens.get(value)
        if record is None or record.kind != "access_token" or not record.active:
            return json_response(
                {"error": "invalid_token"}, 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'}
            )
        user = next((u for u in STATE.users.values() if u.sub == record.sub), None)
        claims = {"sub": record.sub}
        if user:
            claims.update(user.claims)
        return json_response(claims)


def reject_query_parameters() -> flask.Response | None:
    """Token-like endpoints take parameters in a form body only (RFC 6749 §3.2)."""
    if flask.request.args:
        return json_response(
            {"error": "invalid_request", "error_description": "parameters must be sent in the request body, not the URL"},
            400,
        )
    ctype = flask.request.mimetype
    if ctype != "application/x-www-form-urlencoded":
        return json_response(
            {"error": "invalid_request", "error_description": "the body must be application/x-www-form-urlencoded"},
            400,
        )
    return None


def note_client_secret() -> None:
    STATE.note_secret("client_secret", flask.request.form.get("client_secret"), flask.request.form.get("client_id"))
    auth = flask.request.authorization
    if auth is not None and auth.type == "basic":
        STATE.note_secret("client_secret", auth.password, auth.username)


def handle_token(grant_type: str | None) -> flask.Response:
    if response := reject_query_parameters():
        return response
    note_client_secret()
    # One token request at a time: a code or a refresh token is consumed atomically, so two
    # racing requests cannot both succeed (and the refresh race counts true requests).
    with STATE.lock:
        request = server.create_oauth2_request(None)
        try:
            grant = server.get_token_grant(request)
        except OAuth2Error as error:
            return server.handle_error_response(request, error)
        try:
            grant.validate_token_request()
            status, body, headers = grant.create_token_response()
        except OAuth2Error as error:
            return server.handle_error_response(request, error)
    if STATE.take_fault("close", "token", grant_type, after=True):
        # The grant was processed (a refresh token rotated) but the answer is lost.
        drop_connection()
    body = patch_json("token", body, grant_type)
    if fault := STATE.take_fault("hold", "token", grant_type, after=True):
        # The grant is processed (a refresh token rotated); the answer waits for the test
        # (POST /_test/release), which can kill the client meanwhile.
        log.info("holding a token answer until released")
        RELEASE.clear()
        HELD.set()
        RELEASE.wait(timeout=float(fault.get("seconds", 30)))
        HELD.clear()
    if fault := STATE.take_fault("duplicate_member", "token", grant_type, after=True):
        text = json.dumps(body)
        extra = json.dumps({fault.get("member", "access_token"): fault.get("value", "second-value")})
        text = text[:-1] + ", " + extra[1:]
        return flask.Response(text, status=status, mimetype="application/json", headers={"Pragma": "no-cache", "Cache-Control": "no-store"})
    return json_response(body, status, {"Pragma": "no-cache"})


HELD = threading.Event()
RELEASE = threading.Event()


@app.route("/_test/release", methods=["POST", "GET"])
def test_release():
    """GET: whether a token answer is being held; POST: let it go."""
    flask.request.environ["peer.unlogged"] = True
    if flask.request.method == "POST":
        RELEASE.set()
    return json_response({"holding": HELD.is_set()})


# --- the authorization endpoint ---------------------------------------------------------------

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>
<body><h1>{title}</h1>{body}</body></html>
"""


def error_page(status: int, error: str, description: str) -> flask.Response:
    body = f"<p class='error'><code>{html.escape(error)}</code>: {html.escape(description)}</p>"
    return flask.Response(PAGE.format(title="Sign-in error", body=body), status=status, mimetype="text/html")


def login_form(params: dict[str, str], client: Client, message: str = "") -> str:
    hidden = "\n".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in params.items()
        if k not in ("username", "decision")
    )
    users = ", ".join(html.escape(u) for u in STATE.users)
    note = f"<p class='error'>{html.escape(message)}</p>" if message else ""
    scopes = html.escape(params.get("scope", ""))
    return f"""{note}
<p>The application <code>{html.escape(client.client_id)}</code> asks for: <code>{scopes}</code></p>
<form method="post" action="{html.escape(flask.request.path)}" id="login">
{hidden}
<label>Username <input type="text" name="username" autocomplete="username" required></label>
<p>Known users: {users}</p>
<button type="submit" name="decision" value="approve">Sign in and allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>"""


def add_issuer(location: str, *, fault_ok: bool = True) -> str:
    """RFC 9207: the iss parameter on every authorization response (success and error)."""
    send = bool(STATE.config["authorization_response_iss_parameter_supported"])
    issuer = STATE.issuer_for_tokens()
    if fault_ok and STATE.take_fault("authorize_no_iss"):
        send = False
    elif fault_ok and STATE.take_fault("authorize_wrong_iss"):
        send, issuer = True, STATE.base_url + "/not-the-issuer"
    if not send:
        return location
    parts = urlsplit(location)
    query = parse_qsl(parts.query, keep_blank_values=True) + [("iss", issuer)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def redirect(location: str) -> flask.Response:
    response = flask.Response("", status=302)
    response.headers["Location"] = location
    response.headers["Cache-Control"] = "no-store"
    return response


def error_redirect(error: OAuth2Error) -> flask.Response:
    if error.redirect_uri:
        status, _, headers = error()
        return redirect(add_issuer(dict(headers)["Location"], fault_ok=False))
    # No validated redirect URI: never redirect, show the error to the person (RFC 6749 §4.1.2.1).
    return error_page(400, error.error or "invalid_request", error.description or "")


def handle_authorize() -> flask.Response:
    params = {k: v for k, v in flask.request.values.items()}
    is_post = flask.request.method == "POST"
    user: User | None = None
    if is_post:
        username = (flask.request.form.get("username") or "").strip()
        user = STATE.users.get(username)
    try:
        grant = server.get_consent_grant(end_user=user if is_post else None)
    except OAuth2Error as error:
        return error_redirect(error)
    client: Client = grant.client
    redirect_uri = grant.redirect_uri
    state = flask.request.values.get("state")

    if not is_post:
        return flask.Response(PAGE.format(title="Sign in", body=login_form(params, client)), mimetype="text/html")

    decision = flask.request.form.get("decision", "approve")
    if decision == "approve" and user is None:
        page = PAGE.format(title="Sign in", body=login_form(params, client, "Unknown user."))
        return flask.Response(page, status=401, mimetype="text/html")
    if fault := STATE.take_fault("authorize_error"):
        error = OAuth2Error(
            description=fault.get("error_description", "The provider refused the request (test fault)"),
            redirect_uri=redirect_uri,
            state=state,
            error=fault.get("error", "server_error"),
        )
        return redirect_with_faults(error()[2])
    try:
        if decision != "approve":
            raise AccessDeniedError(
                description="The user denied the request", redirect_uri=redirect_uri, state=state
            )
        status, _, headers = grant.create_authorization_response(redirect_uri, user)
    except OAuth2Error as error:
        error.state = state
        if not error.redirect_uri:
            return error_page(400, error.error or "invalid_request", error.description or "")
        return redirect_with_faults(error()[2])
    return redirect_with_faults(headers)


def redirect_with_faults(headers) -> flask.Response:
    return redirect(add_issuer(dict(headers)["Location"]))


# --- device verification page ------------------------------------------------------------------


def handle_device_verification() -> flask.Response:
    user_code = (flask.request.values.get("user_code") or "").strip().upper()
    with STATE.lock:
        credential = next((d for d in STATE.devices.values() if d["user_code"] == user_code), None)
    if flask.request.method == "GET" or credential is None:
        message = "" if flask.request.method == "GET" else "Unknown or expired code."
        body = f"""<p class='error'>{html.escape(message)}</p>
<form method="post" action="{html.escape(flask.request.path)}" id="device">
<label>Code <input type="text" name="user_code" value="{html.escape(user_code)}" required></label>
<label>Username <input type="text" name="username" required></label>
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>"""
        status = 200 if flask.request.method == "GET" else 400
        return flask.Response(PAGE.format(title="Device sign-in", body=body), status=status, mimetype="text/html")
    if credential.is_expired() or credential.get("consumed"):
        return error_page(400, "expired_token", "This code has expired.")
    username = (flask.request.form.get("username") or "").strip()
    approve = flask.request.form.get("decision", "approve") == "approve"
    user = STATE.users.get(username)
    if approve and user is None:
        return error_page(401, "unknown_user", "Unknown user.")
    with STATE.lock:
        STATE.user_grants[user_code] = (user, approve) if approve else (None, False)
    text = "Approved: you may return to your device." if approve else "Denied."
    return flask.Response(PAGE.format(title="Device sign-in", body=f"<p id='result'>{text}</p>"), mimetype="text/html")


# --- test control API ---------------------------------------------------------------------------


@app.route("/_test/log", methods=["GET", "DELETE"])
def test_log():
    flask.request.environ["peer.unlogged"] = True
    if flask.request.method == "DELETE":
        STATE.recorder.reset()
        return json_response({"ok": True})
    return json_response(STATE.recorder.snapshot())


@app.route("/_test/issued", methods=["GET"])
def test_issued():
    flask.request.environ["peer.unlogged"] = True
    return json_response(STATE.issued())


@app.route("/_test/rotate-keys", methods=["POST"])
def test_rotate_keys():
    flask.request.environ["peer.unlogged"] = True
    body = flask.request.get_json(silent=True) or {}
    keep_old = bool(body.get("keep_old", False))
    with STATE.lock:
        old = STATE.keys[0]
        new = generate_key(body.get("alg") or old.alg)
        STATE.keys = [new] + (STATE.keys if keep_old else [])
        kids = [k.kid for k in STATE.keys]
    log.info("signing key rotated: %s -> %s (keep_old=%s)", old.kid, new.kid, keep_old)
    return json_response({"kid": new.kid, "alg": new.alg, "previous_kid": old.kid, "published_kids": kids})


@app.route("/_test/faults", methods=["GET", "POST", "DELETE"])
def test_faults():
    flask.request.environ["peer.unlogged"] = True
    if flask.request.method == "DELETE":
        with STATE.lock:
            STATE.faults.clear()
        return json_response({"faults": []})
    if flask.request.method == "POST":
        body = flask.request.get_json(silent=True)
        if not isinstance(body, dict):
            return json_response({"error": "body must be a JSON object"}, 400)
        if body.get("clear"):
            with STATE.lock:
                STATE.faults.clear()
        faults = body.get("faults", [] if "kind" not in body else [body])
        for fault in faults:
            if not isinstance(fault, dict) or fault.get("kind") not in FAULT_KINDS:
                return json_response({"error": f"unknown fault {fault!r}", "kinds": sorted(FAULT_KINDS)}, 400)
            if fault.get("endpoint") and fault["endpoint"] not in ENDPOINT_NAMES:
                return json_response({"error": f"unknown endpoint {fault['endpoint']!r}", "endpoints": sorted(ENDPOINT_NAMES)}, 400)
            if fault["kind"] in ("error", "http_500", "malformed", "close", "delay", "patch_json") and not fault.get("endpoint"):
                return json_response({"error": f"fault {fault['kind']} needs an endpoint"}, 400)
        with STATE.lock:
            for fault in faults:
                entry = dict(fault)
                entry.setdefault("count", 1)
                STATE.faults.append(entry)
            log.info("faults set: %s", ", ".join(f["kind"] for f in faults) or "-")
    with STATE.lock:
        return json_response({"faults": [dict(f) for f in STATE.faults]})


@app.route("/_test/config", methods=["GET", "POST"])
def test_config():
    flask.request.environ["peer.unlogged"] = True
    if flask.request.method == "POST":
        body = flask.request.get_json(silent=True)
        if not isinstance(body, dict):
            return json_response({"error": "body must be a JSON object"}, 400)
        unknown = sorted(set(body) - set(DEFAULT_CONFIG))
        if unknown:
            return json_response({"error": f"unknown config keys {unknown}", "keys": sorted(DEFAULT_CONFIG)}, 400)
        with STATE.lock:
            STATE.config.update(body)
            server.scopes_supported = STATE.config["scopes_supported"]
        log.info("config changed: %s", ", ".join(sorted(body)))
    with STATE.lock:
        return json_response(dict(STATE.config))


@app.route("/_test/reset", methods=["POST"])
def test_reset():
    flask.request.environ["peer.unlogged"] = True
    with STATE.lock:
        STATE.clear_grants()
        STATE.config = copy.deepcopy(INITIAL_CONFIG)
        server.scopes_supported = STATE.config["scopes_supported"]
    STATE.recorder.reset()
    log.info("state reset")
    return json_response({"ok": True})


@app.route("/_test/info", methods=["GET"])
def test_info():
    flask.request.environ["peer.unlogged"] = True
    return json_response(ready_info())


INITIAL_CONFIG: dict[str, Any] = copy.deepcopy(DEFAULT_CONFIG)

# --- request log middleware -------------------------------------------------------------------


class LoggingMiddleware:
    """Records every request's method, path, endpoint, grant_type, parameter names and status."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        captured: dict[str, Any] = {}

        def capture(status, headers, exc_info=None):
            captured["status"] = int(status.split()[0])
            return start_response(status, headers, exc_info)

        started = time.time()
        try:
            return self.wsgi_app(environ, capture)
        finally:
            if not environ.get("peer.unlogged"):
                names = sorted({k for k, _ in parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)})
                names += sorted(environ.get("peer.form_names", []))
                STATE.recorder.record(
                    {
                        "method": environ.get("REQUEST_METHOD"),
                        "path": environ.get("PATH_INFO"),
                        "endpoint": environ.get("peer.endpoint"),
                        "grant_type": environ.get("peer.grant_type"),
                        "status": "closed" if environ.get("peer.closed") else captured.get("status"),
                        "params": names,
                        "basic_auth": environ.get("HTTP_AUTHORIZATION", "").lower().startswith("basic "),
                        "bearer": environ.get("HTTP_AUTHORIZATION", "").lower().startswith("bearer "),
                        "at": started,
                        "ms": int((time.time() - started) * 1000),
                    }
                )


@app.after_request
def note_form_names(response):
    if flask.request.mimetype == "application/x-www-form-urlencoded":
        flask.request.environ["peer.form_names"] = list(flask.request.form.keys())
    return response


# ---------------------------------------------------------------------------------------------
# Start-up


def load_clients_file(path: str) -> tuple[list[Client], list[User]]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    clients = [
        Client(
            client_id=c["client_id"],
            redirect_uris=list(c["redirect_uris"]),
            token_endpoint_auth_method=c.get("token_endpoint_auth_method", "none"),
            client_secret=c.get("client_secret"),
            grant_types=list(c.get("grant_types", ["authorization_code", "refresh_token", DEVICE_GRANT])),
            require_pkce=c.get("require_pkce"),
        )
        for c in data.get("clients", [])
    ]
    users = [
        User(username=u["username"], sub=u.get("sub") or str(uuid.uuid4()), claims={k: v for k, v in u.items() if k not in ("username", "sub")})
        for u in data.get("users", [])
    ]
    return clients, users


def ready_info() -> dict[str, Any]:
    issuer = STATE.base_url + STATE.issuer_path
    discovery_issuer = issuer.replace("{tenantid}", "common") if STATE.template_issuer else issuer
    return {
        "issuer": STATE.issuer_for_tokens(),
        "discovery_url": discovery_issuer + "/.well-known/openid-configuration",
        "issuer_template": issuer if STATE.template_issuer else None,
        "tenant_id": STATE.tenant_id,
        "clients": [c.describe() for c in STATE.clients.values()],
        "users": [{"username": u.username, "sub": u.sub, **u.claims} for u in STATE.users.values()],
        "alg": STATE.keys[0].alg,
        "kid": STATE.keys[0].kid,
        "control": STATE.base_url + "/_test",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--issuer-path", default="", help="path appended to http://127.0.0.1:PORT to form the issuer; may contain {tenantid}")
    parser.add_argument("--tenant-id", help="adds tid/oid claims; required with a {tenantid} issuer path")
    parser.add_argument("--alg", default="RS256", choices=["RS256", "PS256", "ES256", "ES384", "EdDSA"], help="id_token signing algorithm")
    parser.add_argument("--jwks-extra", default="", help="comma-separated algorithms of extra published keys that never sign (e.g. ES256,EdDSA)")
    parser.add_argument("--public-client-id", default="authkit-test-public")
    parser.add_argument("--confidential-client-id", default="authkit-test-confidential")
    parser.add_argument("--client-secret", help="secret of the confidential client (default: random, shown in the ready line)")
    parser.add_argument("--redirect-uri", action="append", help="registered redirect URI of the built-in clients (repeatable)")
    parser.add_argument("--clients", metavar="FILE", help="JSON file with {clients: [...], users: [...]} replacing the built-in ones")
    parser.add_argument("--access-token-ttl", type=int, default=DEFAULT_CONFIG["access_token_ttl"])
    parser.add_argument("--id-token-ttl", type=int, default=DEFAULT_CONFIG["id_token_ttl"])
    parser.add_argument("--device-interval", type=int, default=DEFAULT_CONFIG["device_interval"])
    parser.add_argument("--no-iss-parameter", action="store_true", help="neither advertise nor send RFC 9207's iss")
    parser.add_argument("--no-refresh-rotation", action="store_true", help="keep refresh tokens valid after use")
    parser.add_argument("--email-domain", default="example.test")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)

    if "{tenantid}" in args.issuer_path and not args.tenant_id:
        parser.error("--issuer-path with {tenantid} needs --tenant-id")
    if args.issuer_path and not args.issuer_path.startswith("/"):
        parser.error("--issuer-path must start with /")
    STATE.issuer_path = args.issuer_path.rstrip("/")
    STATE.tenant_id = args.tenant_id
    STATE.config.update(
        access_token_ttl=args.access_token_ttl,
        id_token_ttl=args.id_token_ttl,
        device_interval=args.device_interval,
        authorization_response_iss_parameter_supported=not args.no_iss_parameter,
        refresh_token_rotation=not args.no_refresh_rotation,
    )
    INITIAL_CONFIG.clear()
    INITIAL_CONFIG.update(copy.deepcopy(STATE.config))

    STATE.keys = [generate_key(args.alg)]
    STATE.decoys = [generate_key(a.strip(), kid_prefix="decoy") for a in args.jwks_extra.split(",") if a.strip()]

    if args.clients:
        clients, users = load_clients_file(args.clients)
    else:
        redirects = args.redirect_uri or [
            "http://127.0.0.1/callback",
            "http://127.0.0.1/",
            "http://[::1]/callback",
            "http://[::1]/",
        ]
        clients = [
            Client(client_id=args.public_client_id, redirect_uris=redirects, token_endpoint_auth_method="none"),
            Client(
                client_id=args.confidential_client_id,
                redirect_uris=redirects,
                token_endpoint_auth_method="client_secret_basic",
                client_secret=args.client_secret or random_token(24),
            ),
        ]
        users = []
    STATE.clients = {c.client_id: c for c in clients}
    STATE.users = {u.username: u for u in (users or default_users(args.email_domain))}

    server.init_app(app, query_client=query_client, save_token=save_token)
    server.scopes_supported = STATE.config["scopes_supported"]
    server.register_token_generator("default", generate_bearer_token)
    server.register_grant(AuthorizationCodeGrant, [StrictCodeChallenge(required=True), ProviderOpenIDCode()])

    class IdTokenOnRefresh:
        def __call__(self, grant):
            grant.register_hook("after_create_token_response", attach_id_token)

    server.register_grant(RefreshTokenGrant, [IdTokenOnRefresh()])
    server.register_grant(ProviderDeviceCodeGrant, [IdTokenOnRefresh()])
    server.register_endpoint(ProviderRevocationEndpoint)
    server.register_endpoint(ProviderDeviceAuthorizationEndpoint)
    install_routes()

    @app.errorhandler(404)
    def not_found(_):
        return json_response({"error": "not_found"}, 404)

    app.wsgi_app = LoggingMiddleware(app.wsgi_app)
    peer = peerlib.Peer("oidc-provider", app, args.port)
    STATE.base_url = peer.base_url
    return peer.serve(ready_info(), watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    peerlib.run_main(main)
