import CofferCLI
import CofferTestSupport
import Foundation
import Testing

/// What every `coffer` process pays for before it does anything: the shared libraries the loader maps and relocates,
/// and the code linked in. `coffer` runs the everyday commands itself and becomes `coffer-full` for the rest.
@Suite("coffer start-up", .offCooperativePool)
struct StartupTests {
    static var fullBinary: String { URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("coffer-full").path }

    static func binutils(_ tool: String, _ arguments: [String]) throws -> String {
        let result = try TestSupport.run("/usr/bin/env", [tool] + arguments)
        try #require(result.status == 0, "\(tool) (binutils): \(result.stderr)")
        return String(decoding: result.standardOutput, as: UTF8.self)
    }

    /// libxml2 (with the system's ICU and liblzma) cost each command about 2 ms when FoundationXML was linked for the
    /// KeePass importer; the importer now loads it when it runs. Debug builds name FoundationXML's own library,
    /// release builds (Foundation linked in) libxml2.
    @Test("neither executable needs an XML library at start: KeePass import loads libxml2 when it runs", arguments: ["coffer", "coffer-full"])
    func noXMLLibraryAtStart(_ tool: String) throws {
        let path = tool == "coffer" ? CLI.binary : Self.fullBinary
        let needed = try Self.binutils("readelf", ["--dynamic", path]).split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libc.so") }, "readelf's answer lists the libraries")
        #expect(!needed.contains { $0.contains("xml2") || $0.contains("FoundationXML") }, "\(needed)")
    }

    /// The sync client (NIO, TLS, HTTP/2), places' position sources and the whole command tree are coffer-full's: in
    /// `coffer` they would cost every `coffer code` their relocations and protocol conformances.
    @Test("coffer links the everyday commands only; coffer-full has the rest")
    func everydayExecutableIsSmall() throws {
        let lean = try Self.binutils("nm", ["--defined-only", CLI.binary])
        let full = try Self.binutils("nm", ["--defined-only", Self.fullBinary])
        for module in ["7NIOCore", "10CofferSync", "9CofferCue", "11coffer_full"] {
            #expect(!lean.contains(module), "coffer links \(module)")
            #expect(full.contains(module), "the symbol names changed: \(module) is not in coffer-full either")
        }
        #expect(lean.contains("9CofferCLI16EverydayCommands"))
    }

    @Test("without coffer-full beside it, coffer still runs the everyday commands and names what is missing for the rest")
    func withoutTheFullCommandLine() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco", "--symbology", "ean13"], input: "5901234123457\n")
        let alone = try TestSupport.temporaryDirectory("coffer-alone")
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: alone + "/coffer")
        let list = try TestSupport.run(alone + "/coffer", ["list"], environment: cli.environment)
        #expect(list.status == 0 && list.stdout.contains("Costco"), "\(list.stderr)")
        for arguments in [["sync", "status"], ["code", "--help"], ["lst"]] {
            let result = try TestSupport.run(alone + "/coffer", arguments, environment: cli.environment)
            #expect(result.status == 69, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 2 && lines[0].hasPrefix("coffer: error: coffer-full, which runs this command, is not installed beside coffer"))
            #expect(lines.last?.hasPrefix("coffer: hint: build it (swift build --product coffer-full)") == true)
            #expect(result.stdout.isEmpty)
        }
        // `--clip` starts `coffer clipboard-restore` from this very program: clearing must not need coffer-full.
        let restorer = try TestSupport.run(alone + "/coffer", ["clipboard-restore", "1"], environment: cli.environment)
        #expect(restorer.status == 0, "\(restorer.stderr)")
        try? FileManager.default.removeItem(atPath: alone)
    }

    @Test("a coffer-full that another user could have written is never run", arguments: [0o755, 0o775, 0o757])
    func plantedFullCommandLine(fileMode: Int) throws {
        let cli = try CLI()
        let directory = try TestSupport.temporaryDirectory("coffer-planted")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: directory + "/coffer")
        let planted = directory + "/coffer-full"
        try Data("#!/bin/sh\necho planted ran \"$@\"\n".utf8).write(to: URL(fileURLWithPath: planted))
        try FileManager.default.setAttributes([.posixPermissions: fileMode], ofItemAtPath: planted)
        for directoryMode in [0o700, 0o777] {
            try FileManager.default.setAttributes([.posixPermissions: directoryMode], ofItemAtPath: directory)
            let result = try TestSupport.run(directory + "/coffer", ["sync", "status"], environment: cli.environment)
            if fileMode == 0o755, directoryMode == 0o700 {
                // Owned by this user and writable by no one else: run, with the same arguments.
                #expect(result.status == 0 && result.stdout == "planted ran sync status\n", "\(result.stderr)")
            } else {
                #expect(result.status == 69 && result.stdout.isEmpty, "\(result.stderr)")
                #expect(result.stderr.hasPrefix("coffer: error: \(planted) is not run: it, or its directory, is writable by or belongs to another user"))
            }
        }
    }

    /// Modes alone cannot show the owner rule: a file mode 0755 in a 0700 directory, owned by another user, must be
    /// refused too. Root may hand files to another user (CI runs as root), so the case runs there.
    @Test(
        "a coffer-full, or its directory, owned by another user (not root) is never run", .enabled(if: geteuid() == 0, "needs root to chown"),
        arguments: ["file", "directory"])
    func plantedByAnotherUser(owned: String) throws {
        let cli = try CLI()
        let directory = try TestSupport.temporaryDirectory("coffer-owned")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: CLI.binary, toPath: directory + "/coffer")
        let planted = directory + "/coffer-full"
        try Data("#!/bin/sh\necho planted ran \"$@\"\n".utf8).write(to: URL(fileURLWithPath: planted))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: planted)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        // Owned by root, writable by no one else: run.
        let trusted = try TestSupport.run(directory + "/coffer", ["sync", "status"], environment: cli.environment)
        #expect(trusted.status == 0 && trusted.stdout == "planted ran sync status\n", "\(trusted.stderr)")
        #expect(chown(owned == "file" ? planted : directory, 65534, 65534) == 0)
        let result = try TestSupport.run(directory + "/coffer", ["sync", "status"], environment: cli.environment)
        #expect(result.status == 69 && result.stdout.isEmpty, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("coffer: error: \(planted) is not run: it, or its directory, is writable by or belongs to another user"))
    }

    @Test("coffer-full is looked for beside coffer, then in the prefix's libexec when coffer is in a bin; never relative to the working directory")
    func whereTheFullCommandLineIs() {
        #expect(
            FullCommandLine.candidates(besides: "/home/ada/.local/bin") == [
                "/home/ada/.local/bin/coffer-full", "/home/ada/.local/libexec/coffer/coffer-full",
            ])
        // A build directory, or a copy somewhere: beside it only (not /tmp/libexec, which anyone may make).
        #expect(FullCommandLine.candidates(besides: "/tmp/x") == ["/tmp/x/coffer-full"])
        #expect(FullCommandLine.candidates(besides: "/bin").allSatisfy { $0.hasPrefix("/") })
    }

    @Test("coffer-full gets the arguments, standard input and exit status as they were")
    func handOverKeepsEverything() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        // A note read from standard input, through `add` (coffer-full's), then shown by the everyday `show`.
        try cli.ok(["add", "note", "Door code"], input: "2468 then #\n")
        #expect(try cli.ok(["show", "Door code"]).stdout.contains("2468 then #"))
        let missing = try cli.run(["edit", "No such item", "--name", "x"])
        #expect(missing.status == 66 && missing.stderr.hasPrefix("coffer: error:"))
    }
}
