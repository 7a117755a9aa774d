// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, a package of their own so that the sanitizer flags
// (`swift build --sanitize fuzzer --sanitize address`, which instruments the
// root package's modules too) never reach the normal build: Fuzz/run.sh
// builds it into its own scratch path, .build/fuzz. SwiftPM links libFuzzer's
// `main` because the targets have no main.swift and no @main.
// The dependency is named because a path dependency's identity is its folder's
// name, which differs between clones and worktrees.
let package = Package(
    name: "ringd-fuzz",
    dependencies: [.package(name: "ringd", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "SignalProtocol", package: "ringd")]),
        .executableTarget(
            name: "fuzz-http",
            dependencies: ["FuzzSupport", .product(name: "SignalProtocol", package: "ringd")]),
        .executableTarget(
            name: "fuzz-websocket",
            dependencies: ["FuzzSupport", .product(name: "SignalProtocol", package: "ringd")]),
        .executableTarget(
            name: "fuzz-websocket-deflate",
            dependencies: [
                "FuzzSupport", .product(name: "SignalProtocol", package: "ringd"),
                .product(name: "SignalCompression", package: "ringd"),
            ]),
        .executableTarget(
            name: "fuzz-json",
            dependencies: ["FuzzSupport", .product(name: "SignalProtocol", package: "ringd")]),
        .executableTarget(
            name: "fuzz-client-frame",
            dependencies: ["FuzzSupport", .product(name: "SignalProtocol", package: "ringd")]),
        .executableTarget(
            name: "fuzz-config",
            dependencies: ["FuzzSupport", .product(name: "SignalServer", package: "ringd")]),
    ]
)
