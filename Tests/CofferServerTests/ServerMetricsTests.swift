import CofferServer
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Foundation
import HTTPTypes
import Testing

/// `GET /metrics`: off unless the operator turns it on, for the operator token only, and counted per route pattern
/// and status with nothing of a request's values.
@Suite("Server metrics")
struct ServerMetricsTests {
    @Test("off by default; on, only for the operator token; requests and latency per route pattern and status, no user data")
    func metrics() async throws {
        try await withServer(.sqlite) { api, _ in
            let off = try await api.send(.get, "/metrics")
            #expect(off.status == .notFound)
        }
        let directory = try TestSupport.temporaryDirectory("metrics-server")
        let token = try OperatorToken.create(dataDirectory: directory)
        try await withServer(
            .sqlite,
            configure: {
                $0.dataDirectory = directory; $0.metrics = true
            }
        ) { api, _ in
            let account = try await TestAccount.register(api)
            let cardID = UUID()
            for _ in 0..<3 { _ = try await api.send(.get, "/v1/cards/\(cardID.uuidString.lowercased())", token: account.access) }
            _ = try await api.send(.get, "/v1/sync/changes?since=0", token: account.access)
            _ = try await api.send(.get, "/nowhere/\(account.email)")

            let anonymous = try await api.send(.get, "/metrics")
            #expect(anonymous.status == .unauthorized && anonymous.error != nil)
            let wrong = try await api.send(.get, "/metrics", token: account.access)
            #expect(wrong.status == .forbidden)
            let answer = try await api.sendRaw(.get, "/metrics", headers: [.authorization: "Bearer \(token)"], body: nil)
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = String(decoding: answer.body, as: UTF8.self)
            // Prometheus' own syntax for every sample line: a valid name, then labels.
            let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(!lines.isEmpty)
            for line in lines {
                #expect(
                    line.range(of: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [0-9.e+-]+$"#, options: .regularExpression)
                        != nil, "\(line)")
            }
            #expect(text.contains(#"hb_requests{http_route="/v1/cards/{id}",http_request_method="GET",http_response_status_code="404"} 3"#))
            #expect(text.contains(#"http_route="/v1/sync/changes""#) && text.contains("http_server_request_duration_bucket"))
            // Nothing a request carried: no id, email or token, in any encoding.
            for canary in [cardID.uuidString.lowercased(), account.email, account.access, account.userID.uuidString.lowercased()] {
                #expect(CanaryScan.encodings(of: canary, in: answer.body).isEmpty, "a request value in the metrics")
            }
        }
    }
}
