import CofferCrypto
import CofferPlatform
import CofferServerStore
import Crypto
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import JWTKit
import Logging
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Builds the `coffer-server` application: keys loaded (or created), store migrated, routes and middleware in place,
/// the purge job as a service when there is a maintenance store.
public enum CofferServerApplication {
    /// The router alone, for in-process tests and for `build`.
    public static func router(
        configuration: ServerConfiguration, store: any ServerStore, logger: Logger
    ) async throws -> Router<CofferRequestContext> {
        let core = try await makeCore(configuration: configuration, store: store, logger: logger)
        return router(core: core, configuration: configuration, logger: logger)
    }

    /// The whole application. `services` run beside it (a database client, for instance). The purge job runs
    /// through `maintenance`, which the routes never see; without one (benchmarks), there is no purge job and
    /// accounts are purged by `coffer-server purge`.
    public static func build(
        configuration: ServerConfiguration, store: any ServerStore, maintenance: (any MaintenanceStore)? = nil,
        services: [any Service] = [], logger: Logger
    ) async throws -> some ApplicationProtocol {
        let core = try await makeCore(configuration: configuration, store: store, logger: logger)
        let router = router(core: core, configuration: configuration, logger: logger)
        let server: HTTPServerBuilder
        switch (configuration.tlsCertificatePath, configuration.tlsKeyPath) {
        case (nil, nil):
            server = http1(configuration)
        case (let certificate?, let key?):
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(privateKey))
                server = try .tls(http1(configuration), tlsConfiguration: tls)
            } catch {
                throw ServerSetupError.tls("cannot load the certificate or key")
            }
        default:
            throw ServerSetupError.tls("give both a certificate and a key, or neither")
        }
        return Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "coffer-server"),
            services: services + (maintenance.map { [PurgeJob(store: $0, configuration: configuration, logger: logger)] } ?? []),
            eventLoopGroupProvider: .shared(EventLoopGroups.shared(threads: configuration.eventLoops)),
            logger: logger)
    }

    /// Loads or creates the server secret and signing keys, reads the Apple JWKS and migrates the store.
    static func makeCore(configuration: ServerConfiguration, store: any ServerStore, logger: Logger) async throws -> ServerCore {
        try WebVaultMiddleware<CofferRequestContext>.check(configuration)
        do {
            try PrivateFiles.createDirectory(configuration.dataDirectory)
        } catch {
            throw ServerSetupError.dataDirectory("cannot create \(configuration.dataDirectory) (mode 0700)")
        }
        let secret = try serverSecret(dataDirectory: configuration.dataDirectory)
        let keys = try SigningKeyStore.load(dataDirectory: configuration.dataDirectory, now: configuration.clock())
        var jwks: JWKS?
        if let path = configuration.appleJWKSPath {
            do {
                let bytes = try PrivateFiles.read(path, limit: 256 * 1024)
                jwks = try JSONDecoder().decode(JWKS.self, from: Data(bytes))
            } catch {
                throw ServerSetupError.appleKeys("cannot read a JWKS from \(path)")
            }
            guard configuration.appleAudience != nil else {
                throw ServerSetupError.appleKeys("an Apple JWKS needs the app's client id as audience (--apple-audience)")
            }
        }
        let tokens = try await TokenService(
            signingKeys: keys, appleJWKS: jwks, appleAudience: configuration.appleAudience, configuration: configuration)
        let operatorHash = try OperatorToken.load(dataDirectory: configuration.dataDirectory)
        try await store.migrate()
        let core = ServerCore(
            store: store, tokens: tokens, serverSecret: secret, configuration: configuration, operatorTokenHash: operatorHash,
            logger: logger)
        // The places index is read before the server answers, so that it answers from memory at once.
        await core.places.build()
        return core
    }

    private static func router(core: ServerCore, configuration: ServerConfiguration, logger: Logger) -> Router<CofferRequestContext> {
        let router = Router(context: CofferRequestContext.self)
        let routes = RouteTable()
        if !configuration.trustedProxies.isEmpty {
            router.add(middleware: ClientAddressMiddleware(proxies: TrustedProxies(networks: configuration.trustedProxies)))
        }
        router.add(middleware: ResponseHardeningMiddleware(logger: logger, routes: routes))
        if configuration.metrics {
            _ = ServerMetrics.registry
            router.add(middleware: MetricsMiddleware())
            router.get("metrics") { request, context in
                try await core.requireOperator(request.headers[.authorization], address: context.remoteAddress)
                return ServerMetrics.response()
            }
        }
        if let corsOrigin = configuration.corsOrigin {
            let origin: CORSMiddleware<CofferRequestContext>.AllowOriginExtended = corsOrigin == "*" ? .all : .custom(corsOrigin)
            router.add(
                middleware: CORSMiddleware(
                    allowOrigin: origin, allowHeaders: [.contentType, .authorization],
                    allowMethods: [.get, .post, .patch, .delete, .options], allowCredentials: false, maxAge: .seconds(600)))
        }
        if let directory = configuration.webVaultDirectory {
            router.add(middleware: WebVaultMiddleware(directory: directory, logger: logger))
        }
        Routes(core: core).register(on: router, table: routes)
        return router
    }

    /// 32 random bytes in `<data>/server-secret` (0600), created on first start; keys the stand-in answers of
    /// pre-login for unknown accounts.
    private static func serverSecret(dataDirectory: String) throws -> SymmetricKey {
        let path = "\(dataDirectory)/server-secret"
        if !PrivateFiles.exists(path) {
            do {
                try PrivateFiles.write(SystemRandom().bytes(32), to: path, exclusive: true)
            } catch {
                if !PrivateFiles.exists(path) { throw ServerSetupError.dataDirectory("cannot write \(path)") }
            }
        }
        do {
            let bytes = try PrivateFiles.read(path, limit: 64)
            guard bytes.count == 32 else { throw ServerSetupError.dataDirectory("\(path) is not 32 bytes") }
            return SymmetricKey(data: bytes)
        } catch let error as ServerSetupError {
            throw error
        } catch {
            throw ServerSetupError.dataDirectory("cannot read \(path)")
        }
    }
}

/// Purges soft-deleted accounts past their retention, every `purgeInterval` seconds until shutdown.
struct PurgeJob: Service {
    let store: any MaintenanceStore
    let configuration: ServerConfiguration
    let logger: Logger

    func run() async throws {
        let store = store, configuration = configuration, logger = logger
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let purged = try await AccountPurge.run(
                        store: store, now: configuration.clock(), retention: configuration.accountRetention)
                    if purged > 0 { logger.notice("purged deleted accounts", metadata: ["count": "\(purged)"]) }
                } catch {
                    logger.error("purge failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(configuration.purgeInterval))
            }
        }
    }
}

/// Event loop groups by size, each made once and kept for the life of the process, as NIO's own singleton group is:
/// a server started again (tests start hundreds) reuses its group rather than leaving threads behind.
enum EventLoopGroups {
    private static let groups = Mutex<[Int: MultiThreadedEventLoopGroup]>([:])

    static func shared(threads: Int) -> MultiThreadedEventLoopGroup {
        let count = min(max(threads, 1), ServerConfiguration.maxEventLoops)
        return groups.withLock { groups in
            if let group = groups[count] { return group }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: count)
            groups[count] = group
            return group
        }
    }
}
