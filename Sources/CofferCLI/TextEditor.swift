import CofferPlatform
import CofferReporting
import Foundation

/// Text edited in the user's own editor, as `pass edit` and `git commit` do it: `$VISUAL`, else `$EDITOR`, else `vi`,
/// run through `/bin/sh` so an editor given with options (`code --wait`) works. The text exists in the clear only in a
/// 0600 file inside a fresh 0700 directory on `/dev/shm` (memory, never a disk) while the editor runs; afterwards every
/// file in that directory, the editor's swap and backup files too, is overwritten with zeros and removed.
package enum TextEditor {
    /// The largest text read back, as for standard input.
    package static let limit = SecretInput.standardInputLimit

    /// Opens `text` in the editor and returns the text saved, without the trailing newline editors add. Throws when
    /// the editor fails or exits non-zero (the user gave up, as with `:cq`): nothing is changed then.
    package static func edit(_ text: String, fileName: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let editor = editorCommand(environment)
        let scratchParent: String
        if PrivateFiles.exists("/dev/shm") {
            scratchParent = "/dev/shm"
        } else {
            scratchParent = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            Terminal.writeError("coffer: warning: /dev/shm is missing, so the text is in \(scratchParent) while you edit it\n")
        }
        let directory = try PrivateFiles.createScratchDirectory(in: scratchParent, prefix: "coffer-edit.")
        defer { PrivateFiles.wipeScratchDirectory(directory) }
        let path = "\(directory)/\(safeFileName(fileName))"
        try PrivateFiles.write(Array((text.isEmpty ? "" : text + "\n").utf8), to: path)
        let status: Int32
        do {
            status = try ChildProcess.runInForeground(["/bin/sh", "-c", "\(editor) \"$1\"", "coffer-edit", path])
        } catch {
            throw CLIError.launch("cannot start the editor: \(error)", status: .cannotExecute)
        }
        guard status == 0 else {
            throw CLIError.other(
                "the editor (\(editor)) exited with status \(status); nothing was changed", status: .failure,
                hint: "set VISUAL or EDITOR to the editor you use")
        }
        let bytes: [UInt8]
        do {
            bytes = try PrivateFiles.read(path, limit: limit)
        } catch .notFound {
            throw CLIError.failure("the editor removed the file instead of saving it; nothing was changed")
        } catch {
            throw CLIError.failure("\(error)")
        }
        guard let edited = String(validating: bytes, as: UTF8.self) else {
            throw CLIError.badData("the text saved is not valid UTF-8; nothing was changed")
        }
        return String(edited.reversed().drop { $0 == "\n" || $0 == "\r\n" }.reversed())
    }

    /// The editor command line: `VISUAL`, then `EDITOR`, then `vi`, as POSIX tools choose one.
    package static func editorCommand(_ environment: [String: String]) -> String {
        for name in ["VISUAL", "EDITOR"] {
            if let command = environment[name]?.trimmingCharacters(in: .whitespaces), !command.isEmpty { return command }
        }
        return "vi"
    }

    /// A file name that says what is edited (editors show it, and choose a syntax by it) from characters a shell and
    /// every file system take as they are.
    private static func safeFileName(_ name: String) -> String {
        let kept = name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar)) ? Character(scalar) : "-"
        }
        let stem = String(kept.prefix(60)).trimmingCharacters(in: CharacterSet(charactersIn: "-."))
        return (stem.isEmpty ? "note" : stem) + ".txt"
    }
}
