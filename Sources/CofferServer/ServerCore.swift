import CofferCrypto
import CofferServerStore
import CofferSyncAPI
import Crypto
import Foundation
import HTTPTypes
import Logging

/// The server's behaviour, independent of HTTP: every endpoint is one method here taking decoded input and returning
/// what the route encodes, or throwing an `APIError`.
final class ServerCore: Sendable {
    let store: any ServerStore
    let tokens: TokenService
    let configuration: ServerConfiguration
    private let serverSecret: SymmetricKey
    let logger: Logger
    /// SHA-256 of the operator token, nil when none was made.
    let operatorTokenHash: String?
    let tileCache = TileCache()
    /// Every place in memory, for the position-taking endpoints (see `PlaceIndexCache` for when it answers).
    let places: PlaceIndexCache
    /// Every authenticated request's session and budget check (see `SessionGate` for when it answers from memory).
    let sessions: SessionGate
    /// Whether the database takes writes, for `/health`.
    let health: HealthProbe

    init(
        store: any ServerStore, tokens: TokenService, serverSecret: SymmetricKey, configuration: ServerConfiguration,
        operatorTokenHash: String?, logger: Logger
    ) {
        self.store = store
        self.tokens = tokens
        self.serverSecret = serverSecret
        self.configuration = configuration
        self.operatorTokenHash = operatorTokenHash
        self.logger = logger
        self.sessions = SessionGate(freshness: configuration.sessionCheckInterval)
        self.health = HealthProbe(store: store)
        self.places = PlaceIndexCache(
            store: store, interval: configuration.placesCheckInterval, clock: configuration.clock, logger: logger)
    }

    var now: Date { configuration.clock() }

    // MARK: Accounts

    /// The account's stretching parameters; for an unknown account, parameters derived from the server secret and
    /// the email, so that they look like a real account's and never change between calls.
    func prelogin(_ request: PreloginRequest, address: String?) async throws -> PreloginResponse {
        try await limitAnonymous(address: address)
        let email = try Self.normalizedEmail(request.email)
        if let id = try await store.userID(email: email), let user = try await store.user(id: id), let slot = user.slot {
            return PreloginResponse(kdf: slot.kdf, salt: slot.salt)
        }
        let salt = HMAC<SHA256>.authenticationCode(for: Array("coffer/v1/prelogin\u{0}\(email)".utf8), using: serverSecret)
        return PreloginResponse(kdf: KDFParameters(.defaultPBKDF2), salt: Data(salt).base64EncodedString())
    }

    func register(_ request: RegisterRequest, address: String?) async throws -> AuthResponse {
        try await limitAnonymous(address: address)
        let email = try Self.normalizedEmail(request.email)
        let authKey = try Self.authKey(request.authKey, field: "auth_key")
        try validate(request.slot)
        let hash = try AuthHasher.hash(authKey, iterations: configuration.authHashIterations)
        let user = NewUser(
            id: UUID(), email: email, createdAt: now, authHash: hash, vaultID: request.vaultID, slot: request.slot)
        try await createUser(user)
        try await store.audit(AuditEvent(at: now, kind: .accountCreated, userID: user.id, address: address))
        return try await startSession(userID: user.id)
    }

    func login(_ request: LoginRequest, address: String?) async throws -> AuthResponse {
        let email = try Self.normalizedEmail(request.email)
        let authKey = try Self.authKey(request.authKey, field: "auth_key")
        let keys = failedLoginKeys(email: email, address: address)
        let userID = try await store.userID(email: email)
        try await checkFailedLogins(keys, userID: userID, address: address)
        let user = try await userID.asyncMap { try await store.user(id: $0) } ?? nil
        guard let user, user.deletedAt == nil, let stored = user.authHash else {
            AuthHasher.burn(iterations: configuration.authHashIterations)
            try await recordFailedLogin(keys, userID: nil, address: address)
            throw APIError.invalidCredentials
        }
        guard AuthHasher.verify(authKey, against: stored) else {
            try await recordFailedLogin(keys, userID: user.id, address: address)
            throw APIError.invalidCredentials
        }
        try await store.audit(AuditEvent(at: now, kind: .loginSucceeded, userID: user.id, address: address))
        return try await startSession(userID: user.id)
    }

    /// Rotates the refresh token. A device that sends a retry key may present the same token again after losing the
    /// answer and gets the same successor (same `jti`, newly signed); without the key, or once the successor was used,
    /// a second presentation is a replay and ends the family (docs/FORMAT.md §8.5).
    func refresh(_ request: RefreshRequest, address: String?) async throws -> AuthResponse {
        try await limitAnonymous(address: address)
        let retryKey = try request.retryKey.map { text in
            guard let key = RefreshRetryKey(base64URL: text) else {
                throw APIError.invalidRequest("The retry key is not 32 bytes in unpadded base64url", field: "retry_key")
            }
            return key
        }
        guard let claims = await tokens.verify(request.refreshToken, kind: .refresh),
            let userID = UUID(uuidString: claims.sub), let family = UUID(uuidString: claims.sid),
            let tokenID = UUID(uuidString: claims.jti)
        else { throw APIError.invalidRefreshToken }
        let newTokenID = UUID()
        switch try await store.rotateRefreshToken(
            userID: userID, family: family, tokenID: tokenID, newTokenID: newTokenID, retryKeyDigest: retryKey?.digest,
            now: now, expiresAt: tokens.refreshExpiry)
        {
        case .rotated:
            return try await tokenResponse(userID: userID, family: family, refreshTokenID: newTokenID)
        case .retried(let successor):
            try await store.audit(AuditEvent(at: now, kind: .refreshRetried, userID: userID, address: address, detail: "answer lost"))
            logger.info("spent refresh token presented again with its retry key; its successor issued again")
            return try await tokenResponse(userID: userID, family: family, refreshTokenID: successor)
        case .reused:
            sessions.forget(family: family)
            try await store.audit(AuditEvent(at: now, kind: .refreshReused, userID: userID, address: address, detail: "family revoked"))
            logger.warning("refresh token reused; session family revoked")
            throw APIError.invalidRefreshToken
        case .invalid:
            throw APIError.invalidRefreshToken
        case .lost:
            // Of a live account, the database went back in time; of none, the account was purged (or never stored).
            guard let user = try await store.user(id: userID), user.deletedAt == nil else { throw APIError.invalidRefreshToken }
            logger.warning("a refresh token this server issued is unknown to its database: restored from a backup or rolled back")
            throw APIError.sessionLost
        }
    }

    /// Sign in with Apple (CardOnCue's `POST /v1/auth/apple`): the identity token must verify; the user is found by
    /// Apple's subject or created.
    func apple(_ request: AppleAuthRequest, address: String?) async throws -> AuthResponse {
        try await limitAnonymous(address: address)
        guard tokens.appleConfigured else {
            throw APIError(.notImplemented, "not_configured", "Sign in with Apple is not configured on this server")
        }
        guard let verified = await tokens.verifyApple(request.identityToken) else {
            try await store.audit(AuditEvent(at: now, kind: .appleTokenRejected, userID: nil, address: address))
            throw APIError(.unauthorized, "unauthorized", "Invalid Apple identity token")
        }
        if let claimed = request.userIdentifier, claimed != verified.subject {
            try await store.audit(AuditEvent(at: now, kind: .appleTokenRejected, userID: nil, address: address, detail: "subject mismatch"))
            throw APIError(.unauthorized, "unauthorized", "Invalid Apple identity token")
        }
        let userID: UUID
        if let existing = try await store.userID(appleSubject: verified.subject) {
            userID = existing
        } else {
            let email = Self.appleEmail(claimed: verified.email ?? request.email, subject: verified.subject)
            let fullName = Self.fullName(request.fullName)
            let user = NewUser(
                id: UUID(), email: email, appleSubject: verified.subject,
                fullName: fullName.isEmpty ? nil : String(fullName.prefix(200)), createdAt: now)
            try await createUser(user)
            try await store.audit(AuditEvent(at: now, kind: .accountCreated, userID: user.id, address: address, detail: "apple"))
            userID = user.id
        }
        try await store.audit(AuditEvent(at: now, kind: .appleSignIn, userID: userID, address: address))
        return try await startSession(userID: userID)
    }

    func logout(_ session: AuthenticatedSession, address: String?) async throws {
        try await store.revokeSession(userID: session.userID, family: session.family)
        sessions.forget(family: session.family)
        try await store.audit(AuditEvent(at: now, kind: .logout, userID: session.userID, address: address))
    }

    /// Replaces slot and auth hash after checking the current auth key; every session is revoked and a new one begins.
    func changePassphrase(_ request: PassphraseChangeRequest, session: AuthenticatedSession, address: String?) async throws -> AuthResponse {
        let current = try Self.authKey(request.authKey, field: "auth_key")
        let replacement = try Self.authKey(request.newAuthKey, field: "new_auth_key")
        try validate(request.slot)
        guard let user = try await store.user(id: session.userID), let stored = user.authHash else {
            throw APIError(.badRequest, "invalid_request", "This account has no passphrase")
        }
        let keys = failedLoginKeys(email: user.email ?? session.userID.uuidString, address: address)
        try await checkFailedLogins(keys, userID: user.id, address: address)
        guard AuthHasher.verify(current, against: stored) else {
            try await recordFailedLogin(keys, userID: user.id, address: address)
            throw APIError.invalidCredentials
        }
        let manifest = try Self.manifestWrite(request.manifest, baseEpoch: request.baseEpoch)
        let hash = try AuthHasher.hash(replacement, iterations: configuration.authHashIterations)
        let outcome = try await store.replaceCredentials(userID: user.id, authHash: hash, slot: request.slot, manifest: manifest)
        guard case .accepted = outcome else { throw APIError.refusedPush(outcome) }
        // Every session ends, this one included; the caller continues in the fresh session returned.
        try await store.revokeSessions(userID: user.id, keeping: nil)
        sessions.forget(userID: user.id)
        try await store.audit(AuditEvent(at: now, kind: .passphraseChanged, userID: user.id, address: address))
        return try await startSession(userID: user.id)
    }

    func account(_ session: AuthenticatedSession) async throws -> AccountResponse {
        let user = try await liveUser(session)
        let usage = try await store.usage(userID: user.id)
        return AccountResponse(
            user: userInfo(user), vaultID: user.vaultID, itemCount: usage.items, storedBytes: usage.bytes, cursor: usage.cursor,
            headEpoch: usage.headEpoch)
    }

    /// `DELETE /v1/user`: soft delete now, purge after the retention period.
    func deleteUser(_ session: AuthenticatedSession, address: String?) async throws {
        try await store.softDeleteUser(id: session.userID, at: now)
        sessions.forget(userID: session.userID)
        try await store.audit(AuditEvent(at: now, kind: .accountDeleted, userID: session.userID, address: address))
    }

    // MARK: Authentication of requests

    /// The session behind `Authorization: Bearer <access token>`, counted against the per-token request limit.
    func authenticate(authorization: String?, address: String?) async throws -> AuthenticatedSession {
        // Exactly `Bearer <token>`, the token non-empty and without spaces.
        guard let authorization, authorization.utf8.starts(with: "Bearer ".utf8) else { throw APIError.missingToken }
        let token = String(Substring(authorization.utf8.dropFirst(7)))
        guard !token.isEmpty, !token.utf8.contains(UInt8(ascii: " ")) else { throw APIError.missingToken }
        guard let claims = await tokens.verify(token, kind: .access),
            let userID = UUID(uuidString: claims.sub), let family = UUID(uuidString: claims.sid)
        else {
            if await tokens.isValidToken(token, otherThan: .access) { throw APIError.wrongTokenType }
            throw APIError.invalidToken
        }
        switch try await sessions.check(
            userID: userID, family: family, counter: Self.sessionCounterKey(family), limit: configuration.requestsPerMinute,
            window: 60, now: now, store: store)
        {
        case .admitted: return AuthenticatedSession(userID: userID, family: family)
        case .limited(let counter): throw APIError.rateLimited(retryAfter: retryAfter(counter))
        case .inactive: throw APIError.invalidToken
        }
    }

    // MARK: Helpers

    private func createUser(_ user: NewUser) async throws {
        let failure: ServerStoreError?
        do {
            try await store.createUser(user)
            failure = nil
        } catch {
            failure = error
        }
        if failure == .duplicate { throw APIError.accountExists }
        if let failure { throw failure }
    }

    private func startSession(userID: UUID) async throws -> AuthResponse {
        let live = try await store.liveSessionCount(userID: userID, now: now)
        guard live < configuration.maxSessionsPerAccount else {
            throw APIError(
                .tooManyRequests, "too_many_sessions",
                "This account is signed in on \(live) devices, the most this server allows: sign out on one (coffer sync logout) or wait until a session expires",
                details: ErrorBody.Details(limit: configuration.maxSessionsPerAccount))
        }
        let family = UUID(), tokenID = UUID()
        try await store.createSession(userID: userID, family: family, tokenID: tokenID, now: now, expiresAt: tokens.refreshExpiry)
        return try await tokenResponse(userID: userID, family: family, refreshTokenID: tokenID)
    }

    /// Fresh access and refresh tokens for `family`, the refresh token being `refreshTokenID`.
    private func tokenResponse(userID: UUID, family: UUID, refreshTokenID: UUID) async throws -> AuthResponse {
        guard let user = try await store.user(id: userID), user.deletedAt == nil else { throw APIError.invalidRefreshToken }
        return AuthResponse(
            accessToken: try await tokens.accessToken(userID: userID, family: family),
            refreshToken: try await tokens.refreshToken(userID: userID, family: family, tokenID: refreshTokenID),
            expiresIn: tokens.accessLifetime, user: userInfo(user), vaultID: user.vaultID, slot: user.slot)
    }

    func liveUser(_ session: AuthenticatedSession) async throws -> UserRecord {
        guard let user = try await store.user(id: session.userID), user.deletedAt == nil else { throw APIError.invalidToken }
        return user
    }

    func userInfo(_ user: UserRecord) -> UserInfo {
        UserInfo(
            id: user.id.lowercasedString, email: user.email, fullName: user.fullName, createdAt: user.createdAt,
            preferences: UserInfo.Preferences(syncEnabled: user.slot != nil, notificationRadiusMeters: 100))
    }

    func validate(_ slot: WrappedSlot) throws {
        do {
            _ = try slot.header(limits: configuration.kdfLimits)
        } catch {
            throw APIError.invalidRequest("The slot's KDF parameters or salt are not acceptable", field: "slot")
        }
        guard let wrapped = Data(base64Encoded: slot.wrappedKey), wrapped.count == 12 + 32 + 16 else {
            throw APIError.invalidRequest("The slot's wrapped key is not a wrapped 32-byte key", field: "slot.wrapped_key")
        }
    }

    /// The request counter of a session family. Counters sit in a table every request can read (they are shared
    /// before login), so the key is a hash: it must not show another account's session id.
    static func sessionCounterKey(_ family: UUID) -> String {
        let digest = SHA256.hash(data: Array("coffer/v1/session\u{0}\(family.lowercasedString)".utf8))
        return "token:" + Hex.encode(digest)
    }

    func failedLoginKeys(email: String, address: String?) -> [String] {
        let account = Hex.encode(SHA256.hash(data: Array("coffer/v1/account\u{0}\(email)".utf8)))
        return ["login-failed:account:\(account)"] + (address.map { ["login-failed:address:\($0)"] } ?? [])
    }

    /// A refused attempt is a failed login of the account too (`userID`, when the email names one): it counts
    /// towards the login alert.
    func checkFailedLogins(_ keys: [String], userID: UUID?, address: String?) async throws {
        for key in keys {
            let state = try await store.counter(key, window: configuration.failedLoginWindow, now: now)
            if state.count >= configuration.failedLoginLimit {
                try await store.audit(AuditEvent(at: now, kind: .loginRateLimited, userID: userID, address: address))
                try await alertOnFailedLogins(userID: userID, address: address)
                throw APIError.rateLimited(retryAfter: retryAfter(state))
            }
        }
    }

    func recordFailedLogin(_ keys: [String], userID: UUID?, address: String?) async throws {
        for key in keys { _ = try await store.increment(counter: key, window: configuration.failedLoginWindow, now: now) }
        try await store.audit(AuditEvent(at: now, kind: .loginFailed, userID: userID, address: address))
        try await alertOnFailedLogins(userID: userID, address: address)
    }

    /// Unauthenticated endpoints share one per-address budget.
    private func limitAnonymous(address: String?) async throws {
        guard let address else { return }
        let counter = try await store.increment(counter: "address:\(address)", window: 60, now: now)
        if counter.count > configuration.addressRequestsPerMinute ?? configuration.requestsPerMinute {
            throw APIError.rateLimited(retryAfter: retryAfter(counter))
        }
    }

    private func retryAfter(_ state: CounterState) -> Int {
        max(1, Int(state.windowEnds.timeIntervalSince(now).rounded(.up)))
    }

    /// `text` in the canonical form every email lookup, account, rate-limit key and pre-login salt uses
    /// (`AccountEmail`), or 400 when it is not an email address.
    static func normalizedEmail(_ text: String) throws -> String {
        let email = AccountEmail.canonical(text)
        guard (3...254).contains(email.utf8.count), email.contains("@"), !email.hasPrefix("@"), !email.hasSuffix("@"),
            !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else { throw APIError.invalidRequest("email must be an email address", field: "email") }
        return email
    }

    /// The email an Apple account is created with: the token's or the request's, else the private-relay form.
    static func appleEmail(claimed: String?, subject: String) -> String {
        if let claimed, let email = try? normalizedEmail(claimed) { return email }
        return AccountEmail.canonical("\(subject)@privaterelay.appleid.com")
    }

    static func fullName(_ name: AppleAuthRequest.FullName?) -> String {
        let given = name?.givenName ?? "", family = name?.familyName ?? ""
        return "\(given) \(family)".trimmingCharacters(in: .whitespaces)
    }

    static func authKey(_ base64: String, field: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: base64), data.count == 32 else {
            throw APIError.invalidRequest("\(field) must be 32 bytes in base64", field: field)
        }
        return Array(data)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

/// The purge of soft-deleted accounts, run by the server's job every `purgeInterval` and by `coffer-server purge`.
/// It needs the maintenance store: the request path's store cannot purge (on PostgreSQL its role may not).
public enum AccountPurge {
    /// Hard-deletes accounts deleted more than `retention` seconds before `now`, audits it, returns how many.
    public static func run(store: any MaintenanceStore, now: Date, retention: TimeInterval) async throws -> Int {
        let count = try await store.purgeUsers(deletedBefore: now.addingTimeInterval(-retention))
        if count > 0 {
            try await store.audit(AuditEvent(at: now, kind: .accountPurged, userID: nil, address: nil, detail: "\(count) accounts"))
        }
        return count
    }
}
