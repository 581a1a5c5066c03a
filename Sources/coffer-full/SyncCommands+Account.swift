import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKit
import CofferSync
import CofferSyncAPI
import CofferVault
import Foundation
import Synchronization

extension SyncCommand {
    struct Passphrase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passphrase",
            abstract: "Change the sync account's passphrase (asks for the current and the new one).",
            discussion: """
                The server gets a new wrapped copy of the vault key and a new auth key, together with a vault-state \
                record that names the new slot: a server that later hands out the old slot is caught. Other devices \
                keep syncing; a new device logs in with the new passphrase. This vault's own passphrase is \
                unchanged.

                Examples:
                  coffer sync passphrase
                  coffer sync passphrase --scrypt
                """)

        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Stretch the new passphrase with scrypt instead of PBKDF2.") var scrypt = false
        @OptionGroup var newPassphrase: NewPassphraseOptions

        func run() async throws {
            let coffer = try vaultOption.open()
            let session = try SyncCLI.session(coffer)
            let current = try SecretInput.shared.secret("Current sync passphrase")
            let new = try newPassphrase.read("New sync passphrase")
            let kdf: PassphraseKDF = scrypt ? .defaultScrypt : .defaultPBKDF2
            try await session.changePassphrase(current: current, new: new, kdf: kdf)
        }
    }
}

extension SyncCommand {
    struct Republish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "republish",
            abstract: "Put this device's verified vault state back on a server that was restored from a backup.",
            discussion: """
                When a server comes back from a backup, devices report that it shows an older state of the vault, \
                one they verified before. Run republish on the device that synced last: it checks that the server's \
                state is one it verified, puts back the history the server lost and pushes every item that differs, \
                with local changes. Other devices then sync as usual. A state this device never verified is refused.

                Examples:
                  coffer sync republish
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption

        func run() async throws {
            let coffer = try vaultOption.open()
            let session = try SyncCLI.session(coffer)
            let bar = SyncCLI.Progress("republishing")
            let report = try await session.republish(progress: bar.update)
            bar.finish()
            if output.json {
                try Output.json(SyncCLI.ReportJSON(report))
                return
            }
            if let head = report.head {
                Output.note("republished: \(Output.count(report.pushed, "item")), state epoch \(head.epoch), fingerprint \(head.fingerprint)")
            }
        }
    }
}

extension SyncCommand {
    struct Adopt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "adopt",
            abstract: "Accept the server's current vault state as a new device would (after a revoke or a server restore).",
            discussion: """
                A device refuses a server whose vault state is older than, or does not continue, the state it \
                verified. When that is expected (sync was revoked, or the server was restored from a backup), adopt \
                forgets this device's verified state and accepts the server's current one, which must carry the \
                fingerprint you give: read it with `coffer sync status` on a device you trust. Local changes stay \
                queued and are pushed after.

                Examples:
                  coffer sync adopt --expect 12:ABCD-EFGH-JKMN-PQRS
                  coffer sync adopt --trust-server
                """)

        @OptionGroup var vaultOption: VaultOption
        @Option(help: ArgumentHelp("The fingerprint the server's state must have (EPOCH:XXXX-XXXX-XXXX-XXXX).", valueName: "fingerprint"))
        var expect: String?
        @Flag(help: "Accept whatever state the server shows, without a fingerprint to check (trust on first use).")
        var trustServer = false

        func validate() throws {
            guard expect != nil || trustServer else {
                throw ValidationError("adopt needs --expect FINGERPRINT (from `coffer sync status` on a trusted device) or --trust-server")
            }
        }

        func run() async throws {
            let coffer = try vaultOption.open()
            let session = try SyncCLI.session(coffer)
            try session.adopt()
            let expected = expect
            _ = try await session.sync(expect: expected)
        }
    }
}

extension SyncCommand {
    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "logout", abstract: "End this device's session and unlink the vault; the items stay here.",
            discussion: """
                Examples:
                  coffer sync logout
                """)

        @OptionGroup var vaultOption: VaultOption

        func run() async throws {
            let coffer = try vaultOption.open()
            let session = try SyncCLI.session(coffer)
            try await session.logout()
        }
    }
}

extension SyncCommand {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Delete every copy the server holds of this account's items (the account and local items stay).",
            discussion: """
                Examples:
                  coffer sync revoke --yes
                """)

        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Confirm the deletion of every server copy.") var yes = false

        func validate() throws {
            guard yes else { throw ValidationError("revoke deletes every server copy; pass --yes to confirm") }
        }

        func run() async throws {
            let coffer = try vaultOption.open()
            let session = try SyncCLI.session(coffer)
            let deleted = try await session.revoke()
            Output.note("deleted \(deleted) server copies")
        }
    }
}
