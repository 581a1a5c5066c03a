import CofferCrypto
import CofferKeystore
import CofferVault

// The types a program names when it uses the facade: errors it reports, the ways to unlock, the slots it lists.
// They are re-exported one by one; the modules that define them (the store, the key stores, the primitives) are not.

public typealias VaultError = CofferVault.VaultError
public typealias UnlockMethod = CofferVault.UnlockMethod
public typealias PassphraseKDF = CofferCrypto.PassphraseKDF
public typealias PassphraseStrength = CofferVault.PassphraseStrength
public typealias SlotType = CofferCrypto.SlotType
public typealias SlotInfo = CofferVault.SlotInfo
public typealias SyncAccount = CofferVault.SyncAccount
public typealias RotationResult = CofferVault.Vault.RotationResult
public typealias KeystoreError = CofferKeystore.KeystoreError
public typealias KeystoreKind = CofferKeystore.KeystoreKind
public typealias SecretBytes = CofferCrypto.SecretBytes
public typealias CofferCryptoError = CofferCrypto.CofferCryptoError
public typealias SystemRandom = CofferCrypto.SystemRandom
public typealias UnixTime = CofferCrypto.UnixTime
public typealias DeviceKeystore = CofferKeystore.DeviceKeystore
public typealias KeystoreStatus = CofferKeystore.KeystoreStatus
public typealias FileKeystore = CofferKeystore.FileKeystore
public typealias InMemoryKeystore = CofferKeystore.InMemoryKeystore
public typealias VaultOptions = CofferVault.VaultOptions
