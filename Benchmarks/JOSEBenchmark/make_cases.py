"""The JOSE benchmark's keys and tokens, made with the test provider's own key code
(Tests/Peers/oidc_provider.py): per algorithm, three keys in a set (a provider publishes several
during rotation) and a realistic Microsoft v2.0 id_token (900 bytes of claims) signed by the
second one, plus that key's private PEM for the benchmark's in-process OpenSSL reference.
Writes one JSON document to standard output."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Peers"))
from joserfc import jws  # noqa: E402
from oidc_provider import generate_key  # noqa: E402

NONCE = "8b7c0e4f-6b2d-4b77-9c84-1c9a0d6f3e21.637954801234567890"


def claims(now: int) -> str:
    return (
        '{"aud":"6731de76-14a6-49ae-97bc-6eba6914391e","iss":"https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0",'
        f'"iat":{now - 60},"nbf":{now - 60},"exp":{now + 3540},"aio":"AWQAm/8UAAAAJ3YeCzxq9Cq5KqQeHhJgK+kUSKq0W4ndwBq0m3zh0V0Rk2J5gxYlzm1C'
        '7dBTCA7D3q7sx0o0vHZ2UBTp8Sj5eEFE2cC7O4hDHXn+ZPaLcNgmx6IRLM6uNH7VhCe0Ys8m","email":"AdeleV@contoso.onmicrosoft.com",'
        f'"family_name":"Vance","given_name":"Adele","name":"Adele Vance","nonce":"{NONCE}",'
        '"oid":"00000000-0000-0000-66f3-3332eca7ea81","preferred_username":"AdeleV@contoso.onmicrosoft.com",'
        '"rh":"0.AXEAv4j5cvGGr0GRqy180BHbR3beMWemFK5Jl7xuummUFDlxAEs.","roles":["Directory.Reader","Sites.Reader"],'
        '"sid":"0b1e9a7e-1cf3-4d6e-9f51-4d0a9b0f3c2a","sub":"AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ","tid":"72f988bf-86f1-41af-91ab-2d7cd011db47",'
        '"uti":"fqiBqXLPj0eQa82S-IYFAA","ver":"2.0","xms_tpl":"en"}'
    )


def main() -> None:
    now = int(time.time())
    payload = claims(now)
    cases = []
    for alg in ("RS256", "ES256", "EdDSA"):
        keys = [generate_key(alg, kid_prefix="bench") for _ in range(3)]
        signer = keys[1]
        header = {"typ": "JWT", "alg": alg, "kid": signer.kid}
        token = jws.serialize_compact(header, payload.encode(), signer.key, algorithms=[alg])
        cases.append({
            "alg": alg,
            "token": token,
            "jwks": {"keys": [key.public_jwk() for key in keys]},
            "private_key_pem": signer.key.as_pem(private=True).decode(),
            "payload_bytes": len(payload.encode()),
        })
    json.dump({"now": now, "nonce": NONCE, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
