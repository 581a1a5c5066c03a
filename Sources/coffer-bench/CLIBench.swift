import ArgumentParser
import CofferKit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct CLICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cli",
        abstract: "Whole `coffer` processes on a large vault (issue 14): code, show, list, against oathtool and pass otp.",
        discussion: """
            Builds a vault of ITEMS tokens and one card with the `coffer` binary next to this one, then times whole
            processes (spawn to exit; medians of --runs) and, on a vault of --rss-items tokens, the peak resident size
            of `coffer list`. pass otp is measured when pass, pass-extension-otp and gpg are installed (Debian: pass
            pass-extension-otp).
            """)

    @Argument(help: "Items in the vault the commands run on.") var items = 10_000
    @Option(help: "Runs of each command; the median is reported (3 to 201).") var runs = 21
    @Option(help: "Items in the vault whose `coffer list` peak memory is measured (0 skips it).") var rssItems = 100_000
    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (1...1_000_000).contains(items) else { throw ValidationError("ITEMS must be 1 to 1,000,000") }
        guard (3...201).contains(runs) else { throw ValidationError("--runs must be 3 to 201") }
        guard (0...1_000_000).contains(rssItems) else { throw ValidationError("--rss-items must be 0 to 1,000,000") }
    }

    func run() throws {
        try CLIBench(items: smoke.smoke ? 10 : items, runs: smoke.smoke ? 3 : runs, rssItems: smoke.smoke ? 100 : rssItems).run()
    }
}

struct CLIBench {
    let items: Int
    let runs: Int
    let rssItems: Int

    /// The `coffer` built beside this benchmark.
    static var coffer: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("coffer").path
    }

    /// `coffer` and `coffer-full` (which makes the vaults: `init`, `add`, `import`) beside this benchmark.
    static func requireBinaries() throws {
        for tool in ["coffer", "coffer-full"] {
            let path = URL(fileURLWithPath: coffer).deletingLastPathComponent().appendingPathComponent(tool).path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw BenchError("no \(tool) at \(path): build it with `swift build -c release --static-swift-stdlib --product \(tool)`")
            }
        }
    }

    func run() throws {
        try CLIBench.requireBinaries()
        print("coffer-bench cli: \(items) items, medians of \(runs) whole processes, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let home = try Self.vault(tokens: items)
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        let environment = Self.environment(home)
        let middle = "Bench\(items / 2)"
        // The first lookup makes the catalogue; the figures are for the lookups after it.
        _ = try tool("warm", ["code", middle], environment).measure()

        // Wall time is what a person waits; on a loaded machine most of it is waiting for a core, so the CPU time the
        // process itself used is shown beside it.
        var rows: [(String, Double, Double)] = []
        func median(_ label: String, _ tool: ProcessTool) throws -> Double {
            var walls: [Double] = [], cpus: [Double] = []
            for _ in 0..<runs {
                let run = try tool.measure()
                walls.append(run.wall)
                cpus.append(run.cpu)
            }
            let value = walls.sorted()[walls.count / 2]
            rows.append((label, value, cpus.sorted()[cpus.count / 2]))
            return value
        }
        let start = try median("coffer --version (process start, the floor)", tool("version", ["--version"], environment))
        let code = try median("coffer code \(middle) (goal ≤ 6 ms)", tool("code", ["code", middle], environment))
        let show = try median("coffer show Costco, barcode drawn (target ≤ 15 ms)", tool("show", ["show", "Costco"], environment))
        let list = try median("coffer list (goal ≤ 70 ms)", tool("list", ["list"], environment))
        let oathtool = try? median(
            "oathtool --totp (the peer)", ProcessTool(label: "oathtool", executable: "/usr/bin/oathtool", arguments: ["--totp", "-b", secret]))
        let pass = try? passOTP(secret: secret).map { try median("pass otp (the peer)", $0) }
        for (label, wall, cpu) in rows { report(label, milliseconds(wall) + "   CPU " + milliseconds(cpu)) }
        if oathtool == nil { report("oathtool", "not installed (Debian: oathtool)") }
        if pass == nil { report("pass otp", "not installed (Debian: pass pass-extension-otp)") }
        if let oathtool { report("  code / oathtool", String(format: "%.1f×", code / oathtool)) }
        if let pass = pass ?? nil { report("  code / pass otp", String(format: "%.2f×", code / pass)) }
        report("  code less process start", milliseconds(code - start))
        report("  show less process start", milliseconds(show - start))
        report("  list less process start", milliseconds(list - start))

        if rssItems > 0 {
            let big = try Self.vault(tokens: rssItems)
            let listing = try tool("list", ["list"], Self.environment(big)).measure()
            report("coffer list of \(rssItems) items: peak RSS (goal ≤ 100 MB)", String(format: "%.1f MB", Double(listing.peakRSS) / 1e6))
            report("  its time", milliseconds(listing.wall) + "   CPU " + milliseconds(listing.cpu))
            try? FileManager.default.removeItem(atPath: big)
        }
        try? FileManager.default.removeItem(atPath: home)
    }

    private func tool(_ label: String, _ arguments: [String], _ environment: [String]) -> ProcessTool {
        ProcessTool(label: "coffer \(label)", executable: Self.coffer, arguments: arguments, environment: environment)
    }

    static func environment(_ home: String) -> [String] {
        ["HOME=\(home)", "XDG_DATA_HOME=\(home)/data", "XDG_RUNTIME_DIR=\(home)", "NO_COLOR=1", "COFFER_VAULT=\(home)/data/coffer/vault"]
    }

    /// A home directory whose vault holds `tokens` TOTP tokens (`BenchN`) and one card (`Costco`, an EAN-13).
    static func vault(tokens: Int) throws -> String {
        let home = NSTemporaryDirectory() + "coffer-bench-cli-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let environment = Self.environment(home)
        try run(["init"], environment: environment)
        try run(["add", "card", "Costco", "--symbology", "ean13"], input: "590123412345\n", environment: environment)
        var lines = ""
        lines.reserveCapacity(tokens * 96)
        for index in 0..<tokens {
            let secret = Base32.encode(Array(SHA1Seed.bytes(index)))
            lines += "otpauth://totp/Bench\(index):user\(index)%40example.org?secret=\(secret)&issuer=Bench\(index)\n"
        }
        let file = home + "/tokens.txt"
        try lines.write(toFile: file, atomically: true, encoding: .utf8)
        try run(["import", "--from", "otpauth", file], environment: environment)
        try FileManager.default.removeItem(atPath: file)
        return home
    }

    /// This process's environment with `assignments` (`NAME=value`) added or replacing.
    static func environmentAdding(_ assignments: [String]) -> [String: String] {
        var merged = ProcessInfo.processInfo.environment
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1)
            merged[String(parts[0])] = parts.count == 2 ? String(parts[1]) : ""
        }
        return merged
    }

    static func run(_ arguments: [String], input: String = "", environment: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: coffer)
        process.arguments = arguments
        process.environment = environmentAdding(environment)
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("coffer \(arguments.first ?? ""): exit \(process.terminationStatus): \(message)")
        }
    }

    /// `pass otp bench` in a throwaway password store and GnuPG home (a key without passphrase), or nil when pass,
    /// its otp extension or gpg is missing.
    private func passOTP(secret: String) throws -> ProcessTool? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/pass"),
            FileManager.default.fileExists(atPath: "/usr/lib/password-store/extensions/otp.bash"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg")
        else { return nil }
        let home = NSTemporaryDirectory() + "coffer-bench-pass-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home + "/gnupg", withIntermediateDirectories: true)
        chmod(home + "/gnupg", 0o700)
        let environment = ["GNUPGHOME=\(home)/gnupg", "PASSWORD_STORE_DIR=\(home)/store", "HOME=\(home)"]
        func shell(_ command: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            process.environment = CLIBench.environmentAdding(environment)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchError("pass set-up failed: \(command)") }
        }
        try shell("gpg --batch --passphrase '' --quick-gen-key bench@coffer.invalid default default never")
        try shell("pass init bench@coffer.invalid")
        try shell("echo 'otpauth://totp/Bench:user?secret=\(secret)&issuer=Bench' | pass otp insert bench")
        return ProcessTool(label: "pass otp", executable: "/usr/bin/pass", arguments: ["otp", "bench"], environment: environment)
    }
}

/// Deterministic 20-byte token secrets for the benchmark vault.
private enum SHA1Seed {
    static func bytes(_ index: Int) -> [UInt8] {
        var state = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        return (0..<20).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }
}
