import CofferCLI
import CofferCrypto
import CofferKit
import CofferPlatform
import CofferModel
import CofferReporting
import CofferStellar
import Foundation

extension StellarError: ReportableError {
    package var message: String { "Stellar transaction: \(description)" }
    package var hint: String? {
        switch self {
        case .notShown: "sign it with a wallet that decodes smart-contract calls"
        default: nil
        }
    }
    package var status: ExitStatus { .badData }
}

/// `coffer sign KEY --stellar-tx FILE|-`: a transaction envelope decoded and shown in full, then signed with the PIN.
struct StellarTransactionSigner {
    let source: String
    let network: StellarNetwork
    let confirmed: Bool
    let cosign: Bool
    let json: Bool

    func run(_ coffer: Coffer, _ item: Item) throws {
        guard case .signingKey(let key) = item.content, key.flavor == .stellar else {
            throw CLIError.usage("--stellar-tx signs with a Stellar key; \(item.content.name) is a raw Ed25519 key")
        }
        // Whoever types the PIN must have seen what it signs: at a terminal the PIN is asked after the summary; a
        // script without one says so with --yes (and its PIN is the first line of standard input, read first).
        let terminal = SecretInput.shared.interactive || Terminal.standardErrorIsTTY
        guard terminal || confirmed else {
            throw CLIError.usage("there is no terminal to show the transaction at before signing; pass --yes to sign it")
        }
        let scriptedPIN = terminal ? nil : try SecretInput.shared.secret("PIN")
        let envelope = try StellarEnvelope.read(base64: try envelopeText())
        for line in StellarSummary.lines(envelope, network: network) { Output.note(line) }

        let signer = StellarStrKey.encode(key.publicKey, version: .accountID)
        if envelope.isSigned(by: key.publicKey, on: network) {
            throw CLIError.badData("the envelope already carries a signature by \(signer) for this network")
        }
        if !envelope.namedSigners.contains(key.publicKey) {
            let named = envelope.feeBump != nil ? "the fee bump's fee source" : "the transaction's source or any operation's"
            guard cosign else {
                throw CLIError.other(
                    "\(item.content.name) (\(signer)) is not \(named): not signed", status: .badData,
                    hint:
                        "for a multi-signature account this key co-signs, pass --cosign (Coffer cannot check the account's signers: it does not fetch account state)"
                )
            }
            Output.note(
                "Co-signing: \(signer) is not \(named); Coffer does not fetch account state, so it cannot check that this key is one of the account's signers.")
        }
        try coffer.checkBeforePIN(item)
        let pin: String
        if let scriptedPIN {
            pin = scriptedPIN
        } else {
            guard let typed = Terminal.readSecret(prompt: "PIN for \(item.content.name) (signs the transaction above): ") else {
                throw CLIError.cancelled
            }
            pin = typed
        }
        let signature = try coffer.sign(envelope.hash(on: network), with: item, pin: pin)
        let signed = Data(try envelope.adding(signature: signature, by: key.publicKey)).base64EncodedString()
        if json {
            let object: JSONValue = [
                "summary": StellarSummary.json(envelope, network: network), "signed_envelope": .string(signed),
                "public_key": .string(signer),
            ]
            Output.line(object.text(pretty: true))
        } else {
            Output.line(signed)
        }
    }

    /// The envelope's base64 text, from the file or standard input, capped before it is read whole.
    private func envelopeText() throws -> String {
        let limit = (StellarEnvelope.maximumSize / 3 + 1) * 4 + 4096
        if source == "-" {
            let text = try SecretInput.shared.remainingText("the transaction envelope (base64 XDR)")
            guard text.utf8.count <= limit else { throw StellarError.tooLarge(limit: StellarEnvelope.maximumSize) }
            return text
        }
        guard let handle = FileHandle(forReadingAtPath: source) else {
            throw CLIError.other("\(source): no such file, or it cannot be read", status: .notFound, hint: nil)
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: limit + 1) ?? Data()
        guard data.count <= limit else { throw StellarError.tooLarge(limit: StellarEnvelope.maximumSize) }
        guard let text = String(data: data, encoding: .utf8) else { throw StellarError.notBase64 }
        return text
    }
}
