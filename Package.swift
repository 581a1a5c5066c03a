// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .enableUpcomingFeature("MemberImportVisibility")]

// The shipped tools export no symbols: a Swift executable on Linux exports every one of its symbols (42,000 for
// coffer), and the runtime's start-up (`dladdr` in the backtracer's set-up) searches them on every run, a tenth of
// a `coffer code`'s time. Nothing loads these executables as libraries. Release builds only (tests link them).
#if os(Linux)
let leanStart: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
#else
let leanStart: [LinkerSetting] = []
#endif

// Apple builds of the library carry its privacy manifest (required-reason APIs; nothing collected or tracked).
#if canImport(Darwin)
let privacyManifest: (resources: [Resource], exclude: [String]) = ([.copy("PrivacyInfo.xcprivacy")], [])
#else
let privacyManifest: (resources: [Resource], exclude: [String]) = ([], ["PrivacyInfo.xcprivacy"])
#endif

// Image code is optimised in debug builds too: the reader walks every pixel of an image many times, and unoptimised
// it is fifty times slower, which made its tests the longest in the suite.
let optimisedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "CofferKit", targets: ["CofferKit"]),
        .executable(name: "coffer", targets: ["coffer"]),
        .executable(name: "coffer-full", targets: ["coffer-full"]),
        .executable(name: "coffer-bench", targets: ["coffer-bench"]),
        .executable(name: "coffer-server", targets: ["coffer-server"]),
        .library(name: "CofferServer", targets: ["CofferServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Already resolved through async-http-client; named for the sync client's key pinning (NIOSSL).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Already resolved through Hummingbird; named for the server's HTTP types and channel handlers it uses itself.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // `swift package generate-documentation --target CofferKit` (the DocC catalogue in Sources/CofferKit).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Operating-system seams: file modes, atomic writes, file locks, terminals, signals, processes, run-time loading.
        // Nothing above this imports the C library (Glibc, Musl, Darwin); HouseRulesTests checks it (benches aside).
        .target(name: "CofferPlatform", dependencies: ["CCofferPlatform"], swiftSettings: strict),
        // The one C call Swift cannot make (prctl is variadic).
        .target(name: "CCofferPlatform"),
        // The agent's request/response protocol (docs/FORMAT.md §12): bytes only, no sockets, no keys.
        .target(name: "CofferAgentWire", swiftSettings: strict),
        // Argon2 (RFC 9106): the reference implementation, Debian's libargon2-dev.
        .systemLibrary(name: "CArgon2", path: "Sources/CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .target(
            name: "CofferCrypto",
            dependencies: [
                "CArgon2", "CofferPlatform",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "CofferOTP",
            dependencies: ["CofferCrypto", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // zlib for PNG's deflate (Debian's zlib1g-dev).
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .target(name: "CofferBarcode", dependencies: ["CZlib"], swiftSettings: strict),
        // Coffer's barcode reader: grey images in, symbology, payload bytes and corners out. Pure Swift on the
        // encoder's tables, no Foundation, so that it also builds as Embedded Swift for the web app's camera.
        .target(name: "CofferScan", dependencies: ["CofferBarcode"], swiftSettings: strict + optimisedInDebug),
        // JPEG through Debian's libjpeg62-turbo: a small C file, because libjpeg reports errors by longjmp.
        .target(name: "CCofferJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        // Image files for the reader: PNG (zlib) and JPEG (libjpeg-turbo) to luminance, sizes capped before decoding.
        .target(name: "CofferImage", dependencies: ["CofferScan", "CZlib", "CCofferJPEG"], swiftSettings: strict + optimisedInDebug),
        // libFuzzer entry point (built with -DFUZZING); otherwise replays a corpus.
        .target(name: "FuzzSupport", swiftSettings: strict),
        .executableTarget(name: "FuzzBarcode", dependencies: ["CofferBarcode", "FuzzSupport"], swiftSettings: strict),
        .executableTarget(name: "FuzzImport", dependencies: ["CofferInterop", "FuzzSupport"], swiftSettings: strict),
        .executableTarget(name: "FuzzItemContent", dependencies: ["CofferModel", "FuzzSupport"], swiftSettings: strict),
        .executableTarget(name: "FuzzAgentWire", dependencies: ["CofferAgentWire", "FuzzSupport"], swiftSettings: strict),
        .executableTarget(name: "FuzzStellarXDR", dependencies: ["CofferStellar", "CofferCrypto", "FuzzSupport"], swiftSettings: strict),
        .executableTarget(name: "FuzzScan", dependencies: ["CofferScan", "CofferImage", "FuzzSupport"], swiftSettings: strict),
        .executableTarget(name: "FuzzWire", dependencies: ["CofferSyncAPI", "CofferCrypto", "FuzzSupport"], swiftSettings: strict),
        // Places and the on-cue rules: geometry, geohash cells, region choice, surfacing, tiles and importers.
        // Pure Swift and Foundation: no SQL, HTTP or terminal.
        .target(name: "CofferPlaces", dependencies: ["CofferCrypto"], swiftSettings: strict),
        // Stellar transaction envelopes: an XDR reader written from the Stellar XDR definitions, the summary a signer
        // sees, and the hash and signature a PIN-held key adds (docs/FORMAT.md "Stellar transactions").
        .target(
            name: "CofferStellar",
            dependencies: ["CofferModel", "CofferCrypto", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .target(
            name: "CofferModel",
            dependencies: ["CofferCrypto", "CofferOTP", "CofferBarcode"],
            swiftSettings: strict),
        // Import from and export to other apps' formats.
        .target(
            name: "CofferInterop",
            dependencies: [
                "CofferModel", "CofferOTP", "CofferCrypto", "CofferBarcode", "CofferPlatform", "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // Reading other apps' SQLite databases (Google and Microsoft Authenticator).
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        // Device key stores: owner-only files, the Secret Service (libsecret, loaded at run time), the Apple keychain,
        // the TPM (tpm2-tss, loaded at run time).
        .target(
            name: "CofferKeystore",
            dependencies: ["CofferCrypto", "CofferPlatform", .target(name: "CTSS2", condition: .when(platforms: [.linux]))],
            swiftSettings: strict),
        // tpm2-tss's headers (Debian's libtss2-dev): types and constants only, nothing linked.
        .systemLibrary(name: "CTSS2", path: "Sources/CTSS2", providers: [.apt(["libtss2-dev"])]),
        .target(
            name: "CofferVault",
            dependencies: [
                "CofferCrypto", "CofferModel", "CofferOTP", "CofferPlatform",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's own binding calls, for the rows written per item (CachedStatements.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "CofferLogging",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "CofferKit",
            dependencies: [
                "CofferVault", "CofferKeystore", "CofferModel", "CofferOTP", "CofferCrypto", "CofferBarcode",
                "CofferInterop", "CofferLogging", "CofferPlaces", "CofferPlatform", "CofferAgentWire",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: privacyManifest.exclude,
            resources: privacyManifest.resources,
            swiftSettings: strict),
        // The agent process: holds unlocked passphrase-only vaults, serves the socket, locks on timers and signals.
        .target(
            name: "CofferAgent",
            dependencies: ["CofferKit", "CofferVault", "CofferKeystore", "CofferAgentWire", "CofferCrypto", "CofferPlatform"],
            swiftSettings: strict),
        // How a program's failures reach the user: one line, a hint, the exit code of the README's table. `coffer`,
        // `coffer-full` and `coffer-server` report through it.
        .target(
            name: "CofferReporting",
            dependencies: ["CofferPlatform", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),
        // The command line's shared part: options, output, errors, and the everyday commands `coffer` runs itself.
        .target(
            name: "CofferCLI",
            dependencies: [
                "CofferKit", "CofferLogging", "CofferPlatform", "CofferReporting", "CofferVault", "CofferKeystore", "CofferCrypto",
                "CofferAgentWire", "CofferInterop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // `coffer`: the everyday commands in a small process; the rest by becoming coffer-full.
        .executableTarget(name: "coffer", dependencies: ["CofferCLI"], swiftSettings: strict, linkerSettings: leanStart),
        // `coffer-full`: the whole command tree, with sync, places and the agent.
        .executableTarget(
            name: "coffer-full",
            dependencies: [
                "CofferCLI", "CofferKit", "CofferAgent", "CofferSync", "CofferCue", "CofferLogging", "CofferScan", "CofferImage",
                "CofferPlatform", "CofferStellar", "CofferAgentWire", "CofferBarcode", "CofferCrypto", "CofferInterop", "CofferKeystore",
                "CofferModel", "CofferReporting", "CofferSyncAPI", "CofferVault",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: leanStart),
        .executableTarget(
            name: "coffer-bench",
            dependencies: [
                "CofferKit", "CofferCrypto", "CofferVault", "CofferServer", "CofferServerStore", "CofferSync", "CofferSyncAPI", "CofferPlaces",
                "CofferScan", "CofferImage", "CofferPlatform", "CofferBarcode", "CofferKeystore", "CofferModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),

        // The sync wire format: requests, responses and the account key schedule shared by server and client.
        .target(
            name: "CofferSyncAPI",
            dependencies: ["CofferCrypto", "CofferPlaces", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // The server's storage: one protocol, an SQLite (GRDB) and a PostgreSQL (postgres-nio) implementation.
        .target(
            name: "CofferServerStore",
            dependencies: [
                "CofferSyncAPI", "CofferPlaces", "CofferCrypto", "CofferPlatform", "CofferLogging",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // The HTTP application (Hummingbird): accounts, tokens, item sync and the CardOnCue face.
        .target(
            name: "CofferServer",
            dependencies: [
                "CofferServerStore", "CofferSyncAPI", "CofferCrypto", "CofferLogging", "CofferPlatform", "CofferPlaces",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "coffer-server",
            dependencies: [
                "CofferServer", "CofferServerStore", "CofferLogging", "CofferPlatform", "CofferReporting", "CofferCrypto", "CofferPlaces",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: leanStart),
        // On cue at run time: position sources (gpsd, NMEA and lat,lon files) and desktop notifications (libdbus,
        // loaded when a notification is first shown).
        .target(
            name: "CofferCue",
            dependencies: [
                "CofferPlaces", "CofferKit", "CofferSync", "CofferSyncAPI", "CofferPlatform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // The sync client: talks to coffer-server over HTTP and merges with the local vault.
        .target(
            name: "CofferSync",
            dependencies: [
                "CofferKit", "CofferVault", "CofferSyncAPI", "CofferCrypto", "CofferModel", "CofferPlaces", "CofferPlatform", "CofferKeystore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),

        .target(name: "CofferTestSupport", path: "Tests/CofferTestSupport", swiftSettings: strict),
        // Loads the vector registers and reads back what a new thread inherits of them (VectorRegisterTests).
        .target(name: "CRegisterProbe", dependencies: ["CCofferPlatform"], path: "Tests/CRegisterProbe"),
        .testTarget(name: "CofferTestSupportTests", dependencies: ["CofferTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "CofferCryptoTests", dependencies: ["CofferCrypto", "CofferTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .testTarget(name: "CofferOTPTests", dependencies: ["CofferOTP", "CofferTestSupport"], swiftSettings: strict),
        .testTarget(name: "CofferBarcodeTests", dependencies: ["CofferBarcode", "CofferTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "CofferScanTests", dependencies: ["CofferScan", "CofferImage", "CofferBarcode", "CofferTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "CofferInteropTests",
            dependencies: [
                "CofferInterop", "CofferTestSupport", "CofferBarcode", "CofferCrypto", "CofferModel", "CofferOTP",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(
            name: "CofferPlacesTests", dependencies: ["CofferPlaces", "CofferTestSupport"], exclude: ["Fixtures"],
            swiftSettings: strict),
        .testTarget(
            name: "CofferModelTests", dependencies: ["CofferModel", "CofferTestSupport", "CofferBarcode", "CofferCrypto", "CofferOTP"],
            swiftSettings: strict),
        .testTarget(
            name: "CofferStellarTests",
            dependencies: [
                "CofferStellar", "CofferModel", "CofferCrypto", "CofferTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CofferVaultTests",
            dependencies: [
                "CofferVault", "CofferKeystore", "CofferKit", "CofferTestSupport", "CofferBarcode", "CofferCrypto", "CofferModel", "CofferOTP",
                "CofferPlaces", "CofferPlatform",
                .target(name: "CTSS2", condition: .when(platforms: [.linux])),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict,
            // The TPM tests assign the linked ESAPI functions to the types CofferKeystore loads them as (dlopen).
            linkerSettings: [
                .linkedLibrary("tss2-esys", .when(platforms: [.linux])), .linkedLibrary("tss2-tctildr", .when(platforms: [.linux])),
                .linkedLibrary("tss2-mu", .when(platforms: [.linux])),
            ]),
        // The in-process server, PostgreSQL and sync fixtures the server's and the sync client's suites share.
        .target(
            name: "CofferServerTestSupport",
            dependencies: [
                "CofferServer", "CofferServerStore", "CofferSyncAPI", "CofferKit", "CofferTestSupport", "CofferCrypto", "CofferVault",
                "CofferKeystore", "CofferModel",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CofferServerTestSupport",
            swiftSettings: strict),
        // The sync client against a live server: devices syncing, rotation, retries, manifests, pinning, and the hostile
        // server.
        .testTarget(
            name: "CofferSyncTests",
            dependencies: [
                "coffer-server", "CofferSync", "CofferSyncAPI", "CofferServer", "CofferServerStore", "CofferServerTestSupport", "CofferKit",
                "CofferTestSupport", "CofferCrypto", "CofferVault", "CofferKeystore", "CofferModel", "CofferOTP",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),
        // The facade: opening, lookups, codes, signing keys, places, and the getting-started article.
        .testTarget(
            name: "CofferKitTests",
            dependencies: [
                "CofferKit", "CofferVault", "CofferKeystore", "CofferTestSupport", "CofferCrypto", "CofferModel", "CofferOTP",
                "CofferPlaces", "CofferBarcode", "CofferPlatform",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CofferServerTests",
            dependencies: [
                "coffer-server", "CofferServer", "CofferServerStore", "CofferServerTestSupport", "CofferSyncAPI", "CofferSync", "CofferKit",
                "CofferTestSupport", "CofferCrypto", "CofferVault", "CofferKeystore", "CofferModel", "CofferPlaces", "CofferOTP", "CofferPlatform",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CofferAgentTests",
            dependencies: [
                "CofferAgent", "CofferAgentWire", "CofferKit", "CofferPlatform", "CofferTestSupport", "CofferCrypto", "CofferKeystore", "CofferVault",
                "CRegisterProbe",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "coffer", "coffer-full", "coffer-server", "CofferCLI", "CofferReporting", "CofferKit", "CofferTestSupport", "CofferPlatform",
                "CofferAgentWire",
                "CofferCue", "CofferBarcode", "CofferCrypto", "CofferKeystore", "CofferVault",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
    ]
)
