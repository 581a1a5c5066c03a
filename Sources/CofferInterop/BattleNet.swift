import CofferCrypto
import CofferModel
import CofferOTP

/// Reads the Battle.net app's authenticator (`com.blizzard.messenger.authenticator_preferences.xml`, Android
/// shared preferences). `com.blizzard.messenger.AUTHENTICATOR_DEVICE_SECRET` and `…AUTHENTICATOR_SERIAL` are hex;
/// each byte XOR the byte of a fixed 57-byte mask at its position gives ASCII: the secret as 40 hex digits (20 bytes)
/// and the serial (`US-1234-5678-9012`). Codes are TOTP, HMAC-SHA1, 8 digits, every 30 seconds; the token is named
/// Battle.net with the serial as its account.
public enum BattleNetImporter: Importer {
    public static let formatName = "battlenet"

    static let secretKey = "com.blizzard.messenger.AUTHENTICATOR_DEVICE_SECRET"
    static let serialKey = "com.blizzard.messenger.AUTHENTICATOR_SERIAL"
    static let mask: [UInt8] = Hex.decode(
        "398e27fc50276a656065b0e525f4c06c04c61075286b8e7aeda59da9813b5dd6c80d2fb38068773fa59ba47c17ca6c6479015c1d5b8b8f6b9a")!

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard AndroidPreferences.looksLikeXML(data) else {
            throw .malformedFile("a Battle.net file is the app's authenticator_preferences.xml")
        }
        let strings = try AndroidPreferences.strings(data, format: "Battle.net")
        guard let maskedSecret = strings.first(where: { $0.name == secretKey })?.value else {
            throw .malformedFile("the file holds no authenticator secret (\(secretKey))")
        }
        let serial = strings.first(where: { $0.name == serialKey }).flatMap { unmasked($0.value) } ?? ""
        var result = ImportResult()
        do throws(ImportEntryError) {
            guard let secretText = unmasked(maskedSecret), let secret = Hex.decode(secretText), !secret.isEmpty else {
                throw ImportEntryError("the secret is not masked hex")
            }
            let parameters = try OTPImport.parameters(secret: Base32.encode(secret), algorithm: "SHA1", digits: 8, kind: .totp(period: 30))
            result.items.append(.otp(try OTPImport.item(issuer: "Battle.net", account: serial, parameters: parameters, tags: [])))
        } catch {
            result.problems.append(ImportProblem(entry: OTPImport.entryName(issuer: "Battle.net", account: serial, index: 0), reason: error.reason))
        }
        return result
    }

    /// The ASCII text under the mask, or nil when the value is not hex, is longer than the mask, or is not text.
    static func unmasked(_ hex: String) -> String? {
        guard let bytes = Hex.decode(hex.trimmingWhitespace()), bytes.count <= mask.count else { return nil }
        let plain = zip(bytes, mask).map { $0 ^ $1 }
        guard plain.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }
}
