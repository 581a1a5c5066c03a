#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Signals turned into bytes on a pipe (the self-pipe trick), so a loop waiting in `poll` sees them as input and
/// handles them in ordinary code rather than in a signal handler.
public enum SignalPipe {
    /// The signals a long-running process reacts to.
    public enum Signal: UInt8, Sendable {
        case hangUp = 1
        case terminate = 2
        case interrupt = 3
    }

    // Written once by `install` before any handler can run; read by the handler (write(2) is async-signal-safe).
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Installs handlers for SIGHUP, SIGTERM and SIGINT, unblocks them (a process started from a thread that blocks
    /// signals, as a dispatch worker does, inherits that mask and would never see them), and returns the pipe's read
    /// end (non-blocking).
    public static func install() -> Int32 {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return -1 }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        writeEnd = ends[1]
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGHUP, SIGTERM, SIGINT] {
            signal(number) { received in
                var byte: UInt8 =
                    received == SIGHUP ? Signal.hangUp.rawValue : received == SIGTERM ? Signal.terminate.rawValue : Signal.interrupt.rawValue
                _ = write(SignalPipe.writeEnd, &byte, 1)
            }
        }
        var handled = sigset_t()
        sigemptyset(&handled)
        for number in [SIGHUP, SIGTERM, SIGINT] { sigaddset(&handled, number) }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        return ends[0]
    }

    /// The signals that arrived since the last call.
    public static func drain(_ readEnd: Int32) -> [Signal] {
        var received: [Signal] = []
        var byte: UInt8 = 0
        while read(readEnd, &byte, 1) == 1 {
            if let signal = Signal(rawValue: byte) { received.append(signal) }
        }
        return received
    }

    /// Waits until one of `descriptors` is readable or `timeoutMilliseconds` pass (-1: no limit); returns the
    /// readable ones.
    public static func waitReadable(_ descriptors: [Int32], timeoutMilliseconds: Int32) -> [Int32] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = poll(&entries, nfds_t(entries.count), timeoutMilliseconds)
        guard count > 0 else { return [] }
        return entries.filter { $0.revents != 0 }.map(\.fd)
    }
}

/// Signals this process sends itself.
public enum SelfSignal {
    /// Stops this process (SIGSTOP) until another continues or kills it: the crash tests' fixed stopping points.
    public static func stop() {
        raise(SIGSTOP)
    }
}
