import CofferCrypto
import CofferKeystore
import CofferPlatform
import CofferVault
import Foundation

/// Where a `Coffer` lives and what it uses: the vault directory, how the device key store is chosen, vault options,
/// and the name this device's slots get.
public struct CofferLocation: Sendable {
    /// The directory holding `vault.sqlite`.
    public var vaultDirectory: String
    /// How the store for the vault's keys is found.
    public var selection: KeystoreSelection
    /// Limits, random source and clock of the vault.
    public var options: VaultOptions
    /// The name a device slot made here gets (default: the host name).
    public var deviceName: String

    /// A location whose keys always live in `keystore`, with no device record (tests, programs with their own store).
    public init(vaultDirectory: String, keystore: any DeviceKeystore, options: VaultOptions = VaultOptions()) {
        self.vaultDirectory = vaultDirectory
        self.selection = .fixed(keystore)
        self.options = options
        self.deviceName = DataLocations.hostName()
    }

    /// The store used when nothing else is chosen or recorded: the fixed store, or the file store.
    public var keystore: any DeviceKeystore {
        switch selection {
        case .fixed(let store): return store
        case .chosen(_, let directories, _, let tcti): return Keystores.open(.file, directories: directories, tpmTCTI: tcti)
        }
    }

    /// The defaults for this process: `COFFER_VAULT`, else `$XDG_DATA_HOME/coffer/vault`; the key store `keystore`
    /// (`--keystore`), else `COFFER_KEYSTORE`, else this device's record for the vault (`KeystoreSelection.chosen`).
    public static func standard(
        environment: [String: String], vaultOverride: String? = nil, keystore: KeystoreChoice? = nil, deviceName: String? = nil
    ) -> CofferLocation {
        let directories = KeystoreDirectories.standard(environment: environment)
        let vault = vaultOverride ?? environment["COFFER_VAULT"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(directories.data)/vault"
        var location = CofferLocation(
            vaultDirectory: vault, keystore: Keystores.open(.file, directories: directories, tpmTCTI: tpmTCTI(environment)))
        // libsecret reaches the bus of this process's environment; `auto` considers it only when `environment` names
        // that same bus (a caller describing another user's session never gets this process's keyring).
        let bus = environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        location.selection = .chosen(
            explicit: keystore ?? environment["COFFER_KEYSTORE"].flatMap(KeystoreChoice.init), directories: directories,
            sessionBus: !bus.isEmpty && bus == ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
            tpmTCTI: tpmTCTI(environment))
        if let deviceName { location.deviceName = deviceName }
        return location
    }

    /// The TCTI through which the TPM is reached: `COFFER_TPM_TCTI`, else the kernel's resource manager. Coffer always
    /// names one: tpm2-tss's own search ends at any simulator listening on port 2321.
    static func tpmTCTI(_ environment: [String: String]) -> String {
        environment["COFFER_TPM_TCTI"].flatMap { $0.isEmpty ? nil : $0 } ?? TPM2Keystore.defaultTCTI
    }

    /// The label of a device slot made here now, for a key kept in `store`.
    func deviceLabel(_ store: any DeviceKeystore) -> DeviceLabel {
        DeviceLabel(name: deviceName, keystore: store.kind.rawValue, createdAt: options.clock())
    }
}

extension CofferLocation {
    /// Whether a vault exists here.
    public var vaultExists: Bool { Vault.exists(in: vaultDirectory) }

    /// The vault's id, read without opening it (no key needed).
    public func vaultID() throws -> UUID {
        try Vault.peekID(in: vaultDirectory, options: options)
    }

    /// The key store of `kind` for this location's directories.
    public func keystore(_ kind: KeystoreKind) -> any DeviceKeystore {
        switch selection {
        case .fixed(let store) where store.kind == kind: return store
        case .fixed:
            let environment = ProcessInfo.processInfo.environment
            return Keystores.open(kind, directories: .standard(environment: environment), tpmTCTI: Self.tpmTCTI(environment))
        case .chosen(_, let directories, _, let tcti): return Keystores.open(kind, directories: directories, tpmTCTI: tcti)
        }
    }
}

extension Coffer {
    /// Checks a new PIN's shape (6 to 64 digits) before anything else is asked.
    public static func checkPIN(_ pin: String) throws {
        _ = try PINProtection.pinBytes(pin)
    }
}
