#!/usr/bin/env python3
"""AWS on 127.0.0.1 for the `credential aws` tests: moto in server mode (STS, S3 and the rest
of its services) behind one check moto does not make — `AssumeRoleWithWebIdentity` is answered
only for a WebIdentityToken that is the OIDC test provider's live id_token for --audience;
anything else gets STS's own `InvalidIdentityToken` error. moto does not check the signatures
of the signed requests that follow (S3 with the temporary credentials), as no AWS stand-in can.

With --expiration, every answer claims that expiry instead of moto's (a misconfigured or
hostile STS: `9999-12-31T23:59:59Z`).

Control API: GET /_test/sts lists each AssumeRoleWithWebIdentity (role, whether the token was
accepted) and the credentials STS issued, for the leak scan (the test never prints them).
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import re
import sys
import threading
import urllib.parse
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import resource_auth  # noqa: E402

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app  # noqa: E402

LOCK = threading.Lock()
STATE = {"provider": "", "audience": "", "expiration": "", "calls": [], "issued": []}
REFUSED = (b'<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
           b"<Code>InvalidIdentityToken</Code><Message>The web identity token is not a live token of the trusted provider"
           b"</Message></Error><RequestId>authkit-test</RequestId></ErrorResponse>")


class WebIdentityCheck:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/_test/sts":
            import json
            with LOCK:
                body = json.dumps({"calls": STATE["calls"], "issued": STATE["issued"]}).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        if environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(raw)
        form = urllib.parse.parse_qs(raw.decode("latin-1"))
        if form.get("Action", [""])[0] != "AssumeRoleWithWebIdentity":
            return self.app(environ, start_response)
        token = form.get("WebIdentityToken", [""])[0]
        accepted = resource_auth.live_id_token(STATE["provider"], token, STATE["audience"])
        with LOCK:
            STATE["calls"].append({"role": form.get("RoleArn", [""])[0], "accepted": accepted})
        if not accepted:
            start_response("400 Bad Request", [("Content-Type", "text/xml"), ("Content-Length", str(len(REFUSED)))])
            return [REFUSED]
        captured = {}

        def capture(status, headers, exc_info=None):
            captured["status"], captured["headers"] = status, headers
            return lambda data: None

        body = b"".join(self.app(environ, capture))
        if STATE["expiration"]:
            # A test's (or a hostile) STS: credentials that claim to live until then.
            body = re.sub(rb"<Expiration>[^<]*</Expiration>", b"<Expiration>" + STATE["expiration"].encode() + b"</Expiration>", body)
        headers = [(name, value) for name, value in captured["headers"] if name.lower() != "content-length"]
        start_response(captured["status"], headers + [("Content-Length", str(len(body)))])
        try:
            root = ElementTree.fromstring(body)
            for element in root.iter():
                if element.tag.endswith(("AccessKeyId", "SecretAccessKey", "SessionToken")) and element.text:
                    with LOCK:
                        STATE["issued"].append({"kind": element.tag.split("}")[-1], "value": element.text})
        except ElementTree.ParseError:
            pass
        return [body]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    peerlib.add_common_arguments(parser)
    parser.add_argument("--accept-tokens-from", required=True, metavar="URL", help="the OIDC test provider's base URL")
    parser.add_argument("--audience", required=True, help="the client id the id_token must be for")
    parser.add_argument("--expiration", default="", help="the Expiration every issued credential claims (RFC 3339)")
    args = parser.parse_args()
    peerlib.setup_logging(args.log)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    STATE["provider"] = args.accept_tokens_from.rstrip("/")
    STATE["audience"] = args.audience
    STATE["expiration"] = args.expiration
    app = WebIdentityCheck(DomainDispatcherApplication(create_backend_app))
    peer = peerlib.Peer("aws", app, args.port)
    return peer.serve({"endpoint": peer.base_url}, watch_stdin=not args.ignore_stdin)


if __name__ == "__main__":
    sys.exit(main())
