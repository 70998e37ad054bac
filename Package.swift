// swift-tools-version: 6.2
import PackageDescription

// Layers (docs/architecture.md, "Layers"): C doors, StrictJSON, ChildProcess → JOSE, Age → SecretStore → AuthKit →
// authkit. scripts/check-layers keeps every target's imports to what is declared here.
// Data flows one way; nothing below the `authkit` executable prints.
let package = Package(
    name: "authkit",
    products: [
        .library(name: "AuthKit", targets: ["AuthKit"]),
        .library(name: "JOSE", targets: ["JOSE"]),
        .library(name: "SecretStore", targets: ["SecretStore"]),
        .executable(name: "authkit", targets: ["AuthKitCLI"]),
        .executable(name: "authkit-example", targets: ["SharedSessionExample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // System libraries. Debian: libssl-dev (OpenSSL 3).
        // OpenSSL 3's headers. libcrypto itself is not linked: CCryptoLoader opens it on first
        // use (docs/decisions.md, "Why libcrypto is opened on first use").
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "CCryptoLoader", dependencies: ["COpenSSL"], path: "Sources/CCryptoLoader",
            linkerSettings: [.linkedLibrary("dl")]),
        // libsecret (and GIO, GObject, GLib), opened with dlopen on first use of the Secret
        // Service, never at start-up; its declarations are our own, checked against the real
        // headers by scripts/generate-doors, so building needs no -dev package.
        .target(name: "CLibSecret", path: "Sources/CLibSecret", linkerSettings: [.linkedLibrary("dl")]),
        // libcurl, loaded with dlopen on the first HTTP request (never at start-up): see
        // docs/decisions.md, "Why libcurl through dlopen". Build needs <curl/curl.h> only. Its table
        // of libcurl functions (curl_door.c) is written by scripts/generate-doors, like the other doors.
        .target(name: "CCurl", path: "Sources/CCurl", linkerSettings: [.linkedLibrary("dl")]),

        // Strict RFC 8259 JSON (parse, serialize) for JOSE and SecretStore: Swift stdlib only, no
        // Foundation (start-up time counts), so both siblings can share it without importing each other.
        .target(name: "StrictJSON"),

        // The one way to start another program: posix_spawn with a clean signal mask and
        // dispositions, no inherited descriptors. Used by the browser launcher, `exec`, `setup`
        // and the tests' process runner alike.
        .target(name: "CChildProcess", path: "Sources/CChildProcess"),
        .target(name: "ChildProcess", dependencies: ["CChildProcess"]),

        // JWS/JWK parsing and signature verification over OpenSSL EVP. No networking, no OAuth.
        .target(name: "JOSE", dependencies: ["COpenSSL", "CCryptoLoader", "StrictJSON"]),

        // keyctl(2) and add_key(2) for the kernel-keyring store (no library: glibc has no
        // wrappers, and Swift cannot call the variadic syscall(2)).
        .target(name: "CKernelKeyring", path: "Sources/CKernelKeyring"),

        // The age v1 format (C2SP age: X25519 and scrypt recipients, STREAM, armor) over
        // libcrypto, opened on first use through CCryptoLoader like JOSE's. Knows nothing of
        // stores or tokens.
        .target(name: "Age", dependencies: ["COpenSSL", "CCryptoLoader"]),

        // The freedesktop Secret Service through libsecret, the kernel's persistent keyring,
        // the age-encrypted files (through Age) and the explicit plain-file store.
        .target(name: "SecretStore", dependencies: ["Age", "CLibSecret", "CKernelKeyring", "StrictJSON", "COpenSSL", "CCryptoLoader"]),

        // What the lean client (Lean/, scripts/build-lean) shares with authkit: the agent's
        // socket and exchange, the fast paths' options, the rules a token from the agent must
        // meet. Swift standard library and libc only, no Foundation: scripts/build-lean also
        // compiles these sources, with StrictJSON's, as Embedded Swift.
        .target(name: "AuthKitCore", dependencies: ["StrictJSON"]),

        // prctl(2) for the agent, which holds tokens in memory: no core dump, no ptrace by the
        // user's other processes (Swift cannot call the variadic prctl).
        .target(name: "CProcessGuard", path: "Sources/CProcessGuard"),

        // The library other tools import: discovery, PKCE, loopback receiver, token endpoint,
        // id_token validation with a JWKS cache, the shared session, Graph user search.
        .target(
            name: "AuthKit",
            dependencies: [
                "AuthKitCore",
                "StrictJSON",
                "JOSE",
                "SecretStore",
                "ChildProcess",
                "CProcessGuard",
                "CCurl",
                "COpenSSL",
                "CCryptoLoader",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // The `authkit` command: parsing, printing, exit codes.
        .executableTarget(
            name: "AuthKitCLI",
            dependencies: [
                "AuthKit",
                "AuthKitCore",
                "JOSE",
                "SecretStore",
                "Age",
                "StrictJSON",
                "ChildProcess",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // README, "Using authkit from another Swift tool": a second, separate program that shares
        // the sign-in by naming the group. The demo and the command tests run it; a test keeps
        // the README's copy identical to this source.
        .executableTarget(name: "SharedSessionExample", dependencies: ["AuthKit"], path: "Examples/SharedSessionExample"),

        // The benchmarks are a package of their own: Benchmarks/Package.swift.

        // Shared test helpers: fixture paths, subprocess runner, private Secret Service, test peers,
        // run-time test signing keys (OpenSSL). Key generation and signing are for tests only, so
        // they call libcrypto linked plainly, not through the shipped door (CCryptoLoader).
        .target(
            name: "TestSupport", dependencies: ["COpenSSL", "ChildProcess"], path: "Tests/TestSupport",
            linkerSettings: [.linkedLibrary("crypto")]),
        // A second, separate program using SecretStore, for the cross-process tests.
        .executableTarget(name: "SecretStoreProbe", dependencies: ["SecretStore"], path: "Tests/SecretStoreProbe"),

        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON"]),
        .testTarget(name: "AuthKitCoreTests", dependencies: ["AuthKitCore"]),
        .testTarget(name: "ChildProcessTests", dependencies: ["ChildProcess"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "TestSupport"]),
        .testTarget(name: "AgeTests", dependencies: ["Age", "TestSupport"]),
        .testTarget(name: "SecretStoreTests", dependencies: ["SecretStore", "Age", "TestSupport"]),
        .testTarget(
            name: "AuthKitTests",
            dependencies: [
                "AuthKit",
                "AuthKitCore",
                "SecretStore",
                "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "AuthKitCLITests", dependencies: ["TestSupport", "AuthKitCLI", "AuthKit", "AuthKitCore"]),
    ]
)
