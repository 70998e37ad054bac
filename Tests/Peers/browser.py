#!/usr/bin/env python3
"""A scripted user agent for sign-in tests: usable as $BROWSER.

    browser.py [--user ada] [--deny] [--print-redirect] URL

Fetches the authorization URL, fills in and submits the provider's login/consent form (our
provider's `username` + `decision`, oidc-provider-mock's `sub` / `action=deny`), follows
redirects until one leaves the provider's host:port — that is the client's loopback
receiver — and then:

* by default GETs it (following the receiver's redirects on its own host:port, to its result
  page) and exits 0 when the receiver answered 2xx (status and page text on stderr);
* with --print-redirect prints that URL on stdout instead of following it (paste mode).

Exit codes: 0 receiver answered 2xx (or URL printed) · 1 could not connect / timed out ·
2 the provider's page was not what we expected (no form, unknown user, provider error page) ·
3 the receiver answered non-2xx.

Environment knobs (for when authkit runs us as `$BROWSER URL`):
AUTHKIT_TEST_BROWSER_USER (default ada), AUTHKIT_TEST_BROWSER_DENY=1,
AUTHKIT_TEST_BROWSER_LOG=FILE (append each URL opened, one per line),
AUTHKIT_TEST_BROWSER_REDIRECT_FILE=FILE (write the final redirect there instead of following it).

Never prints the query of a redirect (it carries the authorization code), except the one URL
--print-redirect asks for.
"""

from __future__ import annotations

import argparse
import html.parser
import http.client
import json
import os
import sys
import time
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit

MAX_STEPS = 12
TIMEOUT = 10.0
DEADLINE = 30.0


class FormParser(html.parser.HTMLParser):
    """Collects forms: action, method, inputs (name, type, value) and submit buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self.text: list[str] = []
        self._form: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self._form = {"action": a.get("action"), "method": a.get("method", "get").lower(), "inputs": [], "buttons": []}
            self.forms.append(self._form)
        elif self._form is not None and tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "submit":
                self._form["buttons"].append((a.get("name"), a.get("value", "")))
            else:
                self._form["inputs"].append((a.get("name"), kind, a.get("value", "")))
        elif self._form is not None and tag == "button":
            if a.get("type", "submit").lower() == "submit":
                self._form["buttons"].append((a.get("name"), a.get("value", "")))

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None

    def handle_data(self, data):
        if data.strip():
            self.text.append(data.strip())


class Browser:
    def __init__(self, log_file: str | None) -> None:
        self.log_file = log_file
        self.started = time.monotonic()
        # Session cookies per host:port (glewlwyd's login keeps its session in one).
        self.cookies: dict[tuple[str, int], dict[str, str]] = {}

    def request(
        self, method: str, url: str, body: dict[str, str] | None = None, json_body: object | None = None
    ) -> tuple[int, dict[str, str], str]:
        if time.monotonic() - self.started > DEADLINE:
            raise TimeoutError("the sign-in took too long")
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise ValueError(f"only http:// on loopback is supported, got {parts.scheme}://")
        host = parts.hostname or ""
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise ValueError(f"refusing to leave loopback: {host}")
        conn = http.client.HTTPConnection(host, parts.port or 80, timeout=TIMEOUT)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"User-Agent": "authkit-test-browser/1", "Accept": "text/html,application/json"}
        data = None
        if body is not None:
            data = urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif json_body is not None:
            data = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        jar = self.cookies.setdefault((host, parts.port or 80), {})
        if jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            text = response.read(1_000_000).decode("utf-8", "replace")
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.partition("=")
                    jar[key.strip()] = rest.split(";", 1)[0]
            return response.status, {k.lower(): v for k, v in response.getheaders()}, text
        finally:
            conn.close()

    def note(self, url: str) -> None:
        if self.log_file:
            with open(self.log_file, "a", encoding="utf-8") as f:
                f.write(url + "\n")


def origin(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return (parts.hostname or "", parts.port or 80)


def redacted(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}" + ("?…" if parts.query else "")


def choose_submission(forms: list[dict], user: str, deny: bool) -> tuple[dict, dict[str, str]] | None:
    """Picks the form and fields a person would: the deny button, or the user field + approve."""
    user_fields = ("username", "sub", "login", "user", "email")
    for form in forms:
        names = {n for n, _, _ in form["inputs"] if n}
        buttons = form["buttons"]
        deny_button = next(((n, v) for n, v in buttons if n and v.lower() == "deny"), None)
        approve_button = next(((n, v) for n, v in buttons if n and v.lower() in ("approve", "allow", "accept", "authorize")), None)
        if deny:
            if deny_button is None:
                continue
            fields = {n: v for n, kind, v in form["inputs"] if n and kind == "hidden"}
            fields[deny_button[0]] = deny_button[1]
            return form, fields
        user_field = next((f for f in user_fields if f in names), None)
        if user_field is None:
            continue
        fields = {}
        for name, kind, value in form["inputs"]:
            if not name:
                continue
            if name == user_field:
                fields[name] = user
            elif kind == "password":
                fields[name] = os.environ.get("AUTHKIT_TEST_BROWSER_PASSWORD", "password")
            elif kind in ("checkbox", "radio"):
                fields.setdefault(name, value or "on")
            else:
                fields[name] = value
        if approve_button is not None:
            fields[approve_button[0]] = approve_button[1]
        return form, fields
    return None


def run(url: str, user: str, deny: bool, print_redirect: bool, redirect_file: str | None, log_file: str | None) -> int:
    browser = Browser(log_file)
    browser.note(url)
    if origin(url)[0] in ("127.0.0.1", "::1", "localhost") and urlsplit(url).path.startswith("/authkit-start/"):
        # authkit's one-time link: it sets the cookie the callback must carry, and leads on to
        # the provider's authorization URL (which is never on a command line).
        status, headers, _ = browser.request("GET", url)
        if status != 303 or "location" not in headers:
            print(f"browser: authkit's start link answered {status}", file=sys.stderr)
            return 2
        url = headers["location"]
        browser.note(url)
    if admin := os.environ.get("AUTHKIT_TEST_GLEWLWYD_ADMIN"):
        glewlwyd_register_redirect(url, admin)
    provider = origin(url)
    method, body, current = "GET", None, url
    for _ in range(MAX_STEPS):
        if origin(current) != provider:
            return finish(browser, current, print_redirect, redirect_file)
        status, headers, text = browser.request(method, current, body)
        method, body = "GET", None
        if status in (301, 302, 303, 307, 308) and "location" in headers:
            current = urljoin(current, headers["location"])
            if origin(current) == provider and urlsplit(current).path.endswith("/login.html"):
                # glewlwyd: its login page is a JavaScript app over a JSON API; do what it does.
                current = glewlwyd_login(browser, current, user, deny)
            continue
        if status != 200:
            parser = FormParser()
            parser.feed(text)
            print(f"browser: provider answered {status} at {redacted(current)}: {' '.join(parser.text)[:500]}", file=sys.stderr)
            return 2
        parser = FormParser()
        parser.feed(text)
        choice = choose_submission(parser.forms, user, deny)
        if choice is None:
            print(f"browser: no sign-in form at {redacted(current)}: {' '.join(parser.text)[:500]}", file=sys.stderr)
            return 2
        form, fields = choice
        action = urljoin(current, form["action"]) if form["action"] else current
        if form["method"] == "post":
            method, body, current = "POST", fields, action
        else:
            current = action.split("?")[0] + "?" + urlencode(fields)
    print("browser: too many redirects", file=sys.stderr)
    return 2


def glewlwyd_register_redirect(url: str, admin: str) -> None:
    """glewlwyd matches redirect URIs exactly, port included: add this flow's loopback
    redirect to the client's registration first (standing in for RFC 8252 §7.3's any-port
    rule). Only when AUTHKIT_TEST_GLEWLWYD_ADMIN=user:password is set."""
    parts = urlsplit(url)
    if "/api/" not in parts.path:
        return
    api = f"{parts.scheme}://{parts.netloc}" + parts.path.split("/api/")[0] + "/api"
    authorize_query = dict(parse_qsl(parts.query))
    client_id, redirect_uri = authorize_query.get("client_id", ""), authorize_query.get("redirect_uri", "")
    name, _, password = admin.partition(":")
    helper = Browser(None)
    status, _, _ = helper.request("POST", api + "/auth/", json_body={"username": name, "password": password})
    if status != 200:
        raise ValueError(f"glewlwyd admin login answered {status}")
    status, _, text = helper.request("GET", api + "/client/" + quote(client_id, safe=""))
    if status != 200:
        raise ValueError(f"glewlwyd client {client_id} not found ({status})")
    client = json.loads(text)
    if redirect_uri and redirect_uri not in client.get("redirect_uri", []):
        client["redirect_uri"] = client.get("redirect_uri", []) + [redirect_uri]
        client.pop("source", None)
        status, _, text = helper.request("PUT", api + "/client/" + quote(client_id, safe=""), json_body=client)
        if status != 200:
            raise ValueError(f"glewlwyd refused to register the redirect URI ({status}): {text[:200]}")


def glewlwyd_login(browser: Browser, login_page: str, user: str, deny: bool) -> str:
    """Signs in through glewlwyd's login API and returns the authorization URL to continue."""
    if deny:
        raise ValueError("--deny is not supported against glewlwyd (its consent is an API call, not a form)")
    parts = urlsplit(login_page)
    query = dict(parse_qsl(parts.query))
    callback = query.get("callback_url")
    if not callback:
        raise ValueError("glewlwyd login page without callback_url")
    api = f"{parts.scheme}://{parts.netloc}" + parts.path[: -len("login.html")] + "api"
    password = os.environ.get("AUTHKIT_TEST_BROWSER_PASSWORD", "password")
    status, _, _ = browser.request("POST", api + "/auth/", json_body={"username": user, "password": password})
    if status != 200:
        raise ValueError(f"glewlwyd login of {user} answered {status}")
    return callback + "&g_continue"


def finish(browser: Browser, redirect: str, print_redirect: bool, redirect_file: str | None) -> int:
    if print_redirect:
        print(redirect)
        return 0
    if redirect_file:
        with open(redirect_file, "w", encoding="utf-8") as f:
            f.write(redirect + "\n")
        print(f"browser: redirect to {redacted(redirect)} written to {redirect_file}", file=sys.stderr)
        return 0
    status, headers, text = browser.request("GET", redirect)
    # The receiver answers the callback with a redirect to a clean result page on itself.
    for _ in range(3):
        if status not in (301, 302, 303, 307, 308) or "location" not in headers:
            break
        following = urljoin(redirect, headers["location"])
        if origin(following) != origin(redirect):
            print(f"browser: receiver redirected away, to {redacted(following)}", file=sys.stderr)
            return 3
        redirect = following
        status, headers, text = browser.request("GET", redirect)
    parser = FormParser()
    parser.feed(text)
    print(f"browser: receiver {redacted(redirect)} answered {status}: {' '.join(parser.text)[:500]}", file=sys.stderr)
    return 0 if 200 <= status < 300 else 3


def main() -> int:
    parser = argparse.ArgumentParser(description="Scripted browser for authkit's sign-in tests")
    parser.add_argument("--user", default=os.environ.get("AUTHKIT_TEST_BROWSER_USER", "ada"))
    parser.add_argument("--deny", action="store_true", default=os.environ.get("AUTHKIT_TEST_BROWSER_DENY", "") not in ("", "0"))
    parser.add_argument("--print-redirect", action="store_true", help="print the final redirect URL instead of following it")
    parser.add_argument("--redirect-file", default=os.environ.get("AUTHKIT_TEST_BROWSER_REDIRECT_FILE"))
    parser.add_argument("url")
    args = parser.parse_args()
    try:
        return run(args.url, args.user, args.deny, args.print_redirect, args.redirect_file, os.environ.get("AUTHKIT_TEST_BROWSER_LOG"))
    except (OSError, TimeoutError, http.client.HTTPException) as error:
        print(f"browser: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    except ValueError as error:
        print(f"browser: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
