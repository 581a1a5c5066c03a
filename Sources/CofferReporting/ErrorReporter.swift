import ArgumentParser
import CofferPlatform
import Foundation

/// The exit codes of `coffer` and `coffer-server`, one per row of the README's "Exit codes" table (sysexits(3)
/// where one fits). `ExitCodeTests` checks the table and the codes real failures give against each other.
package enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    /// I/O, storage, or anything without a better code.
    case failure = 1
    /// Bad arguments, an unknown command, missing input, a confirmation left out, a name several items match.
    case usage = 64
    /// Input that cannot be used: invalid item fields, URI or seed; a damaged or newer-format vault.
    case badData = 65
    /// No vault, no such item or slot, no places for a position.
    case notFound = 66
    /// A server, gpsd or the key store cannot be reached; a library an importer needs is not installed.
    case unavailable = 69
    /// Already exists.
    case alreadyExists = 73
    /// Try again: something changed meanwhile, the key store is locked, the terminal is too narrow.
    case tryAgain = 75
    /// The sync server broke the protocol.
    case protocolViolation = 76
    /// Not permitted: a wrong passphrase, recovery code or PIN; a locked key; no device key; a session ended.
    case notPermitted = 77
    /// `coffer-server`: its configuration cannot be used (data directory, signing keys, TLS files, database URL).
    case configuration = 78
    /// `coffer run`: the program cannot be executed.
    case cannotExecute = 126
    /// `coffer run`: there is no such program.
    case noProgram = 127
}

/// An error as a program reports it: one line that never holds a secret, an optional hint (`coffer: hint:`), and the
/// exit code. Each program makes the library errors it meets conform, in one place (CofferCLI's Errors.swift,
/// coffer-server's), so that commands throw library errors as they come and `ErrorReporter` reports them all the
/// same way.
package protocol ReportableError: Error {
    var message: String { get }
    var hint: String? { get }
    var status: ExitStatus { get }
}

extension ReportableError where Self: CustomStringConvertible {
    package var message: String { description }
}

extension ReportableError {
    /// Most errors say all there is in their one line.
    package var hint: String? { nil }
}

/// How every failure reaches the user: `PROGRAM: error: …` on standard error, an optional `PROGRAM: hint: …`, and
/// the exit code of its row in ``ExitStatus``. `coffer`, `coffer-full` and `coffer-server` report through it.
package struct ErrorReporter: Sendable {
    /// The name each line starts with.
    package let program: String

    package init(program: String) {
        self.program = program
    }

    /// Prints `failure` (and its hint) the way every command reports errors, and exits with its code.
    package func exit(reporting failure: any ReportableError) -> Never {
        Terminal.writeError("\(program): error: \(failure.message)\n")
        if let hint = failure.hint { Terminal.writeError("\(program): hint: \(hint)\n") }
        Foundation.exit(failure.status.rawValue)
    }

    /// Reports any error a command's parsing or run throws: ours as above; ArgumentParser's help and version output
    /// as it prints them; its parse and validation errors in our form, with the hint `hint` finds for the message.
    package func exit(
        reporting error: any Error, of command: any ParsableArguments.Type, hint: (String) -> String? = { _ in nil }
    ) -> Never {
        if let failure = error as? any ReportableError { exit(reporting: failure) }
        let code = command.exitCode(for: error)
        if code == .success { command.exit(withError: error) }
        // ArgumentParser's message starts with its own "Error: "; ours already says "PROGRAM: error:".
        var message = command.fullMessage(for: error)
        if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
        exit(reporting: ParserFailure(message: message, status: ExitStatus(rawValue: code.rawValue) ?? .usage, hint: hint(message)))
    }
}

/// ArgumentParser's parse or validation error, reworded as ours.
private struct ParserFailure: ReportableError {
    let message: String
    let status: ExitStatus
    let hint: String?
}
