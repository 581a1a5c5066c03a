import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import CryptoExtras
import Foundation

/// Reads Authy's tokens: the Android app's preferences (`com.authy.storage.tokens.authenticator.xml` for the tokens
/// of other sites, `com.authy.storage.tokens.authy.xml` for Authy's own), plain or with the backup password's
/// encryption, and the JSON the Authy API returns (`{"authenticator_tokens": [...]}`, as export tools save it).
///
/// In the preferences, the string `com.authy.storage.tokens.authenticator.key` (or `….authy.key`) holds a JSON array.
/// An entry's secret is `decryptedSecret` (base32), `secretSeed` (hex: Authy's own tokens, 10-second codes), or
/// `encryptedSecret` (base64) with `salt`: AES-256-CBC with a zero IV and PKCS#7, under PBKDF2-HMAC-SHA1 of the backup
/// password with the salt string's UTF-8 bytes as salt, 1,000 iterations; the plaintext is the base32 secret. `digits`
/// gives the length; codes are HMAC-SHA1 every 30 seconds. The issuer is `originalIssuer`, else the part of
/// `originalName` before a colon, else the part of `name` before " - ", else `accountType`; the account is `name`
/// without that issuer.
///
/// The API's tokens have `encrypted_seed` (base64), `salt`, `key_derivation_iterations` (100,000 when absent, as
/// before the field existed) and `unique_iv` (hex; a zero IV when absent), with the same cipher, and `name`,
/// `original_name` and `issuer`.
public enum AuthyImporter: Importer {
    public static let formatName = "authy"

    static let preferenceKeys = ["com.authy.storage.tokens.authenticator.key", "com.authy.storage.tokens.authy.key"]
    static let appIterations = FuzzingFloor.iterations(1_000)
    static let apiDefaultIterations = FuzzingFloor.iterations(100_000)

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        if AndroidPreferences.looksLikeXML(data) {
            let strings = try AndroidPreferences.strings(data, format: "Authy")
            guard let list = strings.first(where: { preferenceKeys.contains($0.name) }) else {
                throw .malformedFile("the file holds no Authy tokens (com.authy.storage.tokens.authenticator.xml holds them)")
            }
            guard let tokens = JSONValue.parse(Array(list.value.utf8))?.arrayValue else {
                throw .malformedFile("Authy's token list is not a JSON array")
            }
            return try readTokens(tokens.map(Token.init(app:)), password: password)
        }
        guard let document = JSONValue.parse(data), let tokens = document["authenticator_tokens"]?.arrayValue else {
            throw .malformedFile("an Authy file is the app's preferences XML or the API's JSON with authenticator_tokens")
        }
        return try readTokens(tokens.map(Token.init(api:)), password: password)
    }

    /// One entry, in the terms both shapes share.
    private struct Token {
        enum Secret {
            case base32(String)
            case hex(String)
            case sealed(ciphertext: String, salt: String, iterations: Int?, iv: String?)
            case missing
        }

        let secret: Secret
        let issuer: String?
        let account: String?
        let digits: Int?
        let isAuthyToken: Bool
        let json: JSONValue

        init(app json: JSONValue) {
            self.json = json
            if let text = json["decryptedSecret"]?.stringValue {
                secret = .base32(text)
            } else if let seed = json["secretSeed"]?.stringValue {
                secret = .hex(seed)
            } else if let sealed = json["encryptedSecret"]?.stringValue {
                secret = .sealed(ciphertext: sealed, salt: json["salt"]?.stringValue ?? "", iterations: AuthyImporter.appIterations, iv: nil)
            } else {
                secret = .missing
            }
            isAuthyToken = json["secretSeed"] != nil
            digits = json["digits"]?.intValue
            let name = json["name"]?.stringValue ?? ""
            if isAuthyToken {
                (issuer, account) = (name, nil)
            } else {
                (issuer, account) = Self.split(
                    name: name, originalIssuer: json["originalIssuer"]?.stringValue, originalName: json["originalName"]?.stringValue,
                    accountType: json["accountType"]?.stringValue)
            }
        }

        init(api json: JSONValue) {
            self.json = json
            if let sealed = json["encrypted_seed"]?.stringValue {
                secret = .sealed(
                    ciphertext: sealed, salt: json["salt"]?.stringValue ?? "", iterations: json["key_derivation_iterations"]?.intValue,
                    iv: json["unique_iv"]?.stringValue)
            } else if let text = json["decrypted_seed"]?.stringValue {
                secret = .base32(text)
            } else {
                secret = .missing
            }
            isAuthyToken = false
            digits = json["digits"]?.intValue
            (issuer, account) = Self.split(
                name: json["name"]?.stringValue ?? "", originalIssuer: json["issuer"]?.stringValue,
                originalName: json["original_name"]?.stringValue, accountType: json["account_type"]?.stringValue)
        }

        /// Authy's names, split as the app shows them.
        static func split(name: String, originalIssuer: String?, originalName: String?, accountType: String?) -> (String?, String?) {
            var issuer: String
            var separator = ""
            if let originalIssuer = OTPImport.nonEmpty(originalIssuer) {
                issuer = originalIssuer
            } else if let originalName, let colon = originalName.firstIndex(of: ":") {
                issuer = String(originalName[..<colon])
                separator = ":"
            } else if let dash = name.range(of: " - ") {
                issuer = String(name[..<dash.lowerBound])
                separator = " - "
            } else {
                let type = accountType ?? ""
                issuer = type.prefix(1).uppercased() + type.dropFirst()
            }
            issuer = issuer.trimmingCharacters(in: .whitespaces)
            var account = issuer.isEmpty ? name : name.replacingOccurrences(of: issuer + separator, with: "")
            if account.hasPrefix(": ") { account.removeFirst(2) }
            return (OTPImport.nonEmpty(issuer), OTPImport.nonEmpty(account))
        }
    }

    /// The most PBKDF2 iterations one file may ask for in all (50 tokens at the API's 100,000 each, with room to
    /// spare): a hostile file of many tokens at the per-token bound would otherwise run for hours.
    static let iterationBudget = 50_000_000

    private static func readTokens(_ tokens: [Token], password: String?) throws(InteropError) -> ImportResult {
        let iterations = tokens.compactMap { token -> Int? in
            if case .sealed(_, _, let iterations, _) = token.secret { return iterations ?? apiDefaultIterations }
            return nil
        }
        if !iterations.isEmpty, password == nil { throw .passwordRequired }
        guard iterations.reduce(0, { $0 + min(max($1, 0), iterationBudget + 1) }) <= iterationBudget else {
            throw .kdfParametersOutOfBounds("the tokens ask for more than \(iterationBudget) PBKDF2 iterations in all")
        }
        var result = ImportResult()
        var opened = 0
        var wrongPassword = false
        entries: for (index, token) in tokens.enumerated() {
            let name = OTPImport.entryName(issuer: token.issuer, account: token.account, index: index)
            do throws(ImportEntryError) {
                guard case .object = token.json else { throw ImportEntryError("the entry is not a JSON object") }
                let base32: String
                switch token.secret {
                case .base32(let text): base32 = text
                case .hex(let seed):
                    guard let bytes = Hex.decode(seed), !bytes.isEmpty else { throw ImportEntryError("the secret seed is not hex") }
                    base32 = Base32.encode(bytes)
                case .sealed(let ciphertext, let salt, let iterations, let iv):
                    guard let text = try open(ciphertext, salt: salt, iterations: iterations ?? apiDefaultIterations, iv: iv, password: password ?? "") else {
                        // The first sealed secret decides: nothing opened yet means the password is wrong, and no
                        // more key derivations are spent on it.
                        if opened == 0 {
                            wrongPassword = true
                            break entries
                        }
                        throw ImportEntryError("the secret does not decrypt with the password that opened the others")
                    }
                    opened += 1
                    base32 = text
                case .missing:
                    throw ImportEntryError("the entry has no secret")
                }
                let kind: OTPParameters.Kind = .totp(period: token.isAuthyToken ? 10 : OTPParameters.defaultPeriod)
                let parameters = try OTPImport.parameters(
                    secret: base32, algorithm: nil, digits: token.digits ?? (token.isAuthyToken ? 7 : nil), kind: kind)
                result.items.append(.otp(try OTPImport.item(issuer: token.issuer, account: token.account, parameters: parameters, tags: [])))
            } catch {
                result.problems.append(ImportProblem(entry: name, reason: error.reason))
            }
        }
        if wrongPassword { throw .wrongPassword }
        return result
    }

    /// The secret's text in an Authy box, or nil when the password does not open it (CBC has no tag: bad padding, or a
    /// plaintext that is not printable text, is how a wrong password shows).
    private static func open(_ ciphertext: String, salt: String, iterations: Int, iv: String?, password: String) throws(ImportEntryError) -> String? {
        guard OTPImport.pbkdf2IterationRange.contains(iterations) else {
            throw ImportEntryError("its key-derivation iterations are out of bounds")
        }
        guard let sealed = Data(base64Encoded: ciphertext.trimmingWhitespace()), !sealed.isEmpty, sealed.count % 16 == 0
        else { throw ImportEntryError("the encrypted secret is not base64 of whole AES blocks") }
        var ivBytes = [UInt8](repeating: 0, count: 16)
        if let iv = OTPImport.nonEmpty(iv) {
            guard let bytes = Hex.decode(iv), bytes.count == 16 else { throw ImportEntryError("unique_iv is not 16 bytes of hex") }
            ivBytes = bytes
        }
        let key: SecretBytes
        do {
            key = try OTPImport.pbkdf2(password, salt: Array(salt.utf8), hash: .sha1, iterations: iterations)
        } catch {
            throw ImportEntryError(error.description)
        }
        guard
            let plain = try? key.withUnsafeBytes({ raw in
                Array(try AES._CBC.decrypt(sealed, using: SymmetricKey(data: raw), iv: AES._CBC.IV(ivBytes: ivBytes)))
            })
        else { return nil }
        // Under a wrong key, the odd plaintext that passes the padding check is not printable text.
        guard !plain.isEmpty, plain.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }
}
