import ArgumentParser
import CofferPlatform
import CofferReporting
import Crypto
import Foundation

/// The desktop clipboard, through the tool the session has (as pass does): wl-copy on Wayland, xclip or xsel on X11,
/// pbcopy on macOS. A copied secret is taken back after `COFFER_CLIP_TIME` seconds (45 by default) by a small
/// detached `coffer` process, which puts back what the clipboard held before, unless something else was copied since.
package struct Clipboard {
    package let copy: [String]
    package let paste: [String]
    package let clear: [String]?

    package static let defaultSeconds = 45

    /// The first tool that fits the session, or nil.
    package static func find(environment: [String: String] = processEnvironment) -> Clipboard? {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        func exists(_ tool: String) -> Bool {
            path.split(separator: ":").contains { access("\($0)/\(tool)", X_OK) == 0 }
        }
        if environment["WAYLAND_DISPLAY"] != nil, exists("wl-copy"), exists("wl-paste") {
            return Clipboard(copy: ["wl-copy"], paste: ["wl-paste", "--no-newline"], clear: ["wl-copy", "--clear"])
        }
        if environment["DISPLAY"] != nil, exists("xclip") {
            return Clipboard(copy: ["xclip", "-selection", "clipboard"], paste: ["xclip", "-selection", "clipboard", "-o"], clear: nil)
        }
        if environment["DISPLAY"] != nil, exists("xsel") {
            return Clipboard(copy: ["xsel", "--clipboard", "--input"], paste: ["xsel", "--clipboard", "--output"], clear: ["xsel", "--clipboard", "--clear"])
        }
        if exists("pbcopy"), exists("pbpaste") {
            return Clipboard(copy: ["pbcopy"], paste: ["pbpaste"], clear: nil)
        }
        return nil
    }

    /// Why there is no clipboard: no display to hold one (a console, SSH without forwarding), or no tool for it.
    static func unavailable(environment: [String: String] = processEnvironment) -> CLIError {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        let tools = ["wl-copy", "xclip", "xsel"].filter { tool in path.split(separator: ":").contains { access("\($0)/\(tool)", X_OK) == 0 } }
        let display = environment["WAYLAND_DISPLAY"] != nil || environment["DISPLAY"] != nil
        if !tools.isEmpty, !display {
            return CLIError.other(
                "there is no display, so no clipboard (\(tools.joined(separator: ", ")) need a desktop session)", status: .unavailable,
                hint: "run it in a desktop session (or with SSH X forwarding); or leave out --clip")
        }
        return CLIError.other(
            "no clipboard tool found", status: .unavailable,
            hint: "install wl-clipboard (Wayland), xclip or xsel (X11); or leave out --clip")
    }

    /// How long a copied secret stays: `COFFER_CLIP_TIME` seconds (1 to 3600), else 45.
    package static func seconds(environment: [String: String] = processEnvironment) -> Int {
        guard let text = environment["COFFER_CLIP_TIME"], let value = Int(text), (1...3600).contains(value) else { return defaultSeconds }
        return value
    }

    /// Copies `secret` and arranges for it to be taken back; says so on standard error. What the clipboard held is
    /// handed to the restoring process through a pipe, never through its arguments or environment.
    package static func copy(_ secret: String, what: String) throws {
        guard let clipboard = find() else { throw unavailable() }
        let previous = (try? run(clipboard.paste, input: nil)) ?? []
        _ = try run(clipboard.copy, input: Array(secret.utf8))
        let seconds = Self.seconds()
        try startRestorer(seconds: seconds, secret: Array(secret.utf8), previous: previous)
        Output.note("Copied \(what) to the clipboard; it is cleared in \(seconds) s.")
    }

    /// Starts `coffer clipboard-restore` in its own session, so that it outlives this process and the terminal.
    private static func startRestorer(seconds: Int, secret: [UInt8], previous: [UInt8]) throws {
        guard let executable = Executables.current() else { throw CLIError.failure("cannot find the coffer program to clear the clipboard") }
        let process = Process()
        // This very program: `coffer` runs `clipboard-restore` itself, so clearing never depends on coffer-full.
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [ClipboardRestore.configuration.commandName!, String(seconds)]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The digest identifies the secret without handing it over; the previous content goes back as it was.
        var message = Array(SHA256.hash(data: secret)) + previous
        input.fileHandleForWriting.write(Data(message))
        try? input.fileHandleForWriting.close()
        message.withUnsafeMutableBytes { SecureMemory.zero($0) }
    }

    /// Runs a clipboard tool, feeding it `input`, and returns its standard output.
    @discardableResult
    package static func run(_ command: [String], input: [UInt8]?) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let output = Pipe()
        process.standardOutput = input == nil ? output : FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        do {
            try process.run()
        } catch {
            throw CLIError.other("cannot run \(command[0])", status: .unavailable, hint: nil)
        }
        if let input {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        let bytes = input == nil ? Array(output.fileHandleForReading.readDataToEndOfFile()) : []
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError.other("\(command[0]) could not use the clipboard (status \(process.terminationStatus))", status: .unavailable, hint: nil)
        }
        return bytes
    }
}

/// `coffer clipboard-restore SECONDS` (hidden): started by `--clip`, with the copied secret's SHA-256 and the earlier
/// clipboard on standard input. Waits, then puts the earlier content back if the clipboard still holds the secret.
package struct ClipboardRestore: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(commandName: "clipboard-restore", shouldDisplay: false)

    @Argument package var seconds: Int

    /// What this command does, in plain values.
    package var work: Work { Work(seconds: seconds) }

    package func run() throws { try work.run() }

    package struct Work: EverydayWork {
        package var seconds: Int

        package func run() throws {
            ProcessSession.detachFromTerminal()
            let message = Array(FileHandle.standardInput.readDataToEndOfFile())
            guard message.count >= 32, let clipboard = Clipboard.find() else { return }
            let digest = Array(message[0..<32])
            let previous = Array(message[32...])
            Thread.sleep(forTimeInterval: TimeInterval(max(1, min(seconds, 3600))))
            guard let current = try? Clipboard.run(clipboard.paste, input: nil), Array(SHA256.hash(data: current)) == digest else { return }
            if previous.isEmpty, let clear = clipboard.clear {
                _ = try? Clipboard.run(clear, input: nil)
            } else {
                _ = try? Clipboard.run(clipboard.copy, input: previous)
            }
        }
    }
}
