#!/usr/bin/env python3
"""Debian's glewlwyd (a full OpenID provider in C) on 127.0.0.1, unprivileged, from a script.

    python glewlwyd/glewlwyd_provider.py [--port 0] [--log FILE] [--ignore-stdin]

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
code_verifier is answered 403 `invalid_code`, not 400 `invalid_grant`; no RFC 9207 `iss`.
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

CONFIG = """port={port}
bind_address="127.0.0.1"
external_url="http://127.0.0.1:{port}"
login_url="login.html"
api_prefix="api"
log_mode="file"
log_level="INFO"
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
            with self.opener.open(request, timeout=10) as response:
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


def configure(admin: Admin, issuer: str, redirect_uris: list[str], confidential_secret: str, access_token_ttl: int) -> None:
    admin.must("POST", "/auth/", {"username": ADMIN[0], "password": ADMIN[1]})
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
                "allowed-scope": ["openid", "offline_access"],
                "name-claim": "mandatory",
                "email-claim": "mandatory",
                "scope-claim": "no",
                "secret-type": "pairwise",
                "device-authorization-expiration": 600,
                "device-authorization-interval": 5,
            },
        },
    )
    base_client = {
        "redirect_uri": redirect_uris,
        "authorization_type": ["code", "refresh_token", "device_authorization"],
        "scope": ["openid", "offline_access"],
        "enabled": True,
    }
    admin.must("POST", "/client/", {"client_id": "authkit-test-public", "name": "authkit (public)", "confidential": False, **base_client})
    admin.must(
        "POST",
        "/client/",
        {
            "client_id": "authkit-test-confidential",
            "name": "authkit (confidential)",
            "confidential": True,
            "password": confidential_secret,
            **base_client,
        },
    )
    for username, name, email in USERS:
        admin.must(
            "POST",
            "/user/",
            {"username": username, "name": name, "email": email, "password": USER_PASSWORD, "scope": ["openid", "offline_access", "g_profile"], "enabled": True},
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--access-token-ttl", type=int, default=3600)
    parser.add_argument("--keep-workdir", action="store_true", help="leave the temporary instance directory behind (debugging)")
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
            f.write(CONFIG.format(port=port, workdir=workdir))
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
        configure(admin, issuer, redirect_uris, secret, args.access_token_ttl)
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
                    {"client_id": "authkit-test-public", "client_secret": None, "token_endpoint_auth_method": "none", "redirect_uris": redirect_uris, "pkce_required": True},
                    {"client_id": "authkit-test-confidential", "client_secret": secret, "token_endpoint_auth_method": "client_secret_basic", "redirect_uris": redirect_uris, "pkce_required": False},
                ],
                "users": [{"username": u, "name": n, "email": e, "password": USER_PASSWORD} for u, n, e in USERS],
                # For the scripted browser: glewlwyd matches redirect URIs exactly, port included.
                "admin": f"{ADMIN[0]}:{ADMIN[1]}",
                "browser_environment": {"AUTHKIT_TEST_GLEWLWYD_ADMIN": f"{ADMIN[0]}:{ADMIN[1]}"},
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
