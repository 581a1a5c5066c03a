import CofferModel

/// Reading the XDR definitions (Stellar-transaction.x, Stellar-types.x, Stellar-ledger-entries.x).
enum StellarXDR {
    static let maximumOperations = 100
    static let maximumSignatures = 20
    /// stellar-core refuses claim predicates nested deeper than this.
    static let maximumPredicateDepth = 4

    static func accountID(_ reader: inout XDRReader, _ what: String) throws(StellarError) -> (String, [UInt8]) {
        let type = try reader.discriminant("\(what)'s key type")
        guard type == 0 else { throw .unknown("\(what) key type", Int64(type)) }
        let key = try reader.fixed(32, what)
        return (StellarStrKey.encode(key, version: .accountID), key)
    }

    static func muxedAccount(_ reader: inout XDRReader, _ what: String) throws(StellarError) -> (String, [UInt8]) {
        switch try reader.discriminant("\(what)'s key type") {
        case 0:
            let key = try reader.fixed(32, what)
            return (StellarStrKey.encode(key, version: .accountID), key)
        case 0x100:
            let id = try reader.fixed(8, what)
            let key = try reader.fixed(32, what)
            return (StellarStrKey.encode(key + id, version: .muxedAccount), key)
        case let type:
            throw .unknown("\(what) key type", Int64(type))
        }
    }

    static func assetCode(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.prefix { $0 != 0 })
    }

    /// `Asset`, `TrustLineAsset` (`poolID`) or `ChangeTrustAsset` (`poolParameters`).
    static func asset(
        _ reader: inout XDRReader, _ what: String, poolID: Bool = false, poolParameters: Bool = false
    )
        throws(StellarError) -> StellarAsset
    {
        switch try reader.discriminant("\(what)'s type") {
        case 0: return .native
        case 1:
            let code = assetCode(try reader.fixed(4, what))
            return .credit(code: code, issuer: try accountID(&reader, "\(what)'s issuer").0)
        case 2:
            let code = assetCode(try reader.fixed(12, what))
            return .credit(code: code, issuer: try accountID(&reader, "\(what)'s issuer").0)
        case 3 where poolID:
            return .poolID(try reader.fixed(32, what))
        case 3 where poolParameters:
            let type = try reader.discriminant("\(what)'s pool type")
            guard type == 0 else { throw .unknown("liquidity pool type", Int64(type)) }
            let a = try asset(&reader, "\(what)'s first asset")
            let b = try asset(&reader, "\(what)'s second asset")
            return .pool(a, b, fee: try reader.int32("\(what)'s pool fee"))
        case let type:
            throw .unknown("\(what) type", Int64(type))
        }
    }

    static func price(_ reader: inout XDRReader) throws(StellarError) -> StellarValue {
        .price(numerator: try reader.int32("a price"), denominator: try reader.int32("a price"))
    }

    static func signerKey(_ reader: inout XDRReader) throws(StellarError) -> String {
        switch try reader.discriminant("a signer key's type") {
        case 0: return StellarStrKey.encode(try reader.fixed(32, "a signer key"), version: .accountID)
        case 1: return StellarStrKey.encode(try reader.fixed(32, "a signer key"), version: .preAuthTransaction)
        case 2: return StellarStrKey.encode(try reader.fixed(32, "a signer key"), version: .sha256Hash)
        case 3:
            let key = try reader.fixed(32, "a signed-payload signer")
            let payload = try reader.variable(max: 64, "a signed payload")
            // SEP-23: the key, the payload's length as a uint32, the payload padded to four bytes.
            let length = UInt32(payload.count)
            let padded = payload + [UInt8](repeating: 0, count: (4 - payload.count % 4) % 4)
            let lengthBytes = (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
            return StellarStrKey.encode(key + lengthBytes + padded, version: .signedPayload)
        case let type:
            throw .unknown("signer key type", Int64(type))
        }
    }

    static func predicate(_ reader: inout XDRReader, depth: Int) throws(StellarError) -> StellarPredicate {
        guard depth <= maximumPredicateDepth else { throw .tooDeep(limit: maximumPredicateDepth) }
        switch try reader.discriminant("a claim predicate") {
        case 0: return .unconditional
        case let type where type == 1 || type == 2:
            let count = try reader.count(max: 2, "a claim predicate's parts")
            guard count == 2 else { throw .unknown("claim predicate part count", Int64(count)) }
            let a = try predicate(&reader, depth: depth + 1)
            let b = try predicate(&reader, depth: depth + 1)
            return type == 1 ? .and(a, b) : .or(a, b)
        case 3:
            guard try reader.bool("a negated claim predicate") else { throw .unknown("empty negated claim predicate", 0) }
            return .not(try predicate(&reader, depth: depth + 1))
        case 4: return .beforeAbsoluteTime(try reader.int64("a claim predicate's time"))
        case 5: return .beforeRelativeTime(try reader.int64("a claim predicate's time"))
        case let type:
            throw .unknown("claim predicate type", Int64(type))
        }
    }

    static func claimableBalanceID(_ reader: inout XDRReader) throws(StellarError) -> StellarValue {
        let type = try reader.discriminant("a claimable balance id")
        guard type == 0 else { throw .unknown("claimable balance id type", Int64(type)) }
        // Shown as Horizon and the SDKs show it: the type's four bytes, then the hash, in hex.
        return .hex([0, 0, 0, 0] + (try reader.fixed(32, "a claimable balance id")))
    }

    static func optional<T>(
        _ reader: inout XDRReader, _ what: String, _ read: (inout XDRReader) throws(StellarError) -> T
    )
        throws(StellarError) -> T?
    {
        try reader.bool(what) ? try read(&reader) : nil
    }

    static let accountFlags = ["auth required", "auth revocable", "auth immutable", "auth clawback enabled"]
    static let trustLineFlags = ["authorized", "authorized to maintain liabilities", "clawback enabled"]

    // MARK: Operations

    static func operation(_ reader: inout XDRReader, index: Int) throws(StellarError) -> (StellarOperation, [UInt8]?) {
        let what = "operation \(index + 1)"
        let source = try optional(&reader, "\(what)'s source") { (reader: inout XDRReader) throws(StellarError) in
            try muxedAccount(&reader, "\(what)'s source")
        }
        let type = try reader.discriminant("\(what)'s type")
        guard type >= 0, Int(type) < StellarOperation.names.count else { throw .unknown("operation type", Int64(type)) }
        func field(_ name: String, _ value: StellarValue) -> StellarField { StellarField(name: name, value: value) }
        func account(_ label: String) throws(StellarError) -> StellarValue { .account(try accountID(&reader, "\(what)'s \(label)").0) }
        func muxed(_ label: String) throws(StellarError) -> StellarValue { .account(try muxedAccount(&reader, "\(what)'s \(label)").0) }
        func anAsset(_ label: String) throws(StellarError) -> StellarValue { .asset(try asset(&reader, "\(what)'s \(label)")) }
        func amount(_ label: String) throws(StellarError) -> StellarValue { .amount(try reader.int64("\(what)'s \(label)")) }
        func path() throws(StellarError) -> StellarValue {
            let count = try reader.count(max: 5, "\(what)'s path")
            var assets: [StellarValue] = []
            for _ in 0..<count { assets.append(try anAsset("path")) }
            return .list(assets)
        }
        var fields: [StellarField] = []
        switch type {
        case 0:
            fields = [field("destination", try account("destination")), field("starting_balance", try amount("starting balance"))]
        case 1:
            fields = [
                field("destination", try muxed("destination")), field("asset", try anAsset("asset")),
                field("amount", try amount("amount")),
            ]
        case 2:
            fields = [
                field("send_asset", try anAsset("send asset")), field("send_max", try amount("send max")),
                field("destination", try muxed("destination")), field("dest_asset", try anAsset("destination asset")),
                field("dest_amount", try amount("destination amount")), field("path", try path()),
            ]
        case 3, 12:
            fields = [
                field("selling", try anAsset("selling asset")), field("buying", try anAsset("buying asset")),
                field(type == 3 ? "amount" : "buy_amount", try amount("amount")), field("price", try price(&reader)),
                field("offer_id", .integer(try reader.int64("\(what)'s offer id"))),
            ]
        case 4:
            fields = [
                field("selling", try anAsset("selling asset")), field("buying", try anAsset("buying asset")),
                field("amount", try amount("amount")), field("price", try price(&reader)),
            ]
        case 5:
            func optionalUInt32(_ label: String) throws(StellarError) -> UInt32? {
                try optional(&reader, "\(what)'s \(label)") { (reader: inout XDRReader) throws(StellarError) in
                    try reader.uint32("\(what)'s \(label)")
                }
            }
            let inflation = try optional(&reader, "\(what)'s inflation destination") { (reader: inout XDRReader) throws(StellarError) in
                try accountID(&reader, "\(what)'s inflation destination").0
            }
            let clear = try optionalUInt32("clear flags"), set = try optionalUInt32("set flags")
            let master = try optionalUInt32("master weight"), low = try optionalUInt32("low threshold")
            let medium = try optionalUInt32("medium threshold"), high = try optionalUInt32("high threshold")
            let domain = try optional(&reader, "\(what)'s home domain") { (reader: inout XDRReader) throws(StellarError) in
                try reader.variable(max: 32, "\(what)'s home domain")
            }
            let signer = try optional(&reader, "\(what)'s signer") { (reader: inout XDRReader) throws(StellarError) in
                (try signerKey(&reader), try reader.uint32("\(what)'s signer weight"))
            }
            fields = [
                field("inflation_dest", inflation.map { .account($0) } ?? .absent),
                field("clear_flags", clear.map { .flags($0, names: accountFlags) } ?? .absent),
                field("set_flags", set.map { .flags($0, names: accountFlags) } ?? .absent),
                field("master_weight", master.map { .unsigned(UInt64($0)) } ?? .absent),
                field("low_threshold", low.map { .unsigned(UInt64($0)) } ?? .absent),
                field("med_threshold", medium.map { .unsigned(UInt64($0)) } ?? .absent),
                field("high_threshold", high.map { .unsigned(UInt64($0)) } ?? .absent),
                field("home_domain", domain.map { .text($0) } ?? .absent),
                field("signer", signer.map { .fields([field("key", .account($0.0)), field("weight", .unsigned(UInt64($0.1)))]) } ?? .absent),
            ]
        case 6:
            fields = [
                field("line", .asset(try asset(&reader, "\(what)'s asset", poolParameters: true))),
                field("limit", try amount("limit")),
            ]
        case 7:
            let trustor = try account("trustor")
            let codeType = try reader.discriminant("\(what)'s asset code")
            guard codeType == 1 || codeType == 2 else { throw .unknown("asset code type", Int64(codeType)) }
            let code = assetCode(try reader.fixed(codeType == 1 ? 4 : 12, "\(what)'s asset code"))
            fields = [
                field("trustor", trustor), field("asset_code", .text(code)),
                field("authorize", .flags(try reader.uint32("\(what)'s authorization"), names: trustLineFlags)),
            ]
        case 8:
            fields = [field("destination", try muxed("destination"))]
        case 9, 17:
            fields = []
        case 10:
            let name = try reader.variable(max: 64, "\(what)'s data name")
            let value = try optional(&reader, "\(what)'s data value") { (reader: inout XDRReader) throws(StellarError) in
                try reader.variable(max: 64, "\(what)'s data value")
            }
            fields = [field("data_name", .text(name)), field("data_value", value.map { .bytes($0) } ?? .absent)]
        case 11:
            fields = [field("bump_to", .integer(try reader.int64("\(what)'s sequence")))]
        case 13:
            fields = [
                field("send_asset", try anAsset("send asset")), field("send_amount", try amount("send amount")),
                field("destination", try muxed("destination")), field("dest_asset", try anAsset("destination asset")),
                field("dest_min", try amount("destination minimum")), field("path", try path()),
            ]
        case 14:
            let theAsset = try anAsset("asset"), theAmount = try amount("amount")
            let count = try reader.count(max: 10, "\(what)'s claimants")
            var claimants: [StellarValue] = []
            for _ in 0..<count {
                let claimantType = try reader.discriminant("\(what)'s claimant")
                guard claimantType == 0 else { throw .unknown("claimant type", Int64(claimantType)) }
                let destination = try account("claimant")
                claimants.append(
                    .fields([
                        field("destination", destination),
                        field("predicate", .predicate(try predicate(&reader, depth: 1))),
                    ]))
            }
            fields = [field("asset", theAsset), field("amount", theAmount), field("claimants", .list(claimants))]
        case 15, 20:
            fields = [field("balance_id", try claimableBalanceID(&reader))]
        case 16:
            fields = [field("sponsored_id", try account("sponsored account"))]
        case 18:
            switch try reader.discriminant("\(what)'s kind") {
            case 0: fields = try ledgerKey(&reader, what)
            case 1:
                fields = [field("account_id", try account("account")), field("signer_key", .account(try signerKey(&reader)))]
            case let kind: throw .unknown("revoke sponsorship type", Int64(kind))
            }
        case 19:
            fields = [field("asset", try anAsset("asset")), field("from", try muxed("account")), field("amount", try amount("amount"))]
        case 21:
            fields = [
                field("trustor", try account("trustor")), field("asset", try anAsset("asset")),
                field("clear_flags", .flags(try reader.uint32("\(what)'s flags"), names: trustLineFlags)),
                field("set_flags", .flags(try reader.uint32("\(what)'s flags"), names: trustLineFlags)),
            ]
        case 22:
            fields = [
                field("liquidity_pool_id", .hex(try reader.fixed(32, "\(what)'s pool"))),
                field("max_amount_a", try amount("amount")), field("max_amount_b", try amount("amount")),
                field("min_price", try price(&reader)), field("max_price", try price(&reader)),
            ]
        case 23:
            fields = [
                field("liquidity_pool_id", .hex(try reader.fixed(32, "\(what)'s pool"))),
                field("amount", try amount("amount")), field("min_amount_a", try amount("amount")),
                field("min_amount_b", try amount("amount")),
            ]
        default:
            // Soroban's operations carry contract calls and footprints Coffer does not decode.
            throw .notShown("\(what) is \(StellarOperation.names[Int(type)].1) (a smart-contract call)")
        }
        return (StellarOperation(type: type, source: source?.0, fields: fields), source?.1)
    }

    /// A sponsored ledger entry's key (`LedgerKey`): the kinds an account can sponsor.
    static func ledgerKey(_ reader: inout XDRReader, _ what: String) throws(StellarError) -> [StellarField] {
        func field(_ name: String, _ value: StellarValue) -> StellarField { StellarField(name: name, value: value) }
        let type = try reader.discriminant("\(what)'s ledger entry type")
        let kinds = ["account", "trustline", "offer", "data", "claimable_balance", "liquidity_pool"]
        guard type >= 0, Int(type) < kinds.count else { throw .notShown("\(what) revokes a ledger entry of type \(type)") }
        var fields = [field("ledger_key", .text(Array(kinds[Int(type)].utf8)))]
        switch type {
        case 0: fields.append(field("account_id", .account(try accountID(&reader, what).0)))
        case 1:
            fields.append(field("account_id", .account(try accountID(&reader, what).0)))
            fields.append(field("asset", .asset(try asset(&reader, "\(what)'s asset", poolID: true))))
        case 2:
            fields.append(field("seller_id", .account(try accountID(&reader, what).0)))
            fields.append(field("offer_id", .integer(try reader.int64("\(what)'s offer id"))))
        case 3:
            fields.append(field("account_id", .account(try accountID(&reader, what).0)))
            fields.append(field("data_name", .text(try reader.variable(max: 64, "\(what)'s data name"))))
        case 4: fields.append(field("balance_id", try claimableBalanceID(&reader)))
        default: fields.append(field("liquidity_pool_id", .hex(try reader.fixed(32, "\(what)'s pool"))))
        }
        return fields
    }

    // MARK: Transactions

    static func preconditions(_ reader: inout XDRReader) throws(StellarError) -> StellarPreconditions {
        var conditions = StellarPreconditions()
        func timeBounds(_ reader: inout XDRReader) throws(StellarError) {
            conditions.minTime = try reader.uint64("the time bounds")
            conditions.maxTime = try reader.uint64("the time bounds")
        }
        switch try reader.discriminant("the preconditions") {
        case 0: break
        case 1: try timeBounds(&reader)
        case 2:
            if try reader.bool("the time bounds") { try timeBounds(&reader) }
            if try reader.bool("the ledger bounds") {
                conditions.ledgerBounds = (try reader.uint32("the ledger bounds"), try reader.uint32("the ledger bounds"))
            }
            if try reader.bool("the minimum sequence") { conditions.minSequence = try reader.int64("the minimum sequence") }
            conditions.minSequenceAge = try reader.uint64("the minimum sequence age")
            conditions.minSequenceLedgerGap = try reader.uint32("the minimum sequence ledger gap")
            let count = try reader.count(max: 2, "the extra signers")
            for _ in 0..<count { conditions.extraSigners.append(try signerKey(&reader)) }
        case let type:
            throw .unknown("precondition type", Int64(type))
        }
        return conditions
    }

    static func memo(_ reader: inout XDRReader) throws(StellarError) -> StellarMemo {
        switch try reader.discriminant("the memo") {
        case 0: return .none
        case 1: return .text(try reader.variable(max: 28, "the memo"))
        case 2: return .id(try reader.uint64("the memo"))
        case 3: return .hash(try reader.fixed(32, "the memo"))
        case 4: return .return(try reader.fixed(32, "the memo"))
        case let type: throw .unknown("memo type", Int64(type))
        }
    }

    /// A `Transaction` (v1) or, with `v0`, a `TransactionV0` (its source a bare ed25519 key, its time bounds optional).
    static func transaction(_ reader: inout XDRReader, v0: Bool) throws(StellarError) -> StellarTransaction {
        let source: (String, [UInt8])
        if v0 {
            let key = try reader.fixed(32, "the source account")
            source = (StellarStrKey.encode(key, version: .accountID), key)
        } else {
            source = try muxedAccount(&reader, "the source account")
        }
        let fee = try reader.uint32("the fee")
        let sequence = try reader.int64("the sequence number")
        // A v0 transaction's optional time bounds are encoded as v1's PRECOND_NONE or PRECOND_TIME.
        let conditions = try preconditions(&reader)
        let memo = try memo(&reader)
        // An operation takes at least 8 bytes (no source, a type).
        let count = try reader.count(max: maximumOperations, minimumSize: 8, "the operations")
        var operations: [StellarOperation] = []
        var operationKeys: [[UInt8]] = []
        for index in 0..<count {
            let (operation, key) = try operation(&reader, index: index)
            operations.append(operation)
            if let key { operationKeys.append(key) }
        }
        switch try reader.discriminant("the transaction's extension") {
        case 0: break
        case 1 where !v0: throw .notShown("the transaction carries Soroban resources (a smart-contract call)")
        case let version: throw .unknown("transaction extension", Int64(version))
        }
        return StellarTransaction(
            source: source.0, sourceKey: source.1, fee: fee, sequence: sequence,
            preconditions: conditions, memo: memo, operations: operations,
            operationSourceKeys: operationKeys)
    }

    /// `DecoratedSignature signatures<20>`: the hints, and where the array starts.
    static func signatures(_ reader: inout XDRReader) throws(StellarError) -> [(hint: [UInt8], signature: [UInt8])] {
        let count = try reader.count(max: maximumSignatures, minimumSize: 8, "the signatures")
        var signatures: [(hint: [UInt8], signature: [UInt8])] = []
        for _ in 0..<count {
            let hint = try reader.fixed(4, "a signature hint")
            signatures.append((hint, try reader.variable(max: 64, "a signature")))
        }
        return signatures
    }
}
