import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKeystore
import CofferKit
import CofferPlatform
import Foundation

struct KeystoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keystore",
        abstract: "Where this device keeps the vault's keys: file, secret-service (GNOME Keyring, KWallet, KeePassXC), keychain or tpm2.",
        discussion: """
            The store is chosen by --keystore, else COFFER_KEYSTORE, else this device's record for the vault \
            (written when the vault was created or unlocked here). A locked or unreachable store is reported as \
            such: Coffer never takes it for an empty one.

            Examples:
              coffer keystore status
              coffer keystore migrate --to secret-service
            """,
        subcommands: [Status.self, Migrate.self], defaultSubcommand: Status.self)

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Which store holds this vault's keys here, and whether it answers.",
            discussion: """
                Examples:
                  coffer keystore status
                  coffer keystore status --json
                """)
        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption

        struct Report: Encodable {
            let vault: String
            let keystore: String
            let source: String
            let status: String
            let reason: String?
            let deviceKey: String
            /// The store an interrupted `coffer keystore migrate` has yet to delete copies from.
            let unfinishedMoveFrom: String?

            enum CodingKeys: String, CodingKey {
                case vault, keystore, source, status, reason
                case deviceKey = "device_key"
                case unfinishedMoveFrom = "unfinished_move_from"
            }
        }

        func run() throws {
            let location = vaultOption.location
            let vaultID = try location.vaultID()
            let resolved = try location.keystore(for: vaultID, creating: false)
            let status = resolved.store.status()
            var reason: String?
            if case .unreachable(let why) = status { reason = why }
            let record = try location.deviceRecords?.record(for: vaultID)
            let unfinished = record?.keystore == resolved.store.kind ? record?.previous : nil
            let deviceKey: String
            switch status {
            case .available:
                do {
                    let key = try resolved.store.secret(for: "vault-\(vaultID.lowercasedString)-device")
                    deviceKey = key == nil ? "absent" : "present"
                } catch .sealedElsewhere {
                    deviceKey = "sealed by another machine's TPM"
                } catch {
                    deviceKey = "unknown"
                    reason = error.description
                }
            case .locked, .unreachable: deviceKey = "unknown"
            }
            let report = Report(
                vault: vaultID.lowercasedString, keystore: resolved.store.kind.rawValue, source: resolved.source,
                status: status.name, reason: reason, deviceKey: deviceKey, unfinishedMoveFrom: unfinished?.rawValue)
            if output.json {
                try Output.json(report)
                return
            }
            Output.line("keystore    \(report.keystore) (\(report.source))")
            Output.line("status      \(report.status)" + (reason.map { ": \($0)" } ?? ""))
            Output.line("device key  \(report.deviceKey)")
            if let warning = Init.fileStoreWarning(resolved.store, passphrase: false) { Output.warning(warning) }
            if let unfinished {
                Output.line("unfinished  copies left in the \(unfinished.displayName): `coffer keystore migrate --to \(report.keystore)` deletes them")
            }
        }
    }

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move this vault's keys to another store: copy, check, record, then delete from the old store.",
            discussion: """
                A crash at any point leaves a vault that opens; running the command again finishes the move.

                Examples:
                  coffer keystore migrate --to secret-service
                  coffer keystore migrate --to file
                """)
        @OptionGroup var vaultOption: VaultOption
        @Option(help: ArgumentHelp("The store to move to: file, secret-service, keychain or tpm2.", valueName: "store"))
        var to: String
        @Option(name: .customLong("stop-after"), help: ArgumentHelp(visibility: .private))
        var stopAfter: Coffer.KeystoreMigrationStep?

        func validate() throws {
            guard case .kind? = KeystoreChoice(to) else {
                throw ValidationError("--to takes file, secret-service, keychain or tpm2")
            }
        }

        func run() throws {
            guard case .kind(let kind)? = KeystoreChoice(to) else { return }
            let coffer = try vaultOption.open()
            let target = vaultOption.location.keystore(kind)
            _ = try coffer.migrateKeys(to: target) { step in
                // Crash tests stop the process here and kill it: each step must leave a vault that opens.
                if step == stopAfter { SelfSignal.stop() }
            }
        }
    }
}

extension Coffer.KeystoreMigrationStep: ExpressibleByArgument {}
