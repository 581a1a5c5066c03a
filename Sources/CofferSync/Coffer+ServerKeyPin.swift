@_spi(Sync) import CofferKit
import CofferVault
import Foundation

extension Coffer {
    /// The local-state name of the sync server's key pin (docs/FORMAT.md §8.7): this device's choice, never synced.
    public static let serverKeyPinName = "sync/pin"

    /// The pin this vault's sync client checks the server's key against, or nil.
    public func serverKeyPin() throws -> ServerKeyPin? {
        guard let stored = try vault.localValue(Self.serverKeyPinName) else { return nil }
        guard let pin = ServerKeyPin(String(decoding: stored, as: UTF8.self)) else {
            throw VaultError.tampered("the sync key pin")
        }
        return pin
    }

    /// Stores `pin` (`sha256//` and base64, UTF-8), or removes it with nil.
    public func setServerKeyPin(_ pin: ServerKeyPin?) throws {
        try vault.setLocalValue(Self.serverKeyPinName, pin.map { Data($0.description.utf8) })
    }
}
