import Dispatch

/// A task executor on threads of its own, for servers that tests run in process. On a two-core machine Swift's
/// cooperative pool has two threads; tests that block them (child processes, oracles, sleeps) would leave a live server
/// running there unable to answer until its clients time out. A concurrent dispatch queue adds threads as its work
/// blocks, so the server runs whatever the tests beside it do.
public final class DedicatedExecutor: TaskExecutor, @unchecked Sendable {
    public static let shared = DedicatedExecutor()

    private let queue = DispatchQueue(label: "coffer.tests.dedicated-executor", attributes: .concurrent)

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `body`, and the tasks it starts in structured concurrency, on this executor.
    public static func run<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await withTaskExecutorPreference(shared, operation: body)
    }
}
