import CofferCrypto
import CofferServerStore
import Crypto
import Foundation
import Logging

/// The failed-login alert of seed 000: more than 5 failed logins of one account within 5 minutes is a security event
/// the operator sees. Failures are the audit log's own `login_failed` and `login_rate_limited` rows of the account, so
/// the window slides (a burst across the rate limiter's fixed windows is still one burst) and every server instance
/// sees the same count without a table of its own.
enum LoginAlert {
    /// Failures within `window` beyond which the account is alerted on.
    static let threshold = 5
    /// Seconds.
    static let window = 300
    /// The fixed phrase of the audit event: it names neither the email nor anything the client sent.
    static let detail = "more than 5 failed logins in 5 minutes"
    /// How many of the account's newest audit events are read to count failures: the threshold's worth of failures
    /// and room for the few other events (a success, a logout) an account makes between them.
    static let scanned = 100

    /// The counter that lets one request only write the alert when several cross the line at once (on several
    /// instances). Counters are readable by every request, so the key hides the account id.
    static func gateKey(_ userID: UUID) -> String {
        let digest = SHA256.hash(data: Array("coffer/v1/login-alert\u{0}\(userID.lowercasedString)".utf8))
        return "login-alert:" + Hex.encode(digest)
    }
}

extension ServerCore {
    /// Called after each failed login of `userID` has been audited: writes one `login_alert` when the account's
    /// failures in the last `LoginAlert.window` seconds exceed the threshold and none was written in that time.
    /// Failures against an email with no account alert nothing: there is no account to protect or to name.
    func alertOnFailedLogins(userID: UUID?, address: String?) async throws {
        guard let userID else { return }
        let since = now.addingTimeInterval(-TimeInterval(LoginAlert.window))
        let recent = try await store.auditEvents(userID: userID, limit: LoginAlert.scanned).filter { $0.at > since }
        let failures = recent.filter { $0.kind == .loginFailed || $0.kind == .loginRateLimited }.count
        guard failures > LoginAlert.threshold, !recent.contains(where: { $0.kind == .loginAlert }) else { return }
        let gate = try await store.increment(counter: LoginAlert.gateKey(userID), window: LoginAlert.window, now: now)
        guard gate.count == 1 else { return }
        try await store.audit(AuditEvent(at: now, kind: .loginAlert, userID: userID, address: address, detail: LoginAlert.detail))
        ServerMetrics.recordLoginAlert()
        // The account is named in the audit log only, which the operator reads with `coffer-server audit --alerts`.
        logger.warning("login alert: more than 5 failed logins of one account in 5 minutes")
    }
}
