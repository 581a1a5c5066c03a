import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferModel
@testable import CofferOTP

/// What Tests/oracles/openssl_oracle.py reads from item content (docs/FORMAT.md §5) or from the plaintext export
/// (§7), built from the model's values, never through Coffer's encoder, so the reader's answer can be compared with
/// the expected contents field by field.
enum ReaderFields {
    typealias Expected = [String: (kind: String, fields: [String: Any])]

    static func milliseconds(_ date: Date?) -> Any {
        date.map { Int(($0.timeIntervalSince1970 * 1000).rounded(.down)) } ?? NSNull()
    }

    static func optional<Value>(_ value: Value?) -> Any {
        value.map { $0 as Any } ?? NSNull()
    }

    /// The reader's fields of `content`. `inExport`: the fields the export carries (§7: a token's parameters come from
    /// its URI, where a Steam token names no algorithm or digits; a signing key shows only its public key).
    static func of(_ content: ItemContent, created: Date, inExport: Bool = false) -> [String: Any] {
        var fields: [String: Any]
        switch content {
        case .card(let card):
            fields = [
                "name": card.name, "symbology": optional(card.symbology?.rawValue), "payload": TestSupport.hex(card.payload),
                "payload_charset": card.payloadCharset.rawValue, "card_number": optional(card.cardNumber), "tags": card.tags,
                "network_ids": card.networkIDs, "valid_from": milliseconds(card.validFrom), "valid_to": milliseconds(card.validTo),
                "one_time": card.oneTime, "used_at": milliseconds(card.usedAt), "archived_at": milliseconds(card.archivedAt),
                "notes": optional(card.notes), "metadata": card.metadata,
            ]
        case .otp(let token):
            let parameters = token.parameters
            let steam = parameters.kind == .steam
            fields = [
                "issuer": token.issuer, "account": token.account, "secret": TestSupport.hex(parameters.secret),
                "algorithm": steam && inExport ? NSNull() : parameters.algorithm.name,
                "digits": steam && inExport ? NSNull() : parameters.digits,
                "period": NSNull(), "counter": NSNull(), "tags": token.tags, "notes": optional(token.notes),
            ]
            switch parameters.kind {
            case .totp(let period): fields["type"] = "totp"; fields["period"] = period
            case .hotp(let counter): fields["type"] = "hotp"; fields["counter"] = Int(counter)
            case .steam: fields["type"] = "steam"
            }
        case .credential(let credential):
            fields = [
                "name": credential.name, "provider": optional(credential.provider), "value": credential.value,
                "tags": credential.tags, "notes": optional(credential.notes), "username": optional(credential.username),
                "url": optional(credential.url),
            ]
        case .signingKey(let key):
            if inExport {
                return ["name": key.name, "flavor": key.flavor.rawValue, "public_key": key.publicKeyText]
            }
            fields = [
                "name": key.name, "flavor": key.flavor.rawValue, "public_key": TestSupport.hex(key.publicKey),
                "pin_salt": TestSupport.hex(key.pinSalt), "pin_box": TestSupport.hex(key.pinBox),
                "bound_vault_id": TestSupport.hex(key.boundVaultID), "device_secret_id": TestSupport.hex(key.deviceSecretID),
                "failed_attempts": key.failedAttempts, "tags": key.tags, "notes": optional(key.notes),
            ]
        case .note(let note):
            fields = [
                "name": note.name, "template": note.template.rawValue,
                "fields": note.fields.map { ["label": $0.label, "value": $0.value] }, "text": optional(note.text),
                "tags": note.tags,
            ]
        }
        fields["created"] = milliseconds(created)
        return fields
    }

    /// `value` as sorted-key JSON, so values parsed from the reader and values built here compare alike.
    static func canonical(_ value: Any?) throws -> String {
        guard let value else { return "absent" }
        return String(decoding: try JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]), as: UTF8.self)
    }

    /// Expects the reader's items to be exactly the expected ones: the same ids, kinds and fields, each field equal.
    /// Values are never printed (they include secrets): a failure names the item and the field.
    static func expectSame(_ items: [[String: Any]], _ expected: Expected, _ what: String) throws {
        let ids = items.compactMap { $0["id"] as? String }
        #expect(ids.count == items.count && Set(ids).count == ids.count, "\(what): items without ids, or repeated ids")
        #expect(Set(ids) == Set(expected.keys), "\(what): not the expected set of items")
        for item in items {
            let id = try #require(item["id"] as? String)
            guard let wanted = expected[id] else { continue }
            #expect(item["kind"] as? String == wanted.kind, "\(what): item \(id)")
            let content = try #require(item["content"] as? [String: Any])
            #expect(Set(content.keys) == Set(wanted.fields.keys), "\(what): item \(id) has other fields than expected")
            for (key, value) in wanted.fields {
                let same = try canonical(content[key]) == canonical(value)
                #expect(same, "\(what): item \(id) field \(key) differs from the expected contents")
            }
        }
    }
}
