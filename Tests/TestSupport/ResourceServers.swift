import Foundation

/// `Tests/Peers/git_server.py`: git smart HTTP (`git http-backend`) that accepts only the
/// provider's live access tokens.
public final class GitTestServer: Sendable {
    public let process: PeerProcess
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    /// The directory of bare repositories it serves.
    public let root: URL

    /// `resource`: accept only tokens issued for it (RFC 8707), as an API that checks `aud` does.
    public init(acceptTokensFrom provider: OIDCTestProvider, root: URL, resource: String? = nil) throws {
        self.root = root
        process = try PeerProcess(
            name: "git", script: "git_server.py",
            arguments: ["--root", root.path, "--accept-tokens-from", provider.baseURL.absoluteString]
                + (resource.map { ["--resource", $0] } ?? []))
        baseURL = process.baseURL
    }

    public func stop() { process.stop() }

    /// The next `count` requests are answered 401 whatever their token (a server that no
    /// longer takes it), so git calls its helpers' `erase`.
    public func rejectNext(_ count: Int = 1) async throws {
        try await process.control("POST", "/_test/reject", json: ["count": .number(Double(count))])
    }

    /// (method, path, status, user) of every git request so far.
    public func requests() async throws -> [(method: String, path: String, status: Int, user: String?)] {
        try await process.control("GET", "/_test/requests")["requests"].array.map {
            ($0["method"].string ?? "", $0["path"].string ?? "", $0["status"].int ?? 0, $0["user"].string)
        }
    }
}

/// `Tests/Peers/kube_apiserver.py`: a Kubernetes API server stand-in over TLS that accepts the
/// provider's live access tokens (and, with `idTokenAudience`, its unexpired id_tokens).
public final class KubeAPIServerStandIn: Sendable {
    public let process: PeerProcess
    /// `https://127.0.0.1:PORT`.
    public let server: String
    /// The PEM certificate kubectl must trust (the cluster's certificate-authority).
    public let certificate: URL

    public init(acceptTokensFrom provider: OIDCTestProvider, idTokenAudience: String?, directory: URL) throws {
        let certificate = directory.appendingPathComponent("apiserver.crt"), key = directory.appendingPathComponent("apiserver.key")
        let openssl = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.path, "-out", certificate.path, "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], timeout: 60)
        guard openssl.status == 0 else { throw HarnessError("openssl could not make a test certificate: \(openssl.stderr)") }
        var arguments = ["--cert", certificate.path, "--key", key.path, "--accept-tokens-from", provider.baseURL.absoluteString]
        if let idTokenAudience { arguments += ["--id-token-audience", idTokenAudience] }
        process = try PeerProcess(name: "kube-apiserver", script: "kube_apiserver.py", arguments: arguments)
        server = process.ready["server"].string ?? ""
        self.certificate = certificate
    }

    public func stop() { process.stop() }
}

/// `Tests/Peers/docker_engine.py`: a Docker engine API stand-in on a unix socket that records
/// the registry credentials the docker CLI sends it (never storing or running an image).
public final class DockerEngineStandIn: Sendable {
    public let process: PeerProcess
    /// `unix:///…/docker.sock`, for DOCKER_HOST.
    public let host: String
    private let recordFile: URL

    public init(acceptTokensFrom provider: OIDCTestProvider, privateRegistries: [String], directory: URL) throws {
        let socket = directory.appendingPathComponent("docker.sock").path
        recordFile = directory.appendingPathComponent("docker-requests.jsonl")
        var arguments = ["--socket", socket, "--accept-tokens-from", provider.baseURL.absoluteString, "--record", recordFile.path]
        for registry in privateRegistries { arguments += ["--private", registry] }
        process = try PeerProcess(name: "docker-engine", script: "docker_engine.py", arguments: arguments)
        host = "unix://" + socket
    }

    public func stop() { process.stop() }

    /// What the engine was sent so far: path, registry, user name, whether the password was
    /// a live token.
    public func requests() throws -> [(path: String, registry: String, user: String?, live: Bool)] {
        let text = (try? String(contentsOf: recordFile, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw HarnessError("docker-engine recorded a line that is not an object")
            }
            return (
                object["path"] as? String ?? "", object["registry"] as? String ?? "", object["user"] as? String,
                object["live"] as? Bool ?? false
            )
        }
    }
}

/// `Tests/Peers/registry_server.py`: a container registry (distribution API v2, plain http on
/// 127.0.0.1) whose repositories under `privateRepositories` take only the provider's live
/// access tokens.
public final class RegistryStandIn: Sendable {
    public let process: PeerProcess
    /// `127.0.0.1:PORT`, as podman and skopeo name the registry.
    public let registry: String

    public init(acceptTokensFrom provider: OIDCTestProvider, privateRepositories: [String]) throws {
        process = try PeerProcess(
            name: "registry", script: "registry_server.py",
            arguments: ["--accept-tokens-from", provider.baseURL.absoluteString] + privateRepositories.flatMap { ["--private", $0] })
        registry = "\(process.baseURL.host ?? "127.0.0.1"):\(process.baseURL.port ?? 0)"
    }

    public func stop() { process.stop() }

    /// (method, path, status, user, live) of every request so far (never a token).
    public func requests() async throws -> [(method: String, path: String, status: Int, user: String?, live: Bool)] {
        try await process.control("GET", "/_test/requests")["requests"].array.map {
            ($0["method"].string ?? "", $0["path"].string ?? "", $0["status"].int ?? 0, $0["user"].string, $0["live"].bool ?? false)
        }
    }
}

/// `Tests/Peers/cargo_registry.py`: a cargo sparse registry on 127.0.0.1 that needs the
/// provider's live access token (as `Bearer`) for everything, holding the crate `authkit-probe`.
public final class CargoRegistryStandIn: Sendable {
    public let process: PeerProcess
    /// `sparse+http://127.0.0.1:PORT/index/`.
    public let index: String

    public init(acceptTokensFrom provider: OIDCTestProvider) throws {
        process = try PeerProcess(
            name: "cargo-registry", script: "cargo_registry.py", arguments: ["--accept-tokens-from", provider.baseURL.absoluteString])
        index = "sparse+" + process.baseURL.absoluteString + "/index/"
    }

    public func stop() { process.stop() }

    /// (path, status, live, scheme) of every request so far (never a token).
    public func requests() async throws -> [(path: String, status: Int, live: Bool, scheme: String?)] {
        try await process.control("GET", "/_test/requests")["requests"].array.map {
            ($0["path"].string ?? "", $0["status"].int ?? 0, $0["live"].bool ?? false, $0["scheme"].string)
        }
    }
}

/// `Tests/Peers/aws_sts.py`: moto in server mode (STS, S3 …) that answers
/// AssumeRoleWithWebIdentity only for the provider's live id_tokens for `audience`.
public final class AWSStandIn: Sendable {
    public let process: PeerProcess
    /// `http://127.0.0.1:PORT`, for AWS_ENDPOINT_URL.
    public let endpoint: String

    /// `expiration`: the expiry every credential claims (RFC 3339), instead of moto's.
    public init(acceptTokensFrom provider: OIDCTestProvider, audience: String, expiration: String? = nil) throws {
        process = try PeerProcess(
            name: "aws", script: "aws_sts.py",
            arguments: ["--accept-tokens-from", provider.baseURL.absoluteString, "--audience", audience]
                + (expiration.map { ["--expiration", $0] } ?? []),
            readyTimeout: 60)
        endpoint = process.baseURL.absoluteString
    }

    public func stop() { process.stop() }

    /// Each AssumeRoleWithWebIdentity: the role, and whether its token was accepted.
    public func calls() async throws -> [(role: String, accepted: Bool)] {
        try await process.control("GET", "/_test/sts")["calls"].array.map { ($0["role"].string ?? "", $0["accepted"].bool ?? false) }
    }

    /// Every credential value STS issued (for the leak scan; never printed).
    public func issued() async throws -> [(kind: String, value: String)] {
        try await process.control("GET", "/_test/sts")["issued"].array.map { ($0["kind"].string ?? "", $0["value"].string ?? "") }
    }
}

/// `Tests/Peers/google_sts.py`: Google's STS token exchange, accepting only id_tokens whose
/// signature checks against the provider's JWKS.
public final class GoogleSTSStandIn: Sendable {
    public let process: PeerProcess
    /// `http://127.0.0.1:PORT/v1/token`.
    public let tokenURL: String

    public init(acceptTokensFrom provider: OIDCTestProvider, clientID: String, audience: String) throws {
        process = try PeerProcess(
            name: "google-sts", script: "google_sts.py",
            arguments: ["--accept-tokens-from", provider.baseURL.absoluteString, "--client-id", clientID, "--audience", audience])
        tokenURL = process.baseURL.absoluteString + "/v1/token"
    }

    public func stop() { process.stop() }

    /// (accepted, the access token issued — for the leak scan, never printed).
    public func exchanges() async throws -> [(accepted: Bool, accessToken: String?)] {
        try await process.control("GET", "/_test/exchanges")["exchanges"].array.map {
            ($0["accepted"].bool ?? false, $0["access_token"].string)
        }
    }
}
