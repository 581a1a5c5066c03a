import ArgumentParser
import CofferAgent
import CofferAgentWire
import CofferCLI
import CofferCrypto
import CofferKit
import CofferPlatform
import Foundation

/// `coffer agent start | status | stop`: a process that keeps passphrase-only vaults unlocked for a while.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Keep passphrase-only vaults unlocked in a background process for a while.",
        discussion: """
            The agent holds the vault's keys in locked, non-dumpable memory and does the decryption itself; commands \
            ask it over a socket in $XDG_RUNTIME_DIR/coffer that only this user can reach. It locks after --idle \
            without use, after --max at most, on `coffer lock` and on SIGHUP; SIGTERM wipes and stops it.

            Examples:
              coffer agent start
              coffer agent status --json
              coffer agent stop
            """,
        subcommands: [Start.self, Status.self, Stop.self, Serve.self])

    static var socket: String { Agent.socketPath(environment: processEnvironment) }
}

/// `--idle` and `--max`, as `10m`, `12h`, `90s` or plain seconds.
struct AgentTimeoutOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Lock a vault after this long without use, such as 30s, 10m or 1h.", valueName: "duration"))
    var idle = "10m"
    @Option(help: ArgumentHelp("Lock a vault this long after it was unlocked, used or not.", valueName: "duration"))
    var max = "12h"

    func validate() throws {
        guard let idle = Self.milliseconds(idle), let maximum = Self.milliseconds(max) else {
            throw ValidationError("a duration is a number of seconds, or a number followed by s, m or h (10m, 12h)")
        }
        guard idle >= 1000, maximum >= idle, maximum <= 7 * 86_400_000 else {
            throw ValidationError("--idle is at least 1s and at most --max; --max is at most 7 days")
        }
    }

    var timeouts: AgentTimeouts {
        AgentTimeouts(idleMilliseconds: Self.milliseconds(idle) ?? 0, maximumMilliseconds: Self.milliseconds(max) ?? 0)
    }

    static func milliseconds(_ text: String) -> UInt64? {
        let units: [Character: UInt64] = ["s": 1000, "m": 60_000, "h": 3_600_000]
        let unit = text.last.flatMap { units[$0] }
        guard let number = UInt64(unit == nil ? Substring(text) : text.dropLast()), number <= 1_000_000 else { return nil }
        return number * (unit ?? 1000)
    }
}

extension AgentCommand {
    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start the agent if it is not running, and unlock the vault in it (asks the passphrase).",
            discussion: """
                The passphrase is read from the terminal without echo, or from standard input, and sent over the \
                socket only after the agent is checked to run as this user.

                Examples:
                  coffer agent start
                  coffer agent start --idle 5m --max 8h
                  coffer agent start --vault ~/work-vault
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var timeoutOptions: AgentTimeoutOptions

        func run() throws {
            let socket = AgentCommand.socket
            let location = vaultOption.location
            // A vault that is missing, or opens without a passphrase, needs no agent: say so before starting one.
            do {
                _ = try Coffer.open(at: location)
                Output.note("This vault opens with this device's key, without a passphrase: the agent is not needed for it.")
                return
            } catch CofferError.needsSecret {
            } catch let failure as KeystoreError where failure.storeCannotAnswer {
            }
            // The passphrase first: an agent started for a passphrase never typed would be left running for nothing.
            let passphrase = try SecretInput.shared.secret("Passphrase")
            var started = false
            if let running = try Agent.status(socket: socket) {
                let asked = timeoutOptions.timeouts
                if running.idleTimeoutMilliseconds != asked.idleMilliseconds || running.maximumMilliseconds != asked.maximumMilliseconds {
                    Output.note(
                        "The running agent keeps its own times (\(Status.duration(running.idleTimeoutMilliseconds)) idle, \(Status.duration(running.maximumMilliseconds)) at most); `coffer agent stop` first to change them."
                    )
                }
            } else {
                try launch(socket: socket)
                started = true
            }
            do {
                try Agent.unlock(location, passphrase: passphrase, socket: socket)
            } catch {
                // An agent this command started and that holds nothing goes again (a wrong passphrase, a vault it
                // cannot open); one that was already running keeps what it holds.
                if started { _ = try? Agent.stop(socket: socket) }
                throw error
            }
            if started, let status = try Agent.status(socket: socket), status.protections & 1 == 0 {
                Output.warning("the agent's memory is not locked (RLIMIT_MEMLOCK is limited): its pages could reach swap")
            }
        }

        /// Starts `coffer agent serve` in a session of its own (so the terminal's hang-up does not reach it), with
        /// nothing on its standard streams, and waits until it answers.
        private func launch(socket: String) throws {
            let process = Process()
            // This very binary (its real path, so `ps` shows what runs).
            guard let executable = Executables.current() else {
                throw CLIError.failure("cannot tell where coffer-full is installed, so cannot start the agent")
            }
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["agent", "serve", "--detach", "--idle", timeoutOptions.idle, "--max", timeoutOptions.max]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<200 {
                if (try Agent.status(socket: socket)) != nil { return }
                if !process.isRunning { break }
                usleep(25_000)
            }
            throw CLIError.failure("the agent did not start; `coffer agent serve` runs it in the foreground and shows why")
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the vaults the agent holds and when each locks.",
            discussion: """
                A status query is not a use: it never delays a lock.

                Examples:
                  coffer agent status
                  coffer agent status --json
                """)

        @OptionGroup var output: JSONOption

        struct Report: Encodable {
            struct Held: Encodable {
                let vault: String
                let vaultID: String
                let locksInSeconds: UInt64
                enum CodingKeys: String, CodingKey {
                    case vault
                    case vaultID = "vault_id"
                    case locksInSeconds = "locks_in_seconds"
                }
            }
            let running: Bool
            let pid: Int32?
            let idleSeconds: UInt64?
            let maxSeconds: UInt64?
            let memoryLocked: Bool?
            let dumpable: Bool?
            let vaults: [Held]
            enum CodingKeys: String, CodingKey {
                case running, pid, vaults
                case idleSeconds = "idle_seconds", maxSeconds = "max_seconds", memoryLocked = "memory_locked", dumpable
            }
        }

        func run() throws {
            let status = try Agent.status(socket: AgentCommand.socket)
            let held = (status?.vaults ?? []).map { vault in
                Report.Held(
                    vault: vault.vault, vaultID: vault.vaultID.count == 16 ? UUID(bytes: vault.vaultID).lowercasedString : "",
                    locksInSeconds: Swift.min(vault.idleRemainingMilliseconds, vault.absoluteRemainingMilliseconds) / 1000)
            }
            if output.json {
                try Output.json(
                    Report(
                        running: status != nil, pid: status?.processID, idleSeconds: status.map { $0.idleTimeoutMilliseconds / 1000 },
                        maxSeconds: status.map { $0.maximumMilliseconds / 1000 }, memoryLocked: status.map { $0.protections & 1 != 0 },
                        dumpable: status.map { $0.protections & 2 == 0 }, vaults: held))
                return
            }
            guard let status else {
                Output.line("No agent is running. `coffer agent start` starts one.")
                return
            }
            Output.line(
                "Agent \(status.processID) at \(AgentCommand.socket): locks after \(Self.duration(status.idleTimeoutMilliseconds)) idle, \(Self.duration(status.maximumMilliseconds)) at most"
            )
            if status.protections & 1 == 0 {
                Output.warning("the agent's memory is not locked (RLIMIT_MEMLOCK is limited): its pages could reach swap")
            }
            if held.isEmpty { Output.line("No vault unlocked.") }
            for vault in held {
                Output.line("\(vault.vault)  locks in \(Self.duration(vault.locksInSeconds * 1000))")
            }
        }

        static func duration(_ milliseconds: UInt64) -> String {
            let seconds = milliseconds / 1000
            if seconds >= 3600 { return "\(seconds / 3600)h\(seconds % 3600 / 60 > 0 ? "\(seconds % 3600 / 60)m" : "")" }
            if seconds >= 60 { return "\(seconds / 60)m\(seconds % 60 > 0 ? "\(seconds % 60)s" : "")" }
            return "\(seconds)s"
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lock every vault and stop the agent.",
            discussion: """
                Examples:
                  coffer agent stop
                """)

        func run() throws {
            if !(try Agent.stop(socket: AgentCommand.socket)) {
                Output.note("No agent is running.")
            }
        }
    }

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the agent in the foreground (for a service manager; `coffer agent start` runs it in the background).",
            discussion: """
                contrib/systemd/coffer-agent.service runs it as a systemd user service.

                Examples:
                  coffer agent serve
                  coffer agent serve --idle 10m --max 12h
                """)

        @OptionGroup var timeoutOptions: AgentTimeoutOptions
        @Flag(help: .hidden) var detach = false

        /// Set in the environment of the agent that restarted itself with the wiping allocator.
        static let restarted = "COFFER_AGENT_WIPING_ALLOCATOR"

        func run() throws {
            // Before anything is read or decrypted: the allocator that wipes what is freed is chosen at start-up.
            // Once only: the C library may rewrite the variable as it reads it.
            if processEnvironment[Self.restarted] == nil,
                let tunables = ProcessHardening.wipingAllocatorEnvironment(current: processEnvironment["GLIBC_TUNABLES"])
            {
                guard let executable = Executables.current() else {
                    throw CLIError.failure("cannot tell where coffer-full is installed, so cannot restart the agent with a wiping allocator")
                }
                try ProcessLauncher.replaceProcess(
                    program: executable, arguments: CommandLine.arguments, extraEnvironment: ["GLIBC_TUNABLES": tunables, Self.restarted: "1"])
            }
            if detach { ProcessSession.detachFromTerminal() }
            let environment = processEnvironment
            let core = AgentCore(timeouts: timeoutOptions.timeouts) { path in
                CofferLocation.standard(environment: environment, vaultOverride: path)
            }
            do {
                try AgentServer(socketPath: AgentCommand.socket, core: core).run()
            } catch {
                throw CLIError.failure(error.description)
            }
        }
    }
}

/// `coffer lock`: the agent forgets every vault now.
struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock", abstract: "Lock every vault the agent holds.",
        discussion: """
            Examples:
              coffer lock
            """)

    func run() throws {
        if !(try Agent.lock(nil, socket: AgentCommand.socket)) {
            Output.note("No agent is running.")
        }
    }
}
