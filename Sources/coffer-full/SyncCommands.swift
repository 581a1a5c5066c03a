import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKit
import CofferPlatform
import CofferSync
import CofferSyncAPI
import CofferVault
import Foundation
import Synchronization

/// `coffer sync`: push local changes and pull remote ones; subcommands link, inspect and unlink the account.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync this vault through a coffer-server (end-to-end encrypted).",
        discussion: """
            The server stores only encrypted items and a wrapped copy of the vault key; it never sees the \
            passphrase.

            Every pull is verified: the server must show a state of the vault that a device holding its key \
            published, continuing the newest one this device verified, with every row it commits to. A server that \
            drops, replays, rolls back or forges anything is refused and nothing is applied.

            Examples:
              coffer sync register --server https://sync.example.org --email ada@x.org
              coffer sync login --server https://sync.example.org --email ada@x.org
              coffer sync                          # push and pull
              coffer sync status
            """,
        subcommands: [
            SyncCommand.Now.self, SyncCommand.Register.self, SyncCommand.Login.self, SyncCommand.Status.self, SyncCommand.Passphrase.self,
            SyncCommand.Republish.self,
            SyncCommand.Adopt.self, SyncCommand.Logout.self, SyncCommand.Revoke.self, SyncCommand.Pin.self,
        ],
        defaultSubcommand: SyncCommand.Now.self)
}

extension SyncCommand {
    struct Now: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "now", abstract: "Push local changes and pull remote ones (the default).",
            discussion: """
                Examples:
                  coffer sync
                  coffer sync now --json
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption

        func run() async throws {
            let coffer = try vaultOption.open()
            var session = try SyncCLI.session(coffer)
            let bar = SyncCLI.Progress("syncing")
            let first: Result<SyncReport, any Error>
            do {
                first = .success(try await session.sync(progress: bar.update))
            } catch {
                first = .failure(error)
            }
            bar.finish()
            let report: SyncReport
            switch first {
            case .success(let done):
                report = done
            case .failure(let error):
                guard case SyncError.verification(.newerKeyEpoch) = error, Terminal.standardInputIsTTY else { throw error }
                // Another device rotated the master key: at a terminal, the sync passphrase takes the new one here.
                Output.note("another device changed the vault's master key: your sync passphrase takes the new one")
                guard let account = try coffer.syncAccount() else { throw SyncError.notLinked }
                let passphrase = try SecretInput.shared.secret("Sync passphrase")
                session = try await SyncCLI.login(
                    location: coffer.location, client: session.client, email: account.account, passphrase: passphrase,
                    allowWeakKDF: false, acceptParameterChange: false, expect: nil)
                let again = SyncCLI.Progress("syncing")
                report = try await session.sync(progress: again.update)
                again.finish()
            }
            if let rotation = report.finishedRotation { SyncCLI.announce(rotation, json: output.json) }
            if output.json {
                try Output.json(SyncCLI.ReportJSON(report))
                return
            }
            if report.merge.conflictCopies > 0 {
                Output.warning(
                    "\(Output.count(report.merge.conflictCopies, "item")) changed here and elsewhere: the other version won, yours is kept as a copy (see `coffer sync status`)"
                )
            }
        }
    }
}

extension SyncCommand {
    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register", abstract: "Create a sync account for this vault (asks for the account passphrase).",
            discussion: """
                Examples:
                  coffer sync register --server https://sync.example.org --email ada@x.org
                  coffer sync register --server URL --email ada@x.org --pin-first-use
                """)

        @OptionGroup var vaultOption: VaultOption
        @Option(help: "Server URL (https://, or http:// on loopback).") var server: String
        @Option(help: "Account email.") var email: String
        @Flag(help: "Stretch the passphrase with scrypt instead of PBKDF2.") var scrypt = false
        @OptionGroup var pinning: PinOptions
        @OptionGroup var newPassphrase: NewPassphraseOptions

        func run() async throws {
            let coffer = try vaultOption.open()
            let client = try await pinning.client(server, stored: try coffer.serverKeyPin())
            let passphrase = try newPassphrase.read("Sync passphrase")
            let session = SyncSession(coffer: coffer, client: client)
            let kdf: PassphraseKDF = scrypt ? .defaultScrypt : .defaultPBKDF2
            try await session.register(email: email, passphrase: passphrase, kdf: kdf)
            try coffer.setServerKeyPin(client.pin)
            let bar = SyncCLI.Progress("uploading")
            let report = try await session.sync(progress: bar.update)
            bar.finish()
            Output.note("Registered \(email) on \(server); pushed \(Output.count(report.pushed, "item")).")
            if let head = report.head {
                Output.note("State epoch \(head.epoch), fingerprint \(head.fingerprint). On another device:")
                Output.note("  coffer sync login --server \(server) --email \(email) --expect \(head.fingerprint)")
            }
        }
    }
}

extension SyncCommand {
    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "Log in to a sync account; on a device without a vault, creates this device's copy and pulls it.",
            discussion: """
                Compare the fingerprint with `coffer sync status` on a device you trust, and give it with --expect: \
                a server that shows this device another vault state is then refused before anything is stored.

                Examples:
                  coffer sync login --server https://sync.example.org --email ada@x.org
                  coffer sync login --server URL --email EMAIL --expect 12:ABCD-EFGH-JKMN-PQRS
                """)

        @OptionGroup var vaultOption: VaultOption
        @Option(help: "Server URL (https://, or http:// on loopback).") var server: String
        @Option(help: "Account email.") var email: String
        @Option(
            help: ArgumentHelp(
                "The vault-state fingerprint to expect, as `coffer sync status` shows it on another device (EPOCH:XXXX-XXXX-XXXX-XXXX).",
                valueName: "fingerprint"))
        var expect: String?
        @Flag(help: "Accept passphrase stretching below Coffer's defaults (PBKDF2 600,000 or scrypt 2^15), for an account made that way.")
        var allowWeakKdf = false
        @Flag(help: "Accept account stretching parameters that differ from the ones this device knows.")
        var acceptParameterChange = false
        @OptionGroup var pinning: PinOptions

        func run() async throws {
            let location = vaultOption.location
            let stored = location.vaultExists ? try vaultOption.open().serverKeyPin() : nil
            let client = try await pinning.client(server, stored: stored)
            let passphrase = try SecretInput.shared.secret("Sync passphrase")
            let session = try await SyncCLI.login(
                location: location, client: client, email: email, passphrase: passphrase, allowWeakKDF: allowWeakKdf,
                acceptParameterChange: acceptParameterChange, expect: expect)
            try session.coffer.setServerKeyPin(client.pin)
            let bar = SyncCLI.Progress("downloading")
            let expected = expect
            let report = try await session.sync(expect: expected, progress: bar.update)
            bar.finish()
            let verified = report.head.map { "; verified state epoch \($0.epoch), fingerprint \($0.fingerprint)" } ?? ""
            Output.note("Logged in as \(email) on \(server); pulled \(Output.count(report.pulled, "item"))\(verified).")
        }
    }
}

extension SyncCommand {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Show the account, queued changes and conflict copies.",
            discussion: """
                Examples:
                  coffer sync status
                  coffer sync status --json
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption

        func run() async throws {
            let coffer = try vaultOption.open()
            let session = try SyncCLI.session(coffer)
            let status = try await session.status()
            let conflicts = status.conflicts.map { copy in
                SyncCLI.ConflictJSON(
                    copy: copy.copyID.lowercasedString, original: copy.originalID.lowercasedString,
                    name: (try? coffer.item(id: copy.copyID).content.name) ?? "", detectedAt: copy.detectedAt)
            }
            let head = try session.verifiedHead()
            let headJSON = head.map { head in
                SyncCLI.HeadJSON(
                    epoch: head.manifest.epoch, fingerprint: head.manifest.fingerprint,
                    device: head.manifest.device.lowercasedString, madeHere: head.madeHere,
                    madeAt: UnixTime.date(milliseconds: head.manifest.madeAt))
            }
            if output.json {
                try Output.json(
                    SyncCLI.StatusJSON(
                        server: status.account.server, account: status.account.account, online: status.server != nil,
                        lastSync: status.account.lastSync, pending: status.pending, serverItems: status.server?.itemCount,
                        verified: headJSON, serverEpoch: status.server?.headEpoch, conflicts: conflicts))
                return
            }
            Output.line("account   \(status.account.account) on \(status.account.server)")
            Output.line("server    \(status.server.map { "reachable, \(Output.count($0.itemCount, "item")), state epoch \($0.headEpoch)" } ?? "unreachable")")
            Output.line("last sync \(status.account.lastSync.map { ISO8601DateFormatter().string(from: $0) } ?? "never")")
            if let headJSON {
                let maker = headJSON.madeHere ? "this device" : "device \(headJSON.device.prefix(8))"
                Output.line("verified  epoch \(headJSON.epoch), made by \(maker) at \(ISO8601DateFormatter().string(from: headJSON.madeAt))")
                Output.line("          fingerprint \(headJSON.fingerprint) (the same on every device that is up to date)")
            } else {
                Output.line("verified  nothing yet (run `coffer sync`)")
            }
            Output.line("queued    \(status.pending) local changes")
            if conflicts.isEmpty {
                Output.line("conflicts none")
            } else {
                Output.line("conflicts \(Output.count(conflicts.count, "copy", "copies")) kept (yours lost to a change made elsewhere):")
                for conflict in conflicts {
                    Output.line("  \(conflict.copy.prefix(8))  \(conflict.name)  (copy of \(conflict.original.prefix(8)))")
                }
            }
        }
    }
}

/// What the sync commands share: the progress bar, logging in, the client and the session of a linked vault.
enum SyncCLI {
    /// The progress bar, shared with the sync task.
    final class Progress: Sendable {
        private let bar: Mutex<ProgressBar>

        init(_ label: String) {
            bar = Mutex(ProgressBar(label: label))
        }

        @Sendable func update(_ done: Int, _ total: Int) {
            bar.withLock { $0.update(done, of: total) }
        }

        func finish() {
            bar.withLock { $0.finish() }
        }
    }

    /// Logs in (`SyncSession.login`); when another device rotated the master key and this vault's own passphrase is
    /// not the account's, asks for it once. Says what a key change did.
    static func login(
        location: CofferLocation, client: SyncClient, email: String, passphrase: String, allowWeakKDF: Bool,
        acceptParameterChange: Bool, expect: String?
    ) async throws -> SyncSession {
        var vaultPassphrase: String?
        while true {
            let attempt: Result<SyncSession, any Error>
            do {
                attempt = .success(
                    try await SyncSession.login(
                        location: location, client: client, email: email, passphrase: passphrase, localPassphrase: vaultPassphrase,
                        allowWeakKDF: allowWeakKDF, acceptParameterChange: acceptParameterChange, expect: expect))
            } catch {
                attempt = .failure(error)
            }
            if case .failure(let error) = attempt {
                guard case SyncError.vaultPassphraseNeeded = error else { throw error }
                guard vaultPassphrase == nil else { throw VaultError.wrongPassphrase }
                // The master key was rotated on another device; this vault's own passphrase slot needs its passphrase.
                Output.note("this vault has a passphrase of its own: it is needed to re-wrap it under the new key")
                vaultPassphrase = try SecretInput.shared.secret("This vault's passphrase")
                continue
            }
            let session = try attempt.get()
            if let keyChange = session.keyChange {
                let items = Output.count(keyChange.itemCount, "item")
                Output.note("this vault now uses the master key another device rotated to (\(items) re-encrypted here)")
                announce(keyChange)
            }
            return session
        }
    }

    /// Shows the new recovery code a key change made, once: on standard output, or beside it when that carries JSON.
    static func announce(_ rotation: Vault.RotationResult, json: Bool = false) {
        guard let code = rotation.recoveryCode else { return }
        Output.note("The old recovery code no longer works. New recovery code (shown once):")
        if json {
            Output.note(code)
        } else {
            Output.line(code)
        }
    }

    static func client(_ server: String, pin: ServerKeyPin? = nil) throws -> SyncClient {
        do {
            return try SyncClient(server: server, pin: pin, retry: retryPolicy)
        } catch {
            throw CLIError.usage(error.description)
        }
    }

    /// The standard retries, said once per run on standard error: a user waiting through a failover sees why.
    static let retryPolicy = RetryPolicy(window: RetryPolicy.standard.window) { notice in
        guard retryNoticeShown.exchange(true, ordering: .relaxed) == false else { return }
        switch notice.reason {
        case .busy: Output.note("coffer: the sync server is busy, retrying…")
        case .unreachable: Output.note("coffer: the sync server went away, retrying…")
        }
    }

    private static let retryNoticeShown = Atomic<Bool>(false)

    static func session(_ coffer: Coffer) throws -> SyncSession {
        guard let account = try coffer.syncAccount() else {
            throw SyncError.notLinked
        }
        return SyncSession(coffer: coffer, client: try client(account.server, pin: try coffer.serverKeyPin()))
    }

    struct ReportJSON: Encodable {
        let pulled: Int, pushed: Int, applied: Int, conflictCopies: Int, mergedCounters: Int, cursor: Int64
        let epoch: Int64?, fingerprint: String?
        init(_ report: SyncReport) {
            pulled = report.pulled
            pushed = report.pushed
            applied = report.merge.applied
            conflictCopies = report.merge.conflictCopies
            mergedCounters = report.merge.mergedCounters
            cursor = report.cursor
            epoch = report.head?.epoch
            fingerprint = report.head?.fingerprint
        }
        enum CodingKeys: String, CodingKey {
            case pulled, pushed, applied, cursor, epoch, fingerprint
            case conflictCopies = "conflict_copies"
            case mergedCounters = "merged_counters"
        }
    }

    struct ConflictJSON: Encodable {
        let copy: String, original: String, name: String, detectedAt: Date
        enum CodingKeys: String, CodingKey {
            case copy, original, name
            case detectedAt = "detected_at"
        }
    }

    struct HeadJSON: Encodable {
        let epoch: Int64, fingerprint: String, device: String, madeHere: Bool, madeAt: Date
        enum CodingKeys: String, CodingKey {
            case epoch, fingerprint, device
            case madeHere = "made_here"
            case madeAt = "made_at"
        }
    }

    struct StatusJSON: Encodable {
        let server: String, account: String, online: Bool, lastSync: Date?, pending: Int, serverItems: Int?
        let verified: HeadJSON?, serverEpoch: Int64?
        let conflicts: [ConflictJSON]
        enum CodingKeys: String, CodingKey {
            case server, account, online, pending, conflicts, verified
            case lastSync = "last_sync"
            case serverItems = "server_items"
            case serverEpoch = "server_epoch"
        }
    }
}
