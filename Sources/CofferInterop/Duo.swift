import CofferCrypto
import CofferModel
import CofferOTP
import Foundation

/// Reads Duo Mobile's third-party accounts. Duo has no export: the file is the app's own
/// `files/duokit/accounts.json` (readable with root or from a device backup; Aegis reads the same file). It is a
/// JSON array of accounts, each `{"name", "otpGenerator": {"otpSecret": BASE32, "counter"?}}`: a counter makes an
/// HOTP token, otherwise TOTP with the defaults (SHA-1, 6 digits, 30 s). Duo's own push accounts have no
/// `otpGenerator` and are reported, not imported: their keys never leave Duo.
public enum DuoImporter: Importer {
    public static let formatName = "duo"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard let accounts = JSONValue.parse(data)?.arrayValue else {
            throw .malformedFile("Duo's accounts.json is a JSON array")
        }
        var result = ImportResult()
        for (index, account) in accounts.enumerated() {
            let name = OTPImport.nonEmpty(account["name"]?.stringValue)
            do throws(ImportEntryError) {
                guard case .object = account else { throw ImportEntryError("the account is not a JSON object") }
                guard let generator = account["otpGenerator"], case .object = generator else {
                    throw ImportEntryError("no otpGenerator (a Duo push account, which only Duo can use)")
                }
                guard let secret = try generator.string("otpSecret") else { throw ImportEntryError("otpSecret is missing") }
                let kind: OTPParameters.Kind
                if let counter = try generator.uint64("counter") {
                    kind = .hotp(counter: counter)
                } else {
                    kind = .totp(period: OTPParameters.defaultPeriod)
                }
                let parameters = try OTPImport.parameters(secret: secret, algorithm: nil, digits: nil, kind: kind)
                result.items.append(.otp(try OTPImport.item(issuer: name, account: nil, parameters: parameters, tags: [])))
            } catch {
                result.problems.append(ImportProblem(entry: name ?? "account \(index + 1)", reason: error.reason))
            }
        }
        return result
    }
}
