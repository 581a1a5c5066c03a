import Foundation

/// Secrets come from the terminal without echo, or from standard input (one line per secret, in the order the
/// command asks for them); never from arguments.
final class SecretInput: @unchecked Sendable {
    static let shared = SecretInput()
    static let standardInputLimit = 1 << 20

    // Filled once, on first use, from standard input; only touched from the main task.
    private var pending: [Substring]?

    /// Whether secrets are prompted for on a terminal.
    var interactive: Bool { Terminal.standardInputIsTTY }

    /// One secret line. On a terminal, prompts (twice when `confirm`); otherwise takes the next line of stdin.
    func secret(_ what: String, confirm: Bool = false) throws -> String {
        if interactive {
            guard let first = Terminal.readSecret(prompt: "\(what): ") else { throw CLIError.noInput(what) }
            if confirm {
                guard let second = Terminal.readSecret(prompt: "Repeat \(what.lowercased()): ") else { throw CLIError.noInput(what) }
                guard first == second else { throw CLIError.usage("the two entries do not match") }
            }
            return first
        }
        let lines = try standardInputLines()
        guard let line = lines.first else { throw CLIError.noInput(what) }
        pending = Array(lines.dropFirst())
        return String(line)
    }

    /// Everything left on standard input (for multi-line values such as note text or a message to sign).
    func remainingText(_ what: String) throws -> String {
        if interactive {
            Terminal.writeError("Enter \(what), then Ctrl-D:\n")
        }
        if interactive {
            return String(decoding: try readAllStandardInput(), as: UTF8.self)
        }
        let lines = try standardInputLines()
        pending = []
        return lines.joined(separator: "\n")
    }

    /// Raw bytes of standard input (messages to sign, binary payloads).
    func remainingBytes() throws -> [UInt8] {
        if let pending {
            self.pending = []
            return Array(pending.joined(separator: "\n").utf8)
        }
        return try readAllStandardInput()
    }

    private func standardInputLines() throws -> [Substring] {
        if let pending { return pending }
        let text = String(decoding: try readAllStandardInput(), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r") ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        pending = lines
        return lines
    }

    private func readAllStandardInput() throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = try FileHandle.standardInput.read(upToCount: 65_536), !chunk.isEmpty {
            bytes += chunk
            if bytes.count > Self.standardInputLimit { throw CLIError.usage("standard input is larger than 1 MiB") }
        }
        return bytes
    }
}
