import ArgumentParser
import CofferCLI
import CofferKit
import CofferSync
import CofferVault
import Foundation

/// `--pin-sha256` and `--pin-first-use` of `coffer sync register|login`.
struct PinOptions: ParsableArguments {
    @Option(
        name: .customLong("pin-sha256"),
        help: ArgumentHelp(
            "Accept only a server whose certificate's public key (SubjectPublicKeyInfo) has this SHA-256, in base64, as curl's --pinnedpubkey sha256//… takes it.",
            valueName: "base64"))
    var pinSHA256: String?
    @Flag(help: "Pin the public key the https server presents now (trust on first use) and accept only that key from then on.")
    var pinFirstUse = false

    /// The client for `server`: pinned to the flag's key, to the key presented now (first use), or to `stored`, this
    /// vault's pin, which a login or register without a pin flag keeps.
    func validate() throws {
        if pinSHA256 != nil, pinFirstUse { throw ValidationError("give --pin-sha256 or --pin-first-use, not both") }
        if let pinSHA256, ServerKeyPin(pinSHA256) == nil {
            throw ValidationError("--pin-sha256 must be the base64 of a 32-byte SHA-256 (optionally after sha256//)")
        }
    }

    func client(_ server: String, stored: ServerKeyPin?) async throws -> SyncClient {
        if let pin = pinSHA256.flatMap(ServerKeyPin.init) {
            return try SyncCLI.client(server, pin: pin)
        }
        if pinFirstUse {
            let probe = try SyncCLI.client(server, pin: stored)
            let pin = try await probe.presentedKey()
            return try SyncCLI.client(server, pin: pin)
        }
        return try SyncCLI.client(server, pin: stored)
    }
}

extension SyncCommand {
    /// `coffer sync pin`: show, set or renew the pin of the sync server's public key.
    struct Pin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin",
            abstract: "Show or change the pin of the sync server's public key (checked on every connection).",
            discussion: """
                With no option, prints the pin (sha256//BASE64) or `none`. Before a planned change of the server's \
                key, pin the new key with --sha256 (the operator tells it: openssl x509 -in cert.pem -pubkey -noout \
                | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64). --reset pins the key \
                the server presents now and --remove stops pinning; both need --yes, as they accept whatever key is \
                presented.

                Examples:
                  coffer sync pin
                  coffer sync pin --sha256 gsc4Ad6vTH/DH4ATThDbaYnW+9LNaVVLbGLOKcF0my8=
                  coffer sync pin --reset --yes
                """)

        @OptionGroup var vaultOption: VaultOption
        @Option(help: ArgumentHelp("Pin this key instead (base64 SHA-256, optionally after sha256//).", valueName: "base64"))
        var sha256: String?
        @Flag(help: "Pin the key the server presents now.") var reset = false
        @Flag(help: "Stop pinning.") var remove = false
        @Flag(help: "Confirm --reset or --remove.") var yes = false

        func validate() throws {
            guard [sha256 != nil, reset, remove].filter({ $0 }).count <= 1 else {
                throw ValidationError("give one of --sha256, --reset and --remove")
            }
            if let sha256, ServerKeyPin(sha256) == nil {
                throw ValidationError("--sha256 must be the base64 of a 32-byte SHA-256 (optionally after sha256//)")
            }
            if reset, !yes { throw ValidationError("--reset trusts whatever key the server presents now; pass --yes to confirm") }
            if remove, !yes { throw ValidationError("--remove stops checking the server's key; pass --yes to confirm") }
        }

        func run() async throws {
            let coffer = try vaultOption.open()
            let current = try coffer.serverKeyPin()
            if let pin = sha256.flatMap(ServerKeyPin.init) {
                try coffer.setServerKeyPin(pin)
                print(pin)
            } else if reset {
                guard let account = try coffer.syncAccount() else { throw SyncError.notLinked }
                let probe = try SyncCLI.client(account.server)
                let pin = try await probe.presentedKey()
                try coffer.setServerKeyPin(pin)
                print(pin)
            } else if remove {
                try coffer.setServerKeyPin(nil)
            } else {
                print(current.map(\.description) ?? "none")
            }
        }
    }
}
