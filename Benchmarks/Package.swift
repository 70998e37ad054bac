// swift-tools-version: 6.2
import PackageDescription

// What measures (docs/decisions.md, "The shape of the package"): the benchmarks, a package of their own so that
// a package depending on authkit resolves and builds none of them. They use authkit's library
// products like any other program; scripts/bench-* build them in release mode.
let package = Package(
    name: "authkit-benchmarks",
    products: [
        .executable(name: "jose-benchmark", targets: ["JOSEBenchmark"]),
        .executable(name: "store-lookup", targets: ["StoreLookup"]),
    ],
    dependencies: [
        .package(name: "authkit", path: ".."),
    ],
    targets: [
        // libcrypto for the in-process reference loop (what `openssl speed` times).
        .systemLibrary(name: "CLibCrypto", path: "CLibCrypto", providers: [.apt(["libssl-dev"])]),
        // id_token verifications per second through JOSE next to OpenSSL's own rate. Its keys
        // and tokens come from the test peers' Python (JOSEBenchmark/make_cases.py).
        .executableTarget(
            name: "JOSEBenchmark",
            dependencies: [.product(name: "JOSE", package: "authkit"), "CLibCrypto"],
            path: "JOSEBenchmark",
            exclude: ["make_cases.py"]),
        // One account's record looked up through SecretStore as a whole process (vs `secret-tool lookup`).
        .executableTarget(
            name: "StoreLookup", dependencies: [.product(name: "SecretStore", package: "authkit")], path: "StoreLookup"),
    ]
)
