import CofferCrypto
import CofferPlatform
import Dispatch
import Foundation
import Synchronization

/// The freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC) through libsecret.
///
/// Entries live in the default collection as items of the schema `app.coffer.Keystore` with one attribute,
/// `account`; the value is ASCII, `coffer:v1:` followed by the secret in standard base64 (docs/FORMAT.md §1), because
/// some providers rewrite bytes that are not valid UTF-8.
///
/// libsecret is loaded at run time (`libsecret-1.so.0`) rather than linked: building Coffer needs no libsecret
/// headers, and a headless machine without the library runs every command with the file store; asking for this
/// store there answers `unreachable`, never "absent".
///
/// A lookup in a locked collection returns nothing, exactly like a missing item, so every read first checks that the
/// default collection is unlocked, and checks again after an empty answer (it may have been locked meanwhile). The
/// Secret Service has no create-if-absent (storing twice replaces), so `storeIfAbsent` holds a file lock across
/// processes around its lookup-then-store.
public struct SecretServiceKeystore: DeviceKeystore {
    /// The file whose `flock` serialises create-if-absent between processes.
    public let lockPath: String

    static let schemaName = "app.coffer.Keystore"
    static let valuePrefix = Array("coffer:v1:".utf8)

    /// A store whose create-if-absent is serialised across processes by `flock` on `lockPath`.
    public init(lockPath: String) {
        self.lockPath = lockPath
    }

    public var kind: KeystoreKind { .secretService }

    public func status() -> KeystoreStatus {
        do {
            try LibSecret.shared().checkUnlocked()
            return .available
        } catch {
            if case .locked = error { return .locked }
            return .unreachable(error.description)
        }
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        let library = try LibSecret.shared()
        try library.checkUnlocked()
        guard var value = try library.lookup(account: account) else {
            try library.checkUnlocked()
            return nil
        }
        defer { value.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard let secret = Self.decode(value) else { throw .corruptEntry(account: account) }
        return secret
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        return try FileLock.withLock(lockPath) { () throws(KeystoreError) -> SecretBytes in
            if let existing = try self.secret(for: account) { return existing }
            try store(secret, for: account)
            return secret
        }
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        try FileLock.withLock(lockPath) { () throws(KeystoreError) in try store(secret, for: account) }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        let library = try LibSecret.shared()
        try library.checkUnlocked()
        try library.clear(account: account)
    }

    private func store(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        let library = try LibSecret.shared()
        try library.checkUnlocked()
        var value = Self.encode(secret)
        defer { value.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        try library.store(account: account, label: "Coffer key \(account)", value: value)
    }

    /// `coffer:v1:` ‖ base64(secret), NUL-terminated for libsecret.
    static func encode(_ secret: SecretBytes) -> [UInt8] {
        secret.withUnsafeBytes { raw in valuePrefix + SecretBase64.encode(raw) + [0] }
    }

    static func decode(_ value: [UInt8]) -> SecretBytes? {
        guard value.count > valuePrefix.count, Array(value.prefix(valuePrefix.count)) == valuePrefix,
            var raw = SecretBase64.decode(value.dropFirst(valuePrefix.count))
        else { return nil }
        defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        return SecretBytes(raw)
    }
}

/// The libsecret and GLib calls the store makes, looked up once in `libsecret-1.so.0`. Only the `…v` variants are
/// used: the variadic ones cannot be called from Swift.
final class LibSecret: @unchecked Sendable {
    typealias Raw = UnsafeMutableRawPointer
    typealias ErrorOut = UnsafeMutablePointer<Raw?>

    let schemaNew: @convention(c) (UnsafePointer<CChar>, Int32, Raw) -> Raw?
    let storeSync: @convention(c) (Raw, Raw, UnsafePointer<CChar>?, UnsafePointer<CChar>, UnsafePointer<CChar>, Raw?, ErrorOut) -> Int32
    let lookupSync: @convention(c) (Raw, Raw, Raw?, ErrorOut) -> UnsafeMutablePointer<CChar>?
    let clearSync: @convention(c) (Raw, Raw, Raw?, ErrorOut) -> Int32
    let passwordFree: @convention(c) (UnsafeMutablePointer<CChar>?) -> Void
    let serviceGet: @convention(c) (Int32, Raw?, ErrorOut) -> Raw?
    let collectionForAlias: @convention(c) (Raw, UnsafePointer<CChar>, Int32, Raw?, ErrorOut) -> Raw?
    let collectionLocked: @convention(c) (Raw) -> Int32
    let objectUnref: @convention(c) (Raw) -> Void
    let hashTableNew: @convention(c) (Raw, Raw) -> Raw?
    let hashTableInsert: @convention(c) (Raw, Raw?, Raw?) -> Int32
    let hashTableUnref: @convention(c) (Raw) -> Void
    let errorFree: @convention(c) (Raw) -> Void
    let objectRef: @convention(c) (Raw) -> Raw?
    let cancellableNew: @convention(c) () -> Raw?
    let cancellableCancel: @convention(c) (Raw) -> Void
    let cancellableIsCancelled: @convention(c) (Raw) -> Int32
    let strHash: Raw
    let strEqual: Raw
    /// How long one call may wait for the service before it is cancelled: a keyring daemon that hangs would
    /// otherwise hold each call for D-Bus's 25-second timeout, and a command makes several.
    static let callTimeout = 5.0
    /// Set when a call was cancelled: the service hangs, and later calls in this process fail at once. Guarded by
    /// `oneCall`.
    private var hung = false
    /// The schema, made once and kept for the life of the process. Guarded by `oneCall`.
    private var schema: Raw?
    /// libsecret's synchronous calls each run a main loop of their own; one at a time keeps them simple.
    private let oneCall = Mutex(())

    /// Loaded once, on first use (a static's initialiser runs once, under the runtime's lock).
    private static let loaded = LibSecret()

    /// The library, loaded on first use; `.unreachable` when it is not installed.
    static func shared() throws(KeystoreError) -> LibSecret {
        guard let library = loaded else {
            throw .unreachable(.secretService, "libsecret (libsecret-1.so.0) is not installed")
        }
        return library
    }

    private init?() {
        #if os(Linux)
        guard let handle = DynamicLibrary("libsecret-1.so.0"), let glib = DynamicLibrary("libglib-2.0.so.0"),
            let gobject = DynamicLibrary("libgobject-2.0.so.0"), let gio = DynamicLibrary("libgio-2.0.so.0")
        else { return nil }
        func symbol<T>(_ library: DynamicLibrary, _ name: String, _ type: T.Type) -> T? { library.function(name, as: type) }
        guard let schemaNew = symbol(handle, "secret_schema_newv", (@convention(c) (UnsafePointer<CChar>, Int32, Raw) -> Raw?).self),
            let storeSync = symbol(
                handle, "secret_password_storev_sync",
                (@convention(c) (Raw, Raw, UnsafePointer<CChar>?, UnsafePointer<CChar>, UnsafePointer<CChar>, Raw?, ErrorOut) -> Int32).self),
            let lookupSync = symbol(
                handle, "secret_password_lookupv_sync", (@convention(c) (Raw, Raw, Raw?, ErrorOut) -> UnsafeMutablePointer<CChar>?).self),
            let clearSync = symbol(handle, "secret_password_clearv_sync", (@convention(c) (Raw, Raw, Raw?, ErrorOut) -> Int32).self),
            let passwordFree = symbol(handle, "secret_password_free", (@convention(c) (UnsafeMutablePointer<CChar>?) -> Void).self),
            let serviceGet = symbol(handle, "secret_service_get_sync", (@convention(c) (Int32, Raw?, ErrorOut) -> Raw?).self),
            let collectionForAlias = symbol(
                handle, "secret_collection_for_alias_sync",
                (@convention(c) (Raw, UnsafePointer<CChar>, Int32, Raw?, ErrorOut) -> Raw?).self),
            let collectionLocked = symbol(handle, "secret_collection_get_locked", (@convention(c) (Raw) -> Int32).self),
            let objectUnref = symbol(gobject, "g_object_unref", (@convention(c) (Raw) -> Void).self),
            let hashTableNew = symbol(glib, "g_hash_table_new", (@convention(c) (Raw, Raw) -> Raw?).self),
            let hashTableInsert = symbol(glib, "g_hash_table_insert", (@convention(c) (Raw, Raw?, Raw?) -> Int32).self),
            let hashTableUnref = symbol(glib, "g_hash_table_unref", (@convention(c) (Raw) -> Void).self),
            let errorFree = symbol(glib, "g_error_free", (@convention(c) (Raw) -> Void).self),
            let objectRef = symbol(gobject, "g_object_ref", (@convention(c) (Raw) -> Raw?).self),
            let cancellableNew = symbol(gio, "g_cancellable_new", (@convention(c) () -> Raw?).self),
            let cancellableCancel = symbol(gio, "g_cancellable_cancel", (@convention(c) (Raw) -> Void).self),
            let cancellableIsCancelled = symbol(gio, "g_cancellable_is_cancelled", (@convention(c) (Raw) -> Int32).self),
            let strHash = glib.address("g_str_hash"),
            let strEqual = glib.address("g_str_equal")
        else { return nil }
        self.schemaNew = schemaNew
        self.storeSync = storeSync
        self.lookupSync = lookupSync
        self.clearSync = clearSync
        self.passwordFree = passwordFree
        self.serviceGet = serviceGet
        self.collectionForAlias = collectionForAlias
        self.collectionLocked = collectionLocked
        self.objectUnref = objectUnref
        self.hashTableNew = hashTableNew
        self.hashTableInsert = hashTableInsert
        self.hashTableUnref = hashTableUnref
        self.errorFree = errorFree
        self.objectRef = objectRef
        self.cancellableNew = cancellableNew
        self.cancellableCancel = cancellableCancel
        self.cancellableIsCancelled = cancellableIsCancelled
        self.strHash = strHash
        self.strEqual = strEqual
        #else
        return nil
        #endif
    }

    /// `.locked` when the default collection is locked, `.unreachable` when the service or the collection cannot
    /// be had.
    func checkUnlocked() throws(KeystoreError) {
        try oneCall.withLock { _ throws(KeystoreError) in
            try bounded { (cancellable) throws(KeystoreError) in
                var error: Raw?
                // SECRET_SERVICE_NONE: no session is needed to read a collection's Locked property.
                guard let service = serviceGet(0, cancellable, &error) else { throw failure(error, cancellable, "no Secret Service") }
                defer { objectUnref(service) }
                guard let collection = collectionForAlias(service, "default", 0, cancellable, &error) else {
                    throw failure(error, cancellable, "the Secret Service has no default collection")
                }
                defer { objectUnref(collection) }
                if collectionLocked(collection) != 0 { throw KeystoreError.locked(.secretService) }
            }
        }
    }

    func lookup(account: String) throws(KeystoreError) -> [UInt8]? {
        try withAttributes(account) { (schema, attributes, cancellable) throws(KeystoreError) -> [UInt8]? in
            var error: Raw?
            guard let value = lookupSync(schema, attributes, cancellable, &error) else {
                if error != nil { throw failure(error, cancellable, "lookup failed") }
                return nil
            }
            defer { passwordFree(value) }
            return Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
        }
    }

    func store(account: String, label: String, value: [UInt8]) throws(KeystoreError) {
        try withAttributes(account) { (schema, attributes, cancellable) throws(KeystoreError) in
            var error: Raw?
            let stored = value.withUnsafeBytes { raw in
                // SECRET_COLLECTION_DEFAULT is the alias "default".
                storeSync(schema, attributes, "default", label, raw.baseAddress!.assumingMemoryBound(to: CChar.self), cancellable, &error)
            }
            if stored == 0 { throw failure(error, cancellable, "storing failed") }
        }
    }

    func clear(account: String) throws(KeystoreError) {
        try withAttributes(account) { (schema, attributes, cancellable) throws(KeystoreError) in
            var error: Raw?
            // FALSE with no error means there was nothing to remove.
            if clearSync(schema, attributes, cancellable, &error) == 0, error != nil { throw failure(error, cancellable, "removing failed") }
        }
    }

    /// Runs `body` with the schema, a `GHashTable` {"account": account} and a cancellable, under the lock and the
    /// time bound.
    private func withAttributes<Result: Sendable>(
        _ account: String, _ body: (Raw, Raw, Raw) throws(KeystoreError) -> Result
    ) throws(KeystoreError) -> Result {
        try oneCall.withLock { _ throws(KeystoreError) -> Result in
            try bounded { (cancellable) throws(KeystoreError) -> Result in
                try attributes(account) { (schema, table) throws(KeystoreError) -> Result in try body(schema, table, cancellable) }
            }
        }
    }

    private func attributes<Result>(
        _ account: String, _ body: (Raw, Raw) throws(KeystoreError) -> Result
    ) throws(KeystoreError) -> Result {
        guard let schema = try schemaLocked(), let table = hashTableNew(strHash, strEqual) else {
            throw KeystoreError.unreachable(.secretService, "libsecret could not allocate")
        }
        defer { hashTableUnref(table) }
        let key = strdup("account")
        let value = strdup(account)
        defer {
            free(key)
            free(value)
        }
        _ = hashTableInsert(table, key, value)
        return try body(schema, table)
    }

    /// Runs `body` with a cancellable that is cancelled after `callTimeout`: libsecret's synchronous calls then return
    /// at once with an error, which `failure` reports as the service not answering. After one such call, every
    /// later one in this process fails at once instead of waiting again.
    private func bounded<Result>(_ body: (Raw) throws(KeystoreError) -> Result) throws(KeystoreError) -> Result {
        if hung { throw Self.notAnswering }
        guard let cancellable = cancellableNew() else { throw KeystoreError.unreachable(.secretService, "GLib could not allocate") }
        defer { objectUnref(cancellable) }
        // The timer keeps a reference of its own: cancelling after the call returned is harmless.
        let timer = Cancellation(library: self, cancellable: objectRef(cancellable))
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.callTimeout) { timer.fire() }
        do {
            return try body(cancellable)
        } catch {
            if cancellableIsCancelled(cancellable) != 0 { hung = true }
            throw error
        }
    }

    private static let notAnswering = KeystoreError.unreachable(
        .secretService, "the Secret Service did not answer within \(Int(callTimeout)) seconds (is the keyring daemon stuck?)")

    /// The error of a call that returned `error`: the service not answering when the time bound cancelled it.
    private func failure(_ error: Raw?, _ cancellable: Raw, _ fallback: String) -> KeystoreError {
        guard cancellableIsCancelled(cancellable) == 0 else {
            if let error { errorFree(error) }
            return Self.notAnswering
        }
        return unreachable(error, fallback)
    }

    /// Cancels a call's cancellable once, from the timer's thread, and drops the timer's reference.
    private final class Cancellation: @unchecked Sendable {
        let library: LibSecret
        let cancellable: Raw?

        init(library: LibSecret, cancellable: Raw?) {
            self.library = library
            self.cancellable = cancellable
        }

        func fire() {
            guard let cancellable else { return }
            library.cancellableCancel(cancellable)
            library.objectUnref(cancellable)
        }
    }

    private func schemaLocked() throws(KeystoreError) -> Raw? {
        if let schema { return schema }
        guard let types = hashTableNew(strHash, strEqual) else { return nil }
        defer { hashTableUnref(types) }
        let name = strdup("account")
        defer { free(name) }
        // The value is SECRET_SCHEMA_ATTRIBUTE_STRING (0); SECRET_SCHEMA_NONE (0) makes lookups match the schema name.
        _ = hashTableInsert(types, name, nil)
        schema = schemaNew(SecretServiceKeystore.schemaName, 0, types)
        return schema
    }

    /// `.unreachable` with the GError's message (which names a D-Bus failure, never a value), freeing the error.
    private func unreachable(_ error: Raw?, _ fallback: String) -> KeystoreError {
        guard let error else { return .unreachable(.secretService, fallback) }
        defer { errorFree(error) }
        // struct GError { GQuark domain; gint code; gchar *message; }
        let message = error.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? fallback
        return .unreachable(.secretService, message)
    }
}
