// JOSE's public API hands out and takes StrictJSON's types (`JOSEHeader.json`,
// `JWTClaims.json`, `JWK(json:)`, `JWKSet(json:)`), so a client of JOSE gets them with
// `import JOSE` alone, as it did when they lived here.
@_exported import StrictJSON
