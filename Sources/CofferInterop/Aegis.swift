import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import CryptoExtras
import Foundation

/// Reads an Aegis Authenticator vault export (`docs/vault.md` in beemdevelopment/Aegis), plaintext or encrypted.
///
/// - Plaintext: `header.slots` is `null` and `db` is the content object.
/// - Encrypted: each password slot (type 1) derives a key with scrypt (its `n`, `r`, `p`, `salt`) and unwraps the
///   32-byte master key with AES-256-GCM (`key_params` nonce and tag); the master key opens the base64 `db` with
///   `header.params` nonce and tag. No associated data is used. Slot parameters are checked before any work
///   (N a power of two up to 2^20, r ≤ 32, p ≤ 16, at most 1 GiB), so a hostile file cannot make scrypt run for
///   minutes or take gigabytes. Other slot types (raw, biometric) need a device key and are skipped.
/// - Content versions 1 to 3. Version 3 names groups by UUID in a top-level `groups` list; earlier versions have a
///   `group` name per entry. Groups become tags.
/// - Entry types `totp`, `hotp` and `steam`; `motp` and `yandex` (and anything else) are reported as unsupported.
public enum AegisImporter: Importer {
    public static let formatName = "aegis"

    /// Accepted scrypt parameters in password slots: N a power of two up to 2^20, r up to 32, p up to 16, and at
    /// most 1 GiB of memory (128·r·N). Aegis itself writes N = 2^15, r = 8, p = 1.
    fileprivate static let scryptLimits =
        FuzzingFloor.active ? (maxN: 16, maxR: 2, maxP: 2, maxMemory: 1 << 14) : (maxN: 1 << 20, maxR: 32, maxP: 16, maxMemory: 1 << 30)

    /// The most scrypt work all of a file's password slots may ask for together (the sum of N·r·p): 64 slots like
    /// Aegis's own (N·r·p = 2^18), a few seconds here. Each slot is tried in turn with the password, so without it a
    /// file of many costly slots would run scrypt for as long as its author liked.
    static let maxScryptWork = FuzzingFloor.active ? 1 << 8 : 1 << 24

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        guard let root = JSONValue.parse(data), case .object = root else { throw .malformedFile("not a JSON object") }
        guard let version = root["version"]?.intValue else { throw .malformedFile("the vault version is missing") }
        guard version == 1 else { throw .unsupportedVersion(String(version)) }
        guard let header = root["header"], case .object = header else { throw .malformedFile("the header is missing") }

        let content: JSONValue
        switch header["slots"] {
        case nil, .null?:
            guard let object = root["db"], case .object = object else {
                throw .malformedFile("a plaintext vault's db must be an object")
            }
            content = object
        case .array(let slots)?:
            guard let password else { throw .passwordRequired }
            content = try decrypt(root: root, header: header, slots: slots, password: password)
        default:
            throw .malformedFile("header.slots must be a list or null")
        }
        return try readContent(content)
    }

    // MARK: Decryption

    private static func decrypt(
        root: JSONValue, header: JSONValue, slots: [JSONValue], password: String
    ) throws(InteropError) -> JSONValue {
        guard let params = header["params"], case .object = params else {
            throw .malformedFile("header.params must be an object")
        }
        let dbNonce = try hexField(params, "nonce", count: 12, in: "header.params")
        let dbTag = try hexField(params, "tag", count: 16, in: "header.params")
        guard let dbText = root["db"]?.stringValue else {
            throw .malformedFile("an encrypted vault's db must be a string")
        }
        guard let ciphertext = Data(base64Encoded: dbText) else {
            throw .malformedFile("db is not valid base64")
        }

        let passwordSlots = slots.filter { $0["type"]?.intValue == 1 }
        guard !passwordSlots.isEmpty else { throw .malformedFile("the vault has no password slot") }
        // Every slot is checked, and their work added up, before any is run.
        var slotParameters: [SlotParameters] = []
        for slot in passwordSlots { slotParameters.append(try SlotParameters(slot)) }
        let work = slotParameters.reduce(0) { $0 + $1.n * $1.r * $1.p }
        guard work <= maxScryptWork else {
            throw .kdfParametersOutOfBounds(
                "the \(slotParameters.count) password slots ask for more scrypt work than 64 of Aegis's own slots")
        }
        var masterKey: SymmetricKey?
        for parameters in slotParameters {
            if let key = parameters.unwrap(password: password) {
                masterKey = key
                break
            }
        }
        guard let masterKey else { throw .wrongPassword }

        let plaintext: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: dbNonce), ciphertext: ciphertext, tag: dbTag)
            plaintext = try AES.GCM.open(box, using: masterKey)
        } catch {
            throw .malformedFile("the vault content failed authentication (damaged file)")
        }
        guard let content = JSONValue.parse(Array(plaintext)), case .object = content else {
            throw .malformedFile("the decrypted content is not a JSON object")
        }
        return content
    }

    /// A password slot's KDF parameters and wrapped key, validated.
    private struct SlotParameters {
        let n: Int
        let r: Int
        let p: Int
        let salt: [UInt8]
        let wrappedKey: [UInt8]
        let nonce: [UInt8]
        let tag: [UInt8]

        init(_ slot: JSONValue) throws(InteropError) {
            guard let n = slot["n"]?.intValue, let r = slot["r"]?.intValue, let p = slot["p"]?.intValue else {
                throw .malformedFile("a password slot lacks numeric n, r and p")
            }
            let limits = AegisImporter.scryptLimits
            guard n >= 2, n <= limits.maxN, n & (n - 1) == 0 else {
                throw .kdfParametersOutOfBounds("scrypt N must be a power of two from 2 to \(limits.maxN)")
            }
            guard (1...limits.maxR).contains(r), (1...limits.maxP).contains(p) else {
                throw .kdfParametersOutOfBounds("scrypt r must be 1...\(limits.maxR) and p 1...\(limits.maxP)")
            }
            guard 128 * r * n <= limits.maxMemory else {
                throw .kdfParametersOutOfBounds("scrypt would need more than \(limits.maxMemory >> 20) MiB")
            }
            guard let saltText = slot["salt"]?.stringValue, let salt = Hex.decode(saltText), !salt.isEmpty else {
                throw .malformedFile("a password slot's salt is not hex")
            }
            guard let params = slot["key_params"], case .object = params else {
                throw .malformedFile("a password slot lacks key_params")
            }
            self.n = n
            self.r = r
            self.p = p
            self.salt = salt
            wrappedKey = try AegisImporter.hexField(slot, "key", count: 32, in: "slot")
            nonce = try AegisImporter.hexField(params, "nonce", count: 12, in: "slot key_params")
            tag = try AegisImporter.hexField(params, "tag", count: 16, in: "slot key_params")
        }

        /// The master key, or `nil` when the password does not open this slot.
        func unwrap(password: String) -> SymmetricKey? {
            do {
                let derived = try KDF.Scrypt.deriveKey(
                    from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: n, blockSize: r,
                    parallelism: p, maxMemory: AegisImporter.scryptLimits.maxMemory + (1 << 20))
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: wrappedKey, tag: tag)
                let key = try AES.GCM.open(box, using: derived)
                guard key.count == 32 else { return nil }
                return SymmetricKey(data: key)
            } catch {
                return nil
            }
        }
    }

    fileprivate static func hexField(
        _ object: JSONValue, _ name: String, count: Int, in place: String
    ) throws(InteropError) -> [UInt8] {
        guard let text = object[name]?.stringValue, let bytes = Hex.decode(text), bytes.count == count else {
            throw .malformedFile("\(place).\(name) must be \(count) bytes of hex")
        }
        return bytes
    }

    // MARK: Content

    private static func readContent(_ content: JSONValue) throws(InteropError) -> ImportResult {
        guard let version = content["version"]?.intValue else { throw .malformedFile("the content version is missing") }
        guard (1...3).contains(version) else { throw .unsupportedVersion("content \(version)") }
        guard let entries = content["entries"]?.arrayValue else { throw .malformedFile("entries must be a list") }
        var groupNames: [String: String] = [:]
        if version >= 3, let groups = content["groups"]?.arrayValue {
            for group in groups {
                if let uuid = group["uuid"]?.stringValue, let name = group["name"]?.stringValue {
                    groupNames[uuid.lowercased()] = name
                }
            }
        }
        var result = ImportResult()
        for (position, entry) in entries.enumerated() {
            guard case .object = entry else {
                result.problems.append(ImportProblem(entry: "entry \(position + 1)", reason: "not a JSON object"))
                continue
            }
            let issuer = entry["issuer"]?.stringValue ?? ""
            let name = entry["name"]?.stringValue ?? ""
            do {
                let item = try readEntry(entry, version: version, groupNames: groupNames)
                result.items.append(.otp(item))
            } catch {
                let entryName = OTPImportNaming.entryName(
                    issuer: issuer, account: name, fallback: "entry \(position + 1)")
                result.problems.append(ImportProblem(entry: entryName, reason: error.reason))
            }
        }
        return result
    }

    private struct EntryFailure: Error {
        let reason: String
    }

    private static func readEntry(
        _ entry: JSONValue, version: Int, groupNames: [String: String]
    ) throws(EntryFailure) -> OTPItem {
        guard let type = entry["type"]?.stringValue?.lowercased() else {
            throw EntryFailure(reason: "the type is missing")
        }
        // mOTP and Yandex need a PIN and their own algorithms; say so before their MD5 or PIN fields confuse.
        guard ["totp", "hotp", "steam"].contains(type) else { throw EntryFailure(reason: "unsupported type") }
        guard let info = entry["info"], case .object = info else { throw EntryFailure(reason: "info must be an object") }
        guard let secretText = info["secret"]?.stringValue else { throw EntryFailure(reason: "the secret is missing") }
        guard let secret = try? Base32.decode(secretText), !secret.isEmpty else {
            throw EntryFailure(reason: "the secret is empty or not base32")
        }
        let algorithm: OTPAlgorithm
        switch info["algo"] {
        case nil: algorithm = .sha1
        case .string(let name)?:
            guard let known = OTPAlgorithm(name: name) else { throw EntryFailure(reason: "unsupported algorithm") }
            algorithm = known
        default: throw EntryFailure(reason: "algo must be a string")
        }
        let digits = try optionalInt(info, "digits")

        let kind: OTPParameters.Kind
        switch type {
        case "totp":
            kind = .totp(period: try optionalInt(info, "period") ?? OTPParameters.defaultPeriod)
        case "hotp":
            guard let counter = info["counter"]?.uint64Value else {
                throw EntryFailure(reason: "an HOTP entry needs a whole-number counter of 0 or more")
            }
            kind = .hotp(counter: counter)
        case "steam":
            if let period = try optionalInt(info, "period"), period != OTPParameters.steamPeriod {
                throw EntryFailure(reason: "a Steam entry must have a 30-second period")
            }
            kind = .steam
        default:
            throw EntryFailure(reason: "unsupported type")
        }

        var tags: [String] = []
        if version >= 3 {
            for uuid in entry["groups"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                if let name = groupNames[uuid.lowercased()] { tags.append(name) }
            }
        } else if let group = entry["group"]?.stringValue, !group.isEmpty {
            tags.append(group)
        }
        let note = entry["note"]?.stringValue

        do {
            let parameters = try OTPParameters(secret: secret, algorithm: algorithm, digits: digits, kind: kind)
            return try OTPImportNaming.item(
                issuer: entry["issuer"]?.stringValue, account: entry["name"]?.stringValue, parameters: parameters,
                tags: tags, notes: note?.isEmpty == false ? note : nil)
        } catch let error as OTPError {
            throw EntryFailure(reason: error.description)
        } catch {
            throw EntryFailure(reason: String(describing: error))
        }
    }

    private static func optionalInt(_ object: JSONValue, _ name: String) throws(EntryFailure) -> Int? {
        guard let value = object[name], value != .null else { return nil }
        guard let number = value.intValue else { throw EntryFailure(reason: "\(name) must be a whole number") }
        return number
    }
}

/// Writes an encrypted Aegis vault that Aegis can import: content version 3 (tags become groups), one password
/// slot with scrypt N = 2^15, r = 8, p = 1 and a 32-byte random salt, a random 256-bit master key, and fresh random
/// 96-bit nonces for the slot and the content.
public enum AegisExporter {
    /// Why a vault could not be written.
    public enum ExportError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A cryptographic primitive or the JSON encoder failed; the value names which.
        case failed(String)

        public var description: String {
            switch self {
            case .failed(let step): return "could not write the Aegis vault: \(step) failed"
            }
        }
    }

    /// scrypt parameters written to the password slot (Aegis' own).
    public static let scryptN = 1 << 15
    public static let scryptR = 8
    public static let scryptP = 1

    /// The encrypted vault JSON for `items`, protected by `password`.
    public static func export(
        _ items: [OTPItem], password: String, random: some RandomSource
    ) throws(ExportError) -> Data {
        var groupIDs: [String: String] = [:]
        var groups: [JSONValue] = []
        var entries: [JSONValue] = []
        for item in items {
            var entryGroups: [String] = []
            for tag in item.tags {
                if groupIDs[tag] == nil {
                    let uuid = uuidString(random)
                    groupIDs[tag] = uuid
                    groups.append(["uuid": .string(uuid), "name": .string(tag)])
                }
                if let uuid = groupIDs[tag] { entryGroups.append(uuid) }
            }
            entries.append(entry(item, groups: entryGroups, uuid: uuidString(random)))
        }
        let content: JSONValue = ["version": 3, "entries": .array(entries), "groups": .array(groups)]

        let contentJSON = Data(content.text().utf8)
        let masterKey = SymmetricKey(data: random.bytes(32))
        let salt = random.bytes(32)
        let slotNonce = random.bytes(12)
        let dbNonce = random.bytes(12)

        let slotBox: AES.GCM.SealedBox
        let dbBox: AES.GCM.SealedBox
        do {
            let derived = try KDF.Scrypt.deriveKey(
                from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: scryptN, blockSize: scryptR,
                parallelism: scryptP)
            let masterBytes = masterKey.withUnsafeBytes { Array($0) }
            slotBox = try AES.GCM.seal(masterBytes, using: derived, nonce: AES.GCM.Nonce(data: slotNonce))
            dbBox = try AES.GCM.seal(contentJSON, using: masterKey, nonce: AES.GCM.Nonce(data: dbNonce))
        } catch {
            throw .failed("encryption")
        }

        let slot: JSONValue = [
            "type": 1, "uuid": .string(uuidString(random)), "key": .string(Hex.encode(slotBox.ciphertext)),
            "key_params": ["nonce": .string(Hex.encode(slotNonce)), "tag": .string(Hex.encode(slotBox.tag))],
            "n": .number(scryptN), "r": .number(scryptR), "p": .number(scryptP), "salt": .string(Hex.encode(salt)),
            "repaired": true, "is_backup": false,
        ]
        let vault: JSONValue = [
            "version": 1,
            "header": [
                "slots": [slot], "params": ["nonce": .string(Hex.encode(dbNonce)), "tag": .string(Hex.encode(dbBox.tag))],
            ],
            "db": .string(dbBox.ciphertext.base64EncodedString()),
        ]
        return Data(vault.text().utf8)
    }

    private static func entry(_ item: OTPItem, groups: [String], uuid: String) -> JSONValue {
        let parameters = item.parameters
        var info: [String: JSONValue] = [
            "secret": .string(Base32.encode(parameters.secret)), "algo": .string(parameters.algorithm.name),
            "digits": .number(parameters.digits),
        ]
        let type: String
        switch parameters.kind {
        case .totp(let period):
            type = "totp"
            info["period"] = .number(period)
        case .hotp(let counter):
            type = "hotp"
            info["counter"] = .number(counter)
        case .steam:
            type = "steam"
            info["period"] = .number(OTPParameters.steamPeriod)
        }
        return [
            "type": .string(type), "uuid": .string(uuid), "name": .string(item.account), "issuer": .string(item.issuer),
            "note": .string(item.notes ?? ""), "favorite": false, "icon": .null, "info": .object(info),
            "groups": .array(groups.map(JSONValue.string)),
        ]
    }

    /// A random version-4 UUID in Aegis' lower-case form.
    private static func uuidString(_ random: some RandomSource) -> String {
        var bytes = random.bytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Hex.encode(bytes)
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}
