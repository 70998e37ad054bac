#!/usr/bin/env python3
"""Debian's glewlwyd (a full OpenID provider in C) on 127.0.0.1, unprivileged, from a script.

    python glewlwyd/glewlwyd_provider.py [--port 0] [--log FILE] [--ignore-stdin]
        [--dpop] [--dpop-nonce-counter N] [--dpop-required] [--dpop-iat-duration S] [--dpop-iat-gap S]
        [--par] [--par-required] [--par-duration S]
        [--resources URI,URI...] [--resource-scope SCOPE] [--iss-parameter] [--extra-scope NAME]
        [--glewlwyd-log-level ERROR|WARNING|INFO|DEBUG] [--keep-workdir]
    python glewlwyd/glewlwyd_provider.py register-redirect --api BASE_URL/api [--admin admin:password]
        [--client-id authkit-test-public] URI [URI...]

Builds a throw-away instance in a private temporary directory: a SQLite database from
Debian's own schema (/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3, which also
creates the `admin`/`password` administrator), a config binding 127.0.0.1 only, then
through glewlwyd's admin API an OpenID Connect plugin instance `oidc` (RS256 key made
here; PKCE S256 only and REQUIRED for public clients; rolling refresh tokens; revocation;
device grant), a public client, a confidential client and the users ada and grace
(password `password`). Prints the peers' JSON ready line; stops glewlwyd and removes the
directory on SIGTERM, end of stdin or when its parent exits.

glewlwyd needs a fixed port, so `--port 0` picks a free one first (bind, read, close): a
small race another process could win, reported as "did not start".

Known deviations (README.md, "glewlwyd"): redirect URIs must match exactly, port included
(no RFC 8252 §7.3 any-port rule), so the scripted browser registers the exact loopback
redirect through the admin API before signing in (AUTHKIT_TEST_GLEWLWYD_ADMIN); a wrong
code_verifier is answered 403 `invalid_code`, not 400 `invalid_grant`; no RFC 9207 `iss`
unless --iss-parameter; the OIDC `nonce` is required for scope=openid.

Switches (all off by default: without them the instance is the one described above). The
oidc plugin parameters each one sets, as glewlwyd 2.7.5 spells them (also in the ready
line's `plugin_parameters`):

  --dpop                  oauth-dpop-allowed=true, oauth-dpop-iat-duration (--dpop-iat-duration, 60),
                          oauth-dpop-iat-gap-duration (--dpop-iat-gap, 0)
  --dpop-nonce-counter N  oauth-dpop-nonce-mandatory=true, oauth-dpop-nonce-counter=N (implies --dpop):
                          one nonce per client, good for N+1 successful proofs
  --dpop-required         oauth-dpop-dpop_bound_access_tokens-property="dpop_bound_access_tokens" and
                          that property "true" on the public client: /par and /token without a DPoP
                          proof are refused for it (implies --dpop). With nonces and --par-required a
                          fresh client can never learn its first nonce (/par gives none)
  --par                   oauth-par-allowed=true, oauth-par-request_uri-prefix=
                          "urn:ietf:params:oauth:request_uri:", oauth-par-duration (--par-duration, 90)
  --par-required          also oauth-par-required=true (implies --par)
  --resources A,B         resource-allowed=true, resource-scope={SCOPE: [A, B]} (SCOPE from
                          --resource-scope, default openid), resource-client-property="resource",
                          resource-scope-and-client-property=false (RFC 8707)
  --iss-parameter         oauth-as-iss-id=true (RFC 9207 iss in the authorization response)
  --extra-scope NAME      a further scope (no password needed) given to the clients and users
  --glewlwyd-log-level L  glewlwyd's own log level (DEBUG names the reason of each DPoP refusal)

`register-redirect` adds exact redirect URIs to a client of a running instance through the
admin API (the ready line's `register_redirect` is that command line, to which a test appends
`[--client-id ID] URI`). With PAR the redirect URI is checked at /par, so a test registers its
loopback URI (port included) before the push. Prints one JSON line; exit 0 when every URI is
registered (already or now), 1 otherwise.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import logging
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import peerlib  # noqa: E402

log = logging.getLogger("glewlwyd")

GLEWLWYD = shutil.which("glewlwyd") or "/usr/bin/glewlwyd"
SCHEMA = "/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3"
ADMIN = ("admin", "password")
USER_PASSWORD = "password"
USERS = [("ada", "Ada Lovelace", "ada@example.test"), ("grace", "Grace Hopper", "grace@example.test")]
PLUGIN = "oidc"
PUBLIC_CLIENT = "authkit-test-public"
CONFIDENTIAL_CLIENT = "authkit-test-confidential"
PAR_PREFIX = "urn:ietf:params:oauth:request_uri:"
DPOP_BOUND_PROPERTY = "dpop_bound_access_tokens"
RESOURCE_CLIENT_PROPERTY = "resource"

CONFIG = """port={port}
bind_address="127.0.0.1"
external_url="http://127.0.0.1:{port}"
login_url="login.html"
api_prefix="api"
log_mode="file"
log_level="{log_level}"
log_file="{workdir}/glewlwyd.log"
cookie_secure=0
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
plugin_api_run_enabled=""
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
hash_algorithm = "SHA512"
database =
{{
  type = "sqlite3"
  path = "{workdir}/glewlwyd.db"
}};
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((peerlib.LOOPBACK, 0))
        return s.getsockname()[1]


class Admin:
    """glewlwyd's admin API with a session cookie; loopback only, no proxy."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, str]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            # Generous: with both cores busy (a build beside the suite) one admin call was seen
            # to take over 10 s; the launcher bounds the whole start-up (60 s).
            with self.opener.open(request, timeout=45) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def must(self, method: str, path: str, body: object | None = None) -> str:
        status, text = self.call(method, path, body)
        if status != 200:
            raise RuntimeError(f"glewlwyd {method} {path} answered {status}: {text[:300]}")
        return text


def rsa_key_pair() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def feature_parameters(args: argparse.Namespace) -> dict:
    """The oidc plugin parameters the switches add (empty without switches)."""
    extra: dict = {}
    if args.dpop or args.dpop_nonce_counter or args.dpop_required:
        extra["oauth-dpop-allowed"] = True
        extra["oauth-dpop-iat-duration"] = args.dpop_iat_duration
        extra["oauth-dpop-iat-gap-duration"] = args.dpop_iat_gap
        if args.dpop_nonce_counter:
            extra["oauth-dpop-nonce-mandatory"] = True
            extra["oauth-dpop-nonce-counter"] = args.dpop_nonce_counter
        if args.dpop_required:
            extra["oauth-dpop-dpop_bound_access_tokens-property"] = DPOP_BOUND_PROPERTY
    if args.par or args.par_required:
        extra["oauth-par-allowed"] = True
        extra["oauth-par-required"] = bool(args.par_required)
        extra["oauth-par-request_uri-prefix"] = PAR_PREFIX
        extra["oauth-par-duration"] = args.par_duration
    if args.resources:
        extra["resource-allowed"] = True
        extra["resource-scope"] = {args.resource_scope: args.resources}
        extra["resource-client-property"] = RESOURCE_CLIENT_PROPERTY
        extra["resource-scope-and-client-property"] = False
    if args.iss_parameter:
        extra["oauth-as-iss-id"] = True
    return extra


def configure(
    admin: Admin,
    issuer: str,
    redirect_uris: list[str],
    confidential_secret: str,
    access_token_ttl: int,
    extra: dict | None = None,
    dpop_required: bool = False,
    extra_scope: str | None = None,
) -> None:
    extra = extra or {}
    scopes = ["openid", "offline_access"] + ([extra_scope] if extra_scope else [])
    admin.must("POST", "/auth/", {"username": ADMIN[0], "password": ADMIN[1]})
    if extra_scope:
        admin.must(
            "POST",
            "/scope/",
            {"name": extra_scope, "display_name": extra_scope, "description": "test scope", "password_required": False, "scheme": {}},
        )
    if dpop_required:
        # The client database backend stores only the properties its data-format lists, and
        # reads a changed data-format only after a reset of the module instance.
        module = json.loads(admin.must("GET", "/mod/client/database"))
        module["parameters"]["data-format"][DPOP_BOUND_PROPERTY] = {"multiple": False, "read": True, "write": True}
        admin.must("PUT", "/mod/client/database", module)
        admin.must("PUT", "/mod/client/database/reset")
    private, public = rsa_key_pair()
    admin.must(
        "POST",
        "/mod/plugin/",
        {
            "module": "oidc",
            "name": PLUGIN,
            "display_name": "authkit test provider",
            "enabled": True,
            "parameters": {
                "iss": issuer,
                "jwt-type": "rsa",
                "jwt-key-size": "256",
                "key": private,
                "cert": public,
                "access-token-duration": access_token_ttl,
                "refresh-token-duration": 1209600,
                "code-duration": 600,
                "refresh-token-rolling": True,
                "allow-non-oidc": False,
                "auth-type-code-enabled": True,
                "auth-type-code-revoke-replayed": True,
                "auth-type-refresh-enabled": True,
                "auth-type-device-enabled": True,
                "auth-type-token-enabled": False,
                "auth-type-id-token-enabled": False,
                "auth-type-none-enabled": False,
                "auth-type-password-enabled": False,
                "auth-type-client-enabled": False,
                "pkce-allowed": True,
                "pkce-method-plain-allowed": False,
                "pkce-required": False,
                "pkce-required-public-client": True,
                "introspection-revocation-allowed": True,
                "introspection-revocation-allow-target-client": True,
                "introspection-revocation-auth-scope": [],
                "jwks-show": True,
                "allowed-scope": scopes,
                "name-claim": "mandatory",
                "email-claim": "mandatory",
                "scope-claim": "no",
                "secret-type": "pairwise",
                "device-authorization-expiration": 600,
                "device-authorization-interval": 5,
                **extra,
            },
        },
    )
    base_client = {
        "redirect_uri": redirect_uris,
        "authorization_type": ["code", "refresh_token", "device_authorization"],
        "scope": scopes,
        "enabled": True,
    }
    public_extra: dict = {DPOP_BOUND_PROPERTY: "true"} if dpop_required else {}
    admin.must("POST", "/client/", {"client_id": PUBLIC_CLIENT, "name": "authkit (public)", "confidential": False, **base_client, **public_extra})
    admin.must(
        "POST",
        "/client/",
        {
            "client_id": CONFIDENTIAL_CLIENT,
            "name": "authkit (confidential)",
            "confidential": True,
            "password": confidential_secret,
            # Without this property glewlwyd refuses every secret method: 403 unauthorized_client.
            "token_endpoint_auth_method": ["client_secret_basic", "client_secret_post"],
            **base_client,
        },
    )
    for username, name, email in USERS:
        admin.must(
            "POST",
            "/user/",
            {"username": username, "name": name, "email": email, "password": USER_PASSWORD, "scope": scopes + ["g_profile"], "enabled": True},
        )


def register_redirect(argv: list[str]) -> int:
    """`register-redirect`: adds exact redirect URIs to a client of a running instance."""
    parser = argparse.ArgumentParser(prog="glewlwyd_provider.py register-redirect", description=register_redirect.__doc__)
    parser.add_argument("--api", required=True, help="the instance's API, BASE_URL/api (ready line: admin_api)")
    parser.add_argument("--admin", default=f"{ADMIN[0]}:{ADMIN[1]}", help="user:password (ready line: admin)")
    parser.add_argument("--client-id", default=PUBLIC_CLIENT)
    parser.add_argument("uris", nargs="+", metavar="URI")
    args = parser.parse_args(argv)
    name, _, password = args.admin.partition(":")
    admin = Admin(args.api.rstrip("/"))
    try:
        admin.must("POST", "/auth/", {"username": name, "password": password})
        path = "/client/" + urllib.parse.quote(args.client_id, safe="")
        client = json.loads(admin.must("GET", path))
        registered = list(client.get("redirect_uri") or [])
        added = [uri for uri in dict.fromkeys(args.uris) if uri not in registered]
        if added:
            client["redirect_uri"] = registered + added
            client.pop("source", None)  # read-only; a PUT carrying it is refused
            admin.must("PUT", path, client)
    except (OSError, ValueError, RuntimeError) as error:
        print(f"register-redirect: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"client_id": args.client_id, "added": added, "redirect_uris": registered + added}))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["register-redirect"]:
        return register_redirect(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--access-token-ttl", type=int, default=3600)
    parser.add_argument("--keep-workdir", action="store_true", help="leave the temporary instance directory behind (debugging)")
    parser.add_argument("--glewlwyd-log-level", default="INFO", choices=["ERROR", "WARNING", "INFO", "DEBUG"], help="glewlwyd's own log level")
    parser.add_argument("--dpop", action="store_true", help="oauth-dpop-allowed (RFC 9449)")
    parser.add_argument("--dpop-nonce-counter", type=int, default=0, metavar="N", help="nonces mandatory; a nonce serves N+1 successful proofs per client")
    parser.add_argument("--dpop-required", action="store_true", help="the public client must use DPoP at /par and the token endpoint")
    parser.add_argument("--dpop-iat-duration", type=int, default=60, metavar="S", help="oldest accepted proof iat (seconds back)")
    parser.add_argument("--dpop-iat-gap", type=int, default=0, metavar="S", help="newest accepted proof iat (seconds ahead)")
    parser.add_argument("--par", action="store_true", help="oauth-par-allowed (RFC 9126)")
    parser.add_argument("--par-required", action="store_true", help="oauth-par-required: /auth only with a pushed request_uri")
    parser.add_argument("--par-duration", type=int, default=90, metavar="S", help="request_uri lifetime until its first use")
    parser.add_argument("--resources", type=lambda v: [u for u in v.split(",") if u], default=[], metavar="URI,...", help="allowed RFC 8707 resources")
    parser.add_argument("--resource-scope", default="openid", help="the scope the --resources are listed under")
    parser.add_argument("--iss-parameter", action="store_true", help="oauth-as-iss-id: RFC 9207 iss in the redirect")
    parser.add_argument("--extra-scope", metavar="NAME", help="one more scope for the clients and users")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    if not os.access(GLEWLWYD, os.X_OK) or not os.path.exists(SCHEMA):
        print("glewlwyd is not installed: run ./scripts/bootstrap (apt package glewlwyd)", file=sys.stderr)
        return 3

    lifetime = peerlib.Lifetime("glewlwyd")
    lifetime.start_watching(not args.ignore_stdin)
    workdir = tempfile.mkdtemp(prefix="authkit-glewlwyd-")
    os.chmod(workdir, 0o700)
    process: subprocess.Popen | None = None
    try:
        with sqlite3.connect(os.path.join(workdir, "glewlwyd.db")) as db, open(SCHEMA, encoding="utf-8") as schema:
            db.executescript(schema.read())
        port = args.port or free_port()
        with open(os.path.join(workdir, "glewlwyd.conf"), "w", encoding="utf-8") as f:
            f.write(CONFIG.format(port=port, workdir=workdir, log_level=args.glewlwyd_log_level))
        process = subprocess.Popen(
            [GLEWLWYD, "-c", os.path.join(workdir, "glewlwyd.conf")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=workdir,
        )
        base = f"http://{peerlib.LOOPBACK}:{port}"
        admin = Admin(base + "/api")
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"glewlwyd exited with status {process.returncode} (port {port} taken?)")
            try:
                admin.call("GET", "/auth/scheme/")  # any HTTP answer means it serves
                break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("glewlwyd did not answer within 20 s")
            if lifetime.stopping:
                return 0
            time.sleep(0.1)
        issuer = f"{base}/api/{PLUGIN}"
        secret = secrets.token_urlsafe(24)
        redirect_uris = ["http://127.0.0.1/callback", "http://127.0.0.1/"]
        extra = feature_parameters(args)
        configure(admin, issuer, redirect_uris, secret, args.access_token_ttl, extra, bool(args.dpop_required), args.extra_scope)
        admin_credentials = f"{ADMIN[0]}:{ADMIN[1]}"
        log.info("glewlwyd %s ready on %s (instance %s)", process.pid, base, workdir)
        lifetime.announce(
            {
                "ready": True,
                "peer": "glewlwyd",
                "port": port,
                "pid": os.getpid(),
                "glewlwyd_pid": process.pid,
                "base_url": base,
                "issuer": issuer,
                "discovery_url": issuer + "/.well-known/openid-configuration",
                "clients": [
                    {"client_id": PUBLIC_CLIENT, "client_secret": None, "token_endpoint_auth_method": "none", "redirect_uris": redirect_uris, "pkce_required": True},
                    {"client_id": CONFIDENTIAL_CLIENT, "client_secret": secret, "token_endpoint_auth_method": "client_secret_basic", "redirect_uris": redirect_uris, "pkce_required": False},
                ],
                "users": [{"username": u, "name": n, "email": e, "password": USER_PASSWORD} for u, n, e in USERS],
                # For the scripted browser: glewlwyd matches redirect URIs exactly, port included.
                "admin": admin_credentials,
                "browser_environment": {"AUTHKIT_TEST_GLEWLWYD_ADMIN": admin_credentials},
                # With PAR the redirect URI is checked at /par, before any browser: append
                # ["--client-id", ID,] URI to this command line and run it first.
                "admin_api": base + "/api",
                "register_redirect": [sys.executable, os.path.abspath(__file__), "register-redirect", "--api", base + "/api", "--admin", admin_credentials],
                "plugin_parameters": extra,
                "par_endpoint": issuer + "/par" if extra.get("oauth-par-allowed") else None,
                "glewlwyd_log": os.path.join(workdir, "glewlwyd.log") if args.keep_workdir else None,
            }
        )
        while not lifetime.stopping:
            if process.poll() is not None:
                lifetime.stop(f"glewlwyd exited with status {process.returncode}")
            time.sleep(0.2)
        lifetime.wait()
        return 0
    except Exception as error:  # noqa: BLE001 — reported to the launcher on stderr, then cleaned up
        print(f"glewlwyd peer: {error}", file=sys.stderr)
        log.error("glewlwyd peer failed: %s", error)
        return 1
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        glewlwyd_log = os.path.join(workdir, "glewlwyd.log")
        if os.path.exists(glewlwyd_log):
            with open(glewlwyd_log, encoding="utf-8", errors="replace") as f:
                log.info("glewlwyd's own log:\n%s", f.read()[-20000:])
        if not args.keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    peerlib.run_main(main)
