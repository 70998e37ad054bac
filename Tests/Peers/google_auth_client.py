#!/usr/bin/env python3
"""Google's own auth library (google-auth) as a client: loads the external_account credential
configuration given, refreshes it — running its executable and exchanging the token at the
configuration's token_url — and prints `ok EXPIRY` (never the token), or the library's error
on stderr with exit 1."""

import sys

import google.auth
import google.auth.exceptions
import google.auth.transport.requests


def main() -> int:
    try:
        credentials, _ = google.auth.load_credentials_from_file(sys.argv[1], scopes=["https://www.googleapis.com/auth/cloud-platform"])
        credentials.refresh(google.auth.transport.requests.Request())
    except google.auth.exceptions.GoogleAuthError as error:
        print(f"google-auth: {error}", file=sys.stderr)
        return 1
    print("ok", int(credentials.expiry.timestamp()) if credentials.expiry else "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
