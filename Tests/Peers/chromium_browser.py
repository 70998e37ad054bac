#!/usr/bin/env python3
"""A real browser for sign-in tests: Debian's chromium, headless, driven through chromedriver
by selenium. Usable as $BROWSER (through the `chromium` wrapper next to this file).

    chromium_browser.py URL

Opens the authorization URL, fills in our provider's login form (`username`, then the
"Sign in and allow" or, with AUTHKIT_TEST_BROWSER_DENY=1, the "Deny" button), lets chromium
follow the provider's redirect to the client's loopback receiver and whatever that answers,
and writes a JSON report of what chromium ended on to AUTHKIT_TEST_CHROMIUM_REPORT:

    {"ok": true, "error": null, "elapsed": 2.1, "chromium": "Chromium 156…",
     "pages": [{"name": "result", "url": "http://127.0.0.1:PORT/authkit/signed-in",
                "title": …, "text": (rendered body text), "html": (the DOM as serialised),
                "status": 200, "headers": {lower-case name: value} (the document's response),
                "redirects": [{"status": 303, "path": "/", "query_names": ["code", "iss", "state"],
                               "location": "/authkit/signed-in", "location_has_query": false,
                               "headers": {…}}]  (the receiver's redirects on the way),
                "resources": [URLs the page loaded: performance.getEntriesByType("resource")],
                "console": [console messages],
                "history": [the tab's back/forward list; the receiver's entries whole]}],
     "requests": ["http://127.0.0.1:PORT/path", …] (every request a page made, no query;
                  chromium's own chrome:// pages left out),
     "foreign_requests": [the ones to anything but 127.0.0.1 / localhost / ::1]}

AUTHKIT_TEST_CHROMIUM_SCENARIO picks extra pages (each recorded under its name):
* `sign-in` (default): only the sign-in ("result").
* `forged-state`: first opens the redirect URI with a made-up code and state ("forged"), as
  another local user's link would, then signs in.
* `second-callback`: after the sign-in, opens the callback URL chromium was redirected to
  once more ("second"), as the back button or a reload of an old tab would.

Other knobs: AUTHKIT_TEST_BROWSER_USER (default ada), AUTHKIT_TEST_BROWSER_LOG=FILE (append
the URL opened), AUTHKIT_TEST_CHROMIUM (chromium binary, default /usr/bin/chromium),
AUTHKIT_TEST_CHROMEDRIVER (default /usr/bin/chromedriver).

Never writes the query of a request or a redirect anywhere (it carries the authorization
code): URLs in the report are cut at `?`; only the final pages' own URL and HTML are written
as they are — which is what the tests check for a code. Every wait is bounded; chromium
resolves no host name but 127.0.0.1/localhost and uses no proxy.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from urllib.parse import parse_qsl, urlencode, urlsplit

DEADLINE = 60.0  # the whole run, chromium's start included
STEP = 20.0  # one page load or wait
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class Failure(Exception):
    pass


def cut(url: str) -> str:
    """The URL without its query and fragment (they may carry the code)."""
    return re.split(r"[?#]", url, maxsplit=1)[0]


def redact(text: str) -> str:
    """Cuts every query out of free text (console messages name URLs)."""
    return re.sub(r"\?[^\s\"'<>]*", "?…", text)


def origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    return (parts.scheme, parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))


def is_loopback(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "about", "blob", "chrome", "chrome-error", "devtools"):
        return True
    return (parts.hostname or "") in LOOPBACK


class Chromium:
    def __init__(self, report: dict) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.report = report
        self.requests: list[str] = []
        self.profile = tempfile.TemporaryDirectory(prefix="authkit-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("AUTHKIT_TEST_CHROMIUM", "/usr/bin/chromium")
        for argument in (
            "--headless=new",
            # Chromium's sandbox needs user namespaces or a setuid helper, and refuses to start
            # as root at all ("Running as root without --no-sandbox is not supported"): CI runs
            # the tests as root in a container. The pages opened are our own peers on loopback.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={self.profile.name}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-sync",
            "--metrics-recording-only",
            "--no-proxy-server",
            # Nothing but loopback resolves: a request elsewhere fails here (and is reported).
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
            "--window-size=1024,768",
        ):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        options.page_load_strategy = "normal"
        service = Service(
            executable_path=os.environ.get("AUTHKIT_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"),
            log_output=subprocess.DEVNULL,
        )
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(STEP)
        self.driver.set_script_timeout(STEP)
        report["chromium"] = self.driver.capabilities.get("browserVersion")

    def quit(self) -> None:
        try:
            self.driver.quit()
        finally:
            self.profile.cleanup()

    def events(self) -> list[dict]:
        """The DevTools events since the last call (chromedriver's performance log)."""
        out = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                url = message["params"]["request"]["url"]
                if urlsplit(url).scheme not in ("data", "chrome", "devtools", "about"):  # not chromium's own pages
                    self.requests.append(cut(url))
            out.append(message)
        return out

    def wait(self, condition, what: str) -> None:
        deadline = time.monotonic() + STEP
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except Exception:  # noqa: BLE001 — a page mid-navigation answers scripts badly
                pass
            time.sleep(0.05)
        raise Failure(f"timed out waiting for {what} (at {cut(self.driver.current_url)})")

    def loaded(self) -> bool:
        return self.driver.execute_script("return document.readyState") == "complete"

    def record(self, name: str, receiver: tuple[str, str, int], events: list[dict]) -> dict:
        """Records the page chromium shows now, with the receiver's redirects on the way."""
        driver = self.driver
        url = driver.current_url
        page = {
            "name": name,
            "url": url,
            "title": driver.title,
            "text": driver.execute_script("return document.body ? document.body.innerText : ''"),
            "html": driver.execute_script("return document.documentElement.outerHTML"),
            "resources": [
                cut(entry) for entry in driver.execute_script(
                    "return performance.getEntriesByType('resource').map(e => e.name)")
            ],
            "status": None,
            "headers": {},
            "redirects": [],
            "console": [],
        }
        for message in events:
            params = message.get("params", {})
            if message.get("method") == "Network.requestWillBeSent" and "redirectResponse" in params:
                response = params["redirectResponse"]
                if origin(response["url"]) != receiver:
                    continue  # the provider's redirect to us: its Location carries the code
                if urlsplit(response["url"]).path.startswith("/authkit-start/"):
                    # authkit's one-time link to the provider (recorded apart: not the callback's).
                    page["start_redirects"] = page.get("start_redirects", 0) + 1
                    continue
                headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
                location = headers.pop("location", "")
                page["redirects"].append({
                    "status": response.get("status"),
                    "path": urlsplit(response["url"]).path,
                    "query_names": sorted({k for k, _ in parse_qsl(urlsplit(response["url"]).query, keep_blank_values=True)}),
                    "location": cut(location),
                    "location_has_query": "?" in location,
                    "headers": headers,
                })
            elif message.get("method") == "Network.responseReceived" and params.get("type") == "Document":
                response = params["response"]
                if response.get("url") == url:
                    page["status"] = response.get("status")
                    page["headers"] = {k.lower(): v for k, v in response.get("headers", {}).items()}
        for entry in driver.get_log("browser"):
            page["console"].append(redact(f"{entry.get('level')}: {entry.get('message')}"))
        # The tab's back/forward list (DevTools Page.getNavigationHistory): the receiver's
        # entries as they are (that is what the tests check for a code), the others cut.
        history = driver.execute_cdp_cmd("Page.getNavigationHistory", {})
        page["history"] = [
            entry["url"] if origin(entry["url"]) == receiver else cut(entry["url"])
            for entry in history.get("entries", [])
        ]
        self.report["pages"].append(page)
        return page


def sign_in(browser: Chromium, url: str, deny: bool, user: str, receiver: tuple[str, str, int]) -> list[dict]:
    """Opens the authorization URL, answers the login form, and waits until chromium has
    left the provider and finished loading what the receiver sent. Returns the events."""
    from selenium.webdriver.common.by import By

    driver = browser.driver
    driver.get(url)
    browser.wait(lambda: driver.find_elements(By.CSS_SELECTOR, "form#login"), "the provider's login form")
    # (authkit's one-time start link led here: the provider is where the form is.)
    provider = origin(driver.current_url)
    form = driver.find_element(By.CSS_SELECTOR, "form#login")
    if deny:
        form.find_element(By.CSS_SELECTOR, "button[value=deny]").click()
    else:
        form.find_element(By.NAME, "username").send_keys(user)
        form.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    browser.wait(lambda: origin(driver.current_url) != provider and browser.loaded(), "the page after the provider")
    if origin(driver.current_url) != receiver:
        raise Failure(f"the provider sent chromium to {cut(driver.current_url)}, not to the receiver")
    return browser.events()


def run(url: str, report: dict) -> None:
    if not is_loopback(url) or urlsplit(url).scheme != "http":
        raise Failure(f"refusing to open {cut(url)}: only http:// on loopback")
    parts = urlsplit(url)
    if parts.path.startswith("/authkit-start/"):
        # authkit's one-time link on its receiver: it sets the browser's cookie and leads on to
        # the provider (the callback path is the default one, /).
        redirect_uri = f"{parts.scheme}://{parts.netloc}/"
    else:
        redirect_uri = dict(parse_qsl(parts.query)).get("redirect_uri", "")
    if not redirect_uri or not is_loopback(redirect_uri):
        raise Failure("the authorization URL has no loopback redirect_uri")
    receiver = origin(redirect_uri)
    scenario = os.environ.get("AUTHKIT_TEST_CHROMIUM_SCENARIO", "sign-in")
    deny = os.environ.get("AUTHKIT_TEST_BROWSER_DENY", "") not in ("", "0")
    user = os.environ.get("AUTHKIT_TEST_BROWSER_USER", "ada")

    browser = Chromium(report)
    try:
        driver = browser.driver
        if scenario == "forged-state":
            forged = redirect_uri + ("&" if "?" in redirect_uri else "?") + urlencode(
                {"code": "forged-code-from-a-neighbour", "state": "forged-state"})
            driver.get(forged)
            browser.wait(browser.loaded, "the forged callback's page")
            browser.record("forged", receiver, browser.events())
        events = sign_in(browser, url, deny, user, receiver)
        browser.record("result", receiver, events)
        if scenario == "second-callback":
            callback = next(
                (m["params"]["request"]["url"] for m in events
                 if m.get("method") == "Network.requestWillBeSent"
                 and origin(m["params"]["request"]["url"]) == receiver
                 and urlsplit(m["params"]["request"]["url"]).query),
                None)
            if callback is None:
                raise Failure("no callback with a query was seen")
            driver.get(callback)
            browser.wait(browser.loaded, "the second callback's page")
            browser.record("second", receiver, browser.events())
    finally:
        report["requests"] = browser.requests
        report["foreign_requests"] = [r for r in browser.requests if not is_loopback(r)]
        browser.quit()


def write_report(path: str, report: dict) -> None:
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    os.replace(partial, path)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: chromium_browser.py URL", file=sys.stderr)
        return 2
    url = sys.argv[1]
    report_path = os.environ.get("AUTHKIT_TEST_CHROMIUM_REPORT")
    if log := os.environ.get("AUTHKIT_TEST_BROWSER_LOG"):
        with open(log, "a", encoding="utf-8") as f:
            f.write(url + "\n")
    started = time.monotonic()
    report: dict = {"ok": False, "error": None, "pages": [], "requests": [], "foreign_requests": []}

    def overdue(signum, frame):
        raise Failure(f"gave up after {DEADLINE:.0f} s")

    signal.signal(signal.SIGALRM, overdue)
    signal.alarm(int(DEADLINE))
    try:
        run(url, report)
        report["ok"] = True
    except Exception as error:  # noqa: BLE001 — every failure goes into the report
        report["error"] = redact(f"{type(error).__name__}: {error}")[:2000]
    finally:
        signal.alarm(0)
        report["elapsed"] = round(time.monotonic() - started, 3)
        if report_path:
            write_report(report_path, report)
        else:
            json.dump(report, sys.stdout, indent=1)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
