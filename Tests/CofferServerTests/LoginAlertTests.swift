@testable import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Foundation
import HTTPTypes
import Testing

/// Seed 000's failed-login alert: more than 5 failed logins of one account within 5 minutes is one `login_alert` in the
/// audit log, a metric, and a line of `coffer-server audit --alerts`.
@Suite("login alerts")
struct LoginAlertTests {
    /// Where `TestClock` starts: on a boundary of the rate limiter's 5-minute windows.
    static let origin = TestClock().now

    /// Attempts with a wrong auth key for `account` at the given offsets (seconds from `origin`, increasing); the
    /// statuses answered.
    static func failures(
        _ api: APIClient, _ account: TestAccount, clock: TestClock, at offsets: [TimeInterval], wrongKey: Data = Data(count: 32)
    ) async throws -> [HTTPResponse.Status] {
        var statuses: [HTTPResponse.Status] = []
        for offset in offsets {
            clock.advance(offset - clock.now.timeIntervalSince(Self.origin))
            let wrong = LoginRequest(email: account.email, authKey: wrongKey.base64EncodedString())
            statuses.append(try await api.send(.post, "/v1/auth/login", json: wrong).status)
        }
        return statuses
    }

    /// The account's alerts in the whole audit log (read as the operator does; PostgreSQL tests share one database).
    static func alerts(_ store: any ServerStore, of account: TestAccount) async throws -> [AuditEvent] {
        try await withMaintenance(of: store) { try await $0.auditEvents(limit: 10_000) }
            .filter { $0.kind == .loginAlert && $0.userID == account.userID }
    }

    @Test("6 failures within 5 minutes make exactly one alert, naming the account by id", arguments: Backend.allCases)
    func sixFailures(backend: Backend) async throws {
        let clock = TestClock()
        try await withServer(backend, clock: clock) { api, store in
            let account = try await TestAccount.register(api)
            let bystander = try await TestAccount.register(api)
            let statuses = try await Self.failures(api, account, clock: clock, at: [0, 30, 60, 90, 120])
            #expect(statuses == Array(repeating: .unauthorized, count: 5))
            #expect(try await Self.alerts(store, of: account).isEmpty)
            // The sixth is refused by the rate limiter: still a failed login of the account, and the one that alerts.
            #expect(try await Self.failures(api, account, clock: clock, at: [150]) == [.tooManyRequests])
            let alerts = try await Self.alerts(store, of: account)
            #expect(alerts.count == 1)
            #expect(alerts.first?.userID == account.userID)
            #expect(alerts.first?.detail == "more than 5 failed logins in 5 minutes")
            #expect(try await store.auditEvents(userID: account.userID, limit: 50).filter { $0.kind == .loginAlert }.count == 1)
            #expect(try await store.auditEvents(userID: bystander.userID, limit: 50).allSatisfy { $0.kind != .loginAlert })

            // More failures within 5 minutes of the alert add none, also past the limiter's window (305, 320): one
            // per window, not one per failure. Once the alert is 5 minutes old, a failure that makes more than 5 in
            // the last 5 minutes (170…460) alerts again.
            _ = try await Self.failures(api, account, clock: clock, at: [160, 170, 200, 290, 305, 320])
            #expect(try await Self.alerts(store, of: account).count == 1)
            _ = try await Self.failures(api, account, clock: clock, at: [460])
            #expect(try await Self.alerts(store, of: account).count == 2)
        }
    }

    @Test("a burst across the rate limiter's fixed windows still alerts once: the window slides", arguments: Backend.allCases)
    func slidingWindow(backend: Backend) async throws {
        let clock = TestClock()
        try await withServer(backend, clock: clock) { api, store in
            let account = try await TestAccount.register(api)
            // Five in the limiter's first window, one just after it: all six are wrong keys answered 401.
            let statuses = try await Self.failures(api, account, clock: clock, at: [200, 220, 240, 260, 280, 310])
            #expect(statuses == Array(repeating: .unauthorized, count: 6))
            #expect(try await Self.alerts(store, of: account).count == 1)
        }
    }

    @Test("5 failures within 5 minutes make no alert", arguments: Backend.allCases)
    func fiveFailures(backend: Backend) async throws {
        let clock = TestClock()
        try await withServer(backend, clock: clock) { api, store in
            let account = try await TestAccount.register(api)
            _ = try await Self.failures(api, account, clock: clock, at: [0, 10, 20, 30, 40])
            clock.advance(300)
            #expect(try await api.send(.post, "/v1/auth/login", json: LoginRequest(email: account.email, authKey: account.authKey)).status == .ok)
            #expect(try await Self.alerts(store, of: account).isEmpty)
        }
    }

    @Test("failures spread over more than 5 minutes make no alert", arguments: Backend.allCases)
    func spreadFailures(backend: Backend) async throws {
        let clock = TestClock()
        try await withServer(backend, clock: clock) { api, store in
            let account = try await TestAccount.register(api)
            // Never more than five in any 5 minutes: each 6th is 305 seconds after the first of the run before it.
            let offsets: [TimeInterval] = (0..<12).map { TimeInterval($0 * 61) }
            let statuses = try await Self.failures(api, account, clock: clock, at: offsets)
            #expect(statuses.allSatisfy { $0 == .unauthorized })
            #expect(try await Self.alerts(store, of: account).isEmpty)
        }
    }

    @Test("the alert, the logs and the audit lines hold neither the email nor the passphrase or auth key", arguments: Backend.allCases)
    func canaries(backend: Backend) async throws {
        let clock = TestClock()
        let logs = LogCollector()
        // Unique per run: the PostgreSQL tests share one database.
        let local = "canary-alert-\(UUID().uuidString.prefix(8).lowercased())"
        let email = "\(local)@example.org"
        let wrongKey = Data("CANARY-WRONG-AUTH-KEY-0123456789".utf8)
        try await withServer(backend, clock: clock, logs: logs) { api, store in
            let account = try await TestAccount.register(api, email: email)
            _ = try await Self.failures(api, account, clock: clock, at: [0, 10, 20, 30, 40, 50, 60], wrongKey: wrongKey)
            let alerts = try await Self.alerts(store, of: account)
            #expect(alerts.count == 1)
            let audit = try await withMaintenance(of: store) { try await $0.auditEvents(limit: 10_000) }
                .filter { $0.userID == account.userID || $0.userID == nil }
                .map { "\($0.at) \($0.kind.rawValue) \($0.userID?.uuidString ?? "-") \($0.address ?? "-") \($0.detail ?? "-")" }
                .joined(separator: "\n")
            let scanned = Data((audit + "\n" + logs.text).utf8)
            #expect(logs.text.contains("login alert"))
            #expect(CanaryScan.encodings(of: email, in: scanned).isEmpty)
            #expect(CanaryScan.encodings(of: local, in: scanned).isEmpty)
            #expect(CanaryScan.encodings(of: account.passphrase, in: scanned).isEmpty)
            #expect(CanaryScan.encodings(ofBytes: Array(wrongKey), in: scanned).isEmpty)
            #expect(CanaryScan.encodings(ofBytes: Array(Data(base64Encoded: account.authKey)!), in: scanned).isEmpty)
        }
    }

    @Test("with --metrics, the operator reads the alert count at /metrics")
    func metric() async throws {
        let clock = TestClock()
        let directory = try TestSupport.temporaryDirectory("alert-metrics")
        let token = try OperatorToken.create(dataDirectory: directory)
        try await withServer(
            .sqlite, clock: clock,
            configure: {
                $0.dataDirectory = directory; $0.metrics = true
            }
        ) { api, _ in
            let account = try await TestAccount.register(api)
            // The counter is the process's: other tests may add to it, never take from it.
            let before = try Self.alertCount(try await api.sendRaw(.get, "/metrics", headers: [.authorization: "Bearer \(token)"], body: nil))
            _ = try await Self.failures(api, account, clock: clock, at: [0, 10, 20, 30, 40, 50, 60, 70])
            let after = try Self.alertCount(try await api.sendRaw(.get, "/metrics", headers: [.authorization: "Bearer \(token)"], body: nil))
            #expect(after >= before + 1)
        }
    }

    static func alertCount(_ answer: APIClient.Answer) throws -> Int {
        #expect(answer.status == .ok)
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.contains("# TYPE coffer_login_alerts_total counter"))
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("coffer_login_alerts_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }
}

@Suite("coffer-server audit --alerts")
struct AuditAlertsCommandTests {
    @Test("prints only the login alerts, with their count on standard error")
    func alertsOnly() async throws {
        let directory = try TestSupport.temporaryDirectory("audit-alerts")
        try FileManager.default.createDirectory(atPath: "\(directory)/data", withIntermediateDirectories: true)
        let store = try SQLiteServerStore(path: "\(directory)/data/server.sqlite")
        try await store.migrate()
        let user = UUID()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        for kind in [AuditEvent.Kind.loginFailed, .loginRateLimited, .loginAlert, .loginSucceeded] {
            try await store.audit(
                AuditEvent(
                    at: at, kind: kind, userID: user, address: "10.0.0.7", detail: kind == .loginAlert ? "more than 5 failed logins in 5 minutes" : nil))
        }
        let result = try TestSupport.run(
            serverBinary, ["audit", "--alerts", "--data", "\(directory)/data"],
            environment: ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "2027-01-15T08:00:00Z\tlogin_alert\t\(user.uuidString.lowercased())\t10.0.0.7\tmore than 5 failed logins in 5 minutes\n")
        #expect(result.stderr == "login alerts: 1 among the newest 10000 events\n")
        let all = try TestSupport.run(
            serverBinary, ["audit", "--data", "\(directory)/data"], environment: ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"])
        #expect(all.stdout.split(separator: "\n").count == 4)
    }
}
