#!/usr/bin/env python3
"""Approves (or denies) a device-code sign-in (RFC 8628) as the person at the browser would.

    device.py [--user ada] [--deny] VERIFICATION_URI USER_CODE

Opens the verification page, fills in the user code and the username, submits. Exit 0 when
the provider confirmed, 2 when its page said otherwise, 1 on connection failure.
"""

from __future__ import annotations

import argparse
import http.client
import os
import sys
from urllib.parse import urljoin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, FormParser, redacted  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user", default=os.environ.get("AUTHKIT_TEST_BROWSER_USER", "ada"))
    parser.add_argument("--deny", action="store_true")
    parser.add_argument("url", help="verification_uri (or verification_uri_complete)")
    parser.add_argument("code", help="user_code")
    args = parser.parse_args()
    browser = Browser(os.environ.get("AUTHKIT_TEST_BROWSER_LOG"))
    browser.note(args.url)
    try:
        status, _, text = browser.request("GET", args.url)
        page = FormParser()
        page.feed(text)
        form = next((f for f in page.forms if any(n == "user_code" for n, _, _ in f["inputs"])), None)
        if status != 200 or form is None:
            print(f"device: no verification form at {redacted(args.url)} ({status})", file=sys.stderr)
            return 2
        fields = {n: v for n, kind, v in form["inputs"] if n and kind == "hidden"}
        fields.update(user_code=args.code, username=args.user, decision="deny" if args.deny else "approve")
        action = urljoin(args.url, form["action"]) if form["action"] else args.url
        status, _, text = browser.request("POST", action, fields)
        page = FormParser()
        page.feed(text)
        message = " ".join(page.text)[:300]
        print(f"device: provider answered {status}: {message}", file=sys.stderr)
        return 0 if status == 200 and ("Approved" in message or "Denied" in message) else 2
    except (OSError, TimeoutError, http.client.HTTPException) as error:
        print(f"device: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
