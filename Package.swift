// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ringd",
    // RingKit's Apple builds: Synchronization's Mutex needs these.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "ringd", targets: ["ringd"]),
        .executable(name: "ws-echo", targets: ["ws-echo"]),
        .executable(name: "ringctl", targets: ["ringctl"]),
        .executable(name: "ringbench", targets: ["ringbench"]),
        .library(name: "SignalProtocol", targets: ["SignalProtocol"]),
        .library(name: "SignalCompression", targets: ["SignalCompression"]),
        .library(name: "SignalCore", targets: ["SignalCore"]),
        .library(name: "SignalServer", targets: ["SignalServer"]),
        .library(name: "SignalClient", targets: ["SignalClient"]),
        .library(name: "RingKit", targets: ["RingKit"]),
        .library(name: "RingdTesting", targets: ["RingdTesting"]),
        .library(name: "RingCallKit", targets: ["RingCallKit"]),
    ],
    targets: [
        .target(name: "CShim", path: "Sources/CShim"),
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            path: "Sources/CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibpq",
            path: "Sources/CLibpq",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(name: "SignalProtocol", path: "Sources/Protocol"),
        .target(name: "SignalSystem", dependencies: ["CShim"], path: "Sources/SignalSystem"),
        .target(
            name: "SignalCompression", dependencies: ["SignalProtocol", "CZlib"], path: "Sources/SignalCompression"),
        .target(
            name: "SignalCrypto", dependencies: ["SignalProtocol", "SignalSystem", "COpenSSL"],
            path: "Sources/SignalCrypto"),
        .target(name: "SignalReactor", dependencies: ["SignalSystem", "CShim"], path: "Sources/SignalReactor"),
        // The call machine and the other pure decisions: no sockets, files,
        // store or reactor (LayeringTests checks its imports).
        .target(name: "SignalCore", dependencies: ["SignalProtocol", "SignalSystem"], path: "Sources/SignalCore"),
        .target(name: "PhoneAssets", path: "Sources/PhoneAssets", resources: [.embedInCode("web")]),
        .target(
            name: "SignalServer",
            dependencies: [
                "SignalProtocol", "SignalCore", "SignalCompression", "SignalSystem", "SignalCrypto", "SignalReactor",
                "CShim", "CSQLite", "CSystemd", "CCurl", "CLibpq", "PhoneAssets",
            ],
            path: "Sources/SignalServer"
        ),
        .target(
            name: "SignalClient",
            dependencies: [
                "SignalProtocol", "SignalCompression", "SignalSystem", "SignalCrypto", "SignalReactor", "CShim",
            ],
            path: "Sources/SignalClient"),
        // The app client: portable (SignalProtocol and Foundation); on Linux
        // its transport is SignalClient's WebSocket, on Apple platforms URLSession's.
        .target(
            name: "RingKit",
            dependencies: ["SignalProtocol", .target(name: "SignalClient", condition: .when(platforms: [.linux]))],
            path: "Sources/RingKit"),
        .target(name: "RingdTesting", dependencies: ["SignalClient"], path: "Sources/RingdTesting"),
        // The PushKit → CallKit coordinator: a pure state machine over the
        // wire types; its Apple adapters (Sources/RingCallKit/Apple) compile
        // only where CallKit and PushKit exist.
        .target(name: "RingCallKit", dependencies: ["SignalProtocol", "RingKit"], path: "Sources/RingCallKit"),
        .executableTarget(name: "ringd", dependencies: ["SignalServer", "SignalCore"], path: "Sources/ringd"),
        .executableTarget(
            name: "ws-echo", dependencies: ["SignalServer", "SignalProtocol", "SignalSystem"], path: "Sources/ws-echo"),
        .executableTarget(
            name: "ringctl", dependencies: ["SignalClient", "SignalProtocol", "SignalSystem", "SignalCrypto"],
            path: "Sources/ringctl"),
        .executableTarget(
            name: "ringbench",
            dependencies: ["SignalProtocol", "SignalCompression", "SignalSystem", "SignalCrypto", "CShim"],
            path: "Sources/ringbench"),
        .target(name: "TestSupport", dependencies: ["SignalCrypto", "CShim"], path: "Tests/TestSupport"),
        .target(
            name: "CoreTestSupport", dependencies: ["SignalCore", "SignalProtocol"], path: "Tests/CoreTestSupport"),
        .testTarget(name: "SignalProtocolTests", dependencies: ["SignalProtocol", "TestSupport"]),
        .testTarget(name: "SignalSystemTests", dependencies: ["SignalSystem", "TestSupport"]),
        .testTarget(name: "SignalCryptoTests", dependencies: ["SignalCrypto", "SignalProtocol", "TestSupport"]),
        .testTarget(
            name: "SignalCoreTests",
            dependencies: ["SignalCore", "CoreTestSupport", "SignalProtocol", "SignalSystem", "TestSupport"]),
        .testTarget(name: "SignalReactorTests", dependencies: ["SignalReactor", "TestSupport"]),
        .testTarget(
            name: "SignalCompressionTests",
            dependencies: ["SignalCompression", "SignalProtocol", "CZlib", "TestSupport"]),
        .testTarget(
            name: "SignalClientTests",
            dependencies: [
                "SignalClient", "SignalServer", "SignalCore", "SignalCompression", "SignalProtocol", "SignalSystem",
                "SignalCrypto", "TestSupport",
            ]),
        .testTarget(
            name: "SignalServerTests",
            dependencies: [
                "SignalServer", "SignalCore", "CoreTestSupport", "SignalClient", "SignalCompression", "SignalProtocol",
                "SignalSystem",
                "SignalCrypto", "SignalReactor", "CShim", "TestSupport",
            ]),
        .testTarget(name: "RingCallKitTests", dependencies: ["RingCallKit", "SignalProtocol"]),
        .testTarget(name: "RingKitTests", dependencies: ["RingKit", "SignalClient", "TestSupport"]),
        .testTarget(
            name: "RingingExample", dependencies: ["RingdTesting", "SignalClient", "SignalProtocol"],
            path: "examples/swift"),
    ]
)
