import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferInterop
import CofferKit
import CofferPlatform
import CofferReporting
import Foundation

extension Add {
    struct NewToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "otp",
            abstract: "Add a 2FA token from an otpauth:// URI or a base32 secret.",
            discussion: """
                At a terminal, paste the otpauth:// URI or the base32 secret a site shows under "can't scan the \
                code?"; for a secret, the issuer and account are asked next. From a script, standard input holds the \
                URI (several, one a line, are added together: all of them, or none if one is not valid), or the \
                secret with --account.

                With --scan, the QR code is read from a screenshot or photo (PNG or JPEG): an otpauth:// code, or a \
                Google Authenticator export (otpauth-migration://), whose every token is added (their ids a line \
                each; with --json, an array, as one picture can hold several).

                Examples:
                  coffer add otp                     # then paste the URI or the secret
                  coffer add otp < uri.txt           # otpauth://totp/GitHub:alice?…
                  coffer add otp --scan github-2fa.png
                  coffer add otp --issuer GitHub --account alice   # then the secret
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption
        @Option(help: "Issuer (service name); fills in when a URI has none.") var issuer: String?
        @Option(help: "Account name; when given, a base32 secret is read instead of a URI.") var account: String?
        @Option(help: "totp, hotp or steam (with --account).") var type: String = "totp"
        @Option(help: "SHA1, SHA256 or SHA512 (with --account).") var algorithm: String = "SHA1"
        @Option(help: "Digits, 6 to 8 (with --account).") var digits: Int?
        @Option(help: "TOTP period in seconds (with --account).") var period: Int = 30
        @Option(help: "HOTP counter: the next value to use (with --account).") var counter: UInt64 = 0
        @Option(name: .customLong("tag"), help: "Tag (repeatable).") var tags: [String] = []
        @Option(help: ArgumentHelp("Read the token's QR code from a screenshot or photo (PNG or JPEG).", valueName: "image"))
        var scan: String?

        func validate() throws {
            if scan != nil, account != nil {
                throw ValidationError("--scan reads the token from its QR code; --account is for a typed secret")
            }
        }

        func run() throws {
            if let scan {
                try addScanned(scan)
                return
            }
            let otp: OTPItem
            let input = SecretInput.shared
            if let account {
                otp = try token(secret: try input.secret("Secret (base32)"), issuer: issuer ?? "", account: account)
            } else {
                let typed = try input.secret(input.interactive ? "otpauth:// URI or base32 secret" : "otpauth:// URI")
                    .trimmingCharacters(in: .whitespaces)
                if typed.lowercased().hasPrefix("otpauth://") {
                    otp = try OTPItem(token: try OTPToken(uri: typed), issuer: issuer, tags: tags)
                    // A script that pipes in a list: every URI is added, or none.
                    if !input.interactive {
                        let more = try input.remainingText("more otpauth:// URIs").split(whereSeparator: \.isNewline)
                            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                        if !more.isEmpty {
                            try addAll(
                                [otp]
                                    + more.enumerated().map { index, line in
                                        do {
                                            return try OTPItem(token: try OTPToken(uri: line), issuer: issuer, tags: tags)
                                        } catch {
                                            throw CLIError.badData("standard input, line \(index + 2): \(Self.reason(error)); nothing was added")
                                        }
                                    })
                            return
                        }
                    }
                } else if input.interactive {
                    // A bare secret, as sites show it under "can't scan the code?": checked first, then what it is for.
                    _ = try Self.decodedSecret(typed)
                    let issuerName = try issuer ?? input.visibleLine("Issuer (e.g. GitHub)")
                    let accountName = try input.visibleLine("Account (e.g. you@example.org)")
                    otp = try token(secret: typed, issuer: issuerName, account: accountName)
                } else {
                    throw CLIError.usage("standard input holds no otpauth:// URI; for a bare base32 secret give --account (and --issuer)")
                }
            }
            let coffer = try vaultOption.openItems()
            let item = try coffer.add(.otp(otp))
            try reportAdded(item, in: coffer, json: output.json)
        }

        /// Several tokens at once, in one transaction; those the vault already holds are skipped, as on import.
        private func addAll(_ tokens: [OTPItem]) throws {
            let coffer = try vaultOption.open()
            let summary = try coffer.addImported(tokens.map { .otp($0) })
            if !summary.duplicates.isEmpty {
                Output.note("Skipped \(summary.duplicates.count) already in the vault: \(summary.duplicates.joined(separator: ", "))")
            }
            if output.json {
                try Output.json(summary.items.map { ItemSummary($0, now: Date()) })
            } else {
                for item in summary.items { Output.line(item.id.lowercasedString) }
            }
        }

        private static func reason(_ error: any Error) -> String {
            (error as? any ReportableError)?.message ?? "not an otpauth:// URI"
        }

        /// Every token in the picture's codes, listed and confirmed at a terminal, added in one transaction.
        private func addScanned(_ path: String) throws {
            let codes = try ImageScan.codes(in: path)
            guard !codes.isEmpty else { throw ImageScan.nothingFound(path) }
            let read = ScannedCodes.tokens(codes)
            var tokens: [OTPItem] = []
            for case .otp(var token) in read.items {
                if token.issuer.isEmpty, let issuer { token.issuer = issuer }
                token.tags = Array(Set(token.tags + tags)).sorted()
                try token.validate()
                tokens.append(token)
            }
            for problem in read.problems { Output.warning(problem.description) }
            guard !tokens.isEmpty else {
                if codes.allSatisfy({ $0.kind == .card }) {
                    throw CLIError.other(
                        "\(path): the code holds no otpauth:// URI", status: .badData,
                        hint: "a card's barcode is added with: coffer add card NAME --scan \(path)")
                }
                throw CLIError.badData("\(path): no token could be read")
            }
            if SecretInput.shared.interactive {
                Output.note("Found \(Output.count(tokens.count, "token")): \(tokens.map(\.displayName).joined(separator: ", ")).")
                guard Terminal.confirm(tokens.count == 1 ? "Add this token?" : "Add them?", defaultYes: true) == true else {
                    throw CLIError.cancelled
                }
            }
            // One transaction; a token the vault already holds (same secret and account) is skipped, as on import.
            try addAll(tokens)
        }

        /// A token from a base32 secret and the options' parameters.
        private func token(secret text: String, issuer: String, account: String) throws -> OTPItem {
            guard let algorithm = OTPAlgorithm(name: algorithm) else { throw OTPError.unsupportedAlgorithm }
            let kind: OTPParameters.Kind
            switch type.lowercased() {
            case "totp": kind = .totp(period: period)
            case "hotp": kind = .hotp(counter: counter)
            case "steam": kind = .steam
            default: throw OTPError.unsupportedType
            }
            let parameters = try OTPParameters(secret: try Self.decodedSecret(text), algorithm: algorithm, digits: digits, kind: kind)
            let otp = try OTPItem(issuer: issuer, account: account, parameters: parameters, tags: tags)
            // An account an otpauth:// URI cannot carry (a colon) would leave the token out of URI exports.
            _ = try otp.token()
            return otp
        }

        static func decodedSecret(_ text: String) throws -> [UInt8] {
            do {
                return try Base32.decode(text)
            } catch {
                throw CLIError.badData(base32Problem(text))
            }
        }

        /// Where a typed secret stops being base32. The position and the kind of character are named, never the
        /// character itself: it is part of a secret.
        static func base32Problem(_ text: String) -> String {
            let ignored = Set(" \t-=".unicodeScalars)
            for (offset, character) in text.unicodeScalars.enumerated() where !ignored.contains(character) {
                let upper = Character(character).uppercased()
                if upper.count == 1, let scalar = upper.unicodeScalars.first, ("A"..."Z").contains(scalar) || ("2"..."7").contains(scalar) {
                    continue
                }
                let digit = ("0"..."9").contains(character)
                return "the secret is not valid base32: character \(offset + 1) is "
                    + (digit
                        ? "a digit base32 does not use (it has A–Z and 2–7; a 0, 1 or 8 is usually the letter O, I or B)"
                        : "not in its alphabet (A–Z and 2–7)")
            }
            return "the secret is not valid base32: data after the = padding"
        }
    }
}
