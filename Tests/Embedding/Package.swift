// swift-tools-version: 6.2
import PackageDescription

// A program that embeds authkit's JOSE library AND uses OpenSSL's libcrypto itself, as a tool
// that already links OpenSSL would. scripts/check-embedding builds and runs it, and
// checks with nm that its own EVP_* calls are bound to libcrypto, not to authkit's loader.
let package = Package(
    name: "EmbeddingCheck",
    dependencies: [.package(name: "authkit", path: "../..")],
    targets: [
        .systemLibrary(name: "CSystemCrypto", path: "Sources/CSystemCrypto", pkgConfig: "libcrypto"),
        .executableTarget(
            name: "EmbeddingCheck",
            dependencies: ["CSystemCrypto", .product(name: "JOSE", package: "authkit")]
        ),
    ]
)
