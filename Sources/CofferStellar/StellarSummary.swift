import CofferCrypto
import Foundation

/// What a signer is shown before signing, as lines of text and as JSON.
///
/// Every field is shown; nothing from the network is (Coffer does not fetch account state: balances, the account's
/// signers and its current sequence are not checked). Text from the transaction (a memo, a home domain, a data name,
/// an asset code) is shown escaped where it is not printable ASCII, so it cannot move the cursor or pass for
/// something else.
public enum StellarSummary {
    public static func lines(_ envelope: StellarEnvelope, network: StellarNetwork) -> [String] {
        var lines = ["Network:    \(escaped(Array(network.passphrase.utf8)))"]
        if let bump = envelope.feeBump {
            lines.append("Fee bump:   \(bump.feeSource) pays at most \(grouped(bump.fee)) stroops")
            lines.append("Inner transaction (signed \(bump.innerSignatureCount) \(bump.innerSignatureCount == 1 ? "time" : "times")):")
        }
        let transaction = envelope.transaction
        let operations = transaction.operations.count
        lines.append("Source:     \(transaction.source)")
        lines.append("Sequence:   \(grouped(transaction.sequence))")
        lines.append("Fee:        \(grouped(Int64(transaction.fee))) stroops at most, for \(operations) \(operations == 1 ? "operation" : "operations")")
        lines += conditions(transaction.preconditions)
        lines.append("Memo:       \(memo(transaction.memo))")
        lines.append("Operations:")
        for (index, operation) in transaction.operations.enumerated() {
            lines.append("  \(index + 1). \(words(operation))")
        }
        if envelope.signatureCount > 0 {
            lines.append("Signatures: \(envelope.signatureCount) already")
        }
        return lines
    }

    private static func conditions(_ conditions: StellarPreconditions) -> [String] {
        var lines: [String] = []
        switch (conditions.minTime, conditions.maxTime) {
        case (0, 0): lines.append("Valid:      at any time (no time bounds)")
        case (0, let end): lines.append("Valid:      until \(time(end))")
        case (let start, 0): lines.append("Valid:      from \(time(start)), with no end")
        case (let start, let end): lines.append("Valid:      from \(time(start)) until \(time(end))")
        }
        if let bounds = conditions.ledgerBounds {
            lines.append("Ledgers:    from \(bounds.min) \(bounds.max == 0 ? "on" : "to before \(bounds.max)")")
        }
        if let minimum = conditions.minSequence { lines.append("Requires:   the account's sequence at least \(grouped(minimum))") }
        if conditions.minSequenceAge > 0 { lines.append("Requires:   the sequence unchanged for \(conditions.minSequenceAge) s") }
        if conditions.minSequenceLedgerGap > 0 {
            lines.append("Requires:   the sequence unchanged for \(conditions.minSequenceLedgerGap) ledgers")
        }
        for signer in conditions.extraSigners { lines.append("Requires:   a signature by \(signer)") }
        return lines
    }

    private static func memo(_ memo: StellarMemo) -> String {
        switch memo {
        case .none: "none"
        case .text(let text): "text \(quoted(text))"
        case .id(let id): "id \(id)"
        case .hash(let hash): "hash \(Hex.encode(hash))"
        case .return(let hash): "return \(Hex.encode(hash))"
        }
    }

    /// An operation in words: the common ones as a sentence, every one with all its fields.
    static func words(_ operation: StellarOperation) -> String {
        let fields = Dictionary(operation.fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        var sentence: String
        switch (operation.name, fields["amount"], fields["asset"], fields["destination"]) {
        case ("payment", .some(let amount), .some(let asset), .some(let destination)):
            sentence = "Payment \(text(amount)) \(text(asset)) to \(text(destination))"
        case ("create_account", _, _, .some(let destination)):
            sentence = "Create account \(text(destination)) with \(text(fields["starting_balance"] ?? .absent)) XLM"
        case ("account_merge", _, _, .some(let destination)):
            sentence = "Account merge: every lumen of the source account goes to \(text(destination)), and the account closes"
        case ("change_trust", _, _, _) where fields["limit"] == .amount(0):
            sentence = "Change trust: remove the trust line to \(text(fields["line"] ?? .absent))"
        case ("change_trust", _, _, _):
            sentence = "Change trust \(text(fields["line"] ?? .absent)) limit \(text(fields["limit"] ?? .absent))"
        default:
            let shown = operation.fields.filter { $0.value != .absent }.map { "\(label($0.name)) \(text($0.value))" }
            sentence = operation.title + (shown.isEmpty ? "" : ": " + shown.joined(separator: ", "))
            if operation.name == "set_options", shown.isEmpty { sentence += " (nothing changed)" }
        }
        if let source = operation.source { sentence += " (source \(source))" }
        return sentence
    }

    private static func label(_ name: String) -> String {
        switch name {
        case "dest_asset": "destination asset"
        case "dest_amount": "destination amount"
        case "dest_min": "destination minimum"
        case "med_threshold": "medium threshold"
        case "inflation_dest": "inflation destination"
        default: name.replacingOccurrences(of: "_", with: " ")
        }
    }

    static func text(_ value: StellarValue) -> String {
        switch value {
        case .account(let address): return address
        case .amount(let stroops): return amount(stroops)
        case .asset(let asset): return text(asset)
        case .integer(let number): return String(number)
        case .unsigned(let number): return String(number)
        case .text(let bytes): return quoted(bytes)
        case .bytes(let bytes): return "\(bytes.count) bytes, base64 \(Data(bytes).base64EncodedString())"
        case .hex(let bytes): return Hex.encode(bytes)
        case .price(let numerator, let denominator):
            guard denominator != 0 else { return "\(numerator)/0" }
            return "\(numerator)/\(denominator) (\(decimal(numerator, denominator)))"
        case .flags(let flags, let names):
            let named = (0..<32).filter { flags & (1 << $0) != 0 }
                .map { $0 < names.count ? names[$0] : "unknown flag 0x\(String(1 << $0, radix: 16))" }
            return named.isEmpty ? "none" : named.joined(separator: " + ")
        case .time(let seconds): return time(seconds)
        case .predicate(let predicate): return text(predicate)
        case .list(let values): return values.isEmpty ? "none" : "[" + values.map(text).joined(separator: "; ") + "]"
        case .fields(let fields):
            return fields.filter { $0.value != .absent }.map { "\(label($0.name)) \(text($0.value))" }.joined(separator: ", ")
        case .absent: return "none"
        }
    }

    static func text(_ asset: StellarAsset) -> String {
        switch asset {
        case .native: "XLM"
        case .credit(let code, let issuer): "\(escaped(code)):\(issuer)"
        case .pool(let a, let b, let fee): "pool shares of \(text(a)) and \(text(b)) (fee \(fee) basis points)"
        case .poolID(let id): "pool shares of \(Hex.encode(id))"
        }
    }

    static func text(_ predicate: StellarPredicate) -> String {
        switch predicate {
        case .unconditional: "at any time"
        case .and(let a, let b): "(\(text(a)) and \(text(b)))"
        case .or(let a, let b): "(\(text(a)) or \(text(b)))"
        case .not(let a): "not \(text(a))"
        case .beforeAbsoluteTime(let seconds): "before \(seconds < 0 ? "Unix time \(seconds)" : time(UInt64(seconds)))"
        case .beforeRelativeTime(let seconds): "within \(grouped(seconds)) s of the balance's creation"
        }
    }

    /// Stroops as units, with all seven decimals: 255000000 → "25.5000000".
    static func amount(_ stroops: Int64) -> String {
        let magnitude = stroops.magnitude
        let units = magnitude / 10_000_000, fraction = magnitude % 10_000_000
        let digits = String(fraction)
        return (stroops < 0 ? "-" : "") + grouped(units) + "." + String(repeating: "0", count: 7 - digits.count) + digits
    }

    static func grouped(_ number: some BinaryInteger) -> String {
        let digits = Array(String(number.magnitude))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (number < 0 ? "-" : "") + out
    }

    private static func decimal(_ numerator: Int32, _ denominator: Int32) -> String {
        let value = Double(numerator) / Double(denominator)
        var text = String(format: "%.7f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// A UTC time, or the raw number past the year 9999.
    static func time(_ seconds: UInt64) -> String {
        guard seconds <= 253_402_300_799 else { return "Unix time \(seconds)" }
        let days = Int64(seconds / 86_400), rest = Int64(seconds % 86_400)
        // Civil from days (H. Hinnant's algorithm), for the proleptic Gregorian calendar.
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) UTC"
    }

    /// Printable ASCII as it is; a backslash, a quote and every other byte escaped (`\\`, `\"`, `\xNN`).
    static func escaped(_ bytes: [UInt8]) -> String {
        var out = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\""): out += "\\\""
            case 0x20...0x7E: out.append(Character(Unicode.Scalar(byte)))
            default: out += "\\x" + Hex.encode([byte])
            }
        }
        return out
    }

    static func quoted(_ bytes: [UInt8]) -> String { "\"\(escaped(bytes))\"" }

    // MARK: JSON

    /// The summary for scripts: every field, amounts as exact decimal strings, 64-bit numbers as strings.
    package static func json(_ envelope: StellarEnvelope, network: StellarNetwork) -> JSONValue {
        let transaction = envelope.transaction
        let conditions = transaction.preconditions
        var summary: [String: JSONValue] = [
            "network_passphrase": .string(network.passphrase),
            "envelope_type": envelope.kind == .v0 ? "v0" : envelope.kind == .v1 ? "v1" : "fee_bump",
            "hash": .string(Hex.encode(envelope.hash(on: network))),
            "source": .string(transaction.source),
            "sequence": .string(String(transaction.sequence)),
            "fee": .number(transaction.fee),
            "time_bounds": ["min_time": .number(conditions.minTime), "max_time": .number(conditions.maxTime)],
            "memo": memoJSON(transaction.memo),
            "operations": .array(transaction.operations.map(json)),
            "signatures": .number(envelope.signatureCount),
        ]
        if let bounds = conditions.ledgerBounds {
            summary["ledger_bounds"] = ["min_ledger": .number(bounds.min), "max_ledger": .number(bounds.max)]
        }
        if let minimum = conditions.minSequence { summary["min_sequence_number"] = .string(String(minimum)) }
        if conditions.minSequenceAge > 0 { summary["min_sequence_age"] = .number(conditions.minSequenceAge) }
        if conditions.minSequenceLedgerGap > 0 { summary["min_sequence_ledger_gap"] = .number(conditions.minSequenceLedgerGap) }
        if !conditions.extraSigners.isEmpty { summary["extra_signers"] = .array(conditions.extraSigners.map(JSONValue.string)) }
        if let bump = envelope.feeBump {
            summary["fee_bump"] = [
                "fee_source": .string(bump.feeSource), "fee": .string(String(bump.fee)),
                "inner_signatures": .number(bump.innerSignatureCount),
            ]
        }
        return .object(summary)
    }

    private static func memoJSON(_ memo: StellarMemo) -> JSONValue {
        switch memo {
        case .none: ["type": "none"]
        case .text(let text): ["type": "text", "value": .string(jsonText(text))]
        case .id(let id): ["type": "id", "value": .string(String(id))]
        case .hash(let hash): ["type": "hash", "value": .string(Hex.encode(hash))]
        case .return(let hash): ["type": "return", "value": .string(Hex.encode(hash))]
        }
    }

    static func json(_ operation: StellarOperation) -> JSONValue {
        var object: [String: JSONValue] = ["type": .string(operation.name), "source": .string(operation.source)]
        for field in operation.fields { object[field.name] = json(field.value) }
        return .object(object)
    }

    static func json(_ value: StellarValue) -> JSONValue {
        switch value {
        case .account(let address): .string(address)
        case .amount(let stroops): .string(amount(stroops).replacingOccurrences(of: ",", with: ""))
        case .asset(let asset): json(asset)
        case .integer(let number): .string(String(number))
        case .unsigned(let number): .number(number)
        case .text(let bytes): .string(jsonText(bytes))
        case .bytes(let bytes): .string(Data(bytes).base64EncodedString())
        case .hex(let bytes): .string(Hex.encode(bytes))
        case .price(let numerator, let denominator): ["n": .number(numerator), "d": .number(denominator)]
        case .flags(let flags, _): .number(flags)
        case .time(let seconds): .number(seconds)
        case .predicate(let predicate): json(predicate)
        case .list(let values): .array(values.map(json))
        case .fields(let fields): .object(Dictionary(fields.map { ($0.name, json($0.value)) }, uniquingKeysWith: { first, _ in first }))
        case .absent: .null
        }
    }

    static func json(_ asset: StellarAsset) -> JSONValue {
        switch asset {
        case .native: "native"
        case .credit(let code, let issuer): .string("\(jsonText(code)):\(issuer)")
        case .pool(let a, let b, let fee): ["asset_a": json(a), "asset_b": json(b), "fee": .number(fee)]
        case .poolID(let id): ["liquidity_pool_id": .string(Hex.encode(id))]
        }
    }

    static func json(_ predicate: StellarPredicate) -> JSONValue {
        switch predicate {
        case .unconditional: ["unconditional": true]
        case .and(let a, let b): ["and": [json(a), json(b)]]
        case .or(let a, let b): ["or": [json(a), json(b)]]
        case .not(let a): ["not": json(a)]
        case .beforeAbsoluteTime(let seconds): ["before_absolute_time": .string(String(seconds))]
        case .beforeRelativeTime(let seconds): ["before_relative_time": .string(String(seconds))]
        }
    }

    /// UTF-8 text as it is; other bytes escaped as in the text summary.
    private static func jsonText(_ bytes: [UInt8]) -> String {
        String(validating: bytes, as: UTF8.self) ?? escaped(bytes)
    }
}
