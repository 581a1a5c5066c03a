import Hummingbird
import Metrics
import NIOCore
import Prometheus

/// Request counts and latency histograms per route and status (Hummingbird's `MetricsMiddleware`), in Prometheus text
/// format at `GET /metrics` when the operator enables it (`coffer-server serve --metrics`), for the operator token
/// only. The labels are the route's pattern (`/v1/cards/{id}`, `NotFound` for anything else), the method and the
/// status: never a path with an id, a user, a query or a body.
enum ServerMetrics {
    /// The process's registry. The metrics system is global to a process and bootstrapped once, on first use: by the
    /// first server built with metrics on.
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitized(name), labels.map { (sanitized($0.0), $0.1) })
        }
        MetricsSystem.bootstrap(factory)
        // Listed from the start, at 0, so that a scrape tells "none" from "not counted".
        _ = Counter(label: "coffer_login_alerts_total")
        return registry
    }()

    /// Counts one more account alerted on for more than 5 failed logins in 5 minutes (`LoginAlert`), in this process:
    /// a count only, the account is named in the audit log alone. The counter is looked up on each use, so it counts
    /// once metrics are on whenever they were turned on (a counter made before would stay a no-op).
    static func recordLoginAlert() {
        Counter(label: "coffer_login_alerts_total").increment()
    }

    /// A Prometheus metric or label name (`[a-zA-Z_:][a-zA-Z0-9_:]*`): Hummingbird names its metrics with dots
    /// (`http.server.request.duration`), which Prometheus does not accept.
    static func sanitized(_ name: String) -> String {
        var result = String(
            name.unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", ":": return Character(scalar)
                default: return "_"
                }
            })
        if let first = result.unicodeScalars.first, ("0"..."9").contains(first) { result = "_" + result }
        return result
    }

    /// The exposition, as Prometheus scrapes it.
    static func response() -> Response {
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
