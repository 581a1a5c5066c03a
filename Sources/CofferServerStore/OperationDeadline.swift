import Synchronization

/// A bound on how long a request waits for the database.
///
/// During a failover the pool's connection attempts fail and its lease requests wait (postgres-nio keeps them queued
/// for a minute before it gives up), and a query sent to a frozen primary waits until something closes the socket.
/// Neither wait answers to task cancellation alone, so the caller is answered when the deadline passes and the
/// operation goes on in the background until the database answers or the connection drops. A write still in flight
/// then may land after its caller was told "unavailable": every write a client retries is idempotent (a push is
/// applied by revision, a refresh with its retry key), so sending it again is safe.
package enum OperationDeadline {
    /// Runs `operation`; after `limit`, throws `ServerStoreError.unavailable` and cancels it (it is left to finish).
    /// Cancelling the caller cancels the operation too.
    package static func run<T: Sendable>(
        _ limit: Duration?, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let limit else { return try await operation() }
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                race.start(continuation, limit: limit, operation)
            }
        } onCancel: {
            race.cancel()
        }
    }

    /// The operation, its timer and the one caller the first of them to finish answers.
    private final class Race<T: Sendable>: Sendable {
        private struct State {
            var waiter: CheckedContinuation<T, any Error>?
            var work: Task<Void, Never>?
            var timer: Task<Void, Never>?
            var cancelled = false
        }

        private let state = Mutex(State())

        func start(
            _ continuation: CheckedContinuation<T, any Error>, limit: Duration,
            _ operation: @escaping @Sendable () async throws -> T
        ) {
            state.withLock { $0.waiter = continuation }
            let timer = Task {
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                self.finish(.failure(ServerStoreError.unavailable("the database did not answer within \(limit)")))
            }
            let work = Task {
                do {
                    self.finish(.success(try await operation()))
                } catch {
                    self.finish(.failure(error))
                }
            }
            let cancelled = state.withLock { state in
                state.work = work
                state.timer = timer
                return state.cancelled
            }
            if cancelled { cancel() }
        }

        /// Answers the caller once; the loser of the race is cancelled.
        private func finish(_ result: Result<T, any Error>) {
            let (waiter, work, timer) = state.withLock { state in
                (state.waiter.take(), state.work, state.timer)
            }
            guard let waiter else { return }
            work?.cancel()
            timer?.cancel()
            waiter.resume(with: result)
        }

        func cancel() {
            let work = state.withLock { state in
                state.cancelled = true
                return state.work
            }
            work?.cancel()
        }
    }
}
