import Hummingbird
import NIOCore

/// `GET /v1/admin/metrics`: this process's security counters in Prometheus text format, for the operator (operator
/// token, like every `/v1/admin/*` endpoint). Counts only, never a user, an address or a route parameter.
struct AdminMetricsRoute {
    let core: ServerCore

    func register(on v1: RecordingGroup) {
        v1.get("admin/metrics") { request, context in
            try await core.requireOperator(request.headers[.authorization], address: context.remoteAddress)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: core.securityMetrics.prometheusText)))
        }
    }
}
