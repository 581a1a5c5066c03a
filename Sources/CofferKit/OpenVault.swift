import CofferVault
import Foundation

/// A one-time code and the token it is for.
public struct OneTimeCode: Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var code: String
    /// Seconds left in the period; nil for HOTP.
    public var secondsRemaining: Int?

    public init(id: UUID, name: String, code: String, secondsRemaining: Int?) {
        self.id = id
        self.name = name
        self.code = code
        self.secondsRemaining = secondsRemaining
    }
}

/// What the everyday commands (list, show, code, use, run, barcode, add) need from an open vault. A `Coffer` serves
/// them with the master key in this process; an `AgentVault` asks the agent, which keeps the key in its own.
public protocol OpenVault: Sendable {
    /// The vault's id.
    var vaultID: UUID { get }
    /// The live items, optionally of one kind.
    func items(kind: ItemKind?) throws -> [Item]
    /// The live items (of `kind`) as `transform` makes them, keeping only what it returns (`Coffer.items(kind:_:)`).
    func items<T>(kind: ItemKind?, _ transform: (Item) throws -> T?) throws -> [T]
    /// One item found the way `ItemLookup` says.
    func find(_ query: String, kind: ItemKind?) throws -> Item
    /// The named token's code, or every time-based token's when `query` is nil (HOTP counters are stored before
    /// their code is returned).
    func codes(matching query: String?, at now: Date) throws -> [OneTimeCode]
    /// Adds an item; returns it with its new id and revision 1.
    @discardableResult
    func add(_ content: ItemContent) throws -> Item
    /// Other items already named `name`, for a warning before adding another.
    func items(named name: String, excluding: UUID?) throws -> [ItemLookup.Candidate]
    /// What checks a signing key's PIN on this device (nothing is asked, the TPM is not used).
    func pinHolder(for key: SigningKey) throws -> PINHolder
    /// Ends the vault's use by a command whose process then exits (`Vault.closeBeforeExit`); nothing is asked of
    /// it afterwards.
    func closeBeforeExit()
}

extension Coffer: OpenVault {
    public func closeBeforeExit() { vault.closeBeforeExit() }

    public func codes(matching query: String?, at now: Date) throws -> [OneTimeCode] {
        let tokens: [Item]
        if let query {
            tokens = [try find(query, kind: .otp)]
        } else {
            // A listing shows time-based codes only: an HOTP code is used up by being shown.
            tokens = try items(kind: .otp).filter { item in
                if case .otp(let otp) = item.content, case .hotp = otp.parameters.kind { return false }
                return true
            }
        }
        var codes: [OneTimeCode] = []
        for token in tokens {
            let (code, remaining) = try code(for: token, at: now)
            codes.append(OneTimeCode(id: token.id, name: token.content.name, code: code, secondsRemaining: remaining))
        }
        return codes
    }
}

extension OpenVault {
    /// One item of any kind found the way `ItemLookup` says.
    public func find(_ query: String) throws -> Item { try find(query, kind: nil) }
}
