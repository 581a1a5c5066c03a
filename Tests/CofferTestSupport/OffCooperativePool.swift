import Foundation
import Synchronization
import Testing

/// Runs each test of a suite off Swift's cooperative pool, for tests that block their thread while a child process,
/// an oracle or a sleep runs. The pool has as many threads as the machine has cores (two on the CI machine): a few
/// such tests on it leave the in-process servers of the tests beside them unable to answer, and those tests then fail
/// on timeouts that say nothing about what they check. Here the test runs on `DedicatedExecutor`, whose threads grow as
/// they block; at most `BlockingTestGate.width` of these tests run at once so that a suite of process-spawning tests
/// does not start dozens of children together.
public struct OffCooperativePool: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await BlockingTestGate.shared.enter()
        defer { BlockingTestGate.shared.leave() }
        try await DedicatedExecutor.run { try await function() }
    }
}

extension Trait where Self == OffCooperativePool {
    /// Each test of the suite runs on a thread of its own rather than Swift's cooperative pool (see
    /// `OffCooperativePool`).
    public static var offCooperativePool: Self { OffCooperativePool() }
}

/// How many blocking tests run at once: enough to keep two cores busy while children start and wait, few enough that
/// their children do not crowd out everything else.
public final class BlockingTestGate: Sendable {
    public static let shared = BlockingTestGate(width: max(4, ProcessInfo.processInfo.activeProcessorCount * 2))

    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let width: Int
    private let state: Mutex<State>

    init(width: Int) {
        self.width = width
        state = Mutex(State())
    }

    /// Waits, without holding a thread, until fewer than `width` blocking tests run.
    public func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if state.running < width {
                    state.running += 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    /// Lets the next waiting test run (it takes over this one's place).
    public func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
