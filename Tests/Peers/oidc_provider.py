#!/usr/bin/env python3
"""A strict OpenID provider for authkit's tests, wired from authlib's server grants.

    python oidc_provider.py [--port 0] [--log FILE] [--issuer-path /tenant/v2.0] [--alg RS256] ...

Prints one JSON ready line (issuer, clients, ...) on stdout, then logs to --log only.
Strict where real providers are strict: PKCE S256 required for public clients (plain, a
missing or a wrong code_verifier are rejected), redirect URIs matched exactly (any port for
loopback IP literals, RFC 8252 §7.3), codes single-use (a replay revokes what the code
issued), refresh tokens rotated, token parameters only in a form-encoded body.

DPoP (RFC 9449) and PAR (RFC 9126) are off unless a flag or POST /_test/config turns them
on; off, the provider behaves as it always did (a DPoP header is ignored, as by a server
without DPoP: the answer is a Bearer token; /par is 404; request_uri and dpop_jkt mean nothing).

--dpop (config `dpop`): discovery advertises dpop_signing_alg_values_supported (ES256, ES384,
RS256, PS256, EdDSA) and every DPoP header is checked (RFC 9449 section 4.3) at the token
endpoint, /userinfo, /revoke and /par: exactly one header; a compact JWS with typ dpop+jwt;
alg one of the advertised (never none, never HS*); a jwk header that is a public key (no d,
p, q, dp, dq, qi, oth, k) of the alg's type (RSA at least 2048 bits) and verifies the
signature; jti unique (a replay cache keyed by jti, five minutes); htm the request's method;
htu the endpoint's own URL, scheme://host:port/path (normalized; a query or fragment in htu
is refused); iat within +-`dpop_iat_window` seconds (default 60); at /userinfo, ath =
base64url(SHA-256(access token)). A bad proof: 400 invalid_dpop_proof at the token endpoint,
/par and /revoke; 401 with `WWW-Authenticate: DPoP error="invalid_dpop_proof"` at /userinfo.
A token request with a valid proof is answered token_type DPoP, its access token bound to the
proof key's RFC 7638 thumbprint (jkt, kept in the token record: access tokens are opaque, so
there is no JWT to carry cnf), and for a public client its refresh token too (section 5).
Refreshing a bound refresh token needs a proof with the same key: another key is 400
invalid_dpop_proof; no proof at all is 400 invalid_grant (RFC 9449 section 5 names no error:
without a proof there is nothing to call an invalid proof, and the grant is not usable by a
Bearer request); the refreshed tokens stay bound. A dpop_jkt parameter at /authorize or /par
(43 base64url characters, else invalid_request) binds the code: the token request needs a
proof with that key, else 400 invalid_grant (none or another key alike). Without a proof the
answer is token_type Bearer, as always. /userinfo takes a bound token only as
`Authorization: DPoP <token>` with a valid proof of the bound key (another key:
invalid_dpop_proof); a bound token as Bearer is 401 invalid_token (challenges `Bearer
error="invalid_token"` and `DPoP algs=...`), an unbound one as DPoP is 401 invalid_token.
/revoke takes requests with or without a proof (a present one is checked, never a nonce).

--dpop-nonce (config `dpop_nonce`, implies dpop): the token endpoint and /userinfo require the
current server nonce in every proof (sections 8 and 9). One nonce at a time, replaced after
`dpop_nonce_uses` (default 3) accepted proofs carrying it; missing or not current: 400
{"error": "use_dpop_nonce"} at the token endpoint, 401 `WWW-Authenticate: DPoP
error="use_dpop_nonce"` at /userinfo, each with `DPoP-Nonce: <current>`. Every answer to a
request with a proof at those endpoints carries `DPoP-Nonce` with the nonce now current
(successes too, so a rotation reaches the client). /par and /revoke never check a nonce.

--par (config `par`): discovery advertises pushed_authorization_request_endpoint (ISSUER/par)
and require_pushed_authorization_requests. POST /par authenticates the client as the token
endpoint does (a public client: client_id in the form), takes the authorization request's
parameters in a form body (each once; no request_uri, no request object; a client_id other
than the authenticated client's is invalid_request), validates them as /authorize would
(registered redirect URI, PKCE, nonce, scope) and answers 201 {"request_uri":
"urn:ietf:params:oauth:request_uri:<random>", "expires_in": `par_expires_in` (60)}; errors
are JSON, never redirects. A DPoP proof at /par binds the code like dpop_jkt (RFC 9449 section
10.1); a dpop_jkt that differs from the proof's key is 400 invalid_dpop_proof. /authorize with
request_uri takes the pushed parameters; its query may carry only client_id (required, the
pusher's) and request_uri: anything else sent again outside the push (redirect_uri, scope,
state, ...) is refused with invalid_request on the provider's page, as are an unknown, expired
or used request_uri (invalid_request_uri). A request_uri may be shown again (a reload) until
the sign-in form is answered; then it is used up.
--par-required (config `par_required`, implies par): advertised as
require_pushed_authorization_requests: true; /authorize without request_uri is refused with
invalid_request on the provider's page (its redirect_uri is not trusted).

Everything under /_test/ is a control API for tests (README.md, "Control API"); it is
what makes this a test peer and not a provider to deploy. GET /_test/dpop lists the proofs
received (never a token value) and counts the refused replays, GET /_test/par the pushed
requests (parameter names only); /_test/issued gives each token's token_type, bound and jkt.
DPoP faults: dpop_nonce_rotate (the next proof's nonce refused with use_dpop_nonce and a new
nonce, even if current), dpop_token_type_bearer (a proved token request answered Bearer with
unbound tokens: a downgrade), dpop_token_type_dpop_unasked (a request without proof answered
token_type DPoP), dpop_refuse_proof (the next proved request refused with invalid_dpop_proof).

Resource indicators (RFC 8707), JWT access tokens (RFC 9068) and token exchange (RFC 8693) are
off unless a flag or POST /_test/config turns them on; off, a resource, audience or
subject_token parameter means nothing (as before) and access tokens are opaque.

--resources URI[,URI...] (config `resources`, a list; '*' or ["*"]: any absolute URI without
fragment): `resource` (repeatable) is taken at /authorize, /par and the token endpoint
(authorization_code, refresh_token, token exchange). A resource that is not allowed, not an
absolute URI (RFC 3986 section 4.3) or has a fragment is invalid_target: 400 JSON at the token
endpoint and /par, an error redirect (with state and iss) at /authorize. The code remembers
the resources named at authorization, and so does the grant's refresh token. At the code
exchange and at refresh, a resource must be one of those when any were named there
(`resource_bound_to_grant`, default true, as glewlwyd 2.7.5 does), else any allowed one. The
access token's audience: the resources named at the token endpoint, else those named at
authorization, else the client_id. (The device grant takes no resource.)

--jwt-access-tokens (config `access_token_format`: opaque, the default, or jwt): access tokens
are JWS signed with the provider's signing key (its kid), header typ at+jwt, claims iss, sub,
aud (a string for one audience, else an array), client_id, scope, iat, exp, jti, and cnf.jkt
when DPoP-bound. They are recorded like opaque ones (/_test/issued, /userinfo, revocation).

Scope at refresh (RFC 6749 section 6), always on: a scope that is a subset of the grant's gives
an access token with exactly that scope (and says so in `scope`); the rotated refresh token
keeps the grant's full scope (config `refresh_token_keeps_grant_scope`, default true; false:
the new refresh token takes the narrowed scope, as this provider did before). A scope beyond
the grant is 400 invalid_scope (authlib's check, unchanged); an empty scope means the grant's.

--token-exchange (config `token_exchange`): grant_type
urn:ietf:params:oauth:grant-type:token-exchange at the token endpoint (advertised in
grant_types_supported), for any registered client authenticated as at /token. subject_token:
an active access token this provider issued (else invalid_request; a DPoP-bound one needs a
proof of its key: none is invalid_request, another key invalid_dpop_proof); subject_token_type
must be ...:token-type:access_token, requested_token_type (optional) too, actor_token is not
supported (all invalid_request). audience (any string, repeatable) and resource (checked as
above; with --resources off, for form only) become the new token's aud, else the subject
token's audience is kept; scope must be a subset of the subject token's (invalid_scope), else
its scope. The answer: access_token, issued_token_type ...:token-type:access_token,
token_type Bearer (DPoP and bound with a valid proof, DPoP on), expires_in at most the
subject token's remaining life, scope; no refresh token, no id_token. Recorded as an
access_token of the subject's grant (revoked with it) with exchanged_from: the subject
token's jti (every access and refresh token has a non-secret jti in /_test/issued).
Faults: ignore_resource (the next token answer carrying a resource is issued as if none was
asked: audience the default), ignore_scope_narrowing (the next refresh with a scope issues the
grant's full scope and says so, as glewlwyd does), widen_exchange (the next token exchange
ignores its scope, audience and resource).
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
import re
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
    InvalidScopeError,
    grants,
)
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload  # noqa: E402
from authlib.oauth2.rfc7009 import RevocationEndpoint  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from authlib.oauth2.rfc7636.challenge import CODE_CHALLENGE_PATTERN, CODE_VERIFIER_PATTERN  # noqa: E402
from authlib.oauth2.rfc8628 import (  # noqa: E402
    DeviceAuthorizationEndpoint,
    DeviceCodeGrant,
    DeviceCredentialDict,
)
from authlib.oidc.core import OpenIDCode  # noqa: E402
from joserfc import jws as jose_jws  # noqa: E402
from joserfc import jwt as jose_jwt  # noqa: E402
from joserfc.errors import BadSignatureError, JoseError  # noqa: E402
from joserfc.jwk import ECKey, JWKRegistry, OKPKey, RSAKey  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

log = logging.getLogger("oidc-provider")

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
MICROSOFT_TENANT_ALIASES = ("common", "organizations", "consumers")
ALL_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

# DPoP (RFC 9449): the algorithms advertised and accepted, the key type each needs, and the
# JWK members that only a private (or symmetric) key has.
DPOP_ALGS = ["ES256", "ES384", "RS256", "PS256", "EdDSA"]
DPOP_KEY_TYPES = {
    "ES256": ("EC", {"P-256"}),
    "ES384": ("EC", {"P-384"}),
    "RS256": ("RSA", None),
    "PS256": ("RSA", None),
    "EdDSA": ("OKP", {"Ed25519", "Ed448"}),
}
JWK_PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}
JWK_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
DPOP_JTI_SECONDS = 300  # how long a proof's jti is remembered (its iat window is far shorter)
DPOP_MAX_PROOF_LENGTH = 8192
BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
JKT_PATTERN = re.compile(r"[A-Za-z0-9_-]{43}")  # base64url of a SHA-256 digest
PAR_REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"
# Parameters of a pushed request that authenticate the client and are not kept with it.
CLIENT_AUTH_PARAMETERS = {"client_secret", "client_assertion", "client_assertion_type"}
# Token exchange (RFC 8693)
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
# RFC 3986 section 3.1: an absolute URI starts with its scheme.
URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

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
    token_type: str = "Bearer"  # as answered (a fault may answer DPoP for an unbound token)
    jkt: str | None = None  # RFC 9449: thumbprint of the DPoP key the token is bound to
    # RFC 8707: an access token's resources (those of its audience); a refresh token's: the
    # resources named at authorization, which bind the grant
    resources: list[str] = field(default_factory=list)
    audience: list[str] = field(default_factory=list)  # an access token's aud (client_id by default)
    jti: str = field(default_factory=lambda: uuid.uuid4().hex)  # a non-secret id (the JWT's jti)
    exchanged_from: str | None = None  # RFC 8693: the subject token's jti

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
    dpop_jkt: str | None = None  # RFC 9449 section 10: the token request must prove this key
    resources: list[str] = field(default_factory=list)  # RFC 8707: named at authorization

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


@dataclass
class PushedRequest:
    """An authorization request pushed to /par (RFC 9126), until /authorize uses it up."""

    request_uri: str
    client_id: str
    params: dict[str, str]
    expires_at: float
    used: bool = False
    shown: int = 0  # GETs of /authorize that presented it (a reload shows it again)
    resources: list[str] = field(default_factory=list)  # RFC 8707 (repeatable, kept apart)

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires_at


@dataclass
class DPoPProof:
    """A DPoP proof the provider accepted (never the proof itself)."""

    jkt: str
    jti: str
    endpoint: str


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
    # DPoP (RFC 9449): off by default; dpop_nonce implies dpop
    "dpop": False,
    "dpop_nonce": False,
    "dpop_nonce_uses": 3,
    "dpop_iat_window": 60,
    # PAR (RFC 9126): off by default; par_required implies par
    "par": False,
    "par_required": False,
    "par_expires_in": 60,
    # Resource indicators (RFC 8707): off while empty; ["*"] allows any absolute URI
    "resources": [],
    "resource_bound_to_grant": True,
    # RFC 9068: "opaque" or "jwt"
    "access_token_format": "opaque",
    # RFC 6749 section 6: a narrowed refresh leaves the rotated refresh token the grant's scope
    "refresh_token_keeps_grant_scope": True,
    # Token exchange (RFC 8693)
    "token_exchange": False,
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
    # DPoP: the next proof's nonce refused (use_dpop_nonce) with a new nonce, even if current;
    # a proved token request answered Bearer with unbound tokens (a downgrade); a request
    # without proof answered token_type DPoP; the next proved request refused (invalid_dpop_proof)
    "dpop_nonce_rotate",
    "dpop_token_type_bearer",
    "dpop_token_type_dpop_unasked",
    "dpop_refuse_proof",
    # resource indicators, scope narrowing, token exchange: the next token answer carrying a
    # resource issued with the default audience; the next refresh with a scope issued the
    # grant's full scope; the next token exchange issued ignoring scope, audience and resource
    "ignore_resource",
    "ignore_scope_narrowing",
    "widen_exchange",
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
    "par",
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
        self.pushed: dict[str, PushedRequest] = {}
        self.dpop_proofs: list[dict[str, Any]] = []  # what /_test/dpop shows
        self.dpop_jtis: dict[str, float] = {}  # jti -> until when it is remembered
        self.dpop_replays = 0
        self.dpop_nonce = secrets.token_urlsafe(24)
        self.dpop_nonce_uses = 0  # accepted proofs that carried the current nonce
        self.dpop_nonce_rotations = 0

    # --- DPoP and PAR switches ----------------------------------------------------------------

    def dpop_on(self) -> bool:
        return bool(self.config["dpop"] or self.config["dpop_nonce"])

    def dpop_nonce_required(self) -> bool:
        return bool(self.config["dpop_nonce"])

    def par_on(self) -> bool:
        return bool(self.config["par"] or self.config["par_required"])

    def resources_on(self) -> bool:
        return bool(self.config["resources"])

    def jwt_access_tokens(self) -> bool:
        return self.config["access_token_format"] == "jwt"

    def token_exchange_on(self) -> bool:
        return bool(self.config["token_exchange"])

    def rotate_dpop_nonce(self, reason: str) -> None:
        with self.lock:
            self.dpop_nonce = secrets.token_urlsafe(24)
            self.dpop_nonce_uses = 0
            self.dpop_nonce_rotations += 1
        log.info("DPoP nonce replaced (%s)", reason)

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
                        "dpop_jkt": code.dpop_jkt,
                        "scopes": code.scope.split(),
                        "resources": list(code.resources),
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
                        "token_type": token.token_type,
                        "bound": token.jkt is not None,
                        "jkt": token.jkt,
                        "scopes": token.scope.split(),
                        "resources": list(token.resources),
                        "audience": list(token.audience),
                        "jti": token.jti,
                        "format": "jwt" if token.value.count(".") == 2 else "opaque",
                        **({"exchanged_from": token.exchanged_from} if token.exchanged_from else {}),
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
# DPoP proofs (RFC 9449)


class DPoPError(Exception):
    """A refused proof: `invalid_dpop_proof`, or `use_dpop_nonce` (the client retries with the
    nonce in DPoP-Nonce). Descriptions are ASCII without quotes: they go into WWW-Authenticate."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def invalid_proof(description: str) -> DPoPError:
    return DPoPError("invalid_dpop_proof", description)


class InvalidDPoPProofError(OAuth2Error):
    """The token endpoint's answer to a proof that is valid but for the wrong key."""

    error = "invalid_dpop_proof"
    status_code = 400


def dpop_jws_registry() -> jose_jws.JWSRegistry:
    """joserfc's JWS checks for proofs: the advertised algorithms only, and room for an RSA
    jwk in the header (joserfc's default header limit, 512 bytes, is too small for one)."""
    registry = jose_jws.JWSRegistry(algorithms=DPOP_ALGS, strict_check_header=False)
    registry.max_header_length = DPOP_MAX_PROOF_LENGTH
    return registry


DPOP_JWS_REGISTRY = dpop_jws_registry()


def b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: SHA-256 over the required members, sorted, no white space."""
    members = JWK_THUMBPRINT_MEMBERS[jwk["kty"]]
    for name in members:
        if not isinstance(jwk.get(name), str) or not jwk[name]:
            raise invalid_proof(f"the jwk header lacks its member {name}")
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def access_token_hash(access_token: str) -> str:
    """The ath claim: base64url(SHA-256(ASCII access token)), RFC 9449 section 4.2."""
    return b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())


def normalized_http_uri(uri: str) -> str | None:
    """scheme://host[:port]/path with RFC 3986 section 6.2.2/6.2.3 normalization (case of scheme
    and host, default port dropped, empty path as /); None for a URI that is no http(s) URL or
    that has a query, a fragment or user information (htu has none of these)."""
    if "?" in uri or "#" in uri:
        return None
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or parts.username is not None:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host += f":{port}"
    return f"{scheme}://{host}{parts.path or '/'}"


def record_proof(entry: dict[str, Any]) -> None:
    with STATE.lock:
        entry["seq"] = len(STATE.dpop_proofs) + 1
        STATE.dpop_proofs.append(entry)
    if entry.get("accepted"):
        log.info("DPoP proof accepted at %s", entry["endpoint"])
    else:
        log.info("DPoP proof %s at %s: %s", "ignored" if entry.get("ignored") else "refused", entry["endpoint"], entry.get("reason"))


def dpop_proof_for_request(
    endpoint: str, *, access_token: str | None = None, nonce_endpoint: bool = False
) -> DPoPProof | None:
    """The request's DPoP proof, checked (RFC 9449 section 4.3): None when there is no DPoP
    header or DPoP is off (the header is then ignored, as a server without DPoP does);
    DPoPError when it is refused. Every proof is recorded for /_test/dpop, without token values.
    `access_token`: a resource request's token, whose hash the proof's ath must be.
    `nonce_endpoint`: the token endpoint and /userinfo, where dpop_nonce requires the nonce."""
    raw = flask.request.headers.get("DPoP")
    if raw is None:
        return None
    entry: dict[str, Any] = {
        "endpoint": endpoint,
        "at": time.time(),
        "htm": None,
        "htu": None,
        "iat": None,
        "jti": None,
        "nonce_sent": False,
        "ath_present": False,
        "jkt": None,
        "accepted": False,
        "ignored": False,
        "reason": None,
    }
    if not STATE.dpop_on():
        entry["ignored"] = True
        entry["reason"] = "DPoP is off: the header is ignored"
        record_proof(entry)
        return None
    with STATE.lock:
        try:
            proof = check_dpop_proof(raw, entry, endpoint, access_token, nonce_endpoint)
        except DPoPError as error:
            entry["reason"] = error.description if error.error == "invalid_dpop_proof" else f"{error.error}: {error.description}"
            record_proof(entry)
            raise
        entry["accepted"] = True
        record_proof(entry)
        return proof


def check_dpop_proof(
    raw: str, entry: dict[str, Any], endpoint: str, access_token: str | None, nonce_endpoint: bool
) -> DPoPProof:
    # werkzeug joins repeated headers with commas; a compact JWS has none.
    if "," in raw:
        raise invalid_proof("exactly one DPoP header is allowed")
    token = raw.strip()
    if len(token) > DPOP_MAX_PROOF_LENGTH:
        raise invalid_proof("the DPoP proof is too long")
    parts = token.split(".")
    if len(parts) != 3 or not all(BASE64URL.fullmatch(part) for part in parts):
        raise invalid_proof("the DPoP proof is not a compact JWS (three base64url parts)")
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
    except (ValueError, UnicodeDecodeError):
        raise invalid_proof("the DPoP proof's header or payload is not JSON") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise invalid_proof("the DPoP proof's header and payload must be JSON objects")
    for name in ("htm", "htu", "jti"):
        if isinstance(claims.get(name), str):
            entry[name] = claims[name]
    if isinstance(claims.get("iat"), (int, float)) and not isinstance(claims.get("iat"), bool):
        entry["iat"] = claims["iat"]
    entry["nonce_sent"] = "nonce" in claims
    entry["ath_present"] = "ath" in claims

    # The header: typ, alg, jwk (a public key of the alg's type).
    if header.get("typ") != "dpop+jwt":
        raise invalid_proof("the DPoP proof's typ must be dpop+jwt")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in DPOP_ALGS:
        shown = alg if isinstance(alg, str) and alg.isascii() and '"' not in alg else "?"
        raise invalid_proof(f"alg {shown} is not accepted: the proof must be signed with one of {' '.join(DPOP_ALGS)}")
    if "crit" in header:
        raise invalid_proof("the DPoP proof's header has crit, which this provider does not support")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict):
        raise invalid_proof("the DPoP proof's header lacks a jwk object")
    private = sorted(JWK_PRIVATE_MEMBERS & set(jwk))
    if private:
        raise invalid_proof(f"the jwk header must be a public key; it has private members ({', '.join(private)})")
    kty, curves = DPOP_KEY_TYPES[alg]
    if jwk.get("kty") != kty:
        raise invalid_proof(f"alg {alg} needs a jwk of kty {kty}")
    if curves is not None and jwk.get("crv") not in curves:
        raise invalid_proof(f"alg {alg} needs a jwk with crv {' or '.join(sorted(curves))}")
    entry["jkt"] = jkt = jwk_thumbprint(jwk)
    try:
        key = JWKRegistry.import_key(dict(jwk))
    except (JoseError, ValueError, TypeError):
        raise invalid_proof("the jwk header is not a valid public key") from None
    if kty == "RSA" and len(b64url_decode(jwk["n"]).lstrip(b"\0")) * 8 < 2048:
        raise invalid_proof("an RSA key of a DPoP proof needs at least 2048 bits")
    try:
        jose_jws.deserialize_compact(token, key, algorithms=[alg], registry=DPOP_JWS_REGISTRY)
    except BadSignatureError:
        raise invalid_proof("the DPoP proof's signature does not verify with its jwk header") from None
    except (JoseError, ValueError, TypeError) as error:
        reason = getattr(error, "error", None) or type(error).__name__
        raise invalid_proof(f"the DPoP proof is not a valid JWS ({reason})") from None

    # The claims.
    jti, htm, htu, iat = claims.get("jti"), claims.get("htm"), claims.get("htu"), entry["iat"]
    if not isinstance(jti, str) or not jti or len(jti) > 512:
        raise invalid_proof("the DPoP proof lacks a jti string")
    if not isinstance(htm, str) or not isinstance(htu, str):
        raise invalid_proof("the DPoP proof lacks htm or htu")
    if iat is None:
        raise invalid_proof("the DPoP proof lacks a numeric iat")
    if htm != flask.request.method:
        raise invalid_proof(f"htm must be {flask.request.method}, the request's method")
    expected = normalized_http_uri(STATE.base_url + flask.request.path)
    presented = normalized_http_uri(htu)
    if presented is None:
        raise invalid_proof("htu must be an http(s) URL without query and fragment")
    if presented != expected:
        raise invalid_proof(f"htu must be {expected}, the URL of this endpoint")
    window = float(STATE.config["dpop_iat_window"])
    skew = float(iat) - time.time()
    if abs(skew) > window:
        raise invalid_proof(f"iat is {int(skew)} s from the provider's clock (allowed: {int(window)} s either way)")
    now = time.time()
    for seen, until in list(STATE.dpop_jtis.items()):
        if until <= now:
            del STATE.dpop_jtis[seen]
    if jti in STATE.dpop_jtis:
        STATE.dpop_replays += 1
        raise invalid_proof("the DPoP proof's jti was used before (a replayed proof)")
    STATE.dpop_jtis[jti] = now + DPOP_JTI_SECONDS
    if access_token is not None:
        ath = claims.get("ath")
        if not isinstance(ath, str):
            raise invalid_proof("the DPoP proof lacks ath, the hash of the access token")
        if not hmac.compare_digest(ath, access_token_hash(access_token)):
            raise invalid_proof("ath is not the hash of the access token sent")

    # The nonce (sections 8 and 9): checked last, so use_dpop_nonce means everything else held.
    if nonce_endpoint:
        named_only = endpoint == "token_preflight"
        # The wording of RFC 9449's examples (sections 8 and 9).
        requires = ("Resource" if endpoint == "userinfo" else "Authorization") + " server requires nonce in DPoP proof"
        if STATE.take_fault("dpop_nonce_rotate", endpoint, named_only=named_only):
            STATE.rotate_dpop_nonce("test fault")
            raise DPoPError("use_dpop_nonce", requires + " (test fault: a new nonce)")
        if STATE.dpop_nonce_required():
            nonce = claims.get("nonce")
            if nonce is None:
                raise DPoPError("use_dpop_nonce", requires)
            if not isinstance(nonce, str) or not hmac.compare_digest(nonce, STATE.dpop_nonce):
                raise DPoPError("use_dpop_nonce", "the DPoP proof's nonce is not the current one")
    if STATE.take_fault("dpop_refuse_proof", endpoint, named_only=endpoint == "token_preflight"):
        raise invalid_proof("the DPoP proof was refused (test fault)")
    if nonce_endpoint and STATE.dpop_nonce_required():
        STATE.dpop_nonce_uses += 1
        if STATE.dpop_nonce_uses >= max(1, int(STATE.config["dpop_nonce_uses"])):
            STATE.rotate_dpop_nonce(f"used {STATE.dpop_nonce_uses} times")
    return DPoPProof(jkt=jkt, jti=jti, endpoint=endpoint)


def dpop_nonce_headers(nonce_endpoint: bool = True) -> dict[str, str]:
    """DPoP-Nonce (the nonce now current) on every answer to a request with a proof at an
    endpoint that requires nonces, successes too, so that a rotation reaches the client."""
    if nonce_endpoint and STATE.dpop_on() and STATE.dpop_nonce_required() and "DPoP" in flask.request.headers:
        with STATE.lock:
            return {"DPoP-Nonce": STATE.dpop_nonce}
    return {}


def dpop_token_error(error: DPoPError, nonce_endpoint: bool = True) -> flask.Response:
    """The token endpoint's (and /par's, /revoke's) answer to a refused proof: 400 JSON."""
    headers = {"Pragma": "no-cache"}
    if error.error == "use_dpop_nonce":
        with STATE.lock:
            headers["DPoP-Nonce"] = STATE.dpop_nonce
    else:
        headers.update(dpop_nonce_headers(nonce_endpoint))
    return json_response({"error": error.error, "error_description": error.description}, 400, headers)


def dpop_challenge(error: str | None = None, description: str | None = None) -> str:
    """A DPoP challenge (RFC 9449 section 7.1) with the algorithms accepted."""
    params = []
    if error:
        params.append(f'error="{error}"')
    if description:
        params.append('error_description="' + description.replace('"', "'").replace("\\", "/") + '"')
    params.append(f'algs="{" ".join(DPOP_ALGS)}"')
    return "DPoP " + ", ".join(params)


def dpop_resource_error(error: str, description: str) -> flask.Response:
    """A resource's (/userinfo's) answer to a refused DPoP request: 401 with a DPoP challenge."""
    headers = {"WWW-Authenticate": dpop_challenge(error, description)}
    if error == "use_dpop_nonce":
        with STATE.lock:
            headers["DPoP-Nonce"] = STATE.dpop_nonce
    else:
        headers.update(dpop_nonce_headers())
    return json_response({"error": error, "error_description": description}, 401, headers)


# ---------------------------------------------------------------------------------------------
# Resource indicators (RFC 8707)


class InvalidTargetError(OAuth2Error):
    """RFC 8707 section 2: a resource that is invalid, unknown or not allowed."""

    error = "invalid_target"
    status_code = 400


def unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def resource_problem(uri: str, *, form_only: bool = False) -> str | None:
    """Why a resource indicator is refused (None: accepted). It must be an absolute URI (RFC
    3986 section 4.3: a scheme, no fragment) and, unless `form_only`, an allowed one."""
    if not URI_SCHEME.match(uri) or any(c.isspace() or ord(c) < 0x21 for c in uri):
        return "is not an absolute URI"
    if "#" in uri:
        return "has a fragment"
    allowed = STATE.config["resources"] or []
    if not form_only and "*" not in allowed and uri not in allowed:
        return "is not a resource of this provider"
    return None


def check_resources(resources: list[str], *, form_only: bool = False, redirect_uri: str | None = None, state: str | None = None) -> None:
    for uri in resources:
        if problem := resource_problem(uri, form_only=form_only):
            shown = uri if len(uri) <= 200 else uri[:200] + "..."
            raise InvalidTargetError(f"The resource {shown} {problem}", redirect_uri=redirect_uri, state=state)


def token_request_resources(grant_resources: list[str]) -> list[str]:
    """The resources in effect for a code exchange or a refresh (RFC 8707 section 2.2): those
    named at the token endpoint (each allowed, and one of the grant's when the authorization
    named any and `resource_bound_to_grant`), else the grant's. [] with --resources off."""
    if not STATE.resources_on():
        return []
    asked = unique(flask.request.form.getlist("resource"))
    check_resources(asked)
    if asked and grant_resources and STATE.config["resource_bound_to_grant"]:
        outside = [uri for uri in asked if uri not in grant_resources]
        if outside:
            raise InvalidTargetError(f"The resource {outside[0]} was not named in the authorization request")
    return asked or list(grant_resources)


def set_token_audience(resources: list[str], grant_type: str, audience: list[str] | None = None) -> None:
    """What the access token of this request is issued for: flask.g.token_resources and
    flask.g.token_audience (None: the default, the client_id). Fault ignore_resource: the
    resources are dropped, as by a provider that ignores them."""
    if resources and STATE.take_fault("ignore_resource", "token", grant_type):
        log.info("resource indicators ignored (test fault)")
        resources = []
    flask.g.token_resources = resources
    flask.g.token_audience = unique(list(resources) + list(audience or [])) or None


# ---------------------------------------------------------------------------------------------
# Token generation and id_tokens


def random_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def mint_access_token(client: Client, user: User, scope: str | None, ttl: int, jkt: str | None, audience: list[str]) -> tuple[str, str]:
    """An RFC 9068 access token: (the JWT, its jti)."""
    now = int(time.time())
    jti = uuid.uuid4().hex
    claims: dict[str, Any] = {
        "iss": STATE.issuer_for_tokens(),
        "sub": user.sub,
        "aud": audience[0] if len(audience) == 1 else list(audience),
        "client_id": client.get_client_id(),
        "iat": now,
        "exp": now + ttl,
        "jti": jti,
    }
    if scope:
        claims["scope"] = scope
    if jkt:
        claims["cnf"] = {"jkt": jkt}
    with STATE.lock:
        signing = STATE.keys[0]
    return sign_jwt(signing, claims, typ="at+jwt"), jti


def generate_bearer_token(grant_type, client, user=None, scope=None, expires_in=None, include_refresh_token=True):
    """Opaque random access and refresh tokens (not JWTs: a client must not read them), or
    RFC 9068 JWT access tokens with access_token_format jwt; token_type DPoP and bound to the
    proof's key when the request carried a DPoP proof."""
    ttl = int(STATE.config["access_token_ttl"]) if expires_in is None else int(expires_in)
    proof: DPoPProof | None = flask.g.get("dpop")
    token_type, bind = "Bearer", None
    if proof is not None:
        if STATE.take_fault("dpop_token_type_bearer", "token", grant_type):
            log.info("DPoP-proved token request answered Bearer with unbound tokens (test fault)")
        else:
            token_type, bind = "DPoP", proof.jkt
    elif STATE.take_fault("dpop_token_type_dpop_unasked", "token", grant_type):
        token_type = "DPoP"
    flask.g.dpop_bind = bind
    if STATE.jwt_access_tokens():
        audience = flask.g.get("token_audience") or [client.get_client_id()]
        access_token, flask.g.token_jti = mint_access_token(client, user, scope, ttl, bind, audience)
    else:
        access_token = random_token()
    token: dict[str, Any] = {
        "token_type": token_type,
        "access_token": access_token,
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
    subject: TokenRecord | None = getattr(request, "subject_token", None)
    scope = token.get("scope", "")
    grant_scope, grant_resources = scope, []
    if code is not None:
        family, auth_time, original_sub = code.family, code.auth_time, user.sub
        grant_scope, grant_resources = code.scope, list(code.resources)
    elif refresh is not None:
        family, auth_time, original_sub = refresh.family, refresh.auth_time, refresh.original_sub
        grant_scope, grant_resources = refresh.scope, list(refresh.resources)
    elif subject is not None:
        # RFC 8693: the exchanged token belongs to the subject token's grant (revoked with it).
        family, auth_time, original_sub = subject.family, subject.auth_time, subject.original_sub
    else:
        family = credential["family"] if credential is not None else uuid.uuid4().hex
        auth_time, original_sub = int(now), user.sub
        grant_scope = credential["scope"] if credential is not None else scope
    if not STATE.config["refresh_token_keeps_grant_scope"]:
        grant_scope = scope  # the rotated refresh token takes the scope answered, as before
    bind: str | None = flask.g.get("dpop_bind")
    resources = list(flask.g.get("token_resources") or [])
    audience = list(flask.g.get("token_audience") or [client.get_client_id()])
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
            token_type=token["token_type"],
            jkt=bind,
            resources=resources,
            audience=audience,
            jti=flask.g.get("token_jti") or uuid.uuid4().hex,
            exchanged_from=subject.jti if subject is not None else None,
        )
        if "refresh_token" in token:
            ttl = STATE.config["refresh_token_ttl"]
            STATE.tokens[token["refresh_token"]] = TokenRecord(
                kind="refresh_token",
                value=token["refresh_token"],
                client_id=client.get_client_id(),
                sub=user.sub,
                # RFC 6749 section 6: the new refresh token's scope is the grant's, however
                # narrow the access token asked for; it keeps the grant's resources too.
                scope=grant_scope,
                resources=grant_resources,
                issued_at=now,
                expires_at=(now + int(ttl)) if ttl else None,
                family=family,
                auth_time=auth_time,
                original_sub=original_sub,
                token_type=token["token_type"],
                # RFC 9449 section 5: a public client's refresh token is bound to the key too (a
                # confidential client's is bound to its authentication already).
                jkt=bind if client.is_public else None,
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

    def validate_authorization_request(self):
        redirect_uri = super().validate_authorization_request()
        jkt = self.request.payload.data.get("dpop_jkt")
        if STATE.dpop_on() and jkt is not None:
            if len(self.request.payload.datalist.get("dpop_jkt", [])) > 1:
                raise InvalidRequestError("Multiple 'dpop_jkt' in request", redirect_uri=redirect_uri, state=self.request.payload.state)
            if not JKT_PATTERN.fullmatch(jkt):
                raise InvalidRequestError(
                    "Invalid 'dpop_jkt': the base64url SHA-256 JWK thumbprint (RFC 7638) of the DPoP key",
                    redirect_uri=redirect_uri,
                    state=self.request.payload.state,
                )
        if STATE.resources_on():
            # RFC 8707 section 2.1: each resource named is checked before the person is asked.
            check_resources(self.request.payload.datalist.get("resource", []), redirect_uri=redirect_uri, state=self.request.payload.state)
        return redirect_uri

    def validate_token_request(self):
        super().validate_token_request()
        code: CodeRecord = self.request.authorization_code
        if code.dpop_jkt is not None:
            # RFC 9449 section 10: the code is bound to the key named by dpop_jkt.
            proof: DPoPProof | None = flask.g.get("dpop")
            if proof is None:
                raise InvalidGrantError("The authorization code is bound to a DPoP key (dpop_jkt): the token request needs a DPoP proof with that key")
            if proof.jkt != code.dpop_jkt:
                raise InvalidGrantError("The DPoP proof's key is not the one the authorization code is bound to (dpop_jkt)")
        set_token_audience(token_request_resources(code.resources), "authorization_code")

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
            dpop_jkt=data.get("dpop_jkt") if STATE.dpop_on() else None,
            resources=unique(request.payload.datalist.get("resource", [])) if STATE.resources_on() else [],
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

    def validate_token_request(self):
        super().validate_token_request()
        record: TokenRecord = self.request.refresh_token
        if record.jkt is not None:
            # RFC 9449 section 5: a bound refresh token is used only with a proof of its key.
            # Nothing is used up when this fails.
            proof: DPoPProof | None = flask.g.get("dpop")
            if proof is None:
                raise InvalidGrantError("The refresh token is bound to a DPoP key: the refresh request needs a DPoP proof with that key")
            if proof.jkt != record.jkt:
                raise InvalidDPoPProofError("The DPoP proof's key is not the one the refresh token is bound to")
        set_token_audience(token_request_resources(record.resources), "refresh_token")

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
        # RFC 6749 section 6: a narrower scope (checked by authlib: a subset of the grant's, else
        # invalid_scope) is what the new access token gets; none means the grant's.
        scope = self.request.payload.scope or refresh_token.get_scope()
        if self.request.payload.scope and STATE.take_fault("ignore_scope_narrowing", "token", "refresh_token"):
            log.info("scope at refresh ignored: the grant's full scope issued (test fault)")
            scope = refresh_token.get_scope()
        return self.generate_token(
            user=user, scope=scope, include_refresh_token=bool(STATE.config["refresh_token_rotation"])
        )

    def revoke_old_credential(self, refresh_token):
        if STATE.config["refresh_token_rotation"]:
            with STATE.lock:
                refresh_token.revoked = True
                refresh_token.rotated = True


def user_for_sub(sub: str) -> User:
    for user in STATE.users.values():
        if user.sub == sub:
            return user
    return User(username="", sub=sub, claims={})


class TokenExchangeGrant(grants.BaseGrant, grants.TokenEndpointMixin):
    """RFC 8693 token exchange, with --token-exchange: an access token of this provider for
    another access token, narrower in scope or for another audience or resource."""

    GRANT_TYPE = TOKEN_EXCHANGE_GRANT
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS
    SINGLE_PARAMETERS = ("subject_token", "subject_token_type", "requested_token_type", "scope")

    @classmethod
    def check_token_endpoint(cls, request):
        # Off: the grant type is unknown (unsupported_grant_type), as before.
        return STATE.token_exchange_on() and super().check_token_endpoint(request)

    def validate_token_request(self):
        client = self.authenticate_token_endpoint_client()
        self.request.client = client
        form = flask.request.form
        for name in self.SINGLE_PARAMETERS:
            if len(form.getlist(name)) > 1:
                raise InvalidRequestError(f"Multiple '{name}' in request")
        subject_token, subject_type = form.get("subject_token"), form.get("subject_token_type")
        if not subject_token:
            raise InvalidRequestError("Missing 'subject_token' in request")
        if not subject_type:
            raise InvalidRequestError("Missing 'subject_token_type' in request")
        if subject_type != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError(f"Unsupported 'subject_token_type': only {ACCESS_TOKEN_TYPE} is accepted")
        requested_type = form.get("requested_token_type")
        if requested_type is not None and requested_type != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError(f"Unsupported 'requested_token_type': only {ACCESS_TOKEN_TYPE} is issued")
        if "actor_token" in form or "actor_token_type" in form:
            raise InvalidRequestError("actor_token is not supported (no delegation)")
        with STATE.lock:
            record = STATE.tokens.get(subject_token)
        if record is None or record.kind != "access_token" or not record.active:
            # RFC 8693 section 2.2.2: an invalid subject_token is invalid_request.
            raise InvalidRequestError("subject_token is not an active access token issued by this provider")
        remaining = int(record.expires_at - time.time()) if record.expires_at is not None else None
        if remaining is not None and remaining < 1:
            raise InvalidRequestError("subject_token is not an active access token issued by this provider")
        if record.jkt is not None:
            proof: DPoPProof | None = flask.g.get("dpop")
            if proof is None:
                raise InvalidRequestError("subject_token is DPoP-bound: the exchange needs a DPoP proof with its key")
            if proof.jkt != record.jkt:
                raise InvalidDPoPProofError("The DPoP proof's key is not the one subject_token is bound to")
        scope = self.request.payload.scope
        if scope:
            if not set(scope.split()) <= set(record.scope.split()):
                raise InvalidScopeError("The scope asked for is not within subject_token's scope")
        resources = unique(form.getlist("resource"))
        check_resources(resources, form_only=not STATE.resources_on())
        audiences = unique(form.getlist("audience"))
        if any(not a for a in audiences):
            raise InvalidRequestError("An empty 'audience'")
        if STATE.take_fault("widen_exchange", "token", TOKEN_EXCHANGE_GRANT):
            log.info("token exchange issued without its scope, audience and resource (test fault)")
            scope, resources, audiences = None, [], []
        set_token_audience(resources, TOKEN_EXCHANGE_GRANT, audiences)
        if not flask.g.token_audience:
            # Neither audience nor resource: the subject token's audience is kept.
            flask.g.token_resources = list(record.resources)
            flask.g.token_audience = list(record.audience) or None
        ttl = int(STATE.config["access_token_ttl"])
        self.request.subject_token = record
        self.exchange_scope = scope or record.scope
        self.expires_in = ttl if remaining is None else max(1, min(ttl, remaining))

    def create_token_response(self):
        record: TokenRecord = self.request.subject_token
        user = user_for_sub(record.sub)
        token = self.generate_token(user=user, scope=self.exchange_scope, expires_in=self.expires_in, include_refresh_token=False)
        token["issued_token_type"] = ACCESS_TOKEN_TYPE
        self.request.user = user
        self.save_token(token)
        return 200, token, self.TOKEN_RESPONSE_HEADER


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

class ProviderAuthorizationServer(AuthorizationServer):
    def create_oauth2_request(self, request):
        """The request's own parameters, or those pushed to /par (RFC 9126) when /authorize
        names a request_uri or /par validates what was pushed (flask.g.authorization_parameters)."""
        oauth_request = super().create_oauth2_request(request)
        pushed = flask.g.get("authorization_parameters")
        if pushed is not None:
            oauth_request.payload = BasicOAuth2Payload(dict(pushed))
            resources = flask.g.get("authorization_resources")
            if resources:
                # RFC 8707: resource may be repeated; pushed, it is kept apart from the rest.
                oauth_request.payload.data["resource"] = resources[0]
                oauth_request.payload.datalist["resource"] = list(resources)
        return oauth_request


server = ProviderAuthorizationServer()
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
    document = {
        "issuer": STATE.issuer_for_request(tenant),
        "authorization_endpoint": prefix + "/authorize",
        "token_endpoint": prefix + "/token",
        "jwks_uri": prefix + "/jwks",
        "userinfo_endpoint": prefix + "/userinfo",
        "revocation_endpoint": prefix + "/revoke",
        "device_authorization_endpoint": prefix + "/device_authorization",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT]
        + ([TOKEN_EXCHANGE_GRANT] if STATE.token_exchange_on() else []),
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
    if STATE.dpop_on():
        document["dpop_signing_alg_values_supported"] = list(DPOP_ALGS)
    if STATE.par_on():
        document["pushed_authorization_request_endpoint"] = prefix + "/par"
        document["require_pushed_authorization_requests"] = bool(STATE.config["par_required"])
    return document


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
        try:
            # Revocation takes requests with or without a proof; one that comes is checked.
            dpop_proof_for_request("revocation")
        except DPoPError as error:
            return dpop_token_error(error, nonce_endpoint=False)
        with STATE.lock:
            return server.create_endpoint_response("revocation")

    @route("/par", methods=["POST"])
    def par():
        mark("par")
        if not STATE.par_on():
            return json_response({"error": "not_found"}, 404)
        if response := apply_transport_faults("par"):
            return response
        return handle_par()

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
        if STATE.dpop_on() and header[:5].lower() == "dpop ":
            return handle_dpop_userinfo(header[5:].strip())
        value = header[7:] if header[:7].lower() == "bearer " else ""
        with STATE.lock:
            record = STATE.tokens.get(value)
        if record is None or record.kind != "access_token" or not record.active:
            return json_response(
                {"error": "invalid_token"}, 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'}
            )
        if record.jkt is not None:
            # RFC 9449 section 7.1: a DPoP-bound token is never accepted as a bearer token.
            description = "The access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof"
            response = json_response({"error": "invalid_token", "error_description": description}, 401)
            response.headers["WWW-Authenticate"] = f'Bearer error="invalid_token", error_description="{description}"'
            response.headers.add("WWW-Authenticate", dpop_challenge())
            return response
        return userinfo_answer(record)


def userinfo_answer(record: TokenRecord, headers: dict[str, str] | None = None) -> flask.Response:
    user = next((u for u in STATE.users.values() if u.sub == record.sub), None)
    claims = {"sub": record.sub}
    if user:
        claims.update(user.claims)
    return json_response(claims, headers=headers)


def handle_dpop_userinfo(access_token: str) -> flask.Response:
    """/userinfo with `Authorization: DPoP <token>` (RFC 9449 section 7): a valid proof whose
    ath is the token's hash, of the key the token is bound to, with the nonce if required."""
    try:
        proof = dpop_proof_for_request("userinfo", access_token=access_token, nonce_endpoint=True)
    except DPoPError as error:
        return dpop_resource_error(error.error, error.description)
    if proof is None:
        return dpop_resource_error("invalid_dpop_proof", "A DPoP access token needs a DPoP proof (the DPoP header)")
    with STATE.lock:
        record = STATE.tokens.get(access_token)
    if record is None or record.kind != "access_token" or not record.active:
        return dpop_resource_error("invalid_token", "The access token is not valid")
    if record.jkt is None:
        return dpop_resource_error("invalid_token", "The access token is not DPoP-bound: send it as a Bearer token")
    if not hmac.compare_digest(record.jkt, proof.jkt):
        return dpop_resource_error("invalid_dpop_proof", "The DPoP proof's key is not the one the access token is bound to")
    return userinfo_answer(record, dpop_nonce_headers())


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
    endpoint = flask.request.environ.get("peer.endpoint") or "token"
    # One token request at a time: a code or a refresh token is consumed atomically, so two
    # racing requests cannot both succeed (and the refresh race counts true requests).
    with STATE.lock:
        try:
            # Checked before the grant: a refused proof uses nothing up.
            flask.g.dpop = dpop_proof_for_request(endpoint, nonce_endpoint=True)
        except DPoPError as error:
            return dpop_token_error(error)
        nonce_headers = dpop_nonce_headers()
        request = server.create_oauth2_request(None)
        try:
            grant = server.get_token_grant(request)
        except OAuth2Error as error:
            return with_headers(server.handle_error_response(request, error), nonce_headers)
        try:
            grant.validate_token_request()
            status, body, headers = grant.create_token_response()
        except OAuth2Error as error:
            return with_headers(server.handle_error_response(request, error), nonce_headers)
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
        return flask.Response(text, status=status, mimetype="application/json", headers={"Pragma": "no-cache", "Cache-Control": "no-store", **nonce_headers})
    return json_response(body, status, {"Pragma": "no-cache", **nonce_headers})


def with_headers(response: flask.Response, headers: dict[str, str]) -> flask.Response:
    for key, value in headers.items():
        response.headers[key] = value
    return response


# --- pushed authorization requests (RFC 9126) -----------------------------------------------------


def par_error(error: OAuth2Error, request) -> flask.Response:
    """A JSON error answer (never a redirect: nothing was validated for one)."""
    error.redirect_uri = None
    error.state = None
    return server.handle_error_response(request, error)


def handle_par() -> flask.Response:
    if response := reject_query_parameters():
        return response
    note_client_secret()
    form = flask.request.form
    with STATE.lock:
        request = server.create_oauth2_request(None)
        try:
            client: Client = server.authenticate_client(request, ALL_AUTH_METHODS, "par")
        except OAuth2Error as error:
            return par_error(error, request)
        repeatable = {"resource"} if STATE.resources_on() else set()
        repeated = sorted(name for name in form if len(form.getlist(name)) > 1 and name not in repeatable)
        if repeated:
            return par_error(InvalidRequestError(f"Multiple '{repeated[0]}' in request"), request)
        if "request_uri" in form:
            return par_error(InvalidRequestError("request_uri must not be pushed (RFC 9126 section 2.1)"), request)
        if "request" in form:
            return par_error(InvalidRequestError("Request objects are not supported: push the parameters themselves"), request)
        params = {name: value for name, value in form.items() if name not in CLIENT_AUTH_PARAMETERS}
        resources = unique(form.getlist("resource")) if STATE.resources_on() else []
        if STATE.resources_on():
            params.pop("resource", None)
        if params.setdefault("client_id", client.client_id) != client.client_id:
            return par_error(InvalidRequestError("client_id is not the client that authenticated"), request)
        try:
            proof = dpop_proof_for_request("par")
        except DPoPError as error:
            return dpop_token_error(error, nonce_endpoint=False)
        if proof is not None:
            # RFC 9449 section 10.1: a proof at the PAR endpoint binds the code like dpop_jkt.
            if "dpop_jkt" in params and params["dpop_jkt"] != proof.jkt:
                return dpop_token_error(
                    DPoPError("invalid_dpop_proof", "dpop_jkt is not the thumbprint of the DPoP proof's key"), nonce_endpoint=False
                )
            params["dpop_jkt"] = proof.jkt
        # Validated as /authorize validates it, from the pushed parameters.
        flask.g.authorization_parameters = params
        flask.g.authorization_resources = resources
        try:
            server.get_consent_grant(end_user=None)
        except OAuth2Error as error:
            return par_error(error, request)
        finally:
            flask.g.authorization_parameters = None
            flask.g.authorization_resources = None
        request_uri = PAR_REQUEST_URI_PREFIX + random_token()
        expires_in = int(STATE.config["par_expires_in"])
        STATE.pushed[request_uri] = PushedRequest(
            request_uri=request_uri, client_id=client.client_id, params=params, expires_at=time.time() + expires_in,
            resources=resources,
        )
    log.info("authorization request pushed by %s: %s", client.client_id, ",".join(sorted(params)))
    return json_response({"request_uri": request_uri, "expires_in": expires_in}, 201)


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


def login_form(
    params: dict[str, str], client: Client, message: str = "", scope: str | None = None, resources: list[str] | None = None
) -> str:
    """`resources` (RFC 8707, repeatable): sent again in the form's action URL, not as hidden
    fields, so that a client that keeps one value per field name (the scripted browser) sends
    them all."""
    hidden = "\n".join(
        f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
        for k, v in params.items()
        if k not in ("username", "decision") and not (resources and k == "resource")
    )
    action = flask.request.path + ("?" + urlencode([("resource", r) for r in resources]) if resources else "")
    users = ", ".join(html.escape(u) for u in STATE.users)
    note = f"<p class='error'>{html.escape(message)}</p>" if message else ""
    scopes = html.escape(params.get("scope", "") if scope is None else scope)
    return f"""{note}
<p>The application <code>{html.escape(client.client_id)}</code> asks for: <code>{scopes}</code></p>
<form method="post" action="{html.escape(action)}" id="login">
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


def pushed_request_for_authorize() -> tuple[PushedRequest | None, flask.Response | None]:
    """With PAR on: the pushed request /authorize names (RFC 9126 section 4), or the page that
    refuses the request. Errors are shown on the provider's page: before a pushed request is
    found there is no redirect URI to trust."""
    values = flask.request.values
    request_uri = values.get("request_uri")
    if request_uri is None:
        if STATE.config["par_required"]:
            return None, error_page(
                400,
                "invalid_request",
                "This provider requires pushed authorization requests (RFC 9126): push the request to the "
                "pushed_authorization_request_endpoint and send only client_id and request_uri here.",
            )
        return None, None
    sent = set(values) - ({"username", "decision"} if flask.request.method == "POST" else set())
    repeated = sorted(name for name in ("client_id", "request_uri") if len(values.getlist(name)) > 1)
    if repeated:
        return None, error_page(400, "invalid_request", f"Multiple '{repeated[0]}' in request.")
    extra = sorted(sent - {"client_id", "request_uri"})
    if extra:
        return None, error_page(
            400,
            "invalid_request",
            "With request_uri the authorization request carries only client_id and request_uri (RFC 9126 section 4); "
            f"sent outside the pushed request: {', '.join(extra)}.",
        )
    client_id = values.get("client_id")
    if not client_id:
        return None, error_page(400, "invalid_request", "client_id is required with request_uri.")
    with STATE.lock:
        pushed = STATE.pushed.get(request_uri)
        if pushed is None:
            return None, error_page(400, "invalid_request_uri", "This request_uri was not issued by this provider's PAR endpoint.")
        if pushed.client_id != client_id:
            return None, error_page(400, "invalid_request", "client_id is not the client that pushed this request.")
        if pushed.used:
            return None, error_page(400, "invalid_request_uri", "This request_uri was used already: push the request again.")
        if pushed.expired:
            return None, error_page(400, "invalid_request_uri", "This request_uri has expired: push the request again.")
        if flask.request.method == "GET":
            pushed.shown += 1
    return pushed, None


def handle_authorize() -> flask.Response:
    params = {k: v for k, v in flask.request.values.items()}
    pushed: PushedRequest | None = None
    if STATE.par_on():
        pushed, refusal = pushed_request_for_authorize()
        if refusal is not None:
            return refusal
    # The authorization request's parameters: the pushed ones, or the request's own.
    flask.g.authorization_parameters = pushed.params if pushed else None
    flask.g.authorization_resources = pushed.resources if pushed else None
    authorization = dict(pushed.params) if pushed else params
    # RFC 8707: every resource of a request that was not pushed goes through the form again.
    resources = flask.request.values.getlist("resource") if STATE.resources_on() and not pushed else []
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
    state = authorization.get("state")
    shown_scope = authorization.get("scope", "")

    if not is_post:
        page = PAGE.format(title="Sign in", body=login_form(params, client, scope=shown_scope, resources=resources))
        return flask.Response(page, mimetype="text/html")

    decision = flask.request.form.get("decision", "approve")
    if decision == "approve" and user is None:
        page = PAGE.format(title="Sign in", body=login_form(params, client, "Unknown user.", scope=shown_scope, resources=resources))
        return flask.Response(page, status=401, mimetype="text/html")
    if pushed is not None:
        with STATE.lock:
            if pushed.used:
                return error_page(400, "invalid_request_uri", "This request_uri was used already: push the request again.")
            pushed.used = True  # answered: single use from here (RFC 9126 section 4)
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


@app.route("/_test/dpop", methods=["GET", "DELETE"])
def test_dpop():
    """The DPoP proofs received (never a token value; jti and the key's thumbprint are not
    secrets), counts, and the nonce's state without its value. DELETE forgets the proofs."""
    flask.request.environ["peer.unlogged"] = True
    with STATE.lock:
        if flask.request.method == "DELETE":
            STATE.dpop_proofs = []
            STATE.dpop_replays = 0
        proofs = [dict(p) for p in STATE.dpop_proofs]
        counts = {
            "received": len(proofs),
            "accepted": sum(1 for p in proofs if p["accepted"]),
            "refused": sum(1 for p in proofs if not p["accepted"] and not p["ignored"]),
            "ignored": sum(1 for p in proofs if p["ignored"]),
            "use_dpop_nonce": sum(1 for p in proofs if (p["reason"] or "").startswith("use_dpop_nonce")),
            "replays_refused": STATE.dpop_replays,
        }
        nonce = {
            "required": STATE.dpop_on() and STATE.dpop_nonce_required(),
            "uses_of_current": STATE.dpop_nonce_uses,
            "rotations": STATE.dpop_nonce_rotations,
        }
        return json_response({"proofs": proofs, "counts": counts, "nonce": nonce, "enabled": STATE.dpop_on()})


@app.route("/_test/par", methods=["GET"])
def test_par():
    """The pushed authorization requests: parameter names only, whether used, expired, shown."""
    flask.request.environ["peer.unlogged"] = True
    with STATE.lock:
        requests = [
            {
                "client_id": r.client_id,
                "params": sorted(r.params),
                "dpop_jkt": r.params.get("dpop_jkt"),
                "resources": list(r.resources),
                "used": r.used,
                "expired": r.expired,
                "shown": r.shown,
            }
            for r in STATE.pushed.values()
        ]
        return json_response({"requests": requests, "enabled": STATE.par_on()})


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
        if body.get("resources") == "*":
            body["resources"] = ["*"]
        if "resources" in body and not (
            isinstance(body["resources"], list) and all(isinstance(r, str) for r in body["resources"])
        ):
            return json_response({"error": "resources must be a list of URIs (or [\"*\"])"}, 400)
        if "access_token_format" in body and body["access_token_format"] not in ("opaque", "jwt"):
            return json_response({"error": "access_token_format must be opaque or jwt"}, 400)
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
                        "dpop": "HTTP_DPOP" in environ,
                        "dpop_scheme": environ.get("HTTP_AUTHORIZATION", "").lower().startswith("dpop "),
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
        "dpop": STATE.dpop_on(),
        "dpop_nonce": STATE.dpop_on() and STATE.dpop_nonce_required(),
        "par": STATE.par_on(),
        "par_required": STATE.par_on() and bool(STATE.config["par_required"]),
        "resources": list(STATE.config["resources"] or []),
        "access_token_format": STATE.config["access_token_format"],
        "token_exchange": STATE.token_exchange_on(),
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
    parser.add_argument(
        "--dpop",
        action="store_true",
        help="DPoP (RFC 9449): advertise dpop_signing_alg_values_supported, check every DPoP proof, answer a "
        "proved token request with token_type DPoP and key-bound tokens (config dpop)",
    )
    parser.add_argument(
        "--dpop-nonce",
        action="store_true",
        help="implies --dpop; the token endpoint and /userinfo require the current server nonce in proofs "
        "(use_dpop_nonce, DPoP-Nonce), replaced after --dpop-nonce-uses accepted proofs (config dpop_nonce)",
    )
    parser.add_argument(
        "--dpop-nonce-uses",
        type=int,
        default=DEFAULT_CONFIG["dpop_nonce_uses"],
        help="accepted proofs per nonce before a new one (config dpop_nonce_uses, default 3)",
    )
    parser.add_argument(
        "--par",
        action="store_true",
        help="PAR (RFC 9126): POST /par, advertised as pushed_authorization_request_endpoint; /authorize takes "
        "request_uri (config par)",
    )
    parser.add_argument(
        "--par-required",
        action="store_true",
        help="implies --par; advertise require_pushed_authorization_requests and refuse /authorize without "
        "request_uri (config par_required)",
    )
    parser.add_argument(
        "--resources",
        action="append",
        metavar="URI[,URI...]",
        help="resource indicators (RFC 8707): the resources allowed ('*': any absolute URI without fragment); "
        "repeatable, comma-separated (config resources)",
    )
    parser.add_argument(
        "--jwt-access-tokens",
        action="store_true",
        help="RFC 9068 JWT access tokens (typ at+jwt) signed with the provider's key (config access_token_format jwt)",
    )
    parser.add_argument(
        "--token-exchange",
        action="store_true",
        help="RFC 8693 token exchange of this provider's access tokens (config token_exchange)",
    )
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
        dpop=args.dpop or args.dpop_nonce,
        dpop_nonce=args.dpop_nonce,
        dpop_nonce_uses=args.dpop_nonce_uses,
        par=args.par or args.par_required,
        par_required=args.par_required,
        resources=unique([r.strip() for value in args.resources or [] for r in value.split(",") if r.strip()]),
        access_token_format="jwt" if args.jwt_access_tokens else "opaque",
        token_exchange=args.token_exchange,
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
    server.register_grant(TokenExchangeGrant)
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
