#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The terminal whose echo a pending prompt turned off, for the interrupt handler to restore. Written only by
/// the main thread around a prompt; read by the signal handler.
nonisolated(unsafe) private var interruptedTerminal: (Int32, termios)?

/// The one place for terminal and standard-stream calls: TTY checks, echo-less reading, window width, reading
/// standard input whole.
package enum Terminal {
    package static var standardInputIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    package static var standardOutputIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    package static var standardErrorIsTTY: Bool { isatty(STDERR_FILENO) == 1 }

    /// Columns of the terminal on standard output, or nil when it is not a terminal.
    package static var columns: Int? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Standard input, whole, refusing more than `limit` bytes.
    ///
    /// Typed at a terminal (`typed`), it ends at Ctrl-D at the start of a line, or at Ctrl-D after text on a line:
    /// the terminal hands such a line over without its newline; read as a pipe is read, it would take a second
    /// Ctrl-D to end, and whatever the user typed next (the next command) would go into the text.
    package static func readStandardInput(limit: Int, typed: Bool) throws(StandardInputError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: typed ? 4096 : 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .unreadable(String(cString: strerror(code)))
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { throw .tooLarge(limit: limit) }
            if typed, chunk[count - 1] != 0x0A, count < chunk.count {
                // What comes next (the command's own output, the shell's prompt) starts on a line of its own.
                writeError("\n")
                return bytes
            }
        }
    }

    /// Prompts on the controlling terminal and reads one line with echo off. Nil when there is no terminal.
    package static func readSecret(prompt: String) -> String? {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var original = termios()
        guard tcgetattr(descriptor, &original) == 0 else { return nil }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ECHONL)
        writeString(prompt, to: descriptor)
        // Ctrl-C at the prompt must not leave the terminal without echo.
        interruptedTerminal = (descriptor, original)
        let previous = signal(SIGINT) { _ in
            if let saved = interruptedTerminal {
                var settings = saved.1
                _ = tcsetattr(saved.0, TCSAFLUSH, &settings)
                _ = write(saved.0, "\n", 1)
            }
            _exit(130)
        }
        guard tcsetattr(descriptor, TCSAFLUSH, &silent) == 0 else { return nil }
        defer {
            _ = tcsetattr(descriptor, TCSAFLUSH, &original)
            signal(SIGINT, previous)
            interruptedTerminal = nil
        }
        return readLine(from: descriptor)
    }

    /// Asks a yes/no question on the controlling terminal (echo on). Only "y" or "yes" is yes, unless `defaultYes`,
    /// when an empty answer is yes too. Nil when there is no terminal or the answer is end of input (Ctrl-D).
    package static func confirm(_ question: String, defaultYes: Bool = false) -> Bool? {
        guard let answer = readVisible(prompt: "\(question) \(defaultYes ? "[Y/n]" : "[y/N]") ") else { return nil }
        let word = answer.trimmingCharacters(in: .whitespaces).lowercased()
        return ["y", "yes"].contains(word) || (defaultYes && word.isEmpty)
    }

    /// Prompts on the controlling terminal and reads one line with echo on, for what is not a secret (a card's
    /// payload, an issuer). Nil when there is no terminal or the answer is end of input (Ctrl-D).
    package static func readVisible(prompt: String) -> String? {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        writeString(prompt, to: descriptor)
        guard let answer = readLine(from: descriptor) else {
            writeString("\n", to: descriptor)
            return nil
        }
        return answer
    }

    /// Writes `text` to standard error.
    package static func writeError(_ text: String) {
        writeString(text, to: STDERR_FILENO)
    }

    private static func writeString(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 { return }
            offset += written
        }
    }

    private static func readLine(from descriptor: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(descriptor, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
            if bytes.count > 65_536 { break }
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}

/// Why standard input could not be read whole.
package enum StandardInputError: Error, Equatable {
    /// The system refused the read, with its reason (`strerror`).
    case unreadable(String)
    /// More than `limit` bytes came.
    case tooLarge(limit: Int)
}
