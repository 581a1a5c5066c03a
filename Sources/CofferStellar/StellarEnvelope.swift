import CofferModel
import Crypto
import Foundation

/// The network a transaction is for: its passphrase is part of every transaction hash, so a signature made for the
/// test network is worthless on the public one.
public struct StellarNetwork: Sendable, Equatable {
    public let passphrase: String

    public init(passphrase: String) { self.passphrase = passphrase }

    public static let `public` = StellarNetwork(passphrase: "Public Global Stellar Network ; September 2015")
    public static let testnet = StellarNetwork(passphrase: "Test SDF Network ; September 2015")
    public static let futurenet = StellarNetwork(passphrase: "Test SDF Future Network ; October 2022")

    /// `public`, `testnet` or `futurenet`.
    public init?(name: String) {
        switch name.lowercased() {
        case "public", "pubnet", "mainnet": self = .public
        case "testnet", "test": self = .testnet
        case "futurenet": self = .futurenet
        default: return nil
        }
    }

    var id: [UInt8] { Array(SHA256.hash(data: Array(passphrase.utf8))) }
}

/// A `TransactionEnvelope` (v0, v1 or fee bump), decoded, with the bytes it was read from.
public struct StellarEnvelope: Sendable {
    public enum Kind: Sendable, Equatable {
        case v0, v1, feeBump
    }

    /// A fee-bump envelope's outer transaction: who pays the fee, and how much at most.
    public struct FeeBump: Sendable, Equatable {
        public let feeSource: String
        public let fee: Int64
        let feeSourceKey: [UInt8]
        /// The signatures the inner transaction already carries.
        public let innerSignatureCount: Int
    }

    public let kind: Kind
    /// The transaction (a fee bump's inner one).
    public let transaction: StellarTransaction
    public let feeBump: FeeBump?
    /// The signatures the envelope already carries (a fee bump's outer ones).
    public var signatureCount: Int { signatures.count }

    private let bytes: [UInt8]
    /// The bytes the hash covers: the transaction, or the fee-bump transaction.
    private let signedPart: Range<Int>
    /// Where the envelope's (outer) signature count is.
    private let signaturesOffset: Int
    private let signatures: [(hint: [UInt8], signature: [UInt8])]

    /// The largest envelope read: 100 operations of the longest kind fit in a fraction of it.
    public static let maximumSize = 256 * 1024

    /// An envelope as base64 text (surrounding white space ignored).
    public static func read(base64 text: String) throws(StellarError) -> StellarEnvelope {
        let trimmed = text.filter { !$0.isWhitespace }
        guard trimmed.utf8.count <= (maximumSize / 3 + 1) * 4 else { throw .tooLarge(limit: maximumSize) }
        guard let data = Data(base64Encoded: trimmed), !data.isEmpty else { throw .notBase64 }
        return try read(Array(data))
    }

    public static func read(_ bytes: [UInt8]) throws(StellarError) -> StellarEnvelope {
        guard bytes.count <= maximumSize else { throw .tooLarge(limit: maximumSize) }
        var reader = XDRReader(bytes)
        let kind: Kind
        let transaction: StellarTransaction
        var feeBump: FeeBump?
        let start: Int
        switch try reader.discriminant("the envelope type") {
        case 0:
            kind = .v0
            start = reader.position
            transaction = try StellarXDR.transaction(&reader, v0: true)
        case 2:
            kind = .v1
            start = reader.position
            transaction = try StellarXDR.transaction(&reader, v0: false)
        case 5:
            kind = .feeBump
            start = reader.position
            let source = try StellarXDR.muxedAccount(&reader, "the fee source")
            let fee = try reader.int64("the fee-bump fee")
            let inner = try reader.discriminant("the inner transaction's type")
            guard inner == 2 else { throw .unknown("inner transaction type", Int64(inner)) }
            transaction = try StellarXDR.transaction(&reader, v0: false)
            let innerSignatures = try StellarXDR.signatures(&reader)
            let version = try reader.discriminant("the fee-bump extension")
            guard version == 0 else { throw .unknown("fee-bump extension", Int64(version)) }
            feeBump = FeeBump(feeSource: source.0, fee: fee, feeSourceKey: source.1, innerSignatureCount: innerSignatures.count)
        case let type:
            throw .unknown("envelope type", Int64(type))
        }
        let end = reader.position
        let signatures = try StellarXDR.signatures(&reader)
        guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
        return StellarEnvelope(
            kind: kind, transaction: transaction, feeBump: feeBump, bytes: bytes, signedPart: start..<end,
            signaturesOffset: end, signatures: signatures)
    }

    /// The hash a signer signs (`TransactionSignaturePayload`): SHA-256 of the network id, the envelope type and the
    /// transaction. A v0 transaction is hashed as the v1 transaction it stands for (an ed25519 source key type first).
    public func hash(on network: StellarNetwork) -> [UInt8] {
        var payload = network.id
        switch kind {
        case .v0: payload += [0, 0, 0, 2, 0, 0, 0, 0]
        case .v1: payload += [0, 0, 0, 2]
        case .feeBump: payload += [0, 0, 0, 5]
        }
        payload += bytes[signedPart]
        return Array(SHA256.hash(data: payload))
    }

    /// The keys the envelope names as signers: a fee bump's fee source; else the transaction's source and its
    /// operations' own sources.
    public var namedSigners: [[UInt8]] {
        if let feeBump { return [feeBump.feeSourceKey] }
        return [transaction.sourceKey] + transaction.operationSourceKeys
    }

    /// Whether the envelope already carries a valid signature by `publicKey` on `network`.
    public func isSigned(by publicKey: [UInt8], on network: StellarNetwork) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        let hash = hash(on: network)
        return signatures.contains { $0.hint == Array(publicKey.suffix(4)) && key.isValidSignature($0.signature, for: hash) }
    }

    /// The envelope with one more signature, a `DecoratedSignature` (the key's last four bytes as its hint).
    public func adding(signature: [UInt8], by publicKey: [UInt8]) throws(StellarError) -> [UInt8] {
        guard signatures.count < StellarXDR.maximumSignatures else {
            throw .tooMany("signatures", signatures.count + 1, limit: StellarXDR.maximumSignatures)
        }
        let count = UInt32(signatures.count + 1)
        var out = Array(bytes[..<signaturesOffset])
        out += (0..<4).map { UInt8(truncatingIfNeeded: count >> (24 - 8 * $0)) }
        out += bytes[(signaturesOffset + 4)...]
        out += publicKey.suffix(4) + [0, 0, 0, UInt8(signature.count)] + signature
        return out
    }
}
